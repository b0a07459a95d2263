package pagoda_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
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
					head, size, err := tab.Head(rowid)
					if err != nil {
						return err
					}
					switch {
					case size != int64(len(raw)):
						t.Errorf("row %d (%d bytes of data): Head's size %d, the record is %d", rowid, n, size, len(raw))
					case !bytes.HasPrefix(raw, head):
						t.Errorf("row %d: the head is not a prefix of the record", rowid)
					case len(head) < min(len(raw), minLocal):
						t.Errorf("row %d: head of %d bytes, below the minimum local payload %d", rowid, len(head), minLocal)
					}
					if len(head) < len(raw) {
						spilled++
						allocs := testing.AllocsPerRun(20, func() {
							if _, _, err := tab.Head(rowid); err != nil {
								t.Error(err)
							}
						})
						if allocs != 0 {
							t.Errorf("row %d spills (%d of %d bytes local): Head allocates %.1f times", rowid, len(head), len(raw), allocs)
						}
					}
				}
				if spilled < 3 {
					t.Errorf("%d rows spill, want at least 3", spilled)
				}
				if _, _, err := tab.Head(1000); !errors.Is(err, pagoda.ErrNotFound) {
					t.Errorf("Head of a missing row: %v, want ErrNotFound", err)
				}
				w, err := tx.Table("w")
				if err != nil {
					return err
				}
				if _, _, err := w.Head(1); !errors.Is(err, pagoda.ErrUnsupported) {
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
