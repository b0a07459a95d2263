package format

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// sameValue reports whether two values are identical: same kind, same
// integer, same float bits (so -0.0 differs from 0.0), same bytes.
func sameValue(a, b Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case KindInt, KindFloat:
		return a.num == b.num
	case KindText, KindBlob:
		return bytes.Equal(a.Bytes, b.Bytes)
	}
	return true
}

func (v Value) String() string {
	switch v.Kind {
	case KindInt:
		return fmt.Sprint(v.Int())
	case KindFloat:
		return fmt.Sprintf("%g(%#x)", v.Float(), v.num)
	case KindText:
		return fmt.Sprintf("%q", v.Bytes)
	case KindBlob:
		return fmt.Sprintf("x'%x'", v.Bytes)
	}
	return v.Kind.String()
}

// checkRecord decodes rec through every reader entry point and compares
// with want.
func checkRecord(t *testing.T, rec []byte, want []Value) {
	t.Helper()
	r, err := NewRecordReader(rec)
	if err != nil {
		t.Fatalf("NewRecordReader(% x) = %v", rec, err)
	}
	for i, w := range want {
		v, ok, err := r.Next()
		if !ok || err != nil {
			t.Fatalf("field %d: Next() = %v, %v, %v", i, v, ok, err)
		}
		if !sameValue(v, w) {
			t.Errorf("field %d = %v, want %v", i, v, w)
		}
		if v.Kind == KindText || v.Kind == KindBlob {
			if cap(v.Bytes) != len(v.Bytes) {
				t.Errorf("field %d: Bytes has spare capacity (appending would overwrite the record)", i)
			}
		}
		f, ok, err := RecordField(rec, i)
		if !ok || err != nil || !sameValue(f, w) {
			t.Errorf("RecordField(%d) = %v, %v, %v; want %v", i, f, ok, err, w)
		}
	}
	if v, ok, err := r.Next(); ok || err != nil {
		t.Errorf("Next() after the last field = %v, %v, %v", v, ok, err)
	}
	if v, ok, err := RecordField(rec, len(want)); ok || err != nil {
		t.Errorf("RecordField(%d) past the end = %v, %v, %v", len(want), v, ok, err)
	}
	if n, err := RecordFieldCount(rec); n != len(want) || err != nil {
		t.Errorf("RecordFieldCount = %d, %v; want %d", n, err, len(want))
	}
}

// TestRecordWorkedExample decodes the table-leaf cell of sqlite-format.md
// §4.1: row (1,'row1',7,1.5,x'21'), rowid 1 as the INTEGER PRIMARY KEY.
func TestRecordWorkedExample(t *testing.T) {
	cell := unhex(t, "14 01 | 06 00 15 01 07 0e | 72 6f 77 31 | 07 | 3f f8 00 00 00 00 00 00 | 21")
	data := buildPage(2, 512, 512, PageTableLeaf, 0, cell)
	p := mustParse(t, data, 2, 512)
	c, err := p.Cell(0)
	if err != nil {
		t.Fatal(err)
	}
	if c.PayloadLen != 20 || c.Rowid != 1 || len(c.Local) != 20 || c.Overflow != 0 || c.Size != 22 {
		t.Fatalf("cell = %+v", c)
	}
	rec := c.Local
	if !bytes.Equal(rec, cell[2:]) {
		t.Fatalf("Local = % x", rec)
	}
	// Field by field through the reader.
	r, err := NewRecordReader(rec)
	if err != nil {
		t.Fatal(err)
	}
	type field struct {
		kind Kind
		str  string
	}
	wantFields := []field{{KindNull, "NULL"}, {KindText, `"row1"`}, {KindInt, "7"}, {KindFloat, "1.5(0x3ff8000000000000)"}, {KindBlob, "x'21'"}}
	for i, w := range wantFields {
		v, ok, err := r.Next()
		if !ok || err != nil || v.Kind != w.kind || v.String() != w.str {
			t.Errorf("field %d = %v (%v), %v, %v; want %s", i, v, v.Kind, ok, err, w.str)
		}
	}
	want := []Value{NullValue(), TextValue([]byte("row1")), IntValue(7), FloatValue(1.5), BlobValue([]byte{0x21})}
	checkRecord(t, rec, want)
	if got := AppendRecord(nil, want); !bytes.Equal(got, rec) {
		t.Errorf("AppendRecord = % x\n          want % x", got, rec)
	}
	if got := RecordSize(want); got != 20 {
		t.Errorf("RecordSize = %d, want 20", got)
	}
	if v, ok, err := RecordField(rec, 3); v.Float() != 1.5 || !ok || err != nil {
		t.Errorf("RecordField(3) = %v, %v, %v", v, ok, err)
	}
	// The bodies alias the record: no copy.
	if v, _, _ := RecordField(rec, 1); &v.Bytes[0] != &rec[6] {
		t.Errorf("text field does not alias the record")
	}
}

