package expr_test

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestDefaultLiteral: a row stored before ALTER TABLE ADD COLUMN lacks the
// new field, and a reader computes it from the column's DEFAULT as SQLite's
// valueFromExpr (src/vdbemem.c) does, then applies the column's affinity.
// The result turns on the literal (an integer that fits int64 or not, hex,
// float, string, TRUE/FALSE, x'blob', NULL, unary minus and plus,
// parentheses) and on the affinity (a column without one keeps a float
// literal REAL; an integer literal too large for int64 takes NUMERIC).
// For each declared type, in an ordinary and a STRICT table, the test adds
// a column per literal to a table with rows and compares what pagoda reads
// in an old row with SQLite (modernc.org/sqlite, the reference of the
// differential tests): storage class and value. An index on each added
// column holds the old rows' defaults as SQLite computes them: pagoda.DB.Check
// computes the same keys and must find the file sound, as PRAGMA
// integrity_check does.
func TestDefaultLiteral(t *testing.T) {
	type table struct {
		typ    string
		strict bool
	}
	var tables []table
	for _, typ := range defaultTypes {
		tables = append(tables, table{typ, false})
	}
	for _, typ := range strictDefaultTypes {
		tables = append(tables, table{typ, true})
	}
	for _, tc := range tables {
		name := tc.typ
		if name == "" {
			name = "none"
		}
		if tc.strict {
			name = "STRICT " + name
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testDefaultLiterals(t, tc.typ, tc.strict)
		})
	}
}

// defaultLiterals are the DEFAULT clauses tried, each valid in ALTER TABLE
// ADD COLUMN on a table with rows (a STRICT table refuses some).
var defaultLiterals = []string{
	// Integers.
	"5", "-5", "+5", "(5)", "(-5)", "(+5)", "(-(-5))", "007", "-007", "0", "-0",
	"2147483647", "2147483648", "-2147483649", "9223372036854775807", "-9223372036854775808",
	"9223372036854775808", "-9223372036854775809", "99999999999999999999", "(-(-9223372036854775808))",
	// Hex integers: up to 16 digits they wrap to int64. Under a minus,
	// evaluated alone then negated.
	"0x10", "-0x10", "(-0x10)", "(-(0x10))", "(-(+0x10))", "0x7FFFFFFF", "0x80000000", "-0x80000000",
	"0x100000000", "0xFFFFFFFFFFFFFFFF", "-0xFFFFFFFFFFFFFFFF", "0x8000000000000000",
	"-0x8000000000000000", "0x7FFFFFFFFFFFFFFF", "-0x7FFFFFFFFFFFFFFF", "0x00000000000000000001",
	"0x10000000000000000", "-0x10000000000000000",
	// Floats.
	"1.0", "-2.0", "1e3", "(5.0)", "(-(5.0))", "(-(-5.0))", "(-(+5.0))", "(-+(+5.0))", "(+(-5.0))",
	"(+(5.0))", "-0.0", "0.0", "1e-400", "-1e-400", "1e400", "-1e400", "(-(1e400))", "0.5", "-0.5",
	".5", "5.", "12.0", "1.5e2", "9223372036854775808.0", "1e19", "-9.2233720368547758e18",
	// Strings and identifiers.
	"'12'", "'-12'", "'12.0'", "' 12 '", "'1e3'", "'abc'", "'0x10'", "''", "'9223372036854775808'",
	"-'12'", "+'12'", "-'abc'", "(-'12.5')", "-'-0.0'", "(-'1e400')", "abc", `"TRUE"`, "[x]", "`y`",
	// TRUE, FALSE, blobs, NULL.
	"TRUE", "FALSE", "true", "(TRUE)", "(-TRUE)", "(-(TRUE))", "x'3132'", "X''", "(x'')", "(-x'3132')",
	"NULL", "(NULL)", "(-NULL)",
}

// defaultTypes are the declared types of an ordinary table tried: each
// affinity, and none.
var defaultTypes = []string{"", "INTEGER", "REAL", "NUMERIC", "TEXT", "BLOB", "INT", "DOUBLE", "VARCHAR(5)", "BOOLEAN"}

// strictDefaultTypes are the column types of a STRICT table (ANY has no
// affinity).
var strictDefaultTypes = []string{"ANY", "INTEGER", "INT", "REAL", "TEXT", "BLOB"}

// sqlValue is a value as SQLite returns it: typeof(), quote() and the
// value (a REAL compared bit for bit, so -0.0 differs from 0.0).
type sqlValue struct {
	typ   string
	quote string
	v     any
}

func (v sqlValue) String() string {
	if f, ok := v.v.(float64); ok {
		return fmt.Sprintf("%s %s (%#x)", v.typ, v.quote, math.Float64bits(f))
	}
	return v.typ + " " + v.quote
}

