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
