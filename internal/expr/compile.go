package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

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

// encodingFree refuses, in a UTF-16 database (enc 2 or 3), the parts of
// an expression whose result SQLite computes on the text as stored, in
// UTF-16, where pagoda evaluates UTF-8: an ordering of text under BINARY
// (<, <=, >, >=, BETWEEN, min and max compare the UTF-16 bytes), hex,
// octet_length and CAST AS BLOB (the UTF-16 bytes). Anything else reads
// the same in both encodings, but a BLOB that SQLite would take as text
// (in ||, CAST AS TEXT, lower, ...), whose bytes it reads as UTF-16: such
// a value is rare and is not refused.
func encodingFree(e *schema.Expr, enc uint32) error {
	if !format.IsUTF16(enc) {
		return nil
	}
	what := ""
	switch e.Op {
	case schema.OpCompare:
		if e.Text != "=" && e.Text != "<>" {
			what = "the comparison " + e.Text
		}
	case schema.OpBetween:
		what = "BETWEEN"
	case schema.OpCast:
		if e.Aff == schema.AffinityBlob {
			what = "CAST AS BLOB"
		}
	case schema.OpLiteral:
		if e.Lit == schema.LitBlob {
			what = "a BLOB literal" // its bytes read as UTF-16 where text is needed
		}
	case schema.OpFunc:
		switch e.Text {
		case "min", "max", "hex", "octet_length":
			what = e.Text
		}
	}
	if what != "" {
		return fmt.Errorf("%w: %s in a UTF-16 database (SQLite computes it on the UTF-16 text)", schema.ErrUnsupported, what)
	}
	for _, a := range e.Args {
		if err := encodingFree(a, enc); err != nil {
			return err
		}
	}
	return nil
}
