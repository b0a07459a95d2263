package schema

import "strings"

// column parses one column definition: name [type] [constraints].
func (b *tableBuilder) column() error {
	p := b.p
	name, err := p.name("column")
	if err != nil {
		return err
	}
	if len(b.t.Columns) >= maxColumns {
		return p.syntaxf("too many columns")
	}
	col := Column{Name: name}
	typ, std, typed, err := b.typeName()
	if err != nil {
		return err
	}
	col.Type = typ
	if typed {
		col.Affinity = affinityOfType(typ)
	}
	b.t.Columns = append(b.t.Columns, col)
	b.typed = append(b.typed, typed)
	b.std = append(b.std, std)
	for !p.peek().isOp(",") && !p.peek().isOp(")") {
		if err := b.columnConstraint(); err != nil {
			return err
		}
	}
	return nil
}

// typeName parses the optional type of a column, as sqlite3AddColumn keeps
// it: the source span of the type, without a trailing GENERATED ALWAYS; if
// at least 3 bytes long, with its outer quotes removed when there are no
// other quote characters inside (sqlite3DequoteToken); then dequoted if it
// still starts with a quote (sqlite3Dequote). std is the matching entry of
// stdTypes, "" if none; typed reports whether any type text was written
// (sqlite3 gives `x ""` NUMERIC affinity, `x` BLOB).
func (b *tableBuilder) typeName() (typ, std string, typed bool, err error) {
	p := b.p
	first, last := p.peek(), p.peek()
	words := 0
	for isTypeWord(p.peek()) {
		last = p.next()
		words++
	}
	if words == 0 {
		return "", "", false, nil // no type
	}
	if p.peek().isOp("(") {
		p.next()
		if err := b.signedNumber(); err != nil {
			return "", "", false, err
		}
		if p.acceptOp(",") {
			if err := b.signedNumber(); err != nil {
				return "", "", false, err
			}
		}
		if last, err = p.expectOp(")"); err != nil {
			return "", "", false, err
		}
	}
	span := stripGeneratedAlways(p.src[first.pos:last.end])
	if span == "" {
		return "", "", false, nil
	}
	if len(span) >= 3 {
		span = dequoteToken(span)
		for _, s := range stdTypes {
			if eqFold(span, s) {
				return span, s, true, nil
			}
		}
	}
	return dequoteText(span), "", true, nil
}

// stdTypes are the type names a STRICT table accepts. sqlite3 recognises
// them after dequoting (`x "INTEGER" PRIMARY KEY` is a rowid alias).
var stdTypes = [...]string{"INT", "INTEGER", "REAL", "TEXT", "BLOB", "ANY"}

func (b *tableBuilder) signedNumber() error {
	p := b.p
	if !p.acceptOp("+") {
		p.acceptOp("-")
	}
	if p.peek().kind != tokNumber {
		return p.syntaxf("expected a number")
	}
	p.next()
	return nil
}

// stripGeneratedAlways removes a trailing "GENERATED ALWAYS" (or "ALWAYS")
// from a type span, exactly as sqlite3AddColumn does: the parser lets those
// keywords fall back to type words in `x INT GENERATED ALWAYS AS (...)`.
func stripGeneratedAlways(s string) string {
	if len(s) < 16 || !eqFold(s[len(s)-6:], "always") {
		return s
	}
	s = strings.TrimRight(s[:len(s)-6], " \t\n\f\r\v")
	if len(s) >= 9 && eqFold(s[len(s)-9:], "generated") {
		s = strings.TrimRight(s[:len(s)-9], " \t\n\f\r\v")
	}
	return s
}

