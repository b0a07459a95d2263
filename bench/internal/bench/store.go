package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Store is one engine writing: a store of its own in a directory, holding
// one table of rows (key, value) with positive int64 keys. pagoda and the
// SQLite peers keep them as CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB),
// the key as the rowid; bbolt (bucket t) and pebble under the key as 8
// big-endian bytes. A store is used by one goroutine: Open, then write
// transactions (Begin, Insert and Delete, Commit) and read transactions
// (BeginRead, Get and Scan, EndRead), then Close.
//
// Every commit is durable: it is on stable storage when Commit returns, as
// each engine promises with its default or documented setting (SQLite WAL
// with synchronous=FULL, bbolt's default, pebble.Sync, pagoda's SyncFull).
type Store interface {
	// Name is the peer's short name: pagoda, pagoda-exclusive, mattn,
	// modernc, ncruces, zombiezen, bbolt or pebble.
	Name() string
	// Open opens the store in dir, creating it (and its empty table) when
	// dir holds none.
	Open(dir string, opt StoreOptions) error
	// Begin starts a write transaction.
	Begin() error
	// Insert adds the row with key, which is not in the store. The value is
	// valid only during the call.
	Insert(key int64, v []byte) error
	// Delete deletes the row with key, which is in the store.
	Delete(key int64) error
	// Commit commits the write transaction durably.
	Commit() error
	// BeginRead starts a read transaction.
	BeginRead() error
	// Get returns the value of the row with key (an error when there is
	// none). The slice is valid until the next call on the store and must
	// not be modified.
	Get(key int64) ([]byte, error)
	// Scan hands every row to fn in key order (the value is valid only
	// during the call) and returns the number of rows.
	Scan(fn func(key int64, v []byte)) (int, error)
	// EndRead ends the read transaction.
	EndRead() error
	// Close closes the store; whatever the engine does at close (SQLite and
	// pagoda checkpoint their WAL) is done when it returns.
	Close() error
}

// The table of the SQLite peers' and pagoda's stores, and the name of a
// store's file in its directory (pebble's store is the directory).
const (
	storeTableSQL = "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)"
	storeFile     = "t.db"
)

// StoreOptions say how a store will be written.
type StoreOptions struct {
	// Sequential says that keys arrive in increasing order. Only bbolt
	// uses it: its documentation advises raising Bucket.FillPercent (to
	// 1.0 here) for append-only writes, so that pages are filled instead
	// of split in halves; pagoda and SQLite detect appends by themselves
	// and pebble's sorted runs do not depend on the order.
	Sequential bool
	// CacheSize is the page cache, in bytes, of the stores that have one
	// (pagoda's Options.CacheSize, SQLite's cache_size); 0 keeps their
	// setting.
	CacheSize int
	// Defaults opens pagoda with a nil *pagoda.Options, its defaults
	// (SyncFull, CacheSize 64 MiB). The SQLite stores' defaults are
	// PeerOptions.SQLiteDefaults, given to NewStore.
	Defaults bool
}

// errNoWrites is the error of NewStore for peers that only read.
var errNoWrites = errors.New("has no write workloads")

// NewStore returns a new, unopened store of the peer called name.
func NewStore(name string, opt PeerOptions) (Store, error) {
	pragmas := SQLitePragmas
	if opt.SQLiteDefaults {
		pragmas = nil
	}
	switch name {
	case "pagoda", pagodaExclusive:
		return &pagodaStore{name: name, exclusive: name == pagodaExclusive}, nil
	case "mattn":
		if !cgoEnabled {
			return nil, errNoCgo
		}
		return &sqlStore{name: name, driver: mattnDriver, pragmas: pragmas}, nil
	case "modernc":
		return &sqlStore{name: name, driver: moderncDriver, pragmas: pragmas}, nil
	case ncruces, zombiezen:
		return &directStore{directDB: directDB{name: name}, pragmas: pragmas}, nil
	case "bbolt":
		return &boltStore{}, nil
	case "pebble":
		return &pebbleStore{}, nil
	case "mattn-autocommit":
		return nil, fmt.Errorf("bench: peer %s %w", name, errNoWrites)
	}
	return nil, unknownPeer(name)
}

func unknownPeer(name string) error {
	return fmt.Errorf("bench: unknown peer %q (want one of %s, %s or mattn-autocommit)", name, strings.Join(PeerNames, ", "), pagodaExclusive)
}

// errNoCgo is the error for peer mattn in a binary built without cgo.
var errNoCgo = errors.New("bench: peer mattn needs cgo, and this binary was built with CGO_ENABLED=0")

// dirSize returns the total size of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// arenaChunk is the size of the blocks an arena hands out copies from.
const arenaChunk = 1 << 20

// arena keeps copies of keys and values for as long as the transaction
// that references them lives, as bbolt requires of its callers. Filled
// blocks are dropped, not freed: the references keep them alive.
type arena struct{ buf []byte }

// copy returns a copy of b that stays valid until reset.
func (a *arena) copy(b []byte) []byte {
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, max(arenaChunk, len(b)))
	}
	n := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// reset reuses the current block: call it once nothing references the
// copies (after the transaction ended).
func (a *arena) reset() { a.buf = a.buf[:0] }

// removeAll removes dir, which a store used.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}
