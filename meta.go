package pagoda

import (
	"math"
	"strconv"
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// tableMeta is what reading a table needs beyond its schema, computed once
// per catalog and shared by every transaction that uses it.
type tableMeta struct {
	rec   recordMeta
	kinfo format.KeyInfo // WITHOUT ROWID: PK collations and order
	nKey  int            // WITHOUT ROWID: number of PK fields
	plan  *writePlan     // built by the first write (db.mu guards it)
}

// indexMeta is the same for an index.
type indexMeta struct {
	rec   recordMeta
	kinfo format.KeyInfo
	aff   []schema.Affinity // affinity of each key field
}

// metaForTable describes the rows of table ti of a database whose text
// encoding is enc (header offset 56).
func metaForTable(ti *schema.TableInfo, enc uint32) *tableMeta {
	t := ti.Table
	m := &tableMeta{}
	n := len(t.Columns)
	m.rec = recordMeta{
		owner:    "table " + ti.Entry.Name,
		root:     ti.Entry.RootPage,
		rowids:   !t.WithoutRowID,
		names:    make([]string, n),
		field:    make([]int, n),
		alias:    -1,
		real:     make([]bool, n),
		defaults: make([]format.Value, n),
	}
	if !t.WithoutRowID {
		m.rec.alias = t.RowidAlias
	}
	m.rec.table = t
	m.rec.gen = compileGenerated(t, m.rec.owner, enc)
	for i, c := range t.Columns {
		m.rec.names[i] = c.Name
		m.rec.field[i] = -1
		m.rec.real[i] = c.Affinity == schema.AffinityReal
		if c.HasDefault {
			m.rec.defaults[i] = defaultFor(c.Default, c.Affinity, enc)
			if v := m.rec.defaults[i]; c.Affinity == schema.AffinityReal && v.Kind == format.KindFloat {
				// A whole REAL goes through an integer, as when stored: -0.0 reads 0.0.
				if w := integral(v); w.Kind == format.KindInt {
					m.rec.defaults[i] = format.FloatValue(float64(w.Int()))
				}
			}
		}
	}
	for f, col := range t.RecordOrder {
		if col >= 0 && col < n {
			m.rec.field[col] = f
		}
	}
	m.rec.setFast()
	m.rec.setEncoding(enc)
	if t.WithoutRowID {
		m.nKey = len(t.PrimaryKey)
		m.rec.keyFields = m.nKey
		for _, pk := range t.PrimaryKey {
			m.kinfo.Colls = append(m.kinfo.Colls, format.Collation(pk.Collation).ForEncoding(enc))
			m.kinfo.Desc = append(m.kinfo.Desc, pk.Desc)
		}
		m.kinfo.Other = schema.OtherCollation(t.PrimaryKey) // its rows read in order; no key is sought
	}
	return m
}

// metaForIndex describes the key records of index ix on table t: the
// indexed columns, then the rowid (rowid tables) or the primary key columns
// not already indexed (WITHOUT ROWID tables), in a database of text
// encoding enc.
func metaForIndex(ii *schema.IndexInfo, enc uint32) *indexMeta {
	ix, t := ii.Index, ii.Table.Table
	m := &indexMeta{rec: recordMeta{alias: -1, owner: "index " + ii.Entry.Name, root: ii.Entry.RootPage}}
	add := func(name string, coll schema.Collation, desc bool, aff schema.Affinity) {
		f := len(m.rec.names)
		m.rec.names = append(m.rec.names, name)
		m.rec.field = append(m.rec.field, f)
		m.rec.fast = append(m.rec.fast, f)
		m.rec.real = append(m.rec.real, aff == schema.AffinityReal)
		m.rec.defaults = append(m.rec.defaults, format.Value{})
		m.kinfo.Colls = append(m.kinfo.Colls, format.Collation(coll).ForEncoding(enc))
		m.kinfo.Desc = append(m.kinfo.Desc, desc)
		m.aff = append(m.aff, aff)
	}
	affOf := func(col int) schema.Affinity {
		if col >= 0 && col < len(t.Columns) {
			return t.Columns[col].Affinity
		}
		return schema.AffinityBlob
	}
	// An application-defined collation: the entries read in order, no key
	// is sought.
	m.kinfo.Other = schema.OtherCollation(ix.KeyOrder(t))
	for _, c := range ix.Columns {
		add(c.Name, c.Collation, c.Desc, affOf(c.Column))
	}
	if !t.WithoutRowID {
		add("rowid", schema.CollBinary, false, schema.AffinityInteger)
	} else {
		// The primary key columns not already a term with the same
		// collation (sqlite3's isDupColumn compares collations too),
		// ascending in an automatic index: schema's KeyOrder knows the
		// rules.
		for _, pk := range ix.KeyOrder(t)[len(ix.Columns):] {
			add(pk.Name, pk.Collation, pk.Desc, affOf(pk.Column))
		}
	}
	m.rec.setEncoding(enc)
	return m
}

// setFast sets fast from field and alias.
func (m *recordMeta) setFast() {
	m.fast = make([]int, len(m.field))
	for i, f := range m.field {
		if i == m.alias {
			f = -1
		}
		m.fast[i] = f
	}
}

// setEncoding records that the text of the records is in encoding enc.
// UTF-16 text is converted to UTF-8 as it is read, by Column's general
// path: every column goes that way, so that the fast path, which returns
// slices of the page, stays as it is for UTF-8 databases.
func (m *recordMeta) setEncoding(enc uint32) {
	if !format.IsUTF16(enc) {
		return
	}
	m.enc = enc
	for i := range m.fast {
		m.fast[i] = -1
	}
}

// defaultFor is the value of a DEFAULT clause s for the rows older than
// its column, in a database of text encoding enc, as SQLite's
// valueFromExpr computes it: literals as defaultValue reads them, unary
// plus and minus, and CAST: its operand computed under the CAST's affinity
// (so CAST(1.50 AS TEXT) keeps the spelling '1.50'), then cast (to a BLOB,
// a text's bytes in the database's encoding), then the column's affinity.
// valueFromExpr makes no value of any other expression, an operator's, a
// function's, CURRENT_TIMESTAMP's: such a default reads as NULL, as in
// SQLite (ALTER TABLE ADD COLUMN refuses it on a table with rows, but a
// schema edited in place has it).
func defaultFor(s string, aff schema.Affinity, enc uint32) format.Value {
	e, err := schema.ParseExpr(s)
	if err != nil {
		return format.NullValue() // no expression valueFromExpr evaluates
	}
	return defaultExpr(e, aff, enc)
}

func hasCast(e *schema.Expr) bool {
	if e.Op == schema.OpCast {
		return true
	}
	for _, a := range e.Args {
		if hasCast(a) {
			return true
		}
	}
	return false
}

func defaultExpr(e *schema.Expr, aff schema.Affinity, enc uint32) format.Value {
	switch e.Op {
	case schema.OpPlus:
		return defaultExpr(e.Args[0], aff, enc)
	case schema.OpCast:
		v := defaultExpr(e.Args[0], e.Aff, enc)
		if e.Aff == schema.AffinityBlob && v.Kind == format.KindText && format.IsUTF16(enc) {
			v = format.BlobValue(format.UTF8ToUTF16(nil, v.Bytes, enc))
		}
		return applyAffinity(castValue(v, e.Aff), aff)
	case schema.OpLiteral, schema.OpColumn: // a bare name is a string
		return defaultValue(e.String(), aff)
	case schema.OpNegate:
		if !hasCast(e) {
			return defaultValue(e.String(), aff)
		}
		return negateDefault(defaultExpr(e.Args[0], aff, enc), aff)
	case schema.OpIs:
		// SQLite's parser folds a literal's IS [NOT] NULL into FALSE or
		// TRUE (sqlite3PExprIsNull), which valueFromExpr reads.
		x := e.Args[0]
		if x.Op == schema.OpNegate {
			x = x.Args[0]
		}
		if y := e.Args[1]; y.Op == schema.OpLiteral && y.Lit == schema.LitNull && x.Op == schema.OpLiteral && x.Lit != schema.LitNull && x.Lit != schema.LitBool {
			v := int64(0) // IS NULL: false
			if e.Not {
				v = 1
			}
			return applyAffinity(format.IntValue(v), aff)
		}
	}
	return format.NullValue()
}

// defaultValue evaluates a DEFAULT clause for a column of affinity aff as
// SQLite's valueFromExpr does when it reads a row older than the column:
// literals (numbers keep their spelling until affinity converts them; hex
// integers; 'strings'; x'blobs'; NULL, TRUE, FALSE; a bare identifier is a
// string), unary plus and minus. Other expressions read as NULL: see
// defaultFor, which takes CAST.
//
// The rules are those of the SQLite that pagoda's differential tests run
// (modernc.org/sqlite, 3.54.1). Older releases differ and read the same
// file otherwise: sqlite3 3.40 gives a float literal NUMERIC affinity in a
// column without one (1.0 reads 1), keeps a hex literal beyond 31 bits as
// its text ('0x80000000'), and gives TRUE no affinity (1 in a TEXT column).
func defaultValue(s string, aff schema.Affinity) format.Value {
	s = trimParens(s)
	if s == "" {
		return format.NullValue()
	}
	switch s[0] {
	case '+':
		return defaultValue(s[1:], aff)
	case '-':
		// A minus on a decimal or float literal negates its text in one
		// step, so -5.0 in a TEXT column keeps its spelling. Parentheses
		// leave no node and the parser folds -(+x) into -x, so -(+5.0) is
		// that too. A hex literal is evaluated alone, under the column's
		// affinity, then negated as any other operand: -0x8000000000000000
		// is +9.223372036854775808e18.
		rest := trimParens(s[1:])
		for strings.HasPrefix(rest, "+") {
			rest = trimParens(rest[1:])
		}
		if isIntLiteral(rest) && !isHexLiteral(rest) {
			if v, ok := decOrHex(rest); ok {
				return applyAffinity(format.IntValue(-v), aff)
			}
		}
		if isIntLiteral(rest) && !isHexLiteral(rest) || isFloatLiteral(rest) {
			return numericLiteral("-"+rest, aff)
		}
		return negateDefault(defaultValue(rest, aff), aff)
	case '\'':
		if len(s) >= 2 && s[len(s)-1] == '\'' {
			return applyAffinity(format.TextValue([]byte(strings.ReplaceAll(s[1:len(s)-1], "''", "'"))), aff)
		}
		return format.NullValue()
	case '"', '`', '[':
		if name, ok := unquoteIdent(s); ok {
			return applyAffinity(format.TextValue([]byte(name)), aff)
		}
		return format.NullValue()
	}
	if isIntLiteral(s) {
		if v, ok := decOrHex(s); ok {
			return applyAffinity(format.IntValue(v), aff)
		}
		return numericLiteral(s, aff)
	}
	if isFloatLiteral(s) {
		return numericLiteral(s, aff)
	}
	if len(s) >= 3 && (s[0] == 'x' || s[0] == 'X') && s[1] == '\'' && s[len(s)-1] == '\'' {
		if b, ok := decodeHex(s[2 : len(s)-1]); ok {
			return format.BlobValue(b)
		}
		return format.NullValue()
	}
	switch strings.ToUpper(s) {
	case "NULL":
		return format.NullValue()
	case "TRUE":
		return applyAffinity(format.IntValue(1), aff)
	case "FALSE":
		return applyAffinity(format.IntValue(0), aff)
	}
	if isIdent(s) {
		return applyAffinity(format.TextValue([]byte(s)), aff)
	}
	return format.NullValue()
}

// negateDefault is valueFromExpr's unary minus of an operand it computed,
// v: NULL stays NULL; else the number v reads as, negated (-2^63 becomes
// a REAL), then the column's affinity.
func negateDefault(v format.Value, aff schema.Affinity) format.Value {
	if v.Kind == format.KindNull {
		return v
	}
	v = numerify(v)
	switch {
	case v.Kind != format.KindInt:
		v = format.FloatValue(-v.Float())
	case v.Int() == math.MinInt64:
		v = format.FloatValue(-float64(math.MinInt64))
	default:
		v = format.IntValue(-v.Int())
	}
	return applyAffinity(v, aff)
}

// trimParens trims spaces and the parentheses around a whole expression:
// SQLite's parser makes no node of them.
func trimParens(s string) string {
	s = strings.TrimSpace(s)
	for len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// numericLiteral is a number literal kept as its text, then converted by
// the affinity. A column without one takes the literal's own type (3.0
// stays REAL, where a NUMERIC column makes it 3).
func numericLiteral(text string, aff schema.Affinity) format.Value {
	if aff == schema.AffinityBlob {
		if n, ok := parseNumber(text); ok {
			return n
		}
		return format.TextValue([]byte(text))
	}
	return applyAffinity(format.TextValue([]byte(text)), aff)
}

// numerify converts a value to a number as SQLite's unary minus does: text
// by its longest numeric prefix (0 when there is none).
func numerify(v format.Value) format.Value {
	if v.Kind != format.KindText && v.Kind != format.KindBlob {
		return v
	}
	s := strings.TrimLeft(string(v.Bytes), " \t\n\f\r\v")
	for end := len(s); end > 0; end-- {
		if n, ok := parseNumber(s[:end]); ok {
			return integral(n)
		}
	}
	return format.IntValue(0)
}

// isHexLiteral reports whether the integer literal s is hexadecimal.
func isHexLiteral(s string) bool { return len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') }

func isIntLiteral(s string) bool {
	if isHexLiteral(s) {
		for _, c := range s[2:] {
			if _, ok := hexDigit(byte(c)); !ok {
				return false
			}
		}
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func isFloatLiteral(s string) bool {
	if s == "" || s[0] == '+' || s[0] == '-' || strings.TrimSpace(s) != s {
		return false
	}
	_, ok := parseNumber(s)
	return ok
}

// decOrHex parses a decimal integer that fits int64, or a hex integer of up
// to 16 digits (two's complement), as sqlite3DecOrHexToI64 does.
func decOrHex(s string) (int64, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		h := strings.TrimLeft(s[2:], "0")
		if len(h) > 16 {
			return 0, false
		}
		u, err := strconv.ParseUint("0"+h, 16, 64)
		return int64(u), err == nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

func isIdent(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || i > 0 && (c >= '0' && c <= '9' || c == '$')) {
			return false
		}
	}
	return s != ""
}

func unquoteIdent(s string) (string, bool) {
	open, close := s[0], s[0]
	if open == '[' {
		close = ']'
	}
	if len(s) < 2 || s[len(s)-1] != close {
		return "", false
	}
	body := s[1 : len(s)-1]
	if open != '[' {
		body = strings.ReplaceAll(body, string([]byte{close, close}), string(close))
	}
	return body, true
}

func decodeHex(s string) ([]byte, bool) {
	if len(s)%2 != 0 {
		return nil, false
	}
	b := make([]byte, len(s)/2)
	for i := range b {
		hi, ok1 := hexDigit(s[2*i])
		lo, ok2 := hexDigit(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, false
		}
		b[i] = hi<<4 | lo
	}
	return b, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
