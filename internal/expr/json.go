package expr

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/pagodadb/pagoda/internal/format"
)

// json_extract (with one path or several), json_type, json_array_length,
// and the -> and ->> operators, over JSON text as RFC 8259 has it. SQLite also reads JSON5 and JSONB blobs; pagoda
// does not, and reports format.ErrUnsupported for them (and for text that is
// neither) rather than guess which of SQLite's answers applies.
//
// What SQLite returns for the value found: NULL for none or a JSON null;
// 1 and 0 for true and false; an integer literal that fits int64 as an
// INTEGER, another number as a REAL (1e400 is Inf); a string unescaped
// (\uXXXX pairs joined); an object or array as its minified text, numbers
// and strings as written. -> returns the minified JSON text of any value.

var errBadPath = errors.New("bad JSON path")

// jsonArrow is x -> p (asSQL false) and x ->> p: an INTEGER p is an array
// index (negative from the end), a text p starting with $ a path, with [
// an array path, else an object label.
func (r *exprRow) jsonArrow(x, p format.Value, asSQL bool) format.Value {
	if x.Kind == format.KindNull || p.Kind == format.KindNull {
		return r.jsonDocOnly(x)
	}
	var path string
	switch {
	case p.Kind == format.KindInt && p.Int() < 0:
		path = "$[#" + strconv.FormatInt(p.Int(), 10) + "]"
	case p.Kind == format.KindInt:
		path = "$[" + strconv.FormatInt(p.Int(), 10) + "]"
	default:
		t := string(cutNUL(textOf(p))) // read as a C string, as SQLite does
		switch {
		case len(t) > 0 && t[0] == '$':
			path = t
		case len(t) > 0 && t[0] == '[':
			path = "$" + t
		case t == "":
			path = "" // not a label: a bad path, as SQLite says
		default:
			return r.jsonLookup(x, "", t, true, asSQL)
		}
	}
	return r.jsonLookup(x, path, "", false, asSQL)
}

// jsonExtract is json_extract(x, path) with one path.
func (r *exprRow) jsonExtract(x, p format.Value) format.Value {
	if x.Kind == format.KindNull || p.Kind == format.KindNull {
		return r.jsonDocOnly(x)
	}
	return r.jsonLookup(x, string(cutNUL(textOf(p))), "", false, true)
}

// jsonDocOnly is a JSON function's NULL when its path is NULL: SQLite
// still parses the document first, so a malformed one is an error.
func (r *exprRow) jsonDocOnly(x format.Value) format.Value {
	switch {
	case x.Kind == format.KindNull:
		return x
	case x.Kind == format.KindBlob:
		return r.fail(fmt.Errorf("%w: JSON in a BLOB (JSONB)", format.ErrUnsupported))
	case !jsonValid(cutNUL(textOf(x))):
		return r.fail(fmt.Errorf("%w: JSON text that is not RFC 8259 JSON (JSON5, or malformed)", format.ErrUnsupported))
	}
	return format.NullValue()
}

// jsonLookup finds path (or, byLabel, the object label label) in the JSON
// text x.
func (r *exprRow) jsonLookup(x format.Value, path, label string, byLabel, asSQL bool) format.Value {
	doc, err := jsonDoc(x)
	if err != nil {
		return r.fail(err)
	}
	at, found, err := jsonFind(doc, path, label, byLabel)
	switch {
	case err != nil:
		return r.fail(err)
	case !found:
		return format.NullValue()
	}
	return jsonResult(doc, at, asSQL)
}

// jsonExtractAll is json_extract(x, p1, p2, ...): the JSON array of what
// each path finds (its JSON text, as -> gives it), null where it finds
// nothing; NULL when x or any path is NULL (SQLite stops at the first
// NULL path, after reporting a bad path before it).
func (r *exprRow) jsonExtractAll(x format.Value, paths []format.Value) format.Value {
	if x.Kind == format.KindNull {
		return x
	}
	doc, err := jsonDoc(x)
	if err != nil {
		return r.fail(err)
	}
	out := []byte{'['}
	for i, p := range paths {
		if p.Kind == format.KindNull {
			return format.NullValue()
		}
		at, found, err := jsonFind(doc, string(cutNUL(textOf(p))), "", false)
		if err != nil {
			return r.fail(err)
		}
		if i > 0 {
			out = append(out, ',')
		}
		if !found {
			out = append(out, "null"...)
			continue
		}
		out = append(out, jsonMinify(doc[at:jsonSkip(doc, at)])...)
	}
	return format.TextValue(append(out, ']'))
}

