package check

import (
	"strings"

	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// The row checks of sqlite3's integrity_check (src/pragma.c, "Verify
// datatypes for all columns"), made on each row as the walk meets it
// (checkFields): NOT NULL, STRICT types, and values against TEXT and
// numeric affinities, with SQLite's wording. As in SQLite, a problem can
// hide the problems of later columns of its row, because OP_IsType tests
// the serial types the cursor has parsed and each problem makes the
// parsed header stale: rowState models the parsing (seen is OP_IsType,
// value is OP_Column). docs/check-row-types.md explains the model.

// OP_IsType's type bits (its P5 mask), one for each storage class.
const (
	maskInt   uint8 = 0x01 // SQLITE_INTEGER
	maskFloat uint8 = 0x02 // SQLITE_FLOAT
	maskText  uint8 = 0x04 // SQLITE_TEXT
	maskBlob  uint8 = 0x08 // SQLITE_BLOB
	maskNull  uint8 = 0x10 // SQLITE_NULL
)

// The masks integrity_check passes to OP_IsType.
const (
	maskNotNullOK = maskInt | maskText | maskBlob             // (1): else read the value
	maskTextOK    = maskNull | maskText | maskBlob            // (3)
	maskNumericOK = maskNull | maskInt | maskFloat | maskBlob // (4): else read the value
	maskAny       = maskNull | maskInt | maskFloat | maskText | maskBlob
)

// strictMask is aStdTypeMask of pragma.c: what a STRICT column of each type
// holds, NULL included.
func strictMask(typ string) uint8 {
	switch typ {
	case "INT", "INTEGER":
		return maskNull | maskInt
	case "REAL":
		return maskNull | maskInt | maskFloat
	case "TEXT":
		return maskNull | maskText
	case "BLOB":
		return maskNull | maskBlob
	}
	return maskAny
}

// typeCheck is which of the type checks (2) to (4) a column gets.
type typeCheck uint8

const (
	checkNone    typeCheck = iota // NOT NULL alone
	checkStrict                   // (2)
	checkText                     // (3)
	checkNumeric                  // (4)
)

// rowRules is what every row of a table must satisfy.
type rowRules struct {
	table string    // the table's name, for messages
	cols  []colRule // the checked columns, in declaration order
	// parse is how many fields the first OP_Column of each row parses:
	// mxCol+1 in pragma.c.
	parse int
	// nKey is, in a WITHOUT ROWID table, the primary key's fields, which
	// integrity_check reads after each row's order check.
	nKey int
	enc  uint32 // text encoding, for (4)
	// virtual computes the table's VIRTUAL columns; nil when it has
	// none. fields maps a column to its field, -1 for the rowid alias
	// (read as the rowid) and VIRTUAL columns.
	virtual *expr.Table
	fields  []int
	onRead  func(col int) // appends to read, for virtual's reads
	read    []int         // the columns the last computing read
}

// colRule is what one column of a row must hold.
type colRule struct {
	column  string // the column's name
	col     int    // its index among the table's columns
	field   int    // its field in the record (P3); -1 for a VIRTUAL column
	notNull bool
	check   typeCheck
	typ     string // checkStrict: the STRICT type in upper case
	mask    uint8  // checkStrict: strictMask(typ)
	// dflt is the column's value in a row whose record lacks the field,
	// the column's DEFAULT converted by its affinity (expr.Table); its
	// type is also what OP_IsType takes for a field not parsed.
	dflt format.Value
}

// rowRules returns the rules of table ti's rows, nil when there are none
// (no NOT NULL column and no column with a type to check).
func (c *checker) rowRules(ti *schema.TableInfo) *rowRules {
	t := ti.Table
	if t == nil {
		return nil
	}
	r := &rowRules{table: ti.Entry.Name, enc: c.enc}
	field := make([]int, len(t.Columns))
	for i := range field {
		field[i] = -1
	}
	for f, col := range t.RecordOrder {
		if col >= 0 && col < len(field) {
			field[col] = f
		}
	}
	if t.WithoutRowID {
		r.nKey = len(t.PrimaryKey)
	}
	r.parse = rowParse(t)
	some := false
	for col := range t.Columns {
		if col == t.RowidAlias && !t.WithoutRowID {
			continue
		}
		cl := &t.Columns[col]
		rule := colRule{column: cl.Name, col: col, field: field[col], notNull: cl.NotNull}
		switch {
		case t.Strict:
			rule.typ = strings.ToUpper(cl.Type)
			if rule.mask = strictMask(rule.typ); rule.mask != maskAny {
				rule.check = checkStrict
			}
		case cl.Affinity == schema.AffinityText:
			rule.check = checkText
		case cl.Affinity >= schema.AffinityNumeric:
			rule.check = checkNumeric
		}
		if !rule.notNull && rule.check == checkNone {
			continue
		}
		rule.dflt = c.exprTable(ti).Defaults[col]
		r.cols, some = append(r.cols, rule), true
	}
	if !some {
		return nil
	}
	if et := c.exprTable(ti); et.HasVirtual() {
		r.virtual = et
		r.onRead = func(col int) { r.read = append(r.read, col) }
		r.fields = field
		if !t.WithoutRowID && t.RowidAlias >= 0 {
			r.fields[t.RowidAlias] = -1
		}
	}
	return r
}

// rowParse is how many fields of each row of table t the first OP_Column
// of integrity_check decodes: mxCol+1 in pragma.c, mxCol being the last
// non-virtual field, less one in a rowid table when that is the rowid
// alias's column index.
func rowParse(t *schema.Table) int {
	mxCol := len(t.RecordOrder) - 1
	if !t.WithoutRowID && mxCol == t.RowidAlias {
		mxCol--
	}
	return mxCol + 1
}

// virtual checks VIRTUAL column rule of the row as integrity_check does
// (pragma.c, p1 < 0): it computes the column, its OP_Column reads of the
// fields it uses parsing the header as they do (read), then OP_IsType on
// the computed value: NOT NULL, then the type, STRICT or by affinity. It
// returns false when the value cannot be computed, of which nothing is
// reported.
func (s *rowState) virtual(rule *colRule) (computed bool) {
	r := s.t.rules
	if r.virtual == nil {
		return false
	}
	r.read = r.read[:0]
	if !r.virtual.IsVirtual(rule.col) {
		return false
	}
	v, err := r.virtual.Virtual(rule.col, r.virtual.Record(s.rec, s.rowid), r.onRead)
	if err != nil {
		return false
	}
	for _, col := range r.read {
		if col >= 0 && col < len(r.fields) && r.fields[col] >= 0 {
			s.read(r.fields[col])
		}
	}
	name := func() string { return rowName(s.t, s.rowid, s.rec, r.enc) }
	if rule.notNull && v.Kind == format.KindNull {
		s.report("%s: %s: NULL value in %s.%s", s.t.name, name(), r.table, rule.column)
		return true
	}
	m := kindMask(v.Kind)
	switch rule.check {
	case checkStrict:
		if m&rule.mask == 0 {
			s.report("%s: %s: non-%s value in %s.%s (%s)", s.t.name, name(), rule.typ, r.table, rule.column, maskName(m))
		}
	case checkText:
		if m&maskTextOK == 0 {
			s.report("%s: %s: NUMERIC value in %s.%s (%s)", s.t.name, name(), r.table, rule.column, maskName(m))
		}
	case checkNumeric:
		if v.Kind == format.KindText && numericText(v.Bytes, r.enc) {
			var b strings.Builder
			writeValue(&b, v, r.enc)
			s.report("%s: %s: TEXT value in %s.%s (%s)", s.t.name, name(), r.table, rule.column, b.String())
		}
	}
	return true
}

// rowState is integrity_check's table cursor on one row: which fields'
// serial types OP_IsType sees (parsed) and whether a problem reported
// since the header was last parsed made it stale.
type rowState struct {
	c      *checker
	t      *tree
	pgno   uint32
	rowid  int64
	rec    []byte
	n      int // fields in rec (c.ftype, c.foff)
	parsed int
	stale  bool
}

// checkFields checks the fields of a row of tree t (record rec, its header
// sound, as rowRecord found it; rowid in a rowid table) on page pgno
// against t.rules. outOfOrder says that keyOrder found the row of a
// WITHOUT ROWID table out of primary-key order.
func (c *checker) checkFields(t *tree, pgno uint32, rowid int64, rec []byte, outOfOrder bool) {
	r := t.rules
	s := rowState{c: c, t: t, pgno: pgno, rowid: rowid, rec: rec, n: c.decodeHeader(rec)}
	s.parsed = min(r.parse, s.n)
	if outOfOrder {
		// "row not in PRIMARY KEY order" was reported, then each key
		// field read into the next row's comparison.
		s.stale = true
		for f := range r.nKey {
			s.read(f)
		}
	}
	for i := range r.cols {
		rule := &r.cols[i]
		if rule.field < 0 {
			if !s.virtual(rule) && s.stale {
				// Not computed: the fields its computing reads with
				// OP_Column, which parse the header again, are unknown.
				return
			}
			continue
		}
		if rule.notNull {
			if s.seen(rule)&maskNotNullOK == 0 { // NULL or REAL: read the value
				if v := s.value(rule); v.Kind == format.KindNull {
					s.report("%s: %s: NULL value in %s.%s", t.name, rowName(t, rowid, rec, r.enc), r.table, rule.column)
					continue
				}
			}
		}
		if rule.check == checkNone {
			continue
		}
		m := s.seen(rule)
		switch rule.check {
		case checkStrict:
			if m&rule.mask == 0 {
				s.report("%s: %s: non-%s value in %s.%s (%s)", t.name, rowName(t, rowid, rec, r.enc), rule.typ, r.table, rule.column, maskName(m))
			}
		case checkText:
			if m&maskTextOK == 0 {
				s.report("%s: %s: NUMERIC value in %s.%s (%s)", t.name, rowName(t, rowid, rec, r.enc), r.table, rule.column, maskName(m))
			}
		case checkNumeric:
			if m&maskNumericOK != 0 {
				continue
			}
			// TEXT to OP_IsType: read the value, apply NUMERIC affinity
			// (OP_Affinity "C") and report what is no longer NULL, TEXT
			// or BLOB. The value is the field's even when OP_IsType saw
			// the DEFAULT's type, the field not being parsed.
			if v := s.value(rule); v.Kind == format.KindInt || v.Kind == format.KindFloat ||
				v.Kind == format.KindText && numericText(v.Bytes, r.enc) {
				var b strings.Builder
				writeValue(&b, v, r.enc)
				s.report("%s: %s: TEXT value in %s.%s (%s)", t.name, rowName(t, rowid, rec, r.enc), r.table, rule.column, b.String())
			}
		}
	}
}

// seen returns the type OP_IsType sees for rule's column: its field's
// serial type when parsed, else the type of its DEFAULT (P4).
func (s *rowState) seen(rule *colRule) uint8 {
	if f := rule.field; f < s.parsed {
		return serialMask(s.c.ftype[f])
	}
	return kindMask(rule.dflt.Kind)
}

// value is OP_Column on rule's column: it parses the header as far as the
// field (read) and returns the field's value, or the column's default when
// the record lacks the field.
func (s *rowState) value(rule *colRule) format.Value {
	f := rule.field
	s.read(f)
	if f < s.n {
		return s.c.fieldValue(s.rec, f)
	}
	return rule.dflt
}

// read is the parsing side of OP_Column on field f: a stale header is
// parsed again from the start up to f, a fresh one on to f.
func (s *rowState) read(f int) {
	if s.stale || s.parsed <= f {
		s.parsed = min(f+1, s.n)
	}
	s.stale = false
}

// report records a problem of the row: an OP_ResultRow, which makes the
// parsed header stale.
func (s *rowState) report(msg string, args ...any) {
	s.c.reportf(s.pgno, msg, args...)
	s.stale = true
}

// decodeHeader reads the serial types of record rec (its header sound, as
// recordEnd passed it with reserved types read as NULL) into c.ftype and
// the start of each field's body into c.foff (c.foff[f+1] is where field f
// ends), and returns the number of fields. It stops at a field whose body
// runs past rec, which rowRecord does not pass.
func (c *checker) decodeHeader(rec []byte) int {
	h, pos := format.Uvarint(rec)
	if pos == 0 || h > uint64(len(rec)) {
		return 0
	}
	hdr, off := rec[:h], int(h)
	c.ftype, c.foff = c.ftype[:0], append(c.foff[:0], off)
	for pos < len(hdr) {
		st, size, next, ok := format.ShortSerial(hdr, pos)
		if !ok {
			var n int
			st, n = format.Uvarint(hdr[pos:])
			s, valid := rowSerialSize(st)
			if n == 0 || !valid || s > int64(len(rec)-off) {
				break
			}
			size, next = int(s), pos+n
		}
		if size > len(rec)-off {
			break
		}
		off += size
		c.ftype, c.foff = append(c.ftype, st), append(c.foff, off)
		pos = next
	}
	return len(c.ftype)
}

// fieldValue returns field f of the record decodeHeader decoded last, as
// SQLite reads it (rowValue).
func (c *checker) fieldValue(rec []byte, f int) format.Value {
	return rowValue(c.ftype[f], rec[c.foff[f]:c.foff[f+1]])
}

// Serial types 10 and 11 are "reserved for expansion" (sqlite-format.md
// §3): SQLite writes neither in a file, but reads both as NULL with no
// body (sqlite3VdbeSerialGet, sqlite3VdbeSerialTypeLen), and its
// integrity_check accepts a row that has one: OP_IsType counts them as
// NULL. format rejects them everywhere but in the rows of rowid tables
// (CheckRow, RowFieldAt), and so does the check: in index b-trees (index
// entries and WITHOUT ROWID rows, whose order SQLite compares with 10 equal
// to NULL and 11 between the numbers and the text, which
// format.CompareRecords does not do) and in sqlite_schema, whose rows
// pagoda must decode, they are malformed. In the rows of rowid tables the
// check reads them as SQLite does.
const (
	serialReserved10 = 10
	serialReserved11 = 11
)

// rowSerialSize is format.SerialTypeSize for the fields of a rowid table's
// row: the reserved types have no body.
func rowSerialSize(st uint64) (int64, bool) {
	if st == serialReserved10 || st == serialReserved11 {
		return 0, true
	}
	return format.SerialTypeSize(st)
}

// rowValue decodes a field of serial type st and body body (its size
// rowSerialSize(st)) as SQLite reads it: a reserved type and a NaN read as
// NULL.
func rowValue(st uint64, body []byte) format.Value {
	if st == serialReserved10 || st == serialReserved11 {
		return format.NullValue()
	}
	return format.DecodeValue(st, body)
}

// rowField returns field f of a row record (sound by recordEnd), as SQLite
// reads it (rowValue); ok is false when the record has fewer fields.
func rowField(rec []byte, f int) (v format.Value, ok bool) {
	st, body, state := format.FieldAt(rec, f)
	switch state {
	case format.FieldOK:
		return format.DecodeValue(st, body), true
	case format.FieldAbsent:
		return format.Value{}, false
	}
	// A reserved type before or at field f (or a fault): the long way.
	h, pos := format.Uvarint(rec)
	if pos == 0 || h > uint64(len(rec)) {
		return format.Value{}, false
	}
	hdr, off := rec[:h], int(h)
	for k := 0; pos < len(hdr); k++ {
		st, n := format.Uvarint(hdr[pos:])
		size, valid := rowSerialSize(st)
		if n == 0 || !valid || size > int64(len(rec)-off) {
			return format.Value{}, false
		}
		if k == f {
			return rowValue(st, rec[off:off+int(size)]), true
		}
		pos, off = pos+n, off+int(size)
	}
	return format.Value{}, false
}

// serialMask is the type OP_IsType sees in a field of serial type st: the
// serial type alone, so a NaN is REAL; 10 and 11 are NULL.
func serialMask(st uint64) uint8 {
	switch {
	case st >= 12:
		if st&1 == 1 {
			return maskText
		}
		return maskBlob
	case st == 0 || st == serialReserved10 || st == serialReserved11:
		return maskNull
	case st == 7:
		return maskFloat
	}
	return maskInt
}

// kindMask is the type bit of a storage class.
func kindMask(k format.Kind) uint8 {
	switch k {
	case format.KindInt:
		return maskInt
	case format.KindFloat:
		return maskFloat
	case format.KindText:
		return maskText
	case format.KindBlob:
		return maskBlob
	}
	return maskNull
}

// maskName names the storage class of a one-bit mask, for messages.
func maskName(m uint8) string {
	switch m {
	case maskInt:
		return format.KindInt.String()
	case maskFloat:
		return format.KindFloat.String()
	case maskText:
		return format.KindText.String()
	case maskBlob:
		return format.KindBlob.String()
	}
	return format.KindNull.String()
}

// numericText reports whether NUMERIC affinity turns text b (in encoding
// enc, a header text-encoding code) into a number: whether SQLite 3.54's
// sqlite3AtoF (src/util.c) accepts it whole, by this grammar:
//
//	[space...] [+|-] digits [. [digits]] [exponent] [space...]
//	[space...] [+|-] . digits [exponent] [space...]
//	exponent:  (e|E) [+|-] digits
//
// where a space is one of \t \n \v \f \r and ' ' (sqlite3Isspace) and the
// text ends at its end or at its first NUL byte, whatever follows it
// ("5\x00abc" is 5; sqlite3 3.40 read the whole length and kept it TEXT).
// An exponent without digits ("1e", "1e+") is not a number. Hexadecimal
// ("0x10"), "inf", "NaN" and digits outside ASCII are not numbers. Huge
// values are numbers (1e999 is Inf). In UTF-16 the text must be all code
// units below 0x100 (sqlite3MemRealValueRCSlowPath), read by their low
// byte.
func numericText(b []byte, enc uint32) bool {
	step, lo := 1, 0
	switch enc {
	case format.TextEncodingUTF16LE:
		step = 2
	case format.TextEncodingUTF16BE:
		step, lo = 2, 1
	}
	n := len(b)
	if step == 2 {
		n &^= 1
		for i := 0; i < n; i += 2 {
			if b[i+1-lo] != 0 {
				return false
			}
		}
	}
	// at returns the character at i, 0 at the end.
	at := func(i int) byte {
		if i >= n {
			return 0
		}
		return b[i+lo]
	}
	i := 0
	for isSpace(at(i)) {
		i += step
	}
	if c := at(i); c == '+' || c == '-' {
		i += step
	}
	digits := false
	for isDigit(at(i)) {
		i, digits = i+step, true
	}
	if at(i) == '.' {
		i += step
		for isDigit(at(i)) {
			i, digits = i+step, true
		}
	}
	if !digits {
		return false
	}
	if c := at(i); c == 'e' || c == 'E' {
		i += step
		if c := at(i); c == '+' || c == '-' {
			i += step
		}
		if !isDigit(at(i)) {
			return false
		}
		for isDigit(at(i)) {
			i += step
		}
	}
	for isSpace(at(i)) {
		i += step
	}
	return at(i) == 0
}

// isSpace is sqlite3Isspace: ASCII space and \t \n \v \f \r.
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// isDigit is sqlite3Isdigit: ASCII digits.
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// rowValues sets row[col] to the value of every column of a row (record
// rec, checked, and rowid) in one pass over the record: the record's field
// (rowValue), the rowid for the rowid alias, else the column's default
// (columnValue); known is scratch, one per column.
func (c *checker) rowValues(ti *schema.TableInfo, rec []byte, rowid int64, field []int, row []format.Value, known []bool) {
	t := ti.Table
	clear(known)
	n := c.decodeHeader(rec)
	for f, col := range t.RecordOrder {
		if f >= n {
			break
		}
		if col >= 0 && col < len(row) {
			row[col], known[col] = c.fieldValue(rec, f), true
		}
	}
	if a := t.RowidAlias; a >= 0 && a < len(row) && !t.WithoutRowID {
		row[a], known[a] = format.IntValue(rowid), true
	}
	for col := range row {
		if !known[col] {
			row[col] = c.columnValue(ti, rec, rowid, col, field)
		}
	}
	if c.utf16 {
		// CHECK constraints and WHERE clauses see UTF-8, as reads do.
		for col, v := range row {
			if v.Kind == format.KindText {
				row[col] = format.TextValue(format.UTF16ToUTF8(nil, v.Bytes, c.enc))
			}
		}
	}
}
