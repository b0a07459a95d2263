package expr_test

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/format"
	_ "github.com/pagodadb/pagoda/internal/sqltest" // the "sqlite" driver: SQLite itself, the oracle
)

// genExprs are generated-column expressions over the columns i INTEGER,
// r REAL, t TEXT, n NUMERIC, b BLOB and x (no type).
var genExprs = []string{
	"i + 1", "i - r", "i * 2", "i / 3", "i % 3", "r / 0", "i * i", "t + 0", "x * 1", "-t", "t % 7", "i + NOT t", "- NOT i", "x = NOT i", "r * NOT i = 0", "NOT NOT x", "i + 9223372036854775807", "i - 9223372036854775807 - 2", "-i", "t || 'x'", "t || r", "r || ''",
	"x || i", "n || ''", "i & 3", "i | x", "i << 2", "i >> 1", "~i", "x << -1", "i >> 70",
	"CAST(t AS INTEGER)", "CAST(t AS REAL)", "CAST(t AS NUMERIC)", "CAST(t AS TEXT)", "CAST(t AS BLOB)", "CAST(r AS TEXT)",
	"CAST(r AS INTEGER)", "CAST(x AS NUMERIC)", "CAST(b AS TEXT)", "CAST(b AS NUMERIC)", "CAST(i AS REAL)", "CAST(x AS VARCHAR(5))",
	"CAST(n AS DOUBLE PRECISION)", "CAST(x AS BLOB)", "CAST(r AS NUMERIC)",
	"CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' ELSE 'zero' END", "CASE t WHEN 'a' THEN 1 WHEN '12' THEN 2 END",
	"CASE i WHEN 1 THEN 'one' ELSE t END", "CASE x WHEN 1 THEN 'one' WHEN '1' THEN 'text one' END", "CASE WHEN t THEN 1 END",
	"iif(i > 0, t, r)", "iif(x, 1, 2)", "iif(i, 'a', r, 'b', 'c')", "nullif(i, 0)", "nullif(t, '')", "nullif(x, i)",
	"abs(i)", "abs(r)", "abs(t)", "abs(x)", "round(r)", "round(r, 2)", "round(t, 1)", "round(i, x)", "round(r, -1)",
	"substr(t, 2)", "substr(t, 2, 3)", "substr(t, -2)", "substr(t, -2, 5)", "substr(t, 0, 2)", "substr(t, 2, -1)",
	"substr(b, 2, 2)", "substr(b, -1)", "substring(x, i, 2)", "substr(t, i)", "substr(r, 1, 4)",
	"trim(t)", "ltrim(t)", "rtrim(t)", "trim(t, ' 1')", "ltrim(x, '0x')", "rtrim(t, 'é')", "trim(b)",
	"replace(t, '1', 'one')", "replace(t, '', 'z')", "replace(x, 'a', x)", "replace(r, '.', ',')",
	"instr(t, '1')", "instr(t, 'é')", "instr(b, x'00')", "instr(x, 'a')", "instr(i, 2)",
	"hex(t)", "hex(b)", "hex(r)", "hex(x)", "char(65, i % 200 + 66)", "char(x)", "unicode(t)", "unicode(x)",
	"min(i, r)", "max(i, r, t)", "min(t, 'm')", "max(x, b)", "min(t, 'M' COLLATE NOCASE)", "max(t, n)",
	"concat(t, i, NULL, r)", "concat_ws('-', t, x, b)", "concat_ws(NULL, t)",
	"length(t)", "length(b)", "length(r)", "octet_length(t)", "typeof(x)", "upper(t)", "lower(x)", "coalesce(x, t, 0)",
	"ifnull(t, 'none')", "sign(t)", "sign(r)", "likely(i)",
	"x = i", "x == t", "t > 'm'", "i BETWEEN 0 AND 10", "t IN ('a', '12', 'x')", "t LIKE '%1%'", "x IS NULL", "NOT x", "i AND t", "r OR x",
	// SQLite computes every generated column when it inserts a row, so
	// the JSON ones only look into valid JSON.
	"iif(json_valid(t), json_extract(t, '$.a'), 0)", "iif(json_valid(t), t ->> '$.a', 0)", "iif(json_valid(t), t -> '$.a', 0)",
	"iif(json_valid(t), t ->> 'a', 0)", "iif(json_valid(t), t ->> 0, 0)", "iif(json_valid(t), t -> 1, 0)",
	"iif(json_valid(t), t ->> '$.b[0]', 0)", "iif(json_valid(t), t ->> '$.b[#-1]', 0)", "iif(json_valid(t), json_extract(t, '$'), 0)",
	"iif(json_valid(t), t -> '$.c', 0)", "iif(json_valid(t), t ->> '$.c.d', 0)", "iif(json_valid(t), t ->> '$.e', 0)",
	"iif(json_valid(t), t ->> '$.b', 0)", "iif(json_valid(t), t ->> '$.b[2].y', 0)",
	"g1 || '!'", "g1 + 1", "g2 + i", "g2 * 2",
	"printf('%d|%5.2f|%s|%q|%Q|%x', i, r, t, t, x, i)", "printf('%,d %g %e %c', i, r, n, t)", "format('%-8s|%08.3f|%!.17g', t, r, x)",
	"printf('%.3s|%!.2s|%w|%#Q|%j', t, t, t, t, t)", "printf(t, i, r)", "printf('%*d', i % 30, r)", "printf(NULL, i)", "printf('%s', b)",
	"quote(i)", "quote(r)", "quote(t)", "quote(b)", "quote(x)", "quote(n)",
	"t GLOB '*1*'", "t NOT GLOB '[a-m]*'", "x GLOB '?'", "glob('*é*', t)", "b GLOB '*'", "i GLOB '1*'", "r GLOB '*.5'",
	"iif(json_valid(t), json_extract(t, '$.a', '$.b[0]', '$.zz', '$.c'), 0)", "iif(json_valid(t), json_type(t), 0)",
	"iif(json_valid(t), json_type(t, '$.e'), 0)", "iif(json_valid(t), json_array_length(t, '$.b'), 0)", "iif(json_valid(t), json_array_length(t), 0)",
	"date(t)", "datetime(t, '+1 month', 'floor')", "time(r, 'subsec')", "julianday(t)", "julianday(i)", "unixepoch(t, 'subsec')",
	"unixepoch(i, 'unixepoch', 'start of day')", "strftime('%Y-%m-%d %H:%M:%f %j %J %s %u %U %V %W %G', t)", "strftime(t, x)",
	"datetime(x, 'auto', 'weekday 0', '-1 year')", "timediff(t, '2000-01-31')", "date(r, '+0001-02-03', 'end of month')",
	"datetime('2024-02-29 12:34:56.789', i || ' days', 'subsec')", "strftime('%F %T %j %U %V %W %G %g %u %w %p', '2021-02-31T24:00+05:30', r || ' hours')",
	"julianday(i + 2451545, t)", "date(r * 1000000, 'unixepoch', 'start of month')", "timediff('2024-03-31', date(i + 2459000))",
	"time('12:30', t, x)", "unixepoch('2021-01-31', n || ' months', 'floor')",
	"i IN (1, 2) + 1", "i IN (1, 2) < 5 = x", "t NOT IN ('a', '12') || 'x'", "i BETWEEN i <> 2 AND 5", "x ISNULL + 1", "i = 1 NOTNULL - 1",
	"i NOT NULL & 1 > 0", "1 + i IN (2)", "i BETWEEN NOT x AND r + 1 = 1", "i BETWEEN t IN ('12') AND r < i", "t NOT IN ('a') COLLATE NOCASE || 'q'",
	"i + 1_000", "0x1_0 + 1_0.5", "r * 1_0.5e1_0", "i BETWEEN -1_0 AND 1_0",
	"TRUE", "FALSE + i", "x IS TRUE", "t IS NOT TRUE", "r IS FALSE", "x IS NOT FALSE", "iif(TRUE, t, FALSE)", "i = TRUE",
}

