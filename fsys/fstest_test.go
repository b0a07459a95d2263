package fsys_test

import (
	"bytes"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
)

// openDB opens a fresh database in a test directory.
func openDB(t testing.TB, opts *pagoda.Options) *pagoda.DB {
	t.Helper()
	db, err := pagoda.Open(filepath.Join(t.TempDir(), "a.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// randomBytes returns n reproducible bytes, text-like when text is set.
func randomBytes(r *rand.Rand, n int, text bool) []byte {
	b := make([]byte, n)
	for i := range b {
		if text {
			b[i] = "abcdefgh ij\n"[r.IntN(12)]
		} else {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

// trees are the source trees the FS tests copy in and check.
func trees() map[string]fstest.MapFS {
	r := rand.New(rand.NewPCG(5, 5))
	mt := time.Unix(1700000000, 0)
	file := func(data []byte, mode fs.FileMode) *fstest.MapFile {
		return &fstest.MapFile{Data: data, Mode: mode, ModTime: mt}
	}
	dir := func() *fstest.MapFile { return &fstest.MapFile{Mode: fs.ModeDir | 0o755, ModTime: mt} }
	deep := fstest.MapFS{"d": dir()}
	p := "d"
	for i := range 30 {
		p += "/" + strings.Repeat("x", i%7+1)
		deep[p] = dir()
	}
	deep[p+"/leaf.txt"] = file([]byte("deep"), 0o644)
	wide := fstest.MapFS{"w": dir()}
	for i := range 300 {
		wide[filepath.Join("w", string(rune('a'+i%26))+strings.Repeat("z", i/26))] = file(randomBytes(r, r.IntN(3000), true), 0o600)
	}
	return map[string]fstest.MapFS{
		"basic": {
			"a.txt":                          file([]byte("hello\n"), 0o644),
			"empty":                          file([]byte{}, 0o644),
			"dir":                            dir(),
			"dir/b.bin":                      file(randomBytes(r, 10000, false), 0o755),
			"dir/big":                        file(randomBytes(r, 300000, true), 0o644),
			"dir/sub":                        dir(),
			"dir/sub/c":                      file([]byte("c"), 0o640),
			"dir.x":                          file([]byte("sorts between dir and dir/"), 0o644),
			"dir-y":                          dir(),
			"emptydir":                       dir(),
			"ünïcode dir":                    dir(),
			"ünïcode dir/名前 with spaces.txt": file([]byte("unicode"), 0o644),
		},
		"deep":  deep,
		"wide":  wide,
		"empty": {},
	}
}

func TestFSTestFS(t *testing.T) {
	for name, tree := range trees() {
		for _, compress := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "/raw", true: "/zlib"}[compress], func(t *testing.T) {
				db := openDB(t, nil)
				f := fsys.New(db, &fsys.Options{Compress: compress})
				if err := f.CopyFS(tree); err != nil {
					t.Fatal(err)
				}
				want := slices.Collect(maps.Keys(tree))
				if err := fstest.TestFS(f, want...); err != nil {
					t.Fatal(err)
				}
				// And in one read transaction, where calls pick up the
				// index cursor where the last one left it.
				err := db.View(func(tx *pagoda.Tx) error { return fstest.TestFS(f.In(tx), want...) })
				if err != nil {
					t.Fatal(err)
				}
				checkSame(t, f, tree)
				if err := db.Check(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// checkSame checks that f holds exactly the entries of tree, with the same
// content, modes and times.
func checkSame(t *testing.T, f fs.FS, tree fstest.MapFS) {
	t.Helper()
	seen := 0
	err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		seen++
		m, ok := tree[p]
		if !ok {
			t.Errorf("%s: not in the source tree", p)
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode() != m.Mode || !fi.ModTime().Equal(m.ModTime) {
			t.Errorf("%s: mode %v time %v, want %v %v", p, fi.Mode(), fi.ModTime(), m.Mode, m.ModTime)
		}
		if !d.IsDir() {
			data, err := fs.ReadFile(f, p)
			if err != nil {
				return err
			}
			if !bytes.Equal(data, m.Data) || fi.Size() != int64(len(m.Data)) {
				t.Errorf("%s: content differs (%d bytes, size %d, want %d)", p, len(data), fi.Size(), len(m.Data))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(tree) {
		t.Errorf("walk saw %d entries, the tree has %d", seen, len(tree))
	}
}
