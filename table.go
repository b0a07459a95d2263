package pagoda

import (
	"fmt"
	"sync/atomic"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/schema"
)

// Table is a SQLite table: a rowid table, or a WITHOUT ROWID table (whose
// rows are ordered by primary key).
type Table struct {
	tx    *Tx
	epoch uint64          // tx.epoch when t was taken
	cat   *schema.Catalog // the catalog info comes from
	info  *schema.TableInfo
	meta  *tableMeta
	root  uint32
	cur   btree.Cursor // for Get
	// The leaf directory of the table on the read transaction's commit:
	// ld is the commit's state, shared by every transaction on it; dir is
	// ld's directory once t.cur reads through it (UseLeafDir).
	ld  *leafDirState
	dir *btree.LeafDir
	rc  recordCtx // its rows'
}

// Column describes a table column.
type Column struct {
	Name       string
	Type       string // declared type, "" if none
	PrimaryKey bool
	NotNull    bool
	// Generated is set for a GENERATED ALWAYS AS column (VIRTUAL or
	// STORED), which INSERT takes no value for.
	Generated bool
}

// Table returns the table called name (case-insensitive), or ErrNotFound.
// sqlite_schema (or sqlite_master), the schema's own table, reads as
// SQLite reads it and refuses writes with ErrUnsupported.
func (tx *Tx) Table(name string) (*Table, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	ti := tx.cat.Table(name)
	if ti == nil {
		ti = tx.cat.SchemaInfo(name) // read only (makePlan)
	}
	if ti == nil {
		return nil, noSuch("table", name)
	}
	if ti.Err != nil {
		return nil, schemaErr("table", name, ti.Err)
	}
	if err := tx.rootOK("table", name, ti.Entry.RootPage); err != nil {
		return nil, err
	}
	for _, t := range tx.tabs {
		if t.info == ti && t.cat == tx.cat {
			t.bind()
			return t, nil
		}
	}
	t := &Table{tx: tx, cat: tx.cat, info: ti, meta: tx.db.tableMeta(tx.cat, ti), root: ti.Entry.RootPage}
	t.rc = recordCtx{meta: &t.meta.rec, tx: tx}
	t.bind()
	tx.tabs = keep(tx.tabs, t, func(o *Table) bool { return o.cat != tx.cat })
	return t, nil
}

// bind makes t, new or kept by its Tx (which gives a table one handle),
// current in the transaction.
func (t *Table) bind() {
	tx := t.tx
	t.epoch, t.ld, t.dir = tx.epoch, nil, nil
	if tx.w == nil && !t.info.Table.WithoutRowID {
		t.ld = tx.rs.leafDir(t.root)
	}
}

// check reports whether t may be used: its transaction is open and has not
// been renewed onto another commit since t was taken, and the table still
// exists if the transaction has changed the schema since (refresh).
func (t *Table) check() error {
	if t.ok() {
		return nil
	}
	return t.recheck()
}

// ok is check's fast path, with no call: t was taken in the transaction's
// epoch and catalog, and the transaction is open.
func (t *Table) ok() bool {
	return t.epoch == t.tx.epoch && !t.tx.closed && t.cat == t.tx.cat
}

func (t *Table) recheck() error {
	if err := t.tx.checkEpoch(t.epoch); err != nil {
		return err
	}
	return t.refresh()
}

// Name returns the table's name as stored in the schema.
func (t *Table) Name() string { return t.info.Entry.Name }

// SQL returns the table's CREATE statement.
func (t *Table) SQL() string { return t.info.Entry.SQL }

// WithoutRowID reports whether the table is a WITHOUT ROWID table.
func (t *Table) WithoutRowID() bool { return t.info.Table.WithoutRowID }

// IsBucket reports whether the table has a bucket's shape.
func (t *Table) IsBucket() bool { return t.info.Table.IsBucket() }

// Columns returns the table's columns in declaration order.
func (t *Table) Columns() []Column {
	out := make([]Column, len(t.info.Table.Columns))
	for i, c := range t.info.Table.Columns {
		out[i] = Column{Name: c.Name, Type: c.Type, PrimaryKey: c.PrimaryKey, NotNull: c.NotNull, Generated: c.Generated}
	}
	return out
}