func TestAppendRecordSerialTypes(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Value
		hex  string
	}{
		{"0", IntValue(0), "02 08"},
		{"1", IntValue(1), "02 09"},
		{"2", IntValue(2), "02 01 02"},
		{"-1", IntValue(-1), "02 01 ff"},
		{"2^7-1", IntValue(127), "02 01 7f"},
		{"-2^7", IntValue(-128), "02 01 80"},
		{"2^7", IntValue(128), "02 02 00 80"},
		{"-2^7-1", IntValue(-129), "02 02 ff 7f"},
		{"2^15-1", IntValue(32767), "02 02 7f ff"},
		{"-2^15", IntValue(-32768), "02 02 80 00"},
		{"2^15", IntValue(32768), "02 03 00 80 00"},
		{"-2^15-1", IntValue(-32769), "02 03 ff 7f ff"},
		{"2^23-1", IntValue(1<<23 - 1), "02 03 7f ff ff"},
		{"-2^23", IntValue(-1 << 23), "02 03 80 00 00"},
		{"2^23", IntValue(1 << 23), "02 04 00 80 00 00"},
		{"-2^23-1", IntValue(-1<<23 - 1), "02 04 ff 7f ff ff"},
		{"2^31-1", IntValue(math.MaxInt32), "02 04 7f ff ff ff"},
		{"-2^31", IntValue(math.MinInt32), "02 04 80 00 00 00"},
		{"2^31", IntValue(1 << 31), "02 05 00 00 80 00 00 00"},
		{"-2^31-1", IntValue(-1<<31 - 1), "02 05 ff ff 7f ff ff ff"},
		{"2^47-1", IntValue(1<<47 - 1), "02 05 7f ff ff ff ff ff"},
		{"-2^47", IntValue(-1 << 47), "02 05 80 00 00 00 00 00"},
		{"2^47", IntValue(1 << 47), "02 06 00 00 80 00 00 00 00 00"},
		{"-2^47-1", IntValue(-1<<47 - 1), "02 06 ff ff 7f ff ff ff ff ff"},
		{"MaxInt64", IntValue(math.MaxInt64), "02 06 7f ff ff ff ff ff ff ff"},
		{"MinInt64", IntValue(math.MinInt64), "02 06 80 00 00 00 00 00 00 00"},
		{"1.5", FloatValue(1.5), "02 07 3f f8 00 00 00 00 00 00"},
		{"0.0 stays real", FloatValue(0), "02 07 00 00 00 00 00 00 00 00"},
		{"-0.0", FloatValue(math.Copysign(0, -1)), "02 07 80 00 00 00 00 00 00 00"},
		{"+Inf", FloatValue(math.Inf(1)), "02 07 7f f0 00 00 00 00 00 00"},
		{"-Inf", FloatValue(math.Inf(-1)), "02 07 ff f0 00 00 00 00 00 00"},
		{"smallest subnormal", FloatValue(math.SmallestNonzeroFloat64), "02 07 00 00 00 00 00 00 00 01"},
		{"NaN is NULL", FloatValue(math.NaN()), "02 00"},
		{"NULL", NullValue(), "02 00"},
		{"empty text", TextValue(nil), "02 0d"},
		{"empty blob", BlobValue([]byte{}), "02 0c"},
		{"text a", TextValue([]byte("a")), "02 0f 61"},
		{"blob 00", BlobValue([]byte{0}), "02 0e 00"},
		{"text 57 bytes: type 127", TextValue(bytes.Repeat([]byte("x"), 57)), "02 7f" + strings.Repeat("78", 57)},
		{"text 58 bytes: type 129", TextValue(bytes.Repeat([]byte("x"), 58)), "03 81 01" + strings.Repeat("78", 58)},
		{"blob 58 bytes: type 128", BlobValue(bytes.Repeat([]byte{1}, 58)), "03 81 00" + strings.Repeat("01", 58)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.hex)
			vals := []Value{tc.v}
			got := AppendRecord(nil, vals)
			if !bytes.Equal(got, want) {
				t.Fatalf("AppendRecord(%v) = % x, want % x", tc.v, got, want)
			}
			if n := RecordSize(vals); n != len(want) {
				t.Errorf("RecordSize = %d, want %d", n, len(want))
			}
			st, _ := Uvarint(want[1:])
			if SerialType(tc.v) != st {
				t.Errorf("SerialType = %d, want %d", SerialType(tc.v), st)
			}
			back := tc.v
			if tc.v.Kind == KindFloat && math.IsNaN(tc.v.Float()) {
				back = NullValue()
			}
			checkRecord(t, got, []Value{back})
		})
	}
}

