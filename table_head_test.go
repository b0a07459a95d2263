package pagoda_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestTableHead reads the heads of rows SQLite wrote, of every size around
// the local-payload limits and across long overflow chains, at several
// page sizes: each head is a prefix of the record Get returns, the whole
// of it when the row does not spill, and at least SQLite's minimum local
// payload when it does; Head of a spilling row allocates nothing (it
// reads no overflow page, where Get assembles them); a missing row is
// ErrNotFound and a WITHOUT ROWID table ErrUnsupported.
func TestTableHead(t *testing.T) {
	for _, pageSize := range []int{512, 4096, 65536} {
		t.Run(fmt.Sprint(pageSize), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "h.db")
			db := sqltest.Open(t, path)
			for _, s := range []string{
				fmt.Sprintf("PRAGMA page_size=%d", pageSize),
				"CREATE TABLE t(name TEXT, n INT, b BLOB)",
				"CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID",
				"INSERT INTO w VALUES('a', 1)",
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			sizes := []int{0, 1, 100, pageSize - 40, pageSize - 35, pageSize - 30, pageSize, pageSize + 1, 3 * pageSize, 200000}
			for i, n := range sizes {
				if _, err := db.Exec("INSERT INTO t VALUES(?, ?, zeroblob(?))", fmt.Sprint("row", i), n, n); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()

			pdb, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer pdb.Close()
			// SQLite's minimum local payload: (usable-12)*32/255 - 23.
			minLocal := (pageSize-12)*32/255 - 23
			err = pdb.View(func(tx *pagoda.Tx) error {
				tab, err := tx.Table("t")
				if err != nil {
					return err
				}
				spilled := 0
				for i, n := range sizes {
					rowid := int64(i + 1)
					r, err := tab.Get(rowid)
					if err != nil {
						return err
					}
					raw := bytes.Clone(r.Raw())
					buf := make([]byte, len(raw)+10)
					inPlace := func(n int) bool {
						head, size, err := tab.Head(rowid, buf[:n])
						if err != nil {
							t.Fatal(err)
						}
						if size != int64(len(raw)) {
							t.Errorf("row %d: Head's size %d, the record is %d", rowid, size, len(raw))
						}
						if !bytes.Equal(head, raw[:min(n, len(raw))]) {
							t.Errorf("row %d: Head of %d bytes is not the record's first bytes", rowid, n)
						}
						return &head[0] != &buf[0]
					}
					for _, n := range []int{1, 16, 100, 600, 5000, 300000} {
						inPlace(min(n, len(buf)))
					}
					// What the leaf holds: the longest head returned in place.
					local := sort.Search(len(buf), func(n int) bool { return n > 0 && !inPlace(n) }) - 1
					if local < min(len(raw), minLocal) {
						t.Errorf("row %d: %d bytes in place, below the minimum local payload %d", rowid, local, minLocal)
					}
					if local < len(raw) {
						spilled++
						buf := buf[:local+100] // a few bytes of the first overflow page
						allocs := testing.AllocsPerRun(20, func() {
							if _, _, err := tab.Head(rowid, buf); err != nil {
								t.Error(err)
							}
						})
						if allocs != 0 {
							t.Errorf("row %d spills (%d of %d bytes local): Head allocates %.1f times", rowid, local, len(raw), allocs)
						}
					}
					_ = n
				}
				if spilled < 3 {
					t.Errorf("%d rows spill, want at least 3", spilled)
				}
				if _, _, err := tab.Head(1000, nil); !errors.Is(err, pagoda.ErrNotFound) {
					t.Errorf("Head of a missing row: %v, want ErrNotFound", err)
				}
				w, err := tx.Table("w")
				if err != nil {
					return err
				}
				if _, _, err := w.Head(1, nil); !errors.Is(err, pagoda.ErrUnsupported) {
					t.Errorf("Head on a WITHOUT ROWID table: %v, want ErrUnsupported", err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