// jsonAt is what json_type and json_array_length look at: the value x
// holds at path p (the whole of x without p); found is false for NULL.
func (r *exprRow) jsonAt(x format.Value, p *format.Value) (doc []byte, at int, found bool) {
	if x.Kind == format.KindNull {
		return nil, 0, false
	}
	doc, err := jsonDoc(x)
	if err != nil {
		r.fail(err)
		return nil, 0, false
	}
	path := "$"
	if p != nil {
		if p.Kind == format.KindNull {
			return nil, 0, false
		}
		path = string(cutNUL(textOf(*p)))
	}
	at, found, err = jsonFind(doc, path, "", false)
	if err != nil {
		r.fail(err)
		return nil, 0, false
	}
	return doc, at, found
}

// jsonType is json_type: null, true, false, integer (a number without a
// point or exponent, however large), real, text, array or object.
func (r *exprRow) jsonType(x format.Value, p *format.Value) format.Value {
	doc, at, found := r.jsonAt(x, p)
	if !found {
		return format.NullValue()
	}
	var t string
	switch c := doc[at]; c {
	case 'n':
		t = "null"
	case 't':
		t = "true"
	case 'f':
		t = "false"
	case '"':
		t = "text"
	case '[':
		t = "array"
	case '{':
		t = "object"
	default:
		t = "integer"
		if bytes.ContainsAny(doc[at:jsonSkip(doc, at)], ".eE") {
			t = "real"
		}
	}
	return format.TextValue([]byte(t))
}

// jsonArrayLength is json_array_length: the elements of an array, 0 for
// any other value.
func (r *exprRow) jsonArrayLength(x format.Value, p *format.Value) format.Value {
	doc, at, found := r.jsonAt(x, p)
	if !found {
		return format.NullValue()
	}
	return format.IntValue(int64(len(jsonElems(doc, at))))
}

// jsonDoc is the JSON text x (not NULL), or why pagoda does not read it.
func jsonDoc(x format.Value) ([]byte, error) {
	if x.Kind == format.KindBlob {
		return nil, fmt.Errorf("%w: JSON in a BLOB (JSONB)", format.ErrUnsupported)
	}
	doc := cutNUL(textOf(x)) // SQLite's JSON functions read text up to a NUL byte
	if !jsonValid(doc) {
		return nil, fmt.Errorf("%w: JSON text that is not RFC 8259 JSON (JSON5, or malformed)", format.ErrUnsupported)
	}
	return doc, nil
}

// jsonFind finds path (or, byLabel, the object label label) in the valid
// JSON text doc: the start of the value, or not found, or a bad path (the
// empty path among them).
func jsonFind(doc []byte, path, label string, byLabel bool) (int, bool, error) {
	j := jsonScan{b: doc}
	j.space()
	start := j.i
	if byLabel {
		end, ok := jsonMember(doc, start, label)
		return end, ok, nil
	}
	if path == "" || path[0] != '$' {
		return 0, false, fmt.Errorf("%w: %q", errBadPath, path)
	}
	at := start
	for i := 1; i < len(path); {
		switch path[i] {
		case '.':
			i++
			var key string
			if i < len(path) && path[i] == '"' {
				k := i + 1
				for k < len(path) && path[k] != '"' {
					k++
				}
				if k == len(path) {
					return 0, false, fmt.Errorf("%w: %q", errBadPath, path)
				}
				key, i = path[i+1:k], k+1
			} else {
				k := i
				for k < len(path) && path[k] != '.' && path[k] != '[' {
					k++
				}
				if k == i {
					return 0, false, fmt.Errorf("%w: %q", errBadPath, path)
				}
				key, i = path[i:k], k
			}
			var ok bool
			if at, ok = jsonMember(doc, at, key); !ok {
				return 0, false, nil
			}
		case '[':
			if doc[at] != '[' {
				// Not an array: not found, as SQLite's lookup step says
				// before it reads the index (so '$[-1]' on an object is
				// NULL, on an array a bad path).
				return 0, false, nil
			}
			k := i + 1
			fromEnd := false
			if k < len(path) && path[k] == '#' {
				fromEnd = true
				k++
			}
			e := k
			if fromEnd && e < len(path) && path[e] == '-' {
				e++
			}
			for e < len(path) && path[e] >= '0' && path[e] <= '9' {
				e++
			}
			if e == len(path) || path[e] != ']' || !fromEnd && e == k {
				return 0, false, fmt.Errorf("%w: %q", errBadPath, path)
			}
			idx := int64(0)
			if e > k {
				var err error
				if idx, err = strconv.ParseInt(path[k:e], 10, 64); err != nil {
					return 0, false, fmt.Errorf("%w: %q", errBadPath, path)
				}
			}
			i = e + 1
			elems := jsonElems(doc, at)
			if elems == nil {
				return 0, false, nil
			}
			if fromEnd {
				idx += int64(len(elems))
			}
			if idx < 0 || idx >= int64(len(elems)) {
				return 0, false, nil
			}
			at = elems[idx]
		default:
			return 0, false, fmt.Errorf("%w: %q", errBadPath, path)
		}
	}
	return at, true, nil
}

