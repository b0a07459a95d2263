package schema

import (
	"fmt"
	"strings"
)

// tokenKind classifies a token the way sqlite3's tokenizer (src/tokenize.c)
// does, with keywords left as tokWord: whether a word is a keyword depends on
// where it stands (see keywords.go).
type tokenKind uint8

const (
	tokEOF      tokenKind = iota
	tokWord               // bare identifier or keyword: abc, CREATE, _x1, non-ASCII
	tokQuoted             // quoted identifier: "x", [x], `x`
	tokString             // string literal: 'x' (also usable as a name)
	tokBlob               // blob literal: x'00ff'
	tokNumber             // 12, 1.5, .5, 1e3, 0x1F
	tokVariable           // ?, ?1, :a, @a, $a, #a
	tokOp                 // operator or punctuation: ( ) , ; . + - || <= ...
)

// token is one lexical token. text is the exact source slice src[pos:end].
type token struct {
	kind tokenKind
	pos  int
	end  int
	text string
}

// is reports whether t is the bare keyword kw (upper case).
func (t token) is(kw string) bool { return t.kind == tokWord && eqFold(t.text, kw) }

// isOp reports whether t is the operator or punctuation op.
func (t token) isOp(op string) bool { return t.kind == tokOp && t.text == op }

func (t token) String() string {
	if t.kind == tokEOF {
		return "end of input"
	}
	return fmt.Sprintf("%q", t.text)
}

// Character classes of sqlite3's tokenizer.
func isSpace(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isXDigit(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// isIDStart: letters, '_' and every byte >= 0x80 start an identifier.
func isIDStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c >= 0x80
}

// isIDChar: identifier continuation; '$' included, as in sqlite3IsIdChar.
func isIDChar(c byte) bool { return isIDStart(c) || isDigit(c) || c == '$' }

// tokenize splits src into tokens, dropping white space and comments. The
// last token is always tokEOF at len(src). Anything sqlite3 would tokenize as
// TK_ILLEGAL (an unterminated quote, a stray '!' or '^', a NUL byte, "12abc",
// a malformed blob) is an error wrapping ErrSyntax.
func tokenize(src string) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		c := src[i]
		if isSpace(c) {
			i++
			continue
		}
		n, kind, err := scanToken(src, i)
		if err != nil {
			return nil, fmt.Errorf("%w: %s at offset %d", ErrSyntax, err, i)
		}
		if kind != tokEOF { // tokEOF here means "comment"
			text := src[i : i+n]
			if kind == tokNumber && strings.IndexByte(text, digitSeparator) >= 0 {
				text = strings.ReplaceAll(text, string(digitSeparator), "") // 1_000 is 1000
			}
			toks = append(toks, token{kind: kind, pos: i, end: i + n, text: text})
		}
		i += n
	}
	toks = append(toks, token{kind: tokEOF, pos: len(src), end: len(src)})
	return toks, nil
}

// scanToken returns the length and kind of the token starting at src[i]
// (not white space). A comment is returned as kind tokEOF.
func scanToken(src string, i int) (int, tokenKind, error) {
	at := func(j int) byte { // src[j], or 0 past the end
		if j < len(src) {
			return src[j]
		}
		return 0
	}
	c := src[i]
	switch {
	case c == '-' && at(i+1) == '-':
		j := i + 2
		for j < len(src) && src[j] != '\n' {
			j++
		}
		return j - i, tokEOF, nil
	case c == '/' && at(i+1) == '*':
		j := i + 2
		for j < len(src) && !(src[j] == '*' && at(j+1) == '/') {
			j++
		}
		if j < len(src) {
			j += 2
		} // an unterminated comment runs to the end, as in sqlite3
		return j - i, tokEOF, nil
	case c == '\'' || c == '"' || c == '`':
		j := i + 1
		for {
			if j >= len(src) {
				return 0, 0, fmt.Errorf("unterminated %c", c)
			}
			if src[j] == c {
				if at(j+1) == c {
					j += 2
					continue
				}
				break
			}
			j++
		}
		if c == '\'' {
			return j + 1 - i, tokString, nil
		}
		return j + 1 - i, tokQuoted, nil
	case c == '[':
		j := i + 1
		for j < len(src) && src[j] != ']' {
			j++
		}
		if j >= len(src) {
			return 0, 0, fmt.Errorf("unterminated [")
		}
		return j + 1 - i, tokQuoted, nil
	case (c == 'x' || c == 'X') && at(i+1) == '\'':
		j := i + 2
		for isXDigit(at(j)) {
			j++
		}
		if at(j) != '\'' || (j-i)%2 != 0 {
			return 0, 0, fmt.Errorf("malformed blob literal")
		}
		return j + 1 - i, tokBlob, nil
	case isDigit(c) || c == '.' && isDigit(at(i+1)):
		return scanNumber(src, i)
	case isIDStart(c):
		j := i + 1
		for isIDChar(at(j)) {
			j++
		}
		return j - i, tokWord, nil
	case c == '?':
		j := i + 1
		for isDigit(at(j)) {
			j++
		}
		return j - i, tokVariable, nil
	case c == '$' || c == '@' || c == ':' || c == '#':
		j := i + 1
		for isIDChar(at(j)) {
			j++
		}
		if j == i+1 {
			return 0, 0, fmt.Errorf("malformed variable")
		}
		return j - i, tokVariable, nil
	}
	// Operators: longest match first.
	for _, op := range operators {
		if len(src)-i >= len(op) && src[i:i+len(op)] == op {
			return len(op), tokOp, nil
		}
	}
	return 0, 0, fmt.Errorf("unrecognized character %q", c)
}

