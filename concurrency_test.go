package pagoda

import (
	"fmt"
	"sync"
	"testing"
)

// Many goroutines read at once, each in its own transaction; run with -race.
// The engine shares the catalog and table metadata between transactions.
func TestConcurrentReaders(t *testing.T) {
	db := benchDB(t)
	const readers = 8
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for g := 0; g < readers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			errs <- db.View(func(tx *Tx) error {
				tbl, err := tx.Table("t")
				if err != nil {
					return err
				}
				n := 0
				for rowid, rec := range tbl.All() {
					if len(rec.Column(1).Blob()) != 100 {
						t.Errorf("reader %d: row %d has a short value", g, rowid)
					}
					n++
				}
				if n != benchRows {
					t.Errorf("reader %d: %d rows, want %d", g, n, benchRows)
				}
				b, err := tx.Bucket("b")
				if err != nil {
					return err
				}
				for i := 1; i <= 1000; i++ {
					v, err := b.Get(fmt.Appendf(nil, "k%08d", i*37))
					if err != nil || len(v) != 100 {
						t.Errorf("reader %d: key %d: %d bytes, %v", g, i*37, len(v), err)
					}
				}
				ix, err := tx.Index("tv")
				if err != nil {
					return err
				}
				cnt, err := ix.Count()
				if err != nil || cnt != benchRows {
					t.Errorf("reader %d: index count %d, %v", g, cnt, err)
				}
				return nil
			})
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
