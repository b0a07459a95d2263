package pagoda

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

func apiDB(t *testing.T, opts *Options) *DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "api.db")
	sqltest.Exec(t, path,
		"CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
		`CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`,
		"CREATE INDEX tn ON t(name)")
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// readTable opens path with opts, begins a read transaction and takes
// table name in it; the transaction and the database end with the test.
func readTable(t *testing.T, path string, opts *Options, name string) (*DB, *Tx, *Table) {
	t.Helper()
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	tb, err := tx.Table(name)
	if err != nil {
		t.Fatal(err)
	}
	return db, tx, tb
}

// The contract's errors, tested with errors.Is.
func TestErrorsOfTheContract(t *testing.T) {
	db := apiDB(t, nil)
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Bucket("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing bucket: %v", err)
	}
	if _, err := tx.Bucket("t"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("table of another shape as a bucket: %v", err)
	}
	if _, err := tx.Table("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing table: %v", err)
	}
	if _, err := tx.Index("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing index: %v", err)
	}
	tbl, err := tx.Table("T") // names are case-insensitive
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Get(3); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing row: %v", err)
	}
	if _, err := tbl.GetKey(1); !errors.Is(err, ErrUnsupported) {
		t.Errorf("GetKey on a rowid table: %v", err)
	}
	b, err := tx.Bucket("b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get([]byte("k")); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing key: %v", err)
	}
	if err := tx.Commit(); !errors.Is(err, ErrTxNotWritable) {
		t.Errorf("Commit of a read tx: %v", err)
	}
	c := tbl.Cursor()
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); !errors.Is(err, ErrTxClosed) {
		t.Errorf("second Rollback: %v", err)
	}
	if _, err := tbl.Get(1); !errors.Is(err, ErrTxClosed) {
		t.Errorf("Get after Rollback: %v", err)
	}
	if c.First() || !errors.Is(c.Err(), ErrTxClosed) {
		t.Errorf("cursor after Rollback: %v", c.Err())
	}
	if _, err := tx.Table("t"); !errors.Is(err, ErrTxClosed) {
		t.Errorf("Table after Rollback: %v", err)
	}
	wtx, err := db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	if err := wtx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := wtx.Commit(); !errors.Is(err, ErrTxClosed) {
		t.Errorf("Commit after Rollback: %v", err)
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	db := apiDB(t, &Options{ReadOnly: true})
	if _, err := db.Begin(true); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Begin(true) on a read-only db: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing.db"), &Options{ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file opened read-only: %v", err)
	}
	junk := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(junk, make([]byte, 8192), 0o644)
	_, err := Open(junk, nil)
	var ce *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Page != 1 {
		t.Errorf("zeroed file: %v", err)
	}
}

// View returns the error that stopped an iterator inside it, and Close
// waits for open transactions.
func TestViewAndClose(t *testing.T) {
	db := apiDB(t, nil)
	err := db.View(func(tx *Tx) error {
		tx.setErr(ErrCorrupt)
		return nil
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("View: %v", err)
	}
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error)
	go func() { closed <- db.Close() }()
	time.Sleep(20 * time.Millisecond) // let Close reach its wait
	select {
	case <-closed:
		t.Fatal("Close returned while a transaction was open")
	default:
	}
	tx.Rollback()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := db.Begin(false); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("Begin after Close: %v", err)
	}
}