// testDefaultLiterals adds a column of type typ for each default literal
// to a table with rows, indexes each, and compares what pagoda reads in
// an old row, and what its Check finds, with SQLite.
func testDefaultLiterals(t *testing.T, typ string, strict bool) {
	path := filepath.Join(t.TempDir(), "defaults.db")
	db := sqltest.Open(t, path)
	create := "CREATE TABLE t(a INTEGER PRIMARY KEY, b INT)"
	if strict {
		create += " STRICT"
	}
	// Without syncs: a hundred ALTERs, each its own transaction.
	sqltest.Run(t, db, "PRAGMA synchronous=OFF", "PRAGMA journal_mode=MEMORY", create, "INSERT INTO t VALUES (1, 1), (2, 2)")
	var lits []string
	for _, lit := range defaultLiterals {
		q := fmt.Sprintf("ALTER TABLE t ADD COLUMN c%d %s DEFAULT %s", len(lits), typ, lit)
		if _, err := db.Exec(q); err != nil {
			if strict && strings.Contains(err.Error(), "type mismatch on DEFAULT") {
				continue // the default does not fit the STRICT type
			}
			t.Fatalf("sqlite: %s: %v", q, err)
		}
		lits = append(lits, lit)
	}
	t.Logf("%d of %d literals", len(lits), len(defaultLiterals))
	want := sqliteDefaults(t, db, len(lits))
	// The index on each column holds the old rows' defaults as SQLite
	// computes them.
	for i := range lits {
		sqltest.Run(t, db, fmt.Sprintf("CREATE INDEX t_c%d ON t(c%d)", i, i))
	}
	if got := sqltest.Rows(t, db, "PRAGMA integrity_check"); len(got) != 1 || got[0] != "ok" {
		t.Fatalf("sqlite: PRAGMA integrity_check: %q", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	pdb, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	err = pdb.View(func(tx *pagoda.Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		rec, err := tb.Get(1)
		if err != nil {
			return err
		}
		for i, lit := range lits {
			got := rec.Column(2 + i)
			if !sameValue(got, want[i]) {
				t.Errorf("%s DEFAULT %s: pagoda %s %v, SQLite %v", typ, lit, got.Type(), got, want[i])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// SQLite wrote the indexes and finds them sound: so must pagoda.
	if err := pdb.Check(); err != nil {
		var ce *pagoda.CheckError
		if !errors.As(err, &ce) {
			t.Fatalf("Check: %v", err)
		}
		for _, p := range ce.Problems {
			t.Errorf("Check (PRAGMA integrity_check: ok): %v", p)
		}
	}
}

// sqliteDefaults reads columns c0..c(n-1) of row 1 of table t with
// SQLite: typeof, quote and the value of each.
func sqliteDefaults(t *testing.T, db *sql.DB, n int) []sqlValue {
	t.Helper()
	var sel []string
	for i := range n {
		sel = append(sel, fmt.Sprintf("typeof(c%d), quote(c%d), c%d", i, i, i))
	}
	row := make([]any, 3*n)
	for i := range row {
		row[i] = new(any)
	}
	q := fmt.Sprintf("SELECT %s FROM t WHERE a = 1", strings.Join(sel, ", "))
	if err := db.QueryRow(q).Scan(row...); err != nil {
		t.Fatalf("sqlite: reading the defaults: %v", err)
	}
	out := make([]sqlValue, n)
	for i := range out {
		typ, _ := (*row[3*i].(*any)).(string)
		quote, _ := (*row[3*i+1].(*any)).(string)
		out[i] = sqlValue{typ: typ, quote: quote, v: *row[3*i+2].(*any)}
	}
	return out
}

// sameValue reports whether pagoda's v is SQLite's w: the same storage
// class and value (REALs bit for bit).
func sameValue(v pagoda.Value, w sqlValue) bool {
	if v.Type().String() != w.typ {
		return false
	}
	switch x := w.v.(type) {
	case nil:
		return v.IsNull()
	case int64:
		return v.Int() == x
	case float64:
		return math.Float64bits(v.Float()) == math.Float64bits(x)
	case string:
		return v.Text() == x
	case []byte:
		return string(v.Blob()) == string(x)
	}
	return false
}

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
			_, tx, tb := dbtest.ReadTable(t, path, "t")
			rec, err := tb.Get(1)
			if err != nil {
				t.Fatal(err)
			}
			w := strings.Split(want[0], "|")
			for i, d := range defs {
				v := rec.Column(1 + i)
				if got := strings.ToLower(v.Type().String()) + ":" + dbtest.Quote(v); got != w[i] {
					t.Errorf("DEFAULT %s = %s, SQLite %s", d, got, w[i])
				}
			}
			if err := tx.Err(); err != nil {
				t.Error(err)
			}
		})
	}
}
