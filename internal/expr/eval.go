package expr

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// operand is a value with the affinity of the expression that gave it:
// a column's (through COLLATE), or none.
type operand struct {
	v      format.Value
	aff    schema.Affinity
	hasAff bool
}

// tri is SQL's three-valued truth.
type tri uint8

const (
	triFalse tri = iota
	triTrue
	triNull
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

func (t tri) value() format.Value {
	switch t {
	case triTrue:
		return format.IntValue(1)
	case triFalse:
		return format.IntValue(0)
	}
	return format.NullValue()
}

// eval evaluates n on the row vals (after affinity, the rowid alias
// holding the rowid).
func (n *cnode) eval(t *schema.Table, vals []format.Value) operand {
	return n.ev(&exprRow{t: t, vals: vals})
}

func (n *cnode) ev(r *exprRow) operand {
	switch n.op {
	case schema.OpLiteral:
		return operand{v: n.lit}
	case schema.OpColumn:
		return operand{v: r.column(n.col), aff: r.t.Columns[n.col].Affinity, hasAff: true}
	case schema.OpPlus:
		return operand{v: n.args[0].ev(r).v}
	case schema.OpCollate:
		return n.args[0].ev(r)
	case schema.OpNot:
		return operand{v: not3(truth(n.args[0].ev(r).v)).value()}
	case schema.OpAnd:
		return operand{v: and3(truth(n.args[0].ev(r).v), truth(n.args[1].ev(r).v)).value()}
	case schema.OpOr:
		a, b := truth(n.args[0].ev(r).v), truth(n.args[1].ev(r).v)
		return operand{v: not3(and3(not3(a), not3(b))).value()}
	case schema.OpCompare:
		return operand{v: r.compareOp(n.cmp, n.args[0].ev(r), n.args[1].ev(r), n.colls[0]).value()}
	case schema.OpIs:
		if n.cmp != "" { // IS [NOT] TRUE, FALSE: OP_IsTrue, NULL neither
			want := triTrue
			if n.cmp == "FALSE" {
				want = triFalse
			}
			return operand{v: triOf((truth(n.args[0].ev(r).v) == want) != n.not).value()}
		}
		a, b := n.args[0].ev(r), n.args[1].ev(r)
		var eq bool
		switch an, bn := a.v.Kind == format.KindNull, b.v.Kind == format.KindNull; {
		case an || bn:
			eq = an && bn
		default:
			eq = r.compareOp("=", a, b, n.colls[0]) == triTrue
		}
		return operand{v: triOf(eq != n.not).value()}
	case schema.OpBetween:
		x, lo, hi := n.args[0].ev(r), n.args[1].ev(r), n.args[2].ev(r)
		res := and3(r.compareOp(">=", x, lo, n.colls[0]), r.compareOp("<=", x, hi, n.colls[1]))
		if n.not {
			res = not3(res)
		}
		return operand{v: res.value()}
	case schema.OpIn:
		x := n.args[0].ev(r)
		res := triFalse
		if len(n.args) > 1 {
			if x.v.Kind == format.KindNull {
				for _, a := range n.args[1:] {
					a.ev(r) // SQLite evaluates the list: an element that fails fails the IN
				}
				res = triNull
			} else {
				for _, a := range n.args[1:] {
					// x = y with x's affinity and collation only.
					y := operand{v: a.ev(r).v}
					switch r.compareOp("=", x, y, n.colls[0]) {
					case triTrue:
						res = triTrue
					case triNull:
						if res == triFalse {
							res = triNull
						}
					}
					if res == triTrue {
						break
					}
				}
			}
		}
		if n.not {
			res = not3(res)
		}
		return operand{v: res.value()}
	case schema.OpFunc:
		return operand{v: n.call(r)}
	case schema.OpNegate:
		return operand{v: r.arith("-", format.IntValue(0), n.args[0].ev(r).v)}
	case schema.OpArith:
		switch n.cmp {
		case "->", "->>":
			return operand{v: r.jsonArrow(n.args[0].ev(r).v, n.args[1].ev(r).v, n.cmp == "->>")}
		case "||":
			a, b := r.utf16Text(n.args[0].ev(r).v), r.utf16Text(n.args[1].ev(r).v) // || concatenates in the database's encoding
			if a.Kind != format.KindNull && b.Kind != format.KindNull && tooBig(len(textOf(a)), len(textOf(b))) {
				return operand{v: r.fail(errTooBig)}
			}
			return operand{v: r.hold(arith(n.cmp, a, b))}
		}
		return operand{v: r.arith(n.cmp, n.args[0].ev(r).v, n.args[1].ev(r).v)}
	case schema.OpBitNot:
		v := n.args[0].ev(r).v
		if v.Kind == format.KindNull {
			return operand{v: v}
		}
		return operand{v: format.IntValue(^IntValue(v))}
	case schema.OpCast:
		v := n.args[0].ev(r).v
		if n.aff == schema.AffinityNumeric {
			v = r.numeric(v)
		}
		return operand{v: castValue(v, n.aff), aff: n.aff, hasAff: true}
	case schema.OpCase:
		return operand{v: n.caseValue(r)}
	case schema.OpGlob:
		x, pat := n.args[0].ev(r).v, n.args[1].ev(r).v
		v := r.glob(pat, x)
		if n.not && v.Kind == format.KindInt {
			v = format.IntValue(1 - v.Int())
		}
		return operand{v: v}
	case schema.OpLike:
		x, pat := n.args[0].ev(r).v, n.args[1].ev(r).v
		esc := format.NullValue()
		if len(n.args) > 2 {
			esc = n.args[2].ev(r).v
		}
		r, ok := like(x, pat, esc, len(n.args) > 2)
		if !ok {
			return operand{v: triNull.value()}
		}
		if n.not {
			r = !r
		}
		return operand{v: triOf(r).value()}
	}
	return operand{}
}

// arith computes a op b (+ - * / % ||) as SQLite's VDBE does: NULL when
// either is NULL; || joins their texts; the others take integers when
// both operands read as integers (TEXT that is a whole integer does), and
// go over to REAL on overflow; else REALs (TEXT by its leading number).
// Division by zero, and a NaN, is NULL; % of REALs is the remainder of
// their integer parts, as a REAL.
func arith(op string, a, b format.Value) format.Value { return arithWith(op, a, b, nil) }

// arithWith is arith, the REALs of a and b being reals[0] and reals[1]
// when reals is not nil (exprRow.arith).
func arithWith(op string, a, b format.Value, reals *[2]float64) format.Value {
	if a.Kind == format.KindNull || b.Kind == format.KindNull {
		return format.NullValue()
	}
	switch op {
	case "||":
		return format.TextValue(append(append([]byte(nil), textOf(a)...), textOf(b)...))
	case "&", "|", "<<", ">>":
		return format.IntValue(bitOp(op, IntValue(a), IntValue(b)))
	}
	ia, aInt := numericInt(a)
	ib, bInt := numericInt(b)
	if aInt && bInt {
		switch op {
		case "+":
			if r, ok := addInt(ia, ib); ok {
				return format.IntValue(r)
			}
		case "-":
			if ib != math.MinInt64 {
				if r, ok := addInt(ia, -ib); ok {
					return format.IntValue(r)
				}
			} else if ia < 0 {
				return format.IntValue(ia - ib)
			}
		case "*":
			if r, ok := mulInt(ia, ib); ok {
				return format.IntValue(r)
			}
		case "/":
			if ib == 0 {
				return format.NullValue()
			}
			if !(ib == -1 && ia == math.MinInt64) {
				return format.IntValue(ia / ib)
			}
		case "%":
			if ib == 0 {
				return format.NullValue()
			}
			if ib == -1 {
				ib = 1
			}
			return format.IntValue(ia % ib)
		}
	}
	ra, rb := sqlRealValue(a), sqlRealValue(b)
	if reals != nil {
		ra, rb = reals[0], reals[1]
	}
	var r float64
	switch op {
	case "+":
		r = ra + rb
	case "-":
		r = ra - rb
	case "*":
		r = ra * rb
	case "/":
		if rb == 0 {
			return format.NullValue()
		}
		r = ra / rb
	case "%":
		x, y := IntValue(a), IntValue(b)
		if y == 0 {
			return format.NullValue()
		}
		if y == -1 {
			y = 1
		}
		r = float64(x % y)
	}
	if r != r {
		return format.NullValue()
	}
	return format.FloatValue(r)
}

func addInt(a, b int64) (int64, bool) {
	r := a + b
	if (a > 0 && b > 0 && r < 0) || (a < 0 && b < 0 && r >= 0) {
		return 0, false
	}
	return r, true
}

func mulInt(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	r := a * b
	if r/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return r, true
}

// numericInt reads v as an integer when SQLite's arithmetic does
// (computeNumericType over sqlite3AtoF): an INTEGER; TEXT or BLOB whose
// leading number, after spaces, is an integer in range with no decimal
// point or exponent, whatever follows it, or that has no number at all (0).
func numericInt(v format.Value) (int64, bool) {
	switch v.Kind {
	case format.KindInt:
		return v.Int(), true
	case format.KindFloat:
		return 0, false
	}
	if i := bytes.IndexByte(v.Bytes, 0); i >= 0 {
		// SQLite 3.54 reads a number up to a NUL (sqlite3AtoF) but an
		// integer to the end (sqlite3Atoi64, which takes the NUL for
		// text after it): a whole integer before a NUL is a REAL.
		if _, rc := atoF(v.Bytes[:i]); rc == 1 {
			return 0, false
		}
	}
	s := strings.TrimLeft(string(v.Bytes), " \t\n\f\r\v")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start := i
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	intEnd := i
	if i < len(s) && s[i] == '.' && (intEnd > start || i+1 < len(s) && '0' <= s[i+1] && s[i+1] <= '9') {
		return 0, false // a decimal point: REAL
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') && intEnd > start {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && '0' <= s[j] && s[j] <= '9' {
			return 0, false // an exponent: REAL
		}
	}
	if intEnd == start {
		return 0, true // no number: 0
	}
	n, err := strconv.ParseInt(s[:intEnd], 10, 64)
	if err != nil {
		return 0, false // out of range: REAL
	}
	return n, true
}

