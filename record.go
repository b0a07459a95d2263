package pagoda

import (
	"fmt"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/schema"
)

// Record is one row of a table (or one entry of an index), read in place:
// columns are decoded on access, text and blobs alias the page. A Record is
// valid until its transaction ends.
//
// In a UTF-16 database (header text encoding 2 or 3) Column returns TEXT
// as UTF-8, converted as sqlite3 converts it (format.UTF16ToUTF8 says how
// it treats malformed UTF-16): each TEXT value read is then a new slice,
// allocated, not one into the page. Raw returns the record as stored,
// its text in UTF-16.
//
// Records from Get are checked whole before they are returned. Records from
// cursors and iterators are checked as their columns are read (a scan pays
// for nothing it does not read): a column whose bytes are malformed reads as
// NULL, and the corruption error is kept by the transaction, where Tx.Err,
// View and the cursors' Err report it.
type Record struct {
	// Four words, which the compiler keeps in registers: passed to a
	// loop body or a method, a Record goes by register, not through
	// memory. The bytes are a string for that (pager.AsString): two
	// words, where a slice takes three.
	data  string // the record's bytes, in place
	rowid int64
	ctx   *recordCtx
}

// recordCtx is what the records read through one table or index handle
// share: how their columns are stored, the transaction that reports a
// malformed one, and the shape of the rows Get last read (rows of one
// header), by which Get and Column read such records without walking
// their headers.
type recordCtx struct {
	meta *recordMeta
	tx   *Tx
	// shape is learnt by Get from a row read the general way, the first
	// one and then one in shapeEvery of those that did not have it: rows
	// of varied headers pay a count for it, rows of one header a
	// comparison.
	shape  format.RecordShape
	misses uint32
}

// shapeEvery is how many records read without the shape learn it again:
// one in shapeEvery (a power of two).
const shapeEvery = 32

// missed counts a record read without the shape, and learns the shape of
// rec when it is due: the first time, or once in shapeEvery. Learn checks
// rec itself: it may be malformed.
func (c *recordCtx) missed(rec []byte) {
	c.misses++
	if c.misses%shapeEvery == 1 {
		c.shape.Learn(rec)
	}
}

// recordMeta maps declared columns to stored fields: the Layout by
// which Column's general path reads them (a rowid table's rows can be
// found again by rowid: Rowids), and the fast path's map.
type recordMeta struct {
	expr.Layout
	owner string // the table or index, for errors
	root  uint32
	names []string
	fast  []int // column -> stored field for Column's fast path; -1 for the rowid alias and virtual columns, and every column of a UTF-16 database
	// tbl is a table's rows as expressions read them, for its VIRTUAL
	// columns; nil for an index.
	tbl *expr.Table
}

// check is format.CheckRecord for the meta's records: format.CheckRow
// for the rows of a rowid table, which read the reserved serial types 10
// and 11 as NULL, as SQLite reads them.
func (m *recordMeta) check(rec []byte) (int, error) {
	if m.Rowids {
		return format.CheckRow(rec)
	}
	return format.CheckRecord(rec)
}

// newRecord checks the record's header and body lengths once, so that
// column access cannot fail later.
func newRecord(ctx *recordCtx, data []byte, rowid int64, pgno uint32) (Record, error) {
	m := ctx.meta
	n, err := m.check(data)
	if err != nil {
		return Record{}, format.Corruptf(pgno, "%s row %d: %s", m.owner, rowid, corruptMsg(err))
	}
	if n < m.KeyFields {
		// Only damage makes one: a seek that matched it matched it on
		// fewer fields than the key's, and it is not the row sought.
		return Record{}, format.Corruptf(pgno, "%s: a row of %d fields, where the primary key has %d", m.owner, n, m.KeyFields)
	}
	return Record{data: pager.AsString(data), rowid: rowid, ctx: ctx}, nil
}

// bytes returns the record's bytes.
func (r Record) bytes() []byte { return pager.AsBytes(r.data) }

// meta returns how the record's columns are stored, nil when unknown.
func (r Record) meta() *recordMeta {
	if r.ctx == nil {
		return nil
	}
	return r.ctx.meta
}

// tx returns the transaction that reports a malformed column, or nil.
func (r Record) tx() *Tx {
	if r.ctx == nil {
		return nil
	}
	return r.ctx.tx
}

