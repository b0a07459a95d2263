// Package dbtest opens pagoda databases for tests and checks every file a
// test writes when the test ends: pagoda's DB.Check, then SQLite's own
// PRAGMA integrity_check (modernc.org/sqlite, in process, through
// internal/sqltest). It is imported by tests only.
package dbtest

import (
	"encoding/hex"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// Path returns the path of a new database file in the test's temporary
// directory.
func Path(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "test.db")
}

// Open opens the database at path with opts, creating it when it does not
// exist (a new file in the test's temporary directory when path is "").
// When the test ends its cleanup closes the database and, unless it was
// opened read-only, checks the file (Check); the test may close it
// earlier.
func Open(t testing.TB, path string, opts *pagoda.Options) *pagoda.DB {
	t.Helper()
	if path == "" {
		path = Path(t)
	}
	db, err := pagoda.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("dbtest: close %s: %v", path, err)
			return
		}
		if opts == nil || !opts.ReadOnly {
			Check(t, path)
		}
	})
	return db
}

// Check fails t unless the database at path passes pagoda's DB.Check and
// SQLite's integrity_check. It opens the file read-only; nothing else may
// hold it open for writing.
func Check(t testing.TB, path string) {
	t.Helper()
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Errorf("dbtest: open %s to check it: %v", path, err)
		return
	}
	if err := db.Check(); err != nil {
		t.Errorf("dbtest: %s: %v", path, err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("dbtest: close %s: %v", path, err)
	}
	sqltest.IntegrityCheck(t, path)
}

// ReadTable opens the database at path read-only and returns it, a read
// transaction and its table name; they stay open until the test ends.
func ReadTable(t testing.TB, path, name string) (*pagoda.DB, *pagoda.Tx, *pagoda.Table) {
	t.Helper()
	db := Open(t, path, &pagoda.Options{ReadOnly: true})
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

// Quote renders v as SQLite's quote() does: NULL, an integer, a REAL as
// SQLite prints it, 'text' up to its first NUL byte with quotes doubled,
// X'HEX' for a blob.
func Quote(v pagoda.Value) string {
	switch v.Type() {
	case pagoda.TypeNull:
		return "NULL"
	case pagoda.TypeInteger:
		return strconv.FormatInt(v.Int(), 10)
	case pagoda.TypeFloat:
		return pagoda.FormatFloat(v.Float())
	case pagoda.TypeText:
		return "'" + strings.ReplaceAll(strings.Split(v.Text(), "\x00")[0], "'", "''") + "'"
	}
	return "X'" + strings.ToUpper(hex.EncodeToString(v.Blob())) + "'"
}
