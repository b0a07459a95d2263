package command

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestPageEveryPage runs page on every page of a file with each kind of
// page (auto-vacuum, so pointer maps too) and checks that its first line
// says what pages says of it, and what each kind must show.
func TestPageEveryPage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "page.db")
	sqltest.Exec(t, path,
		"PRAGMA page_size=1024",
		"PRAGMA auto_vacuum=INCREMENTAL",
		`CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b BLOB)`,
		`CREATE INDEX ta ON t(a)`,
		`CREATE TABLE gone(x)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200)
		 INSERT INTO t SELECT i, 'row ' || i || char(10) || 'two', CASE WHEN i % 40 = 0 THEN randomblob(3000) ELSE x'01ff' END FROM n`,
		`INSERT INTO gone SELECT randomblob(500) FROM t LIMIT 40`,
		`DROP TABLE gone`,
	)
	list := parsePages(t, mustRun(t, "pages", path))
	seen := map[string]bool{}
	for _, p := range list {
		out := mustRun(t, "page", path, strconv.Itoa(p.pgno))
		head := "page " + strconv.Itoa(p.pgno) + " of " + strconv.Itoa(len(list)) + ": " + p.kind
		if p.owner != "-" {
			head += " of " + p.owner
		}
		if first, _, _ := strings.Cut(out, "\n"); first != head {
			t.Errorf("page %d: first line %q, want %q", p.pgno, first, head)
		}
		var must []string
		switch p.kind {
		case "table leaf", "index leaf":
			must = []string{"cells: " + p.cells + "\n", "unused: " + p.free + " bytes\n", "CELL  OFFSET"}
		case "table interior", "index interior":
			must = []string{"cells: " + p.cells + "\n", "right child: ", "CHILD"}
		case "overflow":
			must = []string{"next page: ", "payload: "}
		case "freelist trunk":
			must = []string{"next trunk: ", "leaves: "}
		case "pointer map":
			must = []string{"PAGE  TYPE", "root", "btree"}
		}
		for _, m := range must {
			if !strings.Contains(out, m) {
				t.Errorf("page %d (%s) lacks %q:\n%s", p.pgno, p.kind, m, out)
			}
		}
		if p.kind == "table leaf" && p.owner == "t" && !regexp.MustCompile(`\(NULL, 'row \d+\.two', (X'01ff'\)|\.\.\.\))`).MatchString(out) {
			t.Errorf("page %d: no row of t shown as (NULL, 'row N.two', X'01ff') or (NULL, 'row N.two', ...):\n%s", p.pgno, out)
		}
		seen[p.kind] = true
	}
	for _, k := range []string{"table leaf", "table interior", "index leaf", "index interior", "overflow", "freelist trunk", "freelist leaf", "pointer map"} {
		if !seen[k] {
			t.Errorf("no %s page in the file: the test covers too little", k)
		}
	}
	if out := mustRun(t, "page", path, "1"); !strings.Contains(out, "database header: bytes 0 to 99") {
		t.Errorf("page 1 does not mention the header:\n%s", out)
	}
	for _, tc := range []struct{ arg, want string }{
		{"0", "page 0 is out of range: the file has pages 1 to " + strconv.Itoa(len(list))},
		{strconv.Itoa(len(list) + 1), "out of range"},
		{"x", `page number "x" is not a positive integer`},
		{"1.5", "not a positive integer"},
	} {
		if _, _, err := run(t, "page", path, tc.arg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("page %s: %v, want %q", tc.arg, err, tc.want)
		}
	}
}

// TestPageCorrupt damages a leaf's cell pointers and checks that page,
// stats, dump and pages --svg report the corruption, naming the page,
// without a panic.
func TestPageCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.db")
	sqltest.Exec(t, path, "PRAGMA page_size=512", `CREATE TABLE t(a)`, `INSERT INTO t VALUES('x'), ('y')`)
	list := parsePages(t, mustRun(t, "pages", path))
	if len(list) != 2 || list[1].kind != "table leaf" {
		t.Fatalf("pages %+v, want t's leaf as page 2", list)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint16(data[512+8:], 600) // cell 0 points past the page
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(t.TempDir(), "bad.svg")
	for _, args := range [][]string{
		{"page", path, "2"}, {"stats", path}, {"dump", path}, {"pages", "--svg", svg, path},
	} {
		_, _, err := run(t, args...)
		if !errors.Is(err, pagoda.ErrCorrupt) || !strings.Contains(err.Error(), "page 2") {
			t.Errorf("pagoda %s: %v, want a corruption of page 2", strings.Join(args, " "), err)
		}
	}
}
