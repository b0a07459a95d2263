package schema

import (
	"fmt"
	"strings"
)

// parser is a cursor over the tokens of one statement. Every method either
// consumes at least one token or returns an error, so no loop can spin.
type parser struct {
	src   string
	toks  []token // ends with tokEOF
	i     int
	what  string // the object being parsed, for error messages: `table "t"`
	depth int    // nesting of the expression being parsed (expr.go)
}

func newParser(src string) (*parser, error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	for _, t := range toks {
		if t.kind == tokVariable {
			return nil, fmt.Errorf("%w: parameters prohibited in CREATE statements (near %s at offset %d)", ErrSyntax, t, t.pos)
		}
	}
	return &parser{src: src, toks: toks}, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

// peekAt returns the token k places ahead (tokEOF past the end).
func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

// next consumes and returns the current token (tokEOF stays put).
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// accept consumes the current token if it is the bare keyword kw.
func (p *parser) accept(kw string) bool {
	if p.peek().is(kw) {
		p.i++
		return true
	}
	return false
}

// acceptOp consumes the current token if it is the operator op.
func (p *parser) acceptOp(op string) bool {
	if p.peek().isOp(op) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(kw string) error {
	if !p.accept(kw) {
		return p.syntaxf("expected %s", kw)
	}
	return nil
}

func (p *parser) expectOp(op string) (token, error) {
	t := p.peek()
	if !p.acceptOp(op) {
		return t, p.syntaxf("expected %q", op)
	}
	return t, nil
}

// errAt builds an error wrapping sentinel that names the object and the
// token t where the problem is.
func (p *parser) errAt(sentinel error, t token, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	where := ""
	if p.what != "" {
		where = p.what + ": "
	}
	return fmt.Errorf("%w: %s%s (near %s at offset %d)", sentinel, where, msg, t, t.pos)
}

// syntaxf reports a syntax error at the current token.
func (p *parser) syntaxf(format string, args ...any) error {
	return p.errAt(ErrSyntax, p.peek(), format, args...)
}

// name consumes a table, column, index or constraint name and returns it
// dequoted.
func (p *parser) name(what string) (string, error) {
	t := p.peek()
	if !isName(t) {
		return "", p.syntaxf("expected %s name", what)
	}
	p.i++
	return dequote(t), nil
}

// qualifiedName consumes `name` or `schema.name` and returns the name, its
// token and the schema ("" if none).
func (p *parser) qualifiedName(what string) (name string, at token, schema string, err error) {
	at = p.peek()
	if name, err = p.name(what); err != nil {
		return "", at, "", err
	}
	if p.peek().isOp(".") {
		p.i++
		schema, at = name, p.peek()
		if name, err = p.name(what); err != nil {
			return "", at, "", err
		}
	}
	return name, at, schema, nil
}

// ifNotExists consumes an optional IF NOT EXISTS.
func (p *parser) ifNotExists() error {
	if !p.accept("IF") {
		return nil
	}
	if err := p.expect("NOT"); err != nil {
		return err
	}
	return p.expect("EXISTS")
}

// parens consumes a parenthesised group starting at the current "(" and
// returns the source text between the parentheses with surrounding white
// space trimmed (as sqlite3DbSpanDup does). The group must not be empty.
func (p *parser) parens(what string) (string, error) {
	open, err := p.expectOp("(")
	if err != nil {
		return "", err
	}
	depth := 1
	for {
		t := p.next()
		switch {
		case t.kind == tokEOF || t.isOp(";"):
			return "", p.errAt(ErrSyntax, t, "unterminated %s", what)
		case t.isOp("("):
			depth++
		case t.isOp(")"):
			depth--
			if depth == 0 {
				if p.toks[p.i-2].pos == open.pos {
					return "", p.errAt(ErrSyntax, t, "empty %s", what)
				}
				return strings.TrimSpace(p.src[open.end:t.pos]), nil
			}
		}
	}
}

// end consumes an optional ";" and requires the end of input.
func (p *parser) end() error {
	p.acceptOp(";")
	if p.peek().kind != tokEOF {
		return p.syntaxf("unexpected text after the statement")
	}
	return nil
}

// onConflict consumes an optional ON CONFLICT clause and returns the
// resolution in upper case, "" if absent.
func (p *parser) onConflict() (string, error) {
	if !p.peek().is("ON") || !p.peekAt(1).is("CONFLICT") {
		return "", nil
	}
	p.i += 2
	for _, r := range [...]string{"ROLLBACK", "ABORT", "FAIL", "IGNORE", "REPLACE"} {
		if p.accept(r) {
			return r, nil
		}
	}
	return "", p.syntaxf("expected ROLLBACK, ABORT, FAIL, IGNORE or REPLACE")
}
