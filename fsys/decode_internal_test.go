package fsys

import (
	"math/rand/v2"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// TestIntField checks the listing's integer decoder against the format
// package's, for every integer serial type and random bodies.
func TestIntField(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for typ := uint64(0); typ < 10; typ++ {
		size, _ := format.SerialTypeSize(typ)
		for range 1000 {
			b := make([]byte, size)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			want := format.DecodeValue(typ, b).Int()
			if got := intField(typ, b); got != want {
				t.Fatalf("type %d, body %x: %d, want %d", typ, b, got, want)
			}
		}
	}
}

// FuzzListingEntry checks the listing index's straight-line decoder
// against the general loop: where it accepts an entry, the loop reads the
// same key from it.
func FuzzListingEntry(f *testing.F) {
	f.Add([]byte{6, 0x17, 1, 4, 2, 9, 'a', 'l', 'i', 'c', 'e', 0xed, 0x41, 0xa4, 0, 0, 0x10, 0x00})
	f.Add([]byte{6, 0x0c, 8, 9, 0, 7, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{6, 0x12, 6, 5, 3, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Fuzz(func(t *testing.T, rec []byte) {
		var fast, slow key
		if len(rec) == 0 || rec[0] != listingHeader || !fast.listing(rec) {
			return
		}
		if err := slow.fields(rec, true); err != nil {
			t.Fatalf("%x: listing accepts it, fields: %v", rec, err)
		}
		if string(fast.name) != string(slow.name) || fast.kind != slow.kind || fast.st != slow.st ||
			fast.mtime != slow.mtime || fast.sz != slow.sz || fast.rowid != slow.rowid {
			t.Fatalf("%x: listing %+v, fields %+v", rec, fast, slow)
		}
	})
}
