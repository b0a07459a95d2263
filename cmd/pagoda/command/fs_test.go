package command

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
	"github.com/pagodadb/pagoda/internal/sqlartest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// treeEntry is one entry of a test tree: data is a file's content or a
// symbolic link's target.
type treeEntry struct {
	name string
	mode fs.FileMode
	data string
}

// bigText is a compressible file larger than 100 KiB; randomData one that
// does not compress.
var (
	bigText    = bigTextData()
	randomData = randomBytes(128<<10 + 1)
)

func bigTextData() string {
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "line %06d of a big text file\n", i)
	}
	return b.String()
}

func randomBytes(n int) string {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{'p', 'a', 'g', 'o', 'd', 'a'}).Read(b)
	return string(b)
}

// fsTree is a tree that sqlite3 3.40 extracts: nested directories, an
// empty one, an empty file, large files, unicode and space names, modes
// other than 0644. Entry i has the modification time treeTime(i).
var fsTree = []treeEntry{
	{"a.txt", 0o644, "hello\n"},
	{"dir", fs.ModeDir | 0o755, ""},
	{"dir/sub", fs.ModeDir | 0o750, ""},
	{"dir/sub/big.txt", 0o640, bigText},
	{"dir/sub/random.bin", 0o600, randomData},
	{"dir/sub/deeper", fs.ModeDir | 0o755, ""},
	{"dir/sub/deeper/run.sh", 0o755, "#!/bin/sh\necho hi\n"},
	{"dir/ünïcödé ☃.txt", 0o444, "snow ☃\n"},
	{"empty dir", fs.ModeDir | 0o700, ""},
	{"empty file", 0o644, ""},
}

// fsTreeExtra adds what sqlite3 3.40's -x cannot extract (symbolic links)
// or what it might not as a user other than root (a read-only directory
// with a file in it).
var fsTreeExtra = []treeEntry{
	{"link", fs.ModeSymlink | 0o777, "a.txt"},
	{"dir/up", fs.ModeSymlink | 0o777, "sub"},
	{"ro", fs.ModeDir | 0o555, ""},
	{"ro/f.txt", 0o644, "in a read-only directory\n"},
}

// treeTime is the modification time of entry i of a tree.
func treeTime(i int) time.Time {
	return time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC).Add(time.Duration(i) * 25 * time.Hour)
}

// treeBytesOf is the total size of a tree's files.
func treeBytesOf(tree []treeEntry) int64 {
	var n int64
	for _, e := range tree {
		if e.mode.IsRegular() {
			n += int64(len(e.data))
		}
	}
	return n
}

// tempDir is t.TempDir, made writable again before it is removed, so that
// read-only directories in it do not stop the removal.
func tempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	return dir
}

