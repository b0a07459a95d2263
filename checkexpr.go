package pagoda

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// CHECK constraints and the WHERE clauses of partial indexes.
//
// pagoda evaluates the expressions schema.ParseExpr accepts (comparisons,
// IS, IN, BETWEEN, LIKE, AND, OR, NOT, + - * / % ||, COLLATE, literals,
// columns, and length, typeof, lower, upper, coalesce, ifnull and
// json_valid with one argument) as SQLite does: on the row's values after
// their columns' affinities, the rowid alias holding the rowid;
// comparisons with SQLite's affinity and collation rules, its three-valued
// logic and its arithmetic. A row for which a CHECK constraint is false
// (0) is refused; NULL passes. A partial index holds the rows for which
// its WHERE clause is true (not NULL). A table with any other CHECK
// constraint or partial index refuses writes.

// checkExpr is one CHECK constraint compiled against its table.
type checkExpr struct {
	src  string
	root *cnode
}

// cnode is a node of a compiled expression: schema.Expr with its columns
// resolved and its literals decoded.
type cnode struct {
	op    schema.ExprOp
	aff   schema.Affinity // OpCast
	base  bool            // OpCase: args[0] is CASE's operand
	els   bool            // OpCase: the last of args is the ELSE
	cmp   string          // OpCompare
	not   bool
	fn    string // OpFunc
	col   int    // OpColumn
	lit   format.Value
	colls [2]format.Collation // the collations of the comparisons: OpCompare, OpIs, OpIn ([0]), OpBetween (>= and <=); min, max and nullif ([0])
	whens []format.Collation  // OpCase with an operand: the collation of each WHEN's comparison
	args  []*cnode
}

// compileChecks compiles a table's CHECK constraints; an expression
// outside the subset, or naming no column of the table, is an error
// wrapping schema.ErrUnsupported.
func compileChecks(t *schema.Table) ([]checkExpr, error) {
	var out []checkExpr
	for _, src := range t.Checks {
		e, err := schema.ParseExpr(src)
		if err != nil {
			return nil, err
		}
		n, err := compileExpr(e, t)
		if err != nil {
			return nil, err
		}
		out = append(out, checkExpr{src: src, root: n})
	}
	return out, nil
}

// compileExpr compiles a CHECK constraint or a partial index's WHERE
// clause. They keep the subset that writes were written for (checkSubset):
// the broader one of generated columns is not taken by writes.
func compileExpr(e *schema.Expr, t *schema.Table) (*cnode, error) {
	if err := checkSubset(e); err != nil {
		return nil, err
	}
	return compileNode(e, t, false)
}

// checkFuncs are the functions of CHECK constraints and partial indexes.
var checkFuncs = map[string]bool{
	"length": true, "typeof": true, "lower": true, "upper": true, "coalesce": true, "ifnull": true, "json_valid": true,
}

// checkSubset refuses what CHECK constraints and partial indexes do not
// evaluate: CAST, CASE, GLOB, TRUE and FALSE, bit operators, JSON
// arrows, and the functions outside checkFuncs.
func checkSubset(e *schema.Expr) error {
	switch e.Op {
	case schema.OpLiteral:
		if e.Lit == schema.LitBool {
			return fmt.Errorf("%w: %s in a CHECK constraint or partial index", schema.ErrUnsupported, e.Text)
		}
	case schema.OpCast, schema.OpCase, schema.OpBitNot, schema.OpGlob:
		return fmt.Errorf("%w: %s in a CHECK constraint or partial index", schema.ErrUnsupported, e)
	case schema.OpArith:
		switch e.Text {
		case "+", "-", "*", "/", "%", "||":
		default:
			return fmt.Errorf("%w: operator %s in a CHECK constraint or partial index", schema.ErrUnsupported, e.Text)
		}
	case schema.OpFunc:
		if !checkFuncs[e.Text] {
			return fmt.Errorf("%w: function %s in a CHECK constraint or partial index", schema.ErrUnsupported, e.Text)
		}
	}
	for _, a := range e.Args {
		if err := checkSubset(a); err != nil {
			return err
		}
	}
	return nil
}