// sqlRealValue reads v as a REAL as sqlite3VdbeRealValue does: TEXT and BLOB
// by their leading number.
func sqlRealValue(v format.Value) float64 {
	switch v.Kind {
	case format.KindInt:
		return float64(v.Int())
	case format.KindFloat:
		return v.Float()
	}
	return leadingFloat(v.Bytes)
}

// IntValue reads v as an integer as sqlite3VdbeIntValue does: a REAL
// truncated and clamped, TEXT and BLOB by their leading integer.
func IntValue(v format.Value) int64 {
	switch v.Kind {
	case format.KindInt:
		return v.Int()
	case format.KindFloat:
		return clampedInt(v.Float())
	}
	return leadingInt(v.Bytes)
}

func not3(t tri) tri {
	switch t {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triNull
}

func and3(a, b tri) tri {
	switch {
	case a == triFalse || b == triFalse:
		return triFalse
	case a == triNull || b == triNull:
		return triNull
	}
	return triTrue
}

// compareOp compares a and b with collation coll as SQLite's comparison
// operators do (sqlite3CompareAffinity): NULL if either is NULL; when both
// have affinities, NUMERIC applied to both if either is numeric, else
// nothing; when one has, its affinity applied to both. NUMERIC leaves a
// text of a UTF-16 database with a character at or above U+0100 as it is
// (wide: SQLite's sqlite3AtoF finds no number in it).
func (r *exprRow) compareOp(op string, a, b operand, coll format.Collation) tri {
	if a.v.Kind == format.KindNull || b.v.Kind == format.KindNull {
		return triNull
	}
	numeric := func(aff schema.Affinity) bool {
		return aff == schema.AffinityNumeric || aff == schema.AffinityInteger || aff == schema.AffinityReal
	}
	aff, has := schema.AffinityBlob, false
	switch {
	case a.hasAff && b.hasAff:
		if numeric(a.aff) || numeric(b.aff) {
			aff, has = schema.AffinityNumeric, true
		}
	case a.hasAff:
		aff, has = a.aff, true
	case b.hasAff:
		aff, has = b.aff, true
	}
	switch {
	case !has || aff == schema.AffinityBlob:
	case numeric(aff):
		if a.v.Kind == format.KindText && !r.wide(a.v) {
			a.v = ApplyAffinity(a.v, schema.AffinityNumeric)
		}
		if b.v.Kind == format.KindText && !r.wide(b.v) {
			b.v = ApplyAffinity(b.v, schema.AffinityNumeric)
		}
	case aff == schema.AffinityText:
		a.v, b.v = ApplyAffinity(a.v, aff), ApplyAffinity(b.v, aff)
	}
	c := format.CompareValues(a.v, b.v, coll)
	var res bool
	switch op {
	case "=":
		res = c == 0
	case "<>":
		res = c != 0
	case "<":
		res = c < 0
	case "<=":
		res = c <= 0
	case ">":
		res = c > 0
	case ">=":
		res = c >= 0
	}
	return triOf(res)
}

// truth is a value's truth as SQLite's logic operators read it: a number
// is true when not zero, TEXT and BLOB by the number they start with.
func truth(v format.Value) tri {
	switch v.Kind {
	case format.KindNull:
		return triNull
	case format.KindInt:
		return triOf(v.Int() != 0)
	case format.KindFloat:
		return triOf(v.Float() != 0)
	}
	return triOf(leadingFloat(v.Bytes) != 0)
}

// leadingFloat reads the number that b starts with (after spaces), as
// sqlite3AtoF does for a conversion to REAL; 0 when there is none.
func leadingFloat(b []byte) float64 {
	f, _ := leadingNumber(b)
	return f
}

// leadingNumber reads the number that b starts with, after spaces; digits
// is false when there is none.
func leadingNumber(b []byte) (f float64, digits bool) {
	s := strings.TrimLeft(string(b), " \t\n\f\r\v")
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	// The longest prefix that parses: sign, digits, fraction, exponent.
	end, i := 0, 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	n := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i, n = i+1, n+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, n = i+1, n+1
		}
	}
	if n == 0 {
		return 0, false
	}
	end = i
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			end = k
		}
	}
	f, _ = strconv.ParseFloat(s[:end], 64)
	return f, true
}

