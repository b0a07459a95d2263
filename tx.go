package pagoda

import (
	"errors"
	"fmt"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/schema"
)

// Tx is a transaction: a consistent snapshot of the database. A Tx is not
// safe for concurrent use; open one per goroutine. Slices and Records it
// returns are valid until it ends.
type Tx struct {
	db       *DB
	snap     pager.Snapshot
	w        *pager.WriteTx // write transactions
	bw       *btree.Writer  // its b-tree writer
	cat      *schema.Catalog
	writable bool
	closed   bool
	managed  bool     // begun by Update or View, which end it
	onCommit []func() // OnCommit's functions
	err      error    // first error that stopped an iterator
	// werr poisons a write transaction: a change failed half-way, so the
	// transaction can only roll back.
	werr error
	gen  uint64 // count of changes, so cursors know to find their place
	// epoch counts the Renews that moved the transaction to another
	// commit: tables, indexes and buckets taken before one are stale.
	epoch     uint64
	scratch   []byte // record being encoded
	old       []byte // copy of the record being deleted
	vals      []format.Value
	fields    []format.Value
	checkVals []format.Value // a row as CHECK constraints see it
	takes     []bool         // which indexes take the row being written
	// rs is what the transactions of the snapshot's commit share.
	rs *readState
	// tabs and bkts are the handles Table and Bucket gave, kept with the
	// Tx when View or Update pool it (DB.recycle): the next transaction
	// takes them again without an allocation.
	tabs []*Table
	bkts []*Bucket
}

// readState is what the transactions begun on one commit (a
// pager.Version) share, in every goroutine: the catalog, and the tables'
// leaf directories (table.go), so that a transaction per request reads
// through a directory that the requests before it paid for. A commit
// makes the next one.
type readState struct {
	ver  pager.Version
	cat  *schema.Catalog
	dirs [readDirs]leafDirState
}

// bind gives tx, whose snapshot is taken, its commit's readState,
// making it when tx is the first transaction on that commit.
func (tx *Tx) bind() error {
	db := tx.db
	ver := tx.snap.Version()
	rs := db.rs.Load()
	if rs == nil || rs.ver != ver {
		cat, err := db.catalog(tx.pages())
		if err != nil {
			return err
		}
		nrs := &readState{ver: ver, cat: cat}
		db.rs.CompareAndSwap(rs, nrs)
		rs = nrs
	}
	tx.rs, tx.cat = rs, rs.cat
	return nil
}

// Handles kept by a pooled Tx, at most: beyond, Table and Bucket allocate.
const txHandles = 8

// keep adds h to the handles a Tx keeps (tx.tabs, tx.bkts): up to
// txHandles, and then in place of one taken on an older catalog (stale),
// so that a schema change does not leave the Tx allocating a handle on
// every call.
func keep[H any](hs []H, h H, stale func(H) bool) []H {
	if len(hs) < txHandles {
		return append(hs, h)
	}
	for i, o := range hs {
		if stale(o) {
			hs[i] = h
			break
		}
	}
	return hs
}

// pages returns the pages the transaction reads: its own changes over the
// snapshot for a write transaction.
func (tx *Tx) pages() btree.Pages {
	if tx.w != nil {
		return tx.w
	}
	return &tx.snap
}

// end releases what the transaction holds.
func (tx *Tx) end() {
	tx.closed = true
	tx.snap.Release()
	if tx.w != nil {
		tx.w.Rollback()
	}
	tx.db.openTxN.Add(-1)
	tx.db.txs.RUnlock()
}

// DB returns the database the transaction belongs to.
func (tx *Tx) DB() *DB { return tx.db }

// Writable reports whether this is a write transaction.
func (tx *Tx) Writable() bool { return tx.writable }

// Rollback ends the transaction. For a read transaction this is the normal
// way to end it; a write transaction's changes are forgotten. Rolling back a
// closed transaction returns ErrTxClosed.
func (tx *Tx) Rollback() error {
	if tx.closed {
		return ErrTxClosed
	}
	if tx.managed {
		return errManaged
	}
	tx.end()
	return nil
}

// errManaged refuses Commit and Rollback inside Update, View and Batch,
// which end the transaction themselves: Update would report a commit
// made inside it as failed.
var errManaged error = &format.Wrapped{
	Msg: "pagoda: Update, View and Batch end their transaction themselves: return nil to commit, an error to roll back: " + ErrUnsupported.Error(),
	Err: ErrUnsupported,
}

