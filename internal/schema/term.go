package schema

// A term is one item of PRIMARY KEY(...), UNIQUE(...) or CREATE INDEX ...(...):
//
//	expr [COLLATE name] [ASC|DESC]
//
// where the term names a column when expr is a single name, possibly in
// parentheses (SQLite's parentheses are transparent). A single-quoted string
// counts as a name here, as in sqlite3 (sqlite3StringToId).
type term struct {
	start   token  // first token, for error messages
	column  bool   // expr is a plain name
	name    string // the dequoted name, or the expression's source text
	dquoted bool   // the name was written as a "double-quoted" identifier
	coll    string // the outermost explicit COLLATE name
	collSet bool
	desc    bool
}

// sortTerm consumes one term, stopping before "," or ")" at nesting depth 0
// (and before AUTOINCREMENT when autoinc is set: PRIMARY KEY(x AUTOINCREMENT)).
func (p *parser) sortTerm(autoinc bool) (term, error) {
	first := p.i
	depth := 0
	for {
		t := p.peek()
		if t.kind == tokEOF || t.isOp(";") {
			return term{}, p.syntaxf("unterminated column list")
		}
		if depth == 0 && (t.isOp(",") || t.isOp(")") || autoinc && t.is("AUTOINCREMENT")) {
			break
		}
		if t.isOp("(") {
			depth++
		} else if t.isOp(")") {
			depth--
		}
		p.i++
	}
	if p.i == first {
		return term{}, p.syntaxf("expected a column name or expression")
	}
	return p.classifyTerm(p.toks[first:p.i])
}

// classifyTerm interprets the tokens of one term.
func (p *parser) classifyTerm(toks []token) (term, error) {
	tm := term{start: toks[0]}
	n := len(toks)
	if n >= 3 && toks[n-2].is("NULLS") && (toks[n-1].is("FIRST") || toks[n-1].is("LAST")) {
		return tm, p.errAt(ErrSyntax, toks[n-2], "unsupported use of NULLS %s", toks[n-1].text)
	}
	if n >= 2 && (toks[n-1].is("ASC") || toks[n-1].is("DESC")) && endsOperand(toks[n-2]) {
		tm.desc = toks[n-1].is("DESC")
		n--
	}
	e := toks[:n]
	for i, t := range e {
		if t.isOp(".") {
			return tm, p.errAt(ErrSyntax, t, `the "." operator is prohibited in index expressions`)
		}
		if t.is("COLLATE") && (i+1 == len(e) || !isTypeWord(e[i+1])) {
			return tm, p.errAt(ErrSyntax, t, "expected a collation name")
		}
	}
	for {
		l := len(e)
		if l >= 2 && e[0].isOp("(") && e[l-1].isOp(")") && closeParen(e) == l-1 {
			e = e[1 : l-1]
			continue
		}
		if l >= 3 && e[l-2].is("COLLATE") && isTypeWord(e[l-1]) && !hasLooseOp(e[:l-2]) {
			if !tm.collSet { // the outermost COLLATE wins
				tm.coll, tm.collSet = dequote(e[l-1]), true
			}
			e = e[:l-2]
			continue
		}
		break
	}
	if len(e) == 0 {
		return tm, p.errAt(ErrSyntax, tm.start, "empty term")
	}
	if len(e) == 1 && isName(e[0]) && !isTimeKeyword(e[0]) {
		tm.column = true
		tm.name = dequote(e[0])
		tm.dquoted = e[0].kind == tokQuoted && e[0].text[0] == '"'
		return tm, nil
	}
	tm.name = p.src[e[0].pos:e[len(e)-1].end]
	return tm, nil
}

// isTimeKeyword: CURRENT_DATE, CURRENT_TIME and CURRENT_TIMESTAMP are values
// in an expression, not column names.
func isTimeKeyword(t token) bool {
	return t.is("CURRENT_DATE") || t.is("CURRENT_TIME") || t.is("CURRENT_TIMESTAMP")
}

// endsOperand reports whether an expression can end with t, so that an ASC
// or DESC after it is a sort order rather than a column named "desc".
func endsOperand(t token) bool {
	switch t.kind {
	case tokOp:
		return t.text == ")"
	case tokWord:
		return !isReserved(t) || t.is("NULL")
	}
	return true
}

// closeParen returns the index of the ")" matching e[0] == "(", or -1.
func closeParen(e []token) int {
	depth := 0
	for i, t := range e {
		if t.isOp("(") {
			depth++
		} else if t.isOp(")") {
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// looseWords are keyword operators that bind less tightly than COLLATE.
var looseWords = setOf("AND", "OR", "NOT", "IS", "IN", "LIKE", "GLOB", "MATCH",
	"REGEXP", "BETWEEN", "ESCAPE", "ISNULL", "NOTNULL")

// hasLooseOp reports whether e has, outside parentheses and CASE ... END, an
// operator that binds less tightly than COLLATE (every binary operator, NOT,
// IS, ...). When it does not, a COLLATE after e applies to all of e; when it
// does, the COLLATE belongs to the last operand only (`a || b COLLATE x` is
// `a || (b COLLATE x)`). This is an approximation of SQLite's grammar that is
// exact for column references and the usual expression shapes.
func hasLooseOp(e []token) bool {
	depth := 0
	operand := false // the previous token at depth 0 ends an operand
	for _, t := range e {
		switch {
		case t.isOp("(") || t.is("CASE"):
			depth++
			continue
		case t.isOp(")") || t.is("END") && depth > 0:
			depth--
			operand = true
			continue
		case depth > 0:
			continue
		}
		switch t.kind {
		case tokOp:
			switch t.text {
			case "+", "-":
				if operand {
					return true
				}
			case "~":
			default:
				return true
			}
			operand = false
		case tokWord:
			if looseWords[foldKey(t.text)] {
				return true
			}
			operand = true
		default:
			operand = true
		}
	}
	return false
}
