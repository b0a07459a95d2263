package expr_test

import (
	"database/sql"
	"math"
	"testing"

	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// TestAffinityNULLikeSQLite: text holding a NUL byte after a number, under
// the numeric affinities, as SQLite 3.54 stores it: the number is read up
// to the NUL, and it is an INTEGER only when its double holds it exactly
// within 2^51 (alsoAnInt; sqlite3Atoi64 takes the NUL for text after the
// digits).
func TestAffinityNULLikeSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t(i INTEGER, n NUMERIC, r REAL)"); err != nil {
		t.Fatal(err)
	}
	texts := []string{"12", "9223372036854775807", "9007199254740993", "2251799813685247", "2251799813685248",
		"-2251799813685248", "-2251799813685249", "1e5", "1.5", " 7 ", "-0", "0", "99999999999999999999", "abc"}
	affs := []schema.Affinity{schema.AffinityInteger, schema.AffinityNumeric, schema.AffinityReal}
	for _, base := range texts {
		for _, s := range []string{base, base + "\x00", base + "\x00!"} {
			if _, err := db.Exec("DELETE FROM t"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("INSERT INTO t VALUES (CAST(?1 AS TEXT), CAST(?1 AS TEXT), CAST(?1 AS TEXT))", []byte(s)); err != nil {
				t.Fatal(err)
			}
			var typ [3]string
			var val [3]any
			if err := db.QueryRow("SELECT typeof(i), i, typeof(n), n, typeof(r), r FROM t").Scan(&typ[0], &val[0], &typ[1], &val[1], &typ[2], &val[2]); err != nil {
				t.Fatal(err)
			}
			for k, a := range affs {
				got := expr.ApplyAffinity(format.TextValue([]byte(s)), a)
				ok := false
				switch typ[k] {
				case "integer":
					ok = got.Kind == format.KindInt && got.Int() == val[k].(int64)
				case "real":
					ok = got.Kind == format.KindFloat && math.Float64bits(got.Float()) == math.Float64bits(val[k].(float64))
				case "text":
					ok = got.Kind == format.KindText
				}
				if !ok {
					t.Errorf("%q under %v: pagoda %v, SQLite %s %v", s, a, got, typ[k], val[k])
				}
			}
		}
	}
}
