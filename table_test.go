package pagoda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

const benchRows = 50000

func benchDB(t testing.TB) *DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bench.db")
	sqltest.Exec(t, path,
		"CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)",
		fmt.Sprintf("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<%d) INSERT INTO t SELECT x, randomblob(100) FROM c", benchRows),
		`CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`,
		fmt.Sprintf("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<%d) INSERT INTO b SELECT CAST(printf('k%%08d', x) AS BLOB), randomblob(100) FROM c", benchRows),
		"CREATE INDEX tv ON t(v)")
	db, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// The hot read paths allocate nothing: Get by rowid, Get by key, column
// access, cursor steps.
func TestHotPathsAllocateNothing(t *testing.T) {
	db := benchDB(t)
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	tbl, err := tx.Table("t")
	if err != nil {
		t.Fatal(err)
	}
	bkt, err := tx.Bucket("b")
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("k00001234")
	id := int64(1)
	// Enough lookups first for the transaction to build the table's leaf
	// directory (its one allocation), so that Get is measured through it.
	for k := range int64(benchRows) {
		if _, err := tbl.Get(k + 1); err != nil {
			t.Fatal(err)
		}
	}
	if tbl.dir == nil {
		t.Fatal("no leaf directory: Get is not measured on its usual path")
	}
	checks := map[string]func(){
		"Table.Get+Column": func() {
			rec, err := tbl.Get(id%benchRows + 1)
			if err != nil || len(rec.Column(1).Blob()) != 100 {
				t.Fatal("bad row", err)
			}
			id += 7919
		},
		"Bucket.Get": func() {
			v, err := bkt.Get(key)
			if err != nil || len(v) != 100 {
				t.Fatal("bad value", err)
			}
		},
	}
	c := tbl.Cursor()
	c.First()
	checks["TableCursor.Next"] = func() {
		if !c.Next() {
			c.First()
		}
		_ = c.Record().Column(1).Blob()
	}
	bc := bkt.Cursor()
	bc.First()
	checks["Cursor.Next"] = func() {
		if !bc.Next() {
			bc.First()
		}
		_ = bc.Value()
	}
	bs := bkt.Cursor()
	checks["Cursor.Seek"] = func() {
		if !bs.Seek(key) {
			t.Fatal("seek")
		}
	}
	for name, fn := range checks {
		if a := testing.AllocsPerRun(1000, fn); a != 0 {
			t.Errorf("%s: %v allocs per call", name, a)
		}
	}
}

// benchRowids returns 4,096 random rowids of the benchmarks' tables.
func benchRowids() []int64 {
	keys := make([]int64, 1<<12)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range keys {
		keys[i] = 1 + r.Int64N(benchRows)
	}
	return keys
}

func BenchmarkTableGet(b *testing.B) {
	db := benchDB(b)
	tx, _ := db.Begin(false)
	defer tx.Rollback()
	tbl, _ := tx.Table("t")
	keys := benchRowids()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rec, err := tbl.Get(keys[i&(len(keys)-1)])
		if err != nil || len(rec.Column(1).Blob()) != 100 {
			b.Fatal(err)
		}
	}
}

func BenchmarkBucketGet(b *testing.B) {
	db := benchDB(b)
	tx, _ := db.Begin(false)
	defer tx.Rollback()
	bkt, _ := tx.Bucket("b")
	keys := make([][]byte, 1<<12)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%08d", 1+r.IntN(benchRows))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if v, err := bkt.Get(keys[i&(len(keys)-1)]); err != nil || len(v) != 100 {
			b.Fatal(err)
		}
	}
}

func BenchmarkTableScan(b *testing.B) {
	db := benchDB(b)
	tx, _ := db.Begin(false)
	defer tx.Rollback()
	tbl, _ := tx.Table("t")
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		c := tbl.Cursor()
		for ok := c.First(); ok; ok = c.Next() {
			n += len(c.Record().Column(1).Blob())
		}
		if n != 100*benchRows {
			b.Fatal(n, c.Err())
		}
	}
}

