package sqlitediff

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	_ "github.com/pagodadb/pagoda/internal/sqltest" // the "sqlite" driver: SQLite itself, the oracle
)

// openMemory opens a private in-memory database on a single connection
// (temp tables belong to one connection).
func openMemory(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func mustExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// arg converts a value to what database/sql binds as the same SQLite value.
func arg(v format.Value) any {
	switch v.Kind {
	case format.KindInt:
		return v.Int()
	case format.KindFloat:
		return v.Float()
	case format.KindText:
		return string(v.Bytes)
	case format.KindBlob:
		return append([]byte{}, v.Bytes...) // non-nil: nil binds as NULL
	}
	return nil
}

// sqliteType is typeof(v) as SQLite stores v (a NaN becomes NULL).
func sqliteType(v format.Value) string {
	switch v.Kind {
	case format.KindInt:
		return "integer"
	case format.KindFloat:
		if math.IsNaN(v.Float()) {
			return "null"
		}
		return "real"
	case format.KindText:
		return "text"
	case format.KindBlob:
		return "blob"
	}
	return "null"
}

func show(v format.Value) string {
	switch v.Kind {
	case format.KindInt:
		return fmt.Sprintf("%d", v.Int())
	case format.KindFloat:
		return fmt.Sprintf("%v(real)", v.Float())
	case format.KindText:
		return fmt.Sprintf("%q", v.Bytes)
	case format.KindBlob:
		return fmt.Sprintf("x'%x'", v.Bytes)
	}
	return "NULL"
}

func txt(s string) format.Value { return format.TextValue([]byte(s)) }

// valueList returns about 300 values chosen to sit on the edges of the
// comparison rules: storage classes, int/real exactness around 2^53 and
// 2^63, text with NULs, unicode, trailing spaces and mixed case, blobs.
func valueList() []format.Value {
	var vs []format.Value
	ints := func(is ...int64) {
		for _, i := range is {
			vs = append(vs, format.IntValue(i))
		}
	}
	reals := func(fs ...float64) {
		for _, f := range fs {
			vs = append(vs, format.FloatValue(f))
		}
	}
	vs = append(vs, format.NullValue(), format.NullValue(), format.NullValue())
	for _, e := range []uint{0, 1, 7, 8, 15, 16, 23, 24, 31, 32, 47, 48, 52, 53, 54, 62} {
		b := int64(1) << e
		ints(b-1, b, b+1, -b-1, -b, -b+1)
	}
	ints(math.MaxInt64, math.MaxInt64-1, math.MinInt64, math.MinInt64+1, 9007199254740993, -9007199254740993)
	p53 := float64(1 << 53)
	p63 := float64(1 << 63)
	reals(0, math.Copysign(0, -1), 0.5, -0.5, 1, -1, 1.5, -1.5, 2.5, -2.5, 127, 128, 0.1, 1.0/3,
		p53, p53+2, p53-1, -p53, -p53-2, -p53+1, math.Nextafter(p53, 0), math.Nextafter(p53, math.Inf(1)),
		p63, -p63, math.Nextafter(p63, 0), -math.Nextafter(p63, 0), math.Nextafter(-p63, math.Inf(-1)), 2*p63,
		1e300, -1e300, 1e-300, -1e-300, math.Inf(1), math.Inf(-1), math.NaN(),
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		4503599627370495.5, -4503599627370495.5, 9007199254740993.0, float64(math.MaxInt32)+0.5)
	for _, s := range []string{
		"", "a", "A", "b", "B", "ab", "aB", "Ab", "AB", "abc", "ABC", "abd", "ABD",
		"a\x00", "A\x00", "a\x00b", "A\x00c", "a\x00a", "a\x00bc", "A\x00BC", "\x00", "\x00a", "\x00A", "a\x00 ", "A\x00 ",
		"a ", "a  ", "A ", " a", "a\t", "abc ", "ABC  ", "ab c", "abc\x00 ", "  ",
		"é", "É", "e", "E", "ée", "Éclair", "éclair", "eclair", "ÉCLAIR", "straße", "STRASSE",
		"日本", "日本語", "😀", "z", "Z", "[", "\\", "]", "^", "_", "`", "{", "@", "\x7f", "\xff", "\xff\xfe",
		"mixedCase", "MIXEDcase", "MixedCase ", "123", "12", "1e5", "-1", " 1",
	} {
		vs = append(vs, txt(s))
	}
	for _, b := range []string{"", "\x00", "\x00\x00", "\x01", "\xff", "A", "a", "abc", "\x00\xff", "a\x00", "a "} {
		vs = append(vs, format.BlobValue([]byte(b)))
	}
	// Fill up with random values near the interesting ones.
	rng := rand.New(rand.NewPCG(7, 11))
	const alphabet = "aAbB \x00é"
	for len(vs) < 300 {
		switch rng.IntN(4) {
		case 0:
			b := int64(1) << rng.UintN(63)
			ints(b + rng.Int64N(5) - 2)
		case 1:
			reals(float64(rng.Int64N(1<<54)-1<<53) + []float64{0, 0.5, -0.5}[rng.IntN(3)])
		case 2:
			var sb strings.Builder
			for n := rng.IntN(4); n > 0; n-- {
				r := []rune(alphabet)
				sb.WriteRune(r[rng.IntN(len(r))])
			}
			vs = append(vs, txt(sb.String()))
		default:
			b := make([]byte, rng.IntN(3))
			for i := range b {
				b[i] = []byte{0, 1, 'a', 0xff}[rng.IntN(4)]
			}
			vs = append(vs, format.BlobValue(b))
		}
	}
	return vs
}

// loadValues stores vals in a temp table v(id, v) with an untyped column,
// id = index in vals, and checks SQLite stored each with the intended type.
func loadValues(t *testing.T, db *sql.DB, vals []format.Value) {
	t.Helper()
	mustExec(t, db, "CREATE TEMP TABLE v(id INTEGER PRIMARY KEY, v)")
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if _, err := tx.Exec("INSERT INTO v VALUES(?, ?)", i, arg(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT id, typeof(v), length(CAST(v AS BLOB)) FROM v")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var typ string
		var n sql.NullInt64
		if err := rows.Scan(&id, &typ, &n); err != nil {
			t.Fatal(err)
		}
		v := vals[id]
		if typ != sqliteType(v) {
			t.Errorf("value %d %s stored as %s", id, show(v), typ)
		}
		if (v.Kind == format.KindText || v.Kind == format.KindBlob) && n.Int64 != int64(len(v.Bytes)) {
			t.Errorf("value %d %s stored with %d bytes", id, show(v), n.Int64)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

var collations = []struct {
	name string
	coll format.Collation
}{
	{"BINARY", format.CollBinary},
	{"NOCASE", format.CollNoCase},
	{"RTRIM", format.CollRTrim},
}

// TestOrderByMatchesSQLite asks SQLite to sort the values and checks that
// the sequence never decreases under CompareValues (ties may come out in
// any order).
func TestOrderByMatchesSQLite(t *testing.T) {
	vals := valueList()
	if len(vals) < 300 {
		t.Fatalf("only %d values", len(vals))
	}
	db := openMemory(t)
	loadValues(t, db, vals)
	for _, tc := range []struct {
		query string
		coll  format.Collation
		desc  bool
	}{
		{"SELECT id FROM v ORDER BY v", format.CollBinary, false},
		{"SELECT id FROM v ORDER BY v COLLATE NOCASE", format.CollNoCase, false},
		{"SELECT id FROM v ORDER BY v COLLATE RTRIM", format.CollRTrim, false},
		{"SELECT id FROM v ORDER BY v DESC", format.CollBinary, true},
		{"SELECT id FROM v ORDER BY v COLLATE NOCASE DESC", format.CollNoCase, true},
	} {
		t.Run(tc.query, func(t *testing.T) {
			ids := queryIDs(t, db, tc.query)
			if len(ids) != len(vals) {
				t.Fatalf("%d rows, want %d", len(ids), len(vals))
			}
			bad := 0
			for i := 1; i < len(ids); i++ {
				a, b := vals[ids[i-1]], vals[ids[i]]
				c := format.CompareValues(a, b, tc.coll)
				if tc.desc {
					c = -c
				}
				if c > 0 {
					t.Errorf("SQLite puts %s before %s; CompareValues says %d", show(a), show(b), c)
					if bad++; bad > 20 {
						t.Fatal("too many differences")
					}
				}
			}
		})
	}
}

func queryIDs(t *testing.T, db *sql.DB, q string) []int {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var ids []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestPairwiseMatchesSQLite compares every pair of values in SQL (which
// uses the same comparison as sorting and index keys) and requires
// CompareValues to give the same sign, ties included.
func TestPairwiseMatchesSQLite(t *testing.T) {
	vals := valueList()
	db := openMemory(t)
	loadValues(t, db, vals)
	for _, c := range collations {
		t.Run(c.name, func(t *testing.T) {
			q := strings.ReplaceAll(`SELECT a.id, b.id, CASE
				WHEN a.v IS NULL AND b.v IS NULL THEN 0
				WHEN a.v IS NULL THEN -1
				WHEN b.v IS NULL THEN 1
				WHEN a.v < b.v COLLATE X THEN -1
				WHEN a.v > b.v COLLATE X THEN 1
				WHEN a.v = b.v COLLATE X THEN 0
				ELSE 99 END
				FROM v AS a, v AS b`, "X", c.name)
			rows, err := db.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			n, bad := 0, 0
			for rows.Next() {
				var i, j, want int
				if err := rows.Scan(&i, &j, &want); err != nil {
					t.Fatal(err)
				}
				n++
				if got := format.CompareValues(vals[i], vals[j], c.coll); got != want {
					t.Errorf("%s vs %s COLLATE %s: SQLite %d, CompareValues %d", show(vals[i]), show(vals[j]), c.name, want, got)
					if bad++; bad > 20 {
						t.Fatal("too many differences")
					}
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if n != len(vals)*len(vals) {
				t.Fatalf("%d pairs, want %d", n, len(vals)*len(vals))
			}
		})
	}
}
