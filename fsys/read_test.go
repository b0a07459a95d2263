package fsys_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqlartest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// benchText returns n bytes of text-like data (words of a small
// vocabulary, lines of about 60 bytes) that deflate shrinks about 3 times.
func benchText(n int) []byte {
	words := strings.Fields("the of and a to in is you that it he was for on are as with his they I at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part")
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	line := 0
	for sb.Len() < n {
		w := words[r.IntN(len(words))]
		sb.WriteString(w)
		if line += len(w) + 1; line > 60 {
			sb.WriteByte('\n')
			line = 0
		} else {
			sb.WriteByte(' ')
		}
	}
	return []byte(sb.String()[:n])
}

// benchFiles are the files the read benchmarks read: stored as they are,
// and zlib-compressed (what sqlite3 -A and Options.Compress store).
var benchFiles = []struct {
	name     string
	size     int
	compress bool
}{
	{"raw-4KiB", 4 << 10, false},
	{"zlib-4KiB", 4 << 10, true},
	{"zlib-64KiB", 64 << 10, true},
	{"zlib-1MiB", 1 << 20, true},
}

// benchArchive returns an FS holding benchFiles.
func benchArchive(b *testing.B) *fsys.FS {
	db := openDB(b, nil)
	raw, z := fsys.New(db, nil), fsys.New(db, &fsys.Options{Compress: true})
	for _, bf := range benchFiles {
		f := raw
		if bf.compress {
			f = z
		}
		if err := f.WriteFile(bf.name, benchText(bf.size), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return raw
}

// BenchmarkReadFile: FS.ReadFile of one file, the path fs.ReadFile and
// the bench command's fs-read take.
func BenchmarkReadFile(b *testing.B) {
	f := benchArchive(b)
	for _, bf := range benchFiles {
		b.Run(bf.name, func(b *testing.B) {
			b.SetBytes(int64(bf.size))
			b.ReportAllocs()
			for b.Loop() {
				data, err := f.ReadFile(bf.name)
				if err != nil || len(data) != bf.size {
					b.Fatalf("ReadFile: %d bytes, %v", len(data), err)
				}
			}
		})
	}
}

// BenchmarkOpenRead: Open, a copy of the whole file (through its WriterTo,
// as io.Copy does, or through Read with a 32 KiB buffer, as http.ServeContent
// does) and Close.
func BenchmarkOpenRead(b *testing.B) {
	f := benchArchive(b)
	buf := make([]byte, 32<<10)
	for _, how := range []string{"WriteTo", "Read"} {
		for _, bf := range benchFiles {
			b.Run(fmt.Sprintf("%s/%s", how, bf.name), func(b *testing.B) {
				b.SetBytes(int64(bf.size))
				b.ReportAllocs()
				for b.Loop() {
					fl, err := f.Open(bf.name)
					if err != nil {
						b.Fatal(err)
					}
					var n int64
					if how == "WriteTo" {
						n, err = fl.(io.WriterTo).WriteTo(io.Discard)
					} else {
						n, err = io.CopyBuffer(io.Discard, struct{ io.Reader }{fl}, buf)
					}
					if err != nil || n != int64(bf.size) {
						b.Fatalf("copy: %d bytes, %v", n, err)
					}
					fl.Close()
				}
			})
		}
	}
}

// hostileFS opens sqlartest's hostile archive at path read-only, after
// copying it and adding sqlar_listing (by SQLite) when listing is set.
func hostileFS(t *testing.T, path string, listing bool) *fsys.FS {
	t.Helper()
	if listing {
		indexed := filepath.Join(t.TempDir(), "indexed.sqlar")
		sqltest.CopyFile(t, path, indexed, false)
		sqltest.Exec(t, indexed, "CREATE INDEX sqlar_listing ON sqlar(name, mode, mtime, sz)")
		dbtest.Check(t, indexed)
		path = indexed
	}
	db := dbtest.Open(t, path, &pagoda.Options{ReadOnly: true})
	return fsys.New(db, nil)
}

// stored returns the length of c's data.
func stored(c sqlartest.Case) uint64 {
	switch d := c.Data.(type) {
	case []byte:
		return uint64(len(d))
	case string:
		return uint64(len(d))
	}
	return 0
}

// streamBound is the most reading an open file may allocate, whatever it
// holds: a buffer and an inflater, and room for the rest of the call.
const streamBound = 4 << 20

// rowBound is what fsys may allocate beside: without sqlar_listing, it
// reads a file's mode, mtime and sz from the table's row, which pagoda's
// Table.Get assembles whole when it spills onto overflow pages (the
// stored bytes, twice that under the race detector; never the claim).
func rowBound(listing bool, stored uint64) uint64 {
	if listing {
		return 0
	}
	return 2*stored + stored/4
}

// readBound is the most ReadFile may allocate for c's data: the start
// inflate.go's rule 4 allows (max(1 MiB, 4 times the stored bytes)) and
// the doubling past it, with room for the rest of the call.
func readBound(c sqlartest.Case, listing bool) uint64 {
	return streamBound + 12*stored(c) + rowBound(listing, stored(c))
}

// readWays are the ways a test reads an open file whole: Read with a
// 32 KiB buffer (http.ServeContent, io.Copy to most writers), WriteTo
// (io.Copy to a file: fs extract, os.CopyFS), ReadAt from 0.
var readWays = []struct {
	name string
	read func(fl fs.File, w io.Writer) (int64, error)
}{
	{"Read", func(fl fs.File, w io.Writer) (int64, error) {
		return io.CopyBuffer(w, struct{ io.Reader }{fl}, make([]byte, 32<<10))
	}},
	{"WriteTo", func(fl fs.File, w io.Writer) (int64, error) {
		return fl.(io.WriterTo).WriteTo(w)
	}},
	{"ReadAt", func(fl fs.File, w io.Writer) (int64, error) {
		buf := make([]byte, 64<<10)
		var off int64
		for {
			n, err := fl.(io.ReaderAt).ReadAt(buf, off)
			w.Write(buf[:n])
			off += int64(n)
			if err == io.EOF {
				return off, nil
			}
			if err != nil {
				return off, err
			}
		}
	}},
}

// TestReadHostileArchive reads every row of sqlartest's hostile archive
// (SQLite wrote it) through the API: Stat, Lstat, ReadDir, WalkDir,
// ReadFile, ReadLink, Open and every way of reading an open file, and
// os.CopyFS out of it. Nothing may panic; names that leave the archive are
// never listed and are fs.ErrInvalid; a link out of it does not exist; a
// lying or negative sz is ErrCorrupt wherever the data is read, having
// yielded fewer bytes than it claims and allocated nothing by the claim
// (a 1 GiB and a 41 GiB claim among them).
func TestReadHostileArchive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hostile.sqlar")
	cases := sqlartest.WriteHostile(t, path)
	for _, listing := range []bool{false, true} {
		t.Run(fmt.Sprintf("listing=%v", listing), func(t *testing.T) {
			f := hostileFS(t, path, listing)
			listed := map[string]bool{}
			err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if _, err := d.Info(); err != nil {
					t.Errorf("WalkDir: Info of %s: %v", p, err)
				}
				listed[p] = true
				return nil
			})
			if err != nil {
				t.Errorf("WalkDir: %v", err)
			}
			root, err := f.ReadDir(".")
			if err != nil {
				t.Fatalf("ReadDir(.): %v", err)
			}
			for _, d := range root {
				if !listed[d.Name()] {
					t.Errorf("ReadDir(.) lists %q, WalkDir did not visit it", d.Name())
				}
			}
			for _, c := range cases {
				t.Run(strings.NewReplacer("/", "|").Replace(c.Name), func(t *testing.T) {
					t.Logf("%s (sz %d)", c.Why, c.Sz)
					checkHostile(t, f, c, listed[c.Name], listing)
				})
			}
			// os.CopyFS stops at the first damaged file, with an error
			// wrapping ErrCorrupt, having written only below its directory.
			top := t.TempDir()
			out := filepath.Join(top, "out")
			n := sqlartest.Allocated(func() { err = os.CopyFS(out, f) })
			if !errors.Is(err, pagoda.ErrCorrupt) {
				t.Errorf("os.CopyFS: %v, want an error wrapping ErrCorrupt", err)
			}
			var all uint64
			for _, c := range cases {
				all += stored(c)
			}
			if bound := streamBound + rowBound(listing, all); n > bound {
				t.Errorf("os.CopyFS allocated %d bytes, more than %d", n, bound)
			}
			onlyBelow(t, top, out)
		})
	}
}

