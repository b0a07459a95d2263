package raftstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
	"github.com/pagodadb/pagoda"
)

const (
	logTable    = "raft_log"
	stableTable = "raft_stable"
	logSchema   = "CREATE TABLE raft_log(idx INTEGER PRIMARY KEY, term INTEGER NOT NULL, type INTEGER NOT NULL, data BLOB, extensions BLOB, appended_at INTEGER)"

	// compactSuffix names the dense copy written beside the file (rule 3).
	compactSuffix = ".compacting"
	// defaultCompactMinSize is Options.CompactMinSize's default.
	defaultCompactMinSize = 4 << 20
)

// logColumns are raft_log's columns, which Open requires of an existing
// table.
var logColumns = []string{"idx", "term", "type", "data", "extensions", "appended_at"}

// Options configure Open. A nil *Options means the defaults.
type Options struct {
	// DB is passed to pagoda.Open. Keep its Sync at SyncFull (the zero
	// value): raft relies on StoreLogs and Set being durable when they
	// return.
	DB *pagoda.Options
	// CompactMinSize is the file size, in bytes, below which the store
	// never compacts (see the package doc, rule 3); 0 means 4 MiB, a
	// negative value never compacts.
	CompactMinSize int64
}

// Store is raft's log store and stable store in a pagoda database. It is
// safe for use by many goroutines.
type Store struct {
	path   string
	dbOpts *pagoda.Options
	minCmp int64

	// mu is held for reading by every call, and for writing by
	// compaction (which replaces db) and Close.
	mu     sync.RWMutex
	db     *pagoda.DB
	closed bool
	broken error // a compaction that could not open the file again

	// wmu orders the write transactions with the updates of first and
	// last, which change only under it (and mu); they are read without it.
	wmu         sync.Mutex
	first, last atomic.Uint64 // 0, 0 when the log is empty
	compactions int
}

var (
	_ raft.LogStore          = (*Store)(nil)
	_ raft.StableStore       = (*Store)(nil)
	_ raft.MonotonicLogStore = (*Store)(nil)
)

// Open opens the store at path, creating the file and its tables when they
// do not exist. A file whose raft_log table has other columns is an error
// wrapping pagoda.ErrUnsupported; a file that is not a database, one
// wrapping pagoda.ErrCorrupt (see pagoda.Open).
func Open(path string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Store{path: path, dbOpts: opts.DB, minCmp: opts.CompactMinSize}
	if s.minCmp == 0 {
		s.minCmp = defaultCompactMinSize
	}
	if err := removeCopies(path); err != nil {
		return nil, err
	}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// removeCopies removes what a compaction interrupted by a crash left
// beside path: its copy, and DB.Compact's temporary directory.
func removeCopies(path string) error {
	tmp := path + compactSuffix
	dirs, err := filepath.Glob(filepath.Join(filepath.Dir(tmp), "."+filepath.Base(tmp)+".compact-*"))
	if err != nil {
		return err
	}
	for _, p := range append(dirs, tmp) {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("raftstore: remove an interrupted compaction's copy: %w", err)
		}
	}
	return nil
}

// open opens s.db, creates the tables if need be, and loads first and
// last.
func (s *Store) open() error {
	db, err := pagoda.Open(s.path, s.dbOpts)
	if err != nil {
		return fmt.Errorf("raftstore: %w", err)
	}
	if err := s.prepare(db); err != nil {
		db.Close()
		return fmt.Errorf("raftstore: %s: %w", s.path, err)
	}
	s.db = db
	return nil
}

func (s *Store) prepare(db *pagoda.DB) error {
	var missing bool
	err := db.View(func(tx *pagoda.Tx) error {
		tb, err := tx.Table(logTable)
		if errors.Is(err, pagoda.ErrNotFound) {
			missing = true
			return nil
		}
		if err != nil {
			return err
		}
		if err := checkLogTable(tb); err != nil {
			return err
		}
		if _, err := tx.Bucket(stableTable); errors.Is(err, pagoda.ErrNotFound) {
			missing = true
		} else if err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if missing && !db.ReadOnly() {
		err = db.Update(func(tx *pagoda.Tx) error {
			if _, err := tx.Table(logTable); errors.Is(err, pagoda.ErrNotFound) {
				if _, err := tx.CreateTable(logSchema); err != nil {
					return err
				}
			}
			_, err := tx.CreateBucketIfNotExists(stableTable)
			return err
		})
		if err != nil {
			return err
		}
	}
	return db.View(func(tx *pagoda.Tx) error {
		tb, err := tx.Table(logTable)
		if errors.Is(err, pagoda.ErrNotFound) {
			return nil // a read-only store of a file without a log
		}
		if err != nil {
			return err
		}
		first, last, err := bounds(tb)
		s.first.Store(first)
		s.last.Store(last)
		return err
	})
}

// checkLogTable refuses a raft_log table that raftstore did not make.
func checkLogTable(tb *pagoda.Table) error {
	cols := tb.Columns()
	ok := !tb.WithoutRowID() && len(cols) == len(logColumns)
	for i := 0; ok && i < len(cols); i++ {
		ok = cols[i].Name == logColumns[i]
	}
	if !ok {
		return fmt.Errorf("table %s is not raftstore's (%s): %w", logTable, tb.SQL(), pagoda.ErrUnsupported)
	}
	return nil
}

// bounds returns the first and last index of the log table (0, 0 when it
// is empty).
func bounds(tb *pagoda.Table) (first, last uint64, err error) {
	c := tb.Cursor()
	if !c.First() {
		return 0, 0, c.Err()
	}
	first = uint64(c.Rowid())
	if !c.Last() {
		return 0, 0, c.Err()
	}
	return first, uint64(c.Rowid()), nil
}

// acquire takes mu for reading and returns the database, or the reason
// there is none.
func (s *Store) acquire() (*pagoda.DB, error) {
	s.mu.RLock()
	switch {
	case s.closed:
		s.mu.RUnlock()
		return nil, fmt.Errorf("raftstore: %s: store is closed: %w", s.path, pagoda.ErrTxClosed)
	case s.broken != nil:
		s.mu.RUnlock()
		return nil, s.broken
	}
	return s.db, nil
}

// Close closes the store's database. Calls after Close fail with an error
// wrapping pagoda.ErrTxClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// Path returns the store's file.
func (s *Store) Path() string { return s.path }

// DB returns the store's database, for reads (and for Check). A
// compaction replaces it: use it only between calls of the store's
// methods that may compact (DeleteRange), and never write it.
func (s *Store) DB() *pagoda.DB {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db
}

// Compactions returns how many times the store has compacted its file since
// Open.
func (s *Store) Compactions() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.compactions
}
