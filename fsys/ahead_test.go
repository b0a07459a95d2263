package fsys_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
)

// A walk's listings are read ahead (see ahead.go): these tests check that
// what it returns is what listing each directory on its own returns.

// listingLine is one entry of a listing, everything ReadDir tells of it.
func listingLine(e fs.DirEntry) string {
	fi, err := e.Info()
	if err != nil {
		return fmt.Sprintf("%s %v info: %v", e.Name(), e.Type(), err)
	}
	return fmt.Sprintf("%s %v %v %d %d", e.Name(), e.Type(), fi.Mode(), fi.Size(), fi.ModTime().Unix())
}

// listingOf returns a listing as lines, or the error's class.
func listingOf(list []fs.DirEntry, err error) string {
	if err != nil {
		return "error: " + errClass(err) + ": " + strings.TrimPrefix(err.Error(), "readdir ")
	}
	lines := make([]string, len(list))
	for i, e := range list {
		lines[i] = listingLine(e)
	}
	return strings.Join(lines, "\n")
}

// alone lists dir through an FS made for this one call, which has listed
// nothing before and so reads nothing ahead.
func alone(db *pagoda.DB, dir string) string {
	return listingOf(fsys.New(db, nil).ReadDir(dir))
}

// walkLines walks f from the root and returns, for every directory, its
// listing, in walk order.
func walkLines(t *testing.T, f fs.FS) (dirs, listings []string) {
	t.Helper()
	err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			listings = append(listings, "error: "+errClass(err))
			return nil
		}
		return nil
	})
	if err != nil {
		t.Fatalf("WalkDir: %v", err)
	}
	// The walk above read ahead; list again in the same order, recording.
	var visit func(dir string)
	visit = func(dir string) {
		list, err := fs.ReadDir(f, dir)
		dirs = append(dirs, dir)
		listings = append(listings, listingOf(list, err))
		for _, e := range list {
			if e.IsDir() {
				visit(path.Join(dir, e.Name()))
			}
		}
	}
	visit(".")
	return dirs, listings
}

// aheadElems collide as modelElems do: "d.x", "d-y" and "d!z" sort between
// "d" and "d/", "d0" just after. aheadInvalid are not valid elements.
var (
	aheadElems   = []string{"a", "d", "d.x", "d-y", "d!z", "d0", "é"}
	aheadInvalid = []string{"..", ".", "", "\xff"}
)

// randomArchive fills db's sqlar table with rows of random names below
// random directories: some directories have rows, some only prefix other
// names; some names are files or links with names below them, a few hold
// invalid elements.
func randomArchive(t *testing.T, db *pagoda.DB, r *rand.Rand, listing bool, n int) {
	t.Helper()
	seen := map[string]bool{}
	var rows [][]any
	for range n {
		var elems []string
		for range 1 + r.IntN(5) {
			if r.IntN(12) == 0 {
				elems = append(elems, aheadInvalid[r.IntN(len(aheadInvalid))])
			} else {
				elems = append(elems, aheadElems[r.IntN(len(aheadElems))])
			}
		}
		for i := range elems {
			name := strings.Join(elems[:i+1], "/")
			if seen[name] {
				continue
			}
			last := i == len(elems)-1
			var mode int64
			switch x := r.IntN(20); {
			case !last && x < 10:
				continue // a directory without a row
			case !last && x < 18, last && x < 4:
				mode = 0o40755
			case x < 19, last && x < 6:
				mode = 0o120777 // a link, some with names below
			default:
				mode = 0o100644 // a file, some with names below
			}
			seen[name] = true
			var data any = []byte(name)
			sz := int64(len(name))
			if mode&0o170000 == 0o40000 {
				data, sz = nil, 0
			}
			rows = append(rows, []any{name, mode, int64(1e9 + r.IntN(1000)), sz, data})
		}
	}
	if r.IntN(2) == 0 {
		rows = append(rows, []any{int64(7), int64(0o100644), int64(1e9), int64(0), []byte{}},
			[]any{[]byte("d/blob"), int64(0o100644), int64(1e9), int64(0), []byte{}})
	}
	insertRows(t, db, listing, rows...)
}

