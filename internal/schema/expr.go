package schema

import "strings"

// Expr is a parsed SQL expression of the subset pagoda evaluates: what
// CHECK constraints, generated columns and DEFAULT clauses are commonly
// made of. ParseExpr refuses anything else with ErrUnsupported, so that
// the table keeps refusing writes rather than check them wrongly, and a
// generated column is reported rather than read wrongly.
//
//	expr    := expr OR expr | expr AND expr | NOT expr
//	         | expr (= == != <> IS [NOT]) expr
//	         | expr [NOT] IN (expr, ...) | expr [NOT] BETWEEN expr AND expr
//	         | expr [NOT] LIKE expr [ESCAPE expr] | expr [NOT] GLOB expr
//	         | expr ISNULL | expr NOTNULL | expr NOT NULL
//	         | expr (< <= > >=) expr
//	         | expr (& | << >>) expr
//	         | expr (+ - * / % || -> ->>) expr
//	         | (+|-|~) expr | expr COLLATE name
//	         | CAST(expr AS type) | CASE [expr] WHEN expr THEN expr ... [ELSE expr] END
//	         | literal | column | (expr) | function(expr, ...)
//	literal := integer | real | 'text' | x'blob' | NULL | TRUE | FALSE
//	function:= see exprFuncs
type Expr struct {
	Op   ExprOp
	Text string  // OpLiteral: the token; OpColumn: the column name; OpCompare: the operator; OpFunc: the name (lower case); OpCollate: the collation's name
	Not  bool    // OpIs, OpIn, OpBetween: the negated form
	Args []*Expr // operands
	Lit  LitKind // OpLiteral
	Coll Collation
	Aff  Affinity // OpCast: the affinity of the type Text names
	// OpCase: Base says Args[0] is the operand of CASE x WHEN ...; Else
	// says the last of Args is the ELSE; the WHEN and THEN pairs are
	// between.
	Base, Else bool
}

// ExprOp is the kind of an Expr node.
type ExprOp uint8

const (
	OpLiteral ExprOp = iota // Text, Lit
	OpColumn                // Text
	OpNot                   // NOT Args[0]
	OpAnd                   // Args[0] AND Args[1]
	OpOr                    // Args[0] OR Args[1]
	OpCompare               // Args[0] Text Args[1]: = <> < <= > >=
	OpIs                    // Args[0] IS [NOT] Args[1]
	OpIn                    // Args[0] [NOT] IN (Args[1:])
	OpBetween               // Args[0] [NOT] BETWEEN Args[1] AND Args[2]
	OpNegate                // -Args[0]
	OpPlus                  // +Args[0]: the value without its affinity
	OpCollate               // Args[0] COLLATE Coll
	OpFunc                  // Text(Args...)
	OpLike                  // Args[0] [NOT] LIKE Args[1] [ESCAPE Args[2]]
	OpArith                 // Args[0] Text Args[1]: + - * / % || & | << >> -> ->>
	OpBitNot                // ~Args[0]
	OpCast                  // CAST(Args[0] AS Text), of affinity Aff
	OpCase                  // CASE [Args[0]] WHEN a THEN b ... [ELSE e] END (Base, Else)
	OpGlob                  // Args[0] [NOT] GLOB Args[1]
)

// LitKind is the type of a literal.
type LitKind uint8

const (
	LitNull LitKind = iota
	LitInteger
	LitReal
	LitText
	LitBlob
	// LitBool is TRUE or FALSE (Text, upper case): SQLite reads it as
	// the column of that name when the table has one, else as 1 or 0.
	LitBool
)