// makeTree writes tree into a new directory and returns its path.
func makeTree(t *testing.T, tree []treeEntry) string {
	t.Helper()
	dir := tempDir(t)
	for _, e := range tree {
		p := filepath.Join(dir, filepath.FromSlash(e.name))
		var err error
		switch {
		case e.mode.IsDir():
			err = os.Mkdir(p, 0o755)
		case e.mode&fs.ModeSymlink != 0:
			err = os.Symlink(e.data, p)
		default:
			if err = os.WriteFile(p, []byte(e.data), 0o600); err == nil {
				err = os.Chmod(p, e.mode.Perm())
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// Directory modes and all times last, deepest first: writing into a
	// directory changes its time.
	for i := len(tree) - 1; i >= 0; i-- {
		e := tree[i]
		if e.mode&fs.ModeSymlink != 0 {
			continue // os.Chtimes follows links
		}
		p := filepath.Join(dir, filepath.FromSlash(e.name))
		if err := os.Chmod(p, e.mode.Perm()); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, treeTime(i), treeTime(i)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// compareTrees checks that got holds the same entries as want: types,
// permissions, file contents, link targets, and the modification times of
// files and directories.
func compareTrees(t *testing.T, want, got string) {
	t.Helper()
	seen := make(map[string]bool)
	filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		rel, _ := filepath.Rel(want, p)
		if rel == "." {
			return nil
		}
		seen[rel] = true
		wi, err := os.Lstat(p)
		if err != nil {
			t.Error(err)
			return nil
		}
		gi, err := os.Lstat(filepath.Join(got, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		if wi.Mode() != gi.Mode() {
			t.Errorf("%s: mode %v, want %v", rel, gi.Mode(), wi.Mode())
			return nil
		}
		switch {
		case wi.Mode()&fs.ModeSymlink != 0:
			wt, _ := os.Readlink(p)
			gt, err := os.Readlink(filepath.Join(got, rel))
			if err != nil || gt != wt {
				t.Errorf("%s: link to %q (%v), want %q", rel, gt, err, wt)
			}
			return nil
		case wi.Mode().IsRegular():
			wd, _ := os.ReadFile(p)
			gd, err := os.ReadFile(filepath.Join(got, rel))
			if err != nil || !bytes.Equal(wd, gd) {
				t.Errorf("%s: content differs (%d bytes, want %d; %v)", rel, len(gd), len(wd), err)
			}
		}
		if !wi.ModTime().Equal(gi.ModTime()) {
			t.Errorf("%s: mtime %v, want %v", rel, gi.ModTime().UTC(), wi.ModTime().UTC())
		}
		return nil
	})
	filepath.WalkDir(got, func(p string, d fs.DirEntry, err error) error {
		if rel, _ := filepath.Rel(got, p); err == nil && rel != "." && !seen[rel] {
			t.Errorf("%s: extracted, but not in the source", rel)
		}
		return nil
	})
}

// runIn runs the pagoda command line args in-process with stdin as input.
func runIn(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := NewRoot()
	var o, e bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&o)
	root.SetErr(&e)
	err = root.Execute()
	return o.String(), e.String(), err
}

// addTree stores a new tree in a new archive and returns the tree's
// directory and the archive's path.
func addTree(t *testing.T, tree []treeEntry, flags ...string) (src, db string) {
	t.Helper()
	src = makeTree(t, tree)
	db = filepath.Join(tempDir(t), "fs.db")
	out := mustRun(t, append([]string{"fs", "add", db, src}, flags...)...)
	if want := fmt.Sprintf("added %d entries (%d bytes) to %s\n", len(tree), treeBytesOf(tree), db); out != want {
		t.Errorf("add printed %q, want %q", out, want)
	}
	return src, db
}

func TestFSAddListCat(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprintf("compress=%v", compress), func(t *testing.T) {
			var flags []string
			if compress {
				flags = []string{"--compress"}
			}
			_, db := addTree(t, fsTree, flags...)
			integrityCheck(t, db)
			if out := mustRun(t, "check", db); out != "ok\n" {
				t.Errorf("check: %q", out)
			}

			// How the data is stored: raw, or zlib where that is smaller.
			rows := sqliteQuery(t, db, `SELECT name, mode, sz, length(data), typeof(data) FROM sqlar ORDER BY name`)
			for _, r := range rows {
				name, mode, sz, n := r[0].(string), r[1].(int64), r[2].(int64), r[3]
				switch {
				case mode&0o170000 == 0o040000:
					if sz != 0 || n != nil {
						t.Errorf("directory %s: sz %d, data length %v; want 0 and NULL", name, sz, n)
					}
				case compress && name == "dir/sub/big.txt":
					if n.(int64) >= sz {
						t.Errorf("%s: %d bytes stored for %d with --compress", name, n, sz)
					}
				default:
					if n.(int64) != sz {
						t.Errorf("%s: %d bytes stored for %d", name, n, sz)
					}
				}
			}

			if got, want := mustRun(t, "fs", "ls", db), "a.txt\ndir\nempty dir\nempty file\n"; got != want {
				t.Errorf("ls:\n%s\nwant:\n%s", got, want)
			}
			for _, p := range []string{"dir", "/dir/", "./dir"} {
				if got, want := mustRun(t, "fs", "ls", db, p), "sub\nünïcödé ☃.txt\n"; got != want {
					t.Errorf("ls %s:\n%s\nwant:\n%s", p, got, want)
				}
			}
			if got, want := mustRun(t, "fs", "ls", db, "empty dir"), ""; got != want {
				t.Errorf("ls empty dir: %q", got)
			}
			if got, want := mustRun(t, "fs", "ls", db, "dir/sub/big.txt"), "dir/sub/big.txt\n"; got != want {
				t.Errorf("ls of a file: %q, want %q", got, want)
			}
			wantLong := "" +
				"-rw-r--r--          6 2021-03-04 05:06 a.txt\n" +
				"drwxr-xr-x          0 2021-03-05 06:06 dir\n" +
				"drwx------          0 2021-03-12 13:06 empty dir\n" +
				"-rw-r--r--          0 2021-03-13 14:06 empty file\n"
			if got := mustRun(t, "fs", "ls", "-l", db); got != wantLong {
				t.Errorf("ls -l:\n%s\nwant:\n%s", got, wantLong)
			}
			wantSub := "" +
				"-rw-r-----     155000 2021-03-07 08:06 big.txt\n" +
				"drwxr-xr-x          0 2021-03-09 10:06 deeper\n" +
				"-rw-------     131073 2021-03-08 09:06 random.bin\n"
			if got := mustRun(t, "fs", "ls", db, "dir/sub", "-l"); got != wantSub {
				t.Errorf("ls -l dir/sub:\n%s\nwant:\n%s", got, wantSub)
			}
			if got, want := mustRun(t, "fs", "ls", "-l", db, "dir/ünïcödé ☃.txt"),
				"-r--r--r--          9 2021-03-11 12:06 dir/ünïcödé ☃.txt\n"; got != want {
				t.Errorf("ls -l of a file:\n%s\nwant:\n%s", got, want)
			}
			wantR := "a.txt\ndir\ndir/sub\ndir/sub/big.txt\ndir/sub/deeper\ndir/sub/deeper/run.sh\n" +
				"dir/sub/random.bin\ndir/ünïcödé ☃.txt\nempty dir\nempty file\n"
			if got := mustRun(t, "fs", "ls", "-R", db); got != wantR {
				t.Errorf("ls -R:\n%s\nwant:\n%s", got, wantR)
			}
			if got, want := mustRun(t, "fs", "ls", "-R", db, "dir/sub"), "big.txt\ndeeper\ndeeper/run.sh\nrandom.bin\n"; got != want {
				t.Errorf("ls -R dir/sub:\n%s\nwant:\n%s", got, want)
			}
			if got, want := mustRun(t, "fs", "ls", "-lR", db, "dir/sub/deeper"),
				"-rwxr-xr-x         18 2021-03-10 11:06 run.sh\n"; got != want {
				t.Errorf("ls -lR dir/sub/deeper:\n%s\nwant:\n%s", got, want)
			}

			if got := mustRun(t, "fs", "cat", db, "a.txt"); got != "hello\n" {
				t.Errorf("cat a.txt: %q", got)
			}
			if got := mustRun(t, "fs", "cat", db, "dir/sub/big.txt"); got != bigText {
				t.Errorf("cat big.txt: %d bytes, differ", len(got))
			}
			if got := mustRun(t, "fs", "cat", db, "/dir/sub/random.bin", "empty file", "dir/ünïcödé ☃.txt"); got != randomData+"snow ☃\n" {
				t.Errorf("cat of three files: %d bytes, differ", len(got))
			}
		})
	}
}

func TestFSAddSymlinksAndUpdate(t *testing.T) {
	tree := append(slices.Clone(fsTree), fsTreeExtra...)
	src, db := addTree(t, tree)
	if got, want := mustRun(t, "fs", "ls", db), "a.txt\ndir\nempty dir\nempty file\nlink\nro\n"; got != want {
		t.Errorf("ls:\n%s\nwant:\n%s", got, want)
	}
	out := mustRun(t, "fs", "ls", "-l", db, "link")
	if ok, _ := regexp.MatchString(`^lrwxrwxrwx          5 \d{4}-\d\d-\d\d \d\d:\d\d link -> a\.txt\n$`, out); !ok {
		t.Errorf("ls -l link: %q", out)
	}
	out = mustRun(t, "fs", "ls", "-l", db, "dir")
	if !strings.Contains(out, " up -> sub\n") || !strings.HasPrefix(out, "drwxr-x---          0 2021-03-06 07:06 sub\n") {
		t.Errorf("ls -l dir:\n%s", out)
	}
	if got := mustRun(t, "fs", "cat", db, "link", "dir/up/deeper/run.sh"); got != "hello\n#!/bin/sh\necho hi\n" {
		t.Errorf("cat through links: %q", got)
	}
	// Listings through a link to a directory.
	for _, tt := range []struct{ args, want string }{
		{"dir/up", "big.txt\ndeeper\nrandom.bin\n"},
		{"dir/up/", "big.txt\ndeeper\nrandom.bin\n"},
		{"-R dir/up", "big.txt\ndeeper\ndeeper/run.sh\nrandom.bin\n"},
		{"-R dir/sub", "big.txt\ndeeper\ndeeper/run.sh\nrandom.bin\n"},
		{"dir/up/deeper", "run.sh\n"},
		{"-l dir/up/deeper/run.sh", "-rwxr-xr-x         18 2021-03-10 11:06 dir/up/deeper/run.sh\n"},
	} {
		args := append([]string{"fs", "ls", db}, strings.Fields(tt.args)...)
		if got, _, err := run(t, args...); got != tt.want || err != nil {
			t.Errorf("ls %s: %v\n%s\nwant:\n%s", tt.args, err, got, tt.want)
		}
	}
	if got, want := mustRun(t, "fs", "ls", db, "ro"), "f.txt\n"; got != want {
		t.Errorf("ls ro: %q", got)
	}
	if got := mustRun(t, "fs", "ls", "-l", db, "ro"); !strings.HasPrefix(got, "-rw-r--r--         25 ") {
		t.Errorf("ls -l ro: %q", got)
	}

	// Adding again replaces changed files, adds new ones, keeps the rest.
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "dir", "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "fs", "put", db, "only in the archive.txt", "-")
	mustRun(t, "fs", "add", db, src)
	if got := mustRun(t, "fs", "cat", db, "a.txt", "dir/new.txt"); got != "changed\nnew\n" {
		t.Errorf("after a second add: %q", got)
	}
	if got := mustRun(t, "fs", "ls", db); !strings.Contains(got, "only in the archive.txt\n") {
		t.Errorf("a second add removed an entry:\n%s", got)
	}
	integrityCheck(t, db)

	// A socket is skipped, with a warning.
	if ln, err := net.Listen("unix", filepath.Join(src, "sock")); err != nil {
		t.Logf("no unix socket: %v", err)
	} else {
		defer ln.Close()
		out, stderr, err := run(t, "fs", "add", db, src)
		if err != nil || !strings.HasPrefix(out, "added ") || stderr != "pagoda: skipping sock: cannot store a file of type s\n" {
			t.Errorf("add of a directory with a socket: %v, stdout %q, stderr %q", err, out, stderr)
		}
		if got := mustRun(t, "fs", "ls", db); strings.Contains(got, "sock") {
			t.Errorf("add stored a socket:\n%s", got)
		}
		ln.Close()
	}

	// The archive inside the directory it stores is left out.
	inside := filepath.Join(src, "self.db")
	mustRun(t, "fs", "add", inside, src)
	if got := mustRun(t, "fs", "ls", inside); strings.Contains(got, "self.db") {
		t.Errorf("add stored the archive in itself:\n%s", got)
	}
}

func TestFSExtract(t *testing.T) {
	tree := append(slices.Clone(fsTree), fsTreeExtra...)
	src, db := addTree(t, tree)
	dst := filepath.Join(tempDir(t), "new", "out")
	out := mustRun(t, "fs", "extract", db, dst)
	if want := fmt.Sprintf("extracted %d entries (%d bytes) to %s\n", len(tree), treeBytesOf(tree), dst); out != want {
		t.Errorf("extract printed %q, want %q", out, want)
	}
	compareTrees(t, src, dst)

	// Again, over the first extraction: files and links are replaced.
	if err := os.WriteFile(filepath.Join(dst, "a.txt"), []byte("local change"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "fs", "extract", db, dst)
	compareTrees(t, src, dst)

	// Some PATHs only: their parents are created, nothing else.
	part := tempDir(t)
	mustRun(t, "fs", "extract", db, part, "dir/sub/deeper", "link", "dir/sub/deeper/run.sh")
	var got []string
	filepath.WalkDir(part, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(part, p)
		got = append(got, filepath.ToSlash(rel))
		return nil
	})
	if want := []string{".", "dir", "dir/sub", "dir/sub/deeper", "dir/sub/deeper/run.sh", "link"}; !slices.Equal(got, want) {
		t.Errorf("extract of some PATHs wrote %q, want %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(part, "dir", "sub", "deeper", "run.sh"))
	if err != nil || string(b) != "#!/bin/sh\necho hi\n" {
		t.Errorf("run.sh: %q, %v", b, err)
	}
	if _, _, err := run(t, "fs", "extract", db, part, "nosuch"); err == nil {
		t.Error("extract of a missing PATH: no error")
	}
}

// TestFSExtractRefusesEscapes extracts archives whose names, or links,
// lead out of the target directory: nothing may be written outside it.
func TestFSExtractRefusesEscapes(t *testing.T) {
	top := tempDir(t)
	db := filepath.Join(top, "archive.db")
	sqltest.Exec(t, db,
		`CREATE TABLE sqlar(name TEXT PRIMARY KEY, mode INT, mtime INT, sz INT, data BLOB)`,
		`INSERT INTO sqlar VALUES ('../evil.txt', 33188, 0, 4, x'65766c0a')`,
		`INSERT INTO sqlar VALUES ('/abs.txt', 33188, 0, 4, x'65766c0a')`,
		`INSERT INTO sqlar VALUES ('a/../../evil2.txt', 33188, 0, 4, x'65766c0a')`,
		`INSERT INTO sqlar VALUES ('esc', 41471, 0, -1, '../..')`,
		`INSERT INTO sqlar VALUES ('esc/evil3.txt', 33188, 0, 4, x'65766c0a')`,
		`INSERT INTO sqlar VALUES ('ok.txt', 33188, 0, 3, 'ok' || char(10))`,
	)
	dst := filepath.Join(top, "a", "b", "out")
	mustRun(t, "fs", "extract", db, dst)
	_, _, err := run(t, "fs", "extract", db, dst, "esc", "esc/evil3.txt")
	if err == nil {
		t.Error("extract of a file below a link that leaves the directory: no error")
	}
	filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if strings.Contains(d.Name(), "evil") {
			t.Errorf("written: %s", p)
		}
		return nil
	})
	if b, err := os.ReadFile(filepath.Join(dst, "ok.txt")); err != nil || string(b) != "ok\n" {
		t.Errorf("ok.txt: %q, %v", b, err)
	}
}

func TestFSRm(t *testing.T) {
	_, db := addTree(t, fsTree)
	ls := func() string { return mustRun(t, "fs", "ls", "-R", db) }
	before := ls()
	for _, args := range [][]string{
		{"dir"},                   // not empty
		{"nosuch"},                // missing
		{"a.txt", "nosuch"},       // all or nothing
		{"-r", "a.txt", "nosuch"}, // all or nothing, -r too
		{"."},                     // the root
		{"-r", "/"},               // the root
		{"../a.txt"},              // outside
	} {
		out, _, err := run(t, append([]string{"fs", "rm", db}, args...)...)
		if err == nil || out != "" {
			t.Errorf("rm %q: error %v, stdout %q", args, err, out)
		}
		if got := ls(); got != before {
			t.Errorf("rm %q changed the archive:\n%s", args, got)
		}
	}
	_, _, err := run(t, "fs", "rm", db, "dir")
	if err == nil || err.Error() != "dir: directory not empty" {
		t.Errorf("rm of a directory with entries: %v", err)
	}
	mustRun(t, "fs", "rm", db, "a.txt", "empty dir", "dir/sub/deeper/run.sh")
	mustRun(t, "fs", "rm", db, "dir/sub/deeper") // now empty
	mustRun(t, "fs", "rm", "-r", db, "dir/sub")
	if got, want := ls(), "dir\ndir/ünïcödé ☃.txt\nempty file\n"; got != want {
		t.Errorf("after rm:\n%s\nwant:\n%s", got, want)
	}
	mustRun(t, "fs", "rm", "-r", db, "dir", "empty file")
	if got := ls(); got != "" {
		t.Errorf("after rm -r of everything:\n%s", got)
	}
	integrityCheck(t, db)
}

func TestFSMkdirPut(t *testing.T) {
	dir := tempDir(t)
	db := filepath.Join(dir, "new.db")
	mustRun(t, "fs", "mkdir", db, "a")
	mustRun(t, "fs", "mkdir", "-p", db, "a", "b/c/d")
	if _, _, err := run(t, "fs", "mkdir", db, "a"); err == nil {
		t.Error("mkdir of an existing directory: no error")
	}
	if _, _, err := run(t, "fs", "mkdir", db, "x/y"); err == nil {
		t.Error("mkdir with a missing parent: no error")
	}

	if out, _, err := runIn(t, "from stdin\n", "fs", "put", db, "a/stdin.txt"); err != nil || out != "" {
		t.Fatalf("put from stdin: %q, %v", out, err)
	}
	src := filepath.Join(dir, "src.sh")
	if err := os.WriteFile(src, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(src, 0o750)
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(src, mtime, mtime)
	mustRun(t, "fs", "put", "--compress", db, "new/dirs/run.sh", src)
	if _, _, err := runIn(t, "", "fs", "put", db, "a"); err == nil {
		t.Error("put over a directory: no error")
	}
	if _, _, err := run(t, "fs", "put", db, "x", filepath.Join(dir, "missing")); err == nil {
		t.Error("put of a missing SRC: no error")
	}

	want := "" +
		"drwxr-xr-x          0 a\n" +
		"-rw-r--r--         11 a/stdin.txt\n" +
		"drwxr-xr-x          0 b\n" +
		"drwxr-xr-x          0 b/c\n" +
		"drwxr-xr-x          0 b/c/d\n" +
		"drwxr-xr-x          0 new\n" +
		"drwxr-xr-x          0 new/dirs\n" +
		"-rwxr-x---         10 new/dirs/run.sh\n"
	// Times aside (they are now), as ls -lR prints them.
	got := regexp.MustCompile(` \d{4}-\d\d-\d\d \d\d:\d\d `).ReplaceAllString(mustRun(t, "fs", "ls", "-lR", db), " ")
	if got != want {
		t.Errorf("ls -lR:\n%s\nwant:\n%s", got, want)
	}
	if got := mustRun(t, "fs", "ls", "-l", db, "new/dirs/run.sh"); !strings.Contains(got, " 2020-01-02 03:04 ") {
		t.Errorf("put did not keep SRC's time: %q", got)
	}
	if got := mustRun(t, "fs", "cat", db, "a/stdin.txt", "new/dirs/run.sh"); got != "from stdin\n#!/bin/sh\n" {
		t.Errorf("cat: %q", got)
	}
	integrityCheck(t, db)
}

func TestFSServe(t *testing.T) {
	tree := append(slices.Clone(fsTree), fsTreeExtra...)
	_, path := addTree(t, tree)
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true, Timeout: lockWait})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := httptest.NewServer(fsHandler(fsys.New(db, nil), 4, log.New(io.Discard, "", 0)))
	defer srv.Close()

	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	if code, body := get(srv.URL + "/a.txt"); code != 200 || body != "hello\n" {
		t.Errorf("GET /a.txt: %d %q", code, body)
	}
	if code, body := get(srv.URL + "/dir/sub/big.txt"); code != 200 || body != bigText {
		t.Errorf("GET big.txt: %d, %d bytes", code, len(body))
	}
	if code, body := get(srv.URL + "/link"); code != 200 || body != "hello\n" {
		t.Errorf("GET /link: %d %q", code, body)
	}
	code, body := get(srv.URL + "/dir/")
	if code != 200 || !strings.Contains(body, `<a href="sub/">sub/</a>`) || !strings.Contains(body, "ünïcödé ☃.txt</a>") {
		t.Errorf("GET /dir/: %d\n%s", code, body)
	}
	if code, _ := get(srv.URL + "/nosuch"); code != 404 {
		t.Errorf("GET /nosuch: %d", code)
	}

	// A range request reads from the middle of a file.
	req, _ := http.NewRequest("GET", srv.URL+"/dir/sub/random.bin", nil)
	req.Header.Set("Range", "bytes=100000-100009")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(b) != randomData[100000:100010] {
		t.Errorf("range request: %d, %q", resp.StatusCode, b)
	}
}

// TestFSServeCommand runs serve itself on a free port, fetches a file and
// stops it as a signal would.
func TestFSServeCommand(t *testing.T) {
	_, path := addTree(t, fsTree)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	root := NewRoot()
	root.SetArgs([]string{"fs", "serve", path, "--addr", "127.0.0.1:0"})
	root.SetOut(pw)
	root.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() {
		done <- root.ExecuteContext(ctx)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed %q: %v (%v)", line, err, <-done)
	}
	m := regexp.MustCompile(`^serving .* at (http://127\.0\.0\.1:\d+/)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve printed %q", line)
	}
	resp, err := http.Get(m[1] + "dir/sub/deeper/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "#!/bin/sh\necho hi\n" {
		t.Errorf("GET run.sh: %q", b)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func TestFSErrors(t *testing.T) {
	_, db := addTree(t, fsTree)
	dir := tempDir(t)
	missing := filepath.Join(dir, "missing.db")
	notDB := filepath.Join(dir, "not.db")
	if err := os.WriteFile(notDB, bytes.Repeat([]byte("this is not a SQLite database\n"), 200), 0o644); err != nil {
		t.Fatal(err)
	}
	noArchive := filepath.Join(dir, "other.db") // a database without a sqlar table
	sqltest.Exec(t, noArchive, "CREATE TABLE other(x)")
	tests := []struct {
		args []string
		msg  string // the error's text; "" for any
	}{
		{[]string{"fs", "ls", missing}, "open " + missing + ": no such file or directory"},
		{[]string{"fs", "cat", missing, "a.txt"}, ""},
		{[]string{"fs", "extract", missing, dir}, ""},
		{[]string{"fs", "rm", missing, "a.txt"}, "open " + missing + ": no such file or directory"},
		{[]string{"fs", "serve", missing}, ""},
		{[]string{"fs", "ls", notDB}, ""},
		{[]string{"fs", "add", notDB, dir}, ""},
		{[]string{"fs", "ls", noArchive}, "no SQLite Archive in " + noArchive},
		{[]string{"fs", "ls", "-R", noArchive, "x"}, "no SQLite Archive in " + noArchive},
		{[]string{"fs", "cat", noArchive, "a.txt"}, "no SQLite Archive in " + noArchive},
		{[]string{"fs", "extract", noArchive, dir}, "no SQLite Archive in " + noArchive},
		{[]string{"fs", "serve", noArchive, "--addr", "127.0.0.1:0"}, "no SQLite Archive in " + noArchive},
		{[]string{"fs", "ls", db, "nosuch"}, "nosuch: no such file or directory"},
		{[]string{"fs", "ls", db, "a.txt/x"}, ""},
		{[]string{"fs", "ls", db, "../x"}, `invalid path "../x": it leaves the archive's root`},
		{[]string{"fs", "cat", db, "dir"}, "dir: is a directory"},
		{[]string{"fs", "cat", db, "a.txt", "nosuch"}, "nosuch: no such file or directory"},
		{[]string{"fs", "add", db, filepath.Join(dir, "nosuch")}, ""},
		{[]string{"fs", "add", db, notDB}, notDB + ": not a directory"},
		{[]string{"fs", "put", db, "."}, ""},
		{[]string{"fs", "put", db, "dir"}, "dir: is a directory"},
		{[]string{"fs", "mkdir", db, "a.txt"}, "a.txt: file exists"},
		{[]string{"fs", "serve", db, "--addr", "not an address"}, ""},
		{[]string{"fs", "serve", db, "--max-requests", "0"}, "--max-requests must be positive, not 0"},
		// Usage errors.
		{[]string{"fs", "ls"}, ""},
		{[]string{"fs", "ls", db, "a", "b"}, ""},
		{[]string{"fs", "cat", db}, ""},
		{[]string{"fs", "add", db}, ""},
		{[]string{"fs", "extract", db}, ""},
		{[]string{"fs", "rm", db}, ""},
		{[]string{"fs", "mkdir", db}, ""},
		{[]string{"fs", "put", db}, ""},
		{[]string{"fs", "serve"}, ""},
		{[]string{"fs", "nosuch"}, `unknown command "nosuch" for "pagoda fs"`},
		{[]string{"fs", "ls", "-x", db}, ""},
	}
	for _, tt := range tests {
		out, _, err := runIn(t, "", tt.args...)
		if err == nil {
			t.Errorf("pagoda %s: no error", strings.Join(tt.args, " "))
			continue
		}
		if tt.msg != "" && errorText(err) != tt.msg {
			t.Errorf("pagoda %s: error %q, want %q", strings.Join(tt.args, " "), errorText(err), tt.msg)
		}
		if out != "" {
			t.Errorf("pagoda %s: printed %q on stdout", strings.Join(tt.args, " "), out)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed command created %s", missing)
	}
}

// TestFSDamagedArchive reads archives with bad rows: errors, not panics.
func TestFSDamagedArchive(t *testing.T) {
	db := filepath.Join(tempDir(t), "bad.db")
	sqltest.Exec(t, db,
		`CREATE TABLE sqlar(name TEXT PRIMARY KEY, mode INT, mtime INT, sz INT, data BLOB)`,
		`INSERT INTO sqlar VALUES ('short', 33188, 0, 100, x'0102')`,       // not zlib
		`INSERT INTO sqlar VALUES ('nodata', 33188, 0, 5, NULL)`,           // a size, no data
		`INSERT INTO sqlar VALUES ('neg', 33188, 0, -5, x'01020304')`,      // a negative size
		`INSERT INTO sqlar VALUES ('dirdata', 16877, 0, 3, x'010203')`,     // a directory with data
		`INSERT INTO sqlar VALUES ('pipe', 4516, 0, 0, x'')`,               // a named pipe
		`INSERT INTO sqlar VALUES ('ok', 33188, 1700000000, 3, x'6f6b0a')`, // fine
		`INSERT INTO sqlar VALUES (x'ff', 33188, 0, 0, x'')`,               // a blob name
	)
	for _, name := range []string{"short", "nodata", "neg"} {
		if out, _, err := run(t, "fs", "cat", db, name); err == nil {
			t.Errorf("cat %s: no error, printed %q", name, out)
		}
	}
	if got := mustRun(t, "fs", "cat", db, "ok"); got != "ok\n" {
		t.Errorf("cat ok: %q", got)
	}
	// ls lists every entry with a text name, damaged or not: the listing
	// reads no data (the blob-named row is not a path).
	out, _, err := run(t, "fs", "ls", db)
	if want := "dirdata\nneg\nnodata\nok\npipe\nshort\n"; err != nil || out != want {
		t.Errorf("ls: %v, %q; want %q", err, out, want)
	}
	out, _, err = run(t, "fs", "ls", "-lR", db)
	if err != nil || strings.Count(out, "\n") != 6 || !strings.Contains(out, "prw-r--r--") || !strings.Contains(out, "drwxr-xr-x") {
		t.Errorf("ls -lR: %v\n%s", err, out)
	}
	if out, _, err := run(t, "fs", "ls", "-l", db, "dirdata"); err != nil || out != "" {
		t.Errorf("ls -l of a directory with data and no entries: %v, %q", err, out)
	}
	out, stderr, err := run(t, "fs", "extract", db, filepath.Join(tempDir(t), "out"), "ok", "pipe")
	if err != nil || !strings.Contains(stderr, "skipping pipe") {
		t.Errorf("extract of a named pipe: %v, stdout %q, stderr %q", err, out, stderr)
	}
	// Extracting everything meets a damaged file: an error naming it,
	// wrapping ErrCorrupt.
	_, _, err = run(t, "fs", "extract", db, filepath.Join(tempDir(t), "all"))
	if err == nil || !errors.Is(err, pagoda.ErrCorrupt) || !strings.Contains(err.Error(), `"neg"`) {
		t.Errorf("extract of the damaged archive: %v, want a corruption error naming neg", err)
	}
}

func TestLsMode(t *testing.T) {
	for _, tt := range []struct {
		mode fs.FileMode
		want string
	}{
		{0o644, "-rw-r--r--"},
		{fs.ModeDir | 0o755, "drwxr-xr-x"},
		{fs.ModeSymlink | 0o777, "lrwxrwxrwx"},
		{fs.ModeNamedPipe | 0o600, "prw-------"},
		{fs.ModeSocket | 0o755, "srwxr-xr-x"},
		{fs.ModeDevice | fs.ModeCharDevice | 0o620, "crw--w----"},
		{fs.ModeDevice | 0o660, "brw-rw----"},
		{fs.ModeSetuid | 0o755, "-rwsr-xr-x"},
		{fs.ModeSetuid | 0o644, "-rwSr--r--"},
		{fs.ModeSetgid | 0o750, "-rwxr-s---"},
		{fs.ModeDir | fs.ModeSticky | 0o777, "drwxrwxrwt"},
		{fs.ModeDir | fs.ModeSticky | 0o770, "drwxrwx--T"},
		{0, "----------"},
	} {
		if got := lsMode(tt.mode); got != tt.want {
			t.Errorf("lsMode(%v) = %s, want %s", tt.mode, got, tt.want)
		}
	}
}

// sqlite3Path returns the sqlite3 CLI, or skips the test.
func sqlite3Path(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 not installed")
	}
	return p
}

// TestFSSqlite3 checks that sqlite3 -A reads what pagoda fs writes, and
// the reverse.
func TestFSSqlite3(t *testing.T) {
	t.Run("sqlite3 -Atv lists what add stored", func(t *testing.T) {
		sqlite3 := sqlite3Path(t)
		for _, flags := range [][]string{nil, {"--compress"}} {
			src, db := addTree(t, fsTree, flags...)
			out, err := exec.Command(sqlite3, db, "-Atv").CombinedOutput()
			if err != nil {
				t.Fatalf("sqlite3 -Atv: %v\n%s", err, out)
			}
			// "-rw-r--r--          6  2021-03-04 05:06:07  a.txt"
			line := regexp.MustCompile(`^(\S{10}) +(-?\d+)  (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)  (.*)$`)
			var names []string
			for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
				m := line.FindStringSubmatch(l)
				if m == nil {
					t.Errorf("sqlite3 -Atv line %q", l)
					continue
				}
				name := m[4]
				names = append(names, name)
				fi, err := os.Lstat(filepath.Join(src, filepath.FromSlash(name)))
				if err != nil {
					t.Errorf("sqlite3 lists %q: %v", name, err)
					continue
				}
				size := fi.Size()
				if fi.IsDir() {
					size = 0
				}
				when := fi.ModTime().UTC().Format("2006-01-02 15:04:05")
				if m[1] != lsMode(fi.Mode()) || m[2] != strconv.FormatInt(size, 10) || m[3] != when {
					t.Errorf("sqlite3 -Atv: %q; want %s %d %s", l, lsMode(fi.Mode()), size, when)
				}
			}
			if len(names) != len(fsTree) {
				t.Errorf("sqlite3 -Atv lists %d entries, want %d", len(names), len(fsTree))
			}
		}
	})

	t.Run("sqlite3 -Ax extracts what add stored", func(t *testing.T) {
		sqlite3 := sqlite3Path(t)
		for _, flags := range [][]string{nil, {"--compress"}} {
			src, db := addTree(t, fsTree, flags...)
			dst := tempDir(t)
			if out, err := exec.Command(sqlite3, db, "-AxC", dst).CombinedOutput(); err != nil {
				t.Fatalf("sqlite3 -AxC: %v\n%s", err, out)
			}
			compareTrees(t, src, dst)
		}
	})

	t.Run("pagoda reads what sqlite3 -Ac stored", func(t *testing.T) {
		sqlite3 := sqlite3Path(t)
		tree := append(slices.Clone(fsTree), fsTreeExtra...)
		src := makeTree(t, tree)
		ours := filepath.Join(tempDir(t), "pagoda.db")
		mustRun(t, "fs", "add", ours, src)
		theirs := filepath.Join(tempDir(t), "sqlite3.db")
		// cd DIR && sqlite3 FILE -Ac *
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{theirs, "-Ac"}
		for _, e := range entries {
			args = append(args, e.Name())
		}
		cmd := exec.Command(sqlite3, args...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sqlite3 -Ac: %v\n%s", err, out)
		}
		for _, args := range [][]string{{"ls"}, {"ls", "-R"}, {"ls", "-lR"}, {"ls", "-l", "", "dir"}} {
			a := slices.Clone(args)
			b := slices.Clone(args)
			if len(args) > 2 {
				a[2], b[2] = ours, theirs
			} else {
				a, b = append(a, ours), append(b, theirs)
			}
			want := mustRun(t, append([]string{"fs"}, a...)...)
			if got := mustRun(t, append([]string{"fs"}, b...)...); got != want {
				t.Errorf("fs %s of sqlite3's archive:\n%s\nof pagoda's:\n%s", strings.Join(args, " "), got, want)
			}
		}
		for _, name := range []string{"a.txt", "dir/sub/big.txt", "dir/sub/random.bin", "empty file", "link", "dir/ünïcödé ☃.txt"} {
			want := mustRun(t, "fs", "cat", ours, name)
			if got := mustRun(t, "fs", "cat", theirs, name); got != want {
				t.Errorf("cat %s of sqlite3's archive differs (%d bytes, want %d)", name, len(got), len(want))
			}
		}
		dst := tempDir(t)
		mustRun(t, "fs", "extract", theirs, dst)
		compareTrees(t, src, dst)
	})

	t.Run("pagoda reads and writes what sqlite3 -Ac . stored", func(t *testing.T) {
		sqlite3 := sqlite3Path(t)
		tree := append(slices.Clone(fsTree), fsTreeExtra...)
		src := makeTree(t, tree)
		ours := filepath.Join(tempDir(t), "pagoda.db")
		mustRun(t, "fs", "add", ours, src)
		theirs := filepath.Join(tempDir(t), "sqlite3.db")
		cmd := exec.Command(sqlite3, theirs, "-Ac", ".") // rows ".", "./a.txt", ...
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sqlite3 -Ac .: %v\n%s", err, out)
		}
		dotNames := func() []string {
			out, err := exec.Command(sqlite3, theirs, "-At").CombinedOutput()
			if err != nil {
				t.Fatalf("sqlite3 -At: %v\n%s", err, out)
			}
			names := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			for _, n := range names {
				if n != "." && !strings.HasPrefix(n, "./") {
					t.Errorf("sqlite3 -At lists %q: not in the archive's \"./\" form", n)
				}
			}
			return names
		}
		if n := len(dotNames()); n != len(tree)+1 {
			t.Fatalf("sqlite3 -Ac . stored %d rows, want %d and \".\"", n, len(tree))
		}
		for _, args := range [][]string{{"ls"}, {"ls", "-R"}, {"ls", "-lR"}, {"ls", "-l", "", "dir"}, {"ls", "-l", "", "./dir"}} {
			a := slices.Clone(args)
			b := slices.Clone(args)
			if len(args) > 2 {
				a[2], b[2] = ours, theirs
				a[3] = strings.TrimPrefix(a[3], "./")
			} else {
				a, b = append(a, ours), append(b, theirs)
			}
			want := mustRun(t, append([]string{"fs"}, a...)...)
			if got := mustRun(t, append([]string{"fs"}, b...)...); got != want || want == "" {
				t.Errorf("fs %s of sqlite3's archive:\n%s\nof pagoda's:\n%s", strings.Join(args, " "), got, want)
			}
		}
		// cat takes the names as sqlite3 -At lists them, or without "./".
		for _, name := range []string{"a.txt", "dir/sub/big.txt", "dir/sub/random.bin", "empty file", "link", "dir/ünïcödé ☃.txt"} {
			want := mustRun(t, "fs", "cat", ours, name)
			for _, as := range []string{name, "./" + name} {
				if got := mustRun(t, "fs", "cat", theirs, as); got != want {
					t.Errorf("cat %s of sqlite3's archive differs (%d bytes, want %d)", as, len(got), len(want))
				}
			}
		}
		dst := tempDir(t)
		mustRun(t, "fs", "extract", theirs, dst)
		compareTrees(t, src, dst)
		// Writes keep the "./" form: add, put, mkdir, rm; sqlite3 -Ax
		// then extracts what pagoda extracts.
		more := makeTree(t, []treeEntry{{name: "added", mode: fs.ModeDir | 0o755}, {name: "added/new.txt", mode: 0o644, data: "new\n"}})
		mustRun(t, "fs", "add", theirs, more)
		// (sqlite3 3.40's -x stops at a link, and may not give a read-only
		// directory its time: fsTreeExtra goes.)
		mustRun(t, "fs", "rm", "-r", theirs, "link", "./dir/sub", "dir/up", "ro")
		mustRun(t, "fs", "mkdir", "-p", theirs, "m/n")
		mustRun(t, "fs", "put", theirs, "./m/n/put.txt", filepath.Join(src, "a.txt"))
		names := dotNames()
		for _, want := range []string{"./added/new.txt", "./m/n", "./m/n/put.txt"} {
			if !slices.Contains(names, want) {
				t.Errorf("sqlite3 -At does not list %q after the writes: %q", want, names)
			}
		}
		for _, gone := range []string{"./link", "./dir/sub", "./dir/sub/big.txt", "./dir/up", "./ro/f.txt"} {
			if slices.Contains(names, gone) {
				t.Errorf("sqlite3 -At lists %q after rm", gone)
			}
		}
		if got := mustRun(t, "fs", "cat", theirs, "added/new.txt", "m/n/put.txt"); got != "new\n"+mustRun(t, "fs", "cat", ours, "a.txt") {
			t.Errorf("cat of the files written: %q", got)
		}
		ourX, theirX := tempDir(t), tempDir(t)
		mustRun(t, "fs", "extract", theirs, ourX)
		if out, err := exec.Command(sqlite3, theirs, "-AxC", theirX).CombinedOutput(); err != nil {
			t.Fatalf("sqlite3 -AxC: %v\n%s", err, out)
		}
		compareTrees(t, ourX, theirX)
		checkFile(t, theirs)
	})
}

