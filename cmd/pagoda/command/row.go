package command

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/pagodadb/pagoda"
)

// jsonHelp documents the JSON row format shared by scan --json and get.
const jsonHelp = `JSON rows are one JSON array per line, columns in declared order:
  INTEGER   a JSON number, exact (all 64 bits; no float conversion)
  REAL      a JSON number that parses back to the same float64, always
            with a "." or an exponent (3.0, 0.1, 1e+300) so that it reads
            as a real; +Inf and -Inf are written 1e999 and -1e999 (most
            parsers read them back as infinities); NaN as null
  TEXT      a JSON string; text that is not valid UTF-8 is written as
            {"text_hex":"<lowercase hex of the bytes>"} so that no byte is lost
  BLOB      {"blob":"<lowercase hex>"}
  NULL      null
The INTEGER PRIMARY KEY column shows the rowid, as sqlite3 shows it.
Input lines must be valid UTF-8, and their strings hold no \uXXXX escape
of half a surrogate pair: such a line is refused (its line and column
named), never stored with U+FFFD in place of the bytes given.`

// appendJSONRow appends rec as a JSON array and a newline.
func appendJSONRow(dst []byte, rec pagoda.Record) []byte {
	dst = append(dst, '[')
	for i := 0; i < rec.Len(); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONValue(dst, rec.Column(i))
	}
	return append(dst, ']', '\n')
}

// appendJSONValue appends v in the format of jsonHelp.
func appendJSONValue(dst []byte, v pagoda.Value) []byte {
	switch v.Type() {
	case pagoda.TypeInteger:
		return strconv.AppendInt(dst, v.Int(), 10)
	case pagoda.TypeFloat:
		return appendJSONFloat(dst, v.Float())
	case pagoda.TypeText:
		b := v.Blob()
		if !utf8.Valid(b) {
			dst = append(dst, `{"text_hex":"`...)
			dst = hex.AppendEncode(dst, b)
			return append(dst, `"}`...)
		}
		return appendJSONString(dst, b)
	case pagoda.TypeBlob:
		dst = append(dst, `{"blob":"`...)
		dst = hex.AppendEncode(dst, v.Blob())
		return append(dst, `"}`...)
	}
	return append(dst, "null"...)
}

// appendJSONFloat appends f as the shortest JSON number that parses back
// to f, keeping a ".0" on whole numbers so that a REAL stays
// distinguishable from an INTEGER.
func appendJSONFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "null"...)
	case math.IsInf(f, 1):
		return append(dst, "1e999"...)
	case math.IsInf(f, -1):
		return append(dst, "-1e999"...)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' {
			return dst
		}
	}
	return append(dst, '.', '0')
}

// appendJSONString appends valid UTF-8 text s as a JSON string.
func appendJSONString(dst []byte, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i, c := range s {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendListRow appends rec as sqlite3's list mode prints it: columns
// separated by '|', NULL as nothing, REALs as sqlite3 renders them, text
// and blobs as their raw bytes (blobs as hex when hexBlobs is set), then a
// newline.
func appendListRow(dst []byte, rec pagoda.Record, hexBlobs bool) []byte {
	return appendSeparated(dst, rec, '|', hexBlobs, func(dst, b []byte) []byte { return append(dst, b...) })
}

// appendSeparated appends rec's columns separated by sep, then a newline:
// NULL as nothing, numbers as sqlite3 prints them, text and blobs through
// field (blobs as hex when hexBlobs is set).
func appendSeparated(dst []byte, rec pagoda.Record, sep byte, hexBlobs bool, field func(dst, b []byte) []byte) []byte {
	for i := 0; i < rec.Len(); i++ {
		if i > 0 {
			dst = append(dst, sep)
		}
		v := rec.Column(i)
		switch v.Type() {
		case pagoda.TypeInteger:
			dst = strconv.AppendInt(dst, v.Int(), 10)
		case pagoda.TypeFloat:
			dst = append(dst, pagoda.FormatFloat(v.Float())...)
		case pagoda.TypeText:
			dst = field(dst, v.Blob())
		case pagoda.TypeBlob:
			if hexBlobs {
				dst = hex.AppendEncode(dst, v.Blob())
			} else {
				dst = field(dst, v.Blob())
			}
		}
	}
	return append(dst, '\n')
}

// keyArg is a key given on the command line, converted for table t: a rowid
// for rowid tables, bytes for buckets (hex-decoded when isHex), and for
// other WITHOUT ROWID tables the single primary-key column's value, an
// integer if it parses as one, else text.
type keyArg struct {
	rowid int64
	pk    any
}

func parseKey(t *pagoda.Table, s string, isHex bool) (keyArg, error) {
	switch {
	case !t.WithoutRowID():
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return keyArg{}, fmt.Errorf("%s: rowid %q is not an integer", t.Name(), s)
		}
		return keyArg{rowid: n}, nil
	case t.IsBucket():
		if !isHex {
			return keyArg{pk: append([]byte{}, s...)}, nil // "" is the empty key, not NULL
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			return keyArg{}, fmt.Errorf("%s: key %q is not hex: %v", t.Name(), s, err)
		}
		if b == nil {
			b = []byte{} // the empty key, not NULL
		}
		return keyArg{pk: b}, nil
	}
	nPK := 0
	for _, c := range t.Columns() {
		if c.PrimaryKey {
			nPK++
		}
	}
	if nPK > 1 {
		return keyArg{}, fmt.Errorf("%s: primary key has %d columns; only single-column keys can be given on the command line", t.Name(), nPK)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return keyArg{pk: n}, nil
	}
	return keyArg{pk: s}, nil
}
