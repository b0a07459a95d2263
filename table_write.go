package pagoda

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// writePlan is what writing rows of a table needs, computed once per
// catalog: the columns' affinities and constraints, the record layout and
// the indexes to maintain.
type writePlan struct {
	err     error // the table cannot be written (wraps ErrUnsupported)
	name    string
	cols    []colPlan
	alias   int          // rowid alias column, -1 if none
	order   []int        // table column stored in each record field
	inOrder bool         // order is every column in turn: the record is the row
	wr      bool         // WITHOUT ROWID
	autoinc bool         // AUTOINCREMENT: sqlite_sequence is kept (see sequence)
	checks  *expr.Checks // nil when none
	evalRow bool         // CHECK constraints or partial indexes read the row's values
	nKey    int          // WITHOUT ROWID: primary key fields
	kinfo   *format.KeyInfo
	pkCols  []int // WITHOUT ROWID: primary key columns in key order
	indexes []indexPlan
}

type colPlan struct {
	name    string
	aff     schema.Affinity
	notNull bool
	strict  string // STRICT tables: the declared type in upper case
}

type indexPlan struct {
	name   string
	root   uint32
	kinfo  *format.KeyInfo
	cols   []int // table column of each key field; -1 for the rowid
	nCols  int   // the indexed columns (the rest is the row's identity)
	unique bool
	where  *expr.Where // a partial index's WHERE clause, nil for a full index
}

// includes reports whether the index has an entry for the row vals (by
// column, the rowid alias holding the rowid): a partial index holds the
// rows for which its WHERE clause is true, not NULL.
func (ip *indexPlan) includes(vals []format.Value) bool {
	in, _ := ip.where.Takes(vals)
	return in
}

// conflictDiffers reports whether an ON CONFLICT resolution makes a
// violated constraint do other than fail the write (ABORT, FAIL, or none).
func conflictDiffers(r string) bool {
	return r == "REPLACE" || r == "IGNORE" || r == "ROLLBACK"
}

// unsupportedIndex explains why a table's index cannot be maintained, if
// it cannot.
func unsupportedIndex(ii *schema.IndexInfo) error {
	switch {
	case ii.Err != nil:
		return fmt.Errorf("index %q cannot be read: %v", ii.Entry.Name, ii.Err)
	case ii.Index.HasExpr:
		return fmt.Errorf("index %q has expression terms", ii.Entry.Name)
	}
	return nil
}

// planFor returns the write plan of table ti of catalog cat, cached with
// its read metadata.
func (db *DB) planFor(cat *schema.Catalog, ti *schema.TableInfo) *writePlan {
	m := db.tableMeta(cat, ti)
	db.mu.Lock()
	p := m.plan
	db.mu.Unlock()
	if p == nil {
		p = makePlan(ti, m)
		db.mu.Lock()
		m.plan = p
		db.mu.Unlock()
	}
	return p
}

