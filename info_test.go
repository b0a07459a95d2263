package pagoda_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// pageTestDB makes, with SQLite, a file of 1024-byte pages with interior
// pages, overflow chains, an index, a WITHOUT ROWID table and free pages
// (auto-vacuum: pointer-map pages too).
func pageTestDB(t *testing.T, autoVacuum bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pages.db")
	av := "NONE"
	if autoVacuum {
		av = "INCREMENTAL"
	}
	sqltest.Exec(t, path,
		"PRAGMA page_size=1024",
		"PRAGMA auto_vacuum="+av,
		`CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b BLOB)`,
		`CREATE INDEX ta ON t(a)`,
		`CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID`,
		`CREATE TABLE gone(x)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 300)
		 INSERT INTO t SELECT i, 'row ' || i, CASE WHEN i % 40 = 0 THEN randomblob(3000) ELSE x'01' END FROM n`,
		`INSERT INTO w SELECT printf('key %04d %s', id, hex(randomblob(id % 200))), id FROM t`,
		`INSERT INTO gone SELECT randomblob(500) FROM t LIMIT 50`,
		`DROP TABLE gone`,
		`DELETE FROM t WHERE id % 7 = 0`,
	)
	return path
}

// TestPagesDbstat checks PageInfo's Depth, Payload, Unused and Cells, and
// Tx.Page's cells, page by page against SQLite's dbstat virtual table.
func TestPagesDbstat(t *testing.T) {
	for _, av := range []bool{false, true} {
		t.Run(fmt.Sprintf("auto-vacuum %v", av), func(t *testing.T) {
			path := pageTestDB(t, av)
			type stat struct {
				name, kind  string
				cells       int
				payload     int
				unused      int
				depth       int
				overflowPgs int
			}
			want := map[uint32]stat{}
			sdb := sqltest.Open(t, path)
			rows, err := sdb.Query(`SELECT pageno, name, pagetype, ncell, payload, unused, path FROM dbstat`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var pgno uint32
				var s stat
				var p string
				if err := rows.Scan(&pgno, &s.name, &s.kind, &s.cells, &s.payload, &s.unused, &p); err != nil {
					t.Fatal(err)
				}
				s.depth = strings.Count(p, "/") - 1
				if s.kind == "overflow" {
					s.depth = 0
				}
				want[pgno] = s
			}
			rows.Close()
			db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			tx, err := db.Begin(false)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			pages, err := tx.Pages()
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, p := range pages {
				kinds[p.Kind]++
				w, ok := want[p.Pgno]
				if !ok {
					if p.Payload != 0 || p.Unused != 0 || p.Depth != 0 {
						t.Errorf("page %d (%s): payload %d, unused %d, depth %d; want 0 on a page of no tree", p.Pgno, p.Kind, p.Payload, p.Unused, p.Depth)
					}
					continue
				}
				cells := p.Cells
				if p.Kind == "overflow" {
					cells = 0
				}
				if p.Owner != w.name || p.Payload != w.payload || p.Unused != w.unused || p.Depth != w.depth || cells != w.cells {
					t.Errorf("page %d: %s of %s, %d cells, payload %d, unused %d, depth %d; dbstat: %s of %s, %d cells, payload %d, unused %d, depth %d",
						p.Pgno, p.Kind, p.Owner, cells, p.Payload, p.Unused, p.Depth, w.kind, w.name, w.cells, w.payload, w.unused, w.depth)
				}
				d, err := tx.Page(p.Pgno)
				if err != nil {
					t.Fatalf("Page(%d): %v", p.Pgno, err)
				}
				if d.PageInfo != p {
					t.Errorf("Page(%d).PageInfo = %+v, Pages says %+v", p.Pgno, d.PageInfo, p)
				}
				if p.Kind == "overflow" {
					continue
				}
				// The cells' local bytes add up to the page's payload.
				local := 0
				for _, c := range d.CellList {
					if p.Kind != "table interior" {
						local += c.Local
					}
				}
				if len(d.CellList) != p.Cells || local != p.Payload {
					t.Errorf("Page(%d): %d cells holding %d bytes; the page has %d cells, payload %d", p.Pgno, len(d.CellList), local, p.Cells, p.Payload)
				}
			}
			if kinds["overflow"] == 0 || kinds["table interior"] == 0 || kinds["index interior"] == 0 || kinds["freelist leaf"]+kinds["freelist trunk"] == 0 || (kinds["pointer map"] > 0) != av {
				t.Errorf("page kinds %v: the file covers too little", kinds)
			}
		})
	}
}