// onlyBelow fails t if top holds anything but dir and what lies below it.
func onlyBelow(t *testing.T, top, dir string) {
	t.Helper()
	entries, err := os.ReadDir(top)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if filepath.Join(top, e.Name()) != dir {
			t.Errorf("written outside %s: %s", dir, filepath.Join(top, e.Name()))
		}
	}
}

// openErr opens name and closes it, returning Open's error.
func openErr(f *fsys.FS, name string) error {
	fl, err := f.Open(name)
	if err == nil {
		fl.Close()
	}
	return err
}

// checkHostile reads c through f's API and checks what c.Want says.
func checkHostile(t *testing.T, f *fsys.FS, c sqlartest.Case, listed, listing bool) {
	name := c.Name
	fi, statErr := f.Stat(name)
	li, lstatErr := f.Lstat(name)
	data, readErr := f.ReadFile(name)
	switch c.Want {
	case sqlartest.Reads, sqlartest.Hidden:
		if c.Want == sqlartest.Reads && !listed {
			t.Errorf("not listed")
		}
		if c.Want == sqlartest.Hidden && listed {
			t.Errorf("listed, below a link")
		}
		want := c.Content
		if c.Want == sqlartest.Hidden {
			want = []byte("evil\n")
		}
		if statErr != nil || fi.Size() != int64(len(want)) {
			t.Errorf("Stat: %v, %v", fi, statErr)
		}
		if readErr != nil || !bytes.Equal(data, want) {
			t.Errorf("ReadFile: %q, %v", data, readErr)
		}
		for _, way := range readWays {
			fl, err := f.Open(name)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			var buf bytes.Buffer
			if _, err := way.read(fl, &buf); err != nil || !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s: %d bytes, %v", way.name, buf.Len(), err)
			}
			fl.Close()
		}
	case sqlartest.Corrupt:
		if !listed {
			t.Errorf("not listed")
		}
		if statErr != nil || fi.Size() != max(c.Sz, 0) || lstatErr != nil || li.Size() != fi.Size() {
			t.Errorf("Stat: %v, %v; Lstat: %v, %v; want size %d", fi, statErr, li, lstatErr, max(c.Sz, 0))
		}
		var n uint64
		n = sqlartest.Allocated(func() { data, readErr = f.ReadFile(name) })
		checkPathErr(t, "ReadFile", readErr, "read", name, pagoda.ErrCorrupt)
		if readErr != nil && data != nil {
			t.Errorf("ReadFile returned %d bytes with its error", len(data))
		}
		if n > readBound(c, listing) {
			t.Errorf("ReadFile allocated %d bytes, more than %d", n, readBound(c, listing))
		}
		for _, way := range readWays {
			var got int64
			var err error
			n := sqlartest.Allocated(func() {
				var fl fs.File
				if fl, err = f.Open(name); err != nil {
					return
				}
				defer fl.Close()
				got, err = way.read(fl, io.Discard)
				if err != nil {
					// The damage stays: the next read fails the same way.
					if _, again := fl.Read(make([]byte, 1)); !errors.Is(again, pagoda.ErrCorrupt) {
						t.Errorf("%s: a read after the error: %v", way.name, again)
					}
				}
			})
			if err == nil || !errors.Is(err, pagoda.ErrCorrupt) {
				t.Errorf("%s: %d bytes, %v; want an error wrapping ErrCorrupt", way.name, got, err)
			}
			if got > 0 && got >= c.Sz {
				t.Errorf("%s: yielded %d bytes of a file whose sz %d lies", way.name, got, c.Sz)
			}
			if bound := streamBound + rowBound(listing, stored(c)); n > bound {
				t.Errorf("%s allocated %d bytes, more than %d", way.name, n, bound)
			}
		}
	case sqlartest.BadLink:
		if !listed {
			t.Errorf("not listed")
		}
		if lstatErr != nil || li.Mode().Type() != fs.ModeSymlink {
			t.Errorf("Lstat: %v, %v", li, lstatErr)
		}
		checkPathErr(t, "Stat", statErr, "stat", name, pagoda.ErrCorrupt)
		checkPathErr(t, "ReadFile", readErr, "read", name, pagoda.ErrCorrupt)
		checkPathErr(t, "Open", openErr(f, name), "open", name, pagoda.ErrCorrupt)
		_, err := f.ReadLink(name)
		checkPathErr(t, "ReadLink", err, "readlink", name, pagoda.ErrCorrupt)
	case sqlartest.Invalid:
		if fs.ValidPath(name) {
			t.Fatalf("%q is a valid path", name)
		}
		if listed {
			t.Errorf("listed")
		}
		checkPathErr(t, "Stat", statErr, "stat", name, fs.ErrInvalid)
		checkPathErr(t, "ReadFile", readErr, "read", name, fs.ErrInvalid)
		checkPathErr(t, "Open", openErr(f, name), "open", name, fs.ErrInvalid)
	case sqlartest.Outside:
		if !listed {
			t.Errorf("not listed")
		}
		if lstatErr != nil || li.Mode().Type() != fs.ModeSymlink {
			t.Errorf("Lstat: %v, %v", li, lstatErr)
		}
		if target, err := f.ReadLink(name); err != nil || target != c.Data {
			t.Errorf("ReadLink: %q, %v; want %q", target, err, c.Data)
		}
		checkPathErr(t, "Stat", statErr, "stat", name, fs.ErrNotExist)
		checkPathErr(t, "ReadFile", readErr, "read", name, fs.ErrNotExist)
		checkPathErr(t, "Open", openErr(f, name), "open", name, fs.ErrNotExist)
	case sqlartest.Directory:
		if !listed {
			t.Errorf("not listed")
		}
		if statErr != nil || !fi.IsDir() || fi.Size() != 0 {
			t.Errorf("Stat: %v, %v", fi, statErr)
		}
		checkPathErr(t, "ReadFile", readErr, "read", name, fsys.ErrIsDir)
		if list, err := f.ReadDir(name); err != nil || len(list) != 0 {
			t.Errorf("ReadDir: %v, %v", list, err)
		}
	default:
		t.Fatalf("no check for %v", c.Want)
	}
}