// makePlan builds a table's write plan.
func makePlan(ti *schema.TableInfo, tm *tableMeta) *writePlan {
	t := ti.Table
	p := &writePlan{name: ti.Entry.Name, alias: -1, wr: t.WithoutRowID, order: t.RecordOrder, autoinc: t.AutoIncrement && !t.WithoutRowID}
	refuse := func(format string, args ...any) *writePlan {
		p.err = fmt.Errorf("pagoda: table %q cannot be written by pagoda: %s: %w", ti.Entry.Name, fmt.Sprintf(format, args...), ErrUnsupported)
		return p
	}
	checks, err := expr.CompileChecks(t, format.TextEncodingUTF8) // pagoda writes UTF-8 databases only
	if err != nil {
		return refuse("CHECK constraint: %v", err)
	}
	p.checks = checks
	p.inOrder = len(p.order) == len(t.Columns)
	for i, col := range p.order {
		p.inOrder = p.inOrder && col == i
	}
	if len(ti.Triggers) > 0 {
		return refuse("trigger %q would not run (pagoda does not evaluate SQL)", ti.Triggers[0])
	}
	// pagoda resolves a violated constraint as ABORT does (FAIL is the
	// same for one row): the write fails, the transaction goes on.
	// Constraints that ask SQLite to replace, ignore or roll back would
	// have their writes turn out otherwise than in sqlite3.
	for _, c := range t.Constraints {
		if conflictDiffers(c.OnConflict) {
			what := "UNIQUE"
			if c.PrimaryKey {
				what = "PRIMARY KEY"
			}
			return refuse("its %s constraint resolves conflicts with ON CONFLICT %s", what, c.OnConflict)
		}
	}
	if conflictDiffers(t.AliasConflict) {
		return refuse("its INTEGER PRIMARY KEY resolves conflicts with ON CONFLICT %s", t.AliasConflict)
	}
	for _, col := range t.Columns {
		if conflictDiffers(col.NotNullConflict) {
			return refuse("column %q is NOT NULL ON CONFLICT %s", col.Name, col.NotNullConflict)
		}
	}
	if ti.ShadowOf != "" {
		return refuse("it is a shadow table of virtual table %q, which its module keeps", ti.ShadowOf)
	}
	if ti.Entry.RootPage == 1 {
		return refuse("it is the schema table, which pagoda changes only with the schema")
	}
	if name := t.OtherCollation(); name != "" {
		return refuse("no such collation sequence: %s (an application's own, whose order pagoda does not know)", name)
	}
	if !t.WithoutRowID {
		p.alias = t.RowidAlias
	}
	for _, c := range t.Columns {
		if c.Generated {
			return refuse("column %q is generated", c.Name)
		}
		cp := colPlan{name: c.Name, aff: c.Affinity, notNull: c.NotNull}
		if t.Strict {
			cp.strict = strings.ToUpper(c.Type)
		}
		p.cols = append(p.cols, cp)
	}
	if t.WithoutRowID {
		p.nKey, p.kinfo = tm.nKey, &tm.kinfo
		for _, pk := range t.PrimaryKey {
			p.pkCols = append(p.pkCols, pk.Column)
		}
	}
	for _, ii := range ti.Indexes {
		if err := unsupportedIndex(ii); err != nil {
			return refuse("%v", err)
		}
		if name := schema.OtherCollation(ii.KeyOrder()); name != "" {
			return refuse("index %q: no such collation sequence: %s (an application's own, whose order pagoda does not know)", ii.Entry.Name, name)
		}
		where, err := expr.CompileWhere(ii.Index, t, format.TextEncodingUTF8)
		if err != nil {
			return refuse("%v", err)
		}
		im := metaForIndex(ii, format.TextEncodingUTF8) // pagoda writes UTF-8 databases only
		ip := indexPlan{name: ii.Entry.Name, root: ii.Entry.RootPage, kinfo: &im.kinfo,
			nCols: len(ii.Index.Columns), unique: ii.Index.Unique, where: where}
		for _, k := range ii.KeyOrder() {
			ip.cols = append(ip.cols, k.Column)
		}
		p.indexes = append(p.indexes, ip)
		p.evalRow = p.evalRow || where != nil
	}
	p.evalRow = p.evalRow || p.checks != nil
	return p
}

// plan returns the table's write plan after checking the transaction.
func (t *Table) plan() (*writePlan, error) {
	if err := t.tx.writeCheck(); err != nil {
		return nil, err
	}
	if err := t.refresh(); err != nil {
		return nil, err
	}
	p := t.tx.db.planFor(t.tx.cat, t.info)
	if p.err != nil {
		return nil, p.err
	}
	return p, nil
}

// refresh follows schema changes made by the transaction since t was
// obtained: a new index must be maintained, a dropped table not written.
func (t *Table) refresh() error {
	if t.cat == t.tx.cat {
		return nil
	}
	nt, err := t.tx.Table(t.info.Entry.Name)
	if err != nil {
		return err
	}
	if nt.root != t.root {
		return fmt.Errorf("pagoda: table %q was dropped: %w", t.info.Entry.Name, ErrNotFound)
	}
	t.cat, t.info, t.meta = nt.cat, nt.info, nt.meta
	t.rc.meta = &t.meta.rec
	return nil
}

