package pagoda

import (
	"fmt"
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// Generated columns.
//
// A STORED generated column is in the record like any other column. A
// VIRTUAL one is not: SQLite computes it when it is read
// (sqlite3ExprCodeGeneratedColumn), and so does Record.Column: the
// column's expression over the row's columns as Column reads them (the
// rowid alias as the rowid, a REAL column's integers as REALs, the
// defaults of columns added after the row, other generated columns,
// VIRTUAL ones computed in turn), then the column's declared affinity
// unless it is BLOB (OP_Affinity is coded only for TEXT and the numeric
// affinities; a REAL result keeps its value, -0.0 reading 0.0). In a
// STRICT table the value must then be of the column's type (typeCheck).
//
// The expressions are compiled once per table, when its recordMeta is
// built, with the evaluator of CHECK constraints (checkexpr.go) and its
// broader subset (see schema.Expr). One outside it is not guessed at: the
// column reads as NULL and the read records an error wrapping
// ErrUnsupported on the transaction, naming the table, the column and the
// construct, as a malformed record is reported; the other columns read as
// usual. An expression that fails as SQLite's would (malformed JSON, an
// integer overflow in abs) is reported the same way without
// ErrUnsupported: SQLite fails the statement that reads it.

// genColumn is a VIRTUAL generated column compiled against its table.
type genColumn struct {
	node *cnode
	aff  schema.Affinity
	err  error // why it cannot be evaluated, if it cannot
	// strict is the declared type in upper case in a STRICT table, ""
	// elsewhere: a value it does not accept fails the read (typeCheck).
	strict string
}

// typeCheck fails a STRICT table's VIRTUAL column i whose value v, after
// its affinity, is not of its declared type, as SQLite 3.54 fails the
// statement that reads it (OP_TypeCheck, SQLITE_CONSTRAINT_DATATYPE) and
// its integrity_check reports the row. SQLite refuses to write such a row
// since, but older versions wrote them.
func (g *genColumn) typeCheck(t *schema.Table, i int, v format.Value) error {
	if g.strict == "" || v.Kind == format.KindNull || schema.StrictAccepts(g.strict, v.Kind) {
		return nil
	}
	return fmt.Errorf("cannot store %s value in %s column %s.%s: %w", kindName(v.Kind), g.strict, t.Name, t.Columns[i].Name, errConstraint)
}

// exprRow is the row an expression reads: the values of a row about to be
// written (vals, after affinity) or a record read column by column.
type exprRow struct {
	t    *schema.Table
	vals []format.Value
	rec  *Record
	err  error  // the first error of the evaluation
	enc  uint32 // a record's text encoding: UTF-16 (2 or 3), or 0 for UTF-8
	// held are the texts of this evaluation that SQLite holds in the
	// database's UTF-16 (columns read, || results), by their bytes'
	// identity: utf16Text converts them back losslessly.
	held [][]byte
	// reads, when not nil, is told each stored column of the record that
	// the evaluation reads, in order (the check follows SQLite's parsing
	// of the row by them).
	reads func(col int)
}

// errUTF16Blob refuses a BLOB read by an expression of a UTF-16 database:
// where SQLite takes a BLOB as text (||, CAST, lower, a number from it...)
// it reads its bytes as UTF-16, where pagoda would read UTF-8.
var errUTF16Blob = fmt.Errorf("%w: a BLOB in an expression of a UTF-16 database (SQLite reads its bytes as UTF-16 text)", ErrUnsupported)

// column reads column i of the row as an expression sees it. A VIRTUAL
// column of a record is computed within the same evaluation, so that one
// that cannot be computed fails the expressions that read it, as in
// SQLite (a NULL in its place would give them a wrong value).
func (r *exprRow) column(i int) format.Value {
	if r.rec != nil {
		if m := r.rec.meta(); m.gen != nil && r.t.Columns[i].Hidden {
			g := &m.gen[i]
			if g.node == nil {
				return r.fail(g.err)
			}
			v := g.node.ev(r).v
			if r.err != nil {
				return format.NullValue()
			}
			v = r.utf16Text(r.affinity(v, g.aff))
			if err := g.typeCheck(r.t, i, v); err != nil {
				return r.fail(err)
			}
			return r.hold(v)
		}
		if r.reads != nil {
			r.reads(i)
		}
		v := r.rec.Column(i).format()
		if r.enc != 0 && v.Kind == format.KindBlob {
			return r.fail(errUTF16Blob)
		}
		return r.hold(v)
	}
	v := r.vals[i]
	if r.t.Columns[i].Affinity == schema.AffinityReal && v.Kind == format.KindInt {
		v = format.FloatValue(float64(v.Int())) // stored as an integer, read as REAL
	}
	return v
}

// fail records the first error of an evaluation; the value is NULL.
func (r *exprRow) fail(err error) format.Value {
	if r.err == nil {
		r.err = err
	}
	return format.NullValue()
}

// compileGenerated compiles the VIRTUAL columns of t: nil when it has
// none. A column that cannot be compiled keeps its error for its reads.
func compileGenerated(t *schema.Table, owner string, enc uint32) []genColumn {
	var out []genColumn
	for i, c := range t.Columns {
		if !c.Hidden {
			continue
		}
		if out == nil {
			out = make([]genColumn, len(t.Columns))
		}
		g := &out[i]
		g.aff = c.Affinity
		if t.Strict {
			g.strict = strings.ToUpper(c.Type)
		}
		e, err := schema.ParseExpr(c.Expr)
		if err == nil {
			err = encodingFree(e, enc)
		}
		if err == nil {
			g.node, err = compileNode(e, t, true)
		}
		if err != nil {
			g.err = fmt.Errorf("pagoda: %w: %s column %s AS (%s): %v", ErrUnsupported, owner, c.Name, c.Expr, err)
		}
	}
	// SQLite refuses a loop of generated columns when it creates the
	// table; a file that has one anyway is not evaluated.
	for i := range out {
		if out[i].node != nil && genLoop(out, i, i, 0) {
			out[i].node = nil
			out[i].err = fmt.Errorf("pagoda: %w: %s column %s: a loop of generated columns", ErrUnsupported, owner, t.Columns[i].Name)
		}
	}
	return out
}

// genLoop reports whether column from's expression reaches column to
// through VIRTUAL columns.
func genLoop(gen []genColumn, from, to, depth int) bool {
	if depth > len(gen) {
		return true
	}
	var walk func(n *cnode) bool
	walk = func(n *cnode) bool {
		if n.op == schema.OpColumn && gen[n.col].node != nil {
			if n.col == to || genLoop(gen, n.col, to, depth+1) {
				return true
			}
		}
		for _, a := range n.args {
			if walk(a) {
				return true
			}
		}
		return false
	}
	return walk(gen[from].node)
}

// generated computes VIRTUAL column i of r, reporting on the transaction
// why it cannot.
func (r Record) generated(i int) Value {
	m := r.meta()
	v, err := r.virtualValue(i, nil)
	if err == nil {
		err = m.gen[i].typeCheck(m.table, i, v)
	}
	if err != nil {
		if tx := r.tx(); tx != nil {
			if m.gen[i].node != nil { // else the error names the column
				err = fmt.Errorf("pagoda: %s row %d: %w", m.owner, r.rowid, err)
			}
			tx.setErr(err)
		}
		return Value{}
	}
	return valueOf(v)
}

// virtualValue computes VIRTUAL column i of r: its expression, then the
// column's affinity (and, in a UTF-16 database, the text as SQLite holds
// it). reads, when not nil, is told each stored column read (exprRow).
// The error says why it cannot be computed.
func (r Record) virtualValue(i int, reads func(col int)) (format.Value, error) {
	m := r.meta()
	g := &m.gen[i]
	if g.node == nil {
		return format.NullValue(), g.err
	}
	row := exprRow{t: m.table, rec: &r, enc: m.enc, reads: reads}
	v := g.node.ev(&row).v
	if row.err != nil {
		return format.NullValue(), fmt.Errorf("column %s: %w", m.names[i], row.err)
	}
	return row.utf16Text(row.affinity(v, g.aff)), nil
}

// utf16Text is a text result as a UTF-16 database holds it, read back:
// SQLite converts a function's UTF-8 result to the database's encoding
// where it stores it or concatenates it, and that turns what UTF-16
// cannot hold (the UTF-8 of a surrogate, as char(55357) makes) into
// U+FFFD. A text SQLite holds in UTF-16 all along (held: a column's, a
// concatenation's) keeps an unpaired surrogate it has. Well-formed text
// is unchanged.
func (r *exprRow) utf16Text(v format.Value) format.Value {
	if r.enc == 0 || v.Kind != format.KindText {
		return v
	}
	conv := format.UTF8ToUTF16
	if r.isHeld(v) {
		conv = format.UTF8ToUTF16Stored
	}
	return format.TextValue(format.UTF16ToUTF8(nil, conv(nil, v.Bytes, r.enc), r.enc))
}

// wide reports whether v is a text of a UTF-16 database with a character
// at or above U+0100: one whose code units are not all under 0x100, which
// SQLite's number parsing of UTF-16 (sqlite3AtoF, sqlite3Atoi64) takes
// for no number, whatever precedes it. Every text of an expression is in
// the database's encoding in SQLite: a column's, a literal's (OP_String8
// converts it), a function's result (OP_Function converts it).
func (r *exprRow) wide(v format.Value) bool {
	return r.enc != 0 && v.Kind == format.KindText && wideAt(v.Bytes) >= 0
}

// wideAt returns where the first character at or above U+0100 of UTF-8
// text b starts (a lead byte of 0xC4 or more), -1 if none.
func wideAt(b []byte) int {
	for i, c := range b {
		if c >= 0xC4 && c < 0xF8 {
			return i
		}
	}
	return -1
}

// numeric is v as SQLite's arithmetic and CAST AS NUMERIC type it
// (computeNumericType, sqlite3VdbeMemNumerify): a wide text is its leading
// integer, up to the wide character ('1.5日' is 1; past int64, the leading
// number as a REAL).
func (r *exprRow) numeric(v format.Value) format.Value {
	if !r.wide(v) {
		return v
	}
	b := v.Bytes[:wideAt(v.Bytes)]
	if ix, rc := atoi64(b); rc <= 1 {
		return format.IntValue(ix)
	}
	f, _ := atoF(b)
	return format.FloatValue(f)
}

// arith is arith for operands of r's expression. A wide text is typed by
// numeric, so that with an integer it takes the integer path, but where
// the arithmetic is done in REALs (the other operand is one, or the
// integers overflow) SQLite reads it again (sqlite3VdbeRealValue), and
// sqlite3AtoF, which finds no number in it, has still parsed its start:
// '1.5日' + 0 is 1, '1.5日' + 0.5 is 2.0.
func (r *exprRow) arith(op string, a, b format.Value) format.Value {
	if !r.wide(a) && !r.wide(b) {
		return arith(op, a, b)
	}
	reals := [2]float64{r.realOf(a), r.realOf(b)}
	return arithWith(op, r.numeric(a), r.numeric(b), &reals)
}

// realOf is v as a REAL, a wide text read up to its wide character.
func (r *exprRow) realOf(v format.Value) float64 {
	if !r.wide(v) {
		return sqlRealValue(v)
	}
	f, _ := atoF(v.Bytes[:wideAt(v.Bytes)])
	return f
}

// affinity is genAffinity, but for a wide text, which SQLite's numeric
// affinities leave TEXT (sqlite3AtoF finds no number in it).
func (r *exprRow) affinity(v format.Value, aff schema.Affinity) format.Value {
	if aff != schema.AffinityText && aff != schema.AffinityBlob && r.wide(v) {
		return v
	}
	return genAffinity(v, aff)
}

// isHeld reports whether v's bytes are a text of held.
func (r *exprRow) isHeld(v format.Value) bool {
	for _, h := range r.held {
		if len(h) == len(v.Bytes) && len(h) > 0 && &h[0] == &v.Bytes[0] {
			return true
		}
	}
	return false
}

// hold notes that SQLite holds text v in the database's UTF-16 (utf16Text)
// and returns it.
func (r *exprRow) hold(v format.Value) format.Value {
	if r.enc != 0 && v.Kind == format.KindText && len(v.Bytes) > 0 {
		r.held = append(r.held, v.Bytes)
	}
	return v
}

// genAffinity applies a generated column's affinity to its value.
func genAffinity(v format.Value, aff schema.Affinity) format.Value {
	switch aff {
	case schema.AffinityBlob:
		return v
	case schema.AffinityReal:
		if v.Kind == format.KindFloat && v.Float() == 0 {
			return format.FloatValue(0) // through an integer: -0.0 is 0.0
		}
	}
	return applyAffinity(v, aff)
}

// caseValue evaluates CASE (and iif): with an operand, the first WHEN
// equal to it (a comparison with = 's affinity and collation rules, so
// NULL matches nothing); without, the first WHEN that is true; else the
// ELSE, or NULL.
func (n *cnode) caseValue(r *exprRow) format.Value {
	a := n.args
	var base operand
	if n.base {
		base, a = a[0].ev(r), a[1:]
	}
	for k := 0; len(a) >= 2; k++ {
		w := a[0].ev(r)
		var hit bool
		if n.base {
			hit = r.compareOp("=", base, w, n.whens[k]) == triTrue
		} else {
			hit = truth(w.v) == triTrue
		}
		if hit {
			return a[1].ev(r).v
		}
		a = a[2:]
	}
	if n.els {
		return a[0].ev(r).v
	}
	return format.NullValue()
}

// bitOp is & | << >> on integers as OP_BitAnd, OP_BitOr, OP_ShiftLeft
// and OP_ShiftRight compute them: a negative shift goes the other way, a
// shift of 64 or more gives 0 (-1 for a negative number shifted right).
func bitOp(op string, a, b int64) int64 {
	switch op {
	case "&":
		return a & b
	case "|":
		return a | b
	}
	if b == 0 {
		return a
	}
	left := op == "<<"
	if b < 0 {
		left = !left
		if b > -64 {
			b = -b
		} else {
			b = 64
		}
	}
	if b >= 64 {
		if a >= 0 || left {
			return 0
		}
		return -1
	}
	if left {
		return int64(uint64(a) << uint(b))
	}
	return a >> uint(b) // arithmetic: the sign fills in, as SQLite's mask does
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
