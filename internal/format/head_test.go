package format

import "testing"

// TestFieldsEnd checks FieldsEnd on every prefix of records against the
// record reader: a prefix that holds the header's length and first n
// serial types answers where the reader finds field n-1's body ending,
// whatever of the bodies it holds; a shorter prefix, n past the record's
// fields, or a malformed header is not ok.
func TestFieldsEnd(t *testing.T) {
	long := make([]byte, 300) // a serial type of two bytes
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	for _, vals := range [][]Value{
		{TextValue([]byte("./sub/a.txt")), IntValue(0o100644), IntValue(1700000000), IntValue(3893), BlobValue(make([]byte, 1836))},
		{TextValue(long), IntValue(0o40755), IntValue(-1), IntValue(0), {Kind: KindNull}},
		{TextValue(nil), {Kind: KindNull}, IntValue(1 << 40), FloatValue(2.5)},
	} {
		rec := AppendRecord(nil, vals)
		for n := 0; n <= len(vals)+1; n++ {
			// The oracle: the reader's place after n fields, and how much
			// of the header those n serial types take.
			r, err := NewRecordReader(rec)
			if err != nil {
				t.Fatal(err)
			}
			fields := true
			for range n {
				if _, ok, err := r.Next(); !ok || err != nil {
					fields = false
				}
			}
			for cut := 0; cut <= len(rec); cut++ {
				got, ok := FieldsEnd(rec[:cut], n)
				want := fields && cut >= r.hdr
				if ok != want || (ok && got != int64(r.body)) {
					t.Fatalf("%d fields, FieldsEnd(rec[:%d], %d) = %d, %v; want %d, %v", len(vals), cut, n, got, ok, r.body, want)
				}
			}
		}
	}
	for _, bad := range [][]byte{{0x02, 0x0a}, {0x01}, {0x00}, {0x81}, {0x03, 0x81}} {
		if end, ok := FieldsEnd(bad, 1); ok {
			t.Errorf("FieldsEnd(%x, 1) = %d, ok", bad, end)
		}
	}
}
