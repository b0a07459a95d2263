package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// Collation is a text comparison rule of SQLite.
type Collation uint8

const (
	CollBinary Collation = iota // memcmp, then shorter first
	CollNoCase                  // ASCII A-Z folded to a-z, then binary
	CollRTrim                   // trailing spaces ignored, then binary
)

// NOCASE and RTRIM over the text of a UTF-16 database. SQLite defines them
// for UTF-8 only, so it converts both UTF-16 operands to UTF-8 (see
// UTF16ToUTF8) and compares those; BINARY, defined for every encoding,
// compares the stored UTF-16 bytes (memcmp). ForEncoding gives these.
const (
	collUTF16LE Collation = 0x10 // or'ed into CollNoCase or CollRTrim: operands are UTF-16le
	collUTF16BE Collation = 0x20 // the same for UTF-16be
	collUTF16   Collation = collUTF16LE | collUTF16BE
)

// ForEncoding returns the collation c as it compares the text of a
// database of text encoding enc (header offset 56): c itself for UTF-8 and
// for BINARY; for NOCASE and RTRIM in a UTF-16 database, c after
// converting both operands to UTF-8, as SQLite does.
func (c Collation) ForEncoding(enc uint32) Collation {
	if c != CollNoCase && c != CollRTrim {
		return c
	}
	switch enc {
	case TextEncodingUTF16LE:
		return c | collUTF16LE
	case TextEncodingUTF16BE:
		return c | collUTF16BE
	}
	return c
}

// KeyInfo tells how index key fields compare: field i uses Colls[i] and is
// inverted when Desc[i]; fields beyond the slices compare BINARY ascending.
type KeyInfo struct {
	Colls []Collation
	Desc  []bool
	// Other names an application-defined collation of one of the fields
	// (as sqlite3 has none of its own but BINARY, NOCASE and RTRIM, such a
	// key's order is the application's): every comparison under the
	// KeyInfo then fails with an error wrapping ErrUnsupported, as sqlite3
	// fails a statement that needs it.
	Other string
}

// otherErr is the error of a comparison under a KeyInfo with an
// application-defined collation; nil when there is none.
func (k *KeyInfo) otherErr() error {
	if k == nil || k.Other == "" {
		return nil
	}
	return fmt.Errorf("%w: no such collation sequence: %s", ErrUnsupported, k.Other)
}

// classOrder ranks storage classes: NULL < numbers < TEXT < BLOB. A NaN
// float ranks as the NULL it is stored as.
func classOrder(v Value) int {
	switch v.Kind {
	case KindNull:
		return 0
	case KindInt:
		return 1
	case KindFloat:
		if math.IsNaN(math.Float64frombits(v.num)) {
			return 0
		}
		return 1
	case KindText:
		return 2
	}
	return 3
}

// CompareValues orders two values as SQLite does for index keys.
func CompareValues(a, b Value, coll Collation) int {
	ca, cb := classOrder(a), classOrder(b)
	if ca != cb {
		return cmpInt(ca, cb)
	}
	switch ca {
	case 0:
		return 0
	case 1:
		return compareNumbers(a, b)
	case 2:
		return CompareText(a.Bytes, b.Bytes, coll)
	}
	return bytes.Compare(a.Bytes, b.Bytes)
}