// BenchmarkAll iterates 50,000 entries of 100-byte values through the two
// data APIs, a bucket's All and a table's; ns/row compares them.
// table-rowid and table-raw read each row through Record's small methods,
// which pass the Record by register (see Record).
func BenchmarkAll(b *testing.B) {
	db := benchDB(b)
	tx, _ := db.Begin(false)
	defer tx.Rollback()
	bkt, _ := tx.Bucket("b")
	tbl, _ := tx.Table("t")
	for _, bc := range []struct {
		name string
		read func() int // the bytes of every value
	}{
		{"bucket", func() (n int) {
			for _, v := range bkt.All() {
				n += len(v)
			}
			return n
		}},
		{"table", func() (n int) {
			for _, r := range tbl.All() {
				n += len(r.Column(1).Blob())
			}
			return n
		}},
		{"table-rowid", func() (n int) {
			for _, r := range tbl.All() {
				if r.Rowid() > 0 {
					n += 100
				}
			}
			return n
		}},
		{"table-raw", func() (n int) {
			for _, r := range tbl.All() {
				if len(r.Raw()) > 100 { // its header, then the value
					n += 100
				}
			}
			return n
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if n := bc.read(); n != 100*benchRows {
					b.Fatal(n, tx.Err())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
		})
	}
}

// BenchmarkVariedRows reads rows whose headers differ from one row to
// the next (text and blobs of random lengths, integers of random sizes),
// by Get and by All, each row's every column: what rows that have no
// common shape (recordCtx.shape) cost.
func BenchmarkVariedRows(b *testing.B) {
	path := filepath.Join(b.TempDir(), "varied.db")
	sqltest.Exec(b, path,
		"CREATE TABLE w(id INTEGER PRIMARY KEY, name TEXT, n INT, v BLOB)",
		fmt.Sprintf(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<%d)
			INSERT INTO w SELECT x, substr(hex(randomblob(40)), 1, 5+abs(random())%%60), random() >> (abs(random())%%64), randomblob(20+abs(random())%%80) FROM c`, benchRows))
	db, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, _ := db.Begin(false)
	defer tx.Rollback()
	tbl, err := tx.Table("w")
	if err != nil {
		b.Fatal(err)
	}
	row := func(r Record) int {
		return len(r.Column(1).Blob()) + int(r.Column(2).Int()&1) + len(r.Column(3).Blob())
	}
	b.Run("get", func(b *testing.B) {
		keys := benchRowids()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			rec, err := tbl.Get(keys[i&(len(keys)-1)])
			if err != nil || row(rec) < 25 {
				b.Fatal(err)
			}
		}
	})
	b.Run("all", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for _, r := range tbl.All() {
				n += row(r)
			}
			if n < 25*benchRows {
				b.Fatal(n, tx.Err())
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchRows, "ns/row")
	})
}

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

// BenchmarkViewGet is a request handler's read: one View per lookup
// (Table, Get, Column), on a WAL-mode database opened writable, shared (the
// default: each read transaction holds a read mark of the wal-index) and
// exclusive.
func BenchmarkViewGet(b *testing.B) {
	path := filepath.Join(b.TempDir(), "view.db")
	sqltest.Exec(b, path,
		"PRAGMA journal_mode=WAL",
		"CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)",
		fmt.Sprintf("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<%d) INSERT INTO t SELECT x, randomblob(100) FROM c", benchRows))
	for _, exclusive := range []bool{false, true} {
		name := "shared"
		if exclusive {
			name = "exclusive"
		}
		b.Run(name, func(b *testing.B) {
			db, err := Open(path, &Options{Exclusive: exclusive})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			// A commit first: the WAL holds frames, as in use.
			if err := db.Update(func(tx *Tx) error {
				t, err := tx.Table("t")
				if err != nil {
					return err
				}
				return t.Put(1, nil, []byte("x"))
			}); err != nil {
				b.Fatal(err)
			}
			var sum int
			id := int64(1)
			b.ReportAllocs()
			for b.Loop() {
				err := db.View(func(tx *Tx) error {
					t, err := tx.Table("t")
					if err != nil {
						return err
					}
					rec, err := t.Get(id)
					if err != nil {
						return err
					}
					sum += len(rec.Column(1).Blob())
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				id = id%benchRows + 1
			}
		})
	}
}
