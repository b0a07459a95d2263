package expr

import (
	"math"
	"strconv"
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// defaultFor is the value of a DEFAULT clause s for the rows older than
// its column, in a database of text encoding enc, as SQLite's
// valueFromExpr computes it: literals as defaultValue reads them, unary
// plus and minus, and CAST: its operand computed under the CAST's affinity
// (so CAST(1.50 AS TEXT) keeps the spelling '1.50'), then cast (to a BLOB,
// a text's bytes in the database's encoding), then the column's affinity.
// valueFromExpr makes no value of any other expression, an operator's, a
// function's, CURRENT_TIMESTAMP's: such a default reads as NULL, as in
// SQLite (ALTER TABLE ADD COLUMN refuses it on a table with rows, but a
// schema edited in place has it).
func defaultFor(s string, aff schema.Affinity, enc uint32) format.Value {
	e, err := schema.ParseExpr(s)
	if err != nil {
		return format.NullValue() // no expression valueFromExpr evaluates
	}
	return defaultExpr(e, aff, enc)
}

func hasCast(e *schema.Expr) bool {
	if e.Op == schema.OpCast {
		return true
	}
	for _, a := range e.Args {
		if hasCast(a) {
			return true
		}
	}
	return false
}

func defaultExpr(e *schema.Expr, aff schema.Affinity, enc uint32) format.Value {
	switch e.Op {
	case schema.OpPlus:
		return defaultExpr(e.Args[0], aff, enc)
	case schema.OpCast:
		v := defaultExpr(e.Args[0], e.Aff, enc)
		if e.Aff == schema.AffinityBlob && v.Kind == format.KindText && format.IsUTF16(enc) {
			v = format.BlobValue(format.UTF8ToUTF16(nil, v.Bytes, enc))
		}
		return ApplyAffinity(castValue(v, e.Aff), aff)
	case schema.OpLiteral, schema.OpColumn: // a bare name is a string
		return defaultValue(e.String(), aff)
	case schema.OpNegate:
		if !hasCast(e) {
			return defaultValue(e.String(), aff)
		}
		return negateDefault(defaultExpr(e.Args[0], aff, enc), aff)
	case schema.OpIs:
		// SQLite's parser folds a literal's IS [NOT] NULL into FALSE or
		// TRUE (sqlite3PExprIsNull), which valueFromExpr reads.
		x := e.Args[0]
		if x.Op == schema.OpNegate {
			x = x.Args[0]
		}
		if y := e.Args[1]; y.Op == schema.OpLiteral && y.Lit == schema.LitNull && x.Op == schema.OpLiteral && x.Lit != schema.LitNull && x.Lit != schema.LitBool {
			v := int64(0) // IS NULL: false
			if e.Not {
				v = 1
			}
			return ApplyAffinity(format.IntValue(v), aff)
		}
	}
	return format.NullValue()
}

// defaultValue evaluates a DEFAULT clause for a column of affinity aff as
// SQLite's valueFromExpr does when it reads a row older than the column:
// literals (numbers keep their spelling until affinity converts them; hex
// integers; 'strings'; x'blobs'; NULL, TRUE, FALSE; a bare identifier is a
// string), unary plus and minus. Other expressions read as NULL: see
// defaultFor, which takes CAST.
//
// The rules are those of the SQLite that pagoda's differential tests run
// (modernc.org/sqlite, 3.54.1). Older releases differ and read the same
// file otherwise: sqlite3 3.40 gives a float literal NUMERIC affinity in a
// column without one (1.0 reads 1), keeps a hex literal beyond 31 bits as
// its text ('0x80000000'), and gives TRUE no affinity (1 in a TEXT column).
func defaultValue(s string, aff schema.Affinity) format.Value {
	s = trimParens(s)
	if s == "" {
		return format.NullValue()
	}
	switch s[0] {
	case '+':
		return defaultValue(s[1:], aff)
	case '-':
		// A minus on a decimal or float literal negates its text in one
		// step, so -5.0 in a TEXT column keeps its spelling. Parentheses
		// leave no node and the parser folds -(+x) into -x, so -(+5.0) is
		// that too. A hex literal is evaluated alone, under the column's
		// affinity, then negated as any other operand: -0x8000000000000000
		// is +9.223372036854775808e18.
		rest := trimParens(s[1:])
		for strings.HasPrefix(rest, "+") {
			rest = trimParens(rest[1:])
		}
		if isIntLiteral(rest) && !isHexLiteral(rest) {
			if v, ok := decOrHex(rest); ok {
				return ApplyAffinity(format.IntValue(-v), aff)
			}
		}
		if isIntLiteral(rest) && !isHexLiteral(rest) || isFloatLiteral(rest) {
			return numericLiteral("-"+rest, aff)
		}
		return negateDefault(defaultValue(rest, aff), aff)
	case '\'':
		if len(s) >= 2 && s[len(s)-1] == '\'' {
			return ApplyAffinity(format.TextValue([]byte(strings.ReplaceAll(s[1:len(s)-1], "''", "'"))), aff)
		}
		return format.NullValue()
	case '"', '`', '[':
		if name, ok := unquoteIdent(s); ok {
			return ApplyAffinity(format.TextValue([]byte(name)), aff)
		}
		return format.NullValue()
	}
	if isIntLiteral(s) {
		if v, ok := decOrHex(s); ok {
			return ApplyAffinity(format.IntValue(v), aff)
		}
		return numericLiteral(s, aff)
	}
	if isFloatLiteral(s) {
		return numericLiteral(s, aff)
	}
	if len(s) >= 3 && (s[0] == 'x' || s[0] == 'X') && s[1] == '\'' && s[len(s)-1] == '\'' {
		if b, ok := decodeHex(s[2 : len(s)-1]); ok {
			return format.BlobValue(b)
		}
		return format.NullValue()
	}
	switch strings.ToUpper(s) {
	case "NULL":
		return format.NullValue()
	case "TRUE":
		return ApplyAffinity(format.IntValue(1), aff)
	case "FALSE":
		return ApplyAffinity(format.IntValue(0), aff)
	}
	if isIdent(s) {
		return ApplyAffinity(format.TextValue([]byte(s)), aff)
	}
	return format.NullValue()
}

// negateDefault is valueFromExpr's unary minus of an operand it computed,
// v: NULL stays NULL; else the number v reads as, negated (-2^63 becomes
// a REAL), then the column's affinity.
func negateDefault(v format.Value, aff schema.Affinity) format.Value {
	if v.Kind == format.KindNull {
		return v
	}
	v = numerify(v)
	switch {
	case v.Kind != format.KindInt:
		v = format.FloatValue(-v.Float())
	case v.Int() == math.MinInt64:
		v = format.FloatValue(-float64(math.MinInt64))
	default:
		v = format.IntValue(-v.Int())
	}
	return ApplyAffinity(v, aff)
}

// trimParens trims spaces and the parentheses around a whole expression:
// SQLite's parser makes no node of them.
func trimParens(s string) string {
	s = strings.TrimSpace(s)
	for len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// numericLiteral is a number literal kept as its text, then converted by
// the affinity. A column without one takes the literal's own type (3.0
// stays REAL, where a NUMERIC column makes it 3).
func numericLiteral(text string, aff schema.Affinity) format.Value {
	if aff == schema.AffinityBlob {
		if n, ok := parseNumber(text); ok {
			return n
		}
		return format.TextValue([]byte(text))
	}
	return ApplyAffinity(format.TextValue([]byte(text)), aff)
}

// numerify converts a value to a number as SQLite's unary minus does: text
// by its longest numeric prefix (0 when there is none).
func numerify(v format.Value) format.Value {
	if v.Kind != format.KindText && v.Kind != format.KindBlob {
		return v
	}
	s := strings.TrimLeft(string(v.Bytes), " \t\n\f\r\v")
	for end := len(s); end > 0; end-- {
		if n, ok := parseNumber(s[:end]); ok {
			return integral(n)
		}
	}
	return format.IntValue(0)
}

// isHexLiteral reports whether the integer literal s is hexadecimal.
func isHexLiteral(s string) bool { return len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') }

func isIntLiteral(s string) bool {
	if isHexLiteral(s) {
		for _, c := range s[2:] {
			if _, ok := hexDigit(byte(c)); !ok {
				return false
			}
		}
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func isFloatLiteral(s string) bool {
	if s == "" || s[0] == '+' || s[0] == '-' || strings.TrimSpace(s) != s {
		return false
	}
	_, ok := parseNumber(s)
	return ok
}

// decOrHex parses a decimal integer that fits int64, or a hex integer of up
// to 16 digits (two's complement), as sqlite3DecOrHexToI64 does.
func decOrHex(s string) (int64, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		h := strings.TrimLeft(s[2:], "0")
		if len(h) > 16 {
			return 0, false
		}
		u, err := strconv.ParseUint("0"+h, 16, 64)
		return int64(u), err == nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

func isIdent(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || i > 0 && (c >= '0' && c <= '9' || c == '$')) {
			return false
		}
	}
	return s != ""
}

func unquoteIdent(s string) (string, bool) {
	open, close := s[0], s[0]
	if open == '[' {
		close = ']'
	}
	if len(s) < 2 || s[len(s)-1] != close {
		return "", false
	}
	body := s[1 : len(s)-1]
	if open != '[' {
		body = strings.ReplaceAll(body, string([]byte{close, close}), string(close))
	}
	return body, true
}

func decodeHex(s string) ([]byte, bool) {
	if len(s)%2 != 0 {
		return nil, false
	}
	b := make([]byte, len(s)/2)
	for i := range b {
		hi, ok1 := hexDigit(s[2*i])
		lo, ok2 := hexDigit(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, false
		}
		b[i] = hi<<4 | lo
	}
	return b, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
