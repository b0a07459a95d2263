package fsys_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
)

// FuzzArchive reads archives whose rows were put in the sqlar table
// directly, bypassing the FS: names that are not valid paths, duplicates
// in all but bytes, rows below files, links that loop or leave, data that
// is not what its size says, values of the wrong type. Reading them must
// not panic or hang; every listed name must be valid, listings sorted
// without duplicates, entries consistent with what Lstat says of them, and
// every error a *fs.PathError. The same rows read the same with the
// listing index as without it.
//
// go test -run '^$' -fuzz FuzzArchive ./fsys
func FuzzArchive(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		noTable, rows := decodeFuzzRows(in)
		var seen [2]string
		for i, listing := range []bool{false, true} {
			// No fsync: the fuzzer runs this thousands of times.
			db, err := pagoda.Open(filepath.Join(t.TempDir(), "a.db"), &pagoda.Options{Sync: pagoda.SyncOff})
			if err != nil {
				t.Fatal(err)
			}
			if !noTable {
				insertFuzzRows(t, db, listing, rows)
			}
			var b strings.Builder
			n := checkArchive(t, fsys.New(db, nil), &b)
			seen[i] = b.String()
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d rows, table %v, listing index %v: the walk visits %d entries", len(rows), !noTable, listing, n)
		}
		if seen[0] != seen[1] {
			t.Errorf("the archive reads differently with the listing index:\nwithout:\n%s\nwith:\n%s", seen[0], seen[1])
		}
	})
}

// fuzzRow is one row of a fuzzed archive, before it is encoded.
type fuzzRow struct {
	nameKind byte // 0-4 TEXT, 5 BLOB, 6 INTEGER, 7 NULL
	name     string
	modeSel  byte // see fuzzModes; 7 reads four bytes of mode
	mode     uint32
	dataSel  byte // see decodeFuzzRows
	data     []byte
	szSel    byte // 0 stored length, 1 plain length, 2 -1, 3 0, 4 small, 5 eight bytes
	sz       int64
}

// fuzzModes are the modes a row may have: a regular file, a directory, a
// link, an executable, a FIFO, no type at all, a socket; then a mode of
// four raw bytes, TEXT, and REAL.
var fuzzModes = []any{int64(0o100644), int64(0o40755), int64(0o120777), int64(0o100755), int64(0o10644), int64(0), int64(0o140755), nil, "text mode", 16877.5}

// fuzzInput reads a fuzzer's bytes; past the end it reads zeros.
type fuzzInput struct {
	b   []byte
	pos int
}

func (r *fuzzInput) next() byte {
	if r.pos >= len(r.b) {
		r.pos++
		return 0
	}
	r.pos++
	return r.b[r.pos-1]
}

func (r *fuzzInput) take(n int) []byte {
	out := make([]byte, 0, n)
	for range n {
		out = append(out, r.next())
	}
	return out
}

func (r *fuzzInput) done() bool { return r.pos >= len(r.b) }

// decodeFuzzRows splits the fuzzer's bytes into a flags byte (bit 1: there
// is no table at all) and rows of the form
//
//	nameKind nameLen name modeSel [mode x4] dataSel dataLen data szSel [sz]
//
// returned as the values to insert: name, mode, mtime, sz, data.
func decodeFuzzRows(in []byte) (noTable bool, rows [][]any) {
	r := &fuzzInput{b: in}
	noTable = r.next()&2 != 0
	for i := 0; i < 48 && !r.done(); i++ {
		var name any
		kind := r.next() % 8
		raw := r.take(int(r.next() % 64))
		switch kind {
		case 5:
			name = raw
		case 6:
			name = int64(len(raw))
		case 7:
			name = nil
		default:
			name = string(raw)
		}
		sel := int(r.next()) % len(fuzzModes)
		mode := fuzzModes[sel]
		if sel == 7 {
			mode = int64(binary.BigEndian.Uint32(r.take(4)))
		}
		var data any
		plain := r.take(int(r.next()))
		stored := plain
		switch r.next() % 6 {
		case 0:
			data, stored = nil, nil
		case 1:
			data = plain
		case 2:
			data = string(plain)
		case 3:
			stored = zlibBytes(plain)
			data = stored
		case 4:
			data, stored = int64(len(plain)), nil
		case 5:
			data, stored = []byte{}, nil
		}
		var sz int64
		switch r.next() % 6 {
		case 0:
			sz = int64(len(stored))
		case 1:
			sz = int64(len(plain))
		case 2:
			sz = -1
		case 3:
			sz = 0
		case 4:
			sz = int64(int8(r.next()))
		case 5:
			sz = int64(binary.BigEndian.Uint64(r.take(8)))
		}
		rows = append(rows, []any{name, mode, int64(int8(r.next())) * 1e7, sz, data})
	}
	return noTable, rows
}