// evalValues returns the row vals as CHECK constraints and partial
// indexes see it: the rowid alias, when NULL, holds rowid.
func (p *writePlan) evalValues(tx *Tx, vals []format.Value, rowid int64) []format.Value {
	if p.evalRow && !p.wr && p.alias >= 0 && vals[p.alias].Kind == format.KindNull {
		tx.checkVals = append(tx.checkVals[:0], vals...)
		tx.checkVals[p.alias] = format.IntValue(rowid)
		return tx.checkVals
	}
	return vals
}

// check evaluates the table's CHECK constraints on the row vals (from
// evalValues).
func (p *writePlan) check(vals []format.Value) error {
	if p.checks == nil {
		return nil
	}
	if src := p.checks.Failed(vals); src != "" {
		return constraintf("CHECK constraint failed: %s", src)
	}
	return nil
}

// constraintf reports a violated constraint; the transaction stays usable.
func constraintf(format string, args ...any) error {
	return fmt.Errorf("pagoda: %s: %w", fmt.Sprintf(format, args...), errConstraint)
}

// rowValues converts the Go values of one row, one per column, applying
// each column's affinity, STRICT typing and NOT NULL as SQLite does.
func (p *writePlan) rowValues(dst []format.Value, values []any) ([]format.Value, error) {
	if len(values) != len(p.cols) {
		return nil, fmt.Errorf("pagoda: table %q has %d columns, got %d values", p.name, len(p.cols), len(values))
	}
	dst = dst[:0]
	for i, x := range values {
		v, err := toValue(x)
		if err != nil {
			return nil, err
		}
		c := &p.cols[i]
		if expr.AffinityChanges(v.Kind, c.aff) {
			v = expr.ApplyAffinity(v, c.aff)
		}
		if v.Kind == format.KindFloat {
			f := v.Float()
			switch {
			case math.IsNaN(f):
				v = format.NullValue() // SQLite stores NaN as NULL
			case c.aff == schema.AffinityReal && realSameAsInt(f):
				// As SQLite's record encoder: a REAL that is a small
				// whole number is stored as an integer (and read back
				// as a REAL); -0.0 becomes 0.
				v = format.IntValue(int64(f))
			}
		}
		if v.Kind == format.KindNull {
			if c.notNull && i != p.alias {
				return nil, constraintf("NOT NULL constraint failed: %s.%s", p.name, c.name)
			}
		} else if c.strict != "" && !schema.StrictAccepts(c.strict, v.Kind) {
			return nil, constraintf("cannot store %s value in %s column %s.%s", expr.KindName(v.Kind), c.strict, p.name, c.name)
		}
		dst = append(dst, v)
	}
	return dst, nil
}

// realSameAsInt reports whether SQLite stores the REAL f as an integer:
// zero, or a whole number in [-2^47, 2^47). sqlite3RealSameAsInt makes
// one within ±2^51 an integer, but OP_MakeRecord turns an integer of a
// REAL column back into a float unless it fits six bytes.
func realSameAsInt(f float64) bool {
	const limit = 1 << 47
	return f == 0 || (f == math.Trunc(f) && f >= -limit && f < limit)
}

// appendRow encodes a row's stored record: fields in record order, the
// rowid alias as NULL.
func (p *writePlan) appendRow(dst []byte, fields []format.Value, vals []format.Value) ([]byte, []format.Value) {
	if p.inOrder { // encoded from vals, the alias NULL meanwhile
		if p.alias < 0 {
			return format.AppendRecord(dst, vals), fields
		}
		v := vals[p.alias]
		vals[p.alias] = format.NullValue()
		dst = format.AppendRecord(dst, vals)
		vals[p.alias] = v
		return dst, fields
	}
	fields = p.rowFields(fields, vals)
	return format.AppendRecord(dst, fields), fields
}