// textOf renders v as SQLite's conversion to TEXT does: a REAL as
// SQLite 3.54 renders it (realText; sqlite3 3.40 printed 15 significant
// digits, so a CHECK that turns such a REAL into text may differ there).
func textOf(v format.Value) []byte {
	switch v.Kind {
	case format.KindInt:
		return strconv.AppendInt(nil, v.Int(), 10)
	case format.KindFloat:
		return appendRealText(nil, v.Float())
	}
	return v.Bytes
}

// call evaluates a function of the subset.
func (n *cnode) call(r *exprRow) format.Value {
	if !checkFuncs[n.fn] {
		return n.callMore(r)
	}
	switch n.fn {
	case "coalesce", "ifnull":
		for _, a := range n.args {
			if v := a.ev(r).v; v.Kind != format.KindNull {
				return v
			}
		}
		return format.NullValue()
	}
	v := n.args[0].ev(r).v
	switch n.fn {
	case "typeof":
		return format.TextValue([]byte(typeNames[v.Kind]))
	case "length":
		switch v.Kind {
		case format.KindNull:
			return v
		case format.KindBlob:
			return format.IntValue(int64(len(v.Bytes)))
		}
		return format.IntValue(charLength(textOf(v)))
	case "json_valid":
		if v.Kind == format.KindNull {
			return v
		}
		if jsonValid(cutNUL(textOf(v))) { // SQLite's JSON functions read text up to a NUL byte
			return format.IntValue(1)
		}
		return format.IntValue(0)
	case "lower", "upper":
		if v.Kind == format.KindNull {
			return v
		}
		b := append([]byte(nil), textOf(v)...)
		for i, c := range b {
			switch {
			case n.fn == "lower" && 'A' <= c && c <= 'Z':
				b[i] = c + 'a' - 'A'
			case n.fn == "upper" && 'a' <= c && c <= 'z':
				b[i] = c - 'a' + 'A'
			}
		}
		return format.TextValue(b)
	}
	return format.NullValue()
}