func cmpInt[T int | int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareNumbers compares by exact value, ints against reals included.
func compareNumbers(a, b Value) int {
	switch {
	case a.Kind == KindInt && b.Kind == KindInt:
		return cmpInt(int64(a.num), int64(b.num))
	case a.Kind == KindFloat && b.Kind == KindFloat:
		return cmpInt(a.Float(), b.Float())
	case a.Kind == KindInt:
		return compareIntFloat(int64(a.num), b.Float())
	}
	return -compareIntFloat(int64(b.num), a.Float())
}

// compareIntFloat compares i with f without rounding i to a float.
func compareIntFloat(i int64, f float64) int {
	switch {
	case math.IsNaN(f):
		return 1 // NaN is stored as NULL; treat as smallest number
	case f < -9223372036854775808.0:
		return 1
	case f >= 9223372036854775808.0:
		return -1
	}
	t := int64(f) // exact truncation toward zero in range
	if i != t {
		return cmpInt(i, t)
	}
	return cmpInt(float64(0), f-float64(t))
}

// CompareText compares two UTF-8 strings under a collation (two UTF-16
// strings under a collation from ForEncoding).
func CompareText(a, b []byte, coll Collation) int {
	switch coll {
	case CollNoCase:
		// sqlite3StrNICmp stops at a NUL byte: after a NUL both strings
		// share, only the lengths decide ('a\x00b' = 'a\x00c').
		n := min(len(a), len(b))
		for i := 0; i < n; i++ {
			x, y := foldASCII(a[i]), foldASCII(b[i])
			if x != y {
				return cmpInt(int(x), int(y))
			}
			if x == 0 {
				break
			}
		}
		return cmpInt(len(a), len(b))
	case CollRTrim:
		return bytes.Compare(bytes.TrimRight(a, " "), bytes.TrimRight(b, " "))
	}
	if coll&collUTF16 != 0 {
		return compareUTF16(a, b, coll)
	}
	return bytes.Compare(a, b)
}

// compareUTF16 is CompareText under NOCASE or RTRIM for UTF-16 text: both
// operands converted to UTF-8, as SQLite's vdbeCompareMemString does when
// the collation's encoding is not the database's.
func compareUTF16(a, b []byte, coll Collation) int {
	enc := uint32(TextEncodingUTF16BE)
	if coll&collUTF16LE != 0 {
		enc = TextEncodingUTF16LE
	}
	var abuf, bbuf [64]byte
	a8 := UTF16ToUTF8(abuf[:0], a, enc)
	b8 := UTF16ToUTF8(bbuf[:0], b, enc)
	return CompareText(a8, b8, coll&^collUTF16)
}

func foldASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// CompareRecords compares two records field by field over the fields both
// have, and returns 0 when those are all equal: the caller decides what a
// shorter key (a prefix) means.
func CompareRecords(a, b []byte, k *KeyInfo) (int, error) {
	return compareFields(a, b, k, math.MaxInt)
}

// compareFields compares the first n fields of two records (fewer when
// either has fewer), each under k's collation and order for it.
func compareFields(a, b []byte, k *KeyInfo, n int) (int, error) {
	if err := k.otherErr(); err != nil {
		return 0, err
	}
	ra, err := NewRecordReader(a)
	if err != nil {
		return 0, err
	}
	rb, err := NewRecordReader(b)
	if err != nil {
		return 0, err
	}
	for i := 0; i < n; i++ {
		va, oka, err := ra.Next()
		if err != nil {
			return 0, err
		}
		vb, okb, err := rb.Next()
		if err != nil {
			return 0, err
		}
		if !oka || !okb {
			return 0, nil
		}
		coll := CollBinary
		desc := false
		if k != nil {
			if i < len(k.Colls) {
				coll = k.Colls[i]
			}
			if i < len(k.Desc) {
				desc = k.Desc[i]
			}
		}
		if c := CompareValues(va, vb, coll); c != 0 {
			if desc {
				return -c, nil
			}
			return c, nil
		}
	}
	return 0, nil
}

// KeyPrefix64 returns the first 8 bytes of b as a big-endian number, b
// padded with zeros: an order of keys that interpolation can guess from.
func KeyPrefix64(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	var p [8]byte
	copy(p[:], b)
	return binary.BigEndian.Uint64(p[:])
}

// CompareKeyBytes compares two keys byte by byte, as bytes.Compare does:
// keys of 8 bytes or more (integers written big-endian, UUIDs) mostly
// differ in their first 8, compared as one word, without bytes.Compare's
// call.
func CompareKeyBytes(a, b []byte) int {
	if len(a) >= 8 && len(b) >= 8 {
		if x, y := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b); x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return bytes.Compare(a, b)
}