func TestAppendRecordAppends(t *testing.T) {
	dst := []byte("prefix")
	got := AppendRecord(dst, []Value{IntValue(2)})
	if string(got) != "prefix\x02\x01\x02" {
		t.Errorf("AppendRecord(prefix) = %q", got)
	}
	if got := AppendRecord(nil, nil); !bytes.Equal(got, []byte{1}) {
		t.Errorf("AppendRecord(no values) = % x, want 01", got)
	}
	checkRecord(t, []byte{1}, nil)
}

// TestRecordHeaderLength covers the header-length varint, which counts
// itself: 126 one-byte serial types give 7f, 127 give 81 01.
func TestRecordHeaderLength(t *testing.T) {
	for _, tc := range []struct {
		nulls  int
		hdrLen uint64
		lenLen int
	}{
		{0, 1, 1}, {125, 126, 1}, {126, 127, 1}, {127, 129, 2}, {128, 130, 2},
		{16380, 16382, 2}, {16381, 16383, 2}, {16382, 16385, 3}, {16383, 16386, 3},
	} {
		vals := make([]Value, tc.nulls)
		rec := AppendRecord(nil, vals)
		h, n := Uvarint(rec)
		if h != tc.hdrLen || n != tc.lenLen || len(rec) != int(tc.hdrLen) {
			t.Errorf("%d NULLs: header length %d in %d bytes, record %d bytes; want %d in %d", tc.nulls, h, n, len(rec), tc.hdrLen, tc.lenLen)
		}
		if RecordSize(vals) != len(rec) {
			t.Errorf("%d NULLs: RecordSize = %d, record is %d", tc.nulls, RecordSize(vals), len(rec))
		}
		if c, err := RecordFieldCount(rec); c != tc.nulls || err != nil {
			t.Errorf("%d NULLs: RecordFieldCount = %d, %v", tc.nulls, c, err)
		}
	}
	// Two-byte serial types crossing the same boundary: 63 texts of 58
	// bytes (type 129) = 126 header bytes, so the length fits in 1 byte.
	for _, k := range []int{63, 64} {
		vals := make([]Value, k)
		for i := range vals {
			vals[i] = TextValue(bytes.Repeat([]byte{'q'}, 58))
		}
		rec := AppendRecord(nil, vals)
		if RecordSize(vals) != len(rec) {
			t.Errorf("%d texts: RecordSize %d != %d", k, RecordSize(vals), len(rec))
		}
		checkRecord(t, rec, vals)
	}
}

// boundaryValues is a deterministic list of values that exercise every
// serial type and width boundary.
func boundaryValues() []Value {
	var vs []Value
	for _, e := range []int{0, 7, 8, 15, 16, 23, 24, 31, 32, 47, 48, 53, 63} {
		if e == 63 {
			vs = append(vs, IntValue(math.MaxInt64), IntValue(math.MinInt64), IntValue(math.MinInt64+1))
			continue
		}
		b := int64(1) << e
		vs = append(vs, IntValue(b), IntValue(b-1), IntValue(b+1), IntValue(-b), IntValue(-b-1), IntValue(-b+1))
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 1.5, -2.5, 1e300, -1e-300,
		math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64,
		9007199254740992, 9007199254740993, 9007199254740994, -9007199254740992,
		9223372036854775807, -9223372036854775808, 9223372036854777856, -9223372036854777856, 1 << 62} {
		vs = append(vs, FloatValue(f))
	}
	vs = append(vs, NullValue(), TextValue(nil), TextValue([]byte("")), BlobValue(nil), BlobValue([]byte{}),
		TextValue([]byte("a")), TextValue([]byte("A")), TextValue([]byte("a\x00")), TextValue([]byte("a\x00b")),
		TextValue([]byte("É")), TextValue([]byte("é")), TextValue([]byte("a  ")), BlobValue([]byte{0}), BlobValue([]byte{0, 0}),
		BlobValue([]byte{0xff}), TextValue(bytes.Repeat([]byte("z"), 300)))
	return vs
}