// exprFuncs are the functions an Expr may call, with their least and
// most argument counts (-1: no most). min and max with one argument are
// aggregates: refused.
var exprFuncs = map[string][2]int{
	"length": {1, 1}, "typeof": {1, 1}, "lower": {1, 1}, "upper": {1, 1}, "coalesce": {2, -1}, "ifnull": {2, 2},
	"json_valid": {1, 1}, "abs": {1, 1}, "round": {1, 2}, "substr": {2, 3}, "substring": {2, 3},
	"trim": {1, 2}, "ltrim": {1, 2}, "rtrim": {1, 2}, "replace": {3, 3}, "instr": {2, 2},
	"hex": {1, 1}, "char": {0, -1}, "unicode": {1, 1}, "min": {2, -1}, "max": {2, -1},
	"nullif": {2, 2}, "iif": {2, -1}, "if": {2, -1}, "concat": {1, -1}, "concat_ws": {2, -1},
	"json_extract": {2, -1}, "json_type": {1, 2}, "json_array_length": {1, 2}, "octet_length": {1, 1}, "sign": {1, 1},
	"likely": {1, 1}, "unlikely": {1, 1}, "likelihood": {2, 2},
	"printf": {0, -1}, "format": {0, -1}, "quote": {1, 1}, "glob": {2, 2},
	"date": {0, -1}, "time": {0, -1}, "datetime": {0, -1}, "julianday": {0, -1}, "unixepoch": {0, -1},
	"strftime": {0, -1}, "timediff": {2, 2},
}

// ParseExpr parses one expression (a CHECK constraint's text). Syntax
// outside the subset is an error wrapping ErrUnsupported.
func ParseExpr(src string) (*Expr, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	p.what = "expression"
	e, err := p.exprOr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEOF || exprDepth(e) > maxExprDepth {
		return nil, p.unsupported()
	}
	return e, nil
}

// maxExprDepth bounds an expression's tree: its depth, in nodes. The
// parser's nesting (parentheses, prefix operators) is bounded apart, at
// maxParseNesting: what String's text takes for the deepest tree allowed,
// two levels a node (its parentheses and its operator), so that every
// expression parsed prints to text that parses again.
const (
	maxExprDepth    = 99
	maxParseNesting = 2*maxExprDepth + 1
)

// exprDepth returns the depth of e's tree, 1 for a leaf.
func exprDepth(e *Expr) int {
	d := 0
	for _, a := range e.Args {
		d = max(d, exprDepth(a))
	}
	return d + 1
}

func (p *parser) unsupported() error {
	return p.errAt(ErrUnsupported, p.peek(), "pagoda does not evaluate this expression")
}

func (p *parser) exprOr() (*Expr, error) {
	return p.binary(p.exprAnd, "OR", OpOr)
}

func (p *parser) exprAnd() (*Expr, error) {
	return p.binary(p.exprNot, "AND", OpAnd)
}

// binary parses left-associative chains of the keyword operator kw.
func (p *parser) binary(operand func() (*Expr, error), kw string, op ExprOp) (*Expr, error) {
	l, err := operand()
	if err != nil {
		return nil, err
	}
	for p.accept(kw) {
		r, err := operand()
		if err != nil {
			return nil, err
		}
		l = &Expr{Op: op, Args: []*Expr{l, r}}
	}
	return l, nil
}

func (p *parser) exprNot() (*Expr, error) {
	if p.accept("NOT") {
		if p.depth++; p.depth > maxParseNesting {
			return nil, p.unsupported()
		}
		e, err := p.exprNot()
		p.depth--
		if err != nil {
			return nil, err
		}
		return &Expr{Op: OpNot, Args: []*Expr{e}}, nil
	}
	return p.exprEquality()
}

