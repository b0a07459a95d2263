package pagoda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// dagFile writes, with SQLite, table t (root page 2, rowids unless
// withoutRowid) whose tree is three levels deep, then points every child
// pointer of its root at the root's first child, and every child pointer
// of that page at its own first child: a tree whose pages are reached many
// times over (no cycle).
func dagFile(t *testing.T, withoutRowid bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dag.db")
	create, interior := "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)", byte(5)
	if withoutRowid {
		create, interior = "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB) WITHOUT ROWID", 2
	}
	sqltest.Exec(t, path,
		"PRAGMA page_size=512",
		create,
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<3000) INSERT INTO t SELECT x, randomblob(50) FROM c")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const ps = 512
	page := func(pgno uint32) []byte { return data[int(pgno-1)*ps : int(pgno)*ps] }
	// An interior page: type 5 (table) or 2 (index), cells at +3,
	// rightmost child at +8, cell pointers from +12, each cell its child's
	// page number first.
	share := func(p []byte) uint32 {
		if p[0] != interior {
			t.Fatalf("page type %d, want %d", p[0], interior)
		}
		n := int(binary.BigEndian.Uint16(p[3:]))
		first := binary.BigEndian.Uint32(p[binary.BigEndian.Uint16(p[12:]):])
		for i := range n {
			off := binary.BigEndian.Uint16(p[12+2*i:])
			binary.BigEndian.PutUint32(p[off:], first)
		}
		binary.BigEndian.PutUint32(p[8:], first)
		return first
	}
	share(page(share(page(2))))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSharedPages: a tree whose interior pages reach a page more than once
// fails its scans, cursors and counts with an error wrapping ErrCorrupt
// instead of repeating rows (a deep such tree would repeat them for
// ever).
func TestSharedPages(t *testing.T) {
	for _, wr := range []bool{false, true} {
		t.Run(fmt.Sprintf("without rowid %v", wr), func(t *testing.T) { sharedPages(t, wr) })
	}
}

func sharedPages(t *testing.T, withoutRowid bool) {
	path := dagFile(t, withoutRowid)
	_, tx, tb := readTable(t, path, nil, "t")
	rows := 0
	for range tb.All() {
		rows++
	}
	if err := tx.Err(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("All read %d rows, Err %v; want ErrCorrupt", rows, err)
	}
	c := tb.Cursor()
	for ok := c.First(); ok; ok = c.Next() {
	}
	if !errors.Is(c.Err(), ErrCorrupt) {
		t.Errorf("Next: %v, want ErrCorrupt", c.Err())
	}
	c = tb.Cursor()
	for ok := c.Last(); ok; ok = c.Prev() {
	}
	if !errors.Is(c.Err(), ErrCorrupt) {
		t.Errorf("Prev: %v, want ErrCorrupt", c.Err())
	}
	if n, err := tb.Count(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Count = %d, %v; want ErrCorrupt", n, err)
	}
}