// Indexes returns the names of the table's indexes.
func (t *Table) Indexes() []string {
	var out []string
	for _, ix := range t.info.Indexes {
		out = append(out, ix.Entry.Name)
	}
	return out
}

// Count returns the number of rows. It reads only page headers.
func (t *Table) Count() (int64, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	return btree.Count(t.tx.pages(), t.root, !t.WithoutRowID())
}

// Get returns the row with the given rowid, or ErrNotFound. It allocates
// nothing unless the row spills onto overflow pages, but for the leaf
// directory a read transaction builds once for a table that has had
// enough lookups (leafdir.go): then Get finds the leaf without searching
// the tree's interior pages. For WITHOUT ROWID tables use GetKey.
func (t *Table) Get(rowid int64) (Record, error) {
	if t.dir != nil && t.epoch == t.tx.epoch && !t.tx.closed {
		// A rowid table of a read transaction, with its leaf directory
		// (find): t's catalog and pages stay as they are while t is valid.
		// The row found whole is returned here, the rest by get: a row of
		// the shape the rows before it had is known whole without a walk
		// of its header (recordCtx.shape).
		payload, pgno, st := t.cur.FindRowid(rowid)
		if st == btree.FindFound {
			data := pager.AsString(payload)
			if t.rc.shape.Fits(payload) {
				return Record{data: data, rowid: rowid, ctx: &t.rc}, nil
			}
			t.rc.missed(payload)
			if format.RecordFits(payload) {
				return Record{data: data, rowid: rowid, ctx: &t.rc}, nil
			}
		}
		return t.get(rowid, payload, pgno, st)
	}
	if err := t.check(); err != nil {
		return Record{}, err
	}
	if t.WithoutRowID() {
		return Record{}, fmt.Errorf("pagoda: table %q is WITHOUT ROWID: use GetKey: %w", t.Name(), ErrUnsupported)
	}
	payload, pgno, st := t.find(rowid)
	return t.get(rowid, payload, pgno, st)
}

// get is Get once the search has answered st.
func (t *Table) get(rowid int64, payload []byte, pgno uint32, st btree.FindStatus) (Record, error) {
	switch st {
	case btree.FindFound:
		return newRecord(&t.rc, payload, rowid, pgno)
	case btree.FindAbsent:
		return Record{}, ErrNotFound
	case btree.FindSpills:
		return t.record(&t.cur)
	}
	// A page out of shape: the cursor's search reports it.
	if !t.cur.SeekRowid(rowid) {
		if err := t.cur.Err(); err != nil {
			return Record{}, err
		}
		return Record{}, ErrNotFound
	}
	return t.record(&t.cur)
}

// GetKey returns the row of a WITHOUT ROWID table whose primary key equals
// pk (one value per key column), or ErrNotFound.
func (t *Table) GetKey(pk ...any) (Record, error) {
	if !t.ok() { // check, inlined
		if err := t.recheck(); err != nil {
			return Record{}, err
		}
	}
	if !t.WithoutRowID() {
		return Record{}, fmt.Errorf("pagoda: table %q has rowids: use Get: %w", t.Name(), ErrUnsupported)
	}
	if len(pk) != t.meta.nKey {
		return Record{}, fmt.Errorf("pagoda: table %q: primary key has %d columns, got %d values", t.Name(), t.meta.nKey, len(pk))
	}
	key, err := t.pkKey(pk)
	if err != nil {
		return Record{}, err
	}
	t.cur.Init(t.tx.pages(), t.root, false, &t.meta.kinfo)
	if !t.cur.SeekKey(key) {
		if err := t.cur.Err(); err != nil {
			return Record{}, err
		}
		return Record{}, ErrNotFound
	}
	return t.record(&t.cur) // a row of fewer fields than the key's is damage (newRecord)
}

// pkKey converts primary key values (a prefix is allowed) to a search key,
// with the key columns' affinities applied.
func (t *Table) pkKey(pk []any) ([]format.Value, error) {
	vals := make([]format.Value, len(pk))
	for i, x := range pk {
		v, err := toValue(x)
		if err != nil {
			return nil, err
		}
		if col := t.info.Table.PrimaryKey[i].Column; col >= 0 {
			v = expr.ApplyAffinity(v, expr.ComparisonAffinity(t.info.Table.Columns[col].Affinity))
		}
		vals[i] = keyText(v, t.meta.rec.Enc)
	}
	return vals, nil
}

