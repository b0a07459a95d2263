package pagoda

import (
	"math"
	"strconv"
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
)

// Type is the storage class of a value, as SQLite's typeof() names it.
type Type uint8

const (
	TypeNull    Type = Type(format.KindNull)
	TypeInteger Type = Type(format.KindInt)
	TypeFloat   Type = Type(format.KindFloat)
	TypeText    Type = Type(format.KindText)
	TypeBlob    Type = Type(format.KindBlob)
)

// String returns SQLite's name of the type: null, integer, real, text, blob.
func (t Type) String() string {
	switch t {
	case TypeNull:
		return "null"
	case TypeInteger:
		return "integer"
	case TypeFloat:
		return "real"
	case TypeText:
		return "text"
	case TypeBlob:
		return "blob"
	}
	return "invalid"
}

// Value is one column of a record. Text and blob bytes alias the page (or
// the assembled payload): they are valid until the transaction ends.
type Value struct {
	v format.Value
}

// Type returns the value's storage class.
func (v Value) Type() Type { return Type(v.v.Kind) }

// IsNull reports whether the value is NULL.
func (v Value) IsNull() bool { return v.v.Kind == format.KindNull }

// Int returns an integer value; a REAL is truncated, anything else is 0.
func (v Value) Int() int64 { return v.v.Int() }

// Float returns a REAL value; an INTEGER is converted, anything else is 0.
func (v Value) Float() float64 { return v.v.Float() }

// Text returns a TEXT (or BLOB) value as a string (a copy).
func (v Value) Text() string { return string(v.v.Bytes) }

// Blob returns the bytes of a BLOB or TEXT value without copying; nil for
// other types. The slice is valid until the transaction ends.
func (v Value) Blob() []byte { return v.v.Bytes }

// Any returns the value as nil, int64, float64, string or []byte (the
// []byte aliases the page, as Blob does).
func (v Value) Any() any {
	switch v.v.Kind {
	case format.KindInt:
		return v.v.Int()
	case format.KindFloat:
		return v.v.Float()
	case format.KindText:
		return string(v.v.Bytes)
	case format.KindBlob:
		return v.v.Bytes
	}
	return nil
}

// String renders the value as sqlite3's list mode does (NULL as "").
func (v Value) String() string {
	switch v.v.Kind {
	case format.KindInt:
		return strconv.FormatInt(v.v.Int(), 10)
	case format.KindFloat:
		return FormatFloat(v.v.Float())
	case format.KindText, format.KindBlob:
		return string(v.v.Bytes)
	}
	return ""
}

// FormatFloat renders a REAL the way sqlite3 prints it: up to 15
// significant digits, always with a decimal point in the mantissa ("3.0",
// "1.0e+300", "1.5e-07"), Inf and -Inf for the infinities.
func FormatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return ""
	}
	s := strconv.FormatFloat(f, 'g', 15, 64)
	mant, exp, hasExp := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	if !hasExp {
		return mant
	}
	return mant + "e" + exp
}
