package expr

import (
	"math"
	"strconv"
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// ComparisonAffinity is the affinity SQLite gives a value compared with a
// column of affinity a (a bound parameter in WHERE col = ?, a key looked
// up): NUMERIC for the numeric affinities, whichever (so that an INTEGER
// compared with a REAL column is not rounded to a float: 2^63-1 does not
// equal the REAL 2^63), TEXT for TEXT, none for BLOB.
func ComparisonAffinity(a schema.Affinity) schema.Affinity {
	switch a {
	case schema.AffinityInteger, schema.AffinityReal:
		return schema.AffinityNumeric
	}
	return a
}

// AffinityChanges reports whether ApplyAffinity may change a value of kind
// k for a column of affinity a: a check small enough to inline, so that a
// write calls ApplyAffinity only for the values it converts.
func AffinityChanges(k format.Kind, a schema.Affinity) bool {
	switch a {
	case schema.AffinityText:
		return k == format.KindInt || k == format.KindFloat
	case schema.AffinityInteger, schema.AffinityNumeric:
		return k == format.KindText || k == format.KindFloat
	case schema.AffinityReal:
		return k == format.KindText || k == format.KindInt
	}
	return false
}

// ApplyAffinity converts v as SQLite does before storing it in (or comparing
// it with) a column of affinity a.
func ApplyAffinity(v format.Value, a schema.Affinity) format.Value {
	switch a {
	case schema.AffinityText:
		switch v.Kind {
		case format.KindInt:
			return format.TextValue(strconv.AppendInt(nil, v.Int(), 10))
		case format.KindFloat:
			return format.TextValue([]byte(realText(v.Float())))
		}
	case schema.AffinityInteger, schema.AffinityNumeric:
		switch v.Kind {
		case format.KindText:
			if n, ok := parseNumber(string(v.Bytes)); ok {
				return integral(n)
			}
		case format.KindFloat:
			return integral(v)
		}
	case schema.AffinityReal:
		switch v.Kind {
		case format.KindText:
			if n, ok := parseNumber(string(v.Bytes)); ok {
				// SQLite takes a number that is also an integer
				// through one (alsoAnInt): "-0.0" is 0.0.
				f := n.Float()
				if f == 0 {
					f = 0
				}
				return format.FloatValue(f)
			}
		case format.KindInt:
			return format.FloatValue(float64(v.Int()))
		}
	}
	return v
}

// integral turns a REAL with an exact integer value into an INTEGER.
func integral(v format.Value) format.Value {
	if v.Kind != format.KindFloat {
		return v
	}
	f := v.Float()
	if f > -9223372036854775808.0 && f < 9223372036854775807.0 && f == math.Trunc(f) {
		return format.IntValue(int64(f))
	}
	return v
}

// parseNumber recognizes text that SQLite's numeric affinities convert: an
// optional sign, digits with an optional fraction and exponent, surrounded
// by optional spaces. Integers that fit int64 stay integers.
func parseNumber(s string) (format.Value, bool) {
	hadNUL := false
	if i := strings.IndexByte(s, 0); i >= 0 {
		s, hadNUL = s[:i], true // SQLite (3.43 and later) reads a number up to a NUL byte
	}
	s = strings.Trim(s, " \t\n\f\r\v")
	if s == "" {
		return format.Value{}, false
	}
	body := s
	if body[0] == '+' || body[0] == '-' {
		body = body[1:]
	}
	digits, isInt := 0, true
	i := 0
	for i < len(body) && body[i] >= '0' && body[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(body) && body[i] == '.' {
		isInt = false
		i++
		for i < len(body) && body[i] >= '0' && body[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return format.Value{}, false
	}
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		isInt = false
		i++
		if i < len(body) && (body[i] == '+' || body[i] == '-') {
			i++
		}
		exp := 0
		for i < len(body) && body[i] >= '0' && body[i] <= '9' {
			i, exp = i+1, exp+1
		}
		if exp == 0 {
			return format.Value{}, false
		}
	}
	if i != len(body) {
		return format.Value{}, false
	}
	if isInt && hadNUL {
		// applyNumericAffinity's alsoAnInt: the number read up to the NUL
		// is an INTEGER when its double is one it holds exactly (within
		// 2^51), else sqlite3Atoi64 decides on the whole text, and the NUL
		// is text after the digits: a REAL ("9223372036854775807\x00" is
		// 9.223372036854776e+18).
		f, _ := strconv.ParseFloat(s, 64)
		if i := int64(f); f == 0 || float64(i) == f && i >= -1<<51 && i < 1<<51 {
			return format.IntValue(i), true
		}
		return format.FloatValue(f), true
	}
	if isInt {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return format.IntValue(n), true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return format.Value{}, false
	}
	return format.FloatValue(f), true
}

func KindName(k format.Kind) string {
	switch k {
	case format.KindInt:
		return "INT" // as SQLite's message names it
	case format.KindFloat:
		return "REAL"
	case format.KindText:
		return "TEXT"
	case format.KindBlob:
		return "BLOB"
	}
	return "NULL"
}
