package expr

import (
	"bytes"
	"errors"

	"github.com/pagodadb/pagoda/internal/format"
)

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

// maxPatternLength is SQLITE_MAX_LIKE_PATTERN_LENGTH: a longer LIKE or
// GLOB pattern is an error.
const maxPatternLength = 50000

var errPatternTooComplex = errors.New("LIKE or GLOB pattern too complex")

// glob is glob(pat, s), s GLOB pat, as likeFunc computes it with
// globInfo: a BLOB on either side matches nothing (0); a pattern over
// maxPatternLength bytes is an error; NULL on either side is NULL; else
// both read as text up to a NUL byte, patternCompare with '*', '?' and
// '[...]', case-sensitive.
func (r *exprRow) glob(pat, s format.Value) format.Value {
	if pat.Kind == format.KindBlob || s.Kind == format.KindBlob {
		return format.IntValue(0)
	}
	if len(bytesOf(pat)) > maxPatternLength {
		return r.fail(errPatternTooComplex)
	}
	if pat.Kind == format.KindNull || s.Kind == format.KindNull {
		return format.NullValue()
	}
	if globCompare(cutNUL(textOf(pat)), cutNUL(textOf(s))) == likeMatch {
		return format.IntValue(1)
	}
	return format.IntValue(0)
}

// globCompare is patternCompare for GLOB (its '[' both the set and the
// "escape"): likeMatch, likeNoMatch, or likeNoWildcard when the text ran
// out under a '*', so that no enclosing '*' tries further.
func globCompare(p, s []byte) int {
	read := func(b *[]byte) rune {
		c, n := utf8Read(*b)
		*b = (*b)[n:]
		return c
	}
	for {
		before := p
		c := read(&p)
		if c == 0 {
			break
		}
		if c == '*' {
			for {
				before = p
				if c = read(&p); c != '*' && c != '?' {
					break
				}
				if c == '?' && read(&s) == 0 {
					return likeNoWildcard
				}
			}
			switch {
			case c == 0:
				return likeMatch
			case c == '[':
				// A set right after '*': try it at every position.
				for len(s) > 0 {
					if m := globCompare(before, s); m != likeNoMatch {
						return m
					}
					s = s[skipUTF8(s):]
				}
				return likeNoWildcard
			case c < 0x80:
				for {
					i := bytes.IndexByte(s, byte(c))
					if i < 0 {
						break
					}
					s = s[i+1:]
					if m := globCompare(p, s); m != likeNoMatch {
						return m
					}
				}
			default:
				for len(s) > 0 {
					if read(&s) != c {
						continue
					}
					if m := globCompare(p, s); m != likeNoMatch {
						return m
					}
				}
			}
			return likeNoWildcard
		}
		if c == '[' {
			var prior rune
			seen, invert := false, false
			c = read(&s)
			if c == 0 {
				return likeNoMatch
			}
			c2 := read(&p)
			if c2 == '^' {
				invert = true
				c2 = read(&p)
			}
			if c2 == ']' {
				if c == ']' {
					seen = true
				}
				c2 = read(&p)
			}
			for c2 != 0 && c2 != ']' {
				if c2 == '-' && len(p) > 0 && p[0] != ']' && prior > 0 {
					c2 = read(&p)
					if c >= prior && c <= c2 {
						seen = true
					}
					prior = 0
				} else {
					if c == c2 {
						seen = true
					}
					prior = c2
				}
				c2 = read(&p)
			}
			if c2 == 0 || seen == invert {
				return likeNoMatch
			}
			continue
		}
		c2 := read(&s)
		if c == c2 || c == '?' && c2 != 0 {
			continue
		}
		return likeNoMatch
	}
	if len(s) == 0 {
		return likeMatch
	}
	return likeNoMatch
}