// corrupt reports a malformed record found by a column read, naming the
// page when the row can be found again: by its rowid, or else (an index
// entry, a WITHOUT ROWID row) by a walk of the tree for the cell whose
// bytes it is, a cost paid on the way to an error, once a transaction.
func (r Record) corrupt() {
	tx := r.tx()
	if tx == nil || tx.err != nil { // the transaction keeps its first error
		return
	}
	check := format.CheckRecord
	if m := r.meta(); m != nil {
		check = m.check
	}
	n, err := check(r.bytes())
	msg := "malformed record"
	if err != nil {
		msg = corruptMsg(err)
	} else if m := r.meta(); m != nil && n < m.KeyFields {
		msg = fmt.Sprintf("a row of %d fields, where the primary key has %d", n, m.KeyFields)
	}
	var pgno uint32
	if m := r.meta(); m != nil && !tx.closed {
		var c btree.Cursor
		c.Init(tx.pages(), m.root, m.Rowids, nil)
		if m.Rowids && c.SeekRowid(r.rowid) {
			pg, _ := c.Page()
			pgno = pg.Pgno
		}
		// Else the record is found by its bytes' identity: a row out of
		// rowid order, which a seek misses, or an index entry.
		if b := r.bytes(); pgno == 0 && len(b) > 0 {
			for ok := c.First(); ok; ok = c.Next() {
				if _, p, _, err := c.Entry(); err == nil && len(p) == len(b) && &p[0] == &b[0] {
					pg, _ := c.Page()
					pgno = pg.Pgno
					break
				}
			}
		}
	}
	what := "record"
	if m := r.meta(); m != nil && m.Rowids {
		what = fmt.Sprintf("%s row %d", m.owner, r.rowid)
	} else if m != nil {
		what = m.owner + " entry" // an index's, or a WITHOUT ROWID table's row
	}
	tx.setErr(format.Corruptf(pgno, "%s: %s", what, msg))
}

// Len returns the number of columns.
func (r Record) Len() int {
	m := r.meta()
	if m == nil {
		n, _ := format.CheckRecord(r.bytes())
		return n
	}
	return len(m.Field)
}

// Rowid returns the row's rowid (0 for WITHOUT ROWID tables and indexes).
func (r Record) Rowid() int64 { return r.rowid }

// Name returns the name of column i ("" when unknown).
func (r Record) Name(i int) string {
	m := r.meta()
	if m == nil || i < 0 || i >= len(m.names) {
		return ""
	}
	return m.names[i]
}

// Column returns column i in declaration order. The INTEGER PRIMARY KEY
// column returns the rowid; a column missing from an old row returns its
// default; an integer stored in a REAL column returns a float, as SQLite
// does. A VIRTUAL generated column, which SQLite never stores, is computed
// as SQLite computes it: its expression over the row's other columns, then
// its affinity (its TEXT or BLOB value is then a new slice, not one into
// the page). An expression (or a DEFAULT of a column added by ALTER TABLE)
// that pagoda does not evaluate reads as NULL, and the transaction keeps
// an error wrapping ErrUnsupported that names the column and the
// construct, where Tx.Err, View and the cursors' Err report it; the
// other columns read as usual. In a rowid table a field of the reserved
// serial type 10 or 11, which SQLite never writes, reads as NULL, as
// SQLite reads it. An index out of range returns NULL.
func (r Record) Column(i int) Value {
	// The fast path, in one function because it runs for every column a
	// scan reads: a stored column (fast[i] is its field), a header under
	// 128 bytes whose serial types up to the field take one or two bytes
	// each (values under 8 KiB), and no integer to turn into a REAL. It
	// checks only the field it returns: the bodies before it are each under
	// 8 KiB and fewer than 128, so off cannot overflow, and one that runs
	// past the record takes the field's end past it too. Anything else,
	// absent or malformed included, goes the general way, which reports it.
	// A record of the shape Get last learnt for the table (a row of the
	// same header as the rows before it) skips the walk: the shape says
	// where field f lies, within the record.
	//
	//	rec[0]      header length h (1 to 127)
	//	rec[1:h]    serial types, a varint each
	//	rec[h:]     the fields' bodies, in order
	if r.ctx == nil {
		return r.column(i)
	}
	m := r.ctx.meta
	if uint(i) >= uint(len(m.fast)) {
		return r.column(i)
	}
	f, rec := m.fast[i], r.data
	if f < 0 {
		if i == m.Alias { // the INTEGER PRIMARY KEY: the rowid
			return intValue(r.rowid)
		}
		return r.column(i)
	}
	if s := &r.ctx.shape; f < s.Fields() && s.Fits(pager.AsBytes(rec)) {
		fd := s.Field(f)
		b := pager.AsBytes(rec[fd.Off:fd.End])
		if fd.Type >= 12 { // TEXT (odd) or BLOB (even)
			return Value{b: b, n: uint64(TypeBlob) - uint64(fd.Type&1)}
		}
		if !m.Real[i] {
			return decodeSmall(uint64(fd.Type), b)
		}
		return r.column(i)
	}
	if len(rec) == 0 || rec[0] >= 0x80 || int(rec[0]) > len(rec) {
		return r.column(i)
	}
	hdr := rec[:rec[0]]
	off, pos := len(hdr), 1
	// The walk is format.ShortSerial's, written out: through the shared
	// helper a scan reading one column ran 14 more instructions a row.
	// The f fields before: only their sizes.
	for ; f > 0; f-- {
		if pos >= len(hdr) {
			return r.column(i)
		}
		if c := hdr[pos]; c < 0x80 {
			size := int(format.OneByteSerialSize[c])
			if size < 0 { // reserved
				return r.column(i)
			}
			off, pos = off+size, pos+1
		} else if c > 0x80 && pos+1 < len(hdr) && hdr[pos+1] < 0x80 {
			t := uint(c&0x7f)<<7 | uint(hdr[pos+1]) // 128 or more: c is not 0x80
			off, pos = off+int((t-12)>>1), pos+2
		} else {
			return r.column(i)
		}
	}
	// Field f: its serial type t.
	if pos >= len(hdr) {
		return r.column(i)
	}
	t := uint64(hdr[pos])
	if t >= 0x80 {
		if t == 0x80 || pos+1 >= len(hdr) || hdr[pos+1] >= 0x80 {
			return r.column(i)
		}
		t = (t&0x7f)<<7 | uint64(hdr[pos+1])
	}
	if t >= 12 { // TEXT (odd) or BLOB (even)
		end := off + int((t-12)>>1)
		if end > len(rec) {
			return r.column(i)
		}
		return Value{b: pager.AsBytes(rec[off:end]), n: uint64(TypeBlob) - t&1}
	}
	size := int(format.OneByteSerialSize[t])
	if end := off + size; size >= 0 && end <= len(rec) && !m.Real[i] {
		return decodeSmall(t, pager.AsBytes(rec[off:end]))
	}
	return r.column(i)
}

