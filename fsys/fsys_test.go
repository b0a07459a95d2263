package fsys_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
	"github.com/pagodadb/pagoda/internal/sqlartest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSymlinks: links are stored as sqlite3 stores them and followed by
// Open, Stat, ReadFile and ReadDir, not by Lstat and ReadLink; links that
// dangle, loop or leave the archive do not exist.

func TestSymlinkResolution(t *testing.T) {
	db := openDB(t, nil)
	f := fsys.New(db, nil)
	must(t, f.MkdirAll("dir/sub", 0o755))
	must(t, f.WriteFile("dir/sub/file", []byte("content"), 0o644))
	for _, l := range []struct{ target, name string }{
		{"sub/file", "dir/tofile"},
		{"dir/sub", "todir"},
		{"../../x", "dir/escape"},
		{"/etc/passwd", "abs"},
		{"loop2", "loop1"},
		{"loop1", "loop2"},
		{"missing", "dangling"},
		{"todir/file", "chain"},
	} {
		must(t, f.Symlink(l.target, l.name))
	}
	if err := f.Symlink("x", "dir/tofile"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Symlink over an existing name: %v, want ErrExist", err)
	}
	for name, want := range map[string]string{"dir/tofile": "content", "chain": "content"} {
		got, err := f.ReadFile(name)
		if err != nil || string(got) != want {
			t.Errorf("ReadFile(%s) = %q, %v", name, got, err)
		}
		fl, err := f.Open(name)
		must(t, err)
		b, err := io.ReadAll(fl.(io.Reader))
		if err != nil || string(b) != want {
			t.Errorf("Open(%s) read %q, %v", name, b, err)
		}
		fl.Close()
	}
	if fi, err := f.Stat("todir"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(todir) = %v, %v: want a directory", fi, err)
	}
	if list, err := f.ReadDir("todir"); err != nil || len(list) != 1 || list[0].Name() != "file" {
		t.Errorf("ReadDir(todir) = %v, %v", list, err)
	}
	if fi, err := f.Lstat("todir"); err != nil || fi.Mode().Type() != fs.ModeSymlink || fi.Mode().Perm() != 0o777 {
		t.Errorf("Lstat(todir) = %v, %v: want a symbolic link", fi, err)
	}
	if target, err := f.ReadLink("dir/escape"); err != nil || target != "../../x" {
		t.Errorf("ReadLink(dir/escape) = %q, %v", target, err)
	}
	for _, name := range []string{"dir/escape", "abs", "loop1", "dangling"} {
		if _, err := f.Stat(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%s): %v, want ErrNotExist", name, err)
		}
		if _, err := f.Lstat(name); err != nil {
			t.Errorf("Lstat(%s): %v", name, err)
		}
	}
	if _, err := f.ReadLink("dir/sub/file"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("ReadLink of a file: %v, want ErrInvalid", err)
	}
	// fstest opens every entry: drop the broken links first, as it would
	// fail on them under os.DirFS too.
	for _, name := range []string{"dir/escape", "abs", "loop1", "loop2", "dangling"} {
		must(t, f.Remove(name))
	}
	if err := fstest.TestFS(f, "dir/tofile", "todir", "chain", "dir/sub/file"); err != nil {
		t.Fatal(err)
	}
}

// TestInTransaction: an FS In a transaction writes in it, reads its
// changes, and leaves nothing if it rolls back.
func TestInTransaction(t *testing.T) {
	db := openDB(t, nil)
	f := fsys.New(db, nil)
	must(t, f.WriteFile("kept", []byte("1"), 0o644))

	tx, err := db.Begin(true)
	must(t, err)
	g := f.In(tx)
	must(t, g.MkdirAll("a/b", 0o755))
	must(t, g.WriteFile("a/b/c", []byte("in tx"), 0o644))
	must(t, g.Rename("kept", "a/kept"))
	if got, err := g.ReadFile("a/b/c"); err != nil || string(got) != "in tx" {
		t.Errorf("read in the tx: %q, %v", got, err)
	}
	if _, err := f.Stat("a"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("outside the tx, a exists before commit: %v", err)
	}
	must(t, tx.Rollback())
	if err := fstest.TestFS(f, "kept"); err != nil {
		t.Fatal(err)
	}
	if list, _ := f.ReadDir("."); len(list) != 1 {
		t.Errorf("after rollback the root holds %v", list)
	}

	must(t, db.Update(func(tx *pagoda.Tx) error {
		return f.In(tx).WriteFile("committed", []byte("2"), 0o600)
	}))
	if got, err := f.ReadFile("committed"); err != nil || string(got) != "2" {
		t.Errorf("after commit: %q, %v", got, err)
	}
	// A read transaction's FS refuses writes.
	must(t, db.View(func(tx *pagoda.Tx) error {
		if err := f.In(tx).WriteFile("x", nil, 0o644); !errors.Is(err, pagoda.ErrTxNotWritable) {
			t.Errorf("write in a read tx: %v, want ErrTxNotWritable", err)
		}
		return nil
	}))
}