// compileNode compiles e against table t. gen allows the columns of a
// generated column's expression: the VIRTUAL ones too.
func compileNode(e *schema.Expr, t *schema.Table, gen bool) (*cnode, error) {
	n := &cnode{op: e.Op, cmp: e.Text, not: e.Not, fn: e.Text, aff: e.Aff, base: e.Base, els: e.Else}
	for _, a := range e.Args {
		c, err := compileNode(a, t, gen)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, c)
	}
	switch e.Op {
	case schema.OpLike:
		if len(e.Args) > 2 {
			esc := e.Args[2]
			if c, n := utf8Read([]byte(esc.Text)); esc.Op != schema.OpLiteral || esc.Lit != schema.LitText || n == 0 || n != len(esc.Text) || c == 0 {
				return nil, fmt.Errorf("%w: ESCAPE must be one character in quotes", schema.ErrUnsupported)
			}
		}
	case schema.OpCompare:
		n.colls[0] = binaryColl(e.Args[0], e.Args[1], t)
	case schema.OpIs:
		n.colls[0] = binaryColl(e.Args[0], e.Args[1], t)
		// x IS [NOT] TRUE and FALSE test x's truth (SQLite's TK_TRUTH),
		// the right side seen through COLLATE and likely(): 2 IS TRUE.
		rt := e.Args[1]
		for rt.Op == schema.OpCollate || rt.Op == schema.OpFunc && (rt.Text == "likely" || rt.Text == "unlikely" || rt.Text == "likelihood") {
			rt = rt.Args[0]
		}
		if rt.Op == schema.OpLiteral && rt.Lit == schema.LitBool && columnOf(rt, t) == nil {
			n.cmp = rt.Text
		}
	case schema.OpIn:
		n.colls[0], _ = collSeq(e.Args[0], t)
	case schema.OpBetween:
		n.colls = [2]format.Collation{binaryColl(e.Args[0], e.Args[1], t), binaryColl(e.Args[0], e.Args[2], t)}
	case schema.OpColumn:
		n.col = -1
		for i, c := range t.Columns {
			if strings.EqualFold(c.Name, e.Text) {
				n.col = i
				break
			}
		}
		if n.col < 0 {
			return nil, fmt.Errorf("%w: %q is not a column of the table", schema.ErrUnsupported, e.Text)
		}
		if c := t.Columns[n.col]; c.Collation == schema.CollOther {
			// A comparison would need its order (and sqlite3's collation
			// choice), which is the application's.
			return nil, fmt.Errorf("%w: column %q: no such collation sequence: %s", schema.ErrUnsupported, c.Name, c.CollName)
		}
		if !gen && t.Columns[n.col].Hidden {
			return nil, fmt.Errorf("%w: CHECK names %q, not a stored column", schema.ErrUnsupported, e.Text)
		}
	case schema.OpCase:
		if e.Base {
			for i := 1; i+1 < len(e.Args) || i+1 == len(e.Args) && !e.Else; i += 2 {
				n.whens = append(n.whens, binaryColl(e.Args[0], e.Args[i], t))
			}
		}
	case schema.OpFunc:
		switch e.Text {
		case "min", "max", "nullif":
			// sqlite3's functions that need a collation take the first
			// argument's that has one.
			for _, a := range e.Args {
				if c, ok := collSeq(a, t); ok {
					n.colls[0] = c
					break
				}
			}
		case "iif", "if":
			// iif(c1, v1, c2, v2, ..., [else]) is CASE WHEN c1 THEN v1 ... END.
			n.op, n.els = schema.OpCase, len(e.Args)%2 == 1
		}
	case schema.OpLiteral:
		if e.Lit == schema.LitBool && columnOf(e, t) != nil {
			return compileNode(&schema.Expr{Op: schema.OpColumn, Text: e.Text}, t, gen)
		}
		v, err := literalValue(e)
		if err != nil {
			return nil, err
		}
		n.lit = v
	case schema.OpNegate:
		if e.Args[0].Op != schema.OpLiteral || (e.Args[0].Lit != schema.LitInteger && e.Args[0].Lit != schema.LitReal) {
			break // 0 - x, evaluated
		}
		v := n.args[0].lit
		switch {
		case v.Kind == format.KindInt:
			n.lit = format.IntValue(-v.Int())
		case e.Args[0].Text == "9223372036854775808":
			n.lit = format.IntValue(math.MinInt64)
		default:
			n.lit = format.FloatValue(-v.Float())
		}
		n.op, n.args = schema.OpLiteral, nil
	}
	return n, nil
}