// TestReadAheadLikeOneListing: on random archives (names that sort
// between a directory and its slash, directories without rows, files and
// links with names below them, invalid names), every listing a walk gets
// is the one an FS that has listed nothing before returns, and so is
// every listing taken in a random order after its parent's.
func TestReadAheadLikeOneListing(t *testing.T) {
	for seed := range uint64(40) {
		listing := seed%4 != 3
		t.Run(fmt.Sprintf("seed=%d/listing=%v", seed, listing), func(t *testing.T) {
			db, err := pagoda.Open(filepath.Join(t.TempDir(), "a.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			r := rand.New(rand.NewPCG(seed, 5))
			randomArchive(t, db, r, listing, 10+r.IntN(150))
			f := fsys.New(db, nil)
			dirs, got := walkLines(t, f)
			for i, dir := range dirs {
				if want := alone(db, dir); got[i] != want {
					t.Fatalf("ReadDir(%q) in a walk:\n%s\nlisted alone:\n%s", dir, got[i], want)
				}
			}
			// A parent, then its directories in a random order, and
			// names that are not directories of the walk.
			g := fsys.New(db, nil)
			var names []string
			for _, row := range archiveRows(t, db, nil) {
				if f := strings.Fields(row); len(f) > 1 {
					if n, err := strconv.Unquote(f[1]); err == nil && fs.ValidPath(n) {
						names = append(names, n)
					}
				}
			}
			for range 3 * len(dirs) {
				dir := dirs[r.IntN(len(dirs))]
				if r.IntN(3) == 0 && len(names) > 0 {
					dir = names[r.IntN(len(names))] // a file, a link, a directory
				}
				if got, want := listingOf(g.ReadDir(dir)), alone(db, dir); got != want {
					t.Fatalf("ReadDir(%q) after others:\n%s\nlisted alone:\n%s", dir, got, want)
				}
			}
		})
	}
}

// TestReadAheadOddNames: names below a file and below a link, a
// directory without a row whose name sorts after a sibling's, an empty
// directory: each listed after its parent's walk-ahead, as alone.
func TestReadAheadOddNames(t *testing.T) {
	db, err := pagoda.Open(filepath.Join(t.TempDir(), "a.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	row := func(name string, mode int64, data string) []any {
		return []any{name, mode, int64(1e9), int64(len(data)), []byte(data)}
	}
	insertRows(t, db, true,
		row("top/d/file", 0o100644, "f"),
		row("top/d/file/x", 0o100644, "below a file"),
		row("top/d/link", 0o120777, "../e"),
		row("top/d/link/y", 0o100644, "below a link"),
		row("top/d/sub", 0o40755, ""),
		row("top/d/imp!", 0o100644, "sorts before imp/"),
		row("top/d/imp.x", 0o100644, "sorts before imp/"),
		row("top/d/imp/q", 0o100644, "in a directory without a row"),
		row("top/d/imp/r/s", 0o100644, ""),
		row("top/e/z", 0o100644, "the link's target"),
	)
	dirs := []string{"top/d", "top/d/file", "top/d/link", "top/d/sub", "top/d/imp", "top/d/imp/r", "top/d/file/x", "top/d/link/y", "top/e", "top/d/nothing"}
	for _, dir := range dirs {
		f := fsys.New(db, nil)
		for _, d := range []string{".", "top", dir} {
			if got, want := listingOf(f.ReadDir(d)), alone(db, d); got != want {
				t.Errorf("ReadDir(%q) after its parents:\n%s\nwant:\n%s", d, got, want)
			}
		}
	}
	// Sanity: what alone says of them.
	for dir, want := range map[string]string{
		"top/d/file": "error: not a directory", "top/d/link": "z ", "top/d/sub": "",
		"top/d/imp": "q ", "top/d/nothing": "error: file does not exist",
	} {
		if got := alone(db, dir); !strings.HasPrefix(got, want) {
			t.Errorf("ReadDir(%q) alone = %s, want %s...", dir, got, want)
		}
	}
	if got := alone(db, "top/d"); !strings.HasPrefix(got, "file -") || !strings.Contains(got, "\nimp!") || strings.Index(got, "\nimp d") > strings.Index(got, "\nimp!") {
		t.Errorf("ReadDir(top/d) alone =\n%s", got)
	}
}

// TestReadAheadSeesCommits: listings read ahead belong to the snapshot
// they were read in. A commit made elsewhere (another FS, the table
// itself) between a walk's listings shows in the listings after it.
func TestReadAheadSeesCommits(t *testing.T) {
	for _, how := range []string{"other FS", "table", "same FS"} {
		t.Run(how, func(t *testing.T) {
			db, err := pagoda.Open(filepath.Join(t.TempDir(), "a.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			f := fsys.New(db, nil)
			for _, name := range []string{"a/b/c/f1", "a/b/f2", "a/g/f3", "z/f4"} {
				if err := f.MkdirAll(path.Dir(name), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := f.WriteFile(name, []byte(name), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// "a", listed after the root, reads the listings of a/b,
			// a/b/c and a/g ahead.
			for _, dir := range []string{".", "a"} {
				if _, err := f.ReadDir(dir); err != nil {
					t.Fatal(err)
				}
			}
			switch how {
			case "other FS":
				g := fsys.New(db, nil)
				if err := g.WriteFile("a/b/c/new", []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := g.Remove("a/g/f3"); err != nil {
					t.Fatal(err)
				}
			case "table":
				insertRows(t, db, true, []any{"a/b/c/new", int64(0o100600), int64(1e9), int64(1), []byte("x")})
				err := db.Update(func(tx *pagoda.Tx) error {
					return fsys.New(db, nil).In(tx).Remove("a/g/f3")
				})
				if err != nil {
					t.Fatal(err)
				}
			case "same FS":
				if err := f.WriteFile("a/b/c/new", []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := f.Remove("a/g/f3"); err != nil {
					t.Fatal(err)
				}
			}
			for _, dir := range []string{"a/b", "a/b/c", "a/g"} {
				if got, want := listingOf(f.ReadDir(dir)), alone(db, dir); got != want {
					t.Errorf("ReadDir(%q) after the commit:\n%s\nwant:\n%s", dir, got, want)
				}
			}
			if got := listingOf(f.ReadDir("a/b/c")); !strings.Contains(got, "new ") {
				t.Errorf("ReadDir(a/b/c) = %s, want the new file", got)
			}
		})
	}
}

// TestReadAheadLargeTree: a tree with more entries than a view reads
// ahead (and single directories larger than that) walks as it lists.
func TestReadAheadLargeTree(t *testing.T) {
	db, err := pagoda.Open(filepath.Join(t.TempDir(), "a.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows [][]any
	add := func(name string) {
		rows = append(rows, []any{name, int64(0o100644), int64(1e9), int64(0), []byte{}})
	}
	for i := range 6000 {
		add(fmt.Sprintf("top/flat/f%05d", i)) // one directory of 6,000
	}
	for i := range 9000 {
		add(fmt.Sprintf("top/deep/d%02d/e%d/f%03d", i%30, i%7, i)) // 210 directories
	}
	add("top/zz/last")
	insertRows(t, db, true, rows...)
	f := fsys.New(db, nil)
	for range 2 {
		dirs, got := walkLines(t, f)
		if len(dirs) != 1+1+1+1+30+210+1 {
			t.Errorf("walked %d directories", len(dirs))
		}
		for i, dir := range dirs {
			if want := alone(db, dir); got[i] != want {
				t.Fatalf("ReadDir(%q) in a walk: %d bytes of listing, alone %d", dir, len(got[i]), len(want))
			}
		}
	}
}

// TestReadAheadMalformedEntry: an index entry a listing cannot read
// fails the listings that meet it, read ahead or not, and no other: the
// walk's listings are those of directories listed alone.
func TestReadAheadMalformedEntry(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "a.db")
	db, err := pagoda.Open(dbPath, nil) // damaged below on purpose: not checked
	if err != nil {
		t.Fatal(err)
	}
	// top/b's first entries are more than a listing of top steps over
	// before it seeks past top/b: listed alone, top does not meet bad.
	names := []string{"top/a/f", "top/b/bad", "top/b/c/f", "top/b/c/g", "top/d/f", "top/d/e/f"}
	for i := range 12 {
		names = append(names, fmt.Sprintf("top/b/a%02d", i))
	}
	var rows [][]any
	for _, name := range names {
		rows = append(rows, []any{name, int64(0o100644), int64(1e9), int64(0), []byte{}})
	}
	insertRows(t, db, true, rows...)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Break the header of top/b/bad's entry in the listing index: its
	// length (the record's first byte) beyond the record.
	b, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	broken := 0
	for i := bytes.Index(b, []byte("top/b/bad")); i >= 0; {
		page := b[i/pageSize*pageSize:]
		if i/pageSize == 0 {
			page = page[100:]
		}
		const indexLeaf = 0x0a
		if page[0] == indexLeaf && b[i-6] == 6 { // the listing index: five fields
			b[i-6] = 0x7f
			broken++
		}
		j := bytes.Index(b[i+1:], []byte("top/b/bad"))
		if j < 0 {
			break
		}
		i += 1 + j
	}
	if broken != 1 {
		t.Fatalf("broke %d entries, want 1", broken)
	}
	if err := os.WriteFile(dbPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if db, err = pagoda.Open(dbPath, &pagoda.Options{ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := alone(db, "top/b"); !strings.HasPrefix(got, "error: ") {
		t.Errorf("ReadDir(top/b) = %s, want an error", got)
	}
	for _, dir := range []string{"top", "top/d/e"} {
		if got := alone(db, dir); got == "" || strings.HasPrefix(got, "error: ") {
			t.Errorf("ReadDir(%s) = %s, want its entries", dir, got)
		}
	}
	for _, order := range [][]string{
		{".", "top", "top/a", "top/b", "top/b/c", "top/d", "top/d/e"},
		{".", "top", "top/d", "top/d/e", "top/b/c", "top/a", "top/b"},
	} {
		f := fsys.New(db, nil)
		for _, dir := range order {
			if got, want := listingOf(f.ReadDir(dir)), alone(db, dir); got != want {
				t.Errorf("ReadDir(%q) after %v:\n%s\nwant:\n%s", dir, order, got, want)
			}
		}
	}
}

// TestReadAheadConcurrent: walks in several goroutines over one FS, with a
// writer committing, each see listings of one snapshot or the next.
func TestReadAheadConcurrent(t *testing.T) {
	db, err := pagoda.Open(filepath.Join(t.TempDir(), "a.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := fsys.New(db, nil)
	for i := range 200 {
		name := fmt.Sprintf("d%d/e%d/f%d", i%5, i%11, i)
		if err := f.MkdirAll(path.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := f.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 4)
	for range 3 {
		go func() {
			for range 30 {
				n := 0
				err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						n++
					}
					return err
				})
				if err != nil || n < 200 {
					done <- fmt.Errorf("walk: %d files, %v", n, err)
					return
				}
			}
			done <- nil
		}()
	}
	go func() {
		for i := range 30 {
			if err := f.WriteFile(fmt.Sprintf("d%d/e%d/new%d", i%5, i%11, i), nil, 0o644); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var errs []error
	for range 4 {
		errs = append(errs, <-done)
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	dirs, got := walkLines(t, f)
	for i, dir := range dirs {
		if want := alone(db, dir); got[i] != want {
			t.Fatalf("ReadDir(%q) after the writes:\n%s\nwant:\n%s", dir, got[i], want)
		}
	}
	if got := listingOf(f.ReadDir("d4/e7")); !strings.Contains(got, "new29 ") {
		t.Errorf("ReadDir(d4/e7) = %s, want new29 in it", got)
	}
}
