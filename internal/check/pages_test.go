package check

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// memPages serves the pages of a database image held in memory: what the
// tests and the fuzz target check.
type memPages struct {
	data     []byte
	pageSize int
	usable   int
}

var _ btree.Pages = (*memPages)(nil)

// newMemPages reads the page size and reserved bytes from the image's
// header; it returns nil when they are not valid (the pager would refuse
// such a file).
func newMemPages(data []byte) *memPages {
	if len(data) < format.HeaderSize {
		return nil
	}
	h := format.Header(data)
	ps := h.PageSize()
	if ps < format.MinPageSize || ps > format.MaxPageSize || ps&(ps-1) != 0 {
		return nil
	}
	usable := ps - h.ReservedSpace()
	if usable < format.MinUsableSize || len(data) < ps {
		return nil
	}
	return &memPages{data: data, pageSize: ps, usable: usable}
}

func (m *memPages) PageCount() uint32 { return uint32(len(m.data) / m.pageSize) }
func (m *memPages) UsableSize() int   { return m.usable }

func (m *memPages) Page(pgno uint32) ([]byte, error) {
	if pgno == 0 || pgno > m.PageCount() {
		return nil, format.Corruptf(pgno, "page number %d out of range 1..%d", pgno, m.PageCount())
	}
	off := int(pgno-1) * m.pageSize
	return m.data[off : off+m.pageSize : off+m.pageSize], nil
}

// image is a database made by SQLite, in memory, with what the corruption
// tests need to find their targets.
type image struct {
	name     string
	pageSize int
	data     []byte
	roots    map[string]uint32 // sqlite_schema rootpage by name
}

func (im *image) clone() []byte { return append([]byte(nil), im.data...) }

// page returns page pgno of data (an image of im's page size).
func (im *image) page(data []byte, pgno uint32) []byte {
	return data[int(pgno-1)*im.pageSize : int(pgno)*im.pageSize]
}

