package format

import (
	"math"
	"testing"
)

func txt(s string) Value   { return TextValue([]byte(s)) }
func blob(b ...byte) Value { return BlobValue(b) }

// wantOrder checks that vals are in strictly increasing order under coll,
// pair by pair and for every pair (so the order is also transitive here),
// and that each value equals itself.
func wantOrder(t *testing.T, coll Collation, vals ...Value) {
	t.Helper()
	for i, a := range vals {
		if c := CompareValues(a, a, coll); c != 0 {
			t.Errorf("CompareValues(%v, itself) = %d", a, c)
		}
		for j, b := range vals {
			want := cmpInt(i, j)
			if got := CompareValues(a, b, coll); got != want {
				t.Errorf("coll %d: CompareValues(%v, %v) = %d, want %d", coll, a, b, got, want)
			}
		}
	}
}

func wantEqual(t *testing.T, coll Collation, a, b Value) {
	t.Helper()
	if c := CompareValues(a, b, coll); c != 0 {
		t.Errorf("coll %d: CompareValues(%v, %v) = %d, want 0", coll, a, b, c)
	}
	if c := CompareValues(b, a, coll); c != 0 {
		t.Errorf("coll %d: CompareValues(%v, %v) = %d, want 0", coll, b, a, c)
	}
}

func TestCompareStorageClasses(t *testing.T) {
	// NULL < numbers < TEXT < BLOB, whatever the values.
	wantOrder(t, CollBinary, NullValue(), IntValue(math.MinInt64), FloatValue(math.Inf(1)), txt(""), txt("\xff\xff"), blob(), blob(0xff))
	wantOrder(t, CollBinary, NullValue(), FloatValue(math.Inf(-1)), IntValue(math.MaxInt64), txt(""), blob())
	wantEqual(t, CollBinary, NullValue(), NullValue())
	wantEqual(t, CollBinary, IntValue(1), FloatValue(1))
	wantEqual(t, CollBinary, IntValue(0), FloatValue(math.Copysign(0, -1)))
	wantEqual(t, CollBinary, FloatValue(0), FloatValue(math.Copysign(0, -1)))
	// A NaN is stored as NULL and compares as one.
	nan := FloatValue(math.NaN())
	wantEqual(t, CollBinary, nan, NullValue())
	wantOrder(t, CollBinary, nan, FloatValue(math.Inf(-1)), IntValue(0), FloatValue(1), FloatValue(2))
}

func TestCompareNumbersExact(t *testing.T) {
	// sqlite-format.md §7.1 item 3: int vs real by exact value.
	wantOrder(t, CollBinary, FloatValue(9007199254740992), IntValue(9007199254740993), FloatValue(9007199254740994))
	wantEqual(t, CollBinary, IntValue(9007199254740992), FloatValue(9007199254740992))
	wantOrder(t, CollBinary, IntValue(9007199254740991), FloatValue(9007199254740992))
	wantOrder(t, CollBinary, IntValue(-9007199254740993), FloatValue(-9007199254740992), IntValue(-9007199254740991))
	// 2^63 as a float is above every int64; -2^63 equals MinInt64.
	wantOrder(t, CollBinary, IntValue(math.MaxInt64-1), IntValue(math.MaxInt64), FloatValue(9223372036854775808.0), FloatValue(math.Inf(1)))
	wantEqual(t, CollBinary, IntValue(math.MinInt64), FloatValue(-9223372036854775808.0))
	wantOrder(t, CollBinary, FloatValue(math.Inf(-1)), FloatValue(-9223372036854777856.0), IntValue(math.MinInt64), IntValue(math.MinInt64+1))
	// Largest float below 2^63 against ints near it.
	below := math.Nextafter(9223372036854775808.0, 0) // 9223372036854774784
	wantOrder(t, CollBinary, IntValue(9223372036854774783), FloatValue(below), IntValue(9223372036854774785))
	wantEqual(t, CollBinary, IntValue(9223372036854774784), FloatValue(below))
	// Negative fractions: truncation toward zero must not flip the result.
	wantOrder(t, CollBinary, IntValue(-2), FloatValue(-1.5), IntValue(-1), FloatValue(-0.5), IntValue(0), FloatValue(0.5), IntValue(1))
	wantOrder(t, CollBinary, FloatValue(-1e-300), IntValue(0), FloatValue(1e-300))
	wantOrder(t, CollBinary, FloatValue(-4503599627370495.5), IntValue(-4503599627370495), FloatValue(-4503599627370494.5))
	// Floats among themselves.
	wantOrder(t, CollBinary, FloatValue(math.Inf(-1)), FloatValue(-math.MaxFloat64), FloatValue(-1), FloatValue(0), FloatValue(math.SmallestNonzeroFloat64), FloatValue(math.MaxFloat64), FloatValue(math.Inf(1)))
	// Ints among themselves.
	wantOrder(t, CollBinary, IntValue(math.MinInt64), IntValue(-1), IntValue(0), IntValue(math.MaxInt64))
}