// exprEquality parses the operators of equality's level: = == != <> IS
// IN BETWEEN ISNULL NOTNULL NOT NULL, left-associative. One that ends in a
// token of its own (IN's list, ISNULL, NOTNULL, NOT NULL) is an operand
// of the tighter operators after it (relationFrom).
func (p *parser) exprEquality() (*Expr, error) {
	l, err := p.exprRelation()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		switch {
		case t.isOp("=") || t.isOp("==") || t.isOp("!=") || t.isOp("<>"):
			p.i++
			r, err := p.exprRelation()
			if err != nil {
				return nil, err
			}
			op := t.text
			switch op {
			case "==":
				op = "="
			case "!=":
				op = "<>"
			}
			l = &Expr{Op: OpCompare, Text: op, Args: []*Expr{l, r}}
		case t.is("IS"):
			p.i++
			not := p.accept("NOT")
			if p.peek().is("DISTINCT") {
				return nil, p.unsupported()
			}
			r, err := p.exprRelation()
			if err != nil {
				return nil, err
			}
			l = &Expr{Op: OpIs, Not: not, Args: []*Expr{l, r}}
		case t.is("ISNULL"), t.is("NOTNULL"):
			p.i++
			l = &Expr{Op: OpIs, Not: t.is("NOTNULL"), Args: []*Expr{l, {Op: OpLiteral, Lit: LitNull, Text: "NULL"}}}
			if l, err = p.relationFrom(l); err != nil {
				return nil, err
			}
		case t.is("NOT") && p.peekAt(1).is("NULL"):
			p.i += 2
			l = &Expr{Op: OpIs, Not: true, Args: []*Expr{l, {Op: OpLiteral, Lit: LitNull, Text: "NULL"}}}
			if l, err = p.relationFrom(l); err != nil {
				return nil, err
			}
		case t.is("IN"), t.is("NOT") && p.peekAt(1).is("IN"):
			not := p.accept("NOT")
			p.i++
			if _, err := p.expectOp("("); err != nil {
				return nil, err
			}
			if p.peek().is("SELECT") || p.peek().is("VALUES") || p.peek().is("WITH") {
				return nil, p.unsupported()
			}
			e := &Expr{Op: OpIn, Not: not, Args: []*Expr{l}}
			if e.Args, err = p.exprList(e.Args); err != nil {
				return nil, err
			}
			if l, err = p.relationFrom(e); err != nil {
				return nil, err
			}
		case t.is("BETWEEN"), t.is("NOT") && p.peekAt(1).is("BETWEEN"):
			not := p.accept("NOT")
			p.i++
			// The low bound reaches as far as the AND that ends it, over
			// operators of BETWEEN's own level (a BETWEEN b = c AND d):
			// SQLite's grammar cannot reduce the BETWEEN before its AND.
			lo, err := p.exprNot()
			if err != nil {
				return nil, err
			}
			if err := p.expect("AND"); err != nil {
				return nil, err
			}
			hi, err := p.exprRelation()
			if err != nil {
				return nil, err
			}
			l = &Expr{Op: OpBetween, Not: not, Args: []*Expr{l, lo, hi}}
		case t.is("LIKE"), t.is("NOT") && p.peekAt(1).is("LIKE"):
			not := p.accept("NOT")
			p.i++
			pat, err := p.exprRelation()
			if err != nil {
				return nil, err
			}
			e := &Expr{Op: OpLike, Not: not, Args: []*Expr{l, pat}}
			if p.accept("ESCAPE") {
				esc, err := p.exprRelation()
				if err != nil {
					return nil, err
				}
				e.Args = append(e.Args, esc)
			}
			l = e
		case t.is("GLOB"), t.is("NOT") && p.peekAt(1).is("GLOB"):
			not := p.accept("NOT")
			p.i++
			pat, err := p.exprRelation()
			if err != nil {
				return nil, err
			}
			if p.peek().is("ESCAPE") { // glob() takes two arguments: SQLite refuses it
				return nil, p.unsupported()
			}
			l = &Expr{Op: OpGlob, Not: not, Args: []*Expr{l, pat}}
		case t.is("MATCH"), t.is("REGEXP"), t.is("NOT"):
			return nil, p.unsupported()
		default:
			return l, nil
		}
	}
}

// exprList parses expressions separated by commas up to the closing
// parenthesis, which it consumes, appending them to list.
func (p *parser) exprList(list []*Expr) ([]*Expr, error) {
	for !p.peek().isOp(")") {
		x, err := p.exprOr()
		if err != nil {
			return nil, err
		}
		list = append(list, x)
		if !p.acceptOp(",") {
			break
		}
	}
	if _, err := p.expectOp(")"); err != nil {
		return nil, err
	}
	return list, nil
}

// exprRelation parses < <= > >= chains.
func (p *parser) exprRelation() (*Expr, error) { return p.relationFrom(nil) }

