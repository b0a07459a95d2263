//go:build unix

package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenFile: OS.OpenFile opens, creates with the permissions asked
// (less the umask) and fails as os.OpenFile does.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	_, err := OS.OpenFile(missing, os.O_RDONLY, 0)
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Op != "open" || pe.Path != missing {
		t.Fatalf("open of a missing file: %v", err)
	}
	name := filepath.Join(dir, "f")
	f, err := OS.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("hello"), 3); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	if n, err := f.ReadAt(b, 0); n != 8 || err != nil || string(b[3:]) != "hello" {
		t.Fatalf("read back %q (%d, %v)", b, n, err)
	}
	if f.Name() != name {
		t.Errorf("Name %q, want %q", f.Name(), name)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&^0o600 != 0 {
		t.Errorf("created with %v, want at most 0600", st.Mode().Perm())
	}
	if _, err := OS.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("O_EXCL over an existing file: %v", err)
	}
	if _, err := OS.OpenFile(dir, os.O_RDWR, 0); err == nil {
		t.Error("a directory opened for writing")
	}
}
