package format

import (
	"bytes"
	"math/rand/v2"
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

// TestIntField checks IntField against DecodeValue's Int, for every serial
// type below 12 and random bodies, and for text and blobs.
func TestIntField(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for typ := uint64(0); typ < 16; typ++ {
		size, ok := SerialTypeSize(typ)
		if !ok {
			continue
		}
		for range 1000 {
			b := make([]byte, size)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			want := DecodeValue(typ, b).Int()
			if got := IntField(typ, b); got != want {
				t.Fatalf("type %d, body %x: %d, want %d", typ, b, got, want)
			}
		}
	}
}

// FuzzValueInts checks ValueInts, whose fast path reads a listing index
// entry (name, mode, mtime, sz, rowid) in one pass, against RecordReader's
// reading of the same fields (valueInts): they accept the same records and
// read the same name and integers from them.
func FuzzValueInts(f *testing.F) {
	f.Add([]byte{6, 0x17, 1, 4, 2, 9, 'a', 'l', 'i', 'c', 'e', 0xed, 0x41, 0xa4, 0, 0, 0x10, 0x00}, uint8(4))
	f.Add([]byte{6, 0x0c, 8, 9, 0, 7, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, uint8(4))
	f.Add([]byte{6, 0x12, 6, 5, 3, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, uint8(4))
	f.Add([]byte{3, 0x81, 0x0d, 0x01}, uint8(1))
	f.Fuzz(func(t *testing.T, rec []byte, n uint8) {
		var fast, slow [8]int64
		n %= 8
		fv, fok := ValueInts(rec, fast[:n])
		sv, sok := valueInts(rec, slow[:n])
		if fok != sok {
			t.Fatalf("%x: ValueInts %v, RecordReader %v", rec, fok, sok)
		}
		if fok && (fv.Kind != sv.Kind || fv.num != sv.num || string(fv.Bytes) != string(sv.Bytes) || fast != slow) {
			t.Fatalf("%x: ValueInts %v %v, RecordReader %v %v", rec, fv, fast, sv, slow)
		}
	})
}

// TestBytesPair checks BytesPair against the general decoder on every
// header of two serial types of one or two bytes (and headers one byte
// short or long), with bodies of the right length, one byte short and one
// byte over: it accepts exactly the records of a BLOB and a TEXT or BLOB
// field whose types fit in two bytes each, and returns their bytes.
func TestBytesPair(t *testing.T) {
	types := []uint64{0, 1, 6, 7, 11, 12, 13, 14, 27, 28, 127, 128, 129, 212, 300, 16383, 16384}
	accepted := 0
	for _, ta := range types {
		for _, tb := range types {
			var hdr []byte
			hdr = AppendUvarint(hdr, ta)
			hdr = AppendUvarint(hdr, tb)
			sa, okA := SerialTypeSize(ta)
			sb, okB := SerialTypeSize(tb)
			if !okA || !okB {
				sa, sb = 0, 0 // reserved types: a body of whatever length
			}
			body := int(sa + sb)
			for _, extra := range []int{-1, 0, 1} {
				for _, hdrFix := range []int{-1, 0, 1} {
					h := 1 + len(hdr) + hdrFix
					if h < 1 || h > 127 || body+extra < 0 || body > 1<<16 {
						continue
					}
					rec := append([]byte{byte(h)}, hdr...)
					rec = append(rec, make([]byte, max(0, hdrFix))...)
					if hdrFix < 0 {
						rec = rec[:h]
					}
					rec = append(rec, bytes.Repeat([]byte{'x'}, body+extra)...)
					a, b, ok := BytesPair(rec)
					fields, err := CheckRecord(rec)
					want := err == nil && fields == 2 && ta >= 12 && ta%2 == 0 && tb >= 12 && ta < 1<<14 && tb < 1<<14 && hdrFix == 0 && extra >= 0
					if ok != want {
						t.Fatalf("BytesPair(types %d, %d; header %+d, body %+d) = %v, want %v (CheckRecord %d, %v)", ta, tb, hdrFix, extra, ok, want, fields, err)
					}
					if !ok {
						continue
					}
					accepted++
					va, _ := Field(rec, 0)
					vb, _ := Field(rec, 1)
					if !bytes.Equal(a, va.Bytes) || !bytes.Equal(b, vb.Bytes) || cap(a) != len(a) || cap(b) != len(b) {
						t.Fatalf("BytesPair(types %d, %d) = %d and %d bytes, want %d and %d", ta, tb, len(a), len(b), len(va.Bytes), len(vb.Bytes))
					}
				}
			}
		}
	}
	if accepted < 50 {
		t.Fatalf("only %d records accepted", accepted)
	}
}

// BenchmarkBytesPair decodes a bucket entry of an 8-byte key and a
// 100-byte value (types 28 and 212: a header of 4 bytes).
func BenchmarkBytesPair(b *testing.B) {
	rec := AppendRecord(nil, []Value{BlobValue(make([]byte, 8)), BlobValue(make([]byte, 100))})
	n := 0
	for b.Loop() {
		k, v, _ := BytesPair(rec)
		n += len(k) + len(v)
	}
	if n == 0 {
		b.Fatal("nothing decoded")
	}
}
