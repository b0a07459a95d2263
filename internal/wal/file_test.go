package wal

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// TestOpen: no WAL, or an empty one read-only, opens as none; an empty one
// writable as an empty log; a WAL with frames as what Recover finds, mapped.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := Path(filepath.Join(dir, "db"))
	if path != filepath.Join(dir, "db-wal") {
		t.Fatalf("Path = %s", path)
	}
	mu := new(sync.Mutex)
	opts := Options{PageSize: testPageSize, Lock: mu}
	ro := Options{ReadOnly: true, PageSize: testPageSize, Lock: mu}
	if w, err := Open(vfs.OS, path, opts); w != nil || err != nil {
		t.Fatalf("no file: %v, %v", w, err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if w, err := Open(vfs.OS, path, ro); w != nil || err != nil {
		t.Fatalf("empty, read-only: %v, %v", w, err)
	}
	w, err := Open(vfs.OS, path, opts)
	if err != nil || w == nil || w.Log().Valid || w.Data() != nil {
		t.Fatalf("empty, writable: %v, %v", w, err)
	}
	w.Close()

	data := buildWAL(testPageSize, MagicLE, []frame{{1, 0, 1}, {2, 2, 2}, {1, 0, 3}})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err = Open(vfs.OS, path, ro)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if l := w.Log(); l.MaxFrame != 2 || l.DBSize != 2 || len(w.Data()) != len(data) || w.Frame(2)[0] != 2 {
		t.Fatalf("recovered %+v from %d bytes mapped", l, len(w.Data()))
	}
	if ReadPageSize(vfs.OS, path) != testPageSize || ReadPageSize(vfs.OS, path+"x") != 0 {
		t.Error("ReadPageSize")
	}
}

// TestOpenErrors: a WAL that Recover refuses is an error, and no file stays
// open.
func TestOpenErrors(t *testing.T) {
	path := Path(filepath.Join(t.TempDir(), "db"))
	data := buildWAL(testPageSize, MagicLE, []frame{{1, 1, 1}})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Open(vfs.OS, path, Options{PageSize: 2 * testPageSize, Lock: new(sync.Mutex)})
	if w != nil || !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("a WAL of another page size: %v, %v", w, err)
	}
}
