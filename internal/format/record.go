package format

import (
	"encoding/binary"
	"math"
	"slices"
)

// A record (the payload of a table row or an index entry):
//
//	varint H                  header length in bytes, counting this varint
//	varint serialType[0..n-1] the rest of the header
//	body[0] .. body[n-1]      the values, concatenated, no padding
//
// Serial types:
//
//	TYPE   BODY      MEANING
//	0      0         NULL
//	1..4   1,2,3,4   big-endian two's complement integer
//	5      6         48-bit integer
//	6      8         64-bit integer
//	7      8         IEEE-754 binary64, big-endian
//	8, 9   0         the integers 0 and 1 (schema format 4)
//	10, 11 -         reserved, never written; NULL in a rowid table's row
//	                 (CheckRow, RowFieldAt), malformed elsewhere
//	N>=12, even      BLOB of (N-12)/2 bytes
//	N>=13, odd       TEXT of (N-13)/2 bytes, UTF-8, no terminator

// Kind is the storage class of a value.
type Kind uint8

const (
	KindNull Kind = iota
	KindInt
	KindFloat
	KindText
	KindBlob
)

func (k Kind) String() string {
	switch k {
	case KindNull:
		return "NULL"
	case KindInt:
		return "INTEGER"
	case KindFloat:
		return "REAL"
	case KindText:
		return "TEXT"
	case KindBlob:
		return "BLOB"
	}
	return "invalid"
}

// Value is one decoded field. Bytes (text and blob) alias the record.
type Value struct {
	Kind  Kind
	num   uint64 // int64 or float64 bits
	Bytes []byte
}

// IntValue, FloatValue, TextValue, BlobValue and NullValue build values.
func IntValue(v int64) Value     { return Value{Kind: KindInt, num: uint64(v)} }
func FloatValue(f float64) Value { return Value{Kind: KindFloat, num: math.Float64bits(f)} }
func TextValue(b []byte) Value   { return Value{Kind: KindText, Bytes: b} }
func BlobValue(b []byte) Value   { return Value{Kind: KindBlob, Bytes: b} }
func NullValue() Value           { return Value{} }

// Int returns an integer value (0 for other kinds; floats are truncated).
func (v Value) Int() int64 {
	switch v.Kind {
	case KindInt:
		return int64(v.num)
	case KindFloat:
		return int64(math.Float64frombits(v.num))
	}
	return 0
}

// Float returns a float value (integers are converted; 0 for other kinds).
func (v Value) Float() float64 {
	switch v.Kind {
	case KindInt:
		return float64(int64(v.num))
	case KindFloat:
		return math.Float64frombits(v.num)
	}
	return 0
}

// smallSerialSize holds the body sizes of serial types 0..11 (-1: reserved).
var smallSerialSize = [12]int8{0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1}

// SerialTypeSize returns the body size of serial type t; ok is false for the
// reserved types 10 and 11.
func SerialTypeSize(t uint64) (n int64, ok bool) {
	if t >= 12 {
		return int64((t - 12) >> 1), true // shift first: t may exceed MaxInt64
	}
	n = int64(smallSerialSize[t])
	return n, n >= 0
}

// DecodeValue decodes a body of serial type t. body must hold exactly
// SerialTypeSize(t) bytes. Text and blobs, the common case, inline.
func DecodeValue(t uint64, body []byte) Value {
	if t >= 12 {
		return Value{Kind: KindBlob - Kind(t&1), Bytes: body} // odd: text
	}
	return decodeSmall(t, body)
}

// decodeSmall decodes the serial types below 12: NULL, integers, reals.
func decodeSmall(t uint64, body []byte) Value {
	switch {
	case t == 0:
		return Value{}
	case t <= 6:
		return IntValue(IntField(t, body))
	case t == 7:
		u := binary.BigEndian.Uint64(body)
		if math.IsNaN(math.Float64frombits(u)) {
			// SQLite reads a stored NaN as NULL (sqlite3VdbeSerialGet);
			// keeping it would also break AppendRecord round trips.
			return Value{}
		}
		return Value{Kind: KindFloat, num: u}
	case t == 8:
		return IntValue(0)
	case t == 9:
		return IntValue(1)
	}
	return Value{}
}