func TestCompareTextBinary(t *testing.T) {
	// '' < 'B' < 'a' < 'a\x00' < 'ab' < 'b' (verified with sqlite3).
	wantOrder(t, CollBinary, txt(""), txt("B"), txt("a"), txt("a\x00"), txt("ab"), txt("b"))
	wantOrder(t, CollBinary, txt("a"), txt("É"), txt("é")) // UTF-8 bytes
	wantEqual(t, CollBinary, TextValue(nil), txt(""))
}

func TestCompareTextNoCase(t *testing.T) {
	wantEqual(t, CollNoCase, txt("abc"), txt("ABC"))
	wantEqual(t, CollNoCase, txt("MiXeD 123"), txt("mixed 123"))
	// Folding goes to lower case: '[' (0x5b) and '_' (0x5f) sort before
	// 'A' under NOCASE, after it under BINARY.
	wantOrder(t, CollNoCase, txt("["), txt("_"), txt("A"), txt("b"), txt("C"))
	wantOrder(t, CollBinary, txt("A"), txt("C"), txt("["), txt("_"), txt("b"))
	wantOrder(t, CollNoCase, txt("ab"), txt("ABC"), txt("abd"))
	wantOrder(t, CollNoCase, txt(""), txt("a"), txt("A\x00"))
	// ASCII only: 'É' and 'é' are not folded.
	wantOrder(t, CollNoCase, txt("É"), txt("é"))
	wantOrder(t, CollNoCase, txt("Z"), txt("É"))
	// SQLite's sqlite3StrNICmp stops at a NUL byte both strings share; the
	// lengths then decide ('a\x00b' = 'A\x00c' COLLATE NOCASE in sqlite3).
	wantEqual(t, CollNoCase, txt("a\x00b"), txt("A\x00c"))
	wantOrder(t, CollNoCase, txt("a\x00z"), txt("a\x00ab"))
	wantOrder(t, CollNoCase, txt("a\x00"), txt("a\x01"), txt("ab"))
	// The same strings under BINARY keep every byte.
	wantOrder(t, CollBinary, txt("A\x00c"), txt("a\x00b"))
}

func TestCompareTextRTrim(t *testing.T) {
	wantEqual(t, CollRTrim, txt("a"), txt("a   "))
	wantEqual(t, CollRTrim, txt(""), txt("  "))
	// Only spaces are trimmed, and only at the end.
	wantOrder(t, CollRTrim, txt(""), txt(" a"), txt("a"), txt("a\x00"), txt("a\t"), txt("a b"), txt("ab"))
	wantOrder(t, CollRTrim, txt("A "), txt("a"))
	// Under BINARY the trailing spaces count.
	wantOrder(t, CollBinary, txt("a"), txt("a "), txt("a  "))
}

func TestCompareBlobs(t *testing.T) {
	wantOrder(t, CollBinary, blob(), blob(0), blob(0, 0), blob(0, 1), blob(1), blob(0xff))
	// Collations do not apply to blobs.
	wantOrder(t, CollNoCase, blob('A'), blob('a'))
	wantOrder(t, CollRTrim, blob('a'), blob('a', ' '))
	wantEqual(t, CollBinary, BlobValue(nil), blob())
}

func TestCompareValuesAntisymmetric(t *testing.T) {
	vals := boundaryValues()
	vals = append(vals, FloatValue(math.NaN()), txt("A\x00"), txt("a "), txt("B"))
	for _, coll := range []Collation{CollBinary, CollNoCase, CollRTrim} {
		for _, a := range vals {
			for _, b := range vals {
				ab, ba := CompareValues(a, b, coll), CompareValues(b, a, coll)
				if ab != -ba || ab < -1 || ab > 1 {
					t.Errorf("coll %d: CompareValues(%v, %v) = %d, reversed %d", coll, a, b, ab, ba)
				}
				for _, c := range vals {
					if ab <= 0 && CompareValues(b, c, coll) <= 0 && CompareValues(a, c, coll) > 0 {
						t.Errorf("coll %d: %v <= %v <= %v but first > last", coll, a, b, c)
					}
				}
			}
		}
	}
}

