package format

import "bytes"

// Fast record access for the read path. CheckRecord validates a record once
// (header length, every serial type, body length); FieldAt reads one field,
// checking what it walks. Serial types below 128, the common case, are one
// header byte each. CheckRecord and FieldAt decode serial types inline
// rather than through a helper on purpose: a helper does not inline, and
// these loops run for every row and every column read.

// CheckRecord validates rec and returns its number of fields.
func CheckRecord(rec []byte) (fields int, err error) { return checkRecordMode(rec, false) }

// CheckRow is CheckRecord for the record of a row of a rowid table, read
// as SQLite reads one: the reserved serial types 10 and 11 are NULL with
// no body (sqlite3VdbeSerialGet; SQLite never writes them, and its
// integrity_check passes a row that has one). Elsewhere (index entries,
// WITHOUT ROWID rows, whose order SQLite compares with them in places
// CompareRecords does not follow) they stay malformed.
func CheckRow(rec []byte) (fields int, err error) { return checkRecordMode(rec, true) }

// checkRecordMode is CheckRecord, and CheckRow when row.
func checkRecordMode(rec []byte, row bool) (fields int, err error) {
	// The fast path, as FieldAt's: a header under 128 bytes of serial
	// types of one or two bytes each (bodies under 8 KiB, fewer than 128
	// of them: body cannot overflow). Anything else, an error included,
	// goes the general way, which says what is wrong.
	if len(rec) == 0 || rec[0] >= 0x80 || rec[0] == 0 || int(rec[0]) > len(rec) {
		return checkRecordAny(rec, row)
	}
	hdr := rec[:rec[0]]
	body := len(hdr)
	for pos := 1; pos < len(hdr); fields++ {
		_, size, next, ok := ShortSerial(hdr, pos)
		if !ok {
			return checkRecordAny(rec, row)
		}
		body, pos = body+size, next
	}
	if body > len(rec) {
		return checkRecordAny(rec, row)
	}
	return fields, nil
}

// RecordFits is CheckRecord's fast path alone, for a point lookup: it
// reports true for a record whose header is under 128 bytes of serial
// types of one or two bytes each, that CheckRecord would pass. false
// says nothing: CheckRecord answers for those.
func RecordFits(rec []byte) bool {
	if len(rec) == 0 {
		return false
	}
	h := int(rec[0])
	if h == 0 || h >= 0x80 || h > len(rec) {
		return false
	}
	body := h
	for pos := 1; pos < h; {
		if c := rec[pos]; c < 0x80 {
			body += int(OneByteSerialSize[c]) // -1, reserved: caught below
			if OneByteSerialSize[c] < 0 {
				return false
			}
			pos++
		} else if pos+1 < h && c > 0x80 && rec[pos+1] < 0x80 {
			body += int(uint(c&0x7f)<<7|uint(rec[pos+1])-12) >> 1
			pos += 2
		} else {
			return false
		}
	}
	return body <= len(rec)
}

// checkRecordAny is checkRecordMode for any record.
func checkRecordAny(rec []byte, row bool) (fields int, err error) {
	hdrLen, pos := recordHeaderLen(rec)
	if pos == 0 {
		return 0, &CorruptError{Offset: -1, Msg: "record header length out of range"}
	}
	body := int64(hdrLen)
	for pos < hdrLen {
		var t uint64
		if c := rec[pos]; c < 0x80 {
			t = uint64(c)
			pos++
		} else if pos+1 < hdrLen && rec[pos+1] < 0x80 {
			t = uint64(c&0x7f)<<7 | uint64(rec[pos+1])
			pos += 2
		} else {
			var n int
			if t, n = Uvarint(rec[pos:hdrLen]); n == 0 {
				return 0, &CorruptError{Offset: -1, Msg: "record header ends inside a serial type"}
			}
			pos += n
		}
		size, ok := SerialTypeSize(t)
		if !ok { // 10 or 11
			if !row {
				return 0, &CorruptError{Offset: -1, Msg: "reserved serial type in record"}
			}
			size = 0 // NULL in a row
		}
		if size > int64(len(rec))-body { // no overflow: body <= len(rec)
			return 0, &CorruptError{Offset: -1, Msg: "record body shorter than its header says"}
		}
		body += size
		fields++
	}
	if body > int64(len(rec)) {
		return 0, &CorruptError{Offset: -1, Msg: "record body shorter than its header says"}
	}
	return fields, nil
}

