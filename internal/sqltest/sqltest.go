// Package sqltest gives pagoda's tests SQLite itself (modernc.org/sqlite,
// pure Go), as the oracle of the file format: the "sqlite" database/sql
// driver (driver.go), which runs SQLite in a process of its own, and
// helpers that build files with it and ask it about them. It is imported
// by tests only; the engine never depends on it.
package sqltest

import (
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	Run(t, db, stmts...)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// Run runs statements on the open database db, failing t at the first
// error: for a test that keeps the connection open beside pagoda.
func Run(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("sqlite: %s: %v", s, err)
		}
	}
}

// Rows runs query q on db and renders each row as its columns joined by
// "|": NULL as NULL, TEXT and BLOB as their bytes, numbers as fmt prints
// them.
func Rows(t testing.TB, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("sqlite: %s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	parts := make([]string, len(cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				parts[i] = "NULL"
			case []byte:
				parts[i] = string(v)
			default:
				parts[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("sqlite: %s: %v", q, err)
	}
	return out
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
	run := func(stmts []string) func(*sql.DB) {
		return func(db *sql.DB) {
			t.Helper()
			for _, s := range stmts {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("sqlite: %s: %v", s, err)
				}
			}
		}
	}
	return WithWALFunc(t, 0, run(setup), run(pending))
}

// WithWALFunc is WithWAL with the setup and pending work given as
// functions, which may bind parameters, and with the page size the database
// is created with (0 for SQLite's default). setup's work is checkpointed
// into the main file; pending's stays in the -wal of the returned copy.
func WithWALFunc(t testing.TB, pageSize int, setup, pending func(db *sql.DB)) string {
	t.Helper()
	dir, src, db := openNew(t, pageSize) // before journal_mode=WAL, which creates page 1
	Run(t, db, "PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0")
	if setup != nil {
		setup(db)
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	if pending != nil {
		pending(db)
	}
	dst := filepath.Join(dir, "crashed.db")
	CopyFile(t, src, dst, false)
	CopyFile(t, src+"-wal", dst+"-wal", false)
	return dst
}

// WithHotJournal builds a database in rollback-journal mode (page size
// pageSize, 0 for SQLite's default) with setup committed, then runs pending
// inside a transaction with a cache of a few pages, so that SQLite writes
// changed pages into the database file before the commit, their originals
// in its -journal. The pair (db, db-journal) is copied while the
// transaction is open, as a crash would leave it, and the transaction is
// rolled back. It returns the copy, a hot journal beside it, and a copy of
// the database as setup left it, which the journal's rollback restores.
func WithHotJournal(t testing.TB, pageSize int, setup, pending []string) (crashed, committed string) {
	t.Helper()
	dir, src, db := openNew(t, pageSize)
	Run(t, db, append([]string{"PRAGMA journal_mode=DELETE"}, setup...)...)
	committed = filepath.Join(dir, "committed.db")
	CopyFile(t, src, committed, false)
	Run(t, db, append([]string{"PRAGMA cache_size=5", "BEGIN"}, pending...)...)
	crashed = filepath.Join(dir, "crashed.db")
	CopyFile(t, src, crashed, false)
	CopyFile(t, src+"-journal", crashed+"-journal", false)
	Run(t, db, "ROLLBACK")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return crashed, committed
}

// openNew opens a new database, live.db in a new directory dir, with its
// page size set to pageSize (0 for SQLite's default).
func openNew(t testing.TB, pageSize int) (dir, src string, db *sql.DB) {
	t.Helper()
	dir = t.TempDir()
	src = filepath.Join(dir, "live.db")
	db = Open(t, src)
	if pageSize != 0 {
		Run(t, db, fmt.Sprintf("PRAGMA page_size=%d", pageSize))
	}
	return dir, src, db
}

// One runs query q on the database at path with SQLite and returns its
// one value as text.
func One(t testing.TB, path, q string, args ...any) string {
	t.Helper()
	db := Open(t, path)
	defer db.Close()
	var s string
	if err := db.QueryRow(q, args...).Scan(&s); err != nil {
		t.Fatalf("sqlite: %s: %v", q, err)
	}
	return s
}

// IntegrityCheck fails t (with Errorf) unless SQLite's PRAGMA
// integrity_check finds the database at path sound.
func IntegrityCheck(t testing.TB, path string) {
	t.Helper()
	db := Open(t, path)
	defer db.Close()
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		t.Errorf("SQLite's integrity_check of %s: %v", path, err)
		return
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Errorf("SQLite's integrity_check of %s: %v", path, err)
			return
		}
		got = append(got, line)
	}
	if err := rows.Err(); err != nil {
		got = append(got, err.Error())
	}
	if len(got) != 1 || got[0] != "ok" {
		t.Errorf("SQLite's integrity_check of %s: %q", path, got)
	}
}
