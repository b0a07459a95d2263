package pagoda

import (
	"fmt"
	"sync"

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

	mu        sync.Mutex
	closed    bool
	cat       *schema.Catalog // catalog of the last schema read
	catCookie uint32
	catPages  uint32

	metaCat *schema.Catalog // the catalog tmeta and imeta describe
	tmeta   map[*schema.TableInfo]*tableMeta
	imeta   map[*schema.IndexInfo]*indexMeta
}

// Open opens the SQLite database at path. A `-wal` file beside it is
// recovered as sqlite3 would: its committed transactions are visible.
//
// This release reads databases; write transactions (and creating a missing
// file) arrive with the write path.
func Open(path string, opts *Options) (*DB, error) {
	if opts == nil {
		opts = &Options{}
	}
	p, err := pager.Open(path, pager.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("pagoda: %w", err)
	}
	return &DB{path: path, readOnly: opts.ReadOnly, pager: p}, nil
}

// Path returns the database file's path.
func (db *DB) Path() string { return db.path }

// PageSize returns the database's page size.
func (db *DB) PageSize() int { return db.pager.PageSize() }

// Close releases the database. It waits for open transactions to end;
// slices obtained from them must not be used afterwards.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	db.mu.Unlock()
	db.txs.Lock()
	defer db.txs.Unlock()
	return db.pager.Close()
}

// Begin starts a transaction. A read transaction sees the database as of
// the last commit before it began, for as long as it lives; end it with
// Rollback. Write transactions are not available in this release.
func (db *DB) Begin(writable bool) (*Tx, error) {
	if writable {
		if db.readOnly {
			return nil, ErrReadOnly
		}
		return nil, fmt.Errorf("%w: write transactions are not implemented yet", ErrUnsupported)
	}
	db.txs.RLock()
	db.mu.Lock()
	closed := db.closed
	db.mu.Unlock()
	if closed {
		db.txs.RUnlock()
		return nil, fmt.Errorf("pagoda: database is closed: %w", ErrTxClosed)
	}
	tx := &Tx{db: db}
	db.pager.InitSnapshot(&tx.snap)
	cat, err := db.catalog(&tx.snap)
	if err != nil {
		db.txs.RUnlock()
		return nil, err
	}
	tx.cat = cat
	return tx, nil
}

// View runs fn in a read transaction and returns its error, or the first
// error that stopped one of the transaction's iterators.
func (db *DB) View(fn func(*Tx) error) error {
	tx, err := db.Begin(false)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.err
}

// catalog returns the schema as of snapshot s, reusing the cached catalog
// while the schema cookie is unchanged.
func (db *DB) catalog(s *pager.Snapshot) (*schema.Catalog, error) {
	if s.PageCount() == 0 {
		return schema.Build(nil), nil
	}
	pg1, err := s.Page(1)
	if err != nil {
		return nil, err
	}
	cookie := format.Header(pg1).SchemaCookie()
	db.mu.Lock()
	if db.cat != nil && db.catCookie == cookie && db.catPages == s.PageCount() {
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
	db.cat, db.catCookie, db.catPages = cat, cookie, s.PageCount()
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
		m = metaForTable(ti)
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
		m = metaForIndex(ii)
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
