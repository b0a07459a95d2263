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

// TestAllStopsAnywhere breaks out of All after every possible number of
// rows, across leaf boundaries, overflowing rows and (WITHOUT ROWID) entries
// in interior cells, and checks that each stop saw exactly the leading rows,
// in order, with their values.
func TestAllStopsAnywhere(t *testing.T) {
	path := filepath.Join(t.TempDir(), "all.db")
	const rows = 300
	sqltest.Exec(t, path,
		"PRAGMA page_size=512",
		"CREATE TABLE r(id INTEGER PRIMARY KEY, v BLOB)",
		"CREATE TABLE w(k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID",
		fmt.Sprintf(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < %d)
			INSERT INTO r SELECT x*3, zeroblob(CASE WHEN x%%17=0 THEN 2000 ELSE x%%90 END) FROM c`, rows),
		fmt.Sprintf(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < %d)
			INSERT INTO w SELECT printf('key%%05d', x), zeroblob(CASE WHEN x%%17=0 THEN 2000 ELSE x%%90 END) FROM c`, rows),
	)
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *pagoda.Tx) error {
		for _, name := range []string{"r", "w"} {
			tb, err := tx.Table(name)
			if err != nil {
				return err
			}
			// The whole table, for reference, through a cursor.
			var keys []string
			var vals [][]byte
			c := tb.Cursor()
			for ok := c.First(); ok; ok = c.Next() {
				rec := c.Record()
				keys = append(keys, rec.Column(0).String())
				vals = append(vals, bytes.Clone(rec.Column(1).Blob()))
			}
			if len(keys) != rows {
				t.Fatalf("%s: cursor saw %d rows, want %d (%v)", name, len(keys), rows, c.Err())
			}
			for stop := 0; stop <= rows; stop++ {
				n := 0
				for _, rec := range tb.All() {
					if n == stop {
						break
					}
					if k := rec.Column(0).String(); k != keys[n] || !bytes.Equal(rec.Column(1).Blob(), vals[n]) {
						t.Fatalf("%s: row %d of All: key %s (%d bytes), want %s (%d bytes)", name, n, k, len(rec.Column(1).Blob()), keys[n], len(vals[n]))
					}
					n++
				}
				if n != stop && !(stop == rows && n == rows) {
					t.Fatalf("%s: All stopped after %d rows, want %d", name, n, stop)
				}
			}
		}
		return tx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAllStopsWhenTxEnds: a loop body that ends or renews its transaction
// stops All at the next leaf with ErrTxClosed, rather than reading pages
// the transaction no longer holds.
func TestAllStopsWhenTxEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ends.db")
	sqltest.Exec(t, path,
		"PRAGMA page_size=512",
		"CREATE TABLE r(id INTEGER PRIMARY KEY, v BLOB)",
		`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 1000)
			INSERT INTO r SELECT x, zeroblob(40) FROM c`,
	)
	db, err := pagoda.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, end := range []string{"rollback", "renew"} {
		tx, err := db.Begin(false)
		if err != nil {
			t.Fatal(err)
		}
		tb, _ := tx.Table("r")
		n := 0
		for range tb.All() {
			n++
			if n == 3 {
				if end == "rollback" {
					tx.Rollback()
				} else {
					if err := db.Update(func(w *pagoda.Tx) error {
						wt, err := w.Table("r")
						if err != nil {
							return err
						}
						return wt.Put(5000, nil, nil)
					}); err != nil {
						t.Fatal(err)
					}
					if same, err := tx.Renew(); err != nil || same {
						t.Fatalf("Renew = %v, %v", same, err)
					}
				}
			}
		}
		if n >= 1000 || !errors.Is(tx.Err(), pagoda.ErrTxClosed) {
			t.Errorf("%s inside All: %d rows read, Tx.Err %v", end, n, tx.Err())
		}
		if end == "renew" {
			tx.Rollback()
		}
	}
}