// column is Column's general path: no table definition, an index out of
// range, a virtual column, a field missing or malformed, an integer in a
// REAL column.
func (r Record) column(i int) Value {
	m := r.meta()
	if m == nil {
		t, body, st := format.FieldAt(r.bytes(), i)
		if st != format.FieldOK {
			if st == format.FieldCorrupt {
				r.corrupt()
			}
			return Value{}
		}
		return decodeValue(t, body)
	}
	if m.tbl != nil && m.tbl.IsVirtual(i) {
		return r.generated(i)
	}
	v, ok := m.Layout.Column(r.bytes(), r.rowid, i)
	if !ok {
		r.corrupt()
		return Value{}
	}
	return valueOf(v)
}

// Raw returns the record's bytes in SQLite's record format (text in the
// database's encoding).
func (r Record) Raw() []byte { return r.bytes() }

// corruptMsg returns the message of a format error without its prefix.
func corruptMsg(err error) string {
	if ce, ok := err.(*format.CorruptError); ok {
		return ce.Msg
	}
	return err.Error()
}

// generated computes VIRTUAL column i of r, reporting on the transaction
// why it cannot.
func (r Record) generated(i int) Value {
	tbl := r.meta().tbl
	v, err := tbl.Virtual(i, exprRecord{r}, nil)
	if err == nil {
		err = tbl.TypeCheck(i, v)
	}
	if err != nil {
		if tx := r.tx(); tx != nil {
			if tbl.Compiled(i) { // else the error names the column
				err = fmt.Errorf("pagoda: %s row %d: %w", tbl.Owner, r.rowid, inner(err))
			}
			tx.setErr(err)
		}
		return Value{}
	}
	return valueOf(v)
}

// exprRecord is a Record as expressions read it (expr.Row): its stored
// columns as Column reads them.
type exprRecord struct{ r Record }

func (e exprRecord) Column(i int) format.Value { return e.r.Column(i).format() }

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
	tbl := expr.NewTable(ti, enc)
	m := &tableMeta{}
	m.rec = recordMeta{
		Layout: tbl.Layout,
		owner:  tbl.Owner,
		root:   ti.Entry.RootPage,
		names:  make([]string, len(t.Columns)),
		tbl:    tbl,
	}
	for i, c := range t.Columns {
		m.rec.names[i] = c.Name
	}
	m.rec.setFast()
	m.rec.setEncoding(enc)
	if t.WithoutRowID {
		m.nKey = len(t.PrimaryKey)
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
	m := &indexMeta{rec: recordMeta{Layout: expr.Layout{Alias: -1}, owner: "index " + ii.Entry.Name, root: ii.Entry.RootPage}}
	add := func(name string, coll schema.Collation, desc bool, aff schema.Affinity) {
		f := len(m.rec.names)
		m.rec.names = append(m.rec.names, name)
		m.rec.Field = append(m.rec.Field, f)
		m.rec.fast = append(m.rec.fast, f)
		m.rec.Real = append(m.rec.Real, aff == schema.AffinityReal)
		m.rec.Defaults = append(m.rec.Defaults, format.Value{})
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
	m.fast = make([]int, len(m.Field))
	for i, f := range m.Field {
		if i == m.Alias {
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
	m.Enc = enc
	for i := range m.fast {
		m.fast[i] = -1
	}
}