// rowFields returns a row's stored fields: in record order, the rowid
// alias as NULL.
func (p *writePlan) rowFields(fields []format.Value, vals []format.Value) []format.Value {
	fields = fields[:0]
	for _, col := range p.order {
		if col == p.alias {
			fields = append(fields, format.NullValue())
		} else {
			fields = append(fields, vals[col])
		}
	}
	return fields
}

// tooBig returns the error for fields, a record of what longer than
// SQLite's limit (format.MaxLength), which sqlite3 refuses to read.
func tooBig(fields []format.Value, what string) error {
	return fmt.Errorf("pagoda: %s: a record of %d bytes, longer than SQLite's limit of %d: %w",
		what, format.RecordSize(fields), format.MaxLength, ErrTooBig)
}

// indexKey encodes the key of index ip for a row.
func (ip *indexPlan) key(dst []byte, fields []format.Value, vals []format.Value, rowid int64, alias int) ([]byte, []format.Value) {
	fields = ip.fields(fields, vals, rowid, alias)
	return format.AppendRecord(dst, fields), fields
}

func (ip *indexPlan) fields(fields []format.Value, vals []format.Value, rowid int64, alias int) []format.Value {
	fields = fields[:0]
	for _, col := range ip.cols {
		if col < 0 || col == alias {
			fields = append(fields, format.IntValue(rowid))
		} else {
			fields = append(fields, vals[col])
		}
	}
	return fields
}

// conflict checks a UNIQUE index for another row with the same indexed
// values (NULLs are distinct). self is the row's own key fields, so that a
// row does not conflict with itself.
func (t *Table) conflict(ip *indexPlan, fields []format.Value) error {
	if !ip.unique {
		return nil
	}
	for _, v := range fields[:ip.nCols] {
		if v.Kind == format.KindNull {
			return nil
		}
	}
	var c btree.Cursor
	c.Init(t.tx.w, ip.root, false, ip.kinfo)
	if !c.SeekKey(fields[:ip.nCols]) {
		return c.Err()
	}
	// The same indexed values: the same row only if the tail (rowid or
	// primary key) matches too.
	_, payload, _, err := c.Entry()
	if err != nil {
		return err
	}
	if n, err := format.CompareKey(payload, fields, ip.kinfo); err != nil || n == 0 {
		return err
	}
	cols := make([]string, 0, ip.nCols)
	for _, col := range ip.cols[:ip.nCols] {
		cols = append(cols, t.info.Table.Columns[col].Name)
	}
	return fmt.Errorf("pagoda: UNIQUE constraint failed: %s.%s (index %s): %w", t.Name(), strings.Join(cols, ", "), ip.name, ErrExists)
}

// Insert adds a row, one value per column in declaration order: nil,
// integers, floats, string, []byte, bool or Value. Each column's affinity
// is applied as SQLite applies it. For a rowid table it returns the new
// rowid: the INTEGER PRIMARY KEY value when given, otherwise chosen as
// SQLite chooses it (one more than the largest; in an AUTOINCREMENT table,
// one more than any it has held, which sqlite_sequence records). An
// existing rowid or primary key, or a duplicate in a UNIQUE index, is an
// error wrapping ErrExists, and a row that fails a CHECK constraint an
// error saying so; the transaction stays usable. Every index of the table
// is updated, a partial index when its WHERE clause takes the row. Tables
// whose constraints pagoda cannot evaluate (CHECK constraints and partial
// indexes beyond the subset of checkexpr.go, generated columns, expression
// indexes, triggers) refuse writes with
// ErrUnsupported, as do the shadow tables of virtual tables (docs_content
// of an fts5 table docs).
func (t *Table) Insert(values ...any) (int64, error) {
	return t.write(false, 0, values)
}

