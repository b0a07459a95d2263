package fsys_test

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
	"github.com/pagodadb/pagoda/internal/dbtest"
)

// This file feeds the FS bad input and damaged archives: every error must
// be a *fs.PathError naming the operation and the path it was given, wrap
// the right error, and a failed write must change nothing.

// sqlite3Schema is the table sqlite3 -A creates (no listing index).
const sqlite3Schema = "CREATE TABLE sqlar(\n" +
	"  name TEXT PRIMARY KEY,  -- name of the file\n" +
	"  mode INT,               -- access permissions\n" +
	"  mtime INT,              -- last modification time\n" +
	"  sz INT,                 -- original file size\n" +
	"  data BLOB               -- compressed content\n" +
	")"

// checkPathErr checks that err is a *fs.PathError for op on name that
// wraps want.
func checkPathErr(t *testing.T, what string, err error, op, name string, want error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %v", what, want)
		return
	}
	pe, ok := err.(*fs.PathError)
	switch {
	case !ok:
		t.Errorf("%s: error %v is a %T, want a *fs.PathError", what, err, err)
	case pe.Op != op || pe.Path != name:
		t.Errorf("%s: error %v has Op %q Path %q, want %q %q", what, err, pe.Op, pe.Path, op, name)
	}
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v does not wrap %v", what, err, want)
	}
}

