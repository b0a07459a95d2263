package expr

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// The functions and conversions of generated columns beyond CHECK's
// subset, each as SQLite 3.54's func.c, vdbemem.c or json.c computes it.

// castValue is CAST(v AS type) of affinity aff (sqlite3VdbeMemCast): NULL
// stays NULL; BLOB takes the bytes of the value's text; TEXT the text;
// REAL the leading number of a text; INTEGER the leading integer of a
// text (CAST('1e5' AS INTEGER) is 1), a REAL truncated and clamped;
// NUMERIC leaves numbers and makes a text an INTEGER when its leading
// number is an integer in range (whatever follows, '12abc' is 12) or a
// REAL that is an integer of magnitude under 2^51 (sqlite3RealSameAsInt:
// '3.0e0' is 3 but '1e18' stays 1e18), else a REAL.
func castValue(v format.Value, aff schema.Affinity) format.Value {
	if v.Kind == format.KindNull {
		return v
	}
	switch aff {
	case schema.AffinityBlob:
		if v.Kind == format.KindBlob {
			return v
		}
		return format.BlobValue(textOf(v))
	case schema.AffinityText:
		if v.Kind == format.KindText {
			return v
		}
		return format.TextValue(textOf(v))
	case schema.AffinityReal:
		return format.FloatValue(sqlRealValue(v))
	case schema.AffinityInteger:
		return format.IntValue(IntValue(v))
	}
	if v.Kind == format.KindInt || v.Kind == format.KindFloat {
		return v
	}
	return numerifyText(v.Bytes)
}

// numerifyText is sqlite3VdbeMemNumerify of a TEXT or BLOB b.
func numerifyText(b []byte) format.Value {
	b = cutNUL(b)
	r, rc := atoF(b)
	if rc == 0 || rc == 1 {
		if ix, irc := atoi64(b); irc <= 1 {
			return format.IntValue(ix)
		}
	}
	if ix := clampedInt(r); r == 0 || float64(ix) == r && ix >= -2251799813685248 && ix < 2251799813685248 {
		return format.IntValue(ix)
	}
	return format.FloatValue(r)
}

// atoF is sqlite3AtoF: the leading number of b and rc: 1 a whole integer,
// 2 a whole number with a point or an exponent (spaces around allowed),
// 0 a leading integer or no number followed by other text, -1 a leading
// number with a point or exponent followed by other text.
func atoF(b []byte) (float64, int) {
	f, ok := leadingNumber(b)
	s := bytes.TrimLeft(b, " \t\n\f\r\v")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	real := false
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '.' {
		real = true
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if ok && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			real = true
			for i = j; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			}
		}
	}
	whole := ok && len(bytes.TrimLeft(s[i:], " \t\n\f\r\v")) == 0
	switch {
	case whole && real:
		return f, 2
	case whole:
		return f, 1
	case ok && real:
		return f, -1
	}
	return f, 0
}

// atoi64 is sqlite3Atoi64: the leading integer of b (clamped) and rc: 0
// a whole integer in range, 1 other text after it (or none at all), 2
// out of range.
func atoi64(b []byte) (int64, int) {
	s := bytes.TrimLeft(b, " \t\n\f\r\v")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	v := leadingInt(b)
	if _, err := strconv.ParseInt(string(s[:i]), 10, 64); err != nil && i > start {
		return v, 2
	}
	if i == start || len(bytes.TrimLeft(s[i:], " \t\n\f\r\v")) != 0 {
		return v, 1
	}
	return v, 0
}

// errIntOverflow is abs(-9223372036854775808)'s error.
var errIntOverflow = errors.New("integer overflow")

