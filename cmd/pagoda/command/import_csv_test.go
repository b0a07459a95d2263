package command

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// csvInput is CSV that exercises the quoting rules and the affinities.
const csvInput = "id,n,r,s,x\r\n" +
	"1,42,1.5,plain,\n" +
	"2,\" 7 \",3.0,\"has,comma\",\"q\"\"uote\"\n" +
	"3,-0,1e3,\"two\nlines\",ünïcödé\n" +
	"4,,,,\n" +
	"5,9223372036854775808,abc,0x10,\"\"\n"

// checkFile runs SQLite's integrity_check and pagoda check on path.
func checkFile(t *testing.T, path string) {
	t.Helper()
	integrityCheck(t, path)
	if _, _, err := run(t, "check", path); err != nil {
		t.Errorf("pagoda check %s: %v", filepath.Base(path), err)
	}
}

// TestImportCSVLikeSQLite imports the same CSV with sqlite3's .import --csv
// and with import --csv, into a new table (created from the header) and
// into one with column affinities, and compares the schema and every
// value's type and bytes.
func TestImportCSVLikeSQLite(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 CLI not installed: its .import is the reference")
	}
	dir := t.TempDir()
	rows := writeFile(t, "rows.csv", csvInput)
	const typed = `CREATE TABLE typed(id INTEGER PRIMARY KEY, n INTEGER, r REAL, s TEXT, x)`
	ours, theirs := filepath.Join(dir, "ours.db"), filepath.Join(dir, "theirs.db")
	if out, err := exec.Command(cli, theirs, typed, ".import --csv "+rows+" fresh", ".import --csv --skip 1 "+rows+" typed").CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("sqlite3 .import: %v %s", err, out)
	}
	sqltest.Exec(t, ours, typed)
	for _, table := range []string{"fresh", "typed"} {
		if out := mustRun(t, "import", "--csv", ours, table, rows); out != "imported 5 rows into "+table+"\n" {
			t.Errorf("import printed %q", out)
		}
	}
	checkFile(t, ours)
	q := `SELECT sql FROM sqlite_schema WHERE name = 'fresh'`
	if got, want := sqliteQuery(t, ours, q), sqliteQuery(t, theirs, q); !reflect.DeepEqual(got, want) {
		t.Errorf("created %q, sqlite3 creates %q", got, want)
	}
	for _, table := range []string{"fresh", "typed"} {
		q := `SELECT typeof(id), hex(id), typeof(n), hex(n), typeof(r), quote(r), typeof(s), hex(s), typeof(x), hex(x) FROM ` + table + ` ORDER BY rowid`
		if got, want := sqliteQuery(t, ours, q), sqliteQuery(t, theirs, q); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", table, got, want)
		}
	}
}

// TestImportCSVColumns checks that the header picks the columns, in any
// order, the others NULL (the INTEGER PRIMARY KEY a new rowid), and a
// bucket's key,value.
func TestImportCSVColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cols.db")
	sqltest.Exec(t, path, `CREATE TABLE t(id INTEGER PRIMARY KEY, a INT, b TEXT, c)`)
	if _, err := runStdin(t, "B,a\nx,1\ny,2\n", "import", "--csv", path, "t"); err != nil {
		t.Fatal(err)
	}
	want := [][]any{{int64(1), int64(1), "x", nil}, {int64(2), int64(2), "y", nil}}
	if got := sqliteQuery(t, path, "SELECT * FROM t ORDER BY id"); !reflect.DeepEqual(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	mustRun(t, "put", path, "kv", "k0", "v0")
	if _, err := runStdin(t, "key,value\nk1,\"v,1\"\n", "import", "--csv", path, "kv"); err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, "get", path, "kv", "k1"); got != "v,1\n" {
		t.Errorf("get kv k1 = %q", got)
	}
	checkFile(t, path)
}

// TestImportCSVErrors checks that a bad line stops the import with an
// error naming it, and that nothing is imported then.
func TestImportCSVErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "errs.db")
	sqltest.Exec(t, path, `CREATE TABLE t(a INT, b TEXT UNIQUE)`)
	mustRun(t, "put", path, "kv", "k", "v")
	for _, tc := range []struct{ table, in, want string }{
		{"t", "a,b\n1,x\n2\n", "stdin line 3: 1 fields, the header has 2"},
		{"t", "a,b\n1,x\n2,y,z\n", "stdin line 3: 3 fields, the header has 2"},
		{"t", "a,q\n1,x\n", `the header names "q", which is not a column of t`},
		{"t", "a,A\n1,x\n", `the header names column "A" twice`},
		{"t", "a,b\n1,x\n2,\"y\n", "stdin line 3, column 6: not CSV"},
		{"t", "a,b\n1,x\n2,x\n", "stdin line 3: "},
		{"t", "", "stdin: no header line"},
		{"kv", "k,v\na,b\n", "kv is a bucket: the header must be key,value"},
		{"new", "a,a\n1,2\n", "creating table new from the header"},
	} {
		_, err := runStdin(t, tc.in, "import", "--csv", path, tc.table)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("import --csv %q: %v, want %q", tc.in, err, tc.want)
		}
	}
	if got := sqliteQuery(t, path, "SELECT count(*) FROM t"); got[0][0] != int64(0) {
		t.Errorf("%v rows after failed imports, want 0", got[0][0])
	}
	if got := sqliteQuery(t, path, "SELECT count(*) FROM sqlite_schema WHERE name = 'new'"); got[0][0] != int64(0) {
		t.Errorf("the failed import left table new")
	}
	checkFile(t, path)
}