func randomValue(rng *rand.Rand) Value {
	switch rng.IntN(6) {
	case 0:
		return NullValue()
	case 1:
		return IntValue(int64(rng.Uint64() >> rng.UintN(64)))
	case 2:
		return IntValue(-int64(rng.Uint64() >> rng.UintN(64)))
	case 3:
		return FloatValue(math.Float64frombits(rng.Uint64()))
	case 4:
		b := make([]byte, rng.IntN(80))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return TextValue(b)
	}
	b := make([]byte, rng.IntN(200))
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return BlobValue(b)
}

// decodedForm is what a value reads back as: NaN floats are stored as NULL;
// a nil slice reads back as an empty one.
func decodedForm(v Value) Value {
	if v.Kind == KindFloat && math.IsNaN(v.Float()) {
		return NullValue()
	}
	return v
}

func TestRecordRoundTrip(t *testing.T) {
	bv := boundaryValues()
	// All boundary values in one record, then each alone.
	lists := [][]Value{bv}
	for _, v := range bv {
		lists = append(lists, []Value{v})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3000; i++ {
		n := rng.IntN(12)
		if i%10 == 0 { // around maxFastFields, where AppendRecord changes path
			n = maxFastFields - 4 + rng.IntN(9)
		}
		vals := make([]Value, n)
		for j := range vals {
			if rng.IntN(3) == 0 {
				vals[j] = bv[rng.IntN(len(bv))]
			} else {
				vals[j] = randomValue(rng)
			}
		}
		lists = append(lists, vals)
	}
	for _, vals := range lists {
		prefix := []byte{0xAB, 0xCD}
		rec := AppendRecord(append([]byte{}, prefix...), vals)
		if !bytes.Equal(rec[:2], prefix) {
			t.Fatalf("AppendRecord overwrote dst")
		}
		rec = rec[2:]
		if RecordSize(vals) != len(rec) {
			t.Fatalf("RecordSize(%v) = %d, record is %d bytes", vals, RecordSize(vals), len(rec))
		}
		want := make([]Value, len(vals))
		for i, v := range vals {
			want[i] = decodedForm(v)
		}
		checkRecord(t, rec, want)
		// Re-encoding the decoded values gives the same bytes.
		if again := AppendRecord(nil, want); !bytes.Equal(again, rec) {
			t.Fatalf("re-encoding %v: % x != % x", want, again, rec)
		}
		if t.Failed() {
			t.Fatalf("values: %v", vals)
		}
	}
}

func TestRecordReaderSkip(t *testing.T) {
	vals := []Value{IntValue(1 << 40), TextValue([]byte("skip me")), NullValue(), FloatValue(2.5)}
	rec := AppendRecord(nil, vals)
	r, err := NewRecordReader(rec)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if ok, err := r.Skip(); !ok || err != nil {
			t.Fatalf("Skip %d = %v, %v", i, ok, err)
		}
	}
	if v, ok, err := r.Next(); !ok || err != nil || v.Float() != 2.5 {
		t.Errorf("Next after 3 skips = %v, %v, %v", v, ok, err)
	}
	if ok, err := r.Skip(); ok || err != nil {
		t.Errorf("Skip at end = %v, %v", ok, err)
	}
}

// TestRecordDecodeAnyWidth: readers accept integers in any width, since only
// the value matters (sqlite-format.md §4.1).
func TestRecordDecodeAnyWidth(t *testing.T) {
	rec := unhex(t, `09 | 06 05 04 03 02 01 08 09 |
		00 00 00 00 00 00 00 05 | ff ff ff ff ff fe | 00 00 00 01 | 80 00 00 | ff ff | 00`)
	checkRecord(t, rec, []Value{IntValue(5), IntValue(-2), IntValue(1), IntValue(-1 << 23), IntValue(-1), IntValue(0), IntValue(0), IntValue(1)})
	// A stored NaN (any payload) reads as NULL, as in SQLite.
	for _, nan := range []string{"7f f8 00 00 00 00 00 00", "ff ff ff ff ff ff ff ff", "7f f0 00 00 00 00 00 01"} {
		rec := unhex(t, "02 07"+nan)
		v, ok, err := RecordField(rec, 0)
		if !ok || err != nil || v.Kind != KindNull {
			t.Errorf("NaN % s reads as %v (%v), %v, %v; want NULL", nan, v, v.Kind, ok, err)
		}
	}
}

