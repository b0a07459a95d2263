package format

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// unhex decodes a hex string that may contain spaces and '|' separators.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// The verified table of sqlite-format.md §2.5 (rowids as sqlite3 3.40.1
// wrote them).
var varintTable = []struct {
	name string
	v    uint64
	hex  string
}{
	{"0", 0, "00"},
	{"127", 127, "7f"},
	{"128", 128, "81 00"},
	{"16383", 16383, "ff 7f"},
	{"16384", 16384, "81 80 00"},
	{"2^56-1", 1<<56 - 1, "ff ff ff ff ff ff ff 7f"},
	{"2^56", 1 << 56, "80 c0 80 80 80 80 80 80 00"},
	{"2^63-1", math.MaxInt64, "bf ff ff ff ff ff ff ff ff"},
	{"-1", u64(-1), "ff ff ff ff ff ff ff ff ff"},
	{"-2^63", u64(math.MinInt64), "c0 80 80 80 80 80 80 80 00"},
}

func u64(i int64) uint64 { return uint64(i) }

func TestVarintTable(t *testing.T) {
	for _, tc := range varintTable {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.hex)
			if got := AppendUvarint(nil, tc.v); !bytes.Equal(got, want) {
				t.Errorf("AppendUvarint(%d) = % x, want % x", tc.v, got, want)
			}
			if got := VarintLen(tc.v); got != len(want) {
				t.Errorf("VarintLen(%d) = %d, want %d", tc.v, got, len(want))
			}
			buf := bytes.Repeat([]byte{0xAA}, MaxVarintLen+2)
			if n := PutUvarint(buf, tc.v); n != len(want) || !bytes.Equal(buf[:n], want) {
				t.Errorf("PutUvarint(%d) = % x (n=%d), want % x", tc.v, buf[:n], n, want)
			}
			if !bytes.Equal(buf[len(want):], bytes.Repeat([]byte{0xAA}, len(buf)-len(want))) {
				t.Errorf("PutUvarint(%d) wrote past its length: % x", tc.v, buf)
			}
			// Decode, with and without trailing bytes.
			for _, in := range [][]byte{want, append(append([]byte{}, want...), 0x01, 0xff)} {
				v, n := Uvarint(in)
				if v != tc.v || n != len(want) {
					t.Errorf("Uvarint(% x) = %d, %d; want %d, %d", in, v, n, tc.v, len(want))
				}
			}
			// Every proper prefix is truncated: n == 0.
			for k := 0; k < len(want); k++ {
				if v, n := Uvarint(want[:k]); n != 0 || v != 0 {
					t.Errorf("Uvarint(% x) = %d, %d; want 0, 0 (truncated)", want[:k], v, n)
				}
			}
		})
	}
}

func TestVarintLengthBoundaries(t *testing.T) {
	// 2^(7k)-1 is the largest value of k bytes for k <= 8; anything above
	// 2^56-1 takes 9 bytes.
	type lenCase struct {
		v    uint64
		want int
	}
	for k := 1; k <= 8; k++ {
		// 2^(7k)-1 is the largest k-byte value; 2^(7(k-1)) the smallest
		// value that needs k bytes. For k = 8, 2^56 needs the 9th byte.
		cases := []lenCase{
			{uint64(1)<<(7*k) - 1, k},
			{uint64(1) << (7 * k), k + 1},
		}
		if k > 1 {
			cases = append(cases, lenCase{uint64(1) << (7 * (k - 1)), k})
		}
		for _, c := range cases {
			if got := VarintLen(c.v); got != c.want {
				t.Errorf("VarintLen(%#x) = %d, want %d", c.v, got, c.want)
			}
			enc := AppendUvarint(nil, c.v)
			if len(enc) != c.want {
				t.Errorf("AppendUvarint(%#x) = % x, %d bytes, want %d", c.v, enc, len(enc), c.want)
			}
			if v, n := Uvarint(enc); v != c.v || n != len(enc) {
				t.Errorf("Uvarint(% x) = %#x, %d; want %#x, %d", enc, v, n, c.v, len(enc))
			}
			checkVarintShape(t, enc)
		}
	}
	for _, v := range []uint64{math.MaxUint64, 1 << 63, 1<<63 - 1, 1<<57 + 5} {
		enc := AppendUvarint(nil, v)
		if len(enc) != 9 {
			t.Errorf("AppendUvarint(%#x) = % x, want 9 bytes", v, enc)
		}
		if got, n := Uvarint(enc); got != v || n != 9 {
			t.Errorf("Uvarint(% x) = %#x, %d", enc, got, n)
		}
	}
}

