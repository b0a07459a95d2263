package format

import (
	"bytes"
	"strings"
	"testing"
)

// TestRecordFits: records of short serial types fit, as CheckRecord passes
// them; one a byte short, a reserved type, or a serial type of three bytes
// or more does not (CheckRecord answers for the last).
func TestRecordFits(t *testing.T) {
	fits := [][]byte{
		rec(NullValue(), BlobValue(make([]byte, 100))),
		rec(IntValue(0), IntValue(1), IntValue(-1), IntValue(1<<40), FloatValue(2.5), txt("abc"), BlobValue(nil)),
		rec(txt(strings.Repeat("x", 8000))),
		rec(),
	}
	for _, r := range fits {
		if _, err := CheckRecord(r); err != nil {
			t.Fatalf("% x: %v", r[:min(8, len(r))], err)
		}
		if !RecordFits(r) {
			t.Errorf("RecordFits(% x...) = false", r[:min(8, len(r))])
		}
		if len(r) > 1 && RecordFits(r[:len(r)-1]) {
			t.Errorf("RecordFits(% x...) of a record a byte short = true", r[:min(8, len(r))])
		}
	}
	long := rec(txt(strings.Repeat("x", 9000))) // a serial type of three bytes
	if _, err := CheckRecord(long); err != nil || RecordFits(long) {
		t.Errorf("a record with a three-byte serial type: CheckRecord %v, RecordFits %v", err, RecordFits(long))
	}
	for _, bad := range [][]byte{{2, 10}, {2, 11}, {0}, {0x80}, {3, 0x80, 0x01}, {5, 1, 1}} {
		if RecordFits(bad) {
			t.Errorf("RecordFits(% x) = true", bad)
		}
	}
}

// FuzzIndexBlobKey puts a record (any bytes) in a cell of an index leaf
// and an index interior page: where IndexBlobKey reads field 0, comparing
// it with a BLOB key must answer as CompareKey does, and it never panics,
// whatever the cell.
func FuzzIndexBlobKey(f *testing.F) {
	f.Add(rec(BlobValue([]byte("key")), BlobValue(make([]byte, 30))), []byte("kex"), false)
	f.Add(rec(txt("k"), IntValue(3)), []byte{}, true)
	f.Add(rec(IntValue(-1)), []byte("a"), false)
	f.Add([]byte{3, 0x81, 0x00, 1, 2}, []byte{1}, true)
	f.Fuzz(func(t *testing.T, record, key []byte, interior bool) {
		typ, prefix := PageIndexLeaf, []byte(nil)
		if interior {
			typ, prefix = PageIndexInterior, []byte{0, 0, 0, 2}
		}
		cell := AppendUvarint(prefix, uint64(len(record)))
		cell = append(cell, record...)
		data := make([]byte, 4096)
		pg, err := BuildPage(data, 2, 4096, typ, [][]byte{cell}, 3)
		if err != nil {
			return // a record too big for one page
		}
		k, kind := pg.IndexBlobKey(0)
		if kind == 0 {
			return
		}
		want, err := CompareKey(record, []Value{BlobValue(key)}, nil)
		if err != nil {
			t.Fatalf("IndexBlobKey read % x (kind %d); CompareKey: %v", record, kind, err)
		}
		got := -1
		if kind == 1 {
			got = bytes.Compare(k, key)
		}
		if got != want {
			t.Fatalf("record % x against % x: IndexBlobKey says %d, CompareKey %d", record, key, got, want)
		}
	})
}
