package command

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

type pageLine struct {
	pgno              int
	kind, cells, free string
	wal               bool
	owner             string
}

var pageLineRE = regexp.MustCompile(`^ *(\d+)  (.{14})  +(\S+)  +(\S+)  (wal|-  )  (.+)$`)

// parsePages parses the output of pagoda pages.
func parsePages(t *testing.T, out string) []pageLine {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) == 0 || !regexp.MustCompile(`^ *PAGE  KIND +CELLS  FREE  WAL  OWNER$`).MatchString(lines[0]) {
		t.Fatalf("no header line:\n%s", out)
	}
	var pages []pageLine
	for _, l := range lines[1:] {
		m := pageLineRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("bad line %q", l)
		}
		n, _ := strconv.Atoi(m[1])
		pages = append(pages, pageLine{n, strings.TrimSpace(m[2]), m[3], m[4], m[5] == "wal", m[6]})
	}
	return pages
}

func TestPages(t *testing.T) {
	path, sdb := fixture(t)
	// Free some pages so that the freelist shows.
	for _, s := range []string{
		`CREATE TABLE junk(x)`,
		`INSERT INTO junk SELECT randomblob(3000) FROM (SELECT 1 UNION SELECT 2 UNION SELECT 3)`,
		`DROP TABLE junk`,
	} {
		if _, err := sdb.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	pages := parsePages(t, mustRun(t, "pages", path))

	pageCount := sqliteRows(t, sdb, "PRAGMA page_count")[0][0].(int64)
	freeCount := sqliteRows(t, sdb, "PRAGMA freelist_count")[0][0].(int64)
	if int64(len(pages)) != pageCount {
		t.Fatalf("%d pages listed, PRAGMA page_count = %d", len(pages), pageCount)
	}
	kinds := map[string]int{}
	for i, p := range pages {
		if p.pgno != i+1 {
			t.Fatalf("line %d is page %d", i+1, p.pgno)
		}
		if p.wal {
			t.Errorf("page %d marked as served from the WAL in a rollback-journal file", p.pgno)
		}
		kinds[p.kind]++
		btree := strings.HasPrefix(p.kind, "table ") || strings.HasPrefix(p.kind, "index ")
		if btree != (p.cells != "-") || btree != (p.free != "-") || (btree || p.kind == "overflow") != (p.owner != "-") {
			t.Errorf("page %d: %+v", p.pgno, p)
		}
	}
	if p := pages[0]; p.kind != "table leaf" || p.owner != "sqlite_schema" {
		t.Errorf("page 1: %+v", p)
	}
	if n := int64(kinds["freelist trunk"] + kinds["freelist leaf"]); n != freeCount || n == 0 {
		t.Errorf("%d freelist pages listed, PRAGMA freelist_count = %d", n, freeCount)
	}
	if kinds["overflow"] < 3 {
		t.Errorf("%d overflow pages, want at least 3 (a 9000-byte blob)", kinds["overflow"])
	}
	for _, p := range pages {
		if p.kind == "overflow" && p.owner != "all_types" {
			t.Errorf("overflow page %d owned by %q", p.pgno, p.owner)
		}
	}
	for _, row := range sqliteRows(t, sdb, "SELECT name, rootpage, type, sql LIKE '%WITHOUT ROWID%' FROM sqlite_schema WHERE rootpage > 0") {
		name, root := row[0].(string), row[1].(int64)
		kind := "table leaf"
		if row[2].(string) == "index" || row[3].(int64) == 1 {
			kind = "index leaf"
		}
		if p := pages[root-1]; p.owner != name || p.kind != kind {
			t.Errorf("root page %d of %s: %+v, want kind %q", root, name, p, kind)
		}
	}
}

// TestPagesWAL reads a database whose latest commits are still in the WAL.
func TestPagesWAL(t *testing.T) {
	path, sdb := fixture(t)
	for _, s := range []string{
		`PRAGMA journal_mode=WAL`,
		`PRAGMA wal_autocheckpoint=0`,
		`INSERT INTO ipk VALUES (100, 'hundred')`,
	} {
		if _, err := sdb.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	// sdb stays open, so the WAL is not checkpointed away.
	pages := parsePages(t, mustRun(t, "pages", path))
	inWAL := 0
	for _, p := range pages {
		if p.wal {
			inWAL++
		}
	}
	if inWAL == 0 {
		t.Errorf("no page marked as served from the WAL")
	}
	if got := mustRun(t, "get", path, "ipk", "100"); got != "[100,\"hundred\"]\n" {
		t.Errorf("get ipk 100 = %q", got)
	}
	info := mustRun(t, "info", path)
	if !regexp.MustCompile(`(?m)^write format: +2 \(wal\)$`).MatchString(info) ||
		regexp.MustCompile(`(?m)^wal frames: +0$`).MatchString(info) {
		t.Errorf("info:\n%s", info)
	}
}

// TestPagesPointerMap: an auto-vacuum file's pointer-map pages are listed
// as such (page 2, then every usable/5 + 1 pages), and every other page
// of the sound file belongs to a tree.
func TestPagesPointerMap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "av.db")
	sqltest.Exec(t, path,
		"PRAGMA page_size=1024",
		"PRAGMA auto_vacuum=FULL",
		"CREATE TABLE t(a)",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<500) INSERT INTO t SELECT randomblob(900) FROM c")
	pages := parsePages(t, mustRun(t, "pages", path))
	if len(pages) < 420 {
		t.Fatalf("%d pages, want more than two pointer-map pages' worth", len(pages))
	}
	per := 1024/5 + 1
	for _, p := range pages {
		want := "pointer map"
		if (p.pgno-2)%per != 0 || p.pgno < 2 {
			want = "not " + want
		}
		switch {
		case want == "pointer map" && p.kind != want:
			t.Errorf("page %d: %q, want a pointer-map page", p.pgno, p.kind)
		case want != "pointer map" && (p.kind == "pointer map" || p.kind == "unused"):
			t.Errorf("page %d: %q", p.pgno, p.kind)
		}
	}
}