// IntField returns the integer that a field of serial type t with body
// body reads as, as Value.Int reads DecodeValue's: a big-endian two's
// complement integer of 1 to 8 bytes (types 1 to 6), a REAL's integer
// part, 0 and 1 (types 8 and 9), and 0 for NULL, TEXT and BLOB. body must
// hold exactly SerialTypeSize(t) bytes. The integers are decoded without
// a loop: a listing reads several a row.
func IntField(t uint64, b []byte) int64 {
	switch t {
	case 1:
		return int64(int8(b[0]))
	case 2:
		return int64(int16(binary.BigEndian.Uint16(b)))
	case 3:
		return int64(int32(uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8) >> 8)
	case 4:
		return int64(int32(binary.BigEndian.Uint32(b)))
	case 5:
		return int64(uint64(b[0])<<56|uint64(b[1])<<48|uint64(b[2])<<40|uint64(b[3])<<32|uint64(b[4])<<24|uint64(b[5])<<16) >> 16
	case 6:
		return int64(binary.BigEndian.Uint64(b))
	case 7:
		return decodeSmall(t, b).Int()
	case 9:
		return 1
	}
	return 0
}

// RecordReader walks the fields of a record in order without allocating.
type RecordReader struct {
	rec     []byte
	hdr     int // next position in the header
	hdrEnd  int
	body    int // next position in the body
	nFields int // fields read so far
}

// NewRecordReader checks the header length of rec and returns a reader.
func NewRecordReader(rec []byte) (RecordReader, error) {
	h, n := Uvarint(rec)
	if n == 0 || h < uint64(n) || h > uint64(len(rec)) {
		return RecordReader{}, &CorruptError{Offset: -1, Msg: "record header length out of range"}
	}
	return RecordReader{rec: rec, hdr: n, hdrEnd: int(h), body: int(h)}, nil
}

// Next returns the next field; ok is false at the end of the record.
func (r *RecordReader) Next() (v Value, ok bool, err error) {
	if r.hdr >= r.hdrEnd {
		return Value{}, false, nil
	}
	t, n := Uvarint(r.rec[r.hdr:r.hdrEnd])
	if n == 0 {
		return Value{}, false, &CorruptError{Offset: -1, Msg: "record header ends inside a serial type"}
	}
	size, valid := SerialTypeSize(t)
	if !valid {
		return Value{}, false, &CorruptError{Offset: -1, Msg: "reserved serial type in record"}
	}
	if size > int64(len(r.rec)-r.body) {
		return Value{}, false, &CorruptError{Offset: -1, Msg: "record body shorter than its header says"}
	}
	r.hdr += n
	v = DecodeValue(t, r.rec[r.body:r.body+int(size):r.body+int(size)])
	r.body += int(size)
	r.nFields++
	return v, true, nil
}

// Skip passes over the next field without decoding it; ok is false at the end.
func (r *RecordReader) Skip() (ok bool, err error) {
	if r.hdr >= r.hdrEnd {
		return false, nil
	}
	t, n := Uvarint(r.rec[r.hdr:r.hdrEnd])
	if n == 0 {
		return false, &CorruptError{Offset: -1, Msg: "record header ends inside a serial type"}
	}
	size, valid := SerialTypeSize(t)
	if !valid {
		return false, &CorruptError{Offset: -1, Msg: "reserved serial type in record"}
	}
	if size > int64(len(r.rec)-r.body) {
		return false, &CorruptError{Offset: -1, Msg: "record body shorter than its header says"}
	}
	r.hdr += n
	r.body += int(size)
	r.nFields++
	return true, nil
}

// RecordField returns field i of rec, or ok false when the record has fewer
// fields (a row written before ALTER TABLE ADD COLUMN).
func RecordField(rec []byte, i int) (v Value, ok bool, err error) {
	r, err := NewRecordReader(rec)
	if err != nil {
		return Value{}, false, err
	}
	for ; i > 0; i-- {
		ok, err := r.Skip()
		if !ok || err != nil {
			return Value{}, false, err
		}
	}
	return r.Next()
}

// RecordFieldCount returns the number of fields in rec.
func RecordFieldCount(rec []byte) (int, error) {
	r, err := NewRecordReader(rec)
	if err != nil {
		return 0, err
	}
	n := 0
	for r.hdr < r.hdrEnd {
		_, m := Uvarint(r.rec[r.hdr:r.hdrEnd])
		if m == 0 {
			return 0, &CorruptError{Offset: -1, Msg: "record header ends inside a serial type"}
		}
		r.hdr += m
		n++
	}
	return n, nil
}