// recordHeaderLen returns the header length and the position after its
// varint; pos is 0 when the header length is out of range.
func recordHeaderLen(rec []byte) (hdrLen, pos int) {
	if len(rec) == 0 {
		return 0, 0
	}
	if rec[0] < 0x80 {
		if int(rec[0]) > len(rec) || rec[0] == 0 {
			return 0, 0
		}
		return int(rec[0]), 1
	}
	h, n := Uvarint(rec)
	if n == 0 || h < uint64(n) || h > uint64(len(rec)) {
		return 0, 0
	}
	return int(h), n
}

// Field returns field i of a record that CheckRecord accepted; ok is false
// when the record has fewer fields. On an unchecked record it never panics
// but may return ok false.
func Field(rec []byte, i int) (v Value, ok bool) {
	t, body, ok := FieldBody(rec, i)
	if !ok {
		return Value{}, false
	}
	return DecodeValue(t, body), true
}

// BytesPair is the fast path for a record of exactly two fields, a BLOB
// then a TEXT or BLOB, whose serial types take one or two bytes each
// (values under 8 KiB), such as a bucket's entry: it returns the two
// fields' bytes. ok is false for every other record, which Field and
// CheckRecord decode and check; a record BytesPair accepts, they accept
// too.
//
//	rec[0]        header length h (3 to 5)
//	rec[1:h]      two serial types, 12 and up (BLOB even, TEXT odd), the first even
//	rec[h:]       the first field's bytes, then the second's
func BytesPair(rec []byte) (a, b []byte, ok bool) {
	// Written out, each serial type read straight into its variable: the
	// loop over the two kept them in an array on the stack, and a bucket
	// cursor's step spent a quarter of its time here.
	if len(rec) < 3 {
		return nil, nil, false
	}
	h := int(rec[0])
	if h < 3 || h > 5 || h > len(rec) {
		return nil, nil, false
	}
	hdr := rec[1:h] // 2 to 4 bytes
	ta, pos := uint(hdr[0]), 1
	if ta >= 0x80 {
		if hdr[1] >= 0x80 {
			return nil, nil, false
		}
		ta, pos = (ta&0x7f)<<7|uint(hdr[1]), 2
	}
	if pos >= len(hdr) {
		return nil, nil, false
	}
	tb := uint(hdr[pos])
	pos++
	if tb >= 0x80 {
		if pos >= len(hdr) || hdr[pos] >= 0x80 {
			return nil, nil, false
		}
		tb, pos = (tb&0x7f)<<7|uint(hdr[pos]), pos+1
	}
	if pos != len(hdr) || ta < 12 || ta&1 != 0 || tb < 12 {
		return nil, nil, false
	}
	sa, sb := int(ta-12)>>1, int(tb-12)>>1
	if sa+sb > len(rec)-h {
		return nil, nil, false
	}
	mid, end := h+sa, h+sa+sb
	return rec[h:mid:mid], rec[mid:end:end], true
}

// FieldState says what FieldAt found.
type FieldState uint8

const (
	FieldOK      FieldState = iota // the field is there
	FieldAbsent                    // the record ends before it (ALTER TABLE ADD COLUMN)
	FieldCorrupt                   // the record's header or body is malformed
)

// FieldBody returns the serial type and body bytes of field i; ok is false
// when the field is absent or the record malformed.
func FieldBody(rec []byte, i int) (t uint64, body []byte, ok bool) {
	t, body, st := FieldAt(rec, i)
	return t, body, st == FieldOK
}

// FieldAt returns the serial type and body bytes of field i, checking what
// it walks: the header up to field i and the bodies before it.
func FieldAt(rec []byte, i int) (t uint64, body []byte, st FieldState) {
	return fieldAtShort(rec, i, false)
}

// RowFieldAt is FieldAt for the record of a row of a rowid table, read as
// SQLite reads one (CheckRow): a field of the reserved serial type 10 or 11
// is NULL (serial type 0) with no body.
func RowFieldAt(rec []byte, i int) (t uint64, body []byte, st FieldState) {
	return fieldAtShort(rec, i, true)
}

// fieldAtShort is FieldAt, and RowFieldAt when row.
func fieldAtShort(rec []byte, i int, row bool) (t uint64, body []byte, st FieldState) {
	// The fast path: a header under 128 bytes whose serial types up to
	// field i take one or two bytes each (values under 8 KiB): nearly all
	// records. Anything else goes the general way. The bodies before field
	// i need no check of their own: each size is under 8 KiB and there are
	// fewer than 128 of them, so off cannot overflow, and a body that runs
	// past the record takes field i's end past it too.
	if len(rec) == 0 {
		return fieldAt(rec, i, row)
	}
	h := int(rec[0])
	if uint(h-1) >= 0x7f || h > len(rec) { // 0, or a header of 128 bytes or more
		return fieldAt(rec, i, row)
	}
	hdr, off := rec[:h], h
	for pos, k := 1, i; pos < len(hdr); k-- {
		var size, next int
		var ok bool
		if t, size, next, ok = ShortSerial(hdr, pos); !ok {
			return fieldAt(rec, i, row) // a longer varint, or a reserved type
		}
		pos = next
		if k == 0 {
			end := off + size
			if end > len(rec) {
				return 0, nil, FieldCorrupt
			}
			return t, rec[off:end:end], FieldOK
		}
		off += size
	}
	if off > len(rec) {
		return 0, nil, FieldCorrupt
	}
	return 0, nil, FieldAbsent
}

// OneByteSerialSize holds the body size of each serial type that fits a
// one-byte varint (0..127); -1 marks the reserved types 10 and 11. Read
// only.
var OneByteSerialSize = func() (s [128]int8) {
	for t := range s {
		n, ok := SerialTypeSize(uint64(t))
		if !ok {
			n = -1
		}
		s[t] = int8(n)
	}
	return s
}()

// fieldAt is fieldAtShort for any record.
func fieldAt(rec []byte, i int, row bool) (t uint64, body []byte, st FieldState) {
	hdrLen, pos := recordHeaderLen(rec)
	if pos == 0 {
		return 0, nil, FieldCorrupt
	}
	off := hdrLen
	for k := 0; pos < hdrLen; k++ {
		var n int
		if t, n = Uvarint(rec[pos:hdrLen]); n == 0 {
			return 0, nil, FieldCorrupt
		}
		pos += n
		size, valid := SerialTypeSize(t)
		if !valid && row { // 10 or 11 in a row: NULL
			t, size, valid = 0, 0, true
		}
		if !valid || size > int64(len(rec)-off) {
			return 0, nil, FieldCorrupt
		}
		if k == i {
			return t, rec[off : off+int(size) : off+int(size)], FieldOK
		}
		off += int(size)
	}
	return 0, nil, FieldAbsent
}

// CompareKey compares record rec with an unpacked key over the fields both
// have (0 when those are equal: the caller decides what a prefix means).
// Field i compares under k's collation and order for i.
func CompareKey(rec []byte, key []Value, k *KeyInfo) (int, error) {
	if err := k.otherErr(); err != nil {
		return 0, err
	}
	hdrLen, pos := recordHeaderLen(rec)
	if pos == 0 {
		return 0, &CorruptError{Offset: -1, Msg: "record header length out of range"}
	}
	body := hdrLen
	i0 := 0
	// The common first fields, a TEXT key against a TEXT field under BINARY
	// and a BLOB against a BLOB (under any collation), compare bytes
	// straight away.
	if len(key) > 0 && pos < hdrLen && (key[0].Kind == KindBlob ||
		key[0].Kind == KindText && (k == nil || len(k.Colls) == 0 || k.Colls[0] == CollBinary)) {
		// Serial types 12 and up: even for a BLOB, odd for a TEXT.
		odd := uint64(0)
		if key[0].Kind == KindText {
			odd = 1
		}
		if t, n := headerVarint(rec[pos:hdrLen]); n > 0 && t >= 12 && t&1 == odd {
			size := int((t - 12) >> 1)
			if size <= len(rec)-body {
				c := bytes.Compare(rec[body:body+size], key[0].Bytes)
				if c != 0 {
					if k != nil && len(k.Desc) > 0 && k.Desc[0] {
						return -c, nil
					}
					return c, nil
				}
				pos, body, i0 = pos+n, body+size, 1
			}
		}
	}
	for i := i0; pos < hdrLen && i < len(key); i++ {
		t, n := headerVarint(rec[pos:hdrLen])
		if n == 0 {
			return 0, &CorruptError{Offset: -1, Msg: "record header ends inside a serial type"}
		}
		pos += n
		size, valid := SerialTypeSize(t)
		if !valid {
			return 0, &CorruptError{Offset: -1, Msg: "reserved serial type in record"}
		}
		if size > int64(len(rec)-body) {
			return 0, &CorruptError{Offset: -1, Msg: "record body shorter than its header says"}
		}
		v := DecodeValue(t, rec[body:body+int(size):body+int(size)])
		body += int(size)
		coll, desc := CollBinary, false
		if k != nil {
			if i < len(k.Colls) {
				coll = k.Colls[i]
			}
			if i < len(k.Desc) {
				desc = k.Desc[i]
			}
		}
		if c := CompareValues(v, key[i], coll); c != 0 {
			if desc {
				return -c, nil
			}
			return c, nil
		}
	}
	return 0, nil
}