// Commit ends a write transaction durably: with the default SyncFull, its
// changes are on stable storage when Commit returns nil. If Commit fails the
// transaction is rolled back and the database is as it was before it. A read
// transaction cannot be committed (ErrTxNotWritable); end it with Rollback.
func (tx *Tx) Commit() error {
	if tx.closed {
		return ErrTxClosed
	}
	if tx.managed {
		return errManaged
	}
	return tx.commit()
}

// commit is Commit on an open transaction, managed or not.
func (tx *Tx) commit() error {
	if !tx.writable {
		return ErrTxNotWritable
	}
	if tx.werr != nil {
		err := tx.werr
		tx.end()
		return fmt.Errorf("pagoda: commit of a failed transaction: %w", inner(err))
	}
	tx.snap.Release()
	err := tx.w.Commit()
	tx.w = nil
	tx.end()
	if err != nil {
		return fmt.Errorf("pagoda: %w", err)
	}
	for _, fn := range tx.onCommit {
		fn()
	}
	return nil
}

// OnCommit adds fn to the functions a write transaction calls, in the
// order they were added, once its Commit has succeeded (after the
// transaction has ended: fn may begin another). A transaction rolled back,
// or whose commit fails, calls none.
func (tx *Tx) OnCommit(fn func()) {
	tx.onCommit = append(tx.onCommit, fn)
}

// Err returns the first error that stopped one of this transaction's
// iterators (View returns it too).
func (tx *Tx) Err() error { return tx.err }

func (tx *Tx) setErr(err error) {
	if tx.err == nil {
		tx.err = err
	}
}

func (tx *Tx) check() error {
	if tx.closed {
		return ErrTxClosed
	}
	return nil
}

// checkEpoch is check for something taken from the transaction at epoch e.
func (tx *Tx) checkEpoch(e uint64) error {
	if tx.closed {
		return ErrTxClosed
	}
	if e != tx.epoch {
		return errStale
	}
	return nil
}

var errStale error = &format.Wrapped{
	Msg: "pagoda: taken from the transaction before Renew moved it to a later commit; take it again: " + ErrTxClosed.Error(),
	Err: ErrTxClosed,
}

// Epoch counts the times Renew moved the transaction to another commit:
// tables, indexes, buckets and cursors taken from it are valid while it
// stays the same (and the transaction is open).
func (tx *Tx) Epoch() uint64 { return tx.epoch }

// Renew moves a read transaction to the latest commit: it is the
// transaction that Rollback followed by Begin(false) would give, made
// without allocating, for a reader that works in many short transactions.
// It may be called on a read transaction that is open, or that Rollback
// ended (it is then open again, and must be ended again).
//
// same reports that the transaction goes on with its previous snapshot:
// nothing has been committed since it was taken, and (a file shared with
// other connections) no checkpoint has copied the whole WAL meanwhile.
// Then everything taken from the transaction (tables, indexes, buckets,
// cursors, records, slices) is valid as before: cursors are where they
// were. Otherwise the transaction has a new snapshot, of a later commit or
// of the same one read from the database file: a reader that kept reading
// the WAL by its read mark would keep every writer, sqlite3's too, from
// starting the WAL over. Tables, indexes and buckets taken before, and
// their cursors, are then stale: they fail with an error wrapping
// ErrTxClosed and must be taken again, and records and slices from before
// must not be used. Taking a new snapshot may wait for a read slot of the
// wal-index as Begin does (ErrBusy past Options.Timeout).
//
// Renewing a write transaction is an error wrapping ErrUnsupported.
func (tx *Tx) Renew() (same bool, err error) {
	if tx.writable {
		return false, fmt.Errorf("pagoda: Renew: a write transaction cannot be renewed: %w", ErrUnsupported)
	}
	db := tx.db
	if tx.closed {
		if err := db.holdOpen(); err != nil {
			return false, err
		}
	}
	same, err = db.pager.RenewSnapshot(&tx.snap)
	if err != nil {
		tx.closed = true
		db.txs.RUnlock()
		return false, fmt.Errorf("pagoda: Renew: %w", inner(err))
	}
	tx.closed, tx.err = false, nil
	if same {
		return true, nil
	}
	tx.epoch++
	if err := tx.bind(); err != nil {
		tx.end()
		return false, err
	}
	return false, nil
}