// TestPageCells checks Tx.Page's decoding of cells against the rows SQLite
// holds: every rowid of t's leaves with its values, and the freelist's
// trunk listing leaves that Pages calls free.
func TestPageCells(t *testing.T) {
	path := pageTestDB(t, false)
	sdb := sqltest.Open(t, path)
	wantRows := map[int64]string{}
	for _, r := range sqltest.Rows(t, sdb, `SELECT id, a, length(b) FROM t`) {
		f := strings.Split(r, "|")
		var id int64
		fmt.Sscan(f[0], &id)
		wantRows[id] = f[1] + "|" + f[2]
	}
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *pagoda.Tx) error {
		pages, err := tx.Pages()
		if err != nil {
			return err
		}
		got := map[int64]string{}
		leaves := 0
		for _, p := range pages {
			d, err := tx.Page(p.Pgno)
			if err != nil {
				return err
			}
			switch {
			case p.Kind == "table leaf" && p.Owner == "t":
				for _, c := range d.CellList {
					if len(c.Values) < 2 || !c.Values[0].IsNull() {
						t.Errorf("page %d rowid %d: values %v, want NULL (the rowid alias) then a", p.Pgno, c.Rowid, c.Values)
						continue
					}
					// b spills when it is 3000 bytes, and only then.
					spills := "1"
					if c.Overflow != 0 {
						spills = "3000"
					}
					got[c.Rowid] = c.Values[1].Text() + "|" + spills
					if c.Overflow != 0 && pages[c.Overflow-1].Kind != "overflow" {
						t.Errorf("page %d rowid %d: overflow page %d is a %s", p.Pgno, c.Rowid, c.Overflow, pages[c.Overflow-1].Kind)
					}
				}
			case p.Kind == "freelist trunk":
				for _, l := range d.Leaves {
					leaves++
					if pages[l-1].Kind != "freelist leaf" {
						t.Errorf("trunk %d lists page %d, a %s", p.Pgno, l, pages[l-1].Kind)
					}
				}
			case p.Kind == "overflow":
				if d.Next != 0 && pages[d.Next-1].Kind != "overflow" {
					t.Errorf("overflow page %d: next %d is a %s", p.Pgno, d.Next, pages[d.Next-1].Kind)
				}
			}
		}
		if len(got) != len(wantRows) || leaves == 0 {
			t.Errorf("%d rows on t's leaves, SQLite has %d; %d freelist leaves listed", len(got), len(wantRows), leaves)
		}
		for id, w := range wantRows {
			if got[id] != w {
				t.Errorf("rowid %d: %q, SQLite says %q", id, got[id], w)
			}
		}
		for _, n := range []uint32{0, tx.PageCount() + 1} {
			if _, err := tx.Page(n); !errors.Is(err, pagoda.ErrNotFound) {
				t.Errorf("Page(%d) of %d pages: %v, want ErrNotFound", n, tx.PageCount(), err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestColumnsGenerated checks Column.Generated.
func TestColumnsGenerated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.db")
	sqltest.Exec(t, path, `CREATE TABLE g(a, b AS (a * 2), c INT GENERATED ALWAYS AS (a + 1) STORED, d)`)
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *pagoda.Tx) error {
		tb, err := tx.Table("g")
		if err != nil {
			t.Fatal(err)
		}
		var got []bool
		for _, c := range tb.Columns() {
			got = append(got, c.Generated)
		}
		if fmt.Sprint(got) != "[false true true false]" {
			t.Errorf("Generated: %v, want [false true true false]", got)
		}
		return nil
	})
}