var typeNames = [...]string{
	format.KindNull:  "null",
	format.KindInt:   "integer",
	format.KindFloat: "real",
	format.KindText:  "text",
	format.KindBlob:  "blob",
}

// charLength counts characters as SQLite's length() does: up to the first
// NUL byte, each byte that is not a UTF-8 continuation byte after a lead
// byte starting one.
func charLength(b []byte) int64 {
	var n int64
	for i := 0; i < len(b) && b[i] != 0; {
		c := b[i]
		i++
		if c >= 0xc0 {
			for i < len(b) && b[i]&0xc0 == 0x80 {
				i++
			}
		}
		n++
	}
	return n
}

// caseValue evaluates CASE (and iif): with an operand, the first WHEN
// equal to it (a comparison with = 's affinity and collation rules, so
// NULL matches nothing); without, the first WHEN that is true; else the
// ELSE, or NULL.
func (n *cnode) caseValue(r *exprRow) format.Value {
	a := n.args
	var base operand
	if n.base {
		base, a = a[0].ev(r), a[1:]
	}
	for k := 0; len(a) >= 2; k++ {
		w := a[0].ev(r)
		var hit bool
		if n.base {
			hit = r.compareOp("=", base, w, n.whens[k]) == triTrue
		} else {
			hit = truth(w.v) == triTrue
		}
		if hit {
			return a[1].ev(r).v
		}
		a = a[2:]
	}
	if n.els {
		return a[0].ev(r).v
	}
	return format.NullValue()
}