// Put stores the row with the given rowid, replacing the row that has it,
// if any (rowid tables). A value for the INTEGER PRIMARY KEY column must be
// nil or equal to rowid. For a WITHOUT ROWID table the primary key comes
// from the values and rowid is ignored: Put inserts or replaces the row
// with that key.
func (t *Table) Put(rowid int64, values ...any) error {
	_, err := t.write(true, rowid, values)
	return err
}

func (t *Table) write(replace bool, rowid int64, values []any) (int64, error) {
	p, err := t.plan()
	if err != nil {
		return 0, err
	}
	tx := t.tx
	vals, err := p.rowValues(tx.vals, values)
	if err != nil {
		return 0, err
	}
	tx.vals = vals
	var seq sequence
	if p.autoinc {
		if seq, err = tx.sequenceOf(t.Name()); err != nil {
			return 0, err
		}
	}
	// The row being replaced, if any: Put must remove its index entries.
	// Insert needs no lookup: the tree refuses an existing key below.
	var old []byte
	lookup := replace && len(p.indexes) > 0
	if p.wr {
		if lookup {
			pk := make([]format.Value, len(p.pkCols))
			for i, col := range p.pkCols {
				pk[i] = vals[col]
			}
			t.cur.Init(tx.w, t.root, false, p.kinfo)
			if t.cur.SeekKey(pk) {
				if old, err = t.cur.Payload(); err != nil {
					return 0, err
				}
				old = append([]byte(nil), old...)
			} else if err := t.cur.Err(); err != nil {
				return 0, err
			}
		}
		rowid = 0
	} else {
		if p.alias >= 0 && vals[p.alias].Kind != format.KindNull {
			v := vals[p.alias]
			if v.Kind != format.KindInt {
				return 0, constraintf("datatype mismatch: %s.%s is an INTEGER PRIMARY KEY", t.Name(), p.cols[p.alias].name)
			}
			if replace && v.Int() != rowid {
				return 0, fmt.Errorf("pagoda: Put(%d) with %s = %d", rowid, p.cols[p.alias].name, v.Int())
			}
			rowid = v.Int()
		} else if !replace {
			if p.autoinc {
				rowid, err = t.autoRowid(seq)
			} else {
				rowid, err = t.newRowid()
			}
			if err != nil {
				return 0, err
			}
		}
		if lookup {
			t.cur.Init(tx.w, t.root, true, nil)
			if t.cur.SeekRowid(rowid) && t.cur.Rowid() == rowid {
				if old, err = t.cur.Payload(); err != nil {
					return 0, err
				}
				old = append([]byte(nil), old...)
			} else if err := t.cur.Err(); err != nil {
				return 0, err
			}
		}
	}
	ev := p.evalValues(tx, vals, rowid)
	if err := p.check(ev); err != nil {
		return 0, err
	}
	// Check the sizes and every UNIQUE index before changing anything
	// (and note which partial indexes take the row).
	fields := tx.fields
	if format.RecordTooBig(vals) { // vals hold the rowid alias, the record a NULL
		fields = p.rowFields(fields, vals)
		if format.RecordTooBig(fields) {
			tx.fields = fields
			return 0, tooBig(fields, "row of "+t.Name())
		}
	}
	tx.takes = tx.takes[:0]
	for i := range p.indexes {
		ip := &p.indexes[i]
		tx.takes = append(tx.takes, ip.includes(ev))
		if !tx.takes[i] {
			continue
		}
		fields = ip.fields(fields, vals, rowid, p.alias)
		if format.RecordTooBig(fields) {
			tx.fields = fields
			return 0, tooBig(fields, "key of index "+ip.name)
		}
		if err := t.conflict(ip, fields); err != nil {
			return 0, err
		}
	}
	// The row first: an Insert whose key exists stops here, unchanged.
	bw := tx.btree()
	tx.scratch, fields = p.appendRow(tx.scratch[:0], fields, vals)
	var exists bool
	switch {
	case p.wr && replace:
		_, err = bw.IndexInsert(t.root, p.kinfo, p.nKey, tx.scratch)
	case p.wr:
		exists, err = bw.IndexInsertNew(t.root, p.kinfo, p.nKey, tx.scratch)
	case replace:
		_, err = bw.TableInsert(t.root, rowid, tx.scratch)
	default:
		exists, err = bw.TableInsertNew(t.root, rowid, tx.scratch)
	}
	if err != nil {
		return 0, tx.fail(err)
	}
	if exists {
		tx.fields = fields
		if p.wr {
			return 0, fmt.Errorf("pagoda: UNIQUE constraint failed: %s primary key: %w", t.Name(), ErrExists)
		}
		return 0, fmt.Errorf("pagoda: UNIQUE constraint failed: %s rowid %d: %w", t.Name(), rowid, ErrExists)
	}
	if old != nil {
		if err := t.deleteIndexEntries(p, old, rowid); err != nil {
			return 0, tx.fail(err)
		}
	}
	for i := range p.indexes {
		ip := &p.indexes[i]
		if !tx.takes[i] {
			continue
		}
		tx.scratch, fields = ip.key(tx.scratch[:0], fields, vals, rowid, p.alias)
		if _, err := bw.IndexInsert(ip.root, ip.kinfo, 0, tx.scratch); err != nil {
			return 0, tx.fail(err)
		}
	}
	tx.fields = fields
	if p.autoinc {
		if err := seq.raise(t.Name(), rowid); err != nil {
			return 0, tx.fail(err)
		}
	}
	return rowid, tx.changed()
}