// relationFrom, bitFrom, addFrom, mulFrom, concatFrom and unaryFrom parse
// the levels tighter than equality's: < <= > >=, then & | << >>, then +
// and -, then * / %, then || -> ->>, then COLLATE. first, when not nil,
// is the chain's first operand, already parsed: an expression of
// equality's level that ends in a token of its own (IN's parenthesis,
// ISNULL, NOT NULL), which SQLite's grammar reduces before it reads the
// operator after it, so that a IN (1, 2) + 1 is (a IN (1, 2)) + 1.
func (p *parser) relationFrom(first *Expr) (*Expr, error) {
	l, err := p.bitFrom(first)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if !(t.isOp("<") || t.isOp("<=") || t.isOp(">") || t.isOp(">=")) {
			break
		}
		p.i++
		r, err := p.bitFrom(nil)
		if err != nil {
			return nil, err
		}
		l = &Expr{Op: OpCompare, Text: t.text, Args: []*Expr{l, r}}
	}
	return l, nil
}

func (p *parser) bitFrom(first *Expr) (*Expr, error) {
	return p.arith(first, p.addFrom, "&", "|", "<<", ">>")
}

func (p *parser) addFrom(first *Expr) (*Expr, error) { return p.arith(first, p.mulFrom, "+", "-") }

func (p *parser) mulFrom(first *Expr) (*Expr, error) {
	return p.arith(first, p.concatFrom, "*", "/", "%")
}

func (p *parser) concatFrom(first *Expr) (*Expr, error) {
	return p.arith(first, p.unaryFrom, "||", "->", "->>")
}

// arith parses left-associative chains of the operators ops, the first
// operand starting from first (see relationFrom).
func (p *parser) arith(first *Expr, operand func(*Expr) (*Expr, error), ops ...string) (*Expr, error) {
	l, err := operand(first)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		found := false
		for _, op := range ops {
			found = found || t.isOp(op)
		}
		if !found {
			return l, nil
		}
		p.i++
		r, err := operand(nil)
		if err != nil {
			return nil, err
		}
		l = &Expr{Op: OpArith, Text: t.text, Args: []*Expr{l, r}}
	}
}

// unaryFrom parses a prefixed operand (unless first is one) and the
// COLLATE clauses after it, which bind less tightly than the prefix
// operators: -1 COLLATE x is (-1) COLLATE x.
func (p *parser) unaryFrom(first *Expr) (*Expr, error) {
	e := first
	if e == nil {
		var err error
		if e, err = p.exprPrefix(); err != nil {
			return nil, err
		}
	}
	for p.accept("COLLATE") {
		at := p.peek()
		name, err := p.name("collation")
		if err != nil {
			return nil, err
		}
		c, err := ParseCollation(name)
		if err != nil {
			return nil, p.errAt(ErrUnsupported, at, "collation %q", name)
		}
		e = &Expr{Op: OpCollate, Coll: c, Text: name, Args: []*Expr{e}}
	}
	return e, nil
}

// exprPrefix parses unary minus and plus and their operand.
func (p *parser) exprPrefix() (*Expr, error) {
	if p.depth++; p.depth > maxParseNesting {
		return nil, p.unsupported()
	}
	defer func() { p.depth-- }()
	t := p.peek()
	switch {
	case t.isOp("-"):
		p.i++
		e, err := p.exprPrefix()
		if err != nil {
			return nil, err
		}
		return &Expr{Op: OpNegate, Args: []*Expr{e}}, nil
	case t.isOp("+"):
		p.i++
		e, err := p.exprPrefix()
		if err != nil {
			return nil, err
		}
		return &Expr{Op: OpPlus, Args: []*Expr{e}}, nil
	case t.isOp("~"):
		p.i++
		e, err := p.exprPrefix()
		if err != nil {
			return nil, err
		}
		return &Expr{Op: OpBitNot, Args: []*Expr{e}}, nil
	case t.is("NOT"):
		// NOT where an operand is due (x + NOT y): SQLite's grammar takes
		// it with its own reach, every operator tighter than NOT (x + NOT
		// y = 1 is x + (NOT (y = 1))).
		return p.exprNot()
	}
	return p.exprPrimary()
}