// headerVarint decodes a serial type, with the one- and two-byte forms
// (every type below 16384: all but long texts and blobs) inline.
func headerVarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	if len(b) > 1 && b[1] < 0x80 {
		return uint64(b[0]&0x7f)<<7 | uint64(b[1]), 2
	}
	return Uvarint(b)
}

// ShortSerial reads the serial type at hdr[pos] (pos < len(hdr)) of a
// record header when it takes one or two bytes and is not reserved: nearly
// every type (all under 16384: values under 8 KiB). It returns the type,
// its body's size and where the next type starts; ok is false for anything
// else (a longer varint, a reserved type, a varint cut short), which the
// general paths read. It is small enough to inline in the loops that walk
// a header for every row read.
func ShortSerial(hdr []byte, pos int) (t uint64, size, next int, ok bool) {
	c := hdr[pos]
	if c < 0x80 {
		size = int(OneByteSerialSize[c])
		return uint64(c), size, pos + 1, size >= 0
	}
	if c > 0x80 && pos+1 < len(hdr) && hdr[pos+1] < 0x80 { // c is not 0x80: t >= 128
		t = uint64(c&0x7f)<<7 | uint64(hdr[pos+1])
		return t, int(t-12) >> 1, pos + 2, true
	}
	return 0, 0, 0, false
}

// ValueInts reads field 0 of rec, and its next len(ints) fields into ints
// as integers (IntField: a REAL's integer part, 0 for NULL, TEXT and
// BLOB), in one pass: an index entry that opens with a key and goes on
// with numbers, such as an archive's listing entry (name, mode, mtime, sz,
// rowid). Fields past them are not read. ok is false when rec has fewer
// fields or is malformed as far as they go, as RecordReader reads it.
//
// Its fast path, as FieldAt's: a header under 128 bytes whose serial types
// up to the last field read take one or two bytes each; RecordReader
// reads anything else.
func ValueInts(rec []byte, ints []int64) (v Value, ok bool) {
	if len(rec) == 0 {
		return valueInts(rec, ints)
	}
	h := int(rec[0])
	if uint(h-1) >= 0x7f || h > len(rec) { // 0, or a header of 128 bytes or more
		return valueInts(rec, ints)
	}
	hdr, off := rec[:h], h
	if h < 2 {
		return valueInts(rec, ints)
	}
	t, size, pos, ok := ShortSerial(hdr, 1)
	if !ok || size > len(rec)-off {
		return valueInts(rec, ints)
	}
	v = DecodeValue(t, rec[off:off+size:off+size])
	off += size
	for i := range ints {
		if pos >= len(hdr) {
			return valueInts(rec, ints)
		}
		if t, size, pos, ok = ShortSerial(hdr, pos); !ok || size > len(rec)-off {
			return valueInts(rec, ints)
		}
		ints[i] = IntField(t, rec[off:off+size])
		off += size
	}
	return v, true
}

// valueInts is ValueInts for any record.
func valueInts(rec []byte, ints []int64) (Value, bool) {
	r, err := NewRecordReader(rec)
	if err != nil {
		return Value{}, false
	}
	v, ok, err := r.Next()
	if !ok || err != nil {
		return Value{}, false
	}
	for i := range ints {
		f, ok, err := r.Next()
		if !ok || err != nil {
			return Value{}, false
		}
		ints[i] = f.Int()
	}
	return v, true
}
