package format

// SQLite varints are 1 to 9 bytes, most significant group first. Bytes 1-8
// each carry their low 7 bits and a continuation flag in the high bit; a 9th
// byte, when reached, carries all 8 of its bits:
//
//	0xxxxxxx                                   7 bits
//	1xxxxxxx 0xxxxxxx                         14 bits
//	...
//	1xxxxxxx x 8 then xxxxxxxx                64 bits (every negative rowid)
//
// This is not encoding/binary's Uvarint, whose groups run the other way.

// MaxVarintLen is the longest encoding of a SQLite varint.
const MaxVarintLen = 9

// Uvarint decodes the varint at the start of b. It returns the value and the
// number of bytes read; n == 0 means b ended before the varint did.
func Uvarint(b []byte) (v uint64, n int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		v = v<<7 | uint64(c&0x7f)
		if c < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < MaxVarintLen {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), MaxVarintLen
}

// VarintLen returns the number of bytes PutUvarint writes for v.
func VarintLen(v uint64) int {
	if v > 1<<56-1 {
		return MaxVarintLen
	}
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// PutUvarint writes v into b in its shortest form and returns the length.
// b must have room for VarintLen(v) bytes.
func PutUvarint(b []byte, v uint64) int {
	if v < 0x80 {
		b[0] = byte(v)
		return 1
	}
	if v > 1<<56-1 {
		b[8] = byte(v)
		v >>= 8
		for i := 7; i >= 0; i-- {
			b[i] = byte(v&0x7f) | 0x80
			v >>= 7
		}
		return MaxVarintLen
	}
	n := VarintLen(v)
	b[n-1] = byte(v & 0x7f)
	v >>= 7
	for i := n - 2; i >= 0; i-- {
		b[i] = byte(v&0x7f) | 0x80
		v >>= 7
	}
	return n
}

// AppendUvarint appends the shortest encoding of v to b.
func AppendUvarint(b []byte, v uint64) []byte {
	var buf [MaxVarintLen]byte
	n := PutUvarint(buf[:], v)
	return append(b, buf[:n]...)
}