// Collations, as sqlite3 picks them (sqlite3ExprCollSeq and
// sqlite3BinaryCompareCollSeq): a COLLATE anywhere in an operand marks it
// (EP_Collate), and a marked operand's collation is found by going down
// to the COLLATE, left first; an unmarked one has its column's collation
// (BINARY unless declared), through unary +; a comparison takes the left
// operand's, else the right's, else BINARY.

// hasCollate reports whether e holds a COLLATE.
func hasCollate(e *schema.Expr) bool {
	if e.Op == schema.OpCollate {
		return true
	}
	for _, a := range e.Args {
		if hasCollate(a) {
			return true
		}
	}
	return false
}

// collSeq returns e's collation, if it has one.
func collSeq(e *schema.Expr, t *schema.Table) (format.Collation, bool) {
	for e != nil {
		switch e.Op {
		case schema.OpColumn:
			if c := columnOf(e, t); c != nil {
				return format.Collation(c.Collation), true // BINARY unless declared
			}
			return format.CollBinary, false
		case schema.OpPlus, schema.OpCast:
			e = e.Args[0]
			continue
		case schema.OpCollate:
			return format.Collation(e.Coll), true
		}
		if !hasCollate(e) {
			break
		}
		// sqlite3's operands: pLeft, then pRight or the list.
		var left *schema.Expr
		rest := e.Args
		if e.Op != schema.OpFunc && len(e.Args) > 0 {
			left, rest = e.Args[0], e.Args[1:]
		}
		var next *schema.Expr
		if left != nil && hasCollate(left) {
			next = left
		} else {
			for _, a := range rest {
				if hasCollate(a) {
					next = a
					break
				}
			}
		}
		e = next
	}
	return format.CollBinary, false
}

// binaryColl is the collation of a comparison of l with r.
func binaryColl(l, r *schema.Expr, t *schema.Table) format.Collation {
	switch {
	case hasCollate(l):
		c, _ := collSeq(l, t)
		return c
	case hasCollate(r):
		c, _ := collSeq(r, t)
		return c
	}
	if c, ok := collSeq(l, t); ok {
		return c
	}
	c, _ := collSeq(r, t)
	return c
}

// columnOf returns the column e names.
func columnOf(e *schema.Expr, t *schema.Table) *schema.Column {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, e.Text) {
			return &t.Columns[i]
		}
	}
	return nil
}

// literalValue decodes a literal as SQLite reads it: an integer too large
// for int64 is REAL.
func literalValue(e *schema.Expr) (format.Value, error) {
	switch e.Lit {
	case schema.LitInteger:
		s := e.Text
		if len(s) > 2 && (s[1] == 'x' || s[1] == 'X') {
			u, err := strconv.ParseUint(s[2:], 16, 64)
			if err != nil {
				return format.Value{}, fmt.Errorf("%w: hex literal %s", schema.ErrUnsupported, s)
			}
			return format.IntValue(int64(u)), nil
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return format.IntValue(i), nil
		}
		fallthrough
	case schema.LitReal:
		f, err := strconv.ParseFloat(e.Text, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return format.Value{}, fmt.Errorf("%w: numeric literal %s", schema.ErrUnsupported, e.Text)
		}
		return format.FloatValue(f), nil
	case schema.LitText:
		return format.TextValue([]byte(e.Text)), nil
	case schema.LitBool:
		if e.Text == "TRUE" {
			return format.IntValue(1), nil
		}
		return format.IntValue(0), nil
	case schema.LitBlob:
		b := make([]byte, len(e.Text)/2)
		for i := range b {
			x, err := strconv.ParseUint(e.Text[2*i:2*i+2], 16, 8)
			if err != nil {
				return format.Value{}, fmt.Errorf("%w: blob literal", schema.ErrUnsupported)
			}
			b[i] = byte(x)
		}
		return format.BlobValue(b), nil
	}
	return format.NullValue(), nil
}

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

