package fsys_test

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// row is one sqlar row as SQLite reads it.
type sqlarRow struct {
	mode, mtime, sz int64
	data            []byte // nil for NULL
}

// readSQLar reads every row of path's sqlar table with SQLite (modernc),
// after checking the file with PRAGMA integrity_check.
func readSQLar(t *testing.T, path string) map[string]sqlarRow {
	t.Helper()
	db := sqltest.Open(t, path)
	var ok string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q %v", ok, err)
	}
	rows, err := db.Query("SELECT name, mode, mtime, sz, data, typeof(data) FROM sqlar")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]sqlarRow{}
	for rows.Next() {
		var name string
		var r sqlarRow
		var data sql.RawBytes
		var typ string
		if err := rows.Scan(&name, &r.mode, &r.mtime, &r.sz, &data, &typ); err != nil {
			t.Fatal(err)
		}
		if typ != "null" {
			r.data = append([]byte{}, data...)
		}
		out[name] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	return out
}

// uncompress undoes sqlar's storage, as sqlar_uncompress does.
func uncompress(t *testing.T, r sqlarRow) []byte {
	t.Helper()
	if int64(len(r.data)) == r.sz {
		return r.data
	}
	zr, err := zlib.NewReader(bytes.NewReader(r.data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSQLiteReadsArchive: what pagoda stores, SQLite reads as sqlite3 -A
// stores it: one row per file and directory, st_mode with type bits,
// mtimes in seconds, sz the original size, directories NULL data, files
// raw or zlib (and then strictly smaller).
func TestSQLiteReadsArchive(t *testing.T) {
	tree := trees()["basic"]
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprint("compress=", compress), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.sqlar")
			db := dbtest.Open(t, path, nil)
			if err := fsys.New(db, &fsys.Options{Compress: compress}).CopyFS(tree); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			rows := readSQLar(t, path)
			if len(rows) != len(tree) {
				t.Errorf("%d rows, want %d", len(rows), len(tree))
			}
			zipped := 0
			for name, m := range tree {
				r, ok := rows[name]
				if !ok {
					t.Errorf("%s: no row", name)
					continue
				}
				if r.mtime != m.ModTime.Unix() {
					t.Errorf("%s: mtime %d, want %d", name, r.mtime, m.ModTime.Unix())
				}
				if m.Mode.IsDir() {
					if r.mode != 0o40000|int64(m.Mode.Perm()) || r.sz != 0 || r.data != nil {
						t.Errorf("%s: directory row mode %o sz %d data %v", name, r.mode, r.sz, r.data != nil)
					}
					continue
				}
				if r.mode != 0o100000|int64(m.Mode.Perm()) || r.sz != int64(len(m.Data)) || r.data == nil {
					t.Errorf("%s: file row mode %o sz %d, data NULL %v", name, r.mode, r.sz, r.data == nil)
					continue
				}
				if int64(len(r.data)) != r.sz {
					zipped++
					if !compress || int64(len(r.data)) > r.sz {
						t.Errorf("%s: stored %d bytes for %d", name, len(r.data), r.sz)
					}
				}
				if got := uncompress(t, r); !bytes.Equal(got, m.Data) {
					t.Errorf("%s: content differs", name)
				}
			}
			if compress && zipped == 0 {
				t.Error("compression on, but nothing was stored compressed")
			}
		})
	}
}