// record decodes the cursor's current row.
func (t *Table) record(c *btree.Cursor) (Record, error) {
	rowid, payload, pgno, err := c.Entry()
	if err != nil {
		return Record{}, err
	}
	return newRecord(&t.rc, payload, rowid, pgno)
}

// Cursor returns a cursor over the table's rows in rowid order (primary key
// order for WITHOUT ROWID tables).
func (t *Table) Cursor() *TableCursor {
	tc := &TableCursor{t: t}
	tc.c.Init(t.tx.pages(), t.root, !t.WithoutRowID(), &t.meta.kinfo)
	if !t.tx.writable {
		tc.c.UseRuns(&tc.run)
	}
	return tc
}

// Reset points tc at the start of t (which may belong to another
// transaction), reusing tc's memory. Reset(nil) drops every reference to
// the last transaction, for a cursor kept in a pool.
func (tc *TableCursor) Reset(t *Table) {
	tc.t, tc.rec, tc.err, tc.gen = t, Record{}, nil, 0
	if t == nil {
		tc.c = btree.Cursor{}
		return
	}
	tc.c.Init(t.tx.pages(), t.root, !t.WithoutRowID(), &t.meta.kinfo)
	if !t.tx.writable {
		tc.c.UseRuns(&tc.run)
	}
}

// TableCursor iterates a table's rows. Moving methods return false at
// either end or on error; Err says which.
//
// In a write transaction a record is valid until the transaction's next
// change. A cursor survives changes made by its transaction: it finds its
// row again (by rowid, or by primary key on a WITHOUT ROWID table) before
// it moves, and moves on from the row after it if that row is gone.
type TableCursor struct {
	t   *Table
	c   btree.Cursor
	rec Record
	err error
	gen uint64                         // tx.gen when the cursor was positioned
	run [btree.RunLen]format.TableCell // the cursor's runs in a read transaction
	// A WITHOUT ROWID table's cursor in a write transaction: the current
	// entry, copied (its key finds it again: reseek), and the key decoded.
	ent []byte
	key []format.Value
}

func (tc *TableCursor) load(ok bool) bool {
	if !ok {
		tc.rec = Record{}
		return false
	}
	rowid, payload, _, err := tc.c.Entry()
	if err != nil {
		tc.rec, tc.err = Record{}, err
		return false
	}
	// The record is checked as its columns are read.
	tc.rec = Record{data: pager.AsString(payload), rowid: rowid, ctx: &tc.t.rc}
	tc.gen = tc.t.tx.gen
	if tc.t.tx.writable && tc.t.WithoutRowID() {
		tc.ent = append(tc.ent[:0], payload...)
	}
	return true
}

// stale reports whether the transaction changed the trees since the cursor
// was positioned on its row.
func (tc *TableCursor) stale() bool {
	return tc.rec.ctx != nil && tc.gen != tc.t.tx.gen
}

// reseek finds the cursor's row again after a change, and reports whether
// it is still there; if not, the cursor sits on the next row (or is past
// the end). A WITHOUT ROWID table's row is found by the primary key of
// the entry load copied.
func (tc *TableCursor) reseek() bool {
	t := tc.t
	if !t.WithoutRowID() {
		rowid := tc.rec.rowid
		tc.c.Init(t.tx.pages(), t.root, true, nil)
		return tc.c.SeekRowid(rowid) && tc.c.Rowid() == rowid
	}
	n := t.meta.nKey
	tc.key = tc.key[:0]
	tc.c.Init(t.tx.pages(), t.root, false, &t.meta.kinfo)
	fail := func(err error) bool {
		tc.err = err
		tc.c.Init(t.tx.pages(), t.root, false, &t.meta.kinfo) // on no row
		return false
	}
	for i := range n {
		v, ok := format.Field(tc.ent, i)
		if !ok {
			return fail(format.Corruptf(0, "table %s: the entry the cursor was on has no key column %d", t.Name(), i))
		}
		tc.key = append(tc.key, v)
	}
	tc.c.SeekKey(tc.key)
	if !tc.c.Valid() {
		return false
	}
	_, payload, _, err := tc.c.Entry()
	if err != nil {
		return fail(err)
	}
	// The same row if its primary key is equal, as the b-tree writer
	// finds a row (NOCASE 'a' is 'A'): a row replaced by one of an equal
	// key is not visited again.
	c, err := format.CompareRecordPrefix(tc.ent, payload, &t.meta.kinfo, n)
	if err != nil {
		return fail(err)
	}
	return c == 0
}

