package pagoda_test

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"os"
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
		"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID",
		fmt.Sprintf(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < %d)
			INSERT INTO b SELECT CAST(printf('key%%05d', x) AS BLOB), randomblob(CASE WHEN x%%17=0 THEN 2000 ELSE x%%90 END) FROM c`, rows),
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
		// A bucket's All, and a Range from a key in the middle.
		b, err := tx.Bucket("b")
		if err != nil {
			return err
		}
		var keys, vals [][]byte
		c := b.Cursor()
		for ok := c.First(); ok; ok = c.Next() {
			keys = append(keys, bytes.Clone(c.Key()))
			vals = append(vals, bytes.Clone(c.Value()))
		}
		if len(keys) != rows {
			t.Fatalf("bucket: cursor saw %d entries, want %d (%v)", len(keys), rows, c.Err())
		}
		for _, from := range []int{0, rows / 3} {
			for stop := from; stop <= rows; stop++ {
				n := from
				var lo []byte
				if from > 0 {
					lo = keys[from]
				}
				for k, v := range b.Range(lo, nil) {
					if n == stop {
						break
					}
					if !bytes.Equal(k, keys[n]) || !bytes.Equal(v, vals[n]) {
						t.Fatalf("bucket: entry %d of Range(%q): key %q (%d bytes), want %q (%d bytes)", n, lo, k, len(v), keys[n], len(vals[n]))
					}
					n++
				}
				if n != stop && !(stop == rows && n == rows) {
					t.Fatalf("bucket: Range(%q) stopped after entry %d, want %d", lo, n, stop)
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
// the transaction no longer holds; a table's and a bucket's.
func TestAllStopsWhenTxEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ends.db")
	sqltest.Exec(t, path,
		"PRAGMA page_size=512",
		"CREATE TABLE r(id INTEGER PRIMARY KEY, v BLOB)",
		`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 1000)
			INSERT INTO r SELECT x, zeroblob(40) FROM c`,
		"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID",
		`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 1000)
			INSERT INTO b SELECT CAST(printf('k%05d', x) AS BLOB), zeroblob(40) FROM c`,
	)
	db, err := pagoda.Open(path, &pagoda.Options{JournalMode: pagoda.JournalWAL}) // a commit beside a reader
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, kind := range []string{"table", "bucket"} {
		for _, end := range []string{"rollback", "renew"} {
			tx, err := db.Begin(false)
			if err != nil {
				t.Fatal(err)
			}
			var all iter.Seq2[int64, []byte]
			if kind == "table" {
				tb, _ := tx.Table("r")
				all = func(yield func(int64, []byte) bool) {
					for id, rec := range tb.All() {
						if !yield(id, rec.Column(1).Blob()) {
							return
						}
					}
				}
			} else {
				b, _ := tx.Bucket("b")
				all = func(yield func(int64, []byte) bool) {
					for _, v := range b.All() {
						if !yield(0, v) {
							return
						}
					}
				}
			}
			n := 0
			for range all {
				n++
				if n != 3 {
					continue
				}
				if end == "rollback" {
					tx.Rollback()
					continue
				}
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
			if n >= 1000 || !errors.Is(tx.Err(), pagoda.ErrTxClosed) {
				t.Errorf("%s: %s inside All: %d entries read, Tx.Err %v", kind, end, n, tx.Err())
			}
			if end == "renew" {
				tx.Rollback()
			}
		}
	}
}

// TestBucketAllReportsMalformedEntry damages one bucket entry (its value's
// serial type made reserved) and checks that the scans of the bucket stop
// there and report it: Tx.Err and View wrap ErrCorrupt, whether the scan
// starts at the first entry (All) or seeks (Range). The bucket's yield
// fails the cursor and stops; the scan must still hand the error to the
// transaction.
func TestBucketAllReportsMalformedEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.db")
	sqltest.Exec(t, path,
		"PRAGMA journal_mode=DELETE", // every page in the file, none in a WAL
		"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID",
		`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 20)
			INSERT INTO b SELECT CAST(printf('k%05d', x) AS BLOB), zeroblob(10) FROM c`,
	)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The entry's record: header length 3, the key's serial type (a
	// 6-byte blob), the value's (a 10-byte blob), then the key.
	key := []byte("k00007")
	at := bytes.Index(data, append([]byte{3, 12 + 2*6, 12 + 2*10}, key...))
	if at < 0 || bytes.Count(data, key) != 1 {
		t.Fatal("entry k00007 not found once in the file")
	}
	data[at+2] = 10 // reserved
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	scans := map[string]func(*pagoda.Bucket) iter.Seq2[[]byte, []byte]{
		"All":   (*pagoda.Bucket).All,
		"Range": func(b *pagoda.Bucket) iter.Seq2[[]byte, []byte] { return b.Range([]byte("k00002"), nil) },
	}
	for name, scan := range scans {
		n := 0
		err := db.View(func(tx *pagoda.Tx) error {
			b, err := tx.Bucket("b")
			if err != nil {
				return err
			}
			for range scan(b) {
				n++
			}
			if !errors.Is(tx.Err(), pagoda.ErrCorrupt) {
				t.Errorf("%s: Tx.Err = %v after %d entries, want ErrCorrupt", name, tx.Err(), n)
			}
			return nil
		})
		if !errors.Is(err, pagoda.ErrCorrupt) {
			t.Errorf("%s: View = %v after %d entries, want ErrCorrupt", name, err, n)
		}
		if want := map[string]int{"All": 6, "Range": 5}[name]; n != want {
			t.Errorf("%s: %d entries before the damaged one, want %d", name, n, want)
		}
	}
}

// TestTableRange checks Table.Range against the rows SQLite selects with
// rowid >= from AND rowid < to, for bounds before, inside, between and
// past the rows (negative rowids, gaps, overflowing rows, a tree of many
// levels on 512-byte pages), in a read transaction (which scans) and a
// write transaction (which steps a cursor), and breaks out after each
// possible number of rows of one range.
func TestTableRange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "range.db")
	sqltest.Exec(t, path,
		"PRAGMA page_size=512",
		"CREATE TABLE r(id INTEGER PRIMARY KEY, v BLOB)",
		`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 400)
			INSERT INTO r SELECT x*5 - 1000, zeroblob(CASE WHEN x%23=0 THEN 1500 ELSE x%60 END) FROM c`)
	sdb := sqltest.Open(t, path)
	want := func(from, to int64) (ids []int64) {
		rows, err := sdb.Query("SELECT id FROM r WHERE id >= ? AND id < ? ORDER BY id", from, to)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	bounds := []int64{-1 << 62, -1001, -995, -994, -3, 0, 1, 4, 5, 6, 500, 995, 996, 1000, 1 << 62}
	db, err := pagoda.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, writable := range []bool{false, true} {
		tx, err := db.Begin(writable)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() // before Close, when the test fails
		tb, err := tx.Table("r")
		if err != nil {
			t.Fatal(err)
		}
		for _, from := range bounds {
			for _, to := range bounds {
				w := want(from, to)
				var got []int64
				for rowid, rec := range tb.Range(from, to) {
					if n := len(rec.Column(1).Blob()); rowid%23 != 0 && n > 1500 {
						t.Fatalf("row %d: %d bytes", rowid, n)
					}
					got = append(got, rowid)
				}
				if fmt.Sprint(got) != fmt.Sprint(w) {
					t.Fatalf("writable %v: Range(%d, %d) = %v, want %v", writable, from, to, got, w)
				}
			}
		}
		all := want(-995, 996)
		for stop := range len(all) + 1 {
			var got []int64
			for rowid := range tb.Range(-995, 996) {
				if len(got) == stop {
					break
				}
				got = append(got, rowid)
			}
			if fmt.Sprint(got) != fmt.Sprint(all[:stop]) {
				t.Fatalf("writable %v: stopped after %d rows: %v", writable, stop, got)
			}
		}
		if err := tx.Err(); err != nil {
			t.Fatal(err)
		}
		tx.Rollback()
	}
}