// runTo runs the pagoda command line args in-process, its standard output
// going to stdout; it returns what went to standard error.
func runTo(stdout io.Writer, args ...string) (stderr string, err error) {
	root := NewRoot()
	var e bytes.Buffer
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(&e)
	err = root.Execute()
	return e.String(), err
}

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hostileBound is the most one fs command may allocate reading an entry
// of the hostile archive: buffers and an inflater (a file of up to 1 MiB
// inflates whole into a pooled buffer), and copies of the stored data
// (extract and serve write it through buffers; the race detector doubles
// what they allocate). sqlite3's archives have no sqlar_listing; fsys
// reads a file's mode, mtime and sz from its row's head (Table.Head), not
// the row. The stored bytes, never the claim.
func hostileBound(c sqlartest.Case) uint64 {
	n := uint64(16 << 20)
	if b, ok := c.Data.([]byte); ok {
		n += 12 * uint64(len(b))
	}
	return n
}

// TestFSHostileArchive runs cat, extract and serve over every row of
// sqlartest's hostile archive, which SQLite wrote: names that leave the
// archive, links out of it, sz that lies either way (by one byte, 1032
// times, 41 GiB) or is negative. No command panics or allocates by a
// claim; a damaged file is an error wrapping ErrCorrupt (cat, extract)
// or a 500 or a cut response, logged (serve); extract writes nothing
// outside its directory and leaves no damaged file behind.
func TestFSHostileArchive(t *testing.T) {
	top := tempDir(t)
	db := filepath.Join(top, "hostile.sqlar")
	cases := sqlartest.WriteHostile(t, db)

	t.Run("cat", func(t *testing.T) {
		for _, c := range cases {
			var out bytes.Buffer
			var err error
			n := sqlartest.Allocated(func() { _, err = runTo(&out, "fs", "cat", db, c.Name) })
			if n > hostileBound(c) {
				t.Errorf("cat %q allocated %d bytes", c.Name, n)
			}
			switch c.Want {
			case sqlartest.Reads:
				if err != nil || !bytes.Equal(out.Bytes(), c.Content) {
					t.Errorf("cat %q: %q, %v", c.Name, out.Bytes(), err)
				}
			case sqlartest.Hidden:
				if err != nil || out.String() != "evil\n" {
					t.Errorf("cat %q: %q, %v", c.Name, out.Bytes(), err)
				}
			case sqlartest.Corrupt, sqlartest.BadLink:
				if !errors.Is(err, pagoda.ErrCorrupt) {
					t.Errorf("cat %q (%s): %v, want an error wrapping ErrCorrupt", c.Name, c.Why, err)
				}
				if out.Len() > 0 && int64(out.Len()) >= c.Sz {
					t.Errorf("cat %q (sz %d) printed %d bytes", c.Name, c.Sz, out.Len())
				}
			case sqlartest.Invalid, sqlartest.Outside, sqlartest.Directory:
				if err == nil || out.Len() > 0 {
					t.Errorf("cat %q (%s): %d bytes, %v; want an error", c.Name, c.Why, out.Len(), err)
				}
			default:
				t.Fatalf("no check for %v", c.Want)
			}
		}
	})

	t.Run("extract", func(t *testing.T) {
		// The whole archive: the first damaged file stops extract, with
		// an error wrapping ErrCorrupt, and is not left behind.
		dir := filepath.Join(tempDir(t), "all")
		_, _, err := run(t, "fs", "extract", db, dir)
		if !errors.Is(err, pagoda.ErrCorrupt) {
			t.Errorf("extract: %v, want an error wrapping ErrCorrupt", err)
		}
		onlyBelow(t, filepath.Dir(dir), dir)
		// Each entry alone.
		for _, c := range cases {
			top := tempDir(t)
			dir := filepath.Join(top, "x")
			var err error
			n := sqlartest.Allocated(func() { _, err = runTo(io.Discard, "fs", "extract", db, dir, c.Name) })
			if n > hostileBound(c) {
				t.Errorf("extract %q allocated %d bytes", c.Name, n)
			}
			onlyBelow(t, top, dir)
			local := filepath.Join(dir, filepath.FromSlash(c.Name))
			got, rerr := os.ReadFile(local)
			switch c.Want {
			case sqlartest.Reads:
				if err != nil || rerr != nil || !bytes.Equal(got, c.Content) {
					t.Errorf("extract %q: %v; the file: %q, %v", c.Name, err, got, rerr)
				}
			case sqlartest.Hidden:
				if err != nil || string(got) != "evil\n" {
					t.Errorf("extract %q: %v; the file: %q, %v", c.Name, err, got, rerr)
				}
			case sqlartest.Corrupt, sqlartest.BadLink:
				if !errors.Is(err, pagoda.ErrCorrupt) {
					t.Errorf("extract %q (%s): %v, want an error wrapping ErrCorrupt", c.Name, c.Why, err)
				}
				if _, err := os.Lstat(local); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("extract %q left %s behind (%v)", c.Name, local, err)
				}
			case sqlartest.Invalid:
				if err == nil {
					t.Errorf("extract %q (%s): no error", c.Name, c.Why)
				}
			case sqlartest.Outside:
				// The link, as it is, and nothing through it.
				if target, lerr := os.Readlink(local); err != nil || lerr != nil || target != c.Data {
					t.Errorf("extract %q: %v; the link: %q, %v", c.Name, err, target, lerr)
				}
			case sqlartest.Directory:
				if fi, serr := os.Stat(local); err != nil || serr != nil || !fi.IsDir() {
					t.Errorf("extract %q: %v; the directory: %v", c.Name, err, serr)
				}
			default:
				t.Fatalf("no check for %v", c.Want)
			}
		}
		// A file below a link out, asked for with the link: refused.
		top := tempDir(t)
		dir = filepath.Join(top, "x")
		if _, _, err := run(t, "fs", "extract", db, dir, "out", "out/evil.txt"); err == nil {
			t.Error("extract of a file below a link that leaves the directory: no error")
		}
		onlyBelow(t, top, dir)
	})

	t.Run("serve", func(t *testing.T) {
		pdb, err := pagoda.Open(db, &pagoda.Options{ReadOnly: true, Timeout: lockWait})
		if err != nil {
			t.Fatal(err)
		}
		defer pdb.Close()
		var logged syncBuffer
		srv := httptest.NewServer(fsHandler(fsys.New(pdb, nil), 4, log.New(&logged, "", 0)))
		defer srv.Close()
		for _, c := range cases {
			url := srv.URL + "/" + (&neturl.URL{Path: c.Name}).EscapedPath()
			var code int
			var body []byte
			var err error
			n := sqlartest.Allocated(func() {
				var resp *http.Response
				if resp, err = srv.Client().Get(url); err != nil {
					return
				}
				defer resp.Body.Close()
				code = resp.StatusCode
				body, err = io.ReadAll(resp.Body)
			})
			if n > hostileBound(c)+uint64(len(body)) {
				t.Errorf("GET %s allocated %d bytes", c.Name, n)
			}
			switch c.Want {
			case sqlartest.Reads:
				if err != nil || code != 200 || !bytes.Equal(body, c.Content) {
					t.Errorf("GET %q: %d %q, %v", c.Name, code, body, err)
				}
			case sqlartest.Hidden:
				if err != nil || code != 200 || string(body) != "evil\n" {
					t.Errorf("GET %q: %d %q, %v", c.Name, code, body, err)
				}
			case sqlartest.Corrupt, sqlartest.BadLink:
				// Damage that shows before the first byte of the body is
				// a 500 (a file of up to 1 MiB is read through first).
				// Damage found later cuts the response short.
				early := !c.Late
				switch {
				case code == 500 && err == nil:
				case !early && err != nil && int64(len(body)) < c.Sz:
				default:
					t.Errorf("GET %q (%s): %d, %d bytes, %v; want a 500 or a cut response", c.Name, c.Why, code, len(body), err)
				}
				if early && code != 500 {
					t.Errorf("GET %q (sz %d): %d, want 500", c.Name, c.Sz, code)
				}
				if log := logged.String(); !strings.Contains(log, "GET /"+c.Name+": ") || !strings.Contains(log, pagoda.ErrCorrupt.Error()) {
					t.Errorf("GET %q: the log does not tell:\n%s", c.Name, log)
				}
			case sqlartest.Invalid, sqlartest.Outside:
				if code != 404 {
					t.Errorf("GET %q (%s): %d %q, %v; want 404", c.Name, c.Why, code, body, err)
				}
			case sqlartest.Directory:
				if err != nil || code != 200 {
					t.Errorf("GET %q: %d, %v", c.Name, code, err)
				}
			default:
				t.Fatalf("no check for %v", c.Want)
			}
		}
		// The server still serves.
		if resp, err := srv.Client().Get(srv.URL + "/ok.txt"); err != nil || resp.StatusCode != 200 {
			t.Errorf("GET /ok.txt after the rest: %v, %v", resp, err)
		} else {
			resp.Body.Close()
		}
	})
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

