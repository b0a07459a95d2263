package expr

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	_ "github.com/pagodadb/pagoda/internal/sqltest" // the "sqlite" driver: SQLite itself, the oracle
)

// oracle is SQLite 3.54 (modernc), in memory.
func oracle(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// sqlArg is a Go value as database/sql binds it, and as pagoda holds it.
func sqlArg(v any) format.Value {
	switch x := v.(type) {
	case nil:
		return format.NullValue()
	case int64:
		return format.IntValue(x)
	case float64:
		return format.FloatValue(x)
	case string:
		return format.TextValue([]byte(x))
	case []byte:
		return format.BlobValue(x)
	}
	panic(fmt.Sprintf("sqlArg %T", v))
}

// oracleText runs q with args and returns its one TEXT (or NULL) result,
// or the error.
func oracleText(db *sql.DB, q string, args ...any) (res any, err error) {
	var v any
	if err := db.QueryRow(q, args...).Scan(&v); err != nil {
		return nil, err
	}
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	return v, nil
}

// comparePrintf compares sqlPrintf with SQLite's printf on one format and
// its arguments.
func comparePrintf(t *testing.T, db *sql.DB, f string, args []any) bool {
	t.Helper()
	ph := strings.Repeat(", ?", len(args))
	want, werr := oracleText(db, "SELECT printf(?"+ph+")", append([]any{f}, args...)...)
	vals := make([]format.Value, len(args))
	for i, a := range args {
		vals[i] = sqlArg(a)
	}
	got, ok := sqlPrintf([]byte(f), vals)
	switch {
	case werr != nil && ok:
		t.Errorf("printf(%q, %#v): SQLite fails (%v), pagoda %q", f, args, werr, got)
		return false
	case werr != nil:
		if !strings.Contains(werr.Error(), "too big") {
			t.Errorf("printf(%q, %#v): SQLite fails with %v", f, args, werr)
			return false
		}
	case !ok:
		t.Errorf("printf(%q, %#v): pagoda too big, SQLite %q", f, args, want)
		return false
	case want == nil || want.(string) != string(got):
		t.Errorf("printf(%q, %#v) = %q, SQLite %q", f, args, got, want)
		return false
	}
	return true
}

// printfValues are arguments of every type.
var printfValues = []any{
	nil, int64(0), int64(1), int64(-1), int64(7), int64(42), int64(-42), int64(255), int64(1000), int64(1234567),
	int64(-1234567), int64(math.MaxInt64), int64(math.MinInt64), int64(4294967301), int64(-2147483648), int64(65),
	int64(233), int64(0x1F600), int64(11), int64(12), int64(13), int64(21), int64(102), int64(111), int64(112),
	0.0, math.Copysign(0, -1), 0.5, 1.5, 2.5, -2.5, 0.1, 1.0 / 3, 2.0 / 3, 123.456, -123.456, 1e15, 1e16, 1e17, 1e21,
	1e-5, 1e-4, 0.00049, 9.9999999e-5, 999999.5, 9.5, 0.05, 0.005, -0.004, 1e300, -1e-300, 5e-324, 1e-320,
	math.MaxFloat64, math.Inf(1), math.Inf(-1), 49.47, 1.2345678901234561, 9007199254740993.0, float64(1 << 62), 100.0,
	"", "a", "abc", "hello world", "héllo", "日本語テキスト", "😀x", "it's", `say "hi"`, `back\slash`, "tab\there",
	"nl\nline", "\x01\x1f", "12", "-12", " 12 ", "12abc", "1e5", "3.75", "-0.5e-3", "0x10", "9223372036854775808",
	"a\x00b", "\xff\xfe", "\xc3", "é", "'", "''", "%d", "NULL",
	[]byte{}, []byte("blob"), []byte{0, 1}, []byte{0xc3, 0xa9}, []byte("42"),
}

func TestPrintfLikeSQLite(t *testing.T) {
	db := oracle(t)
	fixed := []struct {
		f    string
		args []any
	}{
		{"", nil}, {"plain", nil}, {"%", nil}, {"abc%", nil}, {"%%", nil}, {"%5%", nil}, {"%-5%|", nil},
		{"%d", nil}, {"%s|%d|%f|%c|%q|%Q|%w|%j|%J|", nil}, {"%y", []any{int64(1)}}, {"a%yb", nil}, {"x%5", nil},
		{"x%-", nil}, {"x%.", nil}, {"x%.5", nil}, {"x%l", nil}, {"%ld %lld %lf", []any{int64(5), int64(6), 1.5}},
		{"%l5d", []any{int64(5)}}, {"%T%d", []any{int64(1)}}, {"a%Sb", nil}, {"%n|%d", []any{int64(3)}},
		{"%d %i %u", []any{int64(-5), int64(6), int64(-1)}}, {"%x %X %o %p", []any{int64(255), int64(255), int64(8), int64(255)}},
		{"%#x %#X %#o %#p %#x", []any{int64(255), int64(255), int64(8), int64(255), int64(0)}},
		{"%r %r %r %r %r %r %r", []any{int64(1), int64(2), int64(3), int64(4), int64(11), int64(112), int64(-21)}},
		{"%,d %,d %,d %,010d", []any{int64(1234567), int64(-1000), int64(999), int64(1234)}},
		{"%+d % d %+5d %-5d| %05d %-05d|", []any{int64(5), int64(5), int64(5), int64(5), int64(-5), int64(5)}},
		{"%.3d %.0d %8.3d", []any{int64(5), int64(0), int64(-5)}},
		{"%*d|%-*d|%*d|", []any{int64(5), int64(1), int64(5), int64(2), int64(-5), int64(3)}},
		{"%.*f %.*f", []any{int64(2), 3.14159, int64(-3), 3.14159}},
		{"%*.*f|", []any{int64(10), int64(3), 2.5}},
		{"%f %e %E %g %G", []any{1.5, 1.5, 1.5, 1.5, 1.5}},
		{"%.0f %.0f %.0f %.0f %#.0f", []any{0.5, 1.5, 2.5, -0.5, 3.0}},
		{"%#.2f %#.2f %#.2f %+#.2f", []any{-0.001, -0.004, -0.006, -0.001}},
		{"%!.17g %!.16e %!g %!.0f %!f", []any{0.1, 0.1, 100.0, 5.0, 2.0}},
		{"%g %g %g %g %g %#g", []any{100000.0, 1000000.0, 1e-4, 1e-5, 0.0, 1.0}},
		{"%.0g %.1g %.20g %.30f %.40e", []any{123.0, 123.0, 0.1, 0.1, 0.1}},
		{"%,f %,.2f %,g %,e", []any{1234567.891, -9876543.21, 1234567.0, 1234567.0}},
		{"%010.3f|%-010.3f|%+010.3f|% 10.3f|", []any{-3.14159, 3.14159, 3.14159, 3.14159}},
		{"%f %e %g %+f % f %05f %0e", []any{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(-1)}},
		{"%s %s %s %s %s", []any{nil, int64(5), 2.5, []byte("b\x00lob"), "a\x00b"}},
		{"%.2s|%.2s|%!.2s|%!.2s|%5s|%!5s|%-5s|%!-5s|", []any{"héllo", "日本語", "héllo", "日本語", "é", "é", "é", "é"}},
		{"%c|%c|%c|%c|%c|%5c|%-5c|%!5c|", []any{"abc", "é", "日本", "😀", "", "é", "é", "x"}},
		{"%c|%.3c|%5.3c|%-5.3c|%.3c|%c|", []any{nil, "é", "x", "x", "", int64(65)}},
		{"%q|%Q|%w|%q|%Q|%w", []any{"it's", "it's", `a"b`, nil, nil, nil}},
		{"%.3q|%!.3q|%.3Q|%10Q|%-10Q|%!10Q|", []any{"a'b'c", "é'é'é", "abcdef", "x", "x", "é"}},
		{"%#q|%#Q|%#Q|%#w|%#q|", []any{"a\\b\nc", "a\\b\nc", "a\\b", "a\\\n", nil}},
		{"%j|%J|%j|%J|%.3j|%!.2J|%10J|%-10J|%!10j|", []any{"a\"b\\c\n\x01", "x\ty", nil, nil, "abcdef", "éé", "ab", "ab", "é"}},
		{"%z %z", []any{"zz", nil}},
		{"%d %s %f", []any{"12abc", int64(3), "1e5"}},
		{"%s", []any{[]byte{}}}, {"%Q", []any{[]byte{}}}, {"%c", []any{[]byte{}}}, {"%J", []any{[]byte{}}},
		{"%2147483647d", []any{int64(1)}}, {"%*d", []any{int64(2000000000), int64(1)}}, {"%.2000000000d", []any{int64(1)}},
		{"%4294967301d|", []any{int64(1)}}, {"%*d|", []any{int64(4294967301), int64(1)}}, {"%.*d|", []any{int64(-2147483648), int64(7)}},
		{"%*d|", []any{int64(-2147483648), int64(7)}}, {"%.1000f", []any{1.0 / 3}}, {"%1500000000f", []any{1.0}},
		{"%.1000c|%-1000.3c|", []any{"ab", "é"}},
	}
	for _, c := range fixed {
		comparePrintf(t, db, c.f, c.args)
	}
	rnd := rand.New(rand.NewSource(54))
	convs := "diuxXofeEgGsqQwczpnrjJ%%ddffggss"
	fails := 0
	n := 4000
	if testing.Short() {
		n = 500
	}
	for k := 0; k < n && fails < 20; k++ {
		var f strings.Builder
		stars := 0
		parts := 1 + rnd.Intn(3)
		for p := 0; p < parts; p++ {
			if rnd.Intn(3) == 0 {
				f.WriteString([]string{"ab", " ", "é", "x y", "'", "日"}[rnd.Intn(6)])
			}
			f.WriteByte('%')
			for fl := rnd.Intn(4); fl > 0; fl-- {
				f.WriteByte("-+ #0!,"[rnd.Intn(7)])
			}
			switch rnd.Intn(6) {
			case 0, 1:
				f.WriteString(fmt.Sprint(1 + rnd.Intn(25)))
			case 2:
				f.WriteByte('*')
				stars++
			}
			switch rnd.Intn(6) {
			case 0:
				f.WriteString("." + fmt.Sprint(rnd.Intn(25)))
			case 1:
				f.WriteString(".*")
				stars++
			case 2:
				f.WriteByte('.')
			}
			switch rnd.Intn(8) {
			case 0:
				f.WriteByte('l')
			case 1:
				f.WriteString("ll")
			}
			if rnd.Intn(60) == 0 {
				f.WriteByte("ykT\xc3"[rnd.Intn(4)])
			} else {
				f.WriteByte(convs[rnd.Intn(len(convs))])
			}
		}
		if rnd.Intn(3) == 0 {
			f.WriteString("|end")
		}
		var args []any
		for a := rnd.Intn(parts + stars + 2); a > 0; a-- {
			if stars > 0 && rnd.Intn(2) == 0 {
				args = append(args, int64(rnd.Intn(41)-20)) // a width or precision
				continue
			}
			args = append(args, printfValues[rnd.Intn(len(printfValues))])
		}
		if rnd.Intn(10) == 0 {
			args = append(args, math.Float64frombits(rnd.Uint64()))
		}
		if v := args; len(v) > 0 {
			if x, ok := v[len(v)-1].(float64); ok && math.IsNaN(x) {
				args[len(v)-1] = 1.25
			}
		}
		if !comparePrintf(t, db, f.String(), args) {
			fails++
		}
	}
}

// TestPrintfFloatsLikeSQLite: random doubles through every float
// conversion at many precisions.
func TestPrintfFloatsLikeSQLite(t *testing.T) {
	db := oracle(t)
	rnd := rand.New(rand.NewSource(3))
	fails := 0
	for k := 0; k < 3000 && fails < 20; k++ {
		var x float64
		switch k % 3 {
		case 0:
			x = math.Float64frombits(rnd.Uint64())
		case 1:
			x = rnd.NormFloat64() * math.Pow(10, float64(rnd.Intn(40)-20))
		default:
			x = float64(rnd.Intn(2000000)-1000000) / math.Pow(10, float64(rnd.Intn(8)))
		}
		if math.IsNaN(x) {
			continue
		}
		p := rnd.Intn(22)
		fl := []string{"", "!", "#", "+", ",", "!#", "0"}[rnd.Intn(7)]
		c := "feEgG"[rnd.Intn(5)]
		f := fmt.Sprintf("%%%s.%d%c|%%%s%c", fl, p, c, fl, c)
		if !comparePrintf(t, db, f, []any{x, x}) {
			fails++
		}
	}
}

func TestQuoteLikeSQLite(t *testing.T) {
	db := oracle(t)
	vals := append([]any{}, printfValues...)
	rnd := rand.New(rand.NewSource(9))
	for k := 0; k < 2000; k++ {
		vals = append(vals, math.Float64frombits(rnd.Uint64()))
	}
	for _, v := range vals {
		if x, ok := v.(float64); ok && math.IsNaN(x) {
			continue
		}
		want, err := oracleText(db, "SELECT quote(?)", v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := sqlQuote(sqlArg(v))
		if !ok || want != string(got) {
			t.Errorf("quote(%#v) = %q, SQLite %q", v, got, want)
		}
	}
}

// TestGlobLikeSQLite compares GLOB with SQLite's on random patterns and
// texts over a small alphabet (with multi-byte and invalid UTF-8).
func TestGlobLikeSQLite(t *testing.T) {
	db := oracle(t)
	pieces := []string{"a", "b", "é", "日", "*", "?", "[", "]", "^", "-", "x", "A", "\xc3", "\x80"}
	texts := []string{"a", "b", "é", "日", "x", "A", "]", "-", "^", "[", "*", "?", "\xc3", "\xff"}
	rnd := rand.New(rand.NewSource(11))
	gen := func(alpha []string, n int) string {
		var b strings.Builder
		for i := rnd.Intn(n + 1); i > 0; i-- {
			b.WriteString(alpha[rnd.Intn(len(alpha))])
		}
		return b.String()
	}
	type pair struct{ pat, s any }
	cases := []pair{
		{"a*", "abc"}, {"*c", "abc"}, {"a?c", "abc"}, {"[a-c]*", "b"}, {"[^a-c]", "d"}, {"[]]", "]"}, {"[^]]", "]"},
		{"[a-]", "-"}, {"[-a]", "-"}, {"*[é]", "xé"}, {"[é-日]", "ö"}, {"A*", "abc"}, {"*", ""}, {"", ""}, {"?", ""},
		{"[", "["}, {"[a", "a"}, {"*[", "x"}, {nil, "a"}, {"a", nil}, {[]byte("a"), "a"}, {"a", []byte("a")},
		{"1*", int64(123)}, {"1.5", 1.5}, {"*", 2.5}, {"a\x00b", "a"}, {"a", "a\x00b"}, {strings.Repeat("*a", 25001), "aa"},
		{strings.Repeat("*a", 20) + "b", strings.Repeat("a", 40)},
	}
	for k := 0; k < 5000; k++ {
		cases = append(cases, pair{gen(pieces, 8), gen(texts, 8)})
	}
	fails := 0
	for _, c := range cases {
		for _, not := range []bool{false, true} {
			q := "SELECT ? GLOB ?"
			if not {
				q = "SELECT ? NOT GLOB ?"
			}
			var want any
			werr := db.QueryRow(q, c.s, c.pat).Scan(&want)
			r := exprRow{}
			got := r.glob(sqlArg(c.pat), sqlArg(c.s))
			if not && got.Kind == format.KindInt {
				got = format.IntValue(1 - got.Int())
			}
			var ok bool
			switch {
			case werr != nil:
				ok = r.err != nil
			case want == nil:
				ok = r.err == nil && got.Kind == format.KindNull
			default:
				ok = r.err == nil && got.Kind == format.KindInt && got.Int() == want.(int64)
			}
			if !ok {
				fails++
				t.Errorf("%q GLOB %q (not %v) = %v (%v), SQLite %v (%v)", c.s, c.pat, not, got, r.err, want, werr)
			}
		}
		if fails > 20 {
			t.Fatal("too many differences")
		}
	}
}

// TestJSONFuncsLikeSQLite compares json_extract with several paths,
// json_type and json_array_length with SQLite's on RFC 8259 documents.
func TestJSONFuncsLikeSQLite(t *testing.T) {
	db := oracle(t)
	docs := []any{nil, `{"a":1,"b":[10,"x",{"y":null}],"c":{"d":"e\u00e9"},"e":1.50,"f":true,"g":false,"h":-0,"i":1E3}`,
		` [ 1 , 2.5e3 , true, [], {}, "s\"t", 12345678901234567890 ] `, `{"a":{"k":[1, 2]},"e":false}`, `"text"`, `12`, `-1.0`,
		`null`, `[]`, `{"a":[[1,2],[3]]}`, `{"a":`, `{a:1}`, int64(5), 2.5, []byte(`[1]`)}
	paths := []any{nil, "$", "$.a", "$.b", "$.b[0]", "$.b[#-1]", "$.b[2].y", "$.c", "$.c.d", "$.e", "$.f", "$.g", "$.h", "$.i",
		"$.zz", "$[0]", "$[1]", "$[2]", "$[3]", "$[5]", "$[6]", "$[#-1]", "$.a.k", "$.a[0]", "a", "$[", `$."a"`}
	rnd := rand.New(rand.NewSource(5))
	check := func(q string, args []any, eval func(r *exprRow) format.Value) {
		t.Helper()
		var want any
		werr := db.QueryRow(q, args...).Scan(&want)
		if b, ok := want.([]byte); ok {
			want = string(b)
		}
		r := exprRow{}
		got := eval(&r)
		switch {
		case r.err != nil && errors.Is(r.err, format.ErrUnsupported):
			if werr == nil && !strings.Contains(fmt.Sprint(args[0]), "{a:") && fmt.Sprint(args[0]) != "[91 49 93]" {
				t.Errorf("%s %q: pagoda %v, SQLite %#v", q, args, r.err, want)
			}
		case werr != nil || r.err != nil:
			if (werr != nil) != (r.err != nil) {
				t.Errorf("%s %q: pagoda %v (%v), SQLite %#v (%v)", q, args, got, r.err, want, werr)
			}
		case !sameFormatValue(got, want):
			t.Errorf("%s %q = %#v, SQLite %#v", q, args, got, want)
		}
	}
	for _, d := range docs {
		check("SELECT json_type(?)", []any{d}, func(r *exprRow) format.Value { return r.jsonType(sqlArg(d), nil) })
		check("SELECT json_array_length(?)", []any{d}, func(r *exprRow) format.Value { return r.jsonArrayLength(sqlArg(d), nil) })
		for _, p := range paths {
			pv := sqlArg(p)
			check("SELECT json_type(?, ?)", []any{d, p}, func(r *exprRow) format.Value { return r.jsonType(sqlArg(d), &pv) })
			check("SELECT json_array_length(?, ?)", []any{d, p}, func(r *exprRow) format.Value { return r.jsonArrayLength(sqlArg(d), &pv) })
		}
		for k := 0; k < 60; k++ {
			ps := []any{paths[rnd.Intn(len(paths))], paths[rnd.Intn(len(paths))]}
			for n := rnd.Intn(3); n > 0; n-- {
				ps = append(ps, paths[rnd.Intn(len(paths))])
			}
			vals := make([]format.Value, len(ps))
			for i, p := range ps {
				vals[i] = sqlArg(p)
			}
			q := "SELECT json_extract(?" + strings.Repeat(", ?", len(ps)) + ")"
			check(q, append([]any{d}, ps...), func(r *exprRow) format.Value { return r.jsonExtractAll(sqlArg(d), vals) })
		}
	}
}

// sameFormatValue compares a value with database/sql's.
func sameFormatValue(got format.Value, want any) bool {
	switch w := want.(type) {
	case nil:
		return got.Kind == format.KindNull
	case int64:
		return got.Kind == format.KindInt && got.Int() == w
	case float64:
		return got.Kind == format.KindFloat && got.Float() == w
	case string:
		return got.Kind == format.KindText && string(got.Bytes) == w
	}
	return false
}