func (p *parser) exprPrimary() (*Expr, error) {
	t := p.peek()
	switch t.kind {
	case tokNumber:
		p.i++
		if strings.ContainsAny(t.text, ".eE") && !strings.HasPrefix(t.text, "0x") && !strings.HasPrefix(t.text, "0X") {
			return &Expr{Op: OpLiteral, Lit: LitReal, Text: t.text}, nil
		}
		return &Expr{Op: OpLiteral, Lit: LitInteger, Text: t.text}, nil
	case tokString:
		p.i++
		return &Expr{Op: OpLiteral, Lit: LitText, Text: dequote(t)}, nil
	case tokBlob:
		p.i++
		return &Expr{Op: OpLiteral, Lit: LitBlob, Text: t.text[2 : len(t.text)-1]}, nil
	case tokQuoted:
		p.i++
		return &Expr{Op: OpColumn, Text: dequote(t)}, nil
	case tokOp:
		if t.isOp("(") {
			p.i++
			e, err := p.exprOr()
			if err != nil {
				return nil, err
			}
			if p.peek().isOp(",") { // a row value
				return nil, p.unsupported()
			}
			if _, err := p.expectOp(")"); err != nil {
				return nil, err
			}
			return e, nil
		}
	case tokWord:
		switch {
		case t.is("CAST") && p.peekAt(1).isOp("("):
			return p.exprCast()
		case t.is("CASE"):
			return p.exprCase()
		case t.is("NULL"):
			p.i++
			return &Expr{Op: OpLiteral, Lit: LitNull, Text: "NULL"}, nil
		case p.peekAt(1).isOp("("):
			name := strings.ToLower(t.text)
			n, ok := exprFuncs[name]
			if !ok {
				return nil, p.errAt(ErrUnsupported, t, "function %s", t.text)
			}
			p.i += 2
			e := &Expr{Op: OpFunc, Text: name}
			if p.peek().is("DISTINCT") || p.peek().isOp("*") {
				return nil, p.unsupported()
			}
			var err error
			if e.Args, err = p.exprList(nil); err != nil {
				return nil, err
			}
			if len(e.Args) < n[0] || (n[1] >= 0 && len(e.Args) > n[1]) {
				return nil, p.errAt(ErrUnsupported, t, "%s with %d arguments", name, len(e.Args))
			}
			if p.peek().is("FILTER") || p.peek().is("OVER") {
				return nil, p.unsupported()
			}
			return e, nil
		case isReserved(t), t.is("CURRENT_TIME"), t.is("CURRENT_DATE"), t.is("CURRENT_TIMESTAMP"), t.is("RAISE"):
			return nil, p.unsupported()
		case p.peekAt(1).isOp("."): // table.column
			return nil, p.unsupported()
		case t.is("TRUE"), t.is("FALSE"):
			p.i++
			return &Expr{Op: OpLiteral, Lit: LitBool, Text: strings.ToUpper(t.text)}, nil
		}
		p.i++
		return &Expr{Op: OpColumn, Text: t.text}, nil
	}
	return nil, p.unsupported()
}

// exprCast parses CAST(expr AS type): the type's affinity is a column's
// (sqlite3AffinityType), from the type's text.
func (p *parser) exprCast() (*Expr, error) {
	p.i += 2
	x, err := p.exprOr()
	if err != nil {
		return nil, err
	}
	if err := p.expect("AS"); err != nil {
		return nil, err
	}
	first := p.peek()
	if first.isOp(")") {
		return nil, p.syntaxf("expected a type name")
	}
	last := first
	for depth := 0; ; {
		t := p.peek()
		if t.kind == tokEOF || depth == 0 && t.isOp(")") {
			break
		}
		switch {
		case t.isOp("("):
			depth++
		case t.isOp(")"):
			depth--
		}
		last = p.next()
	}
	if _, err := p.expectOp(")"); err != nil {
		return nil, err
	}
	typ := p.src[first.pos:last.end]
	return &Expr{Op: OpCast, Text: typ, Aff: affinityOfType(typ), Args: []*Expr{x}}, nil
}