func (tc *TableCursor) ready() bool {
	return (tc.t.ok() && tc.err == nil) || tc.readySlow()
}

func (tc *TableCursor) readySlow() bool {
	if tc.err == nil {
		tc.err = tc.t.check()
	}
	return tc.err == nil
}

// First moves to the first row.
func (tc *TableCursor) First() bool { return tc.ready() && tc.load(tc.c.First()) }

// Last moves to the last row.
func (tc *TableCursor) Last() bool { return tc.ready() && tc.load(tc.c.Last()) }

// Next moves to the next row.
func (tc *TableCursor) Next() bool {
	if !(tc.t.ok() && tc.err == nil) && !tc.readySlow() { // ready, inlined
		return false
	}
	if tc.stale() && !tc.reseek() {
		return tc.load(tc.c.Valid())
	}
	// A read transaction's step within the run of cells the cursor
	// decoded (btree.Cursor.UseRuns), without a call.
	if rowid, payload, ok := tc.c.NextInRun(); ok {
		tc.rec = Record{data: pager.AsString(payload), rowid: rowid, ctx: &tc.t.rc}
		return true
	}
	return tc.load(tc.c.Next())
}

// Prev moves to the previous row.
func (tc *TableCursor) Prev() bool {
	if !(tc.t.ok() && tc.err == nil) && !tc.readySlow() { // ready, inlined
		return false
	}
	if tc.stale() {
		tc.reseek()
		if !tc.c.Valid() {
			return tc.load(tc.c.Last())
		}
	}
	return tc.load(tc.c.Prev())
}

// SeekRowid moves to the first row whose rowid is >= rowid (rowid tables).
func (tc *TableCursor) SeekRowid(rowid int64) bool {
	if !(tc.t.ok() && tc.err == nil) && !tc.readySlow() { // ready, inlined
		return false
	}
	if tc.t.WithoutRowID() {
		tc.err = fmt.Errorf("pagoda: table %q is WITHOUT ROWID: use SeekKey: %w", tc.t.Name(), ErrUnsupported)
		return false
	}
	tc.c.SeekRowid(rowid)
	return tc.load(tc.c.Valid())
}

// SeekKey moves to the first row whose primary key is >= pk, a full key or
// a prefix of it (WITHOUT ROWID tables).
func (tc *TableCursor) SeekKey(pk ...any) bool {
	if !(tc.t.ok() && tc.err == nil) && !tc.readySlow() { // ready, inlined
		return false
	}
	if !tc.t.WithoutRowID() {
		tc.err = fmt.Errorf("pagoda: table %q has rowids: use SeekRowid: %w", tc.t.Name(), ErrUnsupported)
		return false
	}
	if len(pk) > tc.t.meta.nKey {
		tc.err = fmt.Errorf("pagoda: table %q: primary key has %d columns, got %d values", tc.t.Name(), tc.t.meta.nKey, len(pk))
		return false
	}
	key, err := tc.t.pkKey(pk)
	if err != nil {
		tc.err = err
		return false
	}
	tc.c.SeekKey(key)
	return tc.load(tc.c.Valid())
}

// Rowid returns the current row's rowid (0 for WITHOUT ROWID tables).
func (tc *TableCursor) Rowid() int64 { return tc.rec.rowid }

// Record returns the current row.
func (tc *TableCursor) Record() Record { return tc.rec }

// Err returns the error that stopped the cursor, if any, or else a
// malformed record that a column read met in this transaction.
func (tc *TableCursor) Err() error {
	if tc.err != nil {
		return tc.err
	}
	if err := tc.c.Err(); err != nil {
		return err
	}
	return tc.t.tx.err
}

