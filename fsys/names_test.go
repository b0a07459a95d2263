package fsys_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"maps"
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

// dotArchive writes tree to a new directory, adds links (name: target),
// and archives the directory with `sqlite3 PATH -Ac ARGS...` run inside
// it (args "." makes "./" names); it returns the archive's path, after
// checking that sqlite3 stored the names wanted (prefix).
func dotArchive(t *testing.T, tree fstest.MapFS, links map[string]string, prefix string, args ...string) string {
	t.Helper()
	cli := sqliteCLI(t)
	src := filepath.Join(t.TempDir(), "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, src, tree)
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(src, name)); err != nil {
			t.Fatal(err)
		}
		if dir := filepath.Dir(name); dir != "." { // its directory's time, as the tree has it
			mt := tree[dir].ModTime
			if err := os.Chtimes(filepath.Join(src, dir), mt, mt); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "dot.sqlar")
	run(t, src, cli, append([]string{path, "-Ac"}, args...)...)
	for name := range readSQLar(t, path) {
		if name != "." && !strings.HasPrefix(name, prefix) {
			t.Fatalf("sqlite3 -Ac %s stored %q, not a %q name", strings.Join(args, " "), name, prefix)
		}
	}
	return path
}

// TestNamesSQLite3Dot reads an archive made by the real `sqlite3 -Ac .`
// (rows ".", "./a.txt", "./dir", ...) through every read of the FS: a
// walk equal to the tree (modes, times, sizes, content), fstest.TestFS
// on it and on a Sub, ReadDir, Stat, Lstat, Open and Read, ReadFile,
// Glob, symbolic links (stored by sqlite3 as S_IFLNK rows), in the FS's
// own transactions and In one; names with "./" are invalid io/fs names.
func TestNamesSQLite3Dot(t *testing.T) {
	tree := trees()["basic"]
	links := map[string]string{"link": "dir/sub/c", "dir/up": "../a.txt", "dirlink": "dir/sub"}
	path := dotArchive(t, tree, links, "./", ".")
	db := dbtest.Open(t, path, nil)
	f := fsys.New(db, nil)

	names := slices.Collect(maps.Keys(tree))
	withLinks := append(slices.Clone(names), slices.Collect(maps.Keys(links))...)
	if err := fstest.TestFS(f, withLinks...); err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *pagoda.Tx) error { return fstest.TestFS(f.In(tx), withLinks...) }); err != nil {
		t.Fatal(err)
	}
	// The walk, links apart, is the tree.
	plain := fstest.MapFS{}
	for _, name := range names {
		plain[name] = tree[name]
	}
	walked := fstest.MapFS{}
	err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			walked[p] = tree[p]
		} else if _, ok := links[p]; !ok {
			t.Errorf("walk: %s is a link, and not one of %v", p, links)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, fsWithout{f, links}, walked)
	if len(walked) != len(plain) {
		t.Errorf("the walk saw %d entries besides links, the tree has %d", len(walked), len(plain))
	}

	list, err := f.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range list {
		got = append(got, d.Name())
	}
	want := []string{"a.txt", "dir", "dir-y", "dir.x", "dirlink", "empty", "emptydir", "link", "ünïcode dir"}
	if !slices.Equal(got, want) {
		t.Errorf("ReadDir(.) = %q, want %q", got, want)
	}
	if fi, err := f.Stat("dir/sub/c"); err != nil || fi.Size() != 1 || fi.Mode() != 0o640 {
		t.Errorf("Stat(dir/sub/c) = %v, %v", fi, err)
	}
	fl, err := f.Open("dir/big")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(fl)
	fl.Close()
	if err != nil || !bytes.Equal(data, tree["dir/big"].Data) {
		t.Errorf("Open(dir/big) and read: %d bytes, %v", len(data), err)
	}
	// Links resolve within the "./" form.
	for name, want := range map[string]string{"link": "c", "dir/up": "hello\n", "dirlink/c": "c"} {
		if data, err := f.ReadFile(name); err != nil || string(data) != want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", name, data, err, want)
		}
	}
	if target, err := f.ReadLink("dir/up"); err != nil || target != "../a.txt" {
		t.Errorf("ReadLink(dir/up) = %q, %v", target, err)
	}
	if fi, err := f.Lstat("dirlink"); err != nil || fi.Mode().Type() != fs.ModeSymlink {
		t.Errorf("Lstat(dirlink) = %v, %v", fi, err)
	}
	if fi, err := f.Stat("dirlink"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(dirlink) = %v, %v", fi, err)
	}
	if list, err := f.ReadDir("dirlink"); err != nil || len(list) != 1 || list[0].Name() != "c" {
		t.Errorf("ReadDir(dirlink) = %v, %v", list, err)
	}
	if m, err := f.Glob("dir/*"); err != nil || !slices.Equal(m, []string{"dir/b.bin", "dir/big", "dir/sub", "dir/up"}) {
		t.Errorf("Glob(dir/*) = %q, %v", m, err)
	}
	sub, err := f.Sub("dir")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(sub, "b.bin", "big", "sub/c", "up"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"./a.txt", "./dir", "./"} {
		if _, err := f.Stat(bad); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Stat(%q) = %v, want fs.ErrInvalid (io/fs names have no \"./\")", bad, err)
		}
	}
	if err := f.Exists(); err != nil {
		t.Errorf("Exists() = %v", err)
	}
}

