package expr_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestUTF16Expressions: in a UTF-16 database SQLite orders text by its
// UTF-16 bytes and hands hex and CAST AS BLOB those bytes, where pagoda
// evaluates UTF-8. A generated column that would differ reads NULL with
// pagoda.ErrUnsupported, one that reads the same is computed; a CHECK or partial
// index so made is not evaluated by Check, rather than judged wrongly.
func TestUTF16Expressions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u16.db")
	// 'a' is 61 00 in UTF-16le and U+0100 is 00 01: SQLite orders 'a'
	// after 'Ā', UTF-8 before it.
	sqltest.Exec(t, path,
		"PRAGMA encoding = 'UTF-16le'",
		"CREATE TABLE t(x TEXT, y TEXT, lt AS (x < y), lo AS (min(x, y)), h AS (hex(x)), cat AS (x || '|' || y), eq AS (x = y), CHECK (x < y OR x > y))",
		"INSERT INTO t(x, y) VALUES ('a', 'Ā')",
		"CREATE INDEX t_p ON t(x) WHERE x > 'b'",
	)
	if got := sqltest.One(t, path, "SELECT lt || ',' || lo || ',' || cat || ',' || eq FROM t"); got != "0,Ā,a|Ā,0" {
		t.Fatalf("SQLite computes %q", got)
	}
	db, tx, tb := dbtest.ReadTable(t, path, "t")
	rec, err := tb.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Column(5).Text(); got != "a|Ā" {
		t.Errorf("x || '|' || y = %q", got)
	}
	if got := rec.Column(6); got.Type() != pagoda.TypeInteger || got.Int() != 0 {
		t.Errorf("x = y: %v", got)
	}
	if tx.Err() != nil {
		t.Fatalf("computable columns: %v", tx.Err())
	}
	for _, col := range []int{2, 3, 4} {
		if v := rec.Column(col); v.Type() != pagoda.TypeNull {
			t.Errorf("column %d: %v, want NULL", col, v)
		}
		if err := tx.Err(); !errors.Is(err, pagoda.ErrUnsupported) {
			t.Errorf("column %d: %v, want pagoda.ErrUnsupported", col, err)
		}
		tx.Renew() // a fresh error for the next column
		if tb, err = tx.Table("t"); err != nil {
			t.Fatal(err)
		}
		if rec, err = tb.Get(1); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Check(); err != nil {
		t.Errorf("Check: %v (SQLite says %s)", err, sqltest.One(t, path, "PRAGMA integrity_check"))
	}
}

// TestUTF16LoneSurrogates: an unpaired surrogate in a UTF-16 database's
// text reads as SQLite reads it through generated columns too: kept where
// the text stays in UTF-16 (a column, ||, CAST AS TEXT, coalesce), U+FFFD
// where SQLite converts a function's UTF-8 result (upper), and paired with
// the unit after it when || puts one there (sqlite3's UTF-16 reading).
func TestUTF16LoneSurrogates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sur.db")
	cols := []string{"g AS (c)", "h TEXT AS (c || c)", "k AS (c || '')", "a AS (CAST(c AS TEXT))",
		"m AS (coalesce(NULL, c))", "u AS (upper(c))", "s AS (c) STORED"}
	sqltest.Exec(t, path,
		"PRAGMA encoding = 'UTF-16le'",
		"CREATE TABLE t(c TEXT, "+strings.Join(cols, ", ")+")",
		"INSERT INTO t(c) VALUES (CAST(x'3dd8' AS TEXT)), (CAST(x'3dd84100' AS TEXT)), (CAST(x'00dc' AS TEXT)), (CAST(x'41' AS TEXT))")
	lite := sqltest.Open(t, path)
	rows, err := lite.Query("SELECT * FROM t ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	var want [][][]byte
	for rows.Next() {
		row := make([][]byte, len(cols)+1)
		ptrs := make([]any, len(row))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		want = append(want, row)
	}
	rows.Close()
	_, tx, tb := dbtest.ReadTable(t, path, "t")
	n := 0
	for rowid, rec := range tb.All() {
		for i, w := range want[rowid-1] {
			if got := rec.Column(i).Text(); got != string(w) {
				t.Errorf("row %d %s: %x, SQLite %x", rowid, rec.Name(i), got, w)
			}
		}
		n++
	}
	if err := tx.Err(); err != nil || n != len(want) {
		t.Fatalf("%d rows, %v", n, err)
	}
}

