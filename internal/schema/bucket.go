package schema

// IsBucket reports whether t has exactly the shape of a pagoda bucket:
//
//	CREATE TABLE name(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID [, STRICT]
//
// that is: two columns named key and value (ASCII case ignored), both
// declared BLOB, key the only primary key column (ascending, BINARY), WITHOUT
// ROWID; and nothing the bucket code would have to honour beyond that: no
// other UNIQUE constraint, no CHECK, no generated column, no COLLATE, no NOT
// NULL on value. The key may be written as a column or a table constraint.
func (t *Table) IsBucket() bool {
	if !t.WithoutRowID || len(t.Columns) != 2 || len(t.Constraints) != 1 || len(t.Checks) != 0 {
		return false
	}
	k, v := t.Columns[0], t.Columns[1]
	if !eqFold(k.Name, "key") || !eqFold(v.Name, "value") ||
		!eqFold(k.Type, "BLOB") || !eqFold(v.Type, "BLOB") ||
		k.Generated || v.Generated || v.NotNull || v.PrimaryKey ||
		k.Collation != CollBinary || v.Collation != CollBinary {
		return false
	}
	if len(t.PrimaryKey) != 1 {
		return false
	}
	pk := t.PrimaryKey[0]
	return pk.Column == 0 && !pk.Desc && pk.Collation == CollBinary
}
