package expr

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// FuzzGenerated evaluates any expression a VIRTUAL generated column may
// hold on rows of any values: it may be refused, fail or give a value,
// never panic or hang; the same evaluation twice gives the same value and
// error (nothing leaks from one into the next), no value is past the
// length limit, and TEXT affinity leaves no number.
func FuzzGenerated(f *testing.F) {
	for _, e := range []string{
		"a || 'x'", "a * 2 + b", "CAST(b AS INTEGER)", "CASE a WHEN 1 THEN 'one' ELSE c END", "iif(a > b, a, b)",
		"substr(c, -2, 3)", "json_extract(c, '$.a[#-1].b')", "c ->> '$.x'", "round(b, 3)", "hex(c)", "char(a, 65)",
		"replace(c, 'a', '')", "a << b | ~a", "abs(a) % 7", "min(a, b, c)", "trim(c, 'x')", "instr(c, 'b')",
		"concat_ws('-', a, b, c)", "unicode(c)", "nullif(a, 1)", "sign(b)", "a BETWEEN 1 AND b", "c LIKE 'a%'",
		"printf(c, a, b, c)", "printf('%-*.*f|%,d|%!.3s|%#q|%5c', a, a, b, a, c, c, c)", "format('%J %w %Q', c, c, NULL)",
		"quote(b) || quote(c)", "c GLOB '*[a-c]?*'", "c NOT GLOB a", "glob(c, 'x')", "a IS NOT TRUE AND c IS FALSE OR TRUE",
		"json_extract(c, '$.a', '$.x') || json_type(c, '$.a[1]') || json_array_length(c, '$.a')",
		"strftime(c, a, '+1 month', 'weekday 3') || datetime(b, 'auto', c, 'subsec') || timediff(c, a)",
		"julianday(c, '-0001-02-03 04:05', 'end of month') + unixepoch(a, 'unixepoch', 'floor') || date(c, 'localtime')",
	} {
		f.Add(e, int64(1700000000), 2459000.5, "2024-02-29T24:00Z")
		f.Add(e, int64(1), 2.5, `{"a":[1,{"b":"x"}],"x":2}`)
		f.Add(e, int64(-9223372036854775808), -0.0, "")
	}
	tb, err := schema.ParseCreateTable("CREATE TABLE t(a INTEGER, b REAL, c TEXT)")
	if err != nil {
		f.Fatal(err)
	}
	// Values up to SQLite's limit (1e9 bytes) are legal, and an input such
	// as printf('%.900000000d', 1) makes one: the fuzzer's workers are
	// held to 1 MiB so that such inputs stay quick, the limit's checks
	// still met.
	limit := maxExprLength
	maxExprLength = 1 << 20
	f.Cleanup(func() { maxExprLength = limit })
	f.Fuzz(func(t *testing.T, expr string, a int64, b float64, c string) {
		if len(expr) > 512 || len(c) > 4096 {
			return
		}
		e, err := schema.ParseExpr(expr)
		if err != nil {
			return
		}
		n, err := compileNode(e, tb, true)
		if err != nil {
			return
		}
		for _, vals := range [][]format.Value{
			{format.IntValue(a), format.FloatValue(b), format.TextValue([]byte(c))},
			{format.NullValue(), format.IntValue(a), format.BlobValue([]byte(c))},
			{format.TextValue([]byte(c)), format.TextValue([]byte(c)), format.IntValue(a)},
		} {
			r1, r2 := exprRow{t: tb, vals: vals}, exprRow{t: tb, vals: vals}
			v1, v2 := n.ev(&r1).v, n.ev(&r2).v
			if (r1.err == nil) != (r2.err == nil) || r1.err != nil && r1.err.Error() != r2.err.Error() {
				t.Fatalf("%s: errors %v, then %v", expr, r1.err, r2.err)
			}
			if r1.err != nil {
				continue
			}
			if !sameValue(v1, v2) {
				t.Fatalf("%s: %v, then %v", expr, v1, v2)
			}
			if len(v1.Bytes) > maxExprLength {
				t.Fatalf("%s: a value of %d bytes, past the limit of %d", expr, len(v1.Bytes), maxExprLength)
			}
			if k := genAffinity(v1, schema.AffinityText).Kind; k == format.KindInt || k == format.KindFloat {
				t.Fatalf("%s: %v under TEXT affinity is still a number", expr, v1)
			}
		}
	})
}

// TestGeneratedTooBig: an expression that would make a value over
// SQLite's length limit fails with SQLite's "string or blob too big"
// before it allocates it; values under the limit are made.
func TestGeneratedTooBig(t *testing.T) {
	tb, err := schema.ParseCreateTable("CREATE TABLE t(c TEXT)")
	if err != nil {
		t.Fatal(err)
	}
	as := make([]byte, 2000)
	for i := range as {
		as[i] = 'a'
	}
	for _, c := range []struct {
		expr string
		big  bool
	}{
		{"replace(c, 'a', c)", false}, // 4,000,000 bytes
		{"replace(replace(replace(c, 'a', c), 'a', c), 'a', c)", true},
		{"hex(replace(replace(c, 'a', c), 'a', c))", true},
		{"replace(replace(c, 'a', c), 'a', c) || replace(replace(c, 'a', c), 'a', c)", true},
		{"concat(replace(replace(c, 'a', c), 'a', c), replace(replace(c, 'a', c), 'a', c))", true},
	} {
		e, err := schema.ParseExpr(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		n, err := compileNode(e, tb, true)
		if err != nil {
			t.Fatal(err)
		}
		r := exprRow{t: tb, vals: []format.Value{format.TextValue(as)}}
		v := n.ev(&r).v
		if c.big {
			if !errors.Is(r.err, errTooBig) {
				t.Errorf("%s: %v (%d bytes), want %v", c.expr, r.err, len(v.Bytes), errTooBig)
			}
		} else if r.err != nil || len(v.Bytes) != len(as)*len(as) {
			t.Errorf("%s: %v, %d bytes", c.expr, r.err, len(v.Bytes))
		}
	}
}

// sameValue reports whether a and b are the same SQL value (NaN equal to
// itself, as SQLite holds none).
func sameValue(a, b format.Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case format.KindInt:
		return a.Int() == b.Int()
	case format.KindFloat:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case format.KindText, format.KindBlob:
		return bytes.Equal(a.Bytes, b.Bytes)
	}
	return true
}
