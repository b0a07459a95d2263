package pagoda

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestDefaultExprsLikeSQLite: the DEFAULT of a column read by a row older
// than it, for clauses that SQLite's valueFromExpr evaluates (literals,
// CAST, unary minus, a literal's IS NULL folded by the parser) and for
// those it makes no value of (NULL): an operator's, a function's,
// COLLATE, CURRENT_TIMESTAMP. ALTER TABLE ADD COLUMN refuses the latter
// on a table with rows; the table's SQL is edited in place here, in both
// encodings (a CAST to BLOB takes the text's bytes in the database's).
func TestDefaultExprsLikeSQLite(t *testing.T) {
	defs := []string{
		"CURRENT_TIMESTAMP", "('x' || 'y')", "(1+1)", "('x' COLLATE nocase)", "(abs(-1))", "(-CAST('5' AS INTEGER))",
		"(-(1+1))", "(+('a'||'b'))", "(- '3x')", "TRUE", "(NOT 1)", "(~1)", "(CAST('xy' AS BLOB))", "(-x'41')", "(('5'))",
		"('a' IS NULL)", "(x'00' IS NOT NULL)", "(1.5 ISNULL)", "(NULL IS NULL)", "(-1 IS NULL)", "(1 NOTNULL)", "(TRUE IS NULL)",
		"('a' IS 'a')", "(CAST(1_0 AS TEXT))", "'it''s'", "-0x1_0",
	}
	for _, enc := range []string{"UTF-8", "UTF-16le", "UTF-16be"} {
		t.Run(enc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d.db")
			sql := "CREATE TABLE t(a INTEGER PRIMARY KEY"
			var sel []string
			for i, d := range defs {
				sql += fmt.Sprintf(", d%d DEFAULT %s", i, d)
				sel = append(sel, fmt.Sprintf("typeof(d%d) || ':' || quote(d%d)", i, i))
			}
			sqltest.Exec(t, path, "PRAGMA encoding='"+enc+"'", "CREATE TABLE t(a INTEGER PRIMARY KEY)", "INSERT INTO t VALUES (1)",
				"PRAGMA writable_schema=ON", "UPDATE sqlite_schema SET sql = '"+strings.ReplaceAll(sql+")", "'", "''")+"' WHERE name='t'")
			db := sqltest.Open(t, path)
			want := sqltest.Rows(t, db, "SELECT "+strings.Join(sel, ", ")+" FROM t")
			db.Close()
			_, tx, tb := readTable(t, path, nil, "t")
			rec, err := tb.Get(1)
			if err != nil {
				t.Fatal(err)
			}
			w := strings.Split(want[0], "|")
			for i, d := range defs {
				v := rec.Column(1 + i)
				if got := strings.ToLower(v.Type().String()) + ":" + quoteValue(v); got != w[i] {
					t.Errorf("DEFAULT %s = %s, SQLite %s", d, got, w[i])
				}
			}
			if err := tx.Err(); err != nil {
				t.Error(err)
			}
		})
	}
}