// newRowid chooses the rowid of an inserted row as SQLite does: one more
// than the largest, 1 in an empty table, and when the largest is already
// the maximum, random unused rowids.
func (t *Table) newRowid() (int64, error) {
	last, ok, err := btree.TableMaxRowid(t.tx.w, t.root)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 1, nil
	}
	if last < math.MaxInt64 {
		return last + 1, nil // negative too: after -5 comes -4, as in sqlite3
	}
	for range 100 {
		r := rand.Int64N(math.MaxInt64-1) + 1
		t.cur.Init(t.tx.w, t.root, true, nil)
		if !(t.cur.SeekRowid(r) && t.cur.Rowid() == r) {
			if err := t.cur.Err(); err != nil {
				return 0, err
			}
			return r, nil
		}
	}
	return 0, fmt.Errorf("pagoda: table %q: no free rowid found (database or disk is full)", t.Name())
}

// oldValues decodes a stored record into column values: missing trailing
// fields (rows older than an ALTER TABLE ADD COLUMN) take the column's
// default, the rowid alias the rowid.
func (t *Table) oldValues(p *writePlan, rec []byte, rowid int64) ([]format.Value, error) {
	m := &t.meta.rec
	if _, err := m.check(rec); err != nil {
		return nil, format.Corruptf(0, "table %s row %d: %s", t.Name(), rowid, corruptMsg(err))
	}
	fieldAt := format.FieldAt
	if m.Rowids {
		fieldAt = format.RowFieldAt // the reserved types 10 and 11: NULL
	}
	vals := make([]format.Value, len(p.cols))
	for col := range p.cols {
		if col == p.alias {
			vals[col] = format.IntValue(rowid)
			continue
		}
		if f := m.Field[col]; f >= 0 {
			if st, body, state := fieldAt(rec, f); state == format.FieldOK {
				vals[col] = format.DecodeValue(st, body)
				continue
			}
		}
		vals[col] = m.Defaults[col]
	}
	return vals, nil
}

// deleteIndexEntries removes the index entries of the row whose stored
// record is rec.
func (t *Table) deleteIndexEntries(p *writePlan, rec []byte, rowid int64) error {
	if len(p.indexes) == 0 {
		return nil
	}
	vals, err := t.oldValues(p, rec, rowid)
	if err != nil {
		return err
	}
	var key []byte
	var fields []format.Value
	for i := range p.indexes {
		ip := &p.indexes[i]
		if !ip.includes(vals) {
			continue
		}
		key, fields = ip.key(key[:0], fields, vals, rowid, p.alias)
		found, err := t.tx.btree().IndexDelete(ip.root, ip.kinfo, 0, key)
		if err != nil {
			return err
		}
		if !found {
			return format.Corruptf(ip.root, "index %s has no entry for row %d of %s", ip.name, rowid, t.Name())
		}
	}
	return nil
}