// jsonSkip returns the end of the (valid) value at i.
func jsonSkip(doc []byte, i int) int {
	j := jsonScan{b: doc, i: i}
	j.value(0)
	return j.i
}

// jsonMember returns the start of the value of the first member labelled
// key of the object at i.
func jsonMember(doc []byte, i int, key string) (int, bool) {
	if doc[i] != '{' {
		return 0, false
	}
	j := jsonScan{b: doc, i: i + 1}
	for {
		j.space()
		if doc[j.i] == '}' {
			return 0, false
		}
		ks := j.i
		j.str()
		k := jsonUnescape(doc[ks+1 : j.i-1])
		j.space()
		j.i++ // :
		j.space()
		if string(k) == key {
			return j.i, true
		}
		j.i = jsonSkip(doc, j.i)
		j.space()
		if doc[j.i] == ',' {
			j.i++
		}
	}
}

// jsonElems returns the starts of the elements of the array at i, nil if
// it is not an array.
func jsonElems(doc []byte, i int) []int {
	if doc[i] != '[' {
		return nil
	}
	out := []int{}
	j := jsonScan{b: doc, i: i + 1}
	for {
		j.space()
		if doc[j.i] == ']' {
			return out
		}
		out = append(out, j.i)
		j.i = jsonSkip(doc, j.i)
		j.space()
		if doc[j.i] == ',' {
			j.i++
		}
	}
}

// jsonResult converts the value at i.
func jsonResult(doc []byte, i int, asSQL bool) format.Value {
	end := jsonSkip(doc, i)
	if !asSQL {
		return format.TextValue(jsonMinify(doc[i:end]))
	}
	switch c := doc[i]; {
	case c == 'n':
		return format.NullValue()
	case c == 't':
		return format.IntValue(1)
	case c == 'f':
		return format.IntValue(0)
	case c == '"':
		return format.TextValue(jsonUnescape(doc[i+1 : end-1]))
	case c == '{' || c == '[':
		return format.TextValue(jsonMinify(doc[i:end]))
	}
	s := string(doc[i:end])
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return format.IntValue(n)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return format.NullValue()
	}
	return format.FloatValue(f)
}

// jsonMinify drops the white space outside strings.
func jsonMinify(b []byte) []byte {
	out := make([]byte, 0, len(b))
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case in && c == '\\':
			out = append(out, c, b[i+1])
			i++
			continue
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		}
		out = append(out, c)
	}
	return out
}

// jsonUnescape decodes the body of a valid JSON string as SQLite does: a
// \uXXXX high surrogate followed by a low one is one character; any other
// code unit is encoded alone.
func jsonUnescape(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch b[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			v, _ := strconv.ParseUint(string(b[i+1:i+5]), 16, 32)
			i += 4
			if v >= 0xd800 && v < 0xdc00 && i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
				if w, err := strconv.ParseUint(string(b[i+3:i+7]), 16, 32); err == nil && w >= 0xdc00 && w < 0xe000 {
					v = ((v&0x3ff)<<10 | w&0x3ff) + 0x10000
					i += 6
				}
			}
			out = appendUTF8(out, rune(v))
		default:
			out = append(out, b[i])
		}
	}
	return out
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
