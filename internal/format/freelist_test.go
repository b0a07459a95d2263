package format

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// trunkPage builds a trunk page of usable bytes listing leaves, next after it.
func trunkPage(usable int, next uint32, count uint32, leaves ...uint32) []byte {
	b := make([]byte, usable)
	binary.BigEndian.PutUint32(b[0:], next)
	binary.BigEndian.PutUint32(b[4:], count)
	for i, l := range leaves {
		binary.BigEndian.PutUint32(b[8+4*i:], l)
	}
	return b
}

func TestFreelistTrunk(t *testing.T) {
	t.Run("read", func(t *testing.T) {
		tr, err := ParseFreelistTrunk(trunkPage(512, 9, 3, 4, 5, 6), 7, 512)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Next() != 9 || tr.Count() != 3 || tr.Leaf(0) != 4 || tr.Leaf(2) != 6 {
			t.Fatalf("next %d, count %d, leaves %d %d", tr.Next(), tr.Count(), tr.Leaf(0), tr.Leaf(2))
		}
	})
	t.Run("bounds", func(t *testing.T) {
		// SQLite's limits: U/4-2 read, U/4-8 written.
		for _, tc := range []struct{ usable, read, write int }{{480, 118, 112}, {512, 126, 120}, {4096, 1022, 1016}, {65536, 16382, 16376}} {
			if r, w := MaxTrunkLeavesRead(tc.usable), MaxTrunkLeavesWrite(tc.usable); r != tc.read || w != tc.write {
				t.Errorf("usable %d: read %d write %d, want %d %d", tc.usable, r, w, tc.read, tc.write)
			}
			// The last leaf a reader accepts ends at the usable size.
			if end := TrunkOffLeaf(uint32(tc.read-1)) + 4; end != tc.usable {
				t.Errorf("usable %d: the last leaf ends at %d", tc.usable, end)
			}
		}
		if _, err := ParseFreelistTrunk(trunkPage(512, 0, 126), 7, 512); err != nil {
			t.Errorf("126 leaves on a 512-byte trunk: %v", err)
		}
		_, err := ParseFreelistTrunk(trunkPage(512, 0, 127), 7, 512)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Page != 7 || ce.Offset != TrunkOffCount {
			t.Errorf("127 leaves on a 512-byte trunk: %v, want corruption at page 7 offset %d", err, TrunkOffCount)
		}
		if _, err := ParseFreelistTrunk(trunkPage(100, 0, 0), 7, 512); !errors.Is(err, ErrCorrupt) {
			t.Errorf("a trunk shorter than the usable size: %v", err)
		}
	})
	t.Run("write", func(t *testing.T) {
		tr := FreelistTrunk(make([]byte, 512))
		tr.SetNext(3)
		for i := range uint32(MaxTrunkLeavesWrite(512)) {
			tr.SetLeaf(i, 100+i)
		}
		tr.SetCount(uint32(MaxTrunkLeavesWrite(512)))
		want := trunkPage(512, 3, 120)
		for i := range 120 {
			binary.BigEndian.PutUint32(want[8+4*i:], uint32(100+i))
		}
		if string(tr) != string(want) {
			t.Fatalf("trunk written as % x", tr[:16])
		}
	})
}

// TestFreelistTrunkSQLite reads the freelist sqlite3 wrote: its trunks
// list as many pages as PRAGMA freelist_count, and the trunks it filled
// hold MaxTrunkLeavesWrite leaves, no more.
func TestFreelistTrunkSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "free.db")
	sqltest.Exec(t, path, "PRAGMA page_size=512", "CREATE TABLE t(a)",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<2000) INSERT INTO t SELECT randomblob(400) FROM c",
		"DELETE FROM t WHERE rowid % 4 != 0")
	db := sqltest.Open(t, path)
	count, _ := strconv.Atoi(sqltest.Rows(t, db, "PRAGMA freelist_count")[0])
	db.Close()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := Header(file)
	usable := h.UsableSize()
	pages, full, trunks := 0, 0, 0
	for trunk := h.FreelistTrunk(); trunk != 0; trunks++ {
		off := int(trunk-1) * h.PageSize()
		tr, err := ParseFreelistTrunk(file[off:off+h.PageSize()], trunk, usable)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Count() > uint32(MaxTrunkLeavesWrite(usable)) {
			t.Fatalf("trunk %d lists %d leaves", trunk, tr.Count())
		}
		if tr.Count() == uint32(MaxTrunkLeavesWrite(usable)) {
			full++
		}
		pages += 1 + int(tr.Count())
		trunk = tr.Next()
	}
	if pages != count || uint32(count) != h.FreelistCount() || trunks < 3 || full == 0 {
		t.Fatalf("%d pages on %d trunks (%d full); freelist_count %d, header %d", pages, trunks, full, count, h.FreelistCount())
	}
}

// FuzzFreelistTrunk: a trunk that ParseFreelistTrunk accepts reads every
// leaf it lists within the usable size; one it refuses is corruption of
// its page.
func FuzzFreelistTrunk(f *testing.F) {
	f.Add(trunkPage(512, 9, 3, 4, 5, 6), uint16(512))
	f.Add(trunkPage(512, 0, 126), uint16(512))
	f.Add(trunkPage(512, 0, 127), uint16(512))
	f.Add(trunkPage(480, 0, 118), uint16(500))
	f.Add([]byte{0, 0, 0, 1}, uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, usable uint16) {
		tr, err := ParseFreelistTrunk(data, 2, int(usable))
		if err != nil {
			fuzzWantCorrupt(t, err, 2)
			return
		}
		for i := range tr.Count() {
			if end := TrunkOffLeaf(i) + 4; end > int(usable) {
				t.Fatalf("leaf %d of %d ends at %d, past the usable size %d", i, tr.Count(), end, usable)
			}
			_ = tr.Leaf(i)
		}
		_ = tr.Next()
	})
}