// SerialType returns the serial type pagoda writes for v: the smallest
// integer type (8 and 9 for 0 and 1), 7 for floats, the length-coded
// text and blob types. NaN is stored as NULL, as SQLite does.
func SerialType(v Value) uint64 {
	switch v.Kind {
	case KindInt:
		i := int64(v.num)
		switch {
		case i == 0:
			return 8
		case i == 1:
			return 9
		case i >= math.MinInt8 && i <= math.MaxInt8:
			return 1
		case i >= math.MinInt16 && i <= math.MaxInt16:
			return 2
		case i >= -1<<23 && i < 1<<23:
			return 3
		case i >= math.MinInt32 && i <= math.MaxInt32:
			return 4
		case i >= -1<<47 && i < 1<<47:
			return 5
		}
		return 6
	case KindFloat:
		if math.IsNaN(math.Float64frombits(v.num)) {
			return 0
		}
		return 7
	case KindText:
		return uint64(len(v.Bytes))*2 + 13
	case KindBlob:
		return uint64(len(v.Bytes))*2 + 12
	}
	return 0
}

// RecordSize returns the encoded size of a record holding vals.
func RecordSize(vals []Value) int {
	hdr, body := 0, 0
	for _, v := range vals {
		t := SerialType(v)
		hdr += VarintLen(t)
		n, _ := SerialTypeSize(t)
		body += int(n)
	}
	return headerLenSize(hdr) + hdr + body
}

// RecordTooBig reports whether the record of vals would be longer than
// MaxLength. It adds the values' lengths first, and computes the record's
// exact size only when that sum comes near the limit.
func RecordTooBig(vals []Value) bool {
	n := 0
	for _, v := range vals {
		n += len(v.Bytes)
	}
	if n+(len(vals)+1)*MaxVarintLen < MaxLength {
		return false
	}
	return RecordSize(vals) > MaxLength
}

// headerLenSize is the size of the header-length varint for a header whose
// serial types take hdr bytes (the varint counts itself).
func headerLenSize(hdr int) int {
	n := VarintLen(uint64(hdr + 1))
	if VarintLen(uint64(hdr+n)) > n {
		n++
	}
	return n
}

// AppendRecord appends the record encoding of vals to dst.
func AppendRecord(dst []byte, vals []Value) []byte {
	if len(vals) > maxFastFields {
		return appendRecordWide(dst, vals)
	}
	// Each value's serial type once, then the header and the bodies.
	var types [maxFastFields]uint64
	hdr, body := 0, 0
	for i := range vals {
		t := SerialType(vals[i])
		types[i] = t
		hdr += VarintLen(t)
		if t >= 12 {
			body += len(vals[i].Bytes)
		} else {
			body += int(smallSerialSize[t])
		}
	}
	hlen := hdr + headerLenSize(hdr)
	dst = slices.Grow(dst, hlen+body)
	dst = AppendUvarint(dst, uint64(hlen))
	for _, t := range types[:len(vals)] {
		dst = AppendUvarint(dst, t)
	}
	for i, t := range types[:len(vals)] {
		dst = appendBody(dst, t, &vals[i])
	}
	return dst
}

// maxFastFields is the most fields AppendRecord encodes with their serial
// types kept on the stack.
const maxFastFields = 32

// appendRecordWide is AppendRecord for a record of many fields: each
// serial type is worked out three times instead of kept.
func appendRecordWide(dst []byte, vals []Value) []byte {
	hdr := 0
	for i := range vals {
		hdr += VarintLen(SerialType(vals[i]))
	}
	dst = AppendUvarint(dst, uint64(hdr+headerLenSize(hdr)))
	for i := range vals {
		dst = AppendUvarint(dst, SerialType(vals[i]))
	}
	for i := range vals {
		dst = appendBody(dst, SerialType(vals[i]), &vals[i])
	}
	return dst
}

// appendBody appends the body of v, of serial type t.
func appendBody(dst []byte, t uint64, v *Value) []byte {
	switch {
	case t >= 1 && t <= 6:
		n := int(smallSerialSize[t])
		x := v.num
		for i := n - 1; i >= 0; i-- {
			dst = append(dst, byte(x>>(8*uint(i))))
		}
	case t == 7:
		dst = binary.BigEndian.AppendUint64(dst, v.num)
	case t >= 12:
		dst = append(dst, v.Bytes...)
	}
	return dst
}
