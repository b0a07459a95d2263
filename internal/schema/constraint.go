package schema

// references parses the rest of REFERENCES table [(cols)] [actions...] and
// returns the number of parent columns named (0 if none).
func (b *tableBuilder) references() (int, error) {
	p := b.p
	if _, err := p.name("table"); err != nil {
		return 0, err
	}
	var parent []token
	if p.peek().isOp("(") {
		var err error
		if parent, err = b.nameList(); err != nil {
			return 0, err
		}
	}
	return len(parent), b.refArgs()
}

// nameList parses "(name, ...)": the column lists of a foreign key, which
// take no COLLATE or sort order.
func (b *tableBuilder) nameList() ([]token, error) {
	p := b.p
	if _, err := p.expectOp("("); err != nil {
		return nil, err
	}
	var names []token
	for {
		t := p.peek()
		if _, err := p.name("column"); err != nil {
			return nil, err
		}
		names = append(names, t)
		if !p.acceptOp(",") {
			break
		}
	}
	_, err := p.expectOp(")")
	return names, err
}

// refArgs parses the actions of a foreign key: MATCH name, ON DELETE ...
func (b *tableBuilder) refArgs() error {
	p := b.p
	for {
		switch {
		case p.accept("MATCH"):
			if _, err := p.name("MATCH"); err != nil {
				return err
			}
		case p.peek().is("ON") && !p.peekAt(1).is("CONFLICT"):
			p.next()
			if !p.accept("DELETE") && !p.accept("UPDATE") && !p.accept("INSERT") {
				return p.syntaxf("expected DELETE or UPDATE")
			}
			switch {
			case p.accept("SET"):
				if !p.accept("NULL") && !p.accept("DEFAULT") {
					return p.syntaxf("expected NULL or DEFAULT")
				}
			case p.accept("CASCADE"), p.accept("RESTRICT"):
			case p.accept("NO"):
				if err := p.expect("ACTION"); err != nil {
					return err
				}
			default:
				return p.syntaxf("expected a foreign key action")
			}
		default:
			return nil
		}
	}
}

// initially parses an optional INITIALLY DEFERRED|IMMEDIATE.
func (b *tableBuilder) initially() error {
	p := b.p
	if !p.accept("INITIALLY") {
		return nil
	}
	if !p.accept("DEFERRED") && !p.accept("IMMEDIATE") {
		return p.syntaxf("expected DEFERRED or IMMEDIATE")
	}
	return nil
}

// tableConstraint parses one table constraint.
func (b *tableBuilder) tableConstraint() error {
	p := b.p
	t := p.next()
	switch {
	case t.is("CONSTRAINT"):
		_, err := p.name("constraint")
		return err
	case t.is("PRIMARY"), t.is("UNIQUE"):
		k := pendingKey{at: t, pk: t.is("PRIMARY")}
		if k.pk {
			if err := p.expect("KEY"); err != nil {
				return err
			}
		}
		if _, err := p.expectOp("("); err != nil {
			return err
		}
		for {
			c, err := b.keyTerm(k.pk)
			if err != nil {
				return err
			}
			k.cols = append(k.cols, c)
			if !p.acceptOp(",") {
				break
			}
		}
		if k.pk {
			k.autoinc = p.accept("AUTOINCREMENT")
		}
		if _, err := p.expectOp(")"); err != nil {
			return err
		}
		var err error
		k.conflict, err = p.onConflict()
		b.keys = append(b.keys, k)
		return err
	case t.is("CHECK"):
		text, err := p.parens("CHECK expression")
		if err != nil {
			return err
		}
		b.t.Checks = append(b.t.Checks, text)
		_, err = p.onConflict()
		return err
	case t.is("FOREIGN"):
		if err := p.expect("KEY"); err != nil {
			return err
		}
		child, err := b.nameList()
		if err != nil {
			return err
		}
		for _, c := range child {
			if b.t.ColumnIndex(dequote(c)) < 0 {
				return p.errAt(ErrSyntax, c, "unknown column %s in foreign key definition", quoteName(dequote(c)))
			}
		}
		if err := p.expect("REFERENCES"); err != nil {
			return err
		}
		n, err := b.references()
		if err != nil {
			return err
		}
		if n != 0 && n != len(child) {
			return p.errAt(ErrSyntax, t, "number of columns in foreign key does not match the number of columns in the referenced table")
		}
		if p.peek().is("NOT") && p.peekAt(1).is("DEFERRABLE") {
			p.i += 2
			return b.initially()
		}
		if p.accept("DEFERRABLE") {
			return b.initially()
		}
		return nil
	}
	return p.errAt(ErrSyntax, t, "expected a table constraint")
}

// keyTerm parses one term of PRIMARY KEY(...) or UNIQUE(...): it must name a
// column of the table.
func (b *tableBuilder) keyTerm(pk bool) (IndexedColumn, error) {
	p := b.p
	tm, err := p.sortTerm(pk)
	if err != nil {
		return IndexedColumn{}, err
	}
	if !tm.column {
		return IndexedColumn{}, p.errAt(ErrSyntax, tm.start, "expressions prohibited in PRIMARY KEY and UNIQUE constraints")
	}
	ci := b.t.ColumnIndex(tm.name)
	if ci < 0 {
		return IndexedColumn{}, p.errAt(ErrSyntax, tm.start, "no such column: %s", tm.name)
	}
	c := IndexedColumn{Column: ci, Name: b.t.Columns[ci].Name, Desc: tm.desc}
	if tm.collSet {
		c.Collation, c.CollName = collationOf(tm.coll)
		c.CollationSet = true
	}
	return c, nil
}