// exprCase parses CASE [x] WHEN a THEN b ... [ELSE e] END.
func (p *parser) exprCase() (*Expr, error) {
	p.i++
	e := &Expr{Op: OpCase}
	if !p.peek().is("WHEN") {
		x, err := p.exprOr()
		if err != nil {
			return nil, err
		}
		e.Base, e.Args = true, append(e.Args, x)
	}
	for p.accept("WHEN") {
		w, err := p.exprOr()
		if err != nil {
			return nil, err
		}
		if err := p.expect("THEN"); err != nil {
			return nil, err
		}
		th, err := p.exprOr()
		if err != nil {
			return nil, err
		}
		e.Args = append(e.Args, w, th)
	}
	if len(e.Args) < 2 {
		return nil, p.syntaxf("CASE without WHEN")
	}
	if p.accept("ELSE") {
		x, err := p.exprOr()
		if err != nil {
			return nil, err
		}
		e.Else, e.Args = true, append(e.Args, x)
	}
	if err := p.expect("END"); err != nil {
		return nil, err
	}
	return e, nil
}

// String renders e for error messages and tests, fully parenthesized.
func (e *Expr) String() string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

func (e *Expr) write(b *strings.Builder) {
	args := func(sep string, from int) {
		for i, a := range e.Args[from:] {
			if i > 0 {
				b.WriteString(sep)
			}
			a.write(b)
		}
	}
	not := func() {
		if e.Not {
			b.WriteString(" NOT")
		}
	}
	switch e.Op {
	case OpLiteral:
		switch e.Lit {
		case LitText:
			b.WriteString("'" + strings.ReplaceAll(e.Text, "'", "''") + "'")
		case LitBlob:
			b.WriteString("x'" + e.Text + "'")
		default:
			b.WriteString(e.Text)
		}
	case OpColumn:
		b.WriteString(`"` + strings.ReplaceAll(e.Text, `"`, `""`) + `"`)
	case OpFunc:
		b.WriteString(e.Text + "(")
		args(", ", 0)
		b.WriteString(")")
	case OpCast:
		b.WriteString("CAST(")
		e.Args[0].write(b)
		b.WriteString(" AS " + e.Text + ")")
	case OpCase:
		b.WriteString("CASE")
		a := e.Args
		if e.Base {
			b.WriteString(" ")
			a[0].write(b)
			a = a[1:]
		}
		for len(a) >= 2 {
			b.WriteString(" WHEN ")
			a[0].write(b)
			b.WriteString(" THEN ")
			a[1].write(b)
			a = a[2:]
		}
		if e.Else {
			b.WriteString(" ELSE ")
			a[0].write(b)
		}
		b.WriteString(" END")
	default:
		b.WriteString("(")
		switch e.Op {
		case OpNot:
			b.WriteString("NOT ")
			e.Args[0].write(b)
		case OpAnd:
			args(" AND ", 0)
		case OpOr:
			args(" OR ", 0)
		case OpCompare, OpArith:
			args(" "+e.Text+" ", 0)
		case OpIs:
			e.Args[0].write(b)
			b.WriteString(" IS")
			not()
			b.WriteString(" ")
			e.Args[1].write(b)
		case OpIn:
			e.Args[0].write(b)
			not()
			b.WriteString(" IN (")
			args(", ", 1)
			b.WriteString(")")
		case OpGlob:
			e.Args[0].write(b)
			not()
			b.WriteString(" GLOB ")
			e.Args[1].write(b)
		case OpLike:
			e.Args[0].write(b)
			not()
			b.WriteString(" LIKE ")
			e.Args[1].write(b)
			if len(e.Args) > 2 {
				b.WriteString(" ESCAPE ")
				e.Args[2].write(b)
			}
		case OpBetween:
			e.Args[0].write(b)
			not()
			b.WriteString(" BETWEEN ")
			e.Args[1].write(b)
			b.WriteString(" AND ")
			e.Args[2].write(b)
		case OpNegate:
			b.WriteString("-")
			e.Args[0].write(b)
		case OpPlus:
			b.WriteString("+")
			e.Args[0].write(b)
		case OpBitNot:
			b.WriteString("~")
			e.Args[0].write(b)
		case OpCollate:
			e.Args[0].write(b)
			b.WriteString(" COLLATE " + e.Coll.String())
		}
		b.WriteString(")")
	}
}