// genValues are the values the rows take, in SQL.
var genValues = []string{
	"NULL", "0", "1", "-1", "12", "9223372036854775807", "-9223372036854775807", "255", "7",
	"0.0", "-0.0", "1.5", "-2.5", "1e300", "-1e-300", "1e-320", "123456789012345678.0", "3.0", "0.1", "1e15", "1e16", "2.675",
	"''", "' 12 '", "'0x10'", "'1e5'", "'12abc'", "'abc'", "'héllo wörld'", "'a'", "'M'", "'12'", "' 1.5'", "'-0'", "'-0.0'", "'-0e5'",
	"CAST(x'ff' AS TEXT)", "CAST(x'c3' AS TEXT)", "'1' || char(0) || '2'", "'12' || char(0)", "' 7 ' || char(0) || 'x'", "'9223372036854775808'",
	`'{"a":1,"b":[10,"x",{"y":null}],"c":{"d":"e\u00e9"},"e":1.50}'`, `'{"a":"str\n","b":[]}'`, `' [ 1 , 2.5e3 , true ] '`,
	`'{"a":{"k":[1, 2]},"e":false}'`, `'{"a":12345678901234567890}'`,
	"x''", "x'00'", "x'3132'", "x'c3a9'", "x'ff00ff'", "'2024-02-29 12:34:56.789'", "'2021-02-31T24:00+05:30'", "'12:30'",
}

