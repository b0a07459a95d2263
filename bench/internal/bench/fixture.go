package bench

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// fixtureVersion is part of a cached fixture's directory name; bump it when
// the way fixtures are built changes, so stale caches are not reused.
// Version 2: the bbolt file with bbolt's default fill percent, and the
// bucket file.
const fixtureVersion = 2

// Names inside a fixture directory.
const (
	sqliteName = "t.sqlite"
	bucketFile = "b.sqlite"
	boltName   = "t.bolt"
	doneName   = "ok" // written last: a directory without it is incomplete
	tableName  = "t"
	bucketName = "t"
)

// boltBatch is the number of rows per bbolt write transaction when loading.
const boltBatch = 50_000

// FixtureOptions are the parameters of a fixture; a cached fixture is reused
// only when all of them match.
type FixtureOptions struct {
	Rows      int    // rows, with rowids 1..Rows
	ValueSize int    // bytes per value (default 100)
	Seed      uint64 // seed of the values (default 1)
}

func (o FixtureOptions) withDefaults() FixtureOptions {
	if o.ValueSize == 0 {
		o.ValueSize = 100
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Fixture is a pair of files holding the same rows: a SQLite database
// written by SQLite (table t, WAL mode, checkpointed) and a bbolt database
// (bucket t, 8-byte big-endian rowid keys).
type Fixture struct {
	FixtureOptions
	Dir        string        // the fixture's own directory
	SQLitePath string        // the SQLite file, read by pagoda and the SQLite peers
	BucketPath string        // the bucket file: a SQLite file, read by pagoda's bucket API
	BoltPath   string        // the bbolt file
	Built      bool          // built by this call, not found in the cache
	BuildTime  time.Duration // time to build (zero when cached)
	Builder    string        // the SQLite driver that wrote the file
}

// LoadFixture returns the fixture with the given options under dir, building
// it first unless a complete one is cached there. Concurrent callers (say,
// two test binaries) may both build; the first to finish wins and the other
// uses its files.
func LoadFixture(dir string, opt FixtureOptions) (*Fixture, error) {
	opt = opt.withDefaults()
	if opt.Rows < 1 {
		return nil, fmt.Errorf("bench: fixture needs at least one row, got %d", opt.Rows)
	}
	if opt.ValueSize < 1 {
		return nil, fmt.Errorf("bench: value size must be positive, got %d", opt.ValueSize)
	}
	final := filepath.Join(dir, fmt.Sprintf("rows%d-value%d-seed%d-v%d", opt.Rows, opt.ValueSize, opt.Seed, fixtureVersion))
	f := &Fixture{
		FixtureOptions: opt,
		Dir:            final,
		SQLitePath:     filepath.Join(final, sqliteName),
		BucketPath:     filepath.Join(final, bucketFile),
		BoltPath:       filepath.Join(final, boltName),
	}
	if _, err := os.Stat(filepath.Join(final, doneName)); err == nil {
		return f, nil
	}
	tmp, err := startBuild(dir, final)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // a no-op after a successful rename
	start := time.Now()
	builder, err := buildSQLite(filepath.Join(tmp, sqliteName), opt, false)
	if err != nil {
		return nil, err
	}
	if _, err := buildSQLite(filepath.Join(tmp, bucketFile), opt, true); err != nil {
		return nil, err
	}
	if err := buildBolt(filepath.Join(tmp, boltName), opt); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, doneName), []byte("ok\n"), 0o644); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp made it 0700
		return nil, fmt.Errorf("bench: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(filepath.Join(final, doneName)); statErr == nil {
			return f, nil // another process finished first
		}
		return nil, fmt.Errorf("bench: %w", err)
	}
	f.Built, f.BuildTime, f.Builder = true, time.Since(start), builder
	return f, nil
}

// buildingPrefix starts the names of directories where fixtures are built.
const buildingPrefix = "building-"

// removeStale removes the directories whose names start with prefix
// (fixture builds, a run's stores) left under dir by runs that were
// killed: those not modified for an hour (a build takes seconds, a run
// minutes).
// startBuild prepares to build the cached directory final under dir: it
// removes an incomplete final left by an interrupted build and stale build
// directories, and returns a new temporary directory to build in and rename
// into place.
func startBuild(dir, final string) (tmp string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	if _, err := os.Stat(final); err == nil {
		if err := os.RemoveAll(final); err != nil {
			return "", fmt.Errorf("bench: removing the incomplete %s: %w", final, err)
		}
	}
	removeStale(dir, buildingPrefix)
	if tmp, err = os.MkdirTemp(dir, buildingPrefix); err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	return tmp, nil
}