// operators, longest first so that "->>" wins over "->" and "-".
var operators = []string{
	"->>",
	"->", "||", "<=", ">=", "<>", "<<", ">>", "==", "!=",
	"(", ")", ",", ";", ".", "+", "-", "*", "/", "%", "=", "<", ">", "&", "|", "~",
}

// digitSeparator may stand between two digits of a number (1_000, 0xFF_FF,
// 1_0.5e1_0), as SQLite reads numbers since 3.46; the token's text drops
// it.
const digitSeparator = '_'

// dropDigitSeparators returns SQL text src with the digit separators of
// its numbers dropped (1_000 is 1000), the rest as written: what a DEFAULT
// clause's text is read from.
func dropDigitSeparators(src string) string {
	if strings.IndexByte(src, digitSeparator) < 0 {
		return src
	}
	toks, err := tokenize(src)
	if err != nil {
		return src
	}
	var b strings.Builder
	at := 0
	for _, t := range toks {
		if t.kind == tokNumber && t.end-t.pos != len(t.text) {
			b.WriteString(src[at:t.pos])
			b.WriteString(t.text)
			at = t.end
		}
	}
	b.WriteString(src[at:])
	return b.String()
}

// scanNumber scans an integer, real or hex literal as sqlite3 does: a number
// directly followed by identifier characters ("12abc") is illegal, and so
// is a digit separator that is not between two digits (sqlite3's
// tokenizer takes it in, sqlite3DequoteNumber refuses it).
func scanNumber(src string, i int) (int, tokenKind, error) {
	at := func(j int) byte {
		if j < len(src) {
			return src[j]
		}
		return 0
	}
	digit := isDigit
	digits := func(j int) int {
		for digit(at(j)) || at(j) == digitSeparator {
			if at(j) == digitSeparator && !(j > i && digit(src[j-1]) && digit(at(j+1))) {
				return -1
			}
			j++
		}
		return j
	}
	j := i
	if src[i] == '0' && (at(i+1) == 'x' || at(i+1) == 'X') && isXDigit(at(i+2)) {
		digit = isXDigit
		j = digits(i + 2)
	} else {
		j = digits(j)
		if j >= 0 && at(j) == '.' {
			j = digits(j + 1)
		}
		if j >= 0 && (at(j) == 'e' || at(j) == 'E') &&
			(isDigit(at(j+1)) || (at(j+1) == '+' || at(j+1) == '-') && isDigit(at(j+2))) {
			j = digits(j + 2)
		}
	}
	if j < 0 || isIDChar(at(j)) {
		return 0, 0, fmt.Errorf("malformed number")
	}
	return j - i, tokNumber, nil
}

// dequote returns the name a token stands for: the text of a quoted
// identifier or string without its quotes, doubled quotes undoubled; a bare
// word as written.
func dequote(t token) string {
	if t.kind != tokQuoted && t.kind != tokString {
		return t.text
	}
	return dequoteText(t.text)
}

// dequoteText is sqlite3Dequote: if s starts with a quote character, return
// the text up to the matching close quote with doubled quotes undoubled
// (anything after the close quote is dropped); otherwise return s.
func dequoteText(s string) string {
	if s == "" {
		return s
	}
	q := s[0]
	switch q {
	case '[':
		q = ']'
	case '\'', '"', '`':
	default:
		return s
	}
	var b []byte
	for i := 1; i < len(s); i++ {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				b = append(b, q)
				i++
				continue
			}
			break
		}
		b = append(b, s[i])
	}
	return string(b)
}

// isQuoteChar: the characters sqlite3Isquote accepts.
func isQuoteChar(c byte) bool { return c == '"' || c == '\'' || c == '[' || c == '`' }

// dequoteToken is sqlite3DequoteToken: drop the first and last byte of s if
// s starts with a quote character and no other byte but the last is one.
func dequoteToken(s string) string {
	if len(s) < 2 || !isQuoteChar(s[0]) {
		return s
	}
	for i := 1; i < len(s)-1; i++ {
		if isQuoteChar(s[i]) {
			return s
		}
	}
	return s[1 : len(s)-1]
}
