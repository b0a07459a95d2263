package inflate

import (
	"hash/adler32"
	"math/rand/v2"
	"testing"
)

// TestChecksum holds checksum to hash/adler32 over every length up to 300
// and long runs of 0xff, the largest sums.
func TestChecksum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 300)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for n := range len(b) + 1 {
		if got, want := checksum(b[:n]), adler32.Checksum(b[:n]); got != want {
			t.Fatalf("%d bytes: %08x, want %08x", n, got, want)
		}
	}
	ff := make([]byte, 1<<20+13)
	for i := range ff {
		ff[i] = 0xff
	}
	for _, n := range []int{5552, 5553, 1 << 16, 1<<16 + 1, len(ff)} {
		if got, want := checksum(ff[:n]), adler32.Checksum(ff[:n]); got != want {
			t.Fatalf("%d bytes of 0xff: %08x, want %08x", n, got, want)
		}
	}
}