// checkVarintShape checks the byte pattern: continuation bits on all but
// the last byte (a 9th byte has no flag), and no leading zero group.
func checkVarintShape(t *testing.T, enc []byte) {
	t.Helper()
	n := len(enc)
	if n < 1 || n > MaxVarintLen {
		t.Fatalf("varint % x has %d bytes", enc, n)
	}
	for i := 0; i < min(n-1, 8); i++ {
		if enc[i] < 0x80 {
			t.Errorf("varint % x: byte %d lacks the continuation bit", enc, i)
		}
	}
	if n < 9 && enc[n-1] >= 0x80 {
		t.Errorf("varint % x: last byte has the continuation bit", enc)
	}
	// Shortest form: no leading zero group below 9 bytes; a 9-byte form
	// needs a value of at least 2^56 (first group nonzero, or the second
	// group's top bit, which is bit 56, set).
	if n > 1 && n < 9 && enc[0] == 0x80 {
		t.Errorf("varint % x: leading zero group (not the shortest form)", enc)
	}
	if n == 9 && enc[0] == 0x80 && enc[1] < 0xc0 {
		t.Errorf("varint % x: value below 2^56 in 9 bytes (not the shortest form)", enc)
	}
}

func TestVarintRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		// Random bit length so every encoded length is well represented.
		v := rng.Uint64() >> rng.UintN(64)
		enc := AppendUvarint([]byte{0x55}, v)[1:]
		if len(enc) != VarintLen(v) {
			t.Fatalf("AppendUvarint(%#x) = % x, VarintLen says %d", v, enc, VarintLen(v))
		}
		got, n := Uvarint(enc)
		if got != v || n != len(enc) {
			t.Fatalf("Uvarint(AppendUvarint(%#x) = % x) = %#x, %d", v, enc, got, n)
		}
		checkVarintShape(t, enc)
	}
}

func TestUvarintAcceptsNonShortestForms(t *testing.T) {
	// SQLite decodes any form; only writers must use the shortest.
	for _, tc := range []struct {
		hex string
		v   uint64
		n   int
	}{
		{"80 01", 1, 2},
		{"80 80 7f", 127, 3},
		{"80 80 80 80 80 80 80 80 05", 5, 9},
		{"80 80 80 80 80 80 80 81 00", 256, 9},
	} {
		b := unhex(t, tc.hex)
		if v, n := Uvarint(b); v != tc.v || n != tc.n {
			t.Errorf("Uvarint(%s) = %d, %d; want %d, %d", tc.hex, v, n, tc.v, tc.n)
		}
	}
}

func TestUvarintTruncated(t *testing.T) {
	for _, hx := range []string{"", "80", "ff", "81 80", "ff ff ff ff ff ff ff ff", "80 80 80 80 80 80 80 80"} {
		b := unhex(t, hx)
		if v, n := Uvarint(b); n != 0 || v != 0 {
			t.Errorf("Uvarint(%q) = %d, %d; want 0, 0", hx, v, n)
		}
	}
	if v, n := Uvarint(nil); n != 0 || v != 0 {
		t.Errorf("Uvarint(nil) = %d, %d", v, n)
	}
}
