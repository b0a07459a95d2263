package inflate

import (
	"math/bits"
	"sync"
)

// A table decodes one Huffman code: entry i of its first level is the
// symbol whose code, read first bit first, begins with i's low bits; a
// code longer than the level's width points at a second-level table,
// indexed by the bits that follow. An entry is a uint32:
//
//	bits  0-4   the bits the entry consumes: the code's length, or the
//	            first level's width for a pointer (a second-level entry
//	            consumes the rest of its code)
//	bits  5-7   the kind: invalid (0, so a zeroed entry is a code no
//	            symbol has), literal, length, end of block, distance, or
//	            pointer
//	bits  8-11  extra bits that follow the code (a length's or a
//	            distance's), or a pointer's second-level width
//	bits 16-31  the value: a literal byte or a code length symbol, a
//	            length's or a distance's base, or a pointer's index
type table struct {
	e []uint32
}

const (
	lenMask    = 31
	kindMask   = 7 << 5
	extraShift = 8
	valueShift = 16

	kindInvalid = 0 << 5
	kindLit     = 1 << 5
	kindLen     = 2 << 5
	kindEOB     = 3 << 5
	kindDist    = 4 << 5
	kindSub     = 5 << 5
)

// The entries of each alphabet's symbols, before a code's length is
// added: literal/length (symbols 286 and 287 are invalid), distance (30
// and 31 are), and code length (the symbol itself as a literal's value).
var litSyms, distSyms, clenSyms = func() (lit [288]uint32, dist [32]uint32, clen [maxCodes]uint32) {
	lenBase := [29]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra := [29]uint32{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase := [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	for s := range 256 {
		lit[s] = kindLit | uint32(s)<<valueShift
	}
	lit[256] = kindEOB
	for i := range lenBase {
		lit[257+i] = kindLen | lenExtra[i]<<extraShift | lenBase[i]<<valueShift
	}
	for i := range distBase {
		extra := uint32(0)
		if i >= 4 {
			extra = uint32(i/2 - 1)
		}
		dist[i] = kindDist | extra<<extraShift | distBase[i]<<valueShift
	}
	for s := range clen {
		clen[s] = kindLit | uint32(s)<<valueShift
	}
	return
}()

// clenOrder is the order in which a dynamic block gives the code length
// code's lengths.
var clenOrder = [maxCodes]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// build makes t decode the canonical code of lens (a length per symbol, 0
// for none) with a first level width bits wide; syms gives each symbol's
// entry. It reports false for a code that is not complete (rule 2): more
// codes than the lengths allow, or fewer, but for a single one-bit code.
// A code of no symbols builds a table of invalid entries.
func (t *table) build(lens []uint8, width uint, syms []uint32) bool {
	var count [maxLen + 1]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	longest := uint(0)
	for l := uint(maxLen); l > 0; l-- {
		if count[l] != 0 {
			longest = l
			break
		}
	}
	size := 1 << width
	if cap(t.e) < size {
		t.e = make([]uint32, size, 2*size)
	}
	t.e = t.e[:size]
	if longest == 0 {
		clear(t.e)
		return true
	}
	// The first code of each length, and the symbols sorted by length.
	var next [maxLen + 1]uint32
	var offs [maxLen + 2]int
	code := uint32(0)
	for l := uint(1); l <= longest; l++ {
		code <<= 1
		next[l] = code
		code += uint32(count[l])
		offs[l+1] = offs[l] + count[l]
	}
	complete := code == 1<<longest
	if !complete && !(code == 1 && longest == 1) {
		return false
	}
	if !complete {
		clear(t.e) // half of it decodes nothing
	}
	var sorted [288]uint16
	for s, l := range lens {
		if l != 0 {
			sorted[offs[l]] = uint16(s)
			offs[l]++
		}
	}
	left := count // codes of each length not placed yet
	mask := uint32(size - 1)
	prefix := ^uint32(0)
	var sub, subWidth uint32
	for _, s := range sorted[:offs[longest]] {
		l := uint(lens[s])
		c := next[l]
		next[l]++
		left[l]--
		rev := uint32(bits.Reverse16(uint16(c))) >> (16 - l)
		if l <= width {
			e := syms[s] | uint32(l)
			for i := rev; i < uint32(size); i += 1 << l {
				t.e[i] = e
			}
			continue
		}
		if p := rev & mask; p != prefix {
			// A new second-level table: wide enough for the codes that
			// share this prefix, which come next in canonical order.
			prefix = p
			w := l - width
			room := 1<<w - 1 - left[l] // this code is placed
			for room > 0 && w+width < longest {
				w++
				room = room<<1 - left[w+width]
			}
			sub, subWidth = uint32(len(t.e)), uint32(w)
			t.e = append(t.e, make([]uint32, 1<<w)...)
			t.e[p] = kindSub | uint32(width) | subWidth<<extraShift | sub<<valueShift
		}
		e := syms[s] | uint32(l-width)
		for i := rev >> width; i < 1<<subWidth; i += 1 << (l - width) {
			t.e[sub+i] = e
		}
	}
	return true
}

// fixedTables returns the tables of blocks with fixed codes.
var fixedTables = sync.OnceValues(func() (*table, *table) {
	var lens [288]uint8
	for s := range lens {
		switch {
		case s < 144:
			lens[s] = 8
		case s < 256:
			lens[s] = 9
		case s < 280:
			lens[s] = 7
		default:
			lens[s] = 8
		}
	}
	lit, dist := new(table), new(table)
	lit.build(lens[:], litBits, litSyms[:])
	var dlens [32]uint8
	for s := range dlens {
		dlens[s] = 5
	}
	dist.build(dlens[:], distBits, distSyms[:])
	return lit, dist
})

// readCodes reads a dynamic block's header, from its HLIT field, into
// d.lit and d.dist.
func (d *decoder) readCodes(bits uint64, nbits uint, in int, src []byte) (uint64, uint, int, error) {
	var err error
	if nbits < 14 {
		if bits, nbits, in, err = refill(bits, nbits, in, src); err != nil {
			return 0, 0, 0, err
		}
	}
	nlit := int(bits&31) + 257
	ndist := int(bits>>5&31) + 1
	nclen := int(bits>>10&15) + 4
	bits >>= 14
	nbits -= 14
	if nlit > maxLit || ndist > maxDist {
		return 0, 0, 0, ErrCorrupt
	}
	var cl [maxCodes]uint8
	for _, s := range clenOrder[:nclen] {
		if nbits < 3 {
			if bits, nbits, in, err = refill(bits, nbits, in, src); err != nil {
				return 0, 0, 0, err
			}
		}
		cl[s] = uint8(bits & 7)
		bits >>= 3
		nbits -= 3
	}
	if !d.clen.build(cl[:], clenBits, clenSyms[:]) {
		return 0, 0, 0, ErrCorrupt
	}
	clen := (*[1 << clenBits]uint32)(d.clen.e[:1<<clenBits])
	lens := d.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if nbits < 14 { // a code of up to 7 bits and up to 7 extra
			if bits, nbits, in, err = refill(bits, nbits, in, src); err != nil {
				return 0, 0, 0, err
			}
		}
		e := clen[bits&(1<<clenBits-1)]
		if e&kindMask == kindInvalid {
			return 0, 0, 0, damaged(in, nbits, src)
		}
		n := uint(e & lenMask)
		bits >>= n
		nbits -= n
		sym := uint8(e >> valueShift)
		if sym < 16 {
			lens[i] = sym
			i++
			continue
		}
		var rep int
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return 0, 0, 0, ErrCorrupt
			}
			val = lens[i-1]
			rep = 3 + int(bits&3)
			bits >>= 2
			nbits -= 2
		case 17:
			rep = 3 + int(bits&7)
			bits >>= 3
			nbits -= 3
		default:
			rep = 11 + int(bits&127)
			bits >>= 7
			nbits -= 7
		}
		if i+rep > len(lens) {
			return 0, 0, 0, damaged(in, nbits, src)
		}
		for j := range rep {
			lens[i+j] = val
		}
		i += rep
	}
	if !d.lit.build(lens[:nlit], litBits, litSyms[:]) || !d.dist.build(lens[nlit:], distBits, distSyms[:]) {
		return 0, 0, 0, damaged(in, nbits, src)
	}
	return bits, nbits, in, nil
}