// Point lookups in a read transaction go through a leaf directory
// (btree.LeafDir) once a table has had enough of them: the leaves of the
// table's b-tree in key order, read from its interior pages once, so that
// a lookup finds its leaf in one array and the leaf's trip to memory
// starts at once, instead of after a search of the root and each interior
// page below it. A directory belongs to a commit (readState): every read
// transaction begun on that commit, in any goroutine, reads through it, so
// a transaction per request gets the path of a long one; a commit makes a
// new readState, whose directories are built again when their lookups pay
// for it. Write transactions, whose pages change under their lookups,
// never use one.
//
// A table's directory is built when its lookups on the commit, made
// through any transaction and handle, reach dirMinLookups and its leaves
// (as btree.EstimateLeaves guesses them) divided by dirLeavesPerLookup:
// building reads the interior pages, about 12 ns a leaf, a fraction of
// the lookups made already (one costs 60 to 300 ns) and repaid by the
// next ones. A table of more than dirMaxLeaves leaves gets none, nor do
// tables past a commit's first readDirs.
const (
	dirMinLookups      = 256
	dirLeavesPerLookup = 8
	dirMaxLeaves       = 1 << 20 // 16 bytes a leaf: 16 MiB, a table of 4 GiB in 4 KiB pages
	readDirs           = 8
)

// leafDirState is the leaf directory of one table on one commit (a
// bucket's: its KeyDir), and the count of lookups that decides when to
// build it. Transactions of many goroutines share it: every field is
// atomic.
type leafDirState struct {
	root    atomic.Uint32 // the table's root page; 0: a free slot
	dir     atomic.Pointer[btree.LeafDir]
	keys    atomic.Pointer[btree.KeyDir]
	lookups atomic.Int64 // lookups on the table, until the directory is built
	dirAt   atomic.Int64 // lookups at which to build it, 0 before it is estimated; -1: never, or being built
}

// leafDir returns the state of the table rooted at root, taking a free
// slot for it, or nil when none is left.
func (rs *readState) leafDir(root uint32) *leafDirState {
	for i := range rs.dirs {
		d := &rs.dirs[i]
		if r := d.root.Load(); r == root {
			return d
		} else if r == 0 && d.root.CompareAndSwap(0, root) {
			return d
		} else if d.root.Load() == root {
			return d // another goroutine took this slot for root
		}
	}
	return nil
}

// find looks rowid up for Get and OpenBlob with btree's FindRowid: through
// the table's leaf directory when its commit has one, building it when the
// lookups have come to pay for it.
func (t *Table) find(rowid int64) ([]byte, uint32, btree.FindStatus) {
	if t.dir == nil {
		t.cur.Init(t.tx.pages(), t.root, true, nil)
		t.takeDir()
	}
	// Once t has dir, t.cur reads through it: nothing but find inits it
	// on a rowid table in a read transaction.
	return t.cur.FindRowid(rowid)
}

// takeDir counts a lookup towards the table's leaf directory, builds the
// directory when due, and has t.cur (just set for the snapshot) use it
// once there is one.
func (t *Table) takeDir() {
	ld := t.ld
	if ld == nil {
		return
	}
	d := ld.dir.Load()
	if d == nil && ld.due(t.tx.pages()) {
		d = btree.BuildLeafDir(t.tx.pages(), ld.root.Load(), dirMaxLeaves)
		ld.dir.Store(d)
	}
	if t.dir = d; d != nil {
		t.cur.UseLeafDir(d)
	}
}

// due counts a lookup towards the directory of the tree in src (a
// snapshot of the state's commit) and reports whether the caller is to
// build it now: once, as dirAt is -1 from then on. The first lookup past
// dirMinLookups estimates the tree's leaves, a page read per level, to set
// when (see the top of the file).
func (ld *leafDirState) due(src btree.Pages) bool {
	at := ld.dirAt.Load()
	if at < 0 {
		return false
	}
	n := ld.lookups.Add(1)
	if n < dirMinLookups || n < at {
		return false
	}
	if at == 0 {
		est := btree.EstimateLeaves(src, ld.root.Load())
		if est < 2 || est > dirMaxLeaves {
			ld.dirAt.Store(-1) // one leaf, too many, or a damaged path: none
			return false
		}
		at = max(int64(est/dirLeavesPerLookup), 1)
		if !ld.dirAt.CompareAndSwap(0, at) || n < at {
			return false
		}
	}
	return ld.dirAt.CompareAndSwap(at, -1) // else another transaction builds it
}
