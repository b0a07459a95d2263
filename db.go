package pagoda

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/schema"
)

// DB is an open database file. It is safe for use by many goroutines.
type DB struct {
	path     string
	readOnly bool
	pager    *pager.Pager

	// txs is held for reading by every open transaction and for writing
	// by Close, which therefore waits for transactions to end.
	txs sync.RWMutex

	closed atomic.Bool // Close was called

	mu        sync.Mutex
	batch     batchState      // Batch calls waiting for a batch
	cat       *schema.Catalog // catalog of the last schema read
	catCookie uint32

	// bw is the b-tree writer of write transactions, one at a time (the
	// pager's writer lock), kept with its buffers from one to the next.
	bw *btree.Writer

	metaCat *schema.Catalog // the catalog tmeta and imeta describe
	tmeta   map[*schema.TableInfo]*tableMeta
	imeta   map[*schema.IndexInfo]*indexMeta

	// rs is the readState of the latest commit a transaction began on.
	rs atomic.Pointer[readState]
	// txPool keeps the Txs that View and Update ended, with their
	// buffers and handles (recycle).
	txPool sync.Pool

	// Transactions begun, write transactions begun, and open now.
	txN, writeTxN atomic.Uint64
	openTxN       atomic.Int64
}

// Open opens the SQLite database at path, creating it (in WAL mode, with
// Options.PageSize) when it does not exist, unless Options.ReadOnly is set.
// A `-wal` file beside it is recovered as sqlite3 would: its committed
// transactions are visible.
//
// A WAL-mode database is shared, as sqlite3 shares it: Open holds sqlite3's
// SHARED lock on the file until Close and takes part in the `-shm`
// wal-index, so that sqlite3 processes, Litestream and other pagoda DBs
// read and write the file beside this one. Each read transaction sees the
// last commit of any of them as of its start; a write transaction takes the
// WAL's write lock from Begin to Commit or Rollback, waiting up to
// Options.Timeout for another connection's transaction to end, then fails
// with an error wrapping ErrBusy. This needs locks that belong to the open
// file: Linux's. Elsewhere, and with Options.Exclusive, a writable DB holds
// sqlite3's EXCLUSIVE lock from Open to Close instead (as sqlite3's
// locking_mode=EXCLUSIVE): no other DB and no sqlite3 process can read or
// write the file meanwhile ("database is locked").
//
// A rollback-journal database (sqlite3's and Python's default mode) stays
// one (Options.JournalMode): commits go through a -journal of the pages'
// originals as sqlite3's do, and, as sqlite3, a DB holds the file's SHARED
// lock only during a read transaction and RESERVED during a write one, so
// sqlite3 processes read and write the file beside it; each transaction
// begins from the last commit of any of them. A commit waits up to
// Options.Timeout for read transactions, of other processes and of this
// DB, to end (then ErrBusy: nothing is committed), and a write
// transaction as long for another process's. Elsewhere than Linux, and
// with Options.Exclusive, such a DB holds EXCLUSIVE (SHARED read-only)
// from Open to Close instead, still writing through the journal. Its
// Checkpoint does nothing.
//
// While a lock Open needs is held elsewhere Open tries again until
// Options.Timeout has passed, then fails with an error wrapping ErrLocked.
func Open(path string, opts *Options) (*DB, error) {
	if opts == nil {
		opts = &Options{}
	}
	p, err := pager.Open(path, pager.Options{
		ReadOnly:        opts.ReadOnly,
		PageSize:        opts.PageSize,
		Sync:            pager.SyncMode(opts.Sync),
		CacheSize:       opts.CacheSize,
		CheckpointPages: opts.CheckpointPages,
		Timeout:         opts.Timeout,
		Exclusive:       opts.Exclusive,
		JournalMode:     pager.JournalMode(opts.JournalMode),
	})
	if err != nil {
		if !strings.Contains(err.Error(), path) {
			return nil, fmt.Errorf("pagoda: %s: %w", path, err)
		}
		return nil, fmt.Errorf("pagoda: %w", err)
	}
	return &DB{path: path, readOnly: p.ReadOnly(), pager: p}, nil
}

// ReadOnly reports whether the database refuses writes with ErrReadOnly:
// Options.ReadOnly was set, or the file could not be opened for writing.
func (db *DB) ReadOnly() bool { return db.readOnly }

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// PageSize returns the database's page size.
func (db *DB) PageSize() int { return db.pager.PageSize() }

// Close releases the database. It waits for open transactions to end;
// slices obtained from them must not be used afterwards. A database that
// was written is checkpointed: the WAL's pages are copied into the file and
// the WAL removed, as sqlite3 does when its last connection closes. When
// that checkpoint fails (a full disk), Close returns an error wrapping
// ErrCheckpoint: every commit stands, in the WAL.
func (db *DB) Close() error {
	if !db.closed.CompareAndSwap(false, true) {
		return nil
	}
	db.txs.Lock()
	defer db.txs.Unlock()
	return db.pager.Close()
}

