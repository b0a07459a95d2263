package format

import (
	"bytes"
	"math"
	"testing"
)

func TestRecordShapeLearn(t *testing.T) {
	long := bytes.Repeat([]byte{'x'}, 40)
	tests := []struct {
		name   string
		rec    []byte
		learnt bool
		fields int
	}{
		{"a blob and an integer", rec(IntValue(7), BlobValue(long)), true, 2},
		{"every kind", rec(NullValue(), IntValue(1), IntValue(300), IntValue(1<<40), FloatValue(math.Pi), txt("héllo"), BlobValue(nil), IntValue(0)), true, 8},
		{"fifteen fields", rec(fifteen(IntValue(1 << 20))...), true, 15},
		{"a blob whose type takes three bytes", rec(BlobValue(make([]byte, 9000))), true, 1},
		{"shorter than two words", rec(IntValue(1), txt("ab")), false, 0},
		{"a header of sixteen fields", rec(append(fifteen(IntValue(1<<20)), IntValue(1<<20))...), false, 0},
		{"no fields", append([]byte{1}, long...), false, 0},
		{"a body past the end", rec(IntValue(7), BlobValue(long))[:30], false, 0},
		{"a reserved type", append([]byte{3, 1, 10}, long...), false, 0},
		{"a varint past the header", append([]byte{3, 1, 0x81}, long...), false, 0},
		{"a body past what a field's bounds hold", rec(BlobValue(make([]byte, 70000))), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s RecordShape
			if got := s.Learn(tt.rec); got != tt.learnt {
				t.Fatalf("Learn = %v, want %v", got, tt.learnt)
			}
			if s.Fields() != tt.fields {
				t.Fatalf("Fields() = %d, want %d", s.Fields(), tt.fields)
			}
			if s.Fits(tt.rec) != tt.learnt {
				t.Fatalf("Fits(the record learnt) = %v, want %v", !tt.learnt, tt.learnt)
			}
			if tt.learnt {
				checkShapeFields(t, &s, tt.rec)
			}
		})
	}
}

func fifteen(v Value) []Value {
	vals := make([]Value, 15)
	for i := range vals {
		vals[i] = v
	}
	return vals
}

func TestRecordShapeFits(t *testing.T) {
	blob := func(fill byte) Value { return BlobValue(bytes.Repeat([]byte{fill}, 20)) }
	learnt := rec(IntValue(5), blob('a'))
	var s RecordShape
	if s.Fits(learnt) {
		t.Fatal("the zero shape fits a record")
	}
	if !s.Learn(learnt) {
		t.Fatal("Learn refused a record of two fields")
	}
	tests := []struct {
		name string
		rec  []byte
		fits bool
	}{
		{"another record of the same header", rec(IntValue(-9), blob('b')), true},
		{"longer than its fields", append(rec(IntValue(9), blob('c')), 1, 2, 3), true},
		{"cut short", rec(IntValue(9), blob('c'))[:20], false},
		{"an integer of another size", rec(IntValue(500), blob('a')), false},
		{"a blob of another length", rec(IntValue(5), BlobValue(make([]byte, 21))), false},
		{"text for the blob", rec(IntValue(5), txt("aaaaaaaaaaaaaaaaaaaa")), false},
		{"a third field", rec(IntValue(5), blob('a'), NullValue()), false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Fits(tt.rec); got != tt.fits {
				t.Fatalf("Fits = %v, want %v", got, tt.fits)
			}
			if tt.fits {
				checkShapeFields(t, &s, tt.rec)
			}
		})
	}
	// A record without a shape leaves the one learnt.
	if s.Learn(rec(IntValue(1))) || !s.Fits(learnt) {
		t.Fatal("a refused Learn changed the shape")
	}
}

// checkShapeFields checks that each field of s, in rec, is where FieldAt
// finds it, of the type FieldAt reads.
func checkShapeFields(t *testing.T, s *RecordShape, rec []byte) {
	t.Helper()
	n, err := CheckRecord(rec)
	if err != nil || n != s.Fields() {
		t.Fatalf("CheckRecord(% x) = %d, %v, of a record that fits a shape of %d fields", rec, n, err, s.Fields())
	}
	for f := range s.Fields() {
		typ, body, st := FieldAt(rec, f)
		fd := s.Field(f)
		// The same bytes: a body's first byte is rec[Off]'s.
		same := fd.End <= fd.Off || (fd.End <= uint16(len(rec)) && len(body) > 0 && &body[0] == &rec[fd.Off])
		if st != FieldOK || uint64(fd.Type) != typ || int(fd.End)-int(fd.Off) != len(body) || !same {
			t.Fatalf("field %d: shape has type %d at [%d:%d]; FieldAt = type %d, %d bytes (%v), the same bytes: %v",
				f, fd.Type, fd.Off, fd.End, typ, len(body), st, same)
		}
	}
}

// FuzzRecordShape learns the shape of one input and checks it against
// another: a record that fits has the shape's fields where FieldAt finds
// them, and a shape is learnt only from a well-formed record.
func FuzzRecordShape(f *testing.F) {
	long := bytes.Repeat([]byte{0xee}, 30)
	f.Add(rec(IntValue(1), BlobValue(long)), rec(IntValue(2), BlobValue(long)))
	f.Add(rec(NullValue(), txt("0123456789abcdef")), rec(NullValue(), txt("0123456789abcdeX")))
	f.Add(rec(FloatValue(1.5), IntValue(1<<40)), rec(FloatValue(-2), IntValue(1<<40))[:14])
	f.Add(append([]byte{3, 1, 0x80}, long...), append([]byte{3, 1, 0x80, 0}, long...))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var s RecordShape
		learnt := s.Learn(a)
		if n, err := CheckRecord(a); learnt && (err != nil || n != s.Fields()) {
			t.Fatalf("Learn(% x) took a shape of %d fields; CheckRecord = %d, %v", a, s.Fields(), n, err)
		}
		if learnt != s.Fits(a) {
			t.Fatalf("Learn(% x) = %v, but the shape fits it: %v", a, learnt, !learnt)
		}
		if s.Fits(b) {
			checkShapeFields(t, &s, b)
		}
		// a's header with b's bytes for bodies: a record of a's shape
		// when b is long enough, of other bodies.
		if learnt {
			c := append(a[:a[0]:a[0]], b...)
			if s.Fits(c) != (len(c) >= max(s.need, shapeHeaderMax)) {
				t.Fatalf("Fits(% x) = %v, with the header of % x", c, s.Fits(c), a)
			}
			if s.Fits(c) {
				checkShapeFields(t, &s, c)
			}
		}
	})
}