// errorsFixture returns an FS holding a file, an empty directory, a
// directory with entries and a link, on a fresh database.
func errorsFixture(t *testing.T) (*pagoda.DB, *fsys.FS) {
	t.Helper()
	db := openDB(t, nil)
	f := fsys.New(db, &fsys.Options{Compress: true})
	for _, err := range []error{
		f.WriteFile("a", []byte("file a"), 0o644),
		f.Mkdir("empty", 0o755),
		f.MkdirAll("d/sub", 0o755),
		f.WriteFile("d/f", bytes.Repeat([]byte("compressible "), 100), 0o600),
		f.Symlink("d", "link"),
		f.Symlink("a", "tofile"),
		f.Symlink("missing", "dangling"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return db, f
}

// fsCall is one method of an FS, called on one name; it returns the error
// and the path the error should carry.
type fsCall struct {
	method string
	op     string
	write  bool
	call   func(f *fsys.FS, name string) (error, string)
}

var fsCalls = []fsCall{
	{"Open", "open", false, func(f *fsys.FS, name string) (error, string) {
		fl, err := f.Open(name)
		if err == nil {
			fl.Close()
		}
		return err, name
	}},
	{"ReadFile", "read", false, func(f *fsys.FS, name string) (error, string) {
		_, err := f.ReadFile(name)
		return err, name
	}},
	{"ReadDir", "readdir", false, func(f *fsys.FS, name string) (error, string) {
		_, err := f.ReadDir(name)
		return err, name
	}},
	{"Stat", "stat", false, func(f *fsys.FS, name string) (error, string) {
		_, err := f.Stat(name)
		return err, name
	}},
	{"Lstat", "lstat", false, func(f *fsys.FS, name string) (error, string) {
		_, err := f.Lstat(name)
		return err, name
	}},
	{"ReadLink", "readlink", false, func(f *fsys.FS, name string) (error, string) {
		_, err := f.ReadLink(name)
		return err, name
	}},
	{"Sub", "sub", false, func(f *fsys.FS, name string) (error, string) {
		_, err := f.Sub(name)
		return err, name
	}},
	{"WriteFile", "write", true, func(f *fsys.FS, name string) (error, string) {
		return f.WriteFile(name, []byte("x"), 0o644), name
	}},
	{"Create", "create", true, func(f *fsys.FS, name string) (error, string) {
		w, err := f.Create(name, 0o644)
		if err == nil {
			w.Close()
		}
		return err, name
	}},
	{"Mkdir", "mkdir", true, func(f *fsys.FS, name string) (error, string) {
		return f.Mkdir(name, 0o755), name
	}},
	{"MkdirAll", "mkdir", true, func(f *fsys.FS, name string) (error, string) {
		return f.MkdirAll(name, 0o755), name
	}},
	{"Remove", "remove", true, func(f *fsys.FS, name string) (error, string) {
		return f.Remove(name), name
	}},
	{"RemoveAll", "removeall", true, func(f *fsys.FS, name string) (error, string) {
		return f.RemoveAll(name), name
	}},
	{"Rename-from", "rename", true, func(f *fsys.FS, name string) (error, string) {
		return f.Rename(name, "new"), name
	}},
	{"Rename-to", "rename", true, func(f *fsys.FS, name string) (error, string) {
		return f.Rename("a", name), "a" // the error names the old name
	}},
	{"Chmod", "chmod", true, func(f *fsys.FS, name string) (error, string) {
		return f.Chmod(name, 0o600), name
	}},
	{"Chtimes", "chtimes", true, func(f *fsys.FS, name string) (error, string) {
		return f.Chtimes(name, time.Time{}, time.Unix(1e9, 0)), name
	}},
	{"Symlink", "symlink", true, func(f *fsys.FS, name string) (error, string) {
		return f.Symlink("a", name), name
	}},
}

// TestErrorsInvalidNames: every method refuses a name that fs.ValidPath
// refuses, with fs.ErrInvalid, and writes nothing.
func TestErrorsInvalidNames(t *testing.T) {
	db, f := errorsFixture(t)
	before := snapshotBytes(t, db)
	for _, c := range fsCalls {
		for _, name := range []string{"", "/a", "a/", "a//b", "./a", "a/./b", "a/../b", "..", "../a", "a/.", "d/", "\xff", "d/\xfe\xff", "\\/a"[1:] + "/"} {
			t.Run(fmt.Sprintf("%s/%q", c.method, name), func(t *testing.T) {
				if fs.ValidPath(name) {
					t.Fatalf("%q is a valid name", name)
				}
				err, p := c.call(f, name)
				checkPathErr(t, fmt.Sprintf("%s(%q)", c.method, name), err, c.op, p, fs.ErrInvalid)
			})
		}
	}
	if !bytes.Equal(snapshotBytes(t, db), before) {
		t.Error("a refused write changed the database")
	}
	// The FS is still what it was.
	// fstest opens every entry, and a dangling link cannot be opened.
	if err := f.Remove("dangling"); err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(f, "a", "empty", "d/sub", "d/f", "link", "tofile"); err != nil {
		t.Fatal(err)
	}
}

// TestErrorsRoot: the root can be read but not replaced, removed, renamed
// or changed.
func TestErrorsRoot(t *testing.T) {
	db, f := errorsFixture(t)
	before := snapshotBytes(t, db)
	for _, c := range []struct {
		method string
		want   error // nil: no error
	}{
		{"Open", nil},
		{"ReadFile", fsys.ErrIsDir},
		{"ReadDir", nil},
		{"Stat", nil},
		{"Lstat", nil},
		{"ReadLink", fs.ErrInvalid},
		{"Sub", nil},
		{"WriteFile", fs.ErrInvalid},
		{"Create", fs.ErrInvalid},
		{"Mkdir", fs.ErrExist},
		{"MkdirAll", nil},
		{"Remove", fs.ErrInvalid},
		{"RemoveAll", fs.ErrInvalid},
		{"Rename-from", fs.ErrInvalid},
		{"Rename-to", fs.ErrInvalid},
		{"Chmod", fs.ErrInvalid},
		{"Chtimes", fs.ErrInvalid},
		{"Symlink", fs.ErrInvalid},
	} {
		t.Run(c.method, func(t *testing.T) {
			i := slices.IndexFunc(fsCalls, func(fc fsCall) bool { return fc.method == c.method })
			err, p := fsCalls[i].call(f, ".")
			if c.want == nil {
				if err != nil {
					t.Errorf("%s(.): %v", c.method, err)
				}
				return
			}
			checkPathErr(t, c.method+"(.)", err, fsCalls[i].op, p, c.want)
		})
	}
	if !bytes.Equal(snapshotBytes(t, db), before) {
		t.Error("a refused write changed the database")
	}
}

// TestErrorsBadInput: operations that meet the wrong kind of entry, or an
// entry that is missing or in the way.
func TestErrorsBadInput(t *testing.T) {
	db, f := errorsFixture(t)
	sub, err := f.Sub("d")
	if err != nil {
		t.Fatal(err)
	}
	subFS := sub.(*fsys.FS)
	openThen := func(name string, fn func(fl *fsys.File) error) error {
		fl, err := f.Open(name)
		if err != nil {
			return err
		}
		defer fl.Close()
		return fn(fl.(*fsys.File))
	}
	for _, c := range []struct {
		name string
		call func() error
		op   string
		path string
		want error
	}{
		// Reading a directory as a file, and a file as a directory.
		{"ReadFile of a directory", func() error { _, err := f.ReadFile("d"); return err }, "read", "d", fsys.ErrIsDir},
		{"ReadFile of a link to a directory", func() error { _, err := f.ReadFile("link"); return err }, "read", "link", fsys.ErrIsDir},
		{"Read of an open directory", func() error {
			return openThen("d", func(fl *fsys.File) error { _, err := fl.Read(make([]byte, 8)); return err })
		}, "read", "d", fsys.ErrIsDir},
		{"ReadAt of an open directory", func() error {
			return openThen("empty", func(fl *fsys.File) error { _, err := fl.ReadAt(make([]byte, 8), 0); return err })
		}, "read", "empty", fsys.ErrIsDir},
		{"Seek in an open directory", func() error {
			return openThen("d", func(fl *fsys.File) error { _, err := fl.Seek(0, io.SeekStart); return err })
		}, "seek", "d", fsys.ErrIsDir},
		{"ReadDir of a file", func() error { _, err := f.ReadDir("a"); return err }, "readdir", "a", fsys.ErrNotDir},
		{"ReadDir of a link to a file", func() error { _, err := f.ReadDir("tofile"); return err }, "readdir", "tofile", fsys.ErrNotDir},
		{"ReadDir of an open file", func() error {
			return openThen("a", func(fl *fsys.File) error { _, err := fl.ReadDir(-1); return err })
		}, "readdir", "a", fsys.ErrNotDir},
		{"ReadLink of a file", func() error { _, err := f.ReadLink("a"); return err }, "readlink", "a", fs.ErrInvalid},
		{"ReadLink of a directory", func() error { _, err := f.ReadLink("d"); return err }, "readlink", "d", fs.ErrInvalid},
		{"Seek with a bad whence", func() error {
			return openThen("a", func(fl *fsys.File) error { _, err := fl.Seek(0, 7); return err })
		}, "seek", "a", fs.ErrInvalid},
		{"Seek before the start", func() error {
			return openThen("a", func(fl *fsys.File) error { _, err := fl.Seek(-1, io.SeekStart); return err })
		}, "seek", "a", fs.ErrInvalid},
		{"Read after Close", func() error {
			fl, err := f.Open("d/f")
			if err != nil {
				return err
			}
			fl.Close()
			_, err = fl.Read(make([]byte, 1))
			return err
		}, "read", "d/f", fs.ErrClosed},
		{"Close twice", func() error {
			fl, err := f.Open("a")
			if err != nil {
				return err
			}
			fl.Close()
			return fl.Close()
		}, "close", "a", fs.ErrClosed},
		{"Stat after Close", func() error {
			fl, err := f.Open("a")
			if err != nil {
				return err
			}
			fl.Close()
			_, err = fl.Stat()
			return err
		}, "stat", "a", fs.ErrClosed},
		{"Writer.Write after Close", func() error {
			w, err := f.Create("new", 0o644)
			if err != nil {
				return err
			}
			defer f.Remove("new")
			if err := w.Close(); err != nil {
				return err
			}
			_, err = w.Write([]byte("x"))
			return err
		}, "write", "new", fs.ErrClosed},
		// Missing entries.
		{"Open of a missing name", func() error { _, err := f.Open("missing"); return err }, "open", "missing", fs.ErrNotExist},
		{"ReadFile of a missing name", func() error { _, err := f.ReadFile("d/missing"); return err }, "read", "d/missing", fs.ErrNotExist},
		{"ReadDir of a missing name", func() error { _, err := f.ReadDir("missing"); return err }, "readdir", "missing", fs.ErrNotExist},
		{"Stat of a dangling link", func() error { _, err := f.Stat("dangling"); return err }, "stat", "dangling", fs.ErrNotExist},
		{"ReadFile of a dangling link", func() error { _, err := f.ReadFile("dangling"); return err }, "read", "dangling", fs.ErrNotExist},
		{"ReadDir of a dangling link", func() error { _, err := f.ReadDir("dangling"); return err }, "readdir", "dangling", fs.ErrNotExist},
		{"WriteFile in a missing directory", func() error { return f.WriteFile("missing/x", nil, 0o644) }, "write", "missing/x", fs.ErrNotExist},
		{"Create in a missing directory", func() error { _, err := f.Create("missing/x", 0o644); return err }, "create", "missing/x", fs.ErrNotExist},
		{"Mkdir in a missing directory", func() error { return f.Mkdir("missing/x", 0o755) }, "mkdir", "missing/x", fs.ErrNotExist},
		{"Symlink in a missing directory", func() error { return f.Symlink("a", "missing/x") }, "symlink", "missing/x", fs.ErrNotExist},
		{"Remove of a missing name", func() error { return f.Remove("missing") }, "remove", "missing", fs.ErrNotExist},
		{"Rename of a missing name", func() error { return f.Rename("missing", "x") }, "rename", "missing", fs.ErrNotExist},
		{"Rename of a missing name onto itself", func() error { return f.Rename("missing", "missing") }, "rename", "missing", fs.ErrNotExist},
		{"Rename into a missing directory", func() error { return f.Rename("a", "missing/a") }, "rename", "a", fs.ErrNotExist},
		{"Chmod of a missing name", func() error { return f.Chmod("missing", 0o644) }, "chmod", "missing", fs.ErrNotExist},
		{"Chtimes of a dangling link", func() error { return f.Chtimes("dangling", time.Time{}, time.Unix(1, 0)) }, "chtimes", "dangling", fs.ErrNotExist},
		{"Chmod of a dangling link", func() error { return f.Chmod("dangling", 0o600) }, "chmod", "dangling", fs.ErrNotExist},
		// Writing over a directory.
		{"WriteFile over a directory", func() error { return f.WriteFile("empty", []byte("x"), 0o644) }, "write", "empty", fsys.ErrIsDir},
		{"Create over a directory", func() error { _, err := f.Create("d", 0o644); return err }, "create", "d", fsys.ErrIsDir},
		{"Writer.Close over a directory made meanwhile", func() error {
			w, err := f.Create("later", 0o644)
			if err != nil {
				return err
			}
			if err := f.Mkdir("later", 0o755); err != nil {
				return err
			}
			defer f.Remove("later")
			return w.Close()
		}, "write", "later", fsys.ErrIsDir},
		{"Rename of a file over a directory", func() error { return f.Rename("a", "empty") }, "rename", "a", fsys.ErrIsDir},
		{"Rename of a directory over a file", func() error { return f.Rename("empty", "a") }, "rename", "empty", fsys.ErrNotDir},
		{"Rename of a directory over a link", func() error { return f.Rename("empty", "link") }, "rename", "empty", fsys.ErrNotDir},
		// Entries in the way.
		{"Mkdir of an existing directory", func() error { return f.Mkdir("d", 0o755) }, "mkdir", "d", fs.ErrExist},
		{"Mkdir of an existing file", func() error { return f.Mkdir("a", 0o755) }, "mkdir", "a", fs.ErrExist},
		{"Mkdir of an existing link", func() error { return f.Mkdir("link", 0o755) }, "mkdir", "link", fs.ErrExist},
		{"MkdirAll over a file", func() error { return f.MkdirAll("a", 0o755) }, "mkdir", "a", fsys.ErrNotDir},
		{"MkdirAll through a file", func() error { return f.MkdirAll("a/b/c", 0o755) }, "mkdir", "a/b/c", fsys.ErrNotDir},
		{"Symlink over a file", func() error { return f.Symlink("d", "a") }, "symlink", "a", fs.ErrExist},
		{"Symlink over a directory", func() error { return f.Symlink("a", "d") }, "symlink", "d", fs.ErrExist},
		{"Symlink with an empty target", func() error { return f.Symlink("", "x") }, "symlink", "x", fs.ErrInvalid},
		{"WriteFile in a file", func() error { return f.WriteFile("a/x", nil, 0o644) }, "write", "a/x", fsys.ErrNotDir},
		{"Mkdir in a file", func() error { return f.Mkdir("a/x", 0o755) }, "mkdir", "a/x", fsys.ErrNotDir},
		{"Rename into a file", func() error { return f.Rename("empty", "a/x") }, "rename", "empty", fsys.ErrNotDir},
		// Directories with entries.
		{"Remove of a non-empty directory", func() error { return f.Remove("d") }, "remove", "d", fsys.ErrNotEmpty},
		{"Rename onto a non-empty directory", func() error { return f.Rename("empty", "d") }, "rename", "empty", fsys.ErrNotEmpty},
		{"Rename of a directory below itself", func() error { return f.Rename("d", "d/sub/d") }, "rename", "d", fs.ErrInvalid},
		{"Rename of a directory onto its parent", func() error { return f.Rename("d/sub", "d") }, "rename", "d/sub", fsys.ErrNotEmpty},
		// A Sub FS names paths as its caller gave them.
		{"Sub: ReadFile of a missing name", func() error { _, err := subFS.ReadFile("missing"); return err }, "read", "missing", fs.ErrNotExist},
		{"Sub: Remove of a non-empty directory", func() error { return subFS.Remove("sub/..") }, "remove", "sub/..", fs.ErrInvalid},
		{"Sub: WriteFile over a directory", func() error { return subFS.WriteFile("sub", nil, 0o644) }, "write", "sub", fsys.ErrIsDir},
		{"Sub: Rename into a missing directory", func() error { return subFS.Rename("f", "nowhere/f") }, "rename", "f", fs.ErrNotExist},
		// A read transaction's FS refuses writes.
		{"WriteFile in a read transaction", func() error {
			tx, err := db.Begin(false)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			return f.In(tx).WriteFile("x", nil, 0o644)
		}, "write", "x", pagoda.ErrTxNotWritable},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := snapshotBytes(t, db)
			err := c.call()
			checkPathErr(t, c.name, err, c.op, c.path, c.want)
			if strings.HasPrefix(c.name, "Writer.") {
				return // these write, and remove what they wrote, on the way
			}
			if !bytes.Equal(snapshotBytes(t, db), before) {
				t.Errorf("%s: failed, but changed the database", c.name)
			}
		})
	}
	// fstest opens every entry, and a dangling link cannot be opened.
	if err := f.Remove("dangling"); err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(f, "a", "empty", "d/sub", "d/f", "link", "tofile"); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestErrorsPathThroughFile: ErrNotDir's doc says it is what a path that
// goes through something that is not a directory fails with, as POSIX's
// ENOTDIR; the parent being a file and a file further up the path should
// not differ.
func TestErrorsPathThroughFile(t *testing.T) {
	db, f := errorsFixture(t)
	before := snapshotBytes(t, db)
	for _, c := range fsCalls {
		if c.method == "Sub" || c.method == "RemoveAll" || c.method == "Rename-to" {
			continue // Sub does not look; RemoveAll of nothing succeeds
		}
		for _, name := range []string{"a/x", "a/x/y", "link/f/x"} {
			t.Run(fmt.Sprintf("%s/%s", c.method, name), func(t *testing.T) {
				err, p := c.call(f, name)
				checkPathErr(t, fmt.Sprintf("%s(%q)", c.method, name), err, c.op, p, fsys.ErrNotDir)
			})
		}
	}
	if !bytes.Equal(snapshotBytes(t, db), before) {
		t.Error("a refused write changed the database")
	}
}

// zlibBytes compresses b as sqlar does.
func zlibBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// insertRows inserts rows straight into the sqlar table, creating it with
// sqlite3's schema (and the listing index when listing is set) if it is
// missing. Each row is name, mode, mtime, sz, data.
func insertRows(t testing.TB, db *pagoda.DB, listing bool, rows ...[]any) {
	t.Helper()
	err := db.Update(func(tx *pagoda.Tx) error {
		tab, err := tx.Table("sqlar")
		if errors.Is(err, pagoda.ErrNotFound) {
			if tab, err = tx.CreateTable(sqlite3Schema); err == nil && listing {
				_, err = tx.CreateIndex("CREATE INDEX sqlar_listing ON sqlar(name, mode, mtime, sz)")
			}
		}
		if err != nil {
			return err
		}
		for _, r := range rows {
			if _, err := tab.Insert(r...); err != nil {
				return fmt.Errorf("insert %q: %w", r[0], err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestErrorsCorruptEntries: a file whose data does not match its size is
// an error wrapping pagoda.ErrCorrupt from ReadFile and from Open or Read,
// never a panic; its metadata still lists and stats.
func TestErrorsCorruptEntries(t *testing.T) {
	hundred := bytes.Repeat([]byte("sqlar "), 100)
	z := zlibBytes(hundred)
	badSum := bytes.Clone(z)
	badSum[len(badSum)-1] ^= 1
	rows := []struct {
		name string
		sz   int64
		data any
	}{
		{"not-zlib", 100, []byte("this is not a zlib stream")},
		{"not-zlib-text", 100, "neither is this"},
		{"inflates-short", int64(len(hundred)) + 1, z},
		{"inflates-long", int64(len(hundred)) - 1, z},
		{"truncated", int64(len(hundred)), z[:len(z)/2]},
		{"bad-checksum", int64(len(hundred)), badSum},
		{"raw-deflate", int64(len(hundred)), z[2 : len(z)-4]},
		{"negative-size", -5, []byte("abc")},
		{"null-data", 10, nil},
		{"empty-data", 10, []byte{}},
		// A size no allocation can hold, and one far beyond what the
		// stream could inflate to (deflate expands at most 1032 times).
		{"huge-size", 1 << 62, z},
		{"oversized", 1 << 50, z},
	}
	for _, listing := range []bool{true, false} {
		t.Run(fmt.Sprintf("listing=%v", listing), func(t *testing.T) {
			// The database is closed by hand: after a panic in a read its
			// transaction may never end, and Close would wait for it.
			db, err := pagoda.Open(filepath.Join(t.TempDir(), "a.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			var vals [][]any
			for _, r := range rows {
				vals = append(vals, []any{r.name, int64(0o100644), int64(1e9), r.sz, r.data})
			}
			insertRows(t, db, listing, vals...)
			f := fsys.New(db, nil)
			panicked := false
			for _, r := range rows {
				t.Run(r.name, func(t *testing.T) {
					noPanic(t, &panicked, "ReadFile", func() {
						data, err := f.ReadFile(r.name)
						checkPathErr(t, "ReadFile", err, "read", r.name, pagoda.ErrCorrupt)
						if data != nil {
							t.Errorf("ReadFile returned %d bytes with its error", len(data))
						}
					})
					noPanic(t, &panicked, "Open", func() {
						fl, err := f.Open(r.name)
						if err != nil {
							checkPathErr(t, "Open", err, "open", r.name, pagoda.ErrCorrupt)
							return
						}
						defer fl.Close()
						_, err = io.ReadAll(fl)
						checkPathErr(t, "Read", err, "read", r.name, pagoda.ErrCorrupt)
					})
					noPanic(t, &panicked, "Stat", func() {
						if fi, err := f.Stat(r.name); err != nil || fi.Mode() != 0o644 {
							t.Errorf("Stat = %v, %v", fi, err)
						}
					})
				})
			}
			noPanic(t, &panicked, "ReadDir", func() {
				if list, err := f.ReadDir("."); err != nil || len(list) != len(rows) {
					t.Errorf("ReadDir(.) = %d entries, %v; want %d", len(list), err, len(rows))
				}
			})
			if !panicked {
				db.Close()
			}
		})
	}
}

// noPanic runs fn, turning a panic into a test error.
func noPanic(t *testing.T, panicked *bool, what string, fn func()) {
	t.Helper()
	defer func() {
		if x := recover(); x != nil {
			*panicked = true
			t.Errorf("%s panicked: %v", what, x)
		}
	}()
	fn()
}

// TestErrorsArchiveWithoutListingIndex: an archive as sqlite3 makes it
// (the table alone, directories that only prefix names) reads and takes
// writes, and pagoda adds no index to it.
func TestErrorsArchiveWithoutListingIndex(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "a.sqlar")
	db := dbtest.Open(t, dbPath, &pagoda.Options{PageSize: 512})
	big := bytes.Repeat([]byte("0123456789"), 300)
	insertRows(t, db, false,
		[]any{"d", int64(0o40755), int64(1e9), int64(0), nil},
		[]any{"d/f", int64(0o100644), int64(1e9 + 1), int64(len(big)), zlibBytes(big)},
		[]any{"d.x", int64(0o100600), int64(1e9 + 2), int64(3), []byte("d.x")},
		[]any{"d/implicit/g", int64(0o100644), int64(1e9 + 3), int64(1), []byte("g")},
		[]any{"l", int64(0o120777), int64(1e9 + 4), int64(-1), "d/f"},
	)
	objects := func() []string {
		var out []string
		db.View(func(tx *pagoda.Tx) error {
			for _, o := range tx.Objects() {
				out = append(out, o.Type+" "+o.Name)
			}
			return nil
		})
		return out
	}
	schema := objects()
	f := fsys.New(db, &fsys.Options{Compress: true})

	// Reads.
	if data, err := f.ReadFile("l"); err != nil || !bytes.Equal(data, big) {
		t.Errorf("ReadFile(l) = %d bytes, %v", len(data), err)
	}
	if fi, err := f.Stat("d/implicit"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(d/implicit) = %v, %v", fi, err)
	}
	if fi, err := f.Stat("d.x"); err != nil || fi.Mode() != 0o600 || fi.Size() != 3 || fi.ModTime().Unix() != 1e9+2 {
		t.Errorf("Stat(d.x) = %v, %v", fi, err)
	}
	if err := fstest.TestFS(f, "d/f", "d.x", "d/implicit/g", "l"); err != nil {
		t.Fatal(err)
	}
	// Writes.
	steps := []error{
		f.WriteFile("d/new", big, 0o640),
		f.Mkdir("e", 0o700),
		f.Chmod("d/implicit", 0o750), // gives the directory a row
		f.Rename("d", "e/d"),
		f.Remove("e/d/f"),
		f.Symlink("d/new", "e/l"),
		f.RemoveAll("d.x"),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := map[string]fs.FileMode{
		"e": fs.ModeDir | 0o700, "e/d": fs.ModeDir | 0o755, "e/d/new": 0o640, "e/d/implicit": fs.ModeDir | 0o750,
		"e/d/implicit/g": 0o644, "e/l": fs.ModeSymlink | 0o777, "l": fs.ModeSymlink | 0o777,
	}
	got := map[string]fs.FileMode{}
	if err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != "." {
			fi, err := f.Lstat(p)
			if err != nil {
				return err
			}
			got[p] = fi.Mode()
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !mapsEqual(got, want) {
		t.Errorf("after the writes the tree is\n\t%v\nwant\n\t%v", got, want)
	}
	if data, err := f.ReadFile("e/l"); err != nil || !bytes.Equal(data, big) {
		t.Errorf("ReadFile(e/l) = %d bytes, %v", len(data), err)
	}
	if s := objects(); !slices.Equal(s, schema) {
		t.Errorf("the schema changed from %q to %q", schema, s)
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	checkSQLite(t, dbPath, len(want)) // every entry has a row now
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestErrorsNoTable: a database without a sqlar table reads as an empty
// root; a failed write leaves it without one; the first write creates the
// table and its listing index, beside the tables already there.
func TestErrorsNoTable(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "a.db")
	db := dbtest.Open(t, dbPath, nil)
	if err := db.Update(func(tx *pagoda.Tx) error {
		tab, err := tx.CreateTable("CREATE TABLE other(x)")
		if err == nil {
			_, err = tab.Insert("kept")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f := fsys.New(db, nil)
	if list, err := f.ReadDir("."); err != nil || len(list) != 0 {
		t.Errorf("ReadDir(.) = %v, %v", list, err)
	}
	if fi, err := f.Stat("."); err != nil || !fi.IsDir() {
		t.Errorf("Stat(.) = %v, %v", fi, err)
	}
	if m, err := f.Glob("*"); err != nil || len(m) != 0 {
		t.Errorf("Glob(*) = %q, %v", m, err)
	}
	for _, c := range fsCalls {
		if c.method == "Sub" || c.method == "MkdirAll" || c.method == "RemoveAll" {
			continue // these succeed
		}
		t.Run(c.method, func(t *testing.T) {
			before := snapshotBytes(t, db)
			err, p := c.call(f, "x/y")
			checkPathErr(t, c.method+"(x/y)", err, c.op, p, fs.ErrNotExist)
			if !bytes.Equal(snapshotBytes(t, db), before) {
				t.Errorf("%s(x/y) failed, but changed the database", c.method)
			}
		})
	}
	if err := f.RemoveAll("x"); err != nil {
		t.Errorf("RemoveAll(x) = %v", err)
	}
	if err := fstest.TestFS(f); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("first", []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	var names []string
	db.View(func(tx *pagoda.Tx) error {
		for _, o := range tx.Objects() {
			names = append(names, o.Type+" "+o.Name+" "+o.SQL)
		}
		return nil
	})
	want := []string{
		"table other CREATE TABLE other(x)",
		"table sqlar " + sqlite3Schema,
		"index sqlite_autoindex_sqlar_1 ",
		"index sqlar_listing CREATE INDEX sqlar_listing ON sqlar(name, mode, mtime, sz)",
	}
	if !slices.Equal(names, want) {
		t.Errorf("schema\n\t%q\nwant\n\t%q", names, want)
	}
	if err := fstest.TestFS(f, "first"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	checkSQLite(t, dbPath, 1)
}

// TestErrorsFailedWriteInTx: a write that fails in the caller's
// transaction leaves nothing in it either, not even the table it would
// have created ("A failed write changes nothing").
func TestErrorsFailedWriteInTx(t *testing.T) {
	for _, c := range []struct {
		name string
		call func(f *fsys.FS) error
	}{
		{"WriteFile", func(f *fsys.FS) error { return f.WriteFile("missing/x", nil, 0o644) }},
		{"Mkdir", func(f *fsys.FS) error { return f.Mkdir("missing/x", 0o755) }},
		{"Symlink", func(f *fsys.FS) error { return f.Symlink("a", "missing/x") }},
		{"MkdirAll", func(f *fsys.FS) error { return f.MkdirAll("/bad", 0o755) }},
		{"Rename", func(f *fsys.FS) error { return f.Rename("missing", "x") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t, nil)
			tx, err := db.Begin(true)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			before := dbDigest(t, db, tx)
			if err := c.call(fsys.New(db, nil).In(tx)); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("%s: %v, want an error", c.name, err)
			}
			if dbDigest(t, db, tx) != before {
				t.Errorf("%s failed, but changed the transaction: it now holds %q", c.name, tx.TableNames())
			}
		})
	}
}

// TestErrorsReadOnly: on a database opened read-only every write fails
// with pagoda.ErrReadOnly and the file is untouched; reads work.
func TestErrorsReadOnly(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "a.db")
	db := dbtest.Open(t, dbPath, nil)
	w := fsys.New(db, nil)
	for _, err := range []error{
		w.WriteFile("a", []byte("file a"), 0o644),
		w.MkdirAll("d/sub", 0o755),
		w.Mkdir("empty", 0o755),
		w.Symlink("d", "link"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	fileBytes := func() []byte {
		b, err := os.ReadFile(dbPath)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before := fileBytes()

	ro, err := pagoda.Open(dbPath, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	f := fsys.New(ro, nil)
	for _, c := range []struct {
		name     string
		call     func() error
		op, path string
	}{
		{"WriteFile", func() error { return f.WriteFile("new", nil, 0o644) }, "write", "new"},
		{"WriteFile over a file", func() error { return f.WriteFile("a", nil, 0o644) }, "write", "a"},
		{"Create", func() error {
			w, err := f.Create("new", 0o644)
			if err != nil {
				return err
			}
			w.Write([]byte("x"))
			return w.Close()
		}, "write", "new"},
		{"Mkdir", func() error { return f.Mkdir("new", 0o755) }, "mkdir", "new"},
		{"MkdirAll", func() error { return f.MkdirAll("new/x", 0o755) }, "mkdir", "new/x"},
		{"Remove", func() error { return f.Remove("a") }, "remove", "a"},
		{"RemoveAll", func() error { return f.RemoveAll("d") }, "removeall", "d"},
		{"Rename", func() error { return f.Rename("a", "b") }, "rename", "a"},
		{"Chmod", func() error { return f.Chmod("a", 0o600) }, "chmod", "a"},
		{"Chtimes", func() error { return f.Chtimes("link", time.Time{}, time.Unix(1, 0)) }, "chtimes", "link"},
		{"Symlink", func() error { return f.Symlink("a", "new") }, "symlink", "new"},
		{"CopyFS", func() error { return f.CopyFS(fstest.MapFS{"x": {Data: []byte("x")}}) }, "copyfs", "."},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkPathErr(t, c.name, c.call(), c.op, c.path, pagoda.ErrReadOnly)
		})
	}
	if err := fstest.TestFS(f, "a", "d/sub", "empty", "link"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fileBytes(), before) {
		t.Error("the read-only database's file changed")
	}
	if _, err := os.Stat(dbPath + "-wal"); err == nil {
		t.Error("a WAL appeared beside the read-only database")
	}
}

// TestErrorsNoNameIndex: a sqlar table without its primary key is not an
// archive the FS can read: every call fails with pagoda.ErrUnsupported.
func TestErrorsNoNameIndex(t *testing.T) {
	db := openDB(t, nil)
	if err := db.Update(func(tx *pagoda.Tx) error {
		tab, err := tx.CreateTable("CREATE TABLE sqlar(name TEXT, mode INT, mtime INT, sz INT, data BLOB)")
		if err == nil {
			_, err = tab.Insert("a", 0o100644, 0, 1, []byte("a"))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f := fsys.New(db, nil)
	before := snapshotBytes(t, db)
	for _, c := range fsCalls {
		if c.method == "Sub" {
			continue
		}
		t.Run(c.method, func(t *testing.T) {
			err, p := c.call(f, "a")
			checkPathErr(t, c.method, err, c.op, p, pagoda.ErrUnsupported)
		})
	}
	if !bytes.Equal(snapshotBytes(t, db), before) {
		t.Error("a refused write changed the database")
	}
}

// TestErrorsNonIntegerColumns: rows whose mode, mtime or sz hold TEXT or a
// BLOB (SQLite keeps non-numeric text in an INT column as it is) read as
// SQLite's integer conversion of them reads, 0, whether or not the archive
// has the listing index; one such row must not make its directory
// unreadable.
func TestErrorsNonIntegerColumns(t *testing.T) {
	rows := [][]any{
		{"ok", int64(0o100644), int64(1e9), int64(1), []byte("x")},
		{"text-mode", "rw-r--r--", int64(1e9), int64(1), []byte("x")},
		{"blob-mtime", int64(0o100644), []byte{1, 2}, int64(1), []byte("x")},
		{"text-sz", int64(0o100644), int64(1e9), "one", []byte("x")},
		{"real-mode", 16877.5, int64(1e9), int64(0), nil},
	}
	var listings [2][]string
	for i, listing := range []bool{false, true} {
		t.Run(fmt.Sprintf("listing=%v", listing), func(t *testing.T) {
			db := openDB(t, nil)
			insertRows(t, db, listing, rows...)
			f := fsys.New(db, nil)
			list, err := f.ReadDir(".")
			if err != nil {
				t.Fatalf("ReadDir(.): %v", err)
			}
			for _, d := range list {
				info, err := d.Info()
				if err != nil {
					t.Fatal(err)
				}
				listings[i] = append(listings[i], fs.FormatFileInfo(info))
				fi, err := f.Stat(d.Name())
				if err != nil {
					t.Errorf("Stat(%q): %v", d.Name(), err)
				} else if fs.FormatFileInfo(fi) != fs.FormatFileInfo(info) {
					t.Errorf("Stat(%q) = %s, listed as %s", d.Name(), fs.FormatFileInfo(fi), fs.FormatFileInfo(info))
				}
			}
			if len(list) != len(rows) {
				t.Errorf("ReadDir(.) lists %d entries, want %d", len(list), len(rows))
			}
		})
	}
	if !slices.Equal(listings[0], listings[1]) {
		t.Errorf("the listing index changes the listing:\nwithout: %q\nwith:    %q", listings[0], listings[1])
	}
}