// TestGeneratedLikeSQLite reads VIRTUAL generated columns with pagoda and
// compares each value, type and exact value, with what SQLite 3.54
// (modernc) computes for the same file.
func TestGeneratedLikeSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Each expression gets a column of each affinity (the affinity is
	// applied to the result), over base columns of each affinity. g1 and
	// g2 make chains; d and e are added by ALTER TABLE.
	cols := []string{"i INTEGER", "r REAL", "t TEXT", "n NUMERIC", "b BLOB", "x",
		"g1 AS (t || i) VIRTUAL", "g2 INTEGER AS (g1 || '5') VIRTUAL"}
	affs := []string{"", " TEXT", " INTEGER", " REAL", " NUMERIC"}
	var gen []string
	for k, e := range genExprs {
		name := fmt.Sprintf("c%d", k)
		gen = append(gen, name)
		cols = append(cols, fmt.Sprintf("%s%s AS (%s) VIRTUAL", name, affs[k%len(affs)], e))
	}
	// The same expressions with the other affinities, every fifth one.
	for k := 0; k < len(genExprs); k += 5 {
		for a := 1; a < len(affs); a++ {
			name := fmt.Sprintf("c%d_%d", k, a)
			gen = append(gen, name)
			cols = append(cols, fmt.Sprintf("%s%s AS (%s) VIRTUAL", name, affs[(k+a)%len(affs)], genExprs[k]))
		}
	}
	stmts := []string{
		"CREATE TABLE t0(i INTEGER, r REAL, t TEXT, n NUMERIC, b BLOB, x, g1 AS (t || i) VIRTUAL)",
	}
	// Rows first, then the columns added: d and e read their defaults.
	rnd := rand.New(rand.NewSource(7))
	pick := func() string { return genValues[rnd.Intn(len(genValues))] }
	var rows []string
	for _, v := range genValues { // every value in every base column once
		rows = append(rows, fmt.Sprintf("(%s, %s, %s, %s, %s, %s)", v, v, v, v, v, v))
	}
	for k := 0; k < 300; k++ {
		rows = append(rows, fmt.Sprintf("(%s, %s, %s, %s, %s, %s)", pick(), pick(), pick(), pick(), pick(), pick()))
	}
	create := "CREATE TABLE t(" + strings.Join(cols, ", ") + ")"
	if _, err := db.Exec(create); err != nil {
		t.Fatal(err)
	}
	_ = stmts
	for _, row := range rows {
		if _, err := db.Exec("INSERT INTO t(i, r, t, n, b, x) VALUES " + row); err != nil {
			t.Fatalf("%s: %v", row, err)
		}
	}
	for _, s := range []string{
		"ALTER TABLE t ADD COLUMN d TEXT DEFAULT (CAST(12.50 AS TEXT))",
		"ALTER TABLE t ADD COLUMN e REAL DEFAULT (CAST('7x' AS INTEGER))",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	// SQLite's answers, with JSON functions that fail on some rows
	// (malformed JSON) left out per row: pagoda reports those.
	type cell struct {
		v   any
		typ string
		err bool
	}
	rowids := []int64{}
	want := map[int64][]cell{}
	rs, err := db.Query("SELECT rowid FROM t ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var id int64
		rs.Scan(&id)
		rowids = append(rowids, id)
	}
	rs.Close()
	for _, id := range rowids {
		for _, c := range gen {
			var v any
			var typ string
			err := db.QueryRow(fmt.Sprintf("SELECT %s, typeof(%s) FROM t WHERE rowid = ?", c, c), id).Scan(&v, &typ)
			want[id] = append(want[id], cell{v, typ, err != nil})
		}
	}
	db.Close()

	pdb, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	compared, failed, unsupported := 0, 0, 0
	idx := map[string]int{}
	err = pdb.View(func(tx *pagoda.Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		rec, err := tb.Get(rowids[0])
		if err != nil {
			return err
		}
		for i := 0; i < rec.Len(); i++ {
			idx[rec.Name(i)] = i
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range rowids {
		for k, c := range gen {
			w := want[id][k]
			var got pagoda.Value
			var gerr error
			pdb.View(func(tx *pagoda.Tx) error {
				tb, err := tx.Table("t")
				if err != nil {
					return err
				}
				rec, err := tb.Get(id)
				if err != nil {
					return err
				}
				got = rec.Column(idx[c])
				if got.Type() == pagoda.TypeText || got.Type() == pagoda.TypeBlob {
					got = pagoda.Value{} // not kept past the transaction: compared below by its copy
				}
				gerr = tx.Err()
				if gerr == nil && !w.err && !sameGenValue(rec.Column(idx[c]), w.v, w.typ) {
					failed++
					v := rec.Column(idx[c])
					t.Errorf("row %d %s = %#v (%v), SQLite %#v (%s)", id, c, v.Any(), v.Type(), w.v, w.typ)
				}
				return nil
			})
			switch {
			case w.err && gerr == nil:
				t.Errorf("row %d %s: SQLite fails, pagoda reads a value", id, c)
				failed++
			case w.err:
			case gerr != nil && errors.Is(gerr, pagoda.ErrUnsupported):
				unsupported++
			case gerr != nil:
				t.Errorf("row %d %s: %v", id, c, gerr)
				failed++
			default:
				compared++
			}
			if failed > 40 {
				t.Fatal("too many differences")
			}
		}
	}
	t.Logf("%d expressions x %d rows: %d values compared, %d unsupported", len(gen), len(rowids), compared, unsupported)
}

// sameGenValue compares a pagoda value with SQLite's, by type and exactly.
func sameGenValue(got pagoda.Value, want any, typ string) bool {
	if got.Type().String() != typ {
		return false
	}
	switch w := want.(type) {
	case nil:
		return got.IsNull()
	case int64:
		return got.Int() == w
	case float64:
		return math.Float64bits(got.Float()) == math.Float64bits(w) || math.IsNaN(w) && math.IsNaN(got.Float()) // -0.0 is not 0.0
	case string:
		return got.Text() == w
	case []byte:
		return string(got.Blob()) == string(w)
	}
	return false
}

// TestGeneratedDefaultsAndUnsupported: defaults of columns added by ALTER
// TABLE with CAST read as SQLite reads them for older rows; a VIRTUAL
// column outside the subset reads NULL with an error wrapping
// ErrUnsupported while the other columns read as usual.
func TestGeneratedDefaultsAndUnsupported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defaults := []string{
		"TEXT DEFAULT (CAST(12.50 AS TEXT))", "REAL DEFAULT (CAST('7x' AS INTEGER))", "DEFAULT (CAST(1.5 AS BLOB))",
		"INTEGER DEFAULT (CAST('3.0e0' AS NUMERIC))", "TEXT DEFAULT (CAST(CAST('1e5' AS REAL) AS TEXT))", "DEFAULT (+CAST(x'3132' AS TEXT))",
		"NUMERIC DEFAULT (CAST(' 12 ' AS NUMERIC))", "TEXT DEFAULT 2.5", "DEFAULT (CAST(NULL AS TEXT))", "TEXT DEFAULT (CAST(0.1 AS REAL))",
		"DEFAULT (CAST(123456789012345678.0 AS TEXT))", "TEXT DEFAULT 1e300", "INTEGER DEFAULT 1_000", "DEFAULT -0x1_F", "REAL DEFAULT 1_0.5e-1_0",
	}
	for _, s := range []string{
		"CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, v AS (json_quote(id)), w AS (a || '!'))",
		"INSERT INTO t(a) VALUES ('x'), ('y')",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	for k, d := range defaults {
		if _, err := db.Exec(fmt.Sprintf("ALTER TABLE t ADD COLUMN d%d %s", k, d)); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
	}
	type cell struct {
		v   any
		typ string
	}
	var want []cell
	for k := range defaults {
		var c cell
		if err := db.QueryRow(fmt.Sprintf("SELECT d%d, typeof(d%d) FROM t WHERE id = 1", k, k)).Scan(&c.v, &c.typ); err != nil {
			t.Fatal(err)
		}
		want = append(want, c)
	}
	db.Close()
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
		for k, d := range defaults {
			if got := rec.Column(4 + k); !sameGenValue(got, want[k].v, want[k].typ) {
				t.Errorf("DEFAULT %s = %#v (%v), SQLite %#v (%s)", d, got.Any(), got.Type(), want[k].v, want[k].typ)
			}
		}
		if got := rec.Column(3); got.Text() != "x!" || tx.Err() != nil {
			t.Errorf("w = %q, %v; want x!", got.Text(), tx.Err())
		}
		if got := rec.Column(1); got.Text() != "x" {
			t.Errorf("a = %q", got.Text())
		}
		if got := rec.Column(2); !got.IsNull() {
			t.Errorf("v (json_quote) = %v, want NULL", got.Any())
		}
		err = tx.Err()
		if !errors.Is(err, pagoda.ErrUnsupported) || !strings.Contains(err.Error(), "column v") || !strings.Contains(err.Error(), "json_quote") {
			t.Errorf("reading v: %v, want ErrUnsupported naming column v and json_quote", err)
		}
		return nil
	})
	if !errors.Is(err, pagoda.ErrUnsupported) { // View reports the transaction's error
		t.Fatalf("View: %v, want ErrUnsupported", err)
	}
	// A scan that does not read v has no error.
	err = pdb.View(func(tx *pagoda.Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		rec, err := tb.Get(2)
		if err != nil {
			return err
		}
		if rec.Column(3).Text() != "y!" {
			t.Errorf("w = %q, want y!", rec.Column(3).Text())
		}
		return tx.Err()
	})
	if err != nil {
		t.Errorf("reading the supported columns: %v", err)
	}
}

// TestGeneratedStrictTypes: in a STRICT table, a VIRTUAL column whose
// value, after its affinity, is not of its declared type fails the read,
// as SQLite 3.54 fails the statement ("cannot store REAL value in BLOB
// column t.g"); ANY and values that fit read as usual. SQLite 3.54 refuses
// to insert such rows, but 3.40 wrote them: the fixture stores them in a
// table without STRICT and then gives it its STRICT SQL.
func TestGeneratedStrictTypes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	gen := []string{"g", "h", "hi", "r", "x", "y", "z"}
	const cols = "g BLOB AS (a), h INT AS (a), hi INTEGER AS (a + 0), r REAL AS (a), x TEXT AS (a), y ANY AS (a), z ANY AS (quote(g))"
	for _, s := range []string{
		"CREATE TABLE t(a, " + cols + ")",
		"INSERT INTO t(a) VALUES (1.5), ('x'), (x'01'), (3), (NULL), ('12'), (2.0), ('3.0'), ('')",
		"PRAGMA writable_schema = ON",
		"UPDATE sqlite_schema SET sql = 'CREATE TABLE t(a ANY, " + cols + ") STRICT' WHERE name = 't'",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	db.Close()
	if db, err = sql.Open("sqlite", path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pdb, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	fails := 0
	for id := int64(1); id <= 9; id++ {
		for k, c := range gen {
			var want any
			var typ string
			serr := db.QueryRow(fmt.Sprintf("SELECT %s, typeof(%s) FROM t WHERE rowid = %d", c, c, id)).Scan(&want, &typ)
			pdb.View(func(tx *pagoda.Tx) error {
				tb, err := tx.Table("t")
				if err != nil {
					t.Fatal(err)
				}
				rec, err := tb.Get(id)
				if err != nil {
					t.Fatal(err)
				}
				got := rec.Column(1 + k)
				gerr := tx.Err()
				switch {
				case serr != nil:
					fails++
					msg := strings.TrimPrefix(serr.Error(), "constraint failed: ")
					msg = msg[:strings.LastIndex(msg, " (")]
					if gerr == nil || !strings.Contains(gerr.Error(), msg) {
						t.Errorf("row %d %s: SQLite fails (%v), pagoda reads %#v, %v", id, c, serr, got.Any(), gerr)
					}
				case gerr != nil:
					t.Errorf("row %d %s: %v; SQLite reads %#v (%s)", id, c, gerr, want, typ)
				case !sameGenValue(got, want, typ):
					t.Errorf("row %d %s = %#v (%v), SQLite %#v (%s)", id, c, got.Any(), got.Type(), want, typ)
				}
				return nil
			})
		}
	}
	if fails == 0 {
		t.Fatal("fixture: SQLite failed no read")
	}
}

// TestDateGeneratedUnsupported: what reads the clock or the time zone
// is not evaluated in a generated column (SQLite fails such a row at
// INSERT); what fails before it reads NULL, as in SQLite.
func TestDateGeneratedUnsupported(t *testing.T) {
	for _, g := range []string{"date(a, ''localtime'')", "datetime(a, ''+1 day'', ''utc'')", "date(''now'')", "date()",
		"strftime(''%s'')", "time(''subsec'')", "unixepoch(a, ''start of day'', ''LocalTime'')", "timediff(a, ''now'')"} {
		path := genFile(t, "", "CREATE TABLE t(a, g)", "CREATE TABLE t(a, g AS ("+g+"))", "INSERT INTO t(a) VALUES ('2021-06-15 12:00')")
		vals, err := readColumns(t, path, 1)
		if vals[0].Type() != pagoda.TypeNull || !errors.Is(err, format.ErrUnsupported) {
			t.Errorf("%s: %v, %v; want NULL and format.ErrUnsupported", g, vals[0], err)
		}
	}
	// SQLite inserts these: the time value or a modifier before fails.
	for _, g := range []string{"date(a, ''localtime'')", "date(''2021-01-01'', a, ''localtime'')", "timediff(a, ''now'')"} {
		path := genFile(t, "", "CREATE TABLE t(a, g AS ("+strings.ReplaceAll(g, "''", "'")+"))", "CREATE TABLE t(a, g AS ("+g+"))",
			"INSERT INTO t(a) VALUES ('bogus')")
		vals, err := readColumns(t, path, 1)
		if vals[0].Type() != pagoda.TypeNull || err != nil {
			t.Errorf("%s of 'bogus': %v, %v; want NULL", g, vals[0], err)
		}
	}
}