// bombArchive writes an archive (by SQLite) holding sqlartest's bomb, a
// 1 GiB file of zeros stored in 1.3 MB, and ok.txt.
func bombArchive(t *testing.T) string {
	t.Helper()
	db := filepath.Join(tempDir(t), "bomb.sqlar")
	sqlartest.Write(t, db,
		sqlartest.Row{Name: "bomb", Mode: sqlartest.File, Mtime: 1e9, Sz: sqlartest.BombSize, Data: sqlartest.Bomb()},
		sqlartest.Row{Name: "ok.txt", Mode: sqlartest.File, Mtime: 1e9, Sz: 3, Data: "ok\n"},
	)
	return db
}

// bombBound is the most a command may allocate reading the bomb: a few
// MiB (its 1.3 MB row, assembled once, among them), not the 1 GiB file.
const bombBound = 8 << 20

// TestFSBomb runs cat, extract and serve (three requests at once) over a
// 1 GiB file stored in 1.3 MB: every byte comes, and each command
// allocates a few MiB, not the file.
func TestFSBomb(t *testing.T) {
	db := bombArchive(t)
	t.Run("cat", func(t *testing.T) {
		var z sqlartest.Zeros
		var err error
		n := sqlartest.Allocated(func() { _, err = runTo(&z, "fs", "cat", db, "bomb") })
		t.Logf("cat allocated %d bytes", n)
		if err != nil || z.N != sqlartest.BombSize || z.NonZero {
			t.Errorf("cat: %d bytes (all zero: %v), %v", z.N, !z.NonZero, err)
		}
		if n > bombBound {
			t.Errorf("cat allocated %d bytes", n)
		}
	})
	t.Run("extract", func(t *testing.T) {
		dir := filepath.Join(tempDir(t), "x")
		var err error
		n := sqlartest.Allocated(func() { _, err = runTo(io.Discard, "fs", "extract", db, dir, "bomb") })
		t.Logf("extract allocated %d bytes", n)
		fi, serr := os.Stat(filepath.Join(dir, "bomb"))
		if err != nil || serr != nil || fi.Size() != sqlartest.BombSize {
			t.Errorf("extract: %v; the file: %v, %v", err, fi, serr)
		}
		if n > bombBound {
			t.Errorf("extract allocated %d bytes", n)
		}
		os.Remove(filepath.Join(dir, "bomb"))
	})
	t.Run("serve", func(t *testing.T) {
		pdb, err := pagoda.Open(db, &pagoda.Options{ReadOnly: true, Timeout: lockWait})
		if err != nil {
			t.Fatal(err)
		}
		defer pdb.Close()
		srv := httptest.NewServer(fsHandler(fsys.New(pdb, nil), 4, log.New(io.Discard, "", 0)))
		defer srv.Close()
		const parallel = 3
		var got [parallel]sqlartest.Zeros
		var errs [parallel]error
		n := sqlartest.Allocated(func() {
			var wg sync.WaitGroup
			for i := range parallel {
				wg.Go(func() {
					resp, err := srv.Client().Get(srv.URL + "/bomb")
					if err != nil {
						errs[i] = err
						return
					}
					defer resp.Body.Close()
					_, errs[i] = io.Copy(&got[i], resp.Body)
				})
			}
			wg.Wait()
		})
		t.Logf("%d GETs allocated %d bytes", parallel, n)
		for i := range parallel {
			if errs[i] != nil || got[i].N != sqlartest.BombSize || got[i].NonZero {
				t.Errorf("GET %d: %d bytes (all zero: %v), %v", i, got[i].N, !got[i].NonZero, errs[i])
			}
		}
		if n > parallel*bombBound {
			t.Errorf("%d GETs allocated %d bytes", parallel, n)
		}
	})
}