// Delete deletes the row with the given rowid and its index entries
// (rowid tables); ErrNotFound if there is none.
func (t *Table) Delete(rowid int64) error {
	p, err := t.plan()
	if err != nil {
		return err
	}
	if p.wr {
		return fmt.Errorf("pagoda: table %q is WITHOUT ROWID: use DeleteKey: %w", t.Name(), ErrUnsupported)
	}
	if len(p.indexes) == 0 {
		// Nothing to read first: one descent, which changes nothing when
		// the row is not there.
		found, err := t.tx.btree().TableDelete(t.root, rowid)
		if err != nil {
			return t.tx.fail(err)
		}
		if !found {
			return fmt.Errorf("pagoda: table %q row %d: %w", t.Name(), rowid, ErrNotFound)
		}
		return t.tx.changed()
	}
	t.cur.Init(t.tx.w, t.root, true, nil)
	if !t.cur.SeekRowid(rowid) || t.cur.Rowid() != rowid {
		if err := t.cur.Err(); err != nil {
			return err
		}
		return fmt.Errorf("pagoda: table %q row %d: %w", t.Name(), rowid, ErrNotFound)
	}
	rec, err := t.cur.Payload()
	if err != nil {
		return err
	}
	// The index entries are deleted first: keep the row's record out of
	// the pages they change.
	t.tx.old = append(t.tx.old[:0], rec...)
	if err := t.deleteIndexEntries(p, t.tx.old, rowid); err != nil {
		return t.tx.fail(err)
	}
	if _, err := t.tx.btree().TableDelete(t.root, rowid); err != nil {
		return t.tx.fail(err)
	}
	return t.tx.changed()
}

// DeleteKey deletes the row of a WITHOUT ROWID table whose primary key is
// pk, and its index entries; ErrNotFound if there is none.
func (t *Table) DeleteKey(pk ...any) error {
	p, err := t.plan()
	if err != nil {
		return err
	}
	if !p.wr {
		return fmt.Errorf("pagoda: table %q has rowids: use Delete: %w", t.Name(), ErrUnsupported)
	}
	if len(pk) != p.nKey {
		return fmt.Errorf("pagoda: table %q: primary key has %d columns, got %d values", t.Name(), p.nKey, len(pk))
	}
	key, err := t.pkKey(pk)
	if err != nil {
		return err
	}
	t.cur.Init(t.tx.w, t.root, false, p.kinfo)
	if !t.cur.SeekKey(key) {
		if err := t.cur.Err(); err != nil {
			return err
		}
		return fmt.Errorf("pagoda: table %q key %v: %w", t.Name(), pk, ErrNotFound)
	}
	rec, err := t.cur.Payload()
	if err != nil {
		return err
	}
	t.tx.old = append(t.tx.old[:0], rec...)
	rec = t.tx.old
	if err := t.deleteIndexEntries(p, rec, 0); err != nil {
		return t.tx.fail(err)
	}
	if _, err := t.tx.btree().IndexDelete(t.root, p.kinfo, p.nKey, rec); err != nil {
		return t.tx.fail(err)
	}
	return t.tx.changed()
}

