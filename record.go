package pagoda

import (
	"github.com/pagodadb/pagoda/internal/format"
)

// Record is one row of a table (or one entry of an index), read in place:
// columns are decoded on access, text and blobs alias the page. A Record is
// valid until its transaction ends.
type Record struct {
	data  []byte
	rowid int64
	meta  *recordMeta
}

// recordMeta maps declared columns to stored fields.
type recordMeta struct {
	names    []string
	field    []int  // column -> stored field, -1 for a virtual generated column
	alias    int    // rowid alias column, -1 if none
	real     []bool // REAL affinity: integers read back as floats
	defaults []format.Value
}

// newRecord checks the record's header and body lengths once, so that
// column access cannot fail later.
func newRecord(data []byte, rowid int64, meta *recordMeta, pgno uint32) (Record, error) {
	if _, err := format.CheckRecord(data); err != nil {
		return Record{}, format.Corruptf(pgno, "row %d: %s", rowid, corruptMsg(err))
	}
	return Record{data: data, rowid: rowid, meta: meta}, nil
}

// Len returns the number of columns.
func (r Record) Len() int {
	if r.meta == nil {
		n, _ := format.CheckRecord(r.data)
		return n
	}
	return len(r.meta.field)
}

// Rowid returns the row's rowid (0 for WITHOUT ROWID tables and indexes).
func (r Record) Rowid() int64 { return r.rowid }

// Name returns the name of column i ("" when unknown).
func (r Record) Name(i int) string {
	if r.meta == nil || i < 0 || i >= len(r.meta.names) {
		return ""
	}
	return r.meta.names[i]
}

// Column returns column i in declaration order. The INTEGER PRIMARY KEY
// column returns the rowid; a column missing from an old row returns its
// default; an integer stored in a REAL column returns a float, as SQLite
// does. A virtual generated column, whose value SQLite computes and never
// stores, reads as NULL. An index out of range returns NULL.
func (r Record) Column(i int) Value {
	m := r.meta
	if m == nil {
		t, body, ok := format.FieldBody(r.data, i)
		if !ok {
			return Value{}
		}
		return decodeValue(t, body)
	}
	if uint(i) >= uint(len(m.field)) {
		return Value{}
	}
	if i == m.alias {
		return intValue(r.rowid)
	}
	f := m.field[i]
	t, body, ok := format.FieldBody(r.data, f)
	if !ok {
		if f < 0 {
			return Value{}
		}
		return valueOf(m.defaults[i]) // the row predates ALTER TABLE ADD COLUMN
	}
	if t < 12 && m.real[i] && t != 0 && t != 7 {
		return floatValue(float64(format.DecodeValue(t, body).Int()))
	}
	return decodeValue(t, body)
}

// Raw returns the record's bytes in SQLite's record format.
func (r Record) Raw() []byte { return r.data }

// corruptMsg returns the message of a format error without its prefix.
func corruptMsg(err error) string {
	if ce, ok := err.(*format.CorruptError); ok {
		return ce.Msg
	}
	return err.Error()
}