// Begin starts a transaction. A read transaction sees the database as of
// the last commit before it began, for as long as it lives; end it with
// Rollback. A write transaction (writable true) waits for the previous one
// to end; it sees its own changes, and other transactions see none of them
// until Commit. End it with Commit or Rollback. A database opened ReadOnly
// refuses write transactions with ErrReadOnly; a file pagoda reads but does
// not write (auto-vacuum, a header write version above 2, or UTF-16 text)
// refuses them with ErrUnsupported, before anything is written.
func (db *DB) Begin(writable bool) (*Tx, error) {
	tx := &Tx{}
	if err := db.begin(tx, writable); err != nil {
		return nil, err
	}
	return tx, nil
}

// begin starts tx: a new Tx, or one that recycle put back in the pool.
func (db *DB) begin(tx *Tx, writable bool) error {
	if writable && db.readOnly {
		return ErrReadOnly
	}
	if err := db.holdOpen(); err != nil {
		return err
	}
	tx.db, tx.writable, tx.closed = db, writable, false
	if writable {
		w, err := db.pager.BeginWrite()
		if err != nil {
			tx.closed = true
			db.txs.RUnlock()
			return fmt.Errorf("pagoda: %w", err)
		}
		tx.w = w
	}
	var err error
	if tx.w != nil {
		err = tx.w.InitSnapshot(&tx.snap)
	} else {
		err = db.pager.InitSnapshot(&tx.snap)
	}
	if err != nil {
		if tx.w != nil {
			tx.w.Rollback()
			tx.w = nil
		}
		tx.closed = true
		db.txs.RUnlock()
		return fmt.Errorf("pagoda: %w", err)
	}
	db.txN.Add(1)
	if writable {
		db.writeTxN.Add(1)
	}
	db.openTxN.Add(1)
	if err := tx.bind(); err != nil {
		tx.end()
		return err
	}
	return nil
}

// pooled returns a transaction begun on a Tx from the pool, for View and
// Update, which hand it back (recycle) when their function has returned:
// a transaction per request allocates nothing.
func (db *DB) pooled(writable bool) (*Tx, error) {
	tx, _ := db.txPool.Get().(*Tx)
	if tx == nil {
		tx = &Tx{}
	}
	if err := db.begin(tx, writable); err != nil {
		tx.closed = true // begin let go of whatever it took
		db.recycle(tx)
		return nil, err
	}
	tx.managed = true
	return tx, nil
}

// recycle ends tx if it is open and puts it in the pool. Everything taken
// from it becomes stale (a new epoch), but the handles it keeps for the
// next transaction.
func (db *DB) recycle(tx *Tx) {
	if !tx.closed {
		tx.end()
	}
	tx.epoch++
	tx.snap = pager.Snapshot{}
	tx.w, tx.bw, tx.rs = nil, nil, nil
	clear(tx.onCommit)
	tx.onCommit = tx.onCommit[:0]
	tx.err, tx.werr, tx.managed = nil, nil, false
	db.txPool.Put(tx)
}

// holdOpen keeps the database open for a transaction until it ends (its
// end releases db.txs), or fails if the database is closed.
func (db *DB) holdOpen() error {
	db.txs.RLock()
	if db.closed.Load() {
		db.txs.RUnlock()
		return errDBClosed
	}
	return nil
}

// errDBClosed is what a transaction, or a checkpoint, asked for after
// Close (or while it runs) returns.
var errDBClosed error = &format.Wrapped{Msg: "pagoda: database is closed: " + ErrTxClosed.Error(), Err: ErrTxClosed}

// Update runs fn in a write transaction and commits it if fn returns nil;
// otherwise, or if fn panics, the transaction is rolled back and leaves no
// trace. Update ends the transaction itself: tx.Commit and tx.Rollback
// inside fn fail (ErrUnsupported) and change nothing. As with View, the Tx
// is reused once Update returns: fn must not keep it, nor anything taken
// from it.
func (db *DB) Update(fn func(*Tx) error) (err error) {
	tx, err := db.pooled(true)
	if err != nil {
		return err
	}
	defer db.recycle(tx)
	if err := fn(tx); err != nil {
		return err
	}
	if tx.err != nil {
		return tx.err
	}
	return tx.commit()
}

// CheckpointMode says how far DB.Checkpoint goes, as sqlite3's
// PRAGMA wal_checkpoint modes.
type CheckpointMode uint8

const (
	// CheckpointPassive copies what it can without waiting for anyone:
	// what the oldest read transaction, in any connection, still reads
	// stays in the WAL. Commits checkpoint this way on their own.
	CheckpointPassive = CheckpointMode(pager.CheckpointPassive)
	// CheckpointFull waits (up to Options.Timeout) for other writers and
	// for readers of older commits, then copies every frame.
	CheckpointFull = CheckpointMode(pager.CheckpointFull)
	// CheckpointRestart is Full, and waits for every reader of the WAL to
	// finish, so that the next commit starts the WAL over.
	CheckpointRestart = CheckpointMode(pager.CheckpointRestart)
	// CheckpointTruncate is Restart, and then cuts the WAL file to 0
	// bytes.
	CheckpointTruncate = CheckpointMode(pager.CheckpointTruncate)
)

