package format

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

func TestPtrMapPageOf(t *testing.T) {
	// usable 512: 102 entries a map page, so one map page every 103 pages.
	for _, tc := range []struct{ pgno, lockByte, want uint32 }{
		{1, 0, 0}, {2, 0, 2}, {3, 0, 2}, {104, 0, 2}, {105, 0, 105}, {207, 0, 105}, {208, 0, 208},
		{105, 105, 106}, {106, 105, 106}, // a map page on the lock-byte page moves after it
	} {
		if got := PtrMapPageOf(tc.pgno, 512, tc.lockByte); got != tc.want {
			t.Errorf("PtrMapPageOf(%d, 512, lock %d) = %d, want %d", tc.pgno, tc.lockByte, got, tc.want)
		}
	}
}

func TestPtrMapEntry(t *testing.T) {
	data := make([]byte, 512)
	data[0] = PtrMapRoot
	data[5] = PtrMapOverflow2
	binary.BigEndian.PutUint32(data[6:], 3)
	data[101*5] = PtrMapBtree
	binary.BigEndian.PutUint32(data[101*5+1:], 77)
	for _, tc := range []struct {
		pgno   uint32
		typ    byte
		parent uint32
		ok     bool
	}{
		{3, PtrMapRoot, 0, true}, {4, PtrMapOverflow2, 3, true}, {104, PtrMapBtree, 77, true},
		{2, 0, 0, false},   // the map page itself
		{1, 0, 0, false},   // before it
		{105, 0, 0, false}, // past the usable size
	} {
		typ, parent, ok := PtrMapEntry(data, 512, 2, tc.pgno)
		if typ != tc.typ || parent != tc.parent || ok != tc.ok {
			t.Errorf("entry of page %d: %d %d %v, want %d %d %v", tc.pgno, typ, parent, ok, tc.typ, tc.parent, tc.ok)
		}
	}
	// The usable size bounds the entries, not the page size.
	if _, _, ok := PtrMapEntry(data, 480, 2, 3+480/5); ok {
		t.Error("an entry past the usable size read")
	}
}

// TestPtrMapSQLite reads the pointer map sqlite3 wrote: each table's root
// page is a root, and every page after page 2 that is not a map page has
// an entry of a known type.
func TestPtrMapSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "av.db")
	sqltest.Exec(t, path, "PRAGMA page_size=512", "PRAGMA auto_vacuum=FULL", "CREATE TABLE t(a)",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<300) INSERT INTO t SELECT randomblob(700) FROM c",
		"CREATE TABLE u(b)")
	db := sqltest.Open(t, path)
	roots := sqltest.Rows(t, db, "SELECT rootpage FROM sqlite_schema")
	db.Close()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := Header(file)
	ps, usable, n := h.PageSize(), h.UsableSize(), h.DatabaseSize()
	page := func(p uint32) []byte { return file[int(p-1)*ps : int(p)*ps] }
	entry := func(p uint32) (byte, uint32) {
		mp := PtrMapPageOf(p, usable, LockBytePage(ps))
		typ, parent, ok := PtrMapEntry(page(mp), usable, mp, p)
		if !ok {
			t.Fatalf("page %d has no entry on map page %d", p, mp)
		}
		return typ, parent
	}
	if n < 300 || PtrMapPageOf(n, usable, LockBytePage(ps)) == 2 {
		t.Fatalf("%d pages: the test needs several map pages", n)
	}
	for _, r := range roots {
		p, _ := strconv.Atoi(r)
		if typ, parent := entry(uint32(p)); typ != PtrMapRoot || parent != 0 {
			t.Errorf("root page %d: type %d parent %d", p, typ, parent)
		}
	}
	for p := uint32(3); p <= n; p++ {
		if PtrMapPageOf(p, usable, LockBytePage(ps)) == p {
			continue
		}
		if typ, _ := entry(p); typ < PtrMapRoot || typ > PtrMapBtree {
			t.Fatalf("page %d: type %d", p, typ)
		}
	}
}

// FuzzPtrMapEntry: an entry reads within the usable size and the map
// page's bytes, for any page numbers.
func FuzzPtrMapEntry(f *testing.F) {
	f.Add(make([]byte, 512), 512, uint32(2), uint32(3))
	f.Add(make([]byte, 512), 480, uint32(2), uint32(99))
	f.Add(make([]byte, 10), 512, uint32(5), uint32(7))
	f.Add([]byte{}, -1, uint32(0), uint32(0xffffffff))
	f.Fuzz(func(t *testing.T, data []byte, usable int, mapPage, pgno uint32) {
		_, _, ok := PtrMapEntry(data, usable, mapPage, pgno)
		if ok && (pgno <= mapPage || uint64(pgno-mapPage)*PtrMapEntrySize > uint64(min(usable, len(data)))) {
			t.Fatalf("entry of page %d on map page %d read past %d usable bytes of %d", pgno, mapPage, usable, len(data))
		}
	})
}