// TestOpenFileKeepsSnapshot: an open file reads the content it had when it
// was opened, whatever commits meanwhile; ReadAt works from several
// goroutines at once.
func TestOpenFileKeepsSnapshot(t *testing.T) {
	db := openDB(t, nil)
	f := fsys.New(db, nil)
	old := bytes.Repeat([]byte("0123456789"), 5000) // overflows many pages
	must(t, f.WriteFile("f", old, 0o644))
	fl, err := f.Open("f")
	must(t, err)
	defer fl.Close()
	must(t, f.WriteFile("f", []byte("new"), 0o644))
	must(t, f.Remove("f"))
	done := make(chan error, 4)
	for g := range 4 {
		go func() {
			buf := make([]byte, 777)
			for off := int64(g); off < int64(len(old)); off += 777 * 4 {
				n, err := fl.(io.ReaderAt).ReadAt(buf, off)
				if err != nil && err != io.EOF {
					done <- err
					return
				}
				if !bytes.Equal(buf[:n], old[off:off+int64(n)]) {
					done <- errors.New("ReadAt read other bytes")
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// Seek and Read, and WriteTo from the middle.
	s := fl.(io.ReadSeeker)
	if _, err := s.Seek(-10, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	tail, err := io.ReadAll(s)
	if err != nil || !bytes.Equal(tail, old[len(old)-10:]) {
		t.Errorf("tail %q, %v", tail, err)
	}
	s.Seek(12345, io.SeekStart)
	var buf bytes.Buffer
	if n, err := fl.(io.WriterTo).WriteTo(&buf); err != nil || n != int64(len(old)-12345) || !bytes.Equal(buf.Bytes(), old[12345:]) {
		t.Errorf("WriteTo: %d, %v", n, err)
	}
}

// TestCreate: a Writer's file appears when it closes, not before.
func TestCreate(t *testing.T) {
	db := openDB(t, nil)
	f := fsys.New(db, &fsys.Options{Compress: true})
	w, err := f.Create("streamed", 0o640)
	must(t, err)
	for range 100 {
		io.WriteString(w, "a line of text\n")
	}
	if _, err := f.Stat("streamed"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("before Close: %v", err)
	}
	must(t, w.Close())
	if _, err := w.Write([]byte("x")); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
	fi, err := f.Stat("streamed")
	if err != nil || fi.Size() != 1500 || fi.Mode() != 0o640 {
		t.Fatalf("Stat: %v, %v", fi, err)
	}
	if _, err := f.Create("missing/x", 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Create in a missing directory: %v", err)
	}
}

// TestChmodChtimes: modes keep their type bits; times are whole seconds; a
// directory that only existed implicitly gets a row.
func TestChmodChtimes(t *testing.T) {
	db := openDB(t, nil)
	f := fsys.New(db, nil)
	must(t, f.MkdirAll("d", 0o700))
	must(t, f.WriteFile("d/x", []byte("x"), 0o600))
	must(t, f.Chmod("d/x", 0o755|fs.ModeSetuid))
	must(t, f.Chmod("d", 0o750))
	mt := time.Unix(1234567890, 999)
	must(t, f.Chtimes("d/x", time.Time{}, mt))
	fi, err := f.Stat("d/x")
	must(t, err)
	if fi.Mode() != 0o755|fs.ModeSetuid || !fi.ModTime().Equal(time.Unix(1234567890, 0)) {
		t.Errorf("d/x: %v %v", fi.Mode(), fi.ModTime())
	}
	if fi, _ := f.Stat("d"); fi.Mode() != fs.ModeDir|0o750 {
		t.Errorf("d: %v", fi.Mode())
	}
	if got, _ := f.ReadFile("d/x"); string(got) != "x" {
		t.Errorf("content changed: %q", got)
	}
}

// TestLinksOnTheWay: a link part-way along a path is followed by every
// call, Lstat and ReadLink included (they leave only the last link).
func TestLinksOnTheWay(t *testing.T) {
	db := openDB(t, nil)
	f := fsys.New(db, nil)
	must(t, f.MkdirAll("dir/sub/deeper", 0o755))
	must(t, f.WriteFile("dir/sub/deeper/run.sh", []byte("#!/bin/sh\n"), 0o755))
	must(t, f.Symlink("run.sh", "dir/sub/deeper/link"))
	must(t, f.Symlink("sub", "dir/up"))
	if list, err := f.ReadDir("dir/up/deeper"); err != nil || len(list) != 2 || list[0].Name() != "link" || list[1].Name() != "run.sh" {
		t.Errorf("ReadDir(dir/up/deeper) = %v, %v", list, err)
	}
	if fi, err := f.Lstat("dir/up/deeper/run.sh"); err != nil || fi.Mode() != 0o755 {
		t.Errorf("Lstat through a link: %v, %v", fi, err)
	}
	if fi, err := f.Lstat("dir/up/deeper/link"); err != nil || fi.Mode().Type() != fs.ModeSymlink {
		t.Errorf("Lstat of a link through a link: %v, %v", fi, err)
	}
	if target, err := f.ReadLink("dir/up/deeper/link"); err != nil || target != "run.sh" {
		t.Errorf("ReadLink through a link: %q, %v", target, err)
	}
	if _, err := f.ReadDir("dir/up/deeper/run.sh"); !errors.Is(err, fsys.ErrNotDir) {
		t.Errorf("ReadDir of a file through a link: %v, want ErrNotDir", err)
	}
	if _, err := f.ReadDir("dir/up/nothing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadDir of nothing through a link: %v, want ErrNotExist", err)
	}
}

// TestOnlyInvalidNamesBelow: a directory that only invalid names lie below
// is listed, and lists as empty.
func TestOnlyInvalidNamesBelow(t *testing.T) {
	db := openDB(t, nil)
	f := fsys.New(db, nil)
	must(t, f.WriteFile("ok", nil, 0o644))
	must(t, db.Update(func(tx *pagoda.Tx) error {
		tab, err := tx.Table("sqlar")
		if err != nil {
			return err
		}
		_, err = tab.Insert("a/../../evil.txt", 0o100644, 0, 1, []byte("x"))
		return err
	}))
	if list, err := f.ReadDir("."); err != nil || len(list) != 2 || list[0].Name() != "a" || !list[0].IsDir() {
		t.Fatalf("ReadDir(.) = %v, %v", list, err)
	}
	if list, err := f.ReadDir("a"); err != nil || len(list) != 0 {
		t.Errorf("ReadDir(a) = %v, %v; want empty", list, err)
	}
	if err := fstest.TestFS(f, "ok", "a"); err != nil {
		t.Fatal(err)
	}
}

// TestListingsOutliveLaterCalls: ReadDir cuts its results from slabs it
// reuses; every listing a caller holds must stay as it was returned while
// later listings (small, larger than a slab's share, with long names)
// are cut, and after the caller changes its own copy.
func TestListingsOutliveLaterCalls(t *testing.T) {
	db := openDB(t, nil)
	f := fsys.New(db, nil)
	want := map[string][]string{}
	long := strings.Repeat("n", 700) // names past a slab's share of text
	must(t, db.Update(func(tx *pagoda.Tx) error {
		w := f.In(tx)
		for d := range 120 {
			dir := fmt.Sprintf("d%03d", d)
			n := d % 9 // mostly small directories
			if d%40 == 7 {
				n = 300 // more entries than a slab's share
			}
			if err := w.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			var names []string
			for i := range n {
				name := fmt.Sprintf("f%03d", i)
				if d%25 == 3 && i < 3 {
					name = fmt.Sprintf("%s%d", long, i)
				}
				names = append(names, name)
				if err := w.WriteFile(dir+"/"+name, []byte(name[:1]), 0o644); err != nil {
					return err
				}
			}
			slices.Sort(names)
			want[dir] = names
		}
		return nil
	}))
	got := map[string][]fs.DirEntry{}
	for round := range 3 { // later rounds list again over the held results
		for dir := range want {
			list, err := f.ReadDir(dir)
			must(t, err)
			if round == 0 {
				got[dir] = list
			} else if len(list) > 0 {
				list[0] = nil // the caller's own slice: must not reach others
			}
		}
	}
	for _, list := range got {
		_ = append(list, nil) // nor may growing it
	}
	for dir, names := range want {
		list := got[dir]
		if len(list) != len(names) {
			t.Fatalf("%s: %d entries, want %d", dir, len(list), len(names))
		}
		for i, name := range names {
			if list[i] == nil {
				t.Fatalf("%s[%d] is nil: another caller's change reached it", dir, i)
			}
			info, err := list[i].Info()
			if list[i].Name() != name || err != nil || info.Name() != name || info.Size() != 1 || list[i].IsDir() {
				t.Fatalf("%s[%d] = %q (size %d, %v), want file %q of 1 byte", dir, i, list[i].Name(), info.Size(), err, name)
			}
		}
	}
}

// TestStatReadsNoData: on an archive as sqlite3 -Ac makes it (512-byte
// pages, no listing index, names of a few bytes to hundreds), Stat,
// ReadDir and a walk read each row's name, mode, mtime and sz, never its
// data: with 10 MB files in it, each call allocates kilobytes, not the
// file (reading it whole allocated its size per entry before).
func TestStatReadsNoData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.sqlar")
	db := sqltest.Open(t, path)
	for _, s := range []string{"PRAGMA page_size=512", "CREATE TABLE sqlar(name TEXT PRIMARY KEY, mode INT, mtime INT, sz INT, data BLOB)"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	big := randomBytes(r, 10<<20, false)
	long := strings.Repeat("n", 300) // spills past a 512-byte page's leaf
	rows := map[string]int{"d": -1, "d/raw": len(big), "d/zlib": 10 << 20, "d/" + long: len(big), "d/small": 5}
	for name, size := range rows {
		var err error
		switch {
		case size < 0:
			_, err = db.Exec("INSERT INTO sqlar VALUES(?, 16877, 1700000000, 0, NULL)", name)
		case name == "d/zlib":
			_, err = db.Exec("INSERT INTO sqlar VALUES(?, 33188, 1700000000, ?, ?)", name, size, zlibBytes(make([]byte, size)))
		default:
			_, err = db.Exec("INSERT INTO sqlar VALUES(?, 33188, 1700000000, ?, ?)", name, size, big[:size])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	pdb, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	f := fsys.New(pdb, nil)
	check := func() {
		for name, size := range rows {
			fi, err := f.Stat(name)
			if err != nil || (size >= 0 && fi.Size() != int64(size)) || fi.IsDir() != (size < 0) {
				t.Fatalf("Stat(%s) = %v, %v", name, fi, err)
			}
		}
		list, err := f.ReadDir("d")
		if err != nil || len(list) != len(rows)-1 {
			t.Fatalf("ReadDir(d) = %v, %v", list, err)
		}
		for _, d := range list {
			if fi, _ := d.Info(); fi.Size() != int64(rows["d/"+d.Name()]) {
				t.Errorf("ReadDir(d): %s has size %d, want %d", d.Name(), fi.Size(), rows["d/"+d.Name()])
			}
		}
		n := 0
		if err := fs.WalkDir(f, ".", func(string, fs.DirEntry, error) error { n++; return nil }); err != nil || n != len(rows)+1 {
			t.Fatalf("walk: %d entries, %v", n, err)
		}
	}
	check() // warm: pools, the view
	const rounds = 5
	n := sqlartest.Allocated(func() {
		for range rounds {
			check()
		}
	})
	t.Logf("%d bytes allocated a round of %d Stats, a ReadDir and a walk", n/rounds, len(rows))
	if n/rounds > 256<<10 {
		t.Errorf("a round of Stats, a ReadDir and a walk allocated %d bytes: rows of 10 MB are being read", n/rounds)
	}
}