// AUTOINCREMENT.
//
// A rowid table whose INTEGER PRIMARY KEY is declared AUTOINCREMENT never
// hands out a rowid twice, even after deletes: SQLite keeps the largest
// rowid each such table has held in the sqlite_sequence table, which it
// creates with the first of them:
//
//	CREATE TABLE sqlite_sequence(name,seq)
//	  name  the table's name (TEXT), as in sqlite_schema
//	  seq   the largest rowid it has held (INTEGER)
//
// As sqlite3 does, pagoda reads a table's row as the first, in rowid
// order, whose name is that TEXT; gives an insert without a rowid one more
// than both seq and the table's largest rowid (and fails when either is
// the largest int64, where a plain table picks a random unused rowid);
// after every insert raises seq to the new rowid when that is larger,
// adding the row (seq at least 0) when there is none; leaves seq alone on
// deletes; and deletes the table's rows when the table is dropped.

const (
	sequenceTable     = "sqlite_sequence"
	createSequenceSQL = "CREATE TABLE sqlite_sequence(name,seq)"
)

// sequence is a table's row of sqlite_sequence, as an insert found it.
type sequence struct {
	tab   *Table // sqlite_sequence
	found bool   // the table has a row
	rowid int64  // its rowid
	seq   int64  // seq as sqlite3 reads it: an integer, 0 without a row
}

// sequenceOf reads table name's row of sqlite_sequence.
func (tx *Tx) sequenceOf(name string) (sequence, error) {
	st, err := tx.Table(sequenceTable)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return sequence{}, fmt.Errorf("pagoda: table %q is AUTOINCREMENT, but there is no %s table: %w", name, sequenceTable, ErrCorrupt)
		}
		return sequence{}, err
	}
	s := sequence{tab: st}
	c := st.Cursor()
	for ok := c.First(); ok; ok = c.Next() {
		rec := c.Record()
		if v := rec.Column(0); v.Type() != TypeText || string(v.Blob()) != name {
			continue
		}
		s.found, s.rowid, s.seq = true, c.Rowid(), expr.IntValue(rec.Column(1).format())
		break
	}
	return s, c.Err()
}

// autoRowid chooses the rowid of an insert without one into an
// AUTOINCREMENT table: one more than the largest rowid (1 in an empty
// table) and than seq. There is none when either is the largest int64.
func (t *Table) autoRowid(s sequence) (int64, error) {
	last, ok, err := btree.TableMaxRowid(t.tx.w, t.root)
	if err != nil {
		return 0, err
	}
	if (ok && last == math.MaxInt64) || s.seq == math.MaxInt64 {
		return 0, constraintf("table %q: AUTOINCREMENT has used the largest rowid (database or disk is full)", t.Name())
	}
	next := int64(1)
	if ok {
		next = last + 1
	}
	return max(next, s.seq+1), nil
}

// raise stores seq after an insert of rowid into table name: a new row
// when there is none, and the row rewritten only when rowid is larger
// than seq (a seq stored as another type stays as it is otherwise).
func (s sequence) raise(name string, rowid int64) error {
	switch {
	case !s.found:
		_, err := s.tab.Insert(name, max(0, rowid))
		return err
	case rowid <= s.seq:
		return nil
	}
	return s.tab.Put(s.rowid, name, rowid)
}

// createSequence creates sqlite_sequence, as sqlite3 does when it creates
// the first AUTOINCREMENT table.
func (tx *Tx) createSequence() error {
	if tx.cat.Table(sequenceTable) != nil {
		return nil
	}
	root, err := tx.btree().CreateTree(true)
	if err != nil {
		return err
	}
	sql := createSequenceSQL
	return tx.schemaInsert("table", sequenceTable, sequenceTable, root, &sql)
}

// dropSequence deletes table name's rows from sqlite_sequence, as sqlite3
// does when it drops an AUTOINCREMENT table.
func (tx *Tx) dropSequence(name string) error {
	st, err := tx.Table(sequenceTable)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var rowids []int64
	c := st.Cursor()
	for ok := c.First(); ok; ok = c.Next() {
		if v := c.Record().Column(0); v.Type() == TypeText && string(v.Blob()) == name {
			rowids = append(rowids, c.Rowid())
		}
	}
	if err := c.Err(); err != nil {
		return err
	}
	for _, r := range rowids {
		if err := st.Delete(r); err != nil {
			return err
		}
	}
	return nil
}