// sqliteCLI returns the path of the sqlite3 command, or skips the test.
func sqliteCLI(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 not installed: the CLI interop tests need it (CI installs it)")
	}
	return p
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// writeTree writes tree to dir with its modes and times.
func writeTree(t *testing.T, dir string, tree fstest.MapFS) {
	t.Helper()
	if err := os.CopyFS(dir, tree); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for name, m := range tree {
		p := filepath.Join(dir, name)
		if err := os.Chmod(p, m.Mode.Perm()); err != nil {
			t.Fatal(err)
		}
		if m.Mode.IsDir() {
			dirs = append(dirs, p)
			continue
		}
		if err := os.Chtimes(p, m.ModTime, m.ModTime); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range dirs { // after their contents
		m := tree[strings.TrimPrefix(filepath.ToSlash(p), filepath.ToSlash(dir)+"/")]
		if err := os.Chtimes(p, m.ModTime, m.ModTime); err != nil {
			t.Fatal(err)
		}
	}
}

// compareDirs checks that the tree under dir equals want: names, types,
// permissions, mtimes of files and content.
func compareDirs(t *testing.T, want fs.FS, dir string) {
	t.Helper()
	got := os.DirFS(dir)
	seen := map[string]bool{}
	err := fs.WalkDir(want, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		seen[p] = true
		wi, err := d.Info()
		if err != nil {
			return err
		}
		gi, err := fs.Stat(got, p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		if gi.Mode() != wi.Mode() {
			t.Errorf("%s: mode %v, want %v", p, gi.Mode(), wi.Mode())
		}
		if !gi.ModTime().Truncate(time.Second).Equal(wi.ModTime()) {
			t.Errorf("%s: mtime %v, want %v", p, gi.ModTime(), wi.ModTime())
		}
		if !d.IsDir() {
			wd, _ := fs.ReadFile(want, p)
			gd, err := fs.ReadFile(got, p)
			if err != nil || !bytes.Equal(gd, wd) {
				t.Errorf("%s: content differs (%v)", p, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fs.WalkDir(got, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != "." && !seen[p] {
			t.Errorf("%s: extracted but not in the archive", p)
		}
		return err
	})
}

// TestSQLite3CLIExtracts: sqlite3 -Atv lists pagoda's archive with its
// sizes and modes, and sqlite3 -Ax extracts it byte for byte, with modes
// and mtimes.
func TestSQLite3CLIExtracts(t *testing.T) {
	cli := sqliteCLI(t)
	tree := trees()["basic"]
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprint("compress=", compress), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "a.sqlar")
			db := dbtest.Open(t, path, nil)
			f := fsys.New(db, &fsys.Options{Compress: compress})
			if err := f.CopyFS(tree); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			// -Atv: "-rw-r--r--      6 2023-11-14 22:13 a.txt"
			listed := 0
			sc := bufio.NewScanner(strings.NewReader(run(t, dir, cli, path, "-Atv")))
			for sc.Scan() {
				fields := strings.Fields(sc.Text())
				if len(fields) < 5 {
					t.Fatalf("unexpected -Atv line %q", sc.Text())
				}
				name := strings.Join(fields[4:], " ")
				m, ok := tree[name]
				if !ok {
					t.Errorf("-Atv lists %q, not in the tree", name)
					continue
				}
				listed++
				if fields[0] != m.Mode.String() && !(m.Mode.IsDir() && fields[0] == "d"+m.Mode.String()[1:]) {
					t.Errorf("%s: -Atv mode %s, want %s", name, fields[0], m.Mode)
				}
				size, _ := strconv.Atoi(fields[1])
				if !m.Mode.IsDir() && size != len(m.Data) {
					t.Errorf("%s: -Atv size %d, want %d", name, size, len(m.Data))
				}
			}
			if listed != len(tree) {
				t.Errorf("-Atv listed %d entries, want %d", listed, len(tree))
			}
			out := filepath.Join(dir, "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			run(t, dir, cli, path, "-AxC", out)
			compareDirs(t, tree, out)
		})
	}
}

// TestReadsSQLite3CLIArchive: what sqlite3 -Ac stored (page size 512,
// compressed where smaller), pagoda lists and reads as the files are.
func TestReadsSQLite3CLIArchive(t *testing.T) {
	cli := sqliteCLI(t)
	tree := trees()["basic"]
	src := filepath.Join(t.TempDir(), "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, src, tree)
	path := filepath.Join(t.TempDir(), "cli.sqlar")
	var top []string
	for name := range tree {
		if !strings.Contains(name, "/") {
			top = append(top, name)
		}
	}
	run(t, src, cli, append([]string{path, "-Ac"}, top...)...)
	checkArchiveFile(t, path, tree)
	// And pagoda writes into it, sqlite3 still extracts it.
	db2 := dbtest.Open(t, path, nil)
	g := fsys.New(db2, &fsys.Options{Compress: true})
	if err := g.WriteFile("dir/new.txt", bytes.Repeat([]byte("new "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := g.Remove("dir/sub/c"); err != nil {
		t.Fatal(err)
	}
	if err := g.Chtimes("dir/new.txt", time.Time{}, time.Unix(1600000000, 0)); err != nil {
		t.Fatal(err)
	}
	if err := db2.Close(); err != nil {
		t.Fatal(err)
	}
	tree2 := fstest.MapFS{}
	for k, v := range tree {
		tree2[k] = v
	}
	delete(tree2, "dir/sub/c")
	tree2["dir/new.txt"] = &fstest.MapFile{Data: bytes.Repeat([]byte("new "), 1000), Mode: 0o600, ModTime: time.Unix(1600000000, 0)}
	out := t.TempDir()
	run(t, out, cli, path, "-AxC", out)
	compareDirs(t, tree2, out)
}

// TestReadsSQLiteMadeArchive builds an archive with SQLite's SQL alone, as
// sqlite3 -Ac does (page size 512, no listing index, zlib where smaller,
// directory rows), so that the test runs without the CLI.
func TestReadsSQLiteMadeArchive(t *testing.T) {
	tree := trees()["basic"]
	path := filepath.Join(t.TempDir(), "a.sqlar")
	db := sqltest.Open(t, path)
	for _, s := range []string{"PRAGMA page_size=512", "CREATE TABLE sqlar(name TEXT PRIMARY KEY, mode INT, mtime INT, sz INT, data BLOB)"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	for name, m := range tree {
		var data any
		mode := int64(0o100000) | int64(m.Mode.Perm())
		if m.Mode.IsDir() {
			mode = 0o40000 | int64(m.Mode.Perm())
		} else {
			data = m.Data
			if z := zlibBytes(m.Data); len(z) < len(m.Data) {
				data = z
			}
		}
		if _, err := db.Exec("INSERT INTO sqlar VALUES(?, ?, ?, ?, ?)", name, mode, m.ModTime.Unix(), len(m.Data), data); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	checkArchiveFile(t, path, tree)
}

// checkArchiveFile opens the archive at path read-only and checks that it
// holds exactly tree, and passes fstest.TestFS.
func checkArchiveFile(t *testing.T, path string, tree fstest.MapFS) {
	t.Helper()
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := fsys.New(db, nil)
	checkSame(t, f, tree)
	if err := fstest.TestFS(f, slices.Collect(maps.Keys(tree))...); err != nil {
		t.Fatal(err)
	}
}