// fixtureSQL builds a database with rowid tables and indexes (multi-column,
// DESC, NOCASE, on the rowid alias, automatic ones), a WITHOUT ROWID table
// with a secondary index, a bucket, expression and partial indexes, a
// trigger, rows and index keys that overflow, a column added by ALTER TABLE
// with a default, freeblocks left by deletes and a freelist.
//
// It has no view on purpose: sqlite3 3.40's integrity_check skips the
// freelist and the unused-page check in a database with a view (seen
// here), which would blind the tests' second opinion.
func fixtureSQL(pageSize int) []string {
	big := 3 * pageSize                               // a table row spanning several overflow pages
	longKey := (pageSize-12)*64/255 - 23 + pageSize/8 // an index key over X_index: it overflows
	return []string{
		"PRAGMA page_size=" + strconv.Itoa(pageSize),
		"CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, body BLOB, r REAL)",
		"CREATE INDEX t_name ON t(name COLLATE NOCASE DESC, r)",
		"CREATE INDEX t_r ON t(r, id)",
		"CREATE INDEX t_expr ON t(lower(name))",
		"CREATE INDEX t_part ON t(r) WHERE r > 10",
		"CREATE TABLE w(k TEXT, n INT, v, PRIMARY KEY(n, k DESC)) WITHOUT ROWID",
		"CREATE INDEX w_v ON w(v)",
		"CREATE TABLE u(a INT PRIMARY KEY, b TEXT UNIQUE COLLATE NOCASE, c)",
		`CREATE TABLE "bk"(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`,
		"CREATE TABLE junk(x)",
		"CREATE TRIGGER trg AFTER INSERT ON u BEGIN SELECT 1; END",
		"BEGIN",
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 300)
			INSERT INTO t(name, body, r) SELECT
				CASE i % 3 WHEN 0 THEN 'Name' WHEN 1 THEN 'name' ELSE 'NAME' END || printf('%04d', i % 97),
				CASE WHEN i % 10 = 0 THEN randomblob(` + strconv.Itoa(big) + `) ELSE randomblob(i % 50) END,
				CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 40) * 0.5 END
			FROM c`,
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 200)
			INSERT INTO w SELECT printf('k%d', i), i % 13,
				CASE WHEN i % 9 = 0 THEN printf('%.` + strconv.Itoa(longKey) + `c', 'v') || i ELSE i % 17 END
			FROM c`,
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 100)
			INSERT INTO u SELECT i * 3, printf('B%d', i), randomblob(10) FROM c`,
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 50)
			INSERT INTO bk SELECT CAST(printf('key%03d', i) AS BLOB), randomblob(i) FROM c`,
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 400)
			INSERT INTO junk SELECT randomblob(100) FROM c`,
		"COMMIT",
		"DELETE FROM junk",
		"DELETE FROM t WHERE id % 7 = 0",
		"DELETE FROM w WHERE n = 5",
		"ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'dflt'",
		"CREATE INDEX t_extra ON t(extra)",
		"INSERT INTO t(name, r, extra) VALUES ('late', 1.5, 'set'), ('later', NULL, NULL)",
	}
}

var (
	imagesMu sync.Mutex
	images   = map[int]*image{}
)

// fixture returns the fixture image with the given page size, built by
// SQLite once per test binary.
func fixture(t *testing.T, pageSize int) *image {
	t.Helper()
	imagesMu.Lock()
	defer imagesMu.Unlock()
	if im := images[pageSize]; im != nil {
		return im
	}
	path := filepath.Join(t.TempDir(), "fixture.db")
	sqltest.Exec(t, path, fixtureSQL(pageSize)...)
	im := &image{name: "sqlite-" + strconv.Itoa(pageSize), pageSize: pageSize, roots: map[string]uint32{}}
	db := sqltest.Open(t, path)
	rows, err := db.Query("SELECT name, rootpage FROM sqlite_schema")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var root uint32
		if err := rows.Scan(&name, &root); err != nil {
			t.Fatal(err)
		}
		im.roots[name] = root
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if im.data, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	images[pageSize] = im
	return im
}

// treePage is a page of a b-tree as the tests' own walk sees it.
type treePage struct {
	pgno   uint32
	parent uint32
	depth  int
	typ    format.PageType
	cells  int
}

// treePages lists the pages of the tree rooted at root, parents first.
func treePages(t *testing.T, im *image, data []byte, root uint32) []treePage {
	t.Helper()
	var out []treePage
	var walk func(pgno, parent uint32, depth int)
	walk = func(pgno, parent uint32, depth int) {
		pg, err := format.ParsePage(im.page(data, pgno), pgno, im.pageSize)
		if err != nil {
			t.Fatalf("fixture page %d: %v", pgno, err)
		}
		out = append(out, treePage{pgno: pgno, parent: parent, depth: depth, typ: pg.Type, cells: pg.NCells})
		if pg.Type.IsLeaf() {
			return
		}
		for i := 0; i <= pg.NCells; i++ {
			child, err := pg.Child(i)
			if err != nil {
				t.Fatal(err)
			}
			walk(child, pgno, depth+1)
		}
	}
	walk(root, 0, 0)
	return out
}

// findPage returns the first page of the tree rooted at root that ok
// accepts.
func findPage(t *testing.T, im *image, data []byte, root uint32, ok func(treePage) bool) treePage {
	t.Helper()
	for _, p := range treePages(t, im, data, root) {
		if ok(p) {
			return p
		}
	}
	t.Fatalf("%s: no page of the tree rooted at %d fits", im.name, root)
	return treePage{}
}

// parse returns page pgno of data as a checked view.
func parse(t *testing.T, im *image, data []byte, pgno uint32) format.Page {
	t.Helper()
	pg, err := format.ParsePage(im.page(data, pgno), pgno, im.pageSize)
	if err != nil {
		t.Fatal(err)
	}
	return pg
}

// cellPointer returns the offset of cell pointer i of pg within its page.
func cellPointer(pg *format.Page, i int) int {
	return pg.CellPointerEnd() - 2*pg.NCells + 2*i
}

func be16(b []byte) int         { return int(binary.BigEndian.Uint16(b)) }
func be32(b []byte) uint32      { return binary.BigEndian.Uint32(b) }
func put16(b []byte, v int)     { binary.BigEndian.PutUint16(b, uint16(v)) }
func put32(b []byte, v uint32)  { binary.BigEndian.PutUint32(b, v) }
func swap16(b []byte, i, j int) { b[i], b[i+1], b[j], b[j+1] = b[j], b[j+1], b[i], b[i+1] }