// Checkpoint copies the pages committed to the WAL into the database file,
// as far as open read transactions in any connection allow, syncs it, and
// returns how many of the WAL's frames are not in the file yet. Commits
// and Close checkpoint on their own; call it to bound the WAL at a moment
// of your choosing. A mode other than CheckpointPassive that cannot finish
// within Options.Timeout (writers or readers of other connections, or
// read transactions of this DB, hold the WAL) returns an error wrapping
// ErrBusy, with what it did.
func (db *DB) Checkpoint(mode CheckpointMode) (remaining int, err error) {
	if db.readOnly {
		return 0, ErrReadOnly
	}
	// Not holdOpen: a caller may hold a transaction while Close waits
	// for it, and a read lock asked for then would wait behind Close.
	if !db.txs.TryRLock() {
		return 0, errDBClosed
	}
	defer db.txs.RUnlock()
	if db.closed.Load() {
		return 0, errDBClosed
	}
	res, err := db.pager.Checkpoint(pager.CheckpointMode(mode))
	if err != nil {
		err = fmt.Errorf("pagoda: checkpoint: %w", inner(err))
	}
	return int(res.Frames - res.Copied), err
}

// View runs fn in a read transaction and returns its error, or the first
// error that stopped one of the transaction's iterators. View allocates
// nothing of its own: the Tx, and the tables and buckets taken from it,
// are reused by a later View or Update once this one returns, so fn must
// not keep them (nor records and slices read through them). A transaction
// per request shares what the requests before it learnt of the same
// commit (a table's leaf directory), so it reads as fast as a long one.
func (db *DB) View(fn func(*Tx) error) error {
	tx, err := db.pooled(false)
	if err != nil {
		return err
	}
	defer db.recycle(tx)
	if err := fn(tx); err != nil {
		return err
	}
	return tx.err
}

// catalog returns the schema as of snapshot s, reusing the cached catalog
// while the schema cookie is unchanged.
func (db *DB) catalog(s btree.Pages) (*schema.Catalog, error) {
	if s.PageCount() == 0 {
		return schema.Build(nil), nil
	}
	pg1, err := s.Page(1)
	if err != nil {
		return nil, err
	}
	cookie := format.Header(pg1).SchemaCookie()
	db.mu.Lock()
	if db.cat != nil && db.catCookie == cookie {
		cat := db.cat
		db.mu.Unlock()
		return cat, nil
	}
	db.mu.Unlock()
	cat, err := readCatalog(s)
	if err != nil {
		return nil, err
	}
	db.mu.Lock()
	db.cat, db.catCookie = cat, cookie
	db.mu.Unlock()
	return cat, nil
}

// tableMeta returns the cached read metadata of a table of catalog cat.
func (db *DB) tableMeta(cat *schema.Catalog, ti *schema.TableInfo) *tableMeta {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.metasFor(cat)
	m := db.tmeta[ti]
	if m == nil {
		m = metaForTable(ti, cat.TextEncoding)
		db.tmeta[ti] = m
	}
	return m
}

// indexMeta returns the cached read metadata of an index of catalog cat.
func (db *DB) indexMeta(cat *schema.Catalog, ii *schema.IndexInfo) *indexMeta {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.metasFor(cat)
	m := db.imeta[ii]
	if m == nil {
		m = metaForIndex(ii, cat.TextEncoding)
		db.imeta[ii] = m
	}
	return m
}

// metasFor empties the metadata caches when they describe another catalog
// than cat. db.mu is held.
func (db *DB) metasFor(cat *schema.Catalog) {
	if db.metaCat != cat {
		db.metaCat = cat
		db.tmeta = map[*schema.TableInfo]*tableMeta{}
		db.imeta = map[*schema.IndexInfo]*indexMeta{}
	}
}

// Stats counts what a database has done since Open (bbolt's Stats, where
// it applies: pagoda reads pages straight from the mapped file, so there
// is no count of pages read, nor of cache hits).
type Stats struct {
	TxN      uint64 // transactions begun, read and write
	WriteTxN uint64 // write transactions begun
	OpenTxN  int    // transactions open now

	Commits     uint64 // write transactions committed with changes
	WALFrames   uint64 // pages appended to the WAL (pages written by commits)
	Spilled     uint64 // changed pages written before their commit, past the cache budget
	Allocated   uint64 // pages committed transactions took, from the freelist or the file's end
	Freed       uint64 // pages committed transactions put on the freelist
	Syncs       uint64 // fsync calls on the database, its WAL and directory
	Checkpoints uint64 // checkpoints that copied pages into the file
	Copied      uint64 // pages checkpoints copied into the file
	WALRestarts uint64 // times the WAL was created or started over
}

// Stats returns the database's counters.
func (db *DB) Stats() Stats {
	s := db.pager.Stats()
	return Stats{
		TxN: db.txN.Load(), WriteTxN: db.writeTxN.Load(), OpenTxN: int(db.openTxN.Load()),
		Commits: s.Commits, WALFrames: s.Frames, Spilled: s.Spilled, Allocated: s.Allocated, Freed: s.Freed,
		Syncs: s.Syncs, Checkpoints: s.Checkpoints, Copied: s.Copied, WALRestarts: s.Restarts,
	}
}