// columnConstraint parses one column constraint of the last column.
func (b *tableBuilder) columnConstraint() error {
	p := b.p
	ci := len(b.t.Columns) - 1
	col := &b.t.Columns[ci]
	t := p.next()
	switch {
	case t.is("CONSTRAINT"):
		_, err := p.name("constraint")
		return err
	case t.is("DEFAULT"):
		if col.Generated {
			return p.errAt(ErrSyntax, t, "cannot use DEFAULT on a generated column")
		}
		text, err := b.defaultValue()
		col.Default, col.HasDefault = dropDigitSeparators(text), true
		return err
	case t.is("NULL"):
		_, err := p.onConflict()
		return err
	case t.is("NOT"):
		if p.accept("NULL") {
			col.NotNull = true
			var err error
			col.NotNullConflict, err = p.onConflict()
			return err
		}
		if p.accept("DEFERRABLE") {
			return b.initially()
		}
		return p.syntaxf("expected NULL or DEFERRABLE after NOT")
	case t.is("PRIMARY"):
		if err := p.expect("KEY"); err != nil {
			return err
		}
		k := pendingKey{at: t, pk: true, colLevel: true,
			cols: []IndexedColumn{{Column: ci, Name: col.Name}}}
		if !p.accept("ASC") && p.accept("DESC") {
			k.cols[0].Desc = true
		}
		var err error
		if k.conflict, err = p.onConflict(); err != nil {
			return err
		}
		k.autoinc = p.accept("AUTOINCREMENT")
		b.keys = append(b.keys, k)
		return nil
	case t.is("UNIQUE"):
		k := pendingKey{at: t, colLevel: true, cols: []IndexedColumn{{Column: ci, Name: col.Name}}}
		var err error
		k.conflict, err = p.onConflict()
		b.keys = append(b.keys, k)
		return err
	case t.is("CHECK"):
		text, err := p.parens("CHECK expression")
		b.t.Checks = append(b.t.Checks, text)
		return err
	case t.is("REFERENCES"):
		n, err := b.references()
		if err == nil && n > 1 {
			err = p.errAt(ErrSyntax, t, "foreign key on %s should reference only one column", col.Name)
		}
		return err
	case t.is("DEFERRABLE"):
		return b.initially()
	case t.is("COLLATE"):
		nt := p.peek()
		if !isTypeWord(nt) {
			return p.syntaxf("expected a collation name")
		}
		p.next()
		col.Collation, col.CollName = collationOf(dequote(nt))
		return nil
	case t.is("GENERATED"):
		if err := p.expect("ALWAYS"); err != nil {
			return err
		}
		if err := p.expect("AS"); err != nil {
			return err
		}
		return b.generated(t)
	case t.is("AS"):
		return b.generated(t)
	}
	return p.errAt(ErrSyntax, t, "unexpected %s in column %s", t, quoteName(col.Name))
}

// defaultValue parses what follows DEFAULT and returns its text.
func (b *tableBuilder) defaultValue() (string, error) {
	p := b.p
	t := p.peek()
	switch {
	case t.isOp("("):
		return p.parens("DEFAULT expression")
	case t.isOp("+") || t.isOp("-"):
		p.next()
		lit := p.peek()
		if !isLiteral(lit) {
			return "", p.syntaxf("expected a literal after %s", t.text)
		}
		p.next()
		return p.src[t.pos:lit.end], nil
	case isLiteral(t):
		p.next()
		return t.text, nil
	case t.kind == tokQuoted || t.kind == tokWord && isName(t) && (isTypeWord(t) || t.is("INDEXED")):
		// DEFAULT id: sqlite3 stores the name as a string (or TRUE/FALSE).
		p.next()
		return t.text, nil
	}
	return "", p.syntaxf("expected a DEFAULT value")
}

// isLiteral: parse.y term ::= NULL|FLOAT|BLOB|STRING|INTEGER|CTIME_KW.
func isLiteral(t token) bool {
	switch t.kind {
	case tokNumber, tokString, tokBlob:
		return true
	}
	return t.is("NULL") || isTimeKeyword(t)
}

// generated parses the rest of [GENERATED ALWAYS] AS (expr) [STORED|VIRTUAL].
func (b *tableBuilder) generated(at token) error {
	p := b.p
	col := &b.t.Columns[len(b.t.Columns)-1]
	if col.HasDefault {
		return p.errAt(ErrSyntax, at, "cannot use DEFAULT on a generated column")
	}
	if col.Generated {
		return p.errAt(ErrSyntax, at, "column %s is already generated", quoteName(col.Name))
	}
	text, err := p.parens("generated column expression")
	if err != nil {
		return err
	}
	col.Generated, col.Hidden, col.Expr = true, true, text
	t := p.peek()
	if t.kind == tokQuoted || t.kind == tokWord && isName(t) {
		p.next()
		switch {
		case t.is("STORED"):
			col.Hidden = false
		case t.is("VIRTUAL"):
		default:
			return p.errAt(ErrSyntax, t, "error in generated column %s", quoteName(col.Name))
		}
	}
	return nil
}