func rec(vals ...Value) []byte { return AppendRecord(nil, vals) }

func TestCompareRecords(t *testing.T) {
	desc1 := &KeyInfo{Desc: []bool{false, true}}
	nocase := &KeyInfo{Colls: []Collation{CollNoCase}}
	for _, tc := range []struct {
		name string
		a, b []byte
		k    *KeyInfo
		want int
	}{
		{"equal", rec(IntValue(1), txt("a")), rec(IntValue(1), txt("a")), nil, 0},
		{"first field decides", rec(IntValue(1), txt("z")), rec(IntValue(2), txt("a")), nil, -1},
		{"second field decides", rec(IntValue(1), txt("b")), rec(IntValue(1), txt("a")), nil, 1},
		{"int equals real", rec(IntValue(2), IntValue(5)), rec(FloatValue(2), IntValue(19)), nil, -1},
		{"NULLs equal", rec(NullValue(), IntValue(1)), rec(NullValue(), IntValue(1)), nil, 0},
		{"NULL first", rec(NullValue()), rec(IntValue(math.MinInt64)), nil, -1},
		{"prefix: shorter a", rec(IntValue(1), txt("a")), rec(IntValue(1), txt("a"), IntValue(5)), nil, 0},
		{"prefix: shorter b", rec(IntValue(1), txt("a"), IntValue(5)), rec(IntValue(1)), nil, 0},
		{"prefix: empty record", rec(), rec(IntValue(1)), nil, 0},
		{"prefix differs before the end", rec(IntValue(2)), rec(IntValue(1), IntValue(9)), nil, 1},
		{"DESC second field", rec(IntValue(1), IntValue(2)), rec(IntValue(1), IntValue(3)), desc1, 1},
		{"DESC not on first field", rec(IntValue(1), IntValue(2)), rec(IntValue(2), IntValue(3)), desc1, -1},
		{"DESC past the slice is ASC", rec(IntValue(1), IntValue(1), IntValue(1)), rec(IntValue(1), IntValue(1), IntValue(2)), desc1, -1},
		{"DESC puts NULL last", rec(IntValue(0), NullValue()), rec(IntValue(0), IntValue(0)), desc1, 1},
		{"NOCASE first field", rec(txt("ABC"), IntValue(1)), rec(txt("abc"), IntValue(1)), nocase, 0},
		{"NOCASE only on first field", rec(txt("x"), txt("ABC")), rec(txt("X"), txt("abc")), nocase, -1},
		{"BINARY without KeyInfo", rec(txt("ABC")), rec(txt("abc")), nil, -1},
		{"RTRIM + DESC", rec(txt("b "), IntValue(0)), rec(txt("a"), IntValue(0)), &KeyInfo{Colls: []Collation{CollRTrim}, Desc: []bool{true}}, -1},
		{"RTRIM + DESC equal", rec(txt("a "), IntValue(0)), rec(txt("a"), IntValue(0)), &KeyInfo{Colls: []Collation{CollRTrim}, Desc: []bool{true}}, 0},
		{"blob vs text", rec(blob()), rec(txt("zzz")), nil, 1},
		{"width-independent ints", unhex(t, "02 06 00 00 00 00 00 00 00 05"), rec(IntValue(5)), nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CompareRecords(tc.a, tc.b, tc.k)
			if got != tc.want || err != nil {
				t.Errorf("CompareRecords(% x, % x) = %d, %v; want %d", tc.a, tc.b, got, err, tc.want)
			}
			rev, err := CompareRecords(tc.b, tc.a, tc.k)
			if rev != -tc.want || err != nil {
				t.Errorf("reversed: %d, %v; want %d", rev, err, -tc.want)
			}
		})
	}
}

func TestCompareRecordsCorrupt(t *testing.T) {
	good := rec(IntValue(1), IntValue(2))
	for _, bad := range [][]byte{nil, {0}, {3, 1}, {2, 10}, {3, 1, 6, 1, 0}} {
		for _, pair := range [][2][]byte{{bad, good}, {good, bad}} {
			_, err := CompareRecords(pair[0], pair[1], nil)
			wantCorrupt(t, err, 0)
		}
	}
	// A difference in an earlier field decides before the corrupt field is
	// reached; that is allowed (SQLite stops there too).
	if c, err := CompareRecords(rec(IntValue(0), IntValue(1)), []byte{3, 1, 6, 5}, nil); c != -1 || err != nil {
		t.Errorf("early decision = %d, %v", c, err)
	}
}