// execAll runs statements on db in order.
func execAll(db *sql.DB, stmts ...string) error {
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

func removeStale(dir, prefix string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// Value appends the value of row rowid to dst and returns it. Values are
// reproducible: they depend only on the seed and the rowid.
func (o FixtureOptions) Value(dst []byte, rowid int64) []byte {
	o = o.withDefaults()
	src := rand.NewPCG(o.Seed, uint64(rowid))
	var w [8]byte
	for n := o.ValueSize; n > 0; n -= 8 {
		binary.LittleEndian.PutUint64(w[:], src.Uint64())
		dst = append(dst, w[:min(n, 8)]...)
	}
	return dst
}

// Sizes returns the sizes in bytes of the SQLite, bucket and bbolt files.
func (f *Fixture) Sizes() (sqlite, bucket, bolt int64, err error) {
	var sizes [3]int64
	for i, path := range []string{f.SQLitePath, f.BucketPath, f.BoltPath} {
		st, err := os.Stat(path)
		if err != nil {
			return 0, 0, 0, err
		}
		sizes[i] = st.Size()
	}
	return sizes[0], sizes[1], sizes[2], nil
}

// buildSQLite writes the rows with SQLite in one transaction, then switches
// the file to WAL mode and checkpoints it, so that every reader reads the
// same bytes from the main file. It prefers mattn/go-sqlite3 (SQLite's own C
// code) and falls back to modernc.org/sqlite when cgo is unavailable. With
// bucket set the table is a pagoda bucket, bucketSQL, its keys the rowids
// as 8 big-endian bytes (bbolt's keys). Rows are generated one at a time:
// any number of rows builds in constant memory.
func buildSQLite(path string, opt FixtureOptions, bucket bool) (string, error) {
	var errs []error
	for _, driver := range []string{mattnDriver, moderncDriver} {
		err := buildSQLiteWith(driver, path, opt, bucket)
		if err == nil {
			return driver, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", driver, err))
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
		}
	}
	return "", fmt.Errorf("bench: building the SQLite fixture: %w", errors.Join(errs...))
}

// bucketSQL is the bucket file's table: what pagoda's Tx.CreateBucket
// creates.
const bucketSQL = `CREATE TABLE "t"(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`

func buildSQLiteWith(driver, path string, opt FixtureOptions, bucket bool) (err error) {
	create, insert := "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)", "INSERT INTO t(id, v) VALUES (?, ?)"
	if bucket {
		create, insert = bucketSQL, "INSERT INTO t(key, value) VALUES (?, ?)"
	}
	db, err := sql.Open(driver, path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	db.SetMaxOpenConns(1) // pragmas apply to the one connection
	err = execAll(db,
		"PRAGMA page_size=4096",
		"PRAGMA journal_mode=OFF", // bulk load: no rollback journal, no WAL copy
		"PRAGMA synchronous=OFF",
		create,
	)
	if err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.Prepare(insert)
	if err != nil {
		return err
	}
	v := make([]byte, 0, opt.ValueSize)
	var key [8]byte
	for id := int64(1); id <= int64(opt.Rows); id++ {
		v = opt.Value(v[:0], id)
		var k any = id
		if bucket {
			binary.BigEndian.PutUint64(key[:], uint64(id))
			k = key[:]
		}
		if _, err := ins.Exec(k, v); err != nil {
			return fmt.Errorf("insert row %d: %w", id, err)
		}
	}
	if err := ins.Close(); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if err := execAll(db, "PRAGMA journal_mode=WAL", "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return err
	}
	var check string
	if err := db.QueryRow("PRAGMA quick_check").Scan(&check); err != nil {
		return err
	}
	if check != "ok" {
		return fmt.Errorf("quick_check: %s", check)
	}
	return nil
}

// buildBolt writes the rows into bucket t of a new bbolt file, in batches of
// boltBatch rows per transaction, with bbolt's default fill percent (0.5:
// a node splits when half full), as a bbolt store written by an
// application that keeps the default has them; load-seq's store sets 1.0,
// as bbolt advises for append-only writes.
func buildBolt(path string, opt FixtureOptions) (err error) {
	db, err := bolt.Open(path, 0o644, &bolt.Options{NoSync: true, Timeout: 10 * time.Second})
	if err != nil {
		return fmt.Errorf("bench: building the bbolt fixture: %w", err)
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	for first := 1; first <= opt.Rows; first += boltBatch {
		last := min(first+boltBatch-1, opt.Rows)
		// bbolt keeps references to keys and values until the commit, so
		// each batch gets its own slab.
		slab := make([]byte, 0, (last-first+1)*(8+opt.ValueSize))
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte(bucketName))
			if err != nil {
				return err
			}
			for id := first; id <= last; id++ {
				off := len(slab)
				slab = binary.BigEndian.AppendUint64(slab, uint64(id))
				slab = opt.Value(slab, int64(id))
				if err := b.Put(slab[off:off+8], slab[off+8:]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("bench: building the bbolt fixture: %w", err)
		}
	}
	if err := db.Sync(); err != nil {
		return fmt.Errorf("bench: building the bbolt fixture: %w", err)
	}
	return nil
}