// callMore evaluates the functions of generated columns that CHECK
// constraints do not take.
func (n *cnode) callMore(r *exprRow) format.Value {
	arg := func(i int) format.Value { return n.args[i].ev(r).v }
	switch n.fn {
	case "min", "max", "concat_ws", "replace", "trim", "ltrim", "rtrim":
		// SQLite evaluates every argument before the function looks at
		// any, so one that fails fails the call even where the result
		// would not need it (min(NULL, <error>) is an error, not NULL):
		// evaluate them all first; the function below may read them
		// again (evaluation is pure).
		for i := range n.args {
			arg(i)
		}
		if r.err != nil {
			return format.NullValue()
		}
	}
	switch n.fn {
	case "likely", "unlikely", "likelihood":
		return arg(0)
	case "char":
		// Each argument as an integer, a code point outside Unicode as
		// U+FFFD, in SQLite's UTF-8 (surrogates encoded as any other).
		var b []byte
		for i := range n.args {
			c := IntValue(arg(i))
			if c < 0 || c > 0x10ffff {
				c = 0xfffd
			}
			b = appendUTF8(b, rune(c))
		}
		if b == nil {
			b = []byte{}
		}
		return format.TextValue(b)
	case "min", "max":
		// The first NULL makes NULL; else the least (greatest) by
		// sqlite3MemCompare, the later argument winning a tie for min,
		// the earlier for max.
		best := arg(0)
		if best.Kind == format.KindNull {
			return best
		}
		for i := 1; i < len(n.args); i++ {
			v := arg(i)
			if v.Kind == format.KindNull {
				return v
			}
			c := format.CompareValues(best, v, n.colls[0])
			if n.fn == "min" && c >= 0 || n.fn == "max" && c < 0 {
				best = v
			}
		}
		return best
	case "nullif":
		a, b := arg(0), arg(1)
		if format.CompareValues(a, b, n.colls[0]) != 0 {
			return a
		}
		return format.NullValue()
	case "concat", "concat_ws":
		// NULL arguments are skipped; concat_ws's separator NULL is NULL.
		var sep []byte
		first := 0
		if n.fn == "concat_ws" {
			s := arg(0)
			if s.Kind == format.KindNull {
				return s
			}
			sep, first = textOf(s), 1
		}
		b, any := []byte{}, false
		for i := first; i < len(n.args); i++ {
			v := arg(i)
			if v.Kind == format.KindNull {
				continue
			}
			t := textOf(v)
			if any {
				if tooBig(len(b), len(sep)) {
					return r.fail(errTooBig)
				}
				b = append(b, sep...)
			}
			if tooBig(len(b), len(t)) {
				return r.fail(errTooBig)
			}
			b, any = append(b, t...), true
		}
		return format.TextValue(b)
	case "json_extract":
		if len(n.args) == 2 {
			return r.jsonExtract(arg(0), arg(1))
		}
		vals := make([]format.Value, len(n.args))
		for i := range n.args {
			vals[i] = arg(i)
		}
		return r.jsonExtractAll(vals[0], vals[1:])
	case "json_type", "json_array_length":
		x := arg(0)
		var p *format.Value
		if len(n.args) == 2 {
			v := arg(1)
			p = &v
		}
		if r.err != nil {
			return format.NullValue()
		}
		if n.fn == "json_type" {
			return r.jsonType(x, p)
		}
		return r.jsonArrayLength(x, p)
	case "printf", "format":
		// Every argument is evaluated, as SQLite does before the call;
		// no format (none, or NULL) is NULL.
		vals := make([]format.Value, len(n.args))
		for i := range n.args {
			vals[i] = arg(i)
		}
		if len(vals) == 0 || vals[0].Kind == format.KindNull {
			return format.NullValue()
		}
		b, ok := sqlPrintf(textOf(vals[0]), vals[1:])
		if !ok {
			return r.fail(errTooBig)
		}
		return format.TextValue(b)
	case "glob":
		return r.glob(arg(0), arg(1))
	case "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff":
		// Every argument is evaluated, as SQLite does before the call.
		vals := make([]format.Value, len(n.args))
		for i := range n.args {
			vals[i] = arg(i)
		}
		return r.dateFunc(n.fn, vals)
	case "quote":
		b, ok := sqlQuote(arg(0))
		if !ok {
			return r.fail(errTooBig)
		}
		return format.TextValue(b)
	}
	v := arg(0)
	switch n.fn {
	case "abs":
		switch v.Kind {
		case format.KindNull:
			return v
		case format.KindInt:
			if v.Int() == math.MinInt64 {
				return r.fail(errIntOverflow)
			}
			if v.Int() < 0 {
				return format.IntValue(-v.Int())
			}
			return v
		}
		f := sqlRealValue(v)
		if f < 0 {
			f = -f
		}
		return format.FloatValue(f)
	case "sign":
		// NULL unless the value is a number or a text that reads as one
		// whole (sqlite3_value_numeric_type: a BLOB stays a BLOB).
		if v.Kind == format.KindText {
			v = ApplyAffinity(v, schema.AffinityNumeric)
		}
		var f float64
		switch v.Kind {
		case format.KindInt:
			f = float64(v.Int())
		case format.KindFloat:
			f = v.Float()
		default:
			return format.NullValue()
		}
		switch {
		case f < 0:
			return format.IntValue(-1)
		case f > 0:
			return format.IntValue(1)
		}
		return format.IntValue(0)
	case "round":
		digits := int64(0)
		if len(n.args) == 2 {
			d := arg(1)
			if d.Kind == format.KindNull {
				return d
			}
			digits = min(max(IntValue(d), 0), 30)
		}
		if v.Kind == format.KindNull {
			return v
		}
		return format.FloatValue(roundFunc(sqlRealValue(v), int(digits)))
	case "hex":
		b := bytesOf(v)
		if tooBig(len(b), len(b)) {
			return r.fail(errTooBig)
		}
		out := make([]byte, 0, 2*len(b))
		for _, c := range b {
			out = append(out, "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
		}
		return format.TextValue(out)
	case "unicode":
		if v.Kind == format.KindNull {
			return v
		}
		t := textOf(v)
		if len(t) == 0 || t[0] == 0 {
			return format.NullValue()
		}
		c, _ := utf8Read(t)
		return format.IntValue(int64(c))
	case "octet_length":
		if v.Kind == format.KindNull {
			return v
		}
		return format.IntValue(int64(len(bytesOf(v))))
	case "substr", "substring":
		return n.substr(r, v)
	case "trim", "ltrim", "rtrim":
		return n.trim(r, v)
	case "replace":
		return n.replace(r, v)
	case "instr":
		return instr(v, arg(1))
	}
	return r.fail(fmt.Errorf("%w: function %s", format.ErrUnsupported, n.fn))
}

// bytesOf is sqlite3_value_blob: a BLOB's bytes, else the text's.
func bytesOf(v format.Value) []byte {
	if v.Kind == format.KindNull {
		return nil
	}
	return textOf(v)
}

// appendUTF8 encodes c as SQLite's WRITE_UTF8 does.
func appendUTF8(b []byte, c rune) []byte {
	switch {
	case c < 0x80:
		return append(b, byte(c))
	case c < 0x800:
		return append(b, 0xc0+byte(c>>6), 0x80+byte(c&0x3f))
	case c < 0x10000:
		return append(b, 0xe0+byte(c>>12), 0x80+byte(c>>6&0x3f), 0x80+byte(c&0x3f))
	}
	return append(b, 0xf0+byte(c>>18), 0x80+byte(c>>12&0x3f), 0x80+byte(c>>6&0x3f), 0x80+byte(c&0x3f))
}

// skipUTF8 is SQLITE_SKIP_UTF8: one character of z.
func skipUTF8(z []byte) int {
	i := 1
	if z[0] >= 0xc0 {
		for i < len(z) && z[i]&0xc0 == 0x80 {
			i++
		}
	}
	return i
}

// substr is SQLite 3.54's substrFunc: positions from 1, a negative start
// from the end, a negative length the characters before the start;
// characters for text (up to a NUL byte), bytes for a BLOB (an empty BLOB
// gives NULL, as sqlite3_value_blob gives no pointer for it).
func (n *cnode) substr(r *exprRow, x format.Value) format.Value {
	y := n.args[1].ev(r).v
	var zv format.Value
	if len(n.args) == 3 {
		zv = n.args[2].ev(r).v
	}
	if x.Kind == format.KindNull || x.Kind == format.KindBlob && len(x.Bytes) == 0 {
		return format.NullValue()
	}
	p1 := IntValue(y)
	blob := x.Kind == format.KindBlob
	var z []byte
	var length int64
	if blob {
		z = x.Bytes
		length = int64(len(z))
	} else {
		z = textOf(x)
		if p1 < 0 {
			length = charLength(z)
		}
	}
	var p2 int64 = math.MaxInt64
	if len(n.args) == 3 {
		if zv.Kind == format.KindNull {
			return format.NullValue()
		}
		p2 = IntValue(zv)
	}
	if y.Kind == format.KindNull {
		return format.NullValue()
	}
	switch {
	case p1 < 0:
		p1 += length
		if p1 < 0 {
			if p2 < 0 {
				p2 = 0
			} else {
				p2 += p1
			}
			p1 = 0
		}
	case p1 > 0:
		p1--
	case p2 > 0:
		p2--
	}
	if p2 < 0 {
		if p2 < -p1 {
			p2 = p1
		} else {
			p2 = -p2
		}
		p1 -= p2
	}
	if !blob {
		// A character: an ASCII byte, or any other byte with the
		// continuation bytes after it; a NUL byte ends the text.
		skip := func(b []byte) int {
			if c := b[0]; c-1 < 0x7f {
				return 1
			}
			k := 1
			for k < len(b) && b[k]&0xc0 == 0x80 {
				k++
			}
			return k
		}
		for ; p1 > 0 && len(z) > 0 && z[0] != 0; p1-- {
			z = z[skip(z):]
		}
		end := 0
		for ; p2 > 0 && end < len(z) && z[end] != 0; p2-- {
			end += skip(z[end:])
		}
		return format.TextValue(append([]byte{}, z[:end]...))
	}
	if p1 >= length {
		p1, p2 = 0, 0
	} else if p2 > length-p1 {
		p2 = length - p1
	}
	return format.BlobValue(append([]byte{}, z[p1:p1+p2]...))
}

// trim is trimFunc: the characters of the second argument (spaces when
// there is none) removed from either end, whole UTF-8 sequences compared.
func (n *cnode) trim(r *exprRow, x format.Value) format.Value {
	if x.Kind == format.KindNull {
		return x
	}
	in := textOf(x)
	set := [][]byte{{' '}}
	if len(n.args) == 2 {
		y := n.args[1].ev(r).v
		if y.Kind == format.KindNull {
			return y
		}
		cs := cutNUL(textOf(y))
		set = set[:0]
		for len(cs) > 0 {
			k := skipUTF8(cs)
			set = append(set, cs[:k])
			cs = cs[k:]
		}
	}
	if len(set) > 0 {
		if n.fn != "rtrim" {
		front:
			for len(in) > 0 {
				for _, c := range set {
					if bytes.HasPrefix(in, c) {
						in = in[len(c):]
						continue front
					}
				}
				break
			}
		}
		if n.fn != "ltrim" {
		back:
			for len(in) > 0 {
				for _, c := range set {
					if bytes.HasSuffix(in, c) {
						in = in[:len(in)-len(c)]
						continue back
					}
				}
				break
			}
		}
	}
	return format.TextValue(append([]byte{}, in...))
}

// replace is replaceFunc: every occurrence of the pattern's bytes, left to
// right; an empty pattern (or one starting with a NUL byte) leaves the
// text as it is.
func (n *cnode) replace(r *exprRow, x format.Value) format.Value {
	if x.Kind == format.KindNull {
		return x
	}
	str := textOf(x)
	y := n.args[1].ev(r).v
	if y.Kind == format.KindNull {
		return y
	}
	pat := textOf(y)
	if len(pat) == 0 || pat[0] == 0 {
		return format.TextValue(append([]byte{}, str...))
	}
	z := n.args[2].ev(r).v
	if z.Kind == format.KindNull {
		return z
	}
	rep := textOf(z)
	if grow := len(rep) - len(pat); grow > 0 {
		// The count times the growth, compared by division: the product
		// can pass 2^31 (int on 32 bits).
		if n := bytes.Count(str, pat); n > 0 && grow > (maxExprLength-len(str))/n {
			return r.fail(errTooBig)
		}
	}
	return format.TextValue(bytes.ReplaceAll(str, pat, rep))
}

// maxExprLength is SQLite's SQLITE_MAX_LENGTH as built by default: no
// string or blob an expression makes may be longer, so that a schema's
// expression cannot make a reader allocate without bound.
// (A variable so that the fuzz target can lower it.)
var maxExprLength = 1_000_000_000

// errTooBig is SQLite's SQLITE_TOOBIG message.
var errTooBig = errors.New("string or blob too big")

// tooBig reports whether a value of a+b bytes is over maxExprLength.
func tooBig(a, b int) bool { return a > maxExprLength-b }

// instr is instrFunc: the 1-based character (byte, for two BLOBs)
// position of the needle, 0 when absent; NULL if either is NULL.
func instr(h, nd format.Value) format.Value {
	if h.Kind == format.KindNull || nd.Kind == format.KindNull {
		return format.NullValue()
	}
	hb, nb := textOf(h), textOf(nd)
	isText := !(h.Kind == format.KindBlob && nd.Kind == format.KindBlob)
	if len(nb) == 0 {
		return format.IntValue(1)
	}
	pos := int64(1)
	for len(nb) <= len(hb) && !bytes.HasPrefix(hb, nb) {
		pos++
		hb = hb[1:]
		for isText && len(hb) > 0 && hb[0]&0xc0 == 0x80 {
			hb = hb[1:]
		}
	}
	if len(nb) > len(hb) {
		return format.IntValue(0)
	}
	return format.IntValue(pos)
}
