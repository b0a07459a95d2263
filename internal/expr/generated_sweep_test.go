package expr_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// genFile makes a database of one table t whose rows are inserted before
// its CREATE TABLE is swapped for create (SQLite 3.54 evaluates VIRTUAL
// columns when it inserts, and some of these fail there), in encoding enc
// ("" for UTF-8).
func genFile(t *testing.T, enc, plain, create string, rows ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "g.db")
	var stmts []string
	if enc != "" {
		stmts = append(stmts, "PRAGMA encoding = '"+enc+"'")
	}
	stmts = append(stmts, plain)
	stmts = append(stmts, rows...)
	stmts = append(stmts, "PRAGMA writable_schema = ON",
		"UPDATE sqlite_schema SET sql = '"+create+"' WHERE name = 't'")
	sqltest.Exec(t, path, stmts...)
	return path
}

// readColumns reads row 1 of t, columns cols, and the transaction's error.
func readColumns(t *testing.T, path string, cols ...int) ([]pagoda.Value, error) {
	t.Helper()
	_, tx, tb := dbtest.ReadTable(t, path, "t")
	rec, err := tb.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	var out []pagoda.Value
	for _, c := range cols {
		out = append(out, rec.Column(c))
	}
	return out, tx.Err()
}

// TestGeneratedSweepCases: what an interop sweep found, each held to
// SQLite: never a value SQLite would not give.
func TestGeneratedSweepCases(t *testing.T) {
	t.Run("depends on an unsupported column", func(t *testing.T) {
		// sqlite3 reads g1 = '5x', g2 = '5', g3 = '5', g4 = 'text'; pagoda
		// cannot compute g0 (json_quote), so none of them: NULL and an error,
		// not the values of a NULL g0 ('fallback', 7, 'null').
		path := genFile(t, "", "CREATE TABLE t(a, g0, g1, g2, g3, g4)",
			"CREATE TABLE t(a, g0 AS (json_quote(a)), g1 AS (g0 || ''x''), g2 AS (coalesce(g0, ''fallback'')), g3 AS (ifnull(g0, 7)), g4 AS (typeof(g0)))",
			"INSERT INTO t(a) VALUES (5)")
		for c := 2; c <= 5; c++ {
			vals, err := readColumns(t, path, c)
			if vals[0].Type() != pagoda.TypeNull || !errors.Is(err, pagoda.ErrUnsupported) {
				t.Errorf("column %d: %v, %v; want NULL and pagoda.ErrUnsupported", c, vals[0], err)
			}
		}
	})
	t.Run("array step on a non-array", func(t *testing.T) {
		// SQLite 3.54: NULL on an object or a number, a bad path on an array.
		for doc, wantErr := range map[string]bool{`{"a":1}`: false, `5`: false, `[1,2]`: true} {
			path := genFile(t, "", "CREATE TABLE t(d, g)",
				"CREATE TABLE t(d, g AS (json_extract(d, ''$[-1]'')))", "INSERT INTO t(d) VALUES ('"+doc+"')")
			vals, err := readColumns(t, path, 1)
			if vals[0].Type() != pagoda.TypeNull || (err != nil) != wantErr {
				t.Errorf("%s: %v, %v; want NULL and an error: %v", doc, vals[0], err, wantErr)
			}
		}
	})
	t.Run("empty path", func(t *testing.T) {
		// SQLite: bad JSON path '' (also as char(0), read up to the NUL),
		// for every JSON function and the arrows; not a label, not NULL.
		for _, g := range []string{"json_extract(d, '''')", "json_extract(d, ''$.a'', '''')", "json_type(d, '''')",
			"json_array_length(d, '''')", "d -> ''''", "d ->> ''''", "json_extract(d, char(0))"} {
			path := genFile(t, "", "CREATE TABLE t(d, g)", "CREATE TABLE t(d, g AS ("+g+"))", `INSERT INTO t(d) VALUES ('{"a":[1,2],"":3}')`)
			if vals, err := readColumns(t, path, 1); err == nil || vals[0].Type() != pagoda.TypeNull {
				t.Errorf("%s: %v, %v; want NULL and a bad path", g, vals[0], err)
			}
		}
	})
	t.Run("every argument evaluated", func(t *testing.T) {
		// SQLite evaluates every argument (and IN list) before using it:
		// one that fails fails the read, even where the result would not
		// need it.
		for _, g := range []string{"min(d, json_extract(''[1]'', ''$.''))", "max(d, 1, json_extract(''[1]'', ''$.''))",
			"concat_ws(d, ''a'', json_extract(''[1]'', ''$.''))", "trim(d, json_extract(''[1]'', ''$.''))",
			"d IN (json_extract(''[1]'', ''$.''), 1)", "replace(e, e, json_extract(''[1]'', ''$.''))"} {
			path := genFile(t, "", "CREATE TABLE t(d, e, g)", "CREATE TABLE t(d, e, g AS ("+g+"))", "INSERT INTO t(d, e) VALUES (NULL, '')")
			if vals, err := readColumns(t, path, 2); err == nil || vals[0].Type() != pagoda.TypeNull {
				t.Errorf("%s: %v, %v; want NULL and an error", g, vals[0], err)
			}
		}
	})
	t.Run("NULL path, malformed document", func(t *testing.T) {
		// SQLite: malformed JSON, whatever the path.
		for _, g := range []string{"json_extract(d, NULL)", "d -> NULL", "d ->> NULL"} {
			path := genFile(t, "", "CREATE TABLE t(d, g)", "CREATE TABLE t(d, g AS ("+g+"))", `INSERT INTO t(d) VALUES ('{"a":')`)
			if _, err := readColumns(t, path, 1); err == nil {
				t.Errorf("%s on a malformed document: no error", g)
			}
		}
	})
	for _, enc := range []string{"UTF-16le", "UTF-16be"} {
		t.Run(enc+": a BLOB taken as text", func(t *testing.T) {
			// SQLite reads x'41004200' as UTF-16 ("AB" in le): pagoda refuses.
			path := genFile(t, enc, "CREATE TABLE t(b, g1, g2)",
				"CREATE TABLE t(b, g1 AS (CAST(b AS TEXT)), g2 AS (b || ''''))", "INSERT INTO t(b) VALUES (x'41004200')")
			for _, c := range []int{1, 2} {
				vals, err := readColumns(t, path, c)
				if vals[0].Type() != pagoda.TypeNull || !errors.Is(err, pagoda.ErrUnsupported) {
					t.Errorf("column %d: %v, %v; want NULL and pagoda.ErrUnsupported", c, vals[0], err)
				}
			}
		})
		t.Run(enc+": a surrogate from char", func(t *testing.T) {
			// SQLite: U+FFFD, what UTF-16 holds of it.
			path := genFile(t, enc, "CREATE TABLE t(a, g1, g2)",
				"CREATE TABLE t(a, g1 AS (char(55357, 65)), g2 AS (char(55357) || ''x''))", "INSERT INTO t(a) VALUES (1)")
			vals, err := readColumns(t, path, 1, 2)
			if err != nil || vals[0].Text() != "\uFFFDA" || vals[1].Text() != "\uFFFDx" {
				t.Errorf("%q %q, %v; want \"\\uFFFDA\" \"\\uFFFDx\"", vals[0].Text(), vals[1].Text(), err)
			}
		})
	}
}