// fsWithout hides links from checkSame's walk: the archive's links are
// checked on their own.
type fsWithout struct {
	f     *fsys.FS
	links map[string]string
}

func (w fsWithout) Open(name string) (fs.File, error) { return w.f.Open(name) }
func (w fsWithout) ReadDir(name string) ([]fs.DirEntry, error) {
	list, err := w.f.ReadDir(name)
	return slices.DeleteFunc(slices.Clone(list), func(d fs.DirEntry) bool {
		_, ok := w.links[joinName(name, d.Name())]
		return ok
	}), err
}

func joinName(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// TestNamesSQLite3DotWrites: writes into an archive made by `sqlite3 -Ac
// .` keep its "./" form, so that sqlite3 -At lists one tree and sqlite3
// -Ax extracts exactly what the FS shows; both pagoda's check and
// SQLite's integrity_check pass.
func TestNamesSQLite3DotWrites(t *testing.T) {
	cli := sqliteCLI(t)
	tree := trees()["basic"]
	path := dotArchive(t, tree, nil, "./", ".")
	db := dbtest.Open(t, path, nil)
	f := fsys.New(db, &fsys.Options{Compress: true})
	mt := time.Unix(1600000000, 0)
	steps := []func() error{
		func() error { return f.WriteFile("new.txt", bytes.Repeat([]byte("new "), 1000), 0o600) },
		func() error { return f.WriteFile("a.txt", []byte("replaced\n"), 0o644) },
		func() error { return f.MkdirAll("x/y", 0o750) },
		func() error { return f.WriteFile("x/y/z", []byte("z"), 0o644) },
		func() error { return f.Rename("dir/sub", "x/sub") },
		func() error { return f.Remove("empty") },
		func() error { return f.RemoveAll("dir-y") },
		func() error { return f.Chmod("dir/b.bin", 0o700) },
		func() error {
			for _, p := range []string{"new.txt", "a.txt", "x/y/z", "x/y", "x", "dir/b.bin"} {
				if err := f.Chtimes(p, time.Time{}, mt); err != nil {
					return err
				}
			}
			return nil
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	// The FS's view, as the tree sqlite3 must extract.
	want := fstest.MapFS{}
	err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		m := &fstest.MapFile{Mode: fi.Mode(), ModTime: fi.ModTime()}
		if !d.IsDir() {
			if m.Data, err = f.ReadFile(p); err != nil {
				return err
			}
		}
		want[p] = m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"new.txt", "x/y/z", "x/sub/c", "dir/b.bin"} {
		if want[p] == nil {
			t.Errorf("%s: not seen after the writes", p)
		}
	}
	for _, p := range []string{"empty", "dir-y", "dir/sub"} {
		if want[p] != nil {
			t.Errorf("%s: still seen after it was removed or moved", p)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rows := readSQLar(t, path)
	for name := range rows {
		if name != "." && !strings.HasPrefix(name, "./") {
			t.Errorf("row %q: not in the archive's \"./\" form", name)
		}
	}
	if len(rows) != len(want)+1 { // and "."
		t.Errorf("%d rows, want %d and \".\"", len(rows), len(want))
	}
	listed := strings.Split(strings.TrimSuffix(run(t, t.TempDir(), cli, path, "-At"), "\n"), "\n")
	if len(listed) != len(rows) {
		t.Errorf("sqlite3 -At lists %d names, the table has %d rows", len(listed), len(rows))
	}
	out := t.TempDir()
	run(t, out, cli, path, "-AxC", out)
	compareDirs(t, want, out)
}

// TestNamesForms maps archives' names (rows inserted as they are) to the
// FS's, one table row per form: the names the root lists, a Stat through
// the form, and the name a write stores.
func TestNamesForms(t *testing.T) {
	dir := func(name string) []any { return []any{name, int64(0o40755), int64(1700000000), int64(0), nil} }
	file := func(name string) []any { return []any{name, int64(0o100644), int64(1700000000), int64(1), []byte("x")} }
	for _, c := range []struct {
		name   string
		rows   [][]any
		root   []string // what ReadDir(".") lists
		stat   string   // a name that Stat finds
		stored string   // the row WriteFile("w/new") stores (w exists)
	}{
		{"sqlite3 -Ac .", [][]any{dir("."), dir("./w"), file("./a"), file("./w/b")}, []string{"a", "w"}, "w/b", "./w/new"},
		{"sqlite3 -Ac ./w: no \".\" row", [][]any{dir("./w"), file("./w/b")}, []string{"w"}, "w/b", "./w/new"},
		{"\".\" alone", [][]any{dir("."), dir("./w")}, []string{"w"}, "w", "./w/new"},
		{"plain", [][]any{dir("w"), file("a"), file("w/b")}, []string{"a", "w"}, "w/b", "w/new"},
		{"plain, names that start with a dot", [][]any{dir("w"), file(".hidden"), file("..x"), file(".-y")}, []string{".-y", "..x", ".hidden", "w"}, ".hidden", "w/new"},
		{"\"./\" names that start with a dot", [][]any{dir("."), dir("./w"), file("./.hidden")}, []string{".hidden", "w"}, ".hidden", "./w/new"},
		{"mixed: the \"./\" form wins", [][]any{dir("."), dir("./w"), file("./a"), file("b"), dir("c"), file("c/d")}, []string{"a", "w"}, "a", "./w/new"},
		{"mixed without \".\": the plain form wins", [][]any{dir("w"), file("b"), dir("./w"), file("./w/x")}, []string{"b", "w"}, "b", "w/new"},
		{"a stray \"./\" name after the plain ones", [][]any{dir("w"), file("a"), file("./x")}, []string{"a", "w"}, "a", "w/new"},
		{"a stray \"./\" name between them", [][]any{dir("w"), file("-a"), file("./x")}, []string{"-a", "w"}, "-a", "w/new"},
		{"a plain name after the \"./\" ones", [][]any{dir("./w"), file("./w/x"), file(".0")}, []string{".0"}, ".0", ""},
		{"\"././a\" is not a valid name", [][]any{dir("."), dir("./w"), file("././a")}, []string{"w"}, "w", "./w/new"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.db")
			db := dbtest.Open(t, path, nil)
			insertRows(t, db, false, c.rows...)
			f := fsys.New(db, nil)
			list, err := f.ReadDir(".")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range list {
				got = append(got, d.Name())
			}
			if !slices.Equal(got, c.root) {
				t.Errorf("ReadDir(.) = %q, want %q", got, c.root)
			}
			if _, err := f.Stat(c.stat); err != nil {
				t.Errorf("Stat(%s): %v", c.stat, err)
			}
			if err := fstest.TestFS(f, c.stat); err != nil {
				t.Error(err)
			}
			if c.stored == "" {
				return // no w to write into
			}
			if err := f.WriteFile("w/new", []byte("new"), 0o644); err != nil {
				t.Fatal(err)
			}
			var stored []string
			err = db.View(func(tx *pagoda.Tx) error {
				tab, err := tx.Table("sqlar")
				if err != nil {
					return err
				}
				for _, r := range tab.All() {
					if n := r.Column(0).Text(); strings.HasSuffix(n, "new") {
						stored = append(stored, n)
					}
				}
				return tx.Err()
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(stored, []string{c.stored}) {
				t.Errorf("WriteFile(w/new) stored %q, want %q", stored, c.stored)
			}
			if data, err := f.ReadFile("w/new"); err != nil || string(data) != "new" {
				t.Errorf("ReadFile(w/new) = %q, %v", data, err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			checkSQLite(t, path, len(c.rows)+1)
		})
	}
}

// TestNamesNoArchive: Open of a database without a sqlar table, and
// Exists, fail with ErrNoArchive (wrapping pagoda.ErrNotFound); New's FS
// still reads it as an empty directory and creates the table at its first
// write, after which Open succeeds.
func TestNamesNoArchive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	db := dbtest.Open(t, path, nil)
	if err := db.Update(func(tx *pagoda.Tx) error {
		_, err := tx.CreateTable("CREATE TABLE other(x)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open(db, nil); !errors.Is(err, fsys.ErrNoArchive) || !errors.Is(err, pagoda.ErrNotFound) {
		t.Errorf("Open = %v, want ErrNoArchive wrapping pagoda.ErrNotFound", err)
	}
	f := fsys.New(db, nil)
	if err := f.Exists(); !errors.Is(err, fsys.ErrNoArchive) {
		t.Errorf("Exists = %v, want ErrNoArchive", err)
	}
	if err := db.View(func(tx *pagoda.Tx) error { return f.In(tx).Exists() }); !errors.Is(err, fsys.ErrNoArchive) {
		t.Errorf("Exists in a transaction = %v, want ErrNoArchive", err)
	}
	if err := f.WriteFile("a", []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := fsys.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := g.ReadFile("a"); err != nil || string(data) != "a" {
		t.Errorf("ReadFile(a) = %q, %v", data, err)
	}
	// A sqlar table without an index on name is no archive either, but
	// another error: not ErrNoArchive.
	path2 := filepath.Join(t.TempDir(), "b.db")
	db2 := dbtest.Open(t, path2, nil)
	if err := db2.Update(func(tx *pagoda.Tx) error {
		_, err := tx.CreateTable("CREATE TABLE sqlar(name TEXT, mode INT, mtime INT, sz INT, data BLOB)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open(db2, nil); err == nil || errors.Is(err, fsys.ErrNoArchive) || !errors.Is(err, pagoda.ErrUnsupported) {
		t.Errorf("Open of a sqlar table without a name index = %v, want ErrUnsupported", err)
	}
}
