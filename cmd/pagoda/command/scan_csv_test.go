package command

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// scanCSVTable has a value of each kind that sqlite3's CSV output quotes or
// does not: empty text, spaces, commas, quotes, line breaks, tabs,
// non-ASCII text and blobs, NULL, integers and reals.
var scanCSVTable = []string{
	`CREATE TABLE t("a b" INTEGER, "q""c" REAL, c TEXT, d BLOB, e)`,
	`INSERT INTO t VALUES(1, 1.5, 'plain', x'41ff', NULL), (-2, 0.1, 'has,comma', x'', 'q"uote'),
		(3, 1e300, 'new' || char(10) || 'line' || char(13), 'it''s', 'tab' || char(9) || 'x'),
		(4, 3.0, 'ünï', '', ' sp '), (NULL, NULL, NULL, x'7f', 5.25)`,
}

// TestScanCSVLikeSQLite compares scan --csv with sqlite3 -csv -header, and
// scan --header with sqlite3 -header (list mode), byte for byte.
func TestScanCSVLikeSQLite(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 CLI not installed: its CSV output is the reference")
	}
	path := filepath.Join(t.TempDir(), "csv.db")
	sqltest.Exec(t, path, scanCSVTable...)
	for _, mode := range []string{"-csv", "-list"} {
		want, err := exec.Command(cli, mode, "-header", path, "SELECT * FROM t").Output()
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"scan", "--csv", path, "t"}
		if mode == "-list" {
			args = []string{"scan", "--header", path, "t"}
		}
		if got := mustRun(t, args...); got != string(want) {
			t.Errorf("pagoda %s differs from sqlite3 %s -header:\n%s", strings.Join(args, " "), mode, lineDiff(string(want), got))
		}
	}
}

// TestScanCSVRoundTrip checks that scan --csv output imports back with
// import --csv into a table of the same schema, every value equal (REALs
// that 15 digits print exactly), and into a new table as text.
func TestScanCSVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	const schema = `CREATE TABLE t(id INTEGER PRIMARY KEY, n INT, r REAL, s TEXT, b BLOB)`
	sqltest.Exec(t, src, schema,
		`INSERT INTO t VALUES(1, 7, 2.5, 'a,b', x'6869'), (2, -9223372036854775808, 1e-7, 'line
two "q"', x'00ff'), (5, NULL, NULL, '', NULL), (9, 0, 100.0, ' pad ', x'')`)
	sqltest.Exec(t, dst, schema)
	out := mustRun(t, "scan", "--csv", "--hex", src, "t")
	if !strings.HasPrefix(out, "id,n,r,s,b\n") {
		t.Fatalf("no header line:\n%s", out)
	}
	if _, err := runStdin(t, out, "import", "--csv", dst, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := runStdin(t, out, "import", "--csv", dst, "copy"); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dst)
	// Blobs went out in hex and came back as text: compare them as hex,
	// NULLs as empty (CSV has no NULL: an empty field is '').
	want := sqliteQuery(t, src, `SELECT id, ifnull(n, ''), ifnull(r, ''), s, lower(hex(b)) FROM t ORDER BY id`)
	if got := sqliteQuery(t, dst, `SELECT id, n, r, s, b FROM t ORDER BY id`); !reflect.DeepEqual(got, want) {
		t.Errorf("imported back:\n got %q\nwant %q", got, want)
	}
	if got := sqliteQuery(t, dst, `SELECT count(*), sum(typeof(id) = 'text') FROM copy`); !reflect.DeepEqual(got, [][]any{{int64(4), int64(4)}}) {
		t.Errorf("copy: %v, want 4 rows of TEXT columns", got)
	}
	// An empty table still prints its header.
	sqltest.Exec(t, src, `CREATE TABLE empty(x, y)`)
	if got := mustRun(t, "scan", "--csv", src, "empty"); got != "x,y\n" {
		t.Errorf("scan --csv of an empty table: %q", got)
	}
	if _, _, err := run(t, "scan", "--csv", "--json", src, "t"); err == nil {
		t.Errorf("--csv with --json: no error")
	}
}