// passes reports whether the row vals (after affinity, the rowid alias
// holding the rowid) satisfies the constraint: true or NULL.
func (c *checkExpr) passes(t *schema.Table, vals []format.Value) bool {
	return truth(c.root.eval(t, vals).v) != triFalse
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
		return operand{v: format.IntValue(^sqlIntValue(v))}
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
		return format.IntValue(bitOp(op, sqlIntValue(a), sqlIntValue(b)))
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
		x, y := sqlIntValue(a), sqlIntValue(b)
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

// sqlIntValue reads v as an integer as sqlite3VdbeIntValue does: a REAL
// truncated and clamped, TEXT and BLOB by their leading integer.
func sqlIntValue(v format.Value) int64 {
	switch v.Kind {
	case format.KindInt:
		return v.Int()
	case format.KindFloat:
		return clampedInt(v.Float())
	}
	return leadingInt(v.Bytes)
}

// like evaluates x LIKE pat [ESCAPE esc] as SQLite's likeFunc does: a BLOB
// on either side matches nothing; otherwise both read as text up to a NUL
// byte; % matches any run of characters, _ one
// character, the escape character makes the next one literal; ASCII
// letters match either case. ok is false for a NULL result (an operand is
// NULL, or the escape is not one character, which SQLite reports as an
// error: the row then fails no constraint and no partial index takes it).
func like(x, pat, esc format.Value, hasEsc bool) (match, ok bool) {
	if x.Kind == format.KindBlob || pat.Kind == format.KindBlob {
		return false, true // SQLITE_LIKE_DOESNT_MATCH_BLOBS, as sqlite3 and modernc are built
	}
	if x.Kind == format.KindNull || pat.Kind == format.KindNull || (hasEsc && esc.Kind == format.KindNull) {
		return false, false
	}
	m := likeMatcher{all: '%', one: '_', esc: -1}
	if hasEsc {
		e := cutNUL(textOf(esc))
		c, n := utf8Read(e)
		if n == 0 || n != len(e) {
			return false, false
		}
		m.esc = c
		if c == m.all {
			m.all = -1
		}
		if c == m.one {
			m.one = -1
		}
	}
	return m.match(cutNUL(textOf(pat)), cutNUL(textOf(x))) == likeMatch, true
}

// The results of likeMatcher.match, as patternCompare's: likeNoWildcard
// says the text ran out while a % still had to be matched, so that no
// shorter text can match either and every enclosing % stops trying (which
// keeps patterns such as %a%a%a%b from taking exponential time).
const (
	likeNoMatch = iota
	likeMatch
	likeNoWildcard
)

// cutNUL returns b up to its first NUL byte.
func cutNUL(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// likeMatcher is one LIKE's special characters (-1: none).
type likeMatcher struct{ all, one, esc rune }

func (m *likeMatcher) match(p, s []byte) int {
	for len(p) > 0 {
		c, n := utf8Read(p)
		p = p[n:]
		switch {
		case c == m.all:
			// A run of % and _: each _ takes one character.
			for len(p) > 0 {
				c2, n2 := utf8Read(p)
				if c2 == m.all {
					p = p[n2:]
					continue
				}
				if c2 != m.one {
					break
				}
				if len(s) == 0 {
					return likeNoWildcard
				}
				_, k := utf8Read(s)
				s, p = s[k:], p[n2:]
			}
			if len(p) == 0 {
				return likeMatch
			}
			for {
				if r := m.match(p, s); r != likeNoMatch {
					return r
				}
				if len(s) == 0 {
					return likeNoWildcard
				}
				_, k := utf8Read(s)
				s = s[k:]
			}
		case c == m.one:
			if len(s) == 0 {
				return likeNoMatch
			}
			_, k := utf8Read(s)
			s = s[k:]
			continue
		case c == m.esc:
			if len(p) == 0 {
				return likeNoMatch
			}
			c, n = utf8Read(p)
			p = p[n:]
		}
		if len(s) == 0 {
			return likeNoMatch
		}
		d, k := utf8Read(s)
		s = s[k:]
		if c != d && !(c < 0x80 && d < 0x80 && lowerRune(c) == lowerRune(d)) {
			return likeNoMatch
		}
	}
	if len(s) == 0 {
		return likeMatch
	}
	return likeNoMatch
}

func lowerRune(c rune) rune {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// utf8Read reads one character as sqlite3Utf8Read does: a lead byte of
// 0xc0 or more takes the continuation bytes after it; an overlong form, a
// surrogate or U+FFFE/U+FFFF reads as U+FFFD. n is the bytes read.
func utf8Read(b []byte) (c rune, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	c, n = rune(b[0]), 1
	if c < 0xc0 {
		return c, n
	}
	c = rune(utf8Trans1[c-0xc0])
	for n < len(b) && b[n]&0xc0 == 0x80 {
		c = c<<6 + rune(b[n]&0x3f)
		n++
	}
	if c < 0x80 || c&^0x7ff == 0xd800 || c&^1 == 0xfffe {
		c = 0xfffd
	}
	return c, n
}

// utf8Trans1 is sqlite3Utf8Trans1: the payload bits of a lead byte.
var utf8Trans1 = [64]byte{
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00,
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
			a.v = applyAffinity(a.v, schema.AffinityNumeric)
		}
		if b.v.Kind == format.KindText && !r.wide(b.v) {
			b.v = applyAffinity(b.v, schema.AffinityNumeric)
		}
	case aff == schema.AffinityText:
		a.v, b.v = applyAffinity(a.v, aff), applyAffinity(b.v, aff)
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

// jsonMaxDepth is the deepest nesting of arrays and objects SQLite's JSON
// parser takes.
const jsonMaxDepth = 1000

// jsonValid reports whether b is one JSON text as RFC 8259 has it (what
// json_valid takes in SQLite 3.54): a value between optional spaces, tabs,
// line feeds and carriage returns, arrays and objects nested at most
// jsonMaxDepth deep. Strings take any byte but '"', '\\' and controls
// below 0x20, and the escapes \" \\ \/ \b \f \n \r \t \uXXXX.
func jsonValid(b []byte) bool {
	j := jsonScan{b: b}
	if !j.value(0) {
		return false
	}
	j.space()
	return j.i == len(b)
}

// jsonScan is a position in a JSON text being validated.
type jsonScan struct {
	b []byte
	i int
}

func (j *jsonScan) space() {
	for j.i < len(j.b) && (j.b[j.i] == ' ' || j.b[j.i] == '\t' || j.b[j.i] == '\n' || j.b[j.i] == '\r') {
		j.i++
	}
}

// lit consumes the word w.
func (j *jsonScan) lit(w string) bool {
	if !bytes.HasPrefix(j.b[j.i:], []byte(w)) {
		return false
	}
	j.i += len(w)
	return true
}

// value consumes one value nested depth deep, with the spaces before it.
func (j *jsonScan) value(depth int) bool {
	j.space()
	if j.i == len(j.b) {
		return false
	}
	switch c := j.b[j.i]; {
	case c == '{' || c == '[':
		if depth == jsonMaxDepth {
			return false
		}
		close := byte(']')
		if c == '{' {
			close = '}'
		}
		j.i++
		j.space()
		if j.i < len(j.b) && j.b[j.i] == close {
			j.i++
			return true
		}
		for {
			if close == '}' {
				j.space()
				if !j.str() {
					return false
				}
				j.space()
				if j.i == len(j.b) || j.b[j.i] != ':' {
					return false
				}
				j.i++
			}
			if !j.value(depth + 1) {
				return false
			}
			j.space()
			if j.i == len(j.b) {
				return false
			}
			switch j.b[j.i] {
			case ',':
				j.i++
			case close:
				j.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		return j.str()
	case c == 't':
		return j.lit("true")
	case c == 'f':
		return j.lit("false")
	case c == 'n':
		return j.lit("null")
	}
	return j.number()
}

// str consumes a string.
func (j *jsonScan) str() bool {
	if j.i == len(j.b) || j.b[j.i] != '"' {
		return false
	}
	for j.i++; j.i < len(j.b); j.i++ {
		switch c := j.b[j.i]; {
		case c == '"':
			j.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			j.i++
			if j.i == len(j.b) {
				return false
			}
			switch j.b[j.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j.i+4 >= len(j.b) {
					return false
				}
				for _, h := range j.b[j.i+1 : j.i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				j.i += 4
			default:
				return false
			}
		}
	}
	return false
}

// number consumes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (j *jsonScan) number() bool {
	digits := func() int {
		n := 0
		for j.i < len(j.b) && '0' <= j.b[j.i] && j.b[j.i] <= '9' {
			j.i, n = j.i+1, n+1
		}
		return n
	}
	if j.i < len(j.b) && j.b[j.i] == '-' {
		j.i++
	}
	if j.i < len(j.b) && j.b[j.i] == '0' {
		j.i++
	} else if digits() == 0 {
		return false
	}
	if j.i < len(j.b) && j.b[j.i] == '.' {
		j.i++
		if digits() == 0 {
			return false
		}
	}
	if j.i < len(j.b) && (j.b[j.i] == 'e' || j.b[j.i] == 'E') {
		j.i++
		if j.i < len(j.b) && (j.b[j.i] == '+' || j.b[j.i] == '-') {
			j.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
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