// TestUTF16WideTextNumbers: in a UTF-16 database, SQLite takes text with a
// character at or above U+0100 for no number: arithmetic and CAST AS
// NUMERIC read its leading integer ('1.5日' + 0 is 1), numeric affinities
// leave it TEXT. Text of narrower characters reads as in UTF-8.
func TestUTF16WideTextNumbers(t *testing.T) {
	checkUTF16Columns(t, "x TEXT", []string{"p AS (x + 0)", "n AS (CAST(x AS NUMERIC))", "i INTEGER AS (x)", "r REAL AS (x)",
		"m AS (-x)", "d AS (x * 2)", "c AS (CAST(x AS REAL))", "j AS (x || '' + 1)",
		"f AS (x + 0.5)", "g AS (x * 1.0)", "h AS (0.0 - x)", "k AS (x / 2.0)", "l AS (x + '1.5')", "o AS (x % 2.5)", "q AS (x / 2)",
		"u AS (upper(x) + 0)", "v AS (trim(x) * 1.0)", "w AS ('2.5Ā' + 0)", "y AS (CAST('2.5Ā' AS NUMERIC))", "z AS ('2.5Ā' + 0.5)",
		"a1 AS (x + x)", "a2 AS (x + CAST(x AS REAL))", "a3 AS (x - '1')", "a4 AS (substr(x, 1) + 0.0)"},
		"INSERT INTO t(x) VALUES ('1.5日'), ('1e3日'), ('1e3' || char(0) || '日'), ('1.5' || char(0) || 'Ā'), "+
			"('12é'), ('日'), (' 7日'), ('99999999999999999999日'), ('-4'), ('2.5')")
}

// checkUTF16Columns creates, in each UTF-16 byte order, a table t of the
// stored columns decl and the generated columns cols, runs insert, and
// compares every generated column of every row with SQLite's.
func checkUTF16Columns(t *testing.T, decl string, cols []string, insert string) {
	t.Helper()
	first := strings.Count(decl, ",") + 1 // the first generated column
	for _, enc := range []string{"UTF-16le", "UTF-16be"} {
		path := filepath.Join(t.TempDir(), "w.db")
		sqltest.Exec(t, path,
			"PRAGMA encoding = '"+enc+"'",
			"CREATE TABLE t("+decl+", "+strings.Join(cols, ", ")+")",
			insert)
		lite := sqltest.Open(t, path)
		var sel []string
		for i := range cols {
			name := strings.Fields(cols[i])[0]
			sel = append(sel, "typeof("+name+") || ':' || quote("+name+")")
		}
		want := sqltest.Rows(t, lite, "SELECT "+strings.Join(sel, ", ")+" FROM t ORDER BY rowid")
		lite.Close()
		_, tx, tb := dbtest.ReadTable(t, path, "t")
		k := 0
		for rowid, rec := range tb.All() {
			var got []string
			for i := range cols {
				v := rec.Column(first + i)
				got = append(got, strings.ToLower(v.Type().String())+":"+dbtest.Quote(v))
			}
			if g := strings.Join(got, "|"); k >= len(want) || g != want[k] {
				t.Errorf("%s row %d: %s\nSQLite:       %s", enc, rowid, g, want[min(k, len(want)-1)])
			}
			k++
		}
		if err := tx.Err(); err != nil || k != len(want) {
			t.Fatalf("%s: %d rows, %v", enc, k, err)
		}
	}
}

// TestUTF16WideTextCompare is TestUTF16WideTextNumbers for comparisons
// that apply NUMERIC affinity to a text (a NUMERIC column's against a
// TEXT one: =, IN, CASE x WHEN), and for the functions that read a number
// from text (abs, round, printf): a text with a character at or above
// U+0100, even past a NUL, is no number to SQLite's UTF-16 parsing and
// stays TEXT in the comparison. Ordered comparisons of texts in a UTF-16
// database are not evaluated (pagoda.ErrUnsupported), so none is here.
func TestUTF16WideTextCompare(t *testing.T) {
	checkUTF16Columns(t, "x TEXT, y NUMERIC, n NUMERIC", []string{"e1 AS (y = x)", "e2 AS (y IN (x, 3))", "e3 AS (n = 1.5)", "e4 AS (n IN ('1.5', 1.5))",
		"e5 AS (CASE y WHEN x THEN 'hit' ELSE 'miss' END)", "e6 AS (x * 1 = y)", "e7 AS (x + 0 = 1.5)",
		"e8 AS (abs(x))", "e9 AS (round(x, 1))", "e10 AS (abs(n))", "e11 AS (round(n))",
		"e12 AS (printf('%d', x))", "e13 AS (printf('%.2f', x))", "e14 AS (CAST(x AS INTEGER))",
		"e15 AS (y = '1.5日')", "e16 AS (y IN ('12é', '1e3日', ' 7日'))", "e17 AS (y = upper(x))", "e18 AS (CASE WHEN x THEN 1 ELSE 0 END)",
		"e19 AS (iif(x AND 1, 'y', 'n'))", "e20 INTEGER AS (lower(x))", "e21 REAL AS (x || '')"},
		"INSERT INTO t(x, y, n) VALUES ('1.5日', 1.5, '1.5日'), ('1e3日', 1000, '1e3日'), "+
			"('1.5' || char(0) || 'Ā', 1.5, '1.5' || char(0) || 'Ā'), ('1.5' || char(0) || 'é', 1.5, '1.5' || char(0) || 'é'), "+
			"('12é', 12, '12é'), ('日', 0, '日'), (' 7日', 7, ' 7日'), ('-4', -4, '-4'), ('2.5', 2.5, '2.5'), ('1.5x', 1.5, '1.5x')")
}
