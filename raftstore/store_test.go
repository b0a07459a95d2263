package raftstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// openStore opens the store at path (a new file when path is ""). When the
// test ends its cleanup closes the store and checks the file with
// DB.Check and SQLite's integrity_check; the test may close it earlier.
func openStore(t testing.TB, path string, opts *Options) *Store {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "raft.db")
	}
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close %s: %v", path, err)
			return
		}
		dbtest.Check(t, path)
	})
	return s
}

// reopen closes s and opens its file again.
func reopen(t testing.TB, s *Store, opts *Options) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return openStore(t, s.Path(), opts)
}

func TestOpenCreatesTables(t *testing.T) {
	s := openStore(t, "", nil)
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got := sqltest.Rows(t, sqltest.Open(t, path), "SELECT type, name, sql FROM sqlite_schema ORDER BY name")
	want := []string{
		"table|raft_log|" + logSchema,
		`table|raft_stable|CREATE TABLE "raft_stable"(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("schema:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Opening it again writes nothing.
	s = openStore(t, path, nil)
	if c := s.DB().Stats().Commits; c != 0 {
		t.Errorf("reopening the store made %d commits", c)
	}
}

// TestOpenRefuses: files that are not a store are clear errors, and the
// file is left as it was.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()

	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a database ", 500)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(junk, nil); err == nil || !strings.Contains(err.Error(), "file is not a database") {
		t.Errorf("Open of a file that is not a database: %v", err)
	}

	other := filepath.Join(dir, "other.db")
	sqltest.Exec(t, other, "CREATE TABLE raft_log(idx INTEGER PRIMARY KEY, payload TEXT)", "INSERT INTO raft_log VALUES (1, 'x')")
	_, err := Open(other, nil)
	if !errors.Is(err, pagoda.ErrUnsupported) || !strings.Contains(err.Error(), "not raftstore's") {
		t.Errorf("Open of a file with another raft_log: %v, want an error wrapping ErrUnsupported", err)
	}
	if got := sqltest.One(t, other, "SELECT count(*) FROM sqlite_schema"); got != "1" {
		t.Errorf("the refused file has %s schema rows, want 1 (nothing added)", got)
	}
	dbtest.Check(t, other)
}

func TestReadOnly(t *testing.T) {
	s := openStore(t, "", nil)
	storeRange(t, s, 1, 10)
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, &Options{DB: &pagoda.Options{ReadOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if last, _ := ro.LastIndex(); last != 10 {
		t.Errorf("read-only LastIndex = %d, want 10", last)
	}
	if err := ro.StoreLogs(makeLogs(11, 11)); !errors.Is(err, pagoda.ErrReadOnly) {
		t.Errorf("StoreLogs on a read-only store: %v, want ErrReadOnly", err)
	}
	if err := ro.Set([]byte("k"), []byte("v")); !errors.Is(err, pagoda.ErrReadOnly) {
		t.Errorf("Set on a read-only store: %v, want ErrReadOnly", err)
	}
	if _, err := ro.Compact(); !errors.Is(err, pagoda.ErrReadOnly) {
		t.Errorf("Compact on a read-only store: %v, want ErrReadOnly", err)
	}
}

func TestClosed(t *testing.T) {
	s := openStore(t, "", nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for name, err := range map[string]error{
		"StoreLogs":   s.StoreLogs(makeLogs(1, 1)),
		"GetLog":      s.GetLog(1, new(raftLog)),
		"DeleteRange": s.DeleteRange(1, 2),
		"Set":         s.Set([]byte("k"), nil),
		"FirstIndex":  second(s.FirstIndex()),
		"Get":         second(s.Get([]byte("k"))),
	} {
		if !errors.Is(err, pagoda.ErrTxClosed) {
			t.Errorf("%s after Close: %v, want an error wrapping ErrTxClosed", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }
