package pager

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/pagodadb/pagoda/internal/vfs"
)

// deniedFS refuses to open files for writing with err, as a file without
// write permission or on a read-only filesystem does; reads work.
type deniedFS struct {
	vfs.FS
	err error
}

func (d deniedFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	if flag&(os.O_RDWR|os.O_WRONLY|os.O_CREATE) != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: d.err}
	}
	return d.FS.OpenFile(name, flag, perm)
}

// TestOpenWriteDenied: a file that may be read but not written opens
// read-only, as sqlite3 opens it, and refuses write transactions with
// ErrReadOnly; a missing file still fails, and other errors are not
// mistaken for it.
func TestOpenWriteDenied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.db")
	p := mustOpen(t, path, Options{})
	setUserVersion(t, p, 7)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, denied := range []error{fs.ErrPermission, syscall.EACCES, syscall.EROFS} {
		q, err := Open(path, Options{FS: deniedFS{vfs.OS, denied}})
		if err != nil {
			t.Fatalf("%v: %v", denied, err)
		}
		if !q.ReadOnly() {
			t.Errorf("%v: the pager is not read-only", denied)
		}
		s := q.Snapshot()
		pg1, err := s.Page(1)
		if err != nil || pg1[63] != 7 { // user_version, big-endian at offset 60
			t.Errorf("%v: reading page 1: %v", denied, err)
		}
		s.Release()
		if _, err := q.BeginWrite(); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%v: BeginWrite = %v, want ErrReadOnly", denied, err)
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.db"), Options{FS: deniedFS{vfs.OS, fs.ErrPermission}}); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("a missing file in a directory that refuses writes: %v, want the permission error", err)
	}
	if _, err := Open(path, Options{FS: deniedFS{vfs.OS, syscall.EIO}}); !errors.Is(err, syscall.EIO) {
		t.Errorf("an I/O error: %v, want it returned", err)
	}
}