// Object is one row of sqlite_schema.
type Object struct {
	Type     string // "table", "index", "view" or "trigger"
	Name     string
	Table    string // the table it belongs to
	RootPage uint32 // 0 for views, triggers and virtual tables
	SQL      string // "" for automatic indexes
	// Module is a virtual table's module ("fts5", "rtree"), "" for any
	// other object. A virtual table has no b-tree: its rows are made by the
	// module, which pagoda does not run, so Tx.Table refuses it with
	// ErrUnsupported; the module keeps its data in shadow tables.
	Module string
	// ShadowOf names the virtual table whose shadow table this table is
	// (fts5's docs_content is one of docs), "" otherwise. A shadow table
	// reads as any table; only its module should write it.
	ShadowOf string
}

// Objects lists the schema in sqlite_schema order.
func (tx *Tx) Objects() []Object {
	out := make([]Object, 0, len(tx.cat.Entries))
	for _, e := range tx.cat.Entries {
		o := Object{Type: e.Type, Name: e.Name, Table: e.TblName, RootPage: e.RootPage, SQL: e.SQL}
		if e.Type == "table" {
			if e.RootPage == 0 {
				o.Module = schema.VirtualModule(e.SQL)
			} else if ti := tx.cat.Table(e.Name); ti != nil && ti.Entry.RootPage == e.RootPage {
				o.ShadowOf = ti.ShadowOf
			}
		}
		out = append(out, o)
	}
	return out
}

// TableNames returns the names of all tables, in schema order.
func (tx *Tx) TableNames() []string {
	var out []string
	for _, e := range tx.cat.Entries {
		if e.Type == "table" {
			out = append(out, e.Name)
		}
	}
	return out
}

// PageCount returns the database size in pages in this snapshot.
func (tx *Tx) PageCount() uint32 { return tx.pages().PageCount() }

// schemaErr translates a schema package error into the contract's errors.
func schemaErr(what, name string, err error) error {
	if errors.Is(err, schema.ErrUnsupported) {
		return fmt.Errorf("pagoda: %s %q: %w: %v", what, name, ErrUnsupported, err)
	}
	return fmt.Errorf("pagoda: %s %q: %w: %v", what, name, ErrCorrupt, err)
}

// rootOK checks a root page number from the schema.
func (tx *Tx) rootOK(what, name string, root uint32) error {
	if n := tx.pages().PageCount(); root < 1 || root > n {
		return format.Corruptf(root, "%s %q has root page %d outside 1..%d", what, name, root, n)
	}
	return nil
}

// btree returns the transaction's b-tree writer, which keeps its scratch
// space from one change to the next.
func (tx *Tx) btree() *btree.Writer {
	if tx.bw == nil {
		if db := tx.db; db.bw == nil {
			db.bw = btree.NewWriter(tx.w)
		} else {
			db.bw.Reset(tx.w)
		}
		tx.bw = tx.db.bw
	}
	return tx.bw
}

// writeCheck returns why the transaction cannot write, if it cannot.
func (tx *Tx) writeCheck() error {
	if tx.closed {
		return ErrTxClosed
	}
	if !tx.writable {
		return ErrTxNotWritable
	}
	if tx.werr != nil {
		return fmt.Errorf("pagoda: an earlier change of this transaction failed, roll it back: %w", inner(tx.werr))
	}
	return nil
}

// fail poisons the transaction with err, from a change that may have been
// applied in part: the transaction can then only roll back. Errors found
// before anything changed (constraints, bad arguments) must not come here.
func (tx *Tx) fail(err error) error {
	if tx.werr == nil {
		tx.werr = err
	}
	return err
}

// changed records a change of the trees (cursors of this transaction find
// their place again before they move) and lets the pager spill changed
// pages to the WAL when they exceed the cache budget.
func (tx *Tx) changed() error {
	tx.gen++
	if err := tx.w.Settle(); err != nil {
		return tx.fail(err)
	}
	return nil
}

// isConstraint reports whether err is a constraint error that leaves the
// transaction usable.
func isConstraint(err error) bool { return errors.Is(err, ErrExists) || errors.Is(err, errConstraint) }

// errConstraint marks the constraint failures that have no sentinel of
// their own (NOT NULL, STRICT types, wrong value counts).
var errConstraint = expr.ErrConstraint
