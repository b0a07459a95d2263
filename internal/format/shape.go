package format

import "encoding/binary"

// RecordShape is the layout of the records whose headers are, byte for
// byte, one header: where each field lies and what serial type it has
// follows from the header alone, so a record that carries it (and is as
// long as its fields need) can be read without walking its header. Rows
// of fixed-size columns (integers of one size, REALs, NULLs, hashes and
// other blobs of one length) share one header; a reader that keeps the
// last shape it saw reads such rows by one comparison.
//
// Only short headers have a shape, so that the comparison is of two
// words; a record must be at least 16 bytes long for them to be loaded:
//
//	rec[0]       header length h (2 to 16)
//	rec[1:h]     serial types, a varint each
//	rec[h:16]    (bodies: not compared, masked off)
//	rec[h:Need]  the fields' bodies, in order
//
// The zero RecordShape has no fields and matches nothing.
type RecordShape struct {
	head  [2]uint64 // the header's bytes, little-endian, zeros past h
	mask  [2]uint64 // ones over the header's bytes
	need  int       // header and bodies: the length a record must have
	n     int       // fields
	field [shapeMaxFields]ShapeField
}

// ShapeField is one field of a RecordShape: its serial type, and where
// its body starts and ends in the record.
type ShapeField struct {
	Type     uint16
	Off, End uint16
}

const (
	// shapeHeaderMax is the longest header that has a shape: two words.
	shapeHeaderMax = 16
	// shapeMaxFields is the most fields such a header holds: one byte
	// per serial type after the length's.
	shapeMaxFields = shapeHeaderMax - 1
	// shapeMaxLen bounds the bodies' offsets a ShapeField holds.
	shapeMaxLen = 1<<16 - 1
)

// Fits reports whether rec has the shape: its header is the shape's and
// it is at least as long as the shape's fields need, so that every field
// lies within it. Bytes past the fields are not looked at.
func (s *RecordShape) Fits(rec []byte) bool {
	return len(rec) >= s.need && len(rec) >= shapeHeaderMax &&
		binary.LittleEndian.Uint64(rec)&s.mask[0] == s.head[0] &&
		binary.LittleEndian.Uint64(rec[8:])&s.mask[1] == s.head[1] && s.n > 0
}

// Fields returns how many fields the shape has (0: none).
func (s *RecordShape) Fields() int { return s.n }

// Field returns field f of the shape, 0 <= f < Fields(): in a record
// that Fits, rec[Off:End] is its body.
func (s *RecordShape) Field(f int) ShapeField { return s.field[f] }

// Learn makes s the shape of rec and reports true, when rec has one: a
// well-formed record of at least 16 bytes whose header of 2 to 16 bytes
// holds no reserved serial type and whose fields it holds whole. Otherwise
// s is left as it was and Learn reports false.
func (s *RecordShape) Learn(rec []byte) bool {
	if len(rec) < shapeHeaderMax {
		return false
	}
	h := int(rec[0])
	if h < 2 || h > shapeHeaderMax {
		return false
	}
	var next RecordShape
	off := h
	for pos := 1; pos < h; next.n++ {
		t, n := Uvarint(rec[pos:h])
		if n <= 0 || t > shapeMaxLen {
			return false
		}
		size, ok := SerialTypeSize(t)
		if !ok || int64(off)+size > shapeMaxLen {
			return false
		}
		end := off + int(size)
		next.field[next.n] = ShapeField{Type: uint16(t), Off: uint16(off), End: uint16(end)}
		off = end
		pos += n
	}
	if off > len(rec) {
		return false
	}
	for i := range h {
		next.head[i/8] |= uint64(rec[i]) << (8 * (i % 8))
		next.mask[i/8] |= 0xff << (8 * (i % 8))
	}
	next.need = off
	*s = next
	return true
}
