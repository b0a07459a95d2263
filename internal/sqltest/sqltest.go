// Package sqltest builds SQLite files with SQLite itself (modernc.org/sqlite,
// pure Go) for pagoda's tests. It is imported by tests only; the engine
// never depends on it.
package sqltest

import (
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Open opens path with SQLite. The connection pool holds one connection so
// that pragmas apply to every statement.
func Open(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// Exec runs statements on a SQLite database at path and closes it.
func Exec(t testing.TB, path string, stmts ...string) {
	t.Helper()
	db := Open(t, path)
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("sqlite: %s: %v", s, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// CopyFile copies src to dst (dst is replaced); a missing src is not an
// error when optional is set.
func CopyFile(t testing.TB, src, dst string, optional bool) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		if optional && os.IsNotExist(err) {
			os.Remove(dst)
			return
		}
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// WithWAL builds a database in WAL mode whose last transactions stay in its
// -wal file: setup runs first and is checkpointed into the main file, then
// pending runs with checkpoints disabled, and the pair (db, db-wal) is
// copied while SQLite still has it open, as a crash would leave it. It
// returns the path of the copy.
func WithWAL(t testing.TB, setup, pending []string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "live.db")
	db := Open(t, src)
	for _, s := range append([]string{"PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0"}, setup...) {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("sqlite: %s: %v", s, err)
		}
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	for _, s := range pending {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("sqlite: %s: %v", s, err)
		}
	}
	dst := filepath.Join(dir, "crashed.db")
	CopyFile(t, src, dst, false)
	CopyFile(t, src+"-wal", dst+"-wal", false)
	return dst
}
