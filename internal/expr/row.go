package expr

import (
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// exprRow is the row an expression reads: the values of a row about to be
// written (vals, after affinity) or a record read column by column.
type exprRow struct {
	t    *schema.Table
	vals []format.Value
	tab  *Table // a record's table (row), for its VIRTUAL columns
	row  Row    // a stored row, read column by column; nil for vals
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
var errUTF16Blob error = &format.Wrapped{
	Msg: format.ErrUnsupported.Error() + ": a BLOB in an expression of a UTF-16 database (SQLite reads its bytes as UTF-16 text)",
	Err: format.ErrUnsupported,
}

// column reads column i of the row as an expression sees it. A VIRTUAL
// column of a record is computed within the same evaluation, so that one
// that cannot be computed fails the expressions that read it, as in
// SQLite (a NULL in its place would give them a wrong value).
func (r *exprRow) column(i int) format.Value {
	if r.row != nil {
		if r.tab.virtual != nil && r.t.Columns[i].Hidden {
			g := &r.tab.virtual[i]
			if g.node == nil {
				return r.fail(g.err)
			}
			v := g.node.ev(r).v
			if r.err != nil {
				return format.NullValue()
			}
			v = r.utf16Text(r.affinity(v, g.aff))
			if err := r.tab.TypeCheck(i, v); err != nil {
				return r.fail(err)
			}
			return r.hold(v)
		}
		if r.reads != nil {
			r.reads(i)
		}
		v := r.row.Column(i)
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
