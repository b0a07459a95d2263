package expr

import (
	"errors"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// ErrConstraint marks a row that breaks a constraint with no sentinel of
// its own (NOT NULL, CHECK, a STRICT type), as SQLITE_CONSTRAINT does.
var ErrConstraint = errors.New("constraint failed")

// Row is a stored row as an expression reads it. Column returns stored
// column i as SQLite's OP_Column reads it (Layout.Column says how); it is
// never asked for a VIRTUAL column, which the expression computes itself.
type Row interface {
	Column(i int) format.Value
}

// Layout is how the columns of a table (or of an index's entries) are
// stored in its records, and how OP_Column reads them back.
type Layout struct {
	Field    []int          // column -> record field; -1 for a VIRTUAL column
	Alias    int            // the rowid alias column, -1 if none
	Real     []bool         // REAL affinity: integers read back as REALs
	Defaults []format.Value // what a column reads as in a row older than it
	Enc      uint32         // UTF-16 (format.TextEncodingUTF16LE or BE): text is converted to UTF-8; 0 for UTF-8
	// Rowids is set for a rowid table, whose rows read the reserved serial
	// types 10 and 11 as NULL, as SQLite reads them.
	Rowids bool
	// KeyFields is how many fields every record has at least: a WITHOUT
	// ROWID table's primary key columns, which lead each row; else 0.
	KeyFields int
}

// Column reads column i of the record rec whose rowid is rowid, as
// SQLite's OP_Column reads it: the rowid alias is the rowid, an integer in
// a REAL column is a REAL, a field the record lacks (a row older than
// ALTER TABLE ADD COLUMN) is the column's default, UTF-16 text is
// converted to UTF-8 (into a new slice) as sqlite3 converts it. A VIRTUAL
// column, or an index out of range, reads as NULL. ok is false when the
// record is malformed up to the field; the value is then NULL.
func (l *Layout) Column(rec []byte, rowid int64, i int) (v format.Value, ok bool) {
	if uint(i) >= uint(len(l.Field)) {
		return format.NullValue(), true
	}
	if i == l.Alias {
		return format.IntValue(rowid), true
	}
	f := l.Field[i]
	if f < 0 {
		return format.NullValue(), true
	}
	fieldAt := format.FieldAt
	if l.Rowids {
		fieldAt = format.RowFieldAt
	}
	t, body, st := fieldAt(rec, f)
	if st != format.FieldOK {
		if st == format.FieldAbsent && f >= l.KeyFields {
			return l.Defaults[i], true
		}
		return format.NullValue(), false
	}
	if t < 12 && l.Real[i] && t != 0 && t != 7 {
		return format.FloatValue(float64(format.DecodeValue(t, body).Int())), true
	}
	if l.Enc != 0 && t >= 13 && t&1 == 1 {
		return format.TextValue(format.UTF16ToUTF8(make([]byte, 0, len(body)*3/2), body, l.Enc)), true
	}
	return format.DecodeValue(t, body), true
}

// Table is a table's rows as SQLite reads them: its Layout, with each
// column's DEFAULT as a row older than the column reads it, and its
// VIRTUAL generated columns compiled. A Table is built once per schema
// and shared; it is not changed after NewTable.
type Table struct {
	Layout
	Def   *schema.Table
	Owner string // "table NAME", for errors
	// virtual holds, by column, the VIRTUAL columns compiled; nil when
	// the table has none.
	virtual []genColumn
}

// NewTable describes the rows of table ti in a database of text encoding
// enc (header offset 56).
func NewTable(ti *schema.TableInfo, enc uint32) *Table {
	t := ti.Table
	n := len(t.Columns)
	tab := &Table{
		Def:   t,
		Owner: "table " + ti.Entry.Name,
		Layout: Layout{
			Field:    make([]int, n),
			Alias:    -1,
			Real:     make([]bool, n),
			Defaults: make([]format.Value, n),
			Rowids:   !t.WithoutRowID,
		},
	}
	if format.IsUTF16(enc) {
		tab.Enc = enc
	}
	if !t.WithoutRowID {
		tab.Alias = t.RowidAlias
	} else {
		tab.KeyFields = len(t.PrimaryKey)
	}
	for i, c := range t.Columns {
		tab.Field[i] = -1
		tab.Real[i] = c.Affinity == schema.AffinityReal
		if c.HasDefault {
			tab.Defaults[i] = ColumnDefault(c, enc)
		}
	}
	for f, col := range t.RecordOrder {
		if col >= 0 && col < n {
			tab.Field[col] = f
		}
	}
	tab.virtual = compileGenerated(t, tab.Owner, enc)
	return tab
}

// ColumnDefault is the value column c reads as in a row stored before it
// was added (ALTER TABLE ADD COLUMN), in a database of text encoding enc:
// its DEFAULT as SQLite's valueFromExpr makes it (see defaultFor), a
// whole REAL going through an integer as when it is stored (-0.0 reads
// 0.0).
func ColumnDefault(c schema.Column, enc uint32) format.Value {
	v := defaultFor(c.Default, c.Affinity, enc)
	if c.Affinity == schema.AffinityReal && v.Kind == format.KindFloat {
		if w := integral(v); w.Kind == format.KindInt {
			return format.FloatValue(float64(w.Int()))
		}
	}
	return v
}

// Record returns the stored row rec (of rowid rowid) as expressions read
// it, by the table's Layout; a malformed field reads as NULL.
func (t *Table) Record(rec []byte, rowid int64) Row {
	return &layoutRow{l: &t.Layout, rec: rec, rowid: rowid}
}

type layoutRow struct {
	l     *Layout
	rec   []byte
	rowid int64
}

func (r *layoutRow) Column(i int) format.Value {
	v, _ := r.l.Column(r.rec, r.rowid, i)
	return v
}
