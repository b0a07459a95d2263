package pagoda

import (
	"fmt"
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
	// Value is 32 bytes and two fields so that the compiler keeps it in
	// registers: a larger struct is copied through memory, and the read
	// path paid a store-forwarding stall per column for it.
	b []byte // TEXT and BLOB bytes; a tag slice for INTEGER and REAL; nil for NULL
	n uint64 // INTEGER or REAL bits; the Type of TEXT and BLOB
}

// typeTags back the tag slices that mark INTEGER and REAL values.
var typeTags [2]byte

func intValue(i int64) Value     { return Value{b: typeTags[0:0:1], n: uint64(i)} }
func floatValue(f float64) Value { return Value{b: typeTags[1:1:2], n: math.Float64bits(f)} }

// bytesValue makes a TEXT or BLOB value; b must not be nil.
func bytesValue(t Type, b []byte) Value { return Value{b: b, n: uint64(t)} }

// valueOf converts a decoded field.
func valueOf(v format.Value) Value {
	switch v.Kind {
	case format.KindInt:
		return intValue(v.Int())
	case format.KindFloat:
		return floatValue(v.Float())
	case format.KindText, format.KindBlob:
		b := v.Bytes
		if b == nil {
			b = typeTags[0:0:0]
		}
		return bytesValue(Type(v.Kind), b)
	}
	return Value{}
}

// decodeValue decodes a field body of serial type t.
func decodeValue(t uint64, body []byte) Value {
	if t >= 12 {
		return Value{b: body, n: uint64(TypeBlob - Type(t&1))} // odd: TEXT
	}
	return decodeSmall(t, body)
}

// decodeSmall decodes the serial types below 12: NULL, integers, reals.
func decodeSmall(t uint64, body []byte) Value { return valueOf(format.DecodeValue(t, body)) }

// format converts back to the format package's representation.
func (v Value) format() format.Value {
	switch v.Type() {
	case TypeInteger:
		return format.IntValue(int64(v.n))
	case TypeFloat:
		return format.FloatValue(math.Float64frombits(v.n))
	case TypeText:
		return format.TextValue(v.b)
	case TypeBlob:
		return format.BlobValue(v.b)
	}
	return format.NullValue()
}

// Type returns the value's storage class.
func (v Value) Type() Type {
	if v.b == nil {
		return TypeNull
	}
	if len(v.b) == 0 && cap(v.b) == 1 {
		switch &v.b[:1][0] {
		case &typeTags[0]:
			return TypeInteger
		case &typeTags[1]:
			return TypeFloat
		}
	}
	return Type(v.n)
}

// IsNull reports whether the value is NULL.
func (v Value) IsNull() bool { return v.b == nil }

// Int returns an INTEGER value; a REAL is truncated, anything else is 0.
func (v Value) Int() int64 {
	switch v.Type() {
	case TypeInteger:
		return int64(v.n)
	case TypeFloat:
		return int64(math.Float64frombits(v.n))
	}
	return 0
}

// Float returns a REAL value; an INTEGER is converted, anything else is 0.
func (v Value) Float() float64 {
	switch v.Type() {
	case TypeInteger:
		return float64(int64(v.n))
	case TypeFloat:
		return math.Float64frombits(v.n)
	}
	return 0
}

// Text returns a TEXT (or BLOB) value as a string (a copy); "" otherwise.
func (v Value) Text() string { return string(v.Blob()) }

// Blob returns the bytes of a BLOB or TEXT value without copying; nil for
// other types. The slice is valid until the transaction ends.
func (v Value) Blob() []byte {
	// Bytes in b make a TEXT or BLOB: NULL's b is nil and the tag slices
	// of INTEGER and REAL are empty. So the common case costs one test;
	// an empty TEXT or BLOB takes Type's.
	if len(v.b) > 0 || v.Type() >= TypeText {
		return v.b
	}
	return nil
}

// Any returns the value as nil, int64, float64, string or []byte (the
// []byte aliases the page, as Blob does).
func (v Value) Any() any {
	switch v.Type() {
	case TypeInteger:
		return int64(v.n)
	case TypeFloat:
		return math.Float64frombits(v.n)
	case TypeText:
		return string(v.b)
	case TypeBlob:
		return v.b
	}
	return nil
}

// String renders the value as sqlite3's list mode does (NULL as "").
func (v Value) String() string {
	switch v.Type() {
	case TypeInteger:
		return strconv.FormatInt(int64(v.n), 10)
	case TypeFloat:
		return FormatFloat(math.Float64frombits(v.n))
	case TypeText, TypeBlob:
		return string(v.b)
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
	case f == 0:
		f = 0 // negative zero prints as 0.0
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

// toValue converts a Go value: nil, the integer types, float32/64, bool,
// string, []byte, or a Value.
func toValue(x any) (format.Value, error) {
	switch v := x.(type) {
	case nil:
		return format.NullValue(), nil
	case Value:
		return v.format(), nil
	case int:
		return format.IntValue(int64(v)), nil
	case int8:
		return format.IntValue(int64(v)), nil
	case int16:
		return format.IntValue(int64(v)), nil
	case int32:
		return format.IntValue(int64(v)), nil
	case int64:
		return format.IntValue(v), nil
	case uint8:
		return format.IntValue(int64(v)), nil
	case uint16:
		return format.IntValue(int64(v)), nil
	case uint32:
		return format.IntValue(int64(v)), nil
	case uint:
		if uint64(v) > math.MaxInt64 {
			return format.Value{}, fmt.Errorf("pagoda: %w: integer %d overflows int64", ErrUnsupported, v)
		}
		return format.IntValue(int64(v)), nil
	case uint64:
		if v > math.MaxInt64 {
			return format.Value{}, fmt.Errorf("pagoda: %w: integer %d overflows int64", ErrUnsupported, v)
		}
		return format.IntValue(int64(v)), nil
	case float32:
		return boundFloat(float64(v)), nil
	case float64:
		return boundFloat(v), nil
	case bool:
		if v {
			return format.IntValue(1), nil
		}
		return format.IntValue(0), nil
	case string:
		return format.TextValue([]byte(v)), nil
	case []byte:
		if v == nil {
			return format.NullValue(), nil
		}
		return format.BlobValue(v), nil
	}
	return format.Value{}, fmt.Errorf("pagoda: %w: cannot store a value of type %T", ErrUnsupported, x)
}

// boundFloat converts a float as SQLite binds one: NaN is NULL.
func boundFloat(f float64) format.Value {
	if math.IsNaN(f) {
		return format.NullValue()
	}
	return format.FloatValue(f)
}
