package inflate

import "encoding/binary"

// checksum is the Adler-32 of b (RFC 1950): s1, 1 plus the sum of its
// bytes, and s2, the sum of s1 after each byte, both modulo 65521, as
// s2<<16 | s1. Eight bytes at a time: s1 gains their sum and s2 eight
// times s1 plus their sum weighted 8 down to 1, each sum taken from the
// word's even and odd bytes as 16-bit lanes and folded by one multiply.
func checksum(b []byte) uint32 {
	const (
		mod   = 65521
		lanes = 0x00ff00ff00ff00ff
		// The sum's multiplier gathers the four lanes into the top one;
		// the weights' put each lane's weight (even bytes 8, 6, 4, 2; odd
		// ones 7, 5, 3, 1) against it.
		sum  = 0x0001000100010001
		even = 8<<48 | 6<<32 | 4<<16 | 2
		odd  = 7<<48 | 5<<32 | 3<<16 | 1
		// block bounds the bytes between two reductions: s2 stays far
		// below 2^64.
		block = 1 << 16
	)
	s1, s2 := uint64(1), uint64(0)
	for len(b) > 0 {
		n := min(len(b), block)
		p := b[:n]
		b = b[n:]
		for ; len(p) >= 8; p = p[8:] {
			x := binary.LittleEndian.Uint64(p)
			e, o := x&lanes, x>>8&lanes
			s2 += s1<<3 + (e*even>>48+o*odd>>48)&0xffff
			s1 += (e + o) * sum >> 48
		}
		for _, c := range p {
			s1 += uint64(c)
			s2 += s1
		}
		s1 %= mod
		s2 %= mod
	}
	return uint32(s2<<16 | s1)
}
