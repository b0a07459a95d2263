package schema

// Which bare words can be names.
//
// SQLite lets most of its keywords "fall back" to an identifier where a
// keyword cannot stand (parse.y %fallback ID), so `CREATE TABLE t(key, desc)`
// is valid. The words below are the keywords that never fall back: they can
// only be used as names when quoted. The list was checked against sqlite3
// 3.40.1 by trying each keyword as a column name.
var reservedWords = setOf(
	"ADD", "ALL", "ALTER", "AND", "AS", "AUTOINCREMENT", "BETWEEN", "CASE",
	"CHECK", "COLLATE", "COMMIT", "CONSTRAINT", "CREATE", "DEFAULT",
	"DEFERRABLE", "DELETE", "DISTINCT", "DROP", "ELSE", "ESCAPE", "EXCEPT",
	"EXISTS", "FOREIGN", "FROM", "GROUP", "HAVING", "IN", "INDEX", "INSERT",
	"INTERSECT", "INTO", "IS", "ISNULL", "JOIN", "LIMIT", "NOT", "NOTHING",
	"NOTNULL", "NULL", "ON", "OR", "ORDER", "PRIMARY", "REFERENCES",
	"RETURNING", "SELECT", "SET", "TABLE", "THEN", "TO", "TRANSACTION",
	"UNION", "UNIQUE", "UPDATE", "USING", "VALUES", "WHEN", "WHERE",
)

// joinWords (JOIN_KW) and INDEXED can name tables, columns and indexes
// (parse.y nm) but cannot be words of a type name or a collation name
// (parse.y ids).
var joinWords = setOf("CROSS", "FULL", "INNER", "LEFT", "NATURAL", "OUTER", "RIGHT", "INDEXED")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[foldKey(w)] = true
	}
	return m
}

// isReserved reports whether t is a bare keyword that cannot be a name.
func isReserved(t token) bool {
	return t.kind == tokWord && len(t.text) <= 17 && reservedWords[foldKey(t.text)]
}

// isName reports whether t can be a table, column, index or constraint name
// (parse.y nm: ID, STRING or JOIN_KW).
func isName(t token) bool {
	switch t.kind {
	case tokQuoted, tokString:
		return true
	case tokWord:
		return !isReserved(t)
	}
	return false
}

// isTypeWord reports whether t can be a word of a type name or a collation
// name (parse.y ids: ID or STRING).
func isTypeWord(t token) bool {
	if t.kind == tokWord && len(t.text) <= 7 && joinWords[foldKey(t.text)] {
		return false
	}
	return isName(t)
}
