package schema

// finish checks the parsed table as a whole and derives the rowid alias,
// the primary key, the numbered constraints and the record order. It follows
// sqlite3AddPrimaryKey, sqlite3CreateIndex (duplicate constraints),
// sqlite3EndTable and convertToWithoutRowidTable in src/build.c.
func (b *tableBuilder) finish() error {
	t, p := b.t, b.p
	at := p.toks[len(p.toks)-1] // errors found here point at the end of the text
	seen := make(map[string]bool, len(t.Columns))
	stored := 0
	for _, c := range t.Columns {
		k := foldKey(c.Name)
		if seen[k] {
			return p.errAt(ErrSyntax, at, "duplicate column name: %s", c.Name)
		}
		seen[k] = true
		if !c.Generated {
			stored++
		}
	}
	if stored == 0 {
		return p.errAt(ErrSyntax, at, "must have at least one non-generated column")
	}
	if t.Strict {
		if err := b.strictTypes(at); err != nil {
			return err
		}
	}

	// The primary key, and whether it is the rowid alias.
	pk := -1
	for i, k := range b.keys {
		if !k.pk {
			continue
		}
		if pk >= 0 {
			return p.errAt(ErrSyntax, k.at, "more than one primary key")
		}
		pk = i
	}
	alias := false
	if pk >= 0 {
		k := b.keys[pk]
		first := k.cols[0]
		alias = len(k.cols) == 1 && b.std[first.Column] == "INTEGER" &&
			!(k.colLevel && first.Desc)
		if k.autoinc && !alias {
			return p.errAt(ErrSyntax, k.at, "AUTOINCREMENT is only allowed on an INTEGER PRIMARY KEY")
		}
		t.AutoIncrement = k.autoinc
		for _, c := range k.cols {
			if t.Columns[c.Column].Generated {
				return p.errAt(ErrSyntax, k.at, "generated columns cannot be part of the PRIMARY KEY")
			}
		}
	}
	if t.WithoutRowID {
		if pk < 0 {
			return p.errAt(ErrSyntax, at, "PRIMARY KEY missing on table %s", t.Name)
		}
		if t.AutoIncrement {
			return p.errAt(ErrSyntax, at, "AUTOINCREMENT not allowed on WITHOUT ROWID tables")
		}
	}

	// Constraints in numbering order. A rowid alias gets no index. In a
	// WITHOUT ROWID table an INTEGER PRIMARY KEY was an alias while the
	// statement was parsed, so sqlite3 creates its index last, from the
	// column name alone (an explicit COLLATE on it is lost).
	order := make([]pendingKey, 0, len(b.keys)+1)
	for i, k := range b.keys {
		if i == pk && alias {
			continue
		}
		order = append(order, k)
	}
	if alias {
		k := b.keys[pk]
		c := k.cols[0]
		if t.WithoutRowID {
			c.CollationSet = false
			k.cols = []IndexedColumn{c}
			order = append(order, k)
		} else {
			t.RowidAlias, t.AliasConflict = c.Column, k.conflict
			c.Collation, c.CollName, c.CollationSet, c.Desc = t.Columns[c.Column].Collation, t.Columns[c.Column].CollName, false, false
			t.PrimaryKey = []IndexedColumn{c}
		}
	}
	for _, k := range order {
		for j := range k.cols {
			if !k.cols[j].CollationSet {
				col := &t.Columns[k.cols[j].Column]
				k.cols[j].Collation, k.cols[j].CollName = col.Collation, col.CollName
			}
		}
		if err := t.addConstraint(k, p); err != nil {
			return err
		}
	}

	for i := range t.Constraints {
		c := &t.Constraints[i]
		if !c.PrimaryKey {
			continue
		}
		if t.WithoutRowID {
			c.Columns = dedupColumns(c.Columns)
		}
		t.PrimaryKey = append([]IndexedColumn(nil), c.Columns...)
	}
	for _, c := range t.PrimaryKey {
		col := &t.Columns[c.Column]
		col.PrimaryKey = true
		if t.WithoutRowID || t.Strict && c.Column != t.RowidAlias {
			col.NotNull = true
		}
	}
	t.RecordOrder = t.recordOrder()
	return nil
}

// addConstraint appends k to t.Constraints, or merges it into an earlier
// constraint with the same columns and collations: sqlite3 then creates no
// index for k and k takes no sqlite_autoindex number.
func (t *Table) addConstraint(k pendingKey, p *parser) error {
	for i := range t.Constraints {
		c := &t.Constraints[i]
		if !sameKey(c.Columns, k.cols) {
			continue
		}
		if c.OnConflict != k.conflict {
			if c.OnConflict != "" && k.conflict != "" {
				return p.errAt(ErrSyntax, k.at, "conflicting ON CONFLICT clauses specified")
			}
			if c.OnConflict == "" {
				c.OnConflict = k.conflict
			}
		}
		if k.pk {
			c.PrimaryKey = true
		}
		return nil
	}
	t.Constraints = append(t.Constraints, Constraint{PrimaryKey: k.pk, Columns: k.cols, OnConflict: k.conflict})
	return nil
}

// sameKey: same columns in the same order with the same collations (sort
// order does not matter).
func sameKey(a, b []IndexedColumn) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Column != b[i].Column || !sameCollation(a[i], b[i]) {
			return false
		}
	}
	return true
}

// dedupColumns drops a term that repeats an earlier one (same column, same
// collation), as convertToWithoutRowidTable does for the PRIMARY KEY.
func dedupColumns(cols []IndexedColumn) []IndexedColumn {
	out := cols[:0:0]
	for _, c := range cols {
		if !hasKeyColumn(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// hasKeyColumn reports whether cols has a term on c's column with c's
// collation (isDupColumn in src/build.c).
func hasKeyColumn(cols []IndexedColumn, c IndexedColumn) bool {
	for _, x := range cols {
		if x.Column == c.Column && x.Column >= 0 && sameCollation(x, c) {
			return true
		}
	}
	return false
}

// recordOrder computes Table.RecordOrder.
func (t *Table) recordOrder() []int {
	order := make([]int, 0, len(t.Columns))
	inPK := make([]bool, len(t.Columns))
	if t.WithoutRowID {
		for _, c := range t.PrimaryKey {
			order = append(order, c.Column)
			inPK[c.Column] = true
		}
	}
	for i, c := range t.Columns {
		if !c.Hidden && !inPK[i] {
			order = append(order, i)
		}
	}
	return order
}

// strictTypes checks the declared types of a STRICT table and gives ANY
// columns BLOB affinity.
func (b *tableBuilder) strictTypes(at token) error {
	t := b.t
	for i := range t.Columns {
		c := &t.Columns[i]
		if !b.typed[i] {
			return b.p.errAt(ErrSyntax, at, "missing datatype for %s.%s", t.Name, c.Name)
		}
		switch b.std[i] {
		case "":
			return b.p.errAt(ErrSyntax, at, "unknown datatype for %s.%s: %q", t.Name, c.Name, c.Type)
		case "ANY":
			c.Affinity = AffinityBlob
		}
	}
	return nil
}
