// Package inflate decodes a zlib stream (RFC 1950 around RFC 1951's
// DEFLATE) held whole in memory into a buffer of the size it inflates to:
// the shape of an SQLite Archive's compressed file, whose row holds the
// stream and its inflated size (sz). Knowing both ends lets the decoder do
// what compress/flate, a streaming reader, cannot: read its input 8 bytes
// at a time with no io.ByteReader between, copy matches straight within
// the output rather than through a 32 KiB window, and build each block's
// Huffman tables once as flat arrays. On Go source text it takes 0.57x
// compress/zlib's time for a file of a few KiB as a stream of its own,
// 0.64x for one long stream (BenchmarkZlib, medians of 5 paired runs).
//
// The rules, those of compress/zlib (FuzzZlib holds the two to the same
// outcome on any input):
//
//  1. The header: compression method 8, a window of at most 32 KiB, the
//     check bits right. A preset dictionary is refused (no archive has
//     one) unless its id is that of the empty dictionary, as compress/zlib
//     accepts it with none given.
//  2. A Huffman code must be complete, but for a code of one symbol of
//     one bit (zlib's exception); a code of no symbols is refused when
//     used. Length symbols 286 and 287, distance symbols 30 and 31, and a
//     distance past the start of the output are corrupt.
//  3. The stream fills the buffer exactly: an output byte past its end is
//     ErrLong, a final block ending before it ErrShort. Input that runs
//     out before the stream ends is ErrEnds.
//  4. The Adler-32 of the output follows the final block, byte-aligned;
//     a mismatch is ErrChecksum. What follows it is ignored.
package inflate

import (
	"encoding/binary"
	"errors"
	"sync"
)

// The errors Zlib returns.
var (
	ErrHeader   = errors.New("inflate: not a zlib stream")
	ErrCorrupt  = errors.New("inflate: corrupt deflate data")
	ErrChecksum = errors.New("inflate: the Adler-32 checksum does not match")
	ErrEnds     = errors.New("inflate: the stream ends early")
	ErrLong     = errors.New("inflate: the stream inflates past the buffer")
	ErrShort    = errors.New("inflate: the stream ends before filling the buffer")
)

