package command

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// statsDB makes a database with SQLite: a table with values spilling onto
// overflow pages and deep enough for interior pages, an index, a WITHOUT
// ROWID table, and free pages; auto-vacuum files have pointer-map pages.
func statsDB(t *testing.T, pageSize int, autoVacuum bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("stats-%d.db", pageSize))
	av := "NONE"
	if autoVacuum {
		av = "FULL"
	}
	sqltest.Exec(t, path,
		fmt.Sprintf("PRAGMA page_size=%d", pageSize),
		"PRAGMA auto_vacuum="+av,
		`CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b BLOB)`,
		`CREATE INDEX t_a ON t(a)`,
		`CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID`,
		`CREATE TABLE gone(x)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 600)
		 INSERT INTO t SELECT i, printf('row %05d %s', i, substr(hex(randomblob(40)), 1, i % 70)),
		        CASE WHEN i % 50 = 0 THEN randomblob(3 * `+fmt.Sprint(pageSize)+`) ELSE randomblob(i % 30) END FROM n`,
		`INSERT INTO w SELECT 'key ' || id, a FROM t WHERE id % 3 = 0`,
		`INSERT INTO gone SELECT b FROM t`,
		`DROP TABLE gone`,
	)
	return path
}

// TestStatsDbstat checks stats --json against SQLite's dbstat virtual
// table (sqlite3_analyzer's source): per b-tree, its pages by kind, its
// depth (the longest dbstat path), payload and unused bytes, exactly; the
// entries against count(*); the file's free and pointer-map pages against
// PRAGMA freelist_count and the file's size.
func TestStatsDbstat(t *testing.T) {
	for _, tc := range []struct {
		pageSize   int
		autoVacuum bool
	}{{512, false}, {4096, false}, {1024, true}} {
		t.Run(fmt.Sprintf("page size %d auto-vacuum %v", tc.pageSize, tc.autoVacuum), func(t *testing.T) {
			path := statsDB(t, tc.pageSize, tc.autoVacuum)
			var st fileStats
			if err := json.Unmarshal([]byte(mustRun(t, "stats", "--json", path)), &st); err != nil {
				t.Fatal(err)
			}
			sdb := sqltest.Open(t, path)
			want := map[string]treeStats{}
			for _, r := range sqliteRows(t, sdb, `SELECT name, count(*), sum(pagetype = 'leaf'), sum(pagetype = 'internal'),
				sum(pagetype = 'overflow'), max(CASE WHEN pagetype = 'overflow' THEN 0 ELSE length(path) - length(replace(path, '/', '')) END),
				sum(payload), sum(unused) FROM dbstat GROUP BY name`) {
				want[r[0].(string)] = treeStats{Name: r[0].(string), Pages: int(r[1].(int64)), Leaf: int(r[2].(int64)), Interior: int(r[3].(int64)),
					Overflow: int(r[4].(int64)), Depth: int(r[5].(int64)), Payload: r[6].(int64), Unused: r[7].(int64)}
			}
			if len(st.Trees) != len(want) {
				t.Errorf("%d trees, dbstat has %d", len(st.Trees), len(want))
			}
			sawOverflow, sawInterior := false, false
			for _, got := range st.Trees {
				w := want[got.Name]
				cmp := got
				cmp.Type, cmp.Table, cmp.Entries, cmp.Fill = "", "", 0, 0
				if cmp != w {
					t.Errorf("%s:\n got %+v\nwant %+v (dbstat)", got.Name, cmp, w)
				}
				sawOverflow = sawOverflow || got.Overflow > 0
				sawInterior = sawInterior || got.Interior > 0
				if got.Name != "sqlite_schema" {
					var n int64
					if err := sdb.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %q`, got.Table)).Scan(&n); err != nil {
						t.Fatal(err)
					}
					if got.Entries != n {
						t.Errorf("%s: %d entries, SQLite counts %d rows", got.Name, got.Entries, n)
					}
				}
				if fill := 100 * (1 - float64(got.Unused)/float64(got.Pages*tc.pageSize)); got.Fill != fill {
					t.Errorf("%s: fill %v, want %v", got.Name, got.Fill, fill)
				}
			}
			if !sawOverflow || !sawInterior {
				t.Errorf("the database has no overflow (%v) or no interior (%v) pages: the test covers too little", sawOverflow, sawInterior)
			}
			var free, pages int
			sdb.QueryRow("PRAGMA freelist_count").Scan(&free)
			sdb.QueryRow("PRAGMA page_count").Scan(&pages)
			if st.FreePages != free || st.Pages != pages || (free == 0) != tc.autoVacuum { // a full auto-vacuum file keeps no free page
				t.Errorf("free pages %d of %d, SQLite says %d of %d", st.FreePages, st.Pages, free, pages)
			}
			if (st.PtrMapPages > 0) != tc.autoVacuum {
				t.Errorf("%d pointer-map pages in a file with auto-vacuum %v", st.PtrMapPages, tc.autoVacuum)
			}
			// Every page is in a tree, free, a pointer map or the lock byte.
			sum := st.FreePages + st.PtrMapPages + st.LockBytePages
			for _, tr := range st.Trees {
				sum += tr.Pages
			}
			if sum != st.Pages {
				t.Errorf("trees and free pages add up to %d pages of %d", sum, st.Pages)
			}
		})
	}
}

// TestStatsText checks the plain-text table and the TABLE argument.
func TestStatsText(t *testing.T) {
	path := statsDB(t, 4096, false)
	out := mustRun(t, "stats", path, "T")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("stats FILE T: %d lines, want header, t, t_a, totals:\n%s", len(lines), out)
	}
	for i, want := range []string{"NAME", "t ", "t_a", "page size 4096"} {
		if !strings.HasPrefix(lines[i], want) || (i == 1 && !strings.Contains(lines[i], " table ")) {
			t.Errorf("line %d: %q, want it to start with %q", i+1, lines[i], want)
		}
	}
	if f := strings.Fields(lines[1]); len(f) != 11 || f[7] != "600" || !strings.HasSuffix(f[10], "%") {
		t.Errorf("t's line %q: want 11 columns, 600 entries, a fill in %%", lines[1])
	}
	if _, _, err := run(t, "stats", path, "nope"); err == nil || !strings.Contains(err.Error(), "no such table: nope") {
		t.Errorf("stats of a missing table: %v", err)
	}
}