func TestRecordCorrupt(t *testing.T) {
	huge := func(st uint64, tail ...byte) []byte {
		// Record whose first serial type is st, plus trailing bytes.
		typ := AppendUvarint(nil, st)
		rec := append([]byte{byte(1 + len(typ))}, typ...)
		return append(rec, tail...)
	}
	for _, tc := range []struct {
		name string
		rec  []byte
		msg  string
	}{
		{"empty", nil, "header length"},
		{"header length 0", []byte{0}, "header length"},
		{"header length past the end", []byte{5, 0}, "header length"},
		{"header length varint truncated", []byte{0x81}, "header length"},
		{"serial type varint truncated", []byte{2, 0x81, 0}, "inside a serial type"},
		{"serial type 10", []byte{2, 10}, "reserved"},
		{"serial type 11", []byte{2, 11, 0, 0, 0}, "reserved"},
		{"int64 body short", []byte{2, 6, 0, 0, 0}, "body shorter"},
		{"float body short", []byte{2, 7, 0x3f, 0xf0}, "body shorter"},
		{"text body short", []byte{2, 0x11, 'a'}, "body shorter"},
		{"second field body short", []byte{3, 1, 2, 5, 0}, "body shorter"},
		{"serial type 2^63+20", huge(1<<63+20, 1, 2, 3), "body shorter"},
		{"serial type 2^64-1", huge(math.MaxUint64, 1, 2, 3), "body shorter"},
		{"serial type 2^64-2", huge(math.MaxUint64 - 1), "body shorter"},
		{"blob of 2^62 bytes", huge(1<<63 + 12), "body shorter"},
		// Two sizes of 2^62+2^61-1 whose sum overflows int64.
		{"two huge blobs", append(append([]byte{19}, AppendUvarint(nil, 1<<63+1<<62+10)...), append(AppendUvarint(nil, 1<<63+1<<62+10), 1, 2, 3)...), "body shorter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errs []error
			r, err := NewRecordReader(tc.rec)
			if err == nil {
				for {
					_, ok, err := r.Next()
					if err != nil {
						errs = append(errs, err)
						break
					}
					if !ok {
						t.Fatalf("record % x decoded without error", tc.rec)
					}
				}
			} else {
				errs = append(errs, err)
			}
			// Every entry point reports it.
			_, _, err = RecordField(tc.rec, 0)
			if err == nil {
				_, _, err = RecordField(tc.rec, 1)
			}
			errs = append(errs, err)
			_, err = CompareRecords(tc.rec, tc.rec, nil)
			errs = append(errs, err)
			_, err = CheckRecord(tc.rec)
			errs = append(errs, err)
			// The unchecked fast path must not panic either.
			for i := 0; i < 3; i++ {
				if v, ok := Field(tc.rec, i); ok && i > 0 {
					t.Errorf("Field(%d) of a corrupt record = %v", i, v)
				}
			}
			for _, err := range errs {
				wantCorrupt(t, err, 0)
				if !strings.Contains(err.Error(), tc.msg) {
					t.Errorf("error %q does not mention %q", err, tc.msg)
				}
			}
		})
	}
	// Skip must check the body too: a huge first field hides the second.
	// Header: length 11, serial types 2^63+12 (9 bytes) and 1; body: 07.
	rec := append(append([]byte{11}, AppendUvarint(nil, 1<<63+12)...), 1, 7)
	if _, _, err := RecordField(rec, 1); !errors.Is(err, ErrCorrupt) {
		t.Errorf("RecordField past a huge field = %v, want ErrCorrupt", err)
	}
	r, _ := NewRecordReader(rec)
	if ok, err := r.Skip(); ok || !errors.Is(err, ErrCorrupt) {
		t.Errorf("Skip over a huge field = %v, %v; want ErrCorrupt", ok, err)
	}
	if _, err := RecordFieldCount([]byte{3, 1, 0x81}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("RecordFieldCount(truncated header) = %v", err)
	}
}

func TestSerialTypeSize(t *testing.T) {
	want := map[uint64]int64{0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8, 7: 8, 8: 0, 9: 0, 12: 0, 13: 0, 14: 1, 15: 1, 127: 57, 128: 58,
		math.MaxUint64: (math.MaxUint64 - 12) / 2, math.MaxUint64 - 1: (math.MaxUint64 - 13) / 2, 1<<63 + 12: 1 << 62}
	for st, n := range want {
		got, ok := SerialTypeSize(st)
		if got != n || !ok {
			t.Errorf("SerialTypeSize(%d) = %d, %v; want %d", st, got, ok, n)
		}
	}
	for _, st := range []uint64{10, 11} {
		if _, ok := SerialTypeSize(st); ok {
			t.Errorf("SerialTypeSize(%d) ok", st)
		}
	}
}