// encodeFuzzRows is decodeFuzzRows's inverse, for the seeds.
func encodeFuzzRows(rows ...fuzzRow) []byte {
	b := []byte{0}
	for _, r := range rows {
		b = append(b, r.nameKind, byte(len(r.name)))
		b = append(b, r.name...)
		b = append(b, r.modeSel)
		if r.modeSel == 7 {
			b = binary.BigEndian.AppendUint32(b, r.mode)
		}
		b = append(b, byte(len(r.data)))
		b = append(b, r.data...)
		b = append(b, r.dataSel, r.szSel)
		switch r.szSel {
		case 4:
			b = append(b, byte(int8(r.sz)))
		case 5:
			b = binary.BigEndian.AppendUint64(b, uint64(r.sz))
		}
		b = append(b, 100) // mtime 1e9
	}
	return b
}

// insertFuzzRows creates the table (and the listing index) and inserts
// the rows that it takes: a duplicate name is refused by the primary key
// and skipped.
func insertFuzzRows(t *testing.T, db *pagoda.DB, listing bool, rows [][]any) {
	t.Helper()
	err := db.Update(func(tx *pagoda.Tx) error {
		tab, err := tx.CreateTable(sqlite3Schema)
		if err != nil {
			return err
		}
		if listing {
			if _, err := tx.CreateIndex("CREATE INDEX sqlar_listing ON sqlar(name, mode, mtime, sz)"); err != nil {
				return err
			}
		}
		for _, r := range rows {
			if _, err := tab.Insert(r...); err != nil && !errors.Is(err, pagoda.ErrExists) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkArchive reads everything f lists, and checks what it can of it. It
// writes what it read to out, one line per entry, and returns the number
// of entries the walk visited.
func checkArchive(t *testing.T, f *fsys.FS, out *strings.Builder) int {
	t.Helper()
	pathErr := func(what string, err error) bool {
		t.Helper()
		if err == nil {
			return false
		}
		if _, ok := err.(*fs.PathError); !ok {
			t.Errorf("%s: error %v is a %T, not a *fs.PathError", what, err, err)
		}
		return true
	}
	visited := 0
	err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
		if !fs.ValidPath(p) {
			t.Errorf("WalkDir visits %q, not a valid path", p)
		}
		if visited++; visited > 100000 {
			t.Fatal("WalkDir visits more than 100000 entries: a cycle?")
		}
		if pathErr("WalkDir "+p, err) {
			fmt.Fprintf(out, "%q: walk: %s\n", p, fuzzErrClass(err))
			return nil
		}
		if p != "." {
			checkEntry(t, f, p, d, pathErr, out)
		}
		if d.IsDir() {
			list, err := f.ReadDir(p)
			fmt.Fprintf(out, "%q: ReadDir: %d entries, %s\n", p, len(list), fuzzErrClass(err))
			if pathErr("ReadDir "+p, err) {
				return nil
			}
			for i, e := range list {
				n := e.Name()
				if !fs.ValidPath(n) || strings.Contains(n, "/") || n == "." {
					t.Errorf("ReadDir(%q) lists %q, not a valid name", p, n)
				}
				if i > 0 && list[i-1].Name() >= n {
					t.Errorf("ReadDir(%q) lists %q after %q: not sorted, or a duplicate", p, n, list[i-1].Name())
				}
			}
			// The same listing through an open directory, n at a time.
			if fl, err := f.Open(p); !pathErr("Open "+p, err) {
				var names []string
				if rd, ok := fl.(fs.ReadDirFile); ok {
					for {
						part, err := rd.ReadDir(2)
						for _, e := range part {
							names = append(names, e.Name())
						}
						if err == io.EOF {
							break
						}
						if pathErr("File.ReadDir "+p, err) {
							break
						}
					}
				} else {
					t.Errorf("Open(%q) of a directory is not a ReadDirFile", p)
				}
				fl.Close()
				var want []string
				for _, e := range list {
					want = append(want, e.Name())
				}
				if !slices.Equal(names, want) && names != nil {
					t.Errorf("File.ReadDir(%q) lists %q, ReadDir %q", p, names, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("WalkDir: %v", err)
	}
	for _, pattern := range []string{"*", "*/*", "d*/*"} {
		matches, err := f.Glob(pattern)
		fmt.Fprintf(out, "Glob(%q): %q\n", pattern, matches)
		if err != nil {
			t.Errorf("Glob(%q): %v", pattern, err)
		}
		for i, m := range matches {
			if !fs.ValidPath(m) {
				t.Errorf("Glob(%q) matches %q, not a valid path", pattern, m)
			}
			if i > 0 && matches[i-1] == m {
				t.Errorf("Glob(%q) matches %q twice", pattern, m)
			}
		}
	}
	return visited
}

// checkEntry reads entry p, which d listed: Lstat must agree with d, and
// whatever else reads it must fail cleanly or agree.
func checkEntry(t *testing.T, f *fsys.FS, p string, d fs.DirEntry, pathErr func(string, error) bool, out *strings.Builder) {
	t.Helper()
	fmt.Fprintf(out, "%q: listed as %v\n", p, d)
	defer fmt.Fprintln(out)
	if d.Name() != path.Base(p) {
		t.Errorf("%s: listed as %q", p, d.Name())
	}
	li, err := f.Lstat(p)
	if pathErr("Lstat "+p, err) {
		t.Errorf("%s: listed, but Lstat fails: %v", p, err)
		return
	}
	info, err := d.Info()
	if pathErr("Info "+p, err) {
		return
	}
	if li.Mode() != info.Mode() || li.Size() != info.Size() || !li.ModTime().Equal(info.ModTime()) || li.Name() != d.Name() || d.Type() != li.Mode().Type() {
		t.Errorf("%s: listed as %v, Lstat says %v", p, fs.FormatFileInfo(info), fs.FormatFileInfo(li))
	}
	if li.Size() < 0 {
		t.Errorf("%s: size %d", p, li.Size())
	}
	si, serr := f.Stat(p)
	fmt.Fprintf(out, "\tStat: %v %s", si, fuzzErrClass(serr))
	if !pathErr("Stat "+p, serr) && li.Mode().Type() != fs.ModeSymlink && si.Mode() != li.Mode() {
		t.Errorf("%s: Stat says %v, Lstat %v", p, si.Mode(), li.Mode())
	}
	if li.Mode().Type() == fs.ModeSymlink {
		target, err := f.ReadLink(p)
		fmt.Fprintf(out, "\tReadLink: %q %s", target, fuzzErrClass(err))
		pathErr("ReadLink "+p, err)
	} else if _, err := f.ReadLink(p); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("%s: ReadLink of a %v: %v, want fs.ErrInvalid", p, li.Mode().Type(), err)
	}
	if d.IsDir() {
		return
	}
	data, err := f.ReadFile(p)
	fmt.Fprintf(out, "\tReadFile: %d bytes %x %s", len(data), sha256.Sum256(data), fuzzErrClass(err))
	if pathErr("ReadFile "+p, err) {
		data = nil
	} else if serr == nil && si.Mode().IsRegular() && int64(len(data)) != si.Size() {
		t.Errorf("%s: ReadFile reads %d bytes, Stat says %d", p, len(data), si.Size())
	}
	fl, err := f.Open(p)
	if pathErr("Open "+p, err) {
		return
	}
	defer fl.Close()
	if fi, err := fl.Stat(); !pathErr("File.Stat "+p, err) && serr == nil && fi.Mode() != si.Mode() {
		t.Errorf("%s: File.Stat says %v, Stat %v", p, fi.Mode(), si.Mode())
	}
	if serr == nil && si.IsDir() {
		return
	}
	got, err := io.ReadAll(fl)
	fmt.Fprintf(out, "\tRead: %d bytes %s", len(got), fuzzErrClass(err))
	if !pathErr("Read "+p, err) && data != nil && !bytes.Equal(got, data) {
		t.Errorf("%s: Open and Read read %d bytes, ReadFile %d", p, len(got), len(data))
	}
}

// fuzzErrClass names the kind of err, for comparing two reads of an
// archive.
func fuzzErrClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, pagoda.ErrCorrupt):
		return "corrupt"
	case errors.Is(err, pagoda.ErrUnsupported):
		return "unsupported"
	}
	return errClass(err)
}

// fuzzSeeds are archives worth starting from.
func fuzzSeeds() [][]byte {
	text := func(name string, modeSel, dataSel byte, data string) fuzzRow {
		return fuzzRow{name: name, modeSel: modeSel, dataSel: dataSel, data: []byte(data), szSel: 1}
	}
	dir := func(name string) fuzzRow { return fuzzRow{name: name, modeSel: 1, dataSel: 0, szSel: 3} }
	link := func(name, target string) fuzzRow {
		return fuzzRow{name: name, modeSel: 2, dataSel: 2, data: []byte(target), szSel: 2}
	}
	long := strings.Repeat("compressible text ", 12)
	corrupt := []fuzzRow{fuzzRow{name: "not-zlib", dataSel: 1, data: []byte("not zlib"), szSel: 4, sz: 100},
		fuzzRow{name: "null-data", dataSel: 0, szSel: 4, sz: 10},
		fuzzRow{name: "short", dataSel: 3, data: []byte(long), szSel: 4, sz: 120},
		fuzzRow{name: "negative", dataSel: 1, data: []byte("abc"), szSel: 4, sz: -5},
		fuzzRow{name: "int-data", dataSel: 4, data: []byte("abc"), szSel: 1},
		fuzzRow{name: "text-mode", modeSel: 8, dataSel: 1, data: []byte("x"), szSel: 1},
		fuzzRow{name: "real-mode", modeSel: 9, dataSel: 1, data: []byte("x"), szSel: 1},
		fuzzRow{name: "fifo", modeSel: 4, dataSel: 1, data: []byte("x"), szSel: 1},
		fuzzRow{name: "raw-mode", modeSel: 7, mode: 0o170777, dataSel: 1, data: []byte("x"), szSel: 1},
		fuzzRow{name: "dir-with-data", modeSel: 1, dataSel: 1, data: []byte("x"), szSel: 1},
	}
	return [][]byte{
		// Nothing: no table at all, and an empty table.
		{},
		{2},
		encodeFuzzRows(),
		// An archive as sqlite3 -A or pagoda makes it.
		encodeFuzzRows(dir("d"), text("d/f", 0, 1, "raw"), text("d/z", 3, 3, long),
			text("d.x", 0, 1, "between d and d/"), text("d-y/g", 0, 1, "implicit parent"),
			text("d!z", 0, 2, "text data"), dir("d0"), link("l", "d"), text("e", 0, 5, "")),
		// Names that are not valid paths.
		encodeFuzzRows(text("..", 0, 1, "x"), text("/abs", 0, 1, "x"), text("a/", 0, 1, "x"),
			text("a//b", 0, 1, "x"), text("./a", 0, 1, "x"), text("a/../../b", 0, 1, "x"),
			text("\xff", 0, 1, "x"), text("", 0, 1, "x"), text("d/\xfe/x", 0, 1, "x"), text("a/./b", 0, 1, "x"),
			text(".", 0, 1, "x"), text("a/.", 0, 1, "x"), text("ok", 0, 1, "x"),
			fuzzRow{nameKind: 5, name: "blob", modeSel: 0, dataSel: 1, data: []byte("x"), szSel: 1},
			fuzzRow{nameKind: 6, name: "12", modeSel: 0, dataSel: 1, data: []byte("x"), szSel: 1},
			fuzzRow{nameKind: 7, modeSel: 0, dataSel: 1, data: []byte("x"), szSel: 1}),
		// Data that is not what its size says, and values of other types.
		encodeFuzzRows(corrupt...),
		// Links that chain, loop, dangle or leave; rows below a file and
		// below a link.
		encodeFuzzRows(dir("d"), text("d/f", 0, 1, "f"), link("chain", "l1"), link("l1", "d/../d/f"),
			link("loop", "loop"), link("a", "b"), link("b", "a"), link("up", "../x"), link("abs", "/etc/passwd"),
			link("dot", "."), link("empty", ""), link("todir", "d"), text("todir/hidden", 0, 1, "below a link"),
			text("d/f/below", 0, 1, "below a file"), link("d/deep", "../todir/f"), fuzzRow{name: "null-target", modeSel: 2, dataSel: 0, szSel: 2}),
		// Deep directories that only exist as prefixes.
		encodeFuzzRows(text("x/y/z/w/v/u/t/s", 0, 1, "deep"), text("x/y/z/w2", 0, 1, "deep"), text("x/y.", 0, 1, "x")),
	}
}