// bitOp is & | << >> on integers as OP_BitAnd, OP_BitOr, OP_ShiftLeft
// and OP_ShiftRight compute them: a negative shift goes the other way, a
// shift of 64 or more gives 0 (-1 for a negative number shifted right).
func bitOp(op string, a, b int64) int64 {
	switch op {
	case "&":
		return a & b
	case "|":
		return a | b
	}
	if b == 0 {
		return a
	}
	left := op == "<<"
	if b < 0 {
		left = !left
		if b > -64 {
			b = -b
		} else {
			b = 64
		}
	}
	if b >= 64 {
		if a >= 0 || left {
			return 0
		}
		return -1
	}
	if left {
		return int64(uint64(a) << uint(b))
	}
	return a >> uint(b) // arithmetic: the sign fills in, as SQLite's mask does
}

// clampedInt truncates f towards zero, clamped to the int64 range (NaN is
// 0).
func clampedInt(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f <= math.MinInt64:
		return math.MinInt64
	case f >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(f)
}

// leadingInt reads the integer at the start of b, after spaces and an
// optional sign, stopping at the first other byte and saturating at the
// int64 range; 0 when there are no digits.
func leadingInt(b []byte) int64 {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var u uint64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if u > (math.MaxUint64-9)/10 {
			u = math.MaxUint64
			continue
		}
		u = u*10 + uint64(b[i]-'0')
	}
	switch {
	case neg && u > 1<<63:
		return math.MinInt64
	case neg:
		return -int64(u)
	case u > math.MaxInt64:
		return math.MaxInt64
	}
	return int64(u)
}