// Zlib inflates the zlib stream at the start of src into dst, which it
// must fill exactly (rules 1 to 4). On error dst holds what was inflated
// before the damage was found, or garbage: nothing to show.
func Zlib(dst, src []byte) error {
	if len(src) < 2 {
		return ErrEnds
	}
	cmf, flg := src[0], src[1]
	if cmf&0x0f != 8 || cmf>>4 > 7 || (uint(cmf)<<8|uint(flg))%31 != 0 {
		return ErrHeader
	}
	in := 2
	if flg&0x20 != 0 {
		if len(src) < 6 {
			return ErrEnds
		}
		if binary.BigEndian.Uint32(src[2:]) != 1 {
			return ErrHeader
		}
		in = 6
	}
	d := decoders.Get().(*decoder)
	end, err := d.inflate(dst, src, in)
	decoders.Put(d)
	if err != nil {
		return err
	}
	if end+4 > len(src) {
		return ErrEnds
	}
	if binary.BigEndian.Uint32(src[end:]) != checksum(dst) {
		return ErrChecksum
	}
	return nil
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// decoder holds the tables of a block with dynamic codes, reused from
// block to block and stream to stream.
type decoder struct {
	lit  table
	dist table
	clen table
	lens [maxLit + maxDist]uint8
}

// Limits of the format.
const (
	maxLit   = 286 // literal/length symbols a dynamic block codes (HLIT)
	maxDist  = 30  // distance symbols (HDIST)
	maxCodes = 19  // code length symbols (HCLEN)
	maxLen   = 15  // bits in a code
)

// Widths of the first-level tables; longer codes go through a second
// level. litBits covers all but the rarest literals of text.
const (
	litBits  = 10
	distBits = 8
	clenBits = 7
)

// symbolBits is the bits the decoding loop refills to before a symbol: a
// length, its distance and their extra bits take at most 48. fastOut is
// the room a match needs past it to be copied in whole words: at most 258
// bytes, plus 8 of the last word's overrun.
const (
	symbolBits = 48
	fastOut    = 258 + 8
)

// inflate decodes the DEFLATE stream of src from offset in into dst and
// returns the offset just past it (its last byte completed).
func (d *decoder) inflate(dst, src []byte, in int) (int, error) {
	var (
		bits  uint64 // the next bits of the stream, first in the low bit
		nbits uint   // how many of bits are the stream's
		out   int    // bytes written to dst
		err   error
	)
	for {
		if nbits < 3 {
			if bits, nbits, in, err = refill(bits, nbits, in, src); err != nil {
				return 0, err
			}
		}
		final := bits&1 != 0
		typ := bits >> 1 & 3
		bits >>= 3
		nbits -= 3
		var lit, dist *table
		switch typ {
		case 0:
			// Stored: from the next byte, LEN, its complement, and LEN
			// bytes as they are.
			in -= int(nbits >> 3)
			bits, nbits = 0, 0
			if in+4 > len(src) {
				return 0, ErrEnds
			}
			n := int(binary.LittleEndian.Uint16(src[in:]))
			if uint16(n) != ^binary.LittleEndian.Uint16(src[in+2:]) {
				return 0, ErrCorrupt
			}
			in += 4
			if in+n > len(src) {
				return 0, ErrEnds
			}
			if out+n > len(dst) {
				return 0, ErrLong
			}
			copy(dst[out:], src[in:in+n])
			in += n
			out += n
			if final {
				return in, finish(out, dst)
			}
			continue
		case 1:
			lit, dist = fixedTables()
		case 2:
			if bits, nbits, in, err = d.readCodes(bits, nbits, in, src); err != nil {
				return 0, err
			}
			lit, dist = &d.lit, &d.dist
		default:
			return 0, damaged(in, nbits, src)
		}
		if out, in, bits, nbits, err = symbols(dst, src, out, in, bits, nbits, lit, dist); err != nil {
			return 0, err
		}
		if err := past(in, nbits, src, nil); err != nil {
			return 0, err // the block's symbols ran past the input
		}
		if final {
			// The checksum starts at the next byte.
			return in - int(nbits>>3), finish(out, dst)
		}
	}
}

// damaged is the error of data found wrong at in (nbits short of it): a
// stream cut short decodes the zero bytes refill adds past the input, and
// may find them wrong before it finds itself past its end.
func damaged(in int, nbits uint, src []byte) error {
	return past(in, nbits, src, ErrCorrupt)
}

// past is ErrEnds if the decoder has read past src's end (in, nbits short
// of it), else err.
func past(in int, nbits uint, src []byte, err error) error {
	if uint(in)*8-nbits > uint(len(src))*8 {
		return ErrEnds
	}
	return err
}

// symbols decodes a block's symbols, from the bit reader's state (in,
// bits, nbits) and out, up to its end-of-block symbol, and returns the
// state after it. It is a function of its own so that that state stays in
// registers.
func symbols(dst, src []byte, out, in int, bits uint64, nbits uint, lit, dist *table) (int, int, uint64, uint, error) {
	litPrim := (*[1 << litBits]uint32)(lit.e[:1<<litBits])
	distPrim := (*[1 << distBits]uint32)(dist.e[:1<<distBits])
	for {
		if nbits < symbolBits {
			if in+8 <= len(src) {
				bits |= binary.LittleEndian.Uint64(src[in:]) << nbits
				in += int((63 - nbits) >> 3)
				nbits |= 56
			} else {
				var err error
				if bits, nbits, in, err = refill(bits, nbits, in, src); err != nil {
					return 0, 0, 0, 0, err
				}
			}
		}
		e := litPrim[bits&(1<<litBits-1)]
		if e&kindMask == kindSub {
			bits >>= litBits
			nbits -= litBits
			e = lit.e[e>>valueShift+uint32(bits)&(1<<(e>>extraShift&15)-1)]
		}
		n := uint(e & lenMask)
		bits >>= n
		nbits -= n
		switch e & kindMask {
		case kindLit:
			if uint(out) >= uint(len(dst)) {
				return 0, 0, 0, 0, past(in, nbits, src, ErrLong)
			}
			dst[out] = byte(e >> valueShift)
			out++
			continue
		case kindLen:
		case kindEOB:
			return out, in, bits, nbits, nil
		default:
			return 0, 0, 0, 0, damaged(in, nbits, src)
		}
		x := uint(e >> extraShift & 15)
		length := int(e>>valueShift) + int(bits&(1<<x-1))
		bits >>= x
		nbits -= x
		e = distPrim[bits&(1<<distBits-1)]
		if e&kindMask == kindSub {
			bits >>= distBits
			nbits -= distBits
			e = dist.e[e>>valueShift+uint32(bits)&(1<<(e>>extraShift&15)-1)]
		}
		if e&kindMask != kindDist {
			return 0, 0, 0, 0, damaged(in, nbits, src)
		}
		n = uint(e & lenMask)
		bits >>= n
		nbits -= n
		x = uint(e >> extraShift & 15)
		back := int(e>>valueShift) + int(bits&(1<<x-1))
		bits >>= x
		nbits -= x
		if back > out {
			return 0, 0, 0, 0, damaged(in, nbits, src)
		}
		if out+fastOut <= len(dst) {
			// Room for whole words past the match: copied as words
			// where the source is a word behind or more (each word
			// read is written before), a byte's run as words, other
			// short periods byte by byte.
			if back >= 8 {
				for i := 0; i < length; i += 8 {
					binary.LittleEndian.PutUint64(dst[out+i:], binary.LittleEndian.Uint64(dst[out-back+i:]))
				}
			} else {
				copyShort(dst, out, back, length)
			}
			out += length
			continue
		}
		if out+length > len(dst) {
			return 0, 0, 0, 0, past(in, nbits, src, ErrLong)
		}
		for i := range length {
			dst[out+i] = dst[out-back+i]
		}
		out += length
	}
}

// refill tops bits up to at least 56 bits: 8 bytes at a time, and byte by
// byte near the end of src, where it adds zero bytes past it. Those count
// in in: a stream that consumes one ends early, which the next refill, or
// the block's end, finds.
func refill(bits uint64, nbits uint, in int, src []byte) (uint64, uint, int, error) {
	if in+8 <= len(src) {
		bits |= binary.LittleEndian.Uint64(src[in:]) << nbits
		return bits, nbits | 56, in + int((63-nbits)>>3), nil
	}
	if uint(in)*8-nbits > uint(len(src))*8 {
		return 0, 0, 0, ErrEnds
	}
	for nbits <= 56 {
		if in < len(src) {
			bits |= uint64(src[in]) << nbits
		}
		in++
		nbits += 8
	}
	return bits, nbits, in, nil
}

// finish checks that the final block filled dst.
func finish(out int, dst []byte) error {
	if out != len(dst) {
		return ErrShort
	}
	return nil
}

// copyShort copies length bytes from back (1 to 7) bytes behind out to
// out, in dst, which has room for 8 bytes past them.
func copyShort(dst []byte, out, back, length int) {
	if back == 1 {
		w := uint64(dst[out-1]) * 0x0101010101010101
		for i := 0; i < length; i += 8 {
			binary.LittleEndian.PutUint64(dst[out+i:], w)
		}
		return
	}
	s := dst[out-back : out+length]
	for i := back; i < len(s); i++ {
		s[i] = s[i-back]
	}
}