func TestValueAccessors(t *testing.T) {
	if v := IntValue(-7); v.Int() != -7 || v.Float() != -7 || v.Kind != KindInt {
		t.Errorf("IntValue(-7) = %v", v)
	}
	if v := FloatValue(-7.9); v.Int() != -7 || v.Float() != -7.9 || v.Kind != KindFloat {
		t.Errorf("FloatValue(-7.9): Int %d Float %g", v.Int(), v.Float())
	}
	if v := TextValue([]byte("5")); v.Int() != 0 || v.Float() != 0 {
		t.Errorf("TextValue Int/Float = %d/%g", v.Int(), v.Float())
	}
	if v := IntValue(math.MinInt64); v.Int() != math.MinInt64 {
		t.Errorf("IntValue(MinInt64).Int() = %d", v.Int())
	}
	for k, s := range map[Kind]string{KindNull: "NULL", KindInt: "INTEGER", KindFloat: "REAL", KindText: "TEXT", KindBlob: "BLOB", 9: "invalid"} {
		if k.String() != s {
			t.Errorf("Kind(%d).String() = %q, want %q", k, k.String(), s)
		}
	}
	if NullValue().Kind != KindNull {
		t.Errorf("NullValue kind")
	}
}

// TestCheckRecordFastPath checks CheckRecord on records its fast path reads
// (serial types of one and two bytes) and on each of them cut short by a
// byte: whole, it counts their fields; cut, it fails as the general path
// does.
func TestCheckRecordFastPath(t *testing.T) {
	recs := [][]Value{
		{NullValue(), BlobValue(make([]byte, 100))}, // the bench's row: a two-byte serial type
		{IntValue(1), IntValue(-70000), FloatValue(0.5), TextValue([]byte("abc"))},
		{TextValue(make([]byte, 8000)), BlobValue(nil), IntValue(1 << 40)},
		{BlobValue(make([]byte, 57)), BlobValue(make([]byte, 58))}, // types 126 and 128: one byte, then two
	}
	for _, vals := range recs {
		rec := AppendRecord(nil, vals)
		if n, err := CheckRecord(rec); n != len(vals) || err != nil {
			t.Errorf("CheckRecord(% x...) = %d, %v; want %d fields", rec[:min(len(rec), 8)], n, err, len(vals))
		}
		cut := rec[:len(rec)-1]
		_, err := CheckRecord(cut)
		if _, want := checkRecordAny(cut, false); err == nil || err.Error() != want.Error() {
			t.Errorf("CheckRecord of a record cut short (% x...) = %v, want %v", cut[:min(len(cut), 8)], err, want)
		}
	}
}

// TestRecordTooBig: the limit is on the whole record, header included, at
// exactly MaxLength bytes (the values' bytes are never read: a large
// make([]byte, n) costs no memory until touched).
func TestRecordTooBig(t *testing.T) {
	big := make([]byte, MaxLength+1)
	// One blob of n bytes: a 1-byte header length, a 5-byte serial type.
	const one = 1 + 5
	for _, tc := range []struct {
		vals []Value
		want bool
	}{
		{[]Value{BlobValue(big[:MaxLength-one])}, false},
		{[]Value{BlobValue(big[:MaxLength-one+1])}, true},
		{[]Value{TextValue(big)}, true},
		{[]Value{BlobValue(big[:MaxLength/2]), TextValue(big[:MaxLength/2])}, true}, // each under, together over
		{[]Value{NullValue(), BlobValue(big[:MaxLength-one-1])}, false},
		{[]Value{NullValue(), BlobValue(big[:MaxLength-one])}, true},
		{[]Value{BlobValue(big[:MaxLength-one-1]), IntValue(7)}, true},  // 7: serial type 1, a byte of body
		{[]Value{BlobValue(big[:MaxLength-one-1]), IntValue(1)}, false}, // 1: serial type 9, no body
		{[]Value{IntValue(1), FloatValue(2), TextValue([]byte("small"))}, false},
	} {
		if got := RecordTooBig(tc.vals); got != tc.want {
			t.Errorf("record of %d bytes: too big %v, want %v", RecordSize(tc.vals), got, tc.want)
		}
		if got := RecordSize(tc.vals) > MaxLength; got != tc.want {
			t.Errorf("RecordSize %d disagrees", RecordSize(tc.vals))
		}
	}
}
