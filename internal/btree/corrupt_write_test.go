package btree

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// Writes to damaged trees return errors; they never panic or hang. Each
// round damages a few random bytes of a SQLite-made file (a table with
// overflowing rows and an index) and then inserts, deletes and clears.
func TestWritesOnDamagedTrees(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	sqltest.Exec(t, path,
		"PRAGMA page_size=512",
		"CREATE TABLE t(a, b)",
		"CREATE INDEX ta ON t(a)",
		fmt.Sprintf(series+"INSERT INTO t SELECT x, randomblob(x %% 700) FROM c", 400),
		"DELETE FROM t WHERE rowid % 3 = 0")
	db := sqltest.Open(t, path)
	tRoot, iRoot := rootOf(t, db, "t"), rootOf(t, db, "ta")
	db.Close()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(8, 9))
	errs := 0
	for round := 0; round < 1000; round++ {
		img := append([]byte(nil), orig...)
		for k := 0; k < 1+r.IntN(4); k++ {
			off := 100 + r.IntN(len(img)-100)
			if r.IntN(2) == 0 { // a page header or cell pointer
				off = (1+r.IntN(len(img)/512-1))*512 + r.IntN(24)
			}
			img[off] = byte(r.Uint32())
		}
		m := memPagerFromImage(img, false)
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("round %d: panic: %v\n%s", round, p, debug.Stack())
				}
			}()
			wr := NewWriter(m)
			for op := 0; op < 60; op++ {
				var err error
				rowid := int64(r.IntN(500))
				switch r.IntN(5) {
				case 0, 1:
					_, err = wr.TableInsert(tRoot, rowid, payloadFor(rowid, op, r.IntN(900)))
				case 2:
					_, err = wr.TableDelete(tRoot, rowid)
				case 3:
					_, err = wr.IndexInsert(iRoot, nil, 0, rec(format.IntValue(rowid), format.IntValue(rowid)))
				default:
					_, err = wr.IndexDelete(iRoot, nil, 0, rec(format.IntValue(rowid), format.IntValue(rowid)))
				}
				if err != nil {
					errs++
					return
				}
			}
			if err := wr.ClearTree(tRoot, false); err != nil {
				errs++
			}
		}()
	}
	t.Logf("%d of 1000 damaged files gave errors", errs)
}
