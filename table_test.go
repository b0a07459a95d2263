package pagoda

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
		`CREATE TABLE b8(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`,
		fmt.Sprintf("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<%d) INSERT INTO b8 SELECT unhex(printf('%%016x', x)), randomblob(100) FROM c", benchRows),
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

// BenchmarkBucketGet looks keys up in one read transaction, in a bucket of
// text keys (k00000001...) and one of 8-byte big-endian integers (bbolt's
// usual keys).
func BenchmarkBucketGet(b *testing.B) {
	db := benchDB(b)
	tx, _ := db.Begin(false)
	defer tx.Rollback()
	r := rand.New(rand.NewPCG(1, 1))
	for _, kind := range []string{"text", "be64"} {
		b.Run(kind, func(b *testing.B) {
			name, keys := "b", make([][]byte, 1<<12)
			for i := range keys {
				n := 1 + r.IntN(benchRows)
				if kind == "text" {
					keys[i] = fmt.Appendf(nil, "k%08d", n)
				} else {
					name, keys[i] = "b8", binary.BigEndian.AppendUint64(nil, uint64(n))
				}
			}
			bkt, err := tx.Bucket(name)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if v, err := bkt.Get(keys[i&(len(keys)-1)]); err != nil || len(v) != 100 {
					b.Fatal(err)
				}
			}
		})
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
// data APIs, a bucket's All and a table's (and its Range over every row);
// ns/row compares them.
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
		{"table-range", func() (n int) {
			for _, r := range tbl.Range(1, benchRows+1) {
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

// leafDirModel reads table t's rows from SQLite: rowid -> v.
func leafDirModel(t *testing.T, sdb *sql.DB) map[int64][]byte {
	t.Helper()
	rows, err := sdb.Query("SELECT rowid, v FROM t")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	model := map[int64][]byte{}
	for rows.Next() {
		var k int64
		var v []byte
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		model[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return model
}

// leafDirFile makes a SQLite file with table t(id INTEGER PRIMARY KEY,
// v BLOB) of rows rows, ids 1..rows, v random blobs of size bytes.
func leafDirFile(t *testing.T, rows, size int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	sqltest.Exec(t, path, "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)",
		fmt.Sprintf("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < %d) INSERT INTO t SELECT i, randomblob(%d) FROM n", rows, size))
	return path
}

// checkGets looks every rowid of model, and the rowids beside each, up
// through tb with Get and OpenBlob, and compares them with model.
func checkGets(t *testing.T, tb *Table, model map[int64][]byte) {
	t.Helper()
	targets := []int64{math.MinInt64, math.MaxInt64, 0}
	for k := range model {
		targets = append(targets, k)
		if k > math.MinInt64 {
			targets = append(targets, k-1)
		}
		if k < math.MaxInt64 {
			targets = append(targets, k+1)
		}
	}
	for _, k := range targets {
		want, ok := model[k]
		rec, err := tb.Get(k)
		switch {
		case !ok:
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get(%d) = %v, want ErrNotFound", k, err)
			}
			continue
		case err != nil:
			t.Fatalf("Get(%d): %v", k, err)
		}
		if got := rec.Column(1).Blob(); !bytes.Equal(got, want) {
			t.Fatalf("Get(%d) = %d bytes, want SQLite's %d", k, len(got), len(want))
		}
		if k%7 == 0 {
			b, err := tb.OpenBlob(k, 1)
			if err != nil {
				t.Fatalf("OpenBlob(%d): %v", k, err)
			}
			got, err := io.ReadAll(b)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("OpenBlob(%d) read %d bytes (%v), want SQLite's %d", k, len(got), err, len(want))
			}
		}
	}
}

// TestGetThroughLeafDir checks Get and OpenBlob once a read transaction's
// table has built its leaf directory, against SQLite: tables of dense,
// sparse and random rowids (the ends of int64 among them), rows that
// spill, leaves thinned by deletes, page sizes 512 to 65536, and a file
// whose last commits sit in its WAL.
func TestGetThroughLeafDir(t *testing.T) {
	type table struct {
		name  string
		key   func(i int, r *rand.Rand) int64
		size  func(i int, r *rand.Rand) int
		rows  int
		trim  bool // delete two rows in three after the load
		inWAL bool // keep the last commits in the WAL
	}
	tables := []table{
		{name: "dense", key: func(i int, _ *rand.Rand) int64 { return int64(i + 1) }, size: func(int, *rand.Rand) int { return 100 }, rows: 6000},
		{name: "sparse", key: func(i int, _ *rand.Rand) int64 { return int64(i)*1000 - 2_000_000 }, size: func(_ int, r *rand.Rand) int { return r.IntN(200) }, rows: 4000},
		{name: "random", key: func(_ int, r *rand.Rand) int64 { return r.Int64() - r.Int64() }, size: func(_ int, r *rand.Rand) int { return r.IntN(60) }, rows: 4000},
		{name: "spills", key: func(i int, _ *rand.Rand) int64 { return int64(i * 3) }, size: func(i int, _ *rand.Rand) int {
			if i%13 == 0 {
				return 3000
			}
			return 40
		}, rows: 3000},
		{name: "deleted", key: func(i int, _ *rand.Rand) int64 { return int64(i + 1) }, size: func(int, *rand.Rand) int { return 50 }, rows: 6000, trim: true},
		{name: "wal", key: func(i int, _ *rand.Rand) int64 { return int64(i + 1) }, size: func(int, *rand.Rand) int { return 80 }, rows: 5000, inWAL: true},
	}
	for _, ps := range []int{512, 4096, 65536} {
		for _, tc := range tables {
			t.Run(fmt.Sprintf("%s/%d", tc.name, ps), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "d.db")
				sdb := sqltest.Open(t, path)
				stmts := []string{fmt.Sprintf("PRAGMA page_size=%d", ps), "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)"}
				if tc.inWAL {
					stmts = append(stmts, "PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0")
				}
				sqltest.Run(t, sdb, stmts...)
				r := rand.New(rand.NewPCG(uint64(ps), 5))
				tx, err := sdb.Begin()
				if err != nil {
					t.Fatal(err)
				}
				for i := range tc.rows {
					v := make([]byte, tc.size(i, r))
					for j := range v {
						v[j] = byte(r.Uint32())
					}
					if _, err := tx.Exec("INSERT OR REPLACE INTO t VALUES (?, ?)", tc.key(i, r), v); err != nil {
						t.Fatal(err)
					}
				}
				if tc.name == "random" {
					for _, k := range []int64{math.MinInt64, math.MaxInt64} {
						if _, err := tx.Exec("INSERT OR REPLACE INTO t VALUES (?, x'01')", k); err != nil {
							t.Fatal(err)
						}
					}
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
				if tc.trim {
					sqltest.Run(t, sdb, "DELETE FROM t WHERE id % 3 <> 0")
				}
				if tc.inWAL {
					sqltest.Run(t, sdb, "UPDATE t SET v = x'abcd' WHERE id % 10 = 0", "DELETE FROM t WHERE id % 17 = 0")
				} else if err := sdb.Close(); err != nil {
					t.Fatal(err)
				}
				model := leafDirModel(t, sqltest.Open(t, path))
				db, err := Open(path, &Options{ReadOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				err = db.View(func(tx *Tx) error {
					tb, err := tx.Table("t")
					if err != nil {
						return err
					}
					checkGets(t, tb, model)
					if tb.dir == nil {
						t.Fatalf("no leaf directory after %d lookups (built at %d)", tb.ld.lookups.Load(), tb.ld.dirAt.Load())
					}
					checkGets(t, tb, model) // every lookup through it
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestLeafDirSnapshot builds a read transaction's leaf directory, lets a
// write transaction change the table under it (rows that grow split the
// leaves, rows deleted, rows appended), and checks that the reader still
// reads its snapshot through the directory, and a new one the change.
func TestLeafDirSnapshot(t *testing.T) {
	path := leafDirFile(t, 5000, 60)
	before := leafDirModel(t, sqltest.Open(t, path))
	db, tx, tb := readTable(t, path, &Options{JournalMode: JournalWAL}, "t") // a commit beside a reader
	checkGets(t, tb, before)
	if tb.dir == nil {
		t.Fatal("no leaf directory")
	}
	after := map[int64][]byte{}
	for k, v := range before {
		after[k] = v
	}
	r := rand.New(rand.NewPCG(1, 2))
	err := db.Update(func(w *Tx) error {
		wt, err := w.Table("t")
		if err != nil {
			return err
		}
		for k := int64(1); k <= 5000; k++ {
			switch {
			case k%9 == 0:
				if err := wt.Delete(k); err != nil {
					return err
				}
				delete(after, k)
			case k%4 == 0:
				v := make([]byte, 300)
				for i := range v {
					v[i] = byte(r.Uint32())
				}
				if err := wt.Put(k, nil, v); err != nil {
					return err
				}
				after[k] = v
			}
		}
		for k := int64(5001); k <= 8000; k++ {
			if err := wt.Put(k, nil, []byte{byte(k)}); err != nil {
				return err
			}
			after[k] = []byte{byte(k)}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkGets(t, tb, before) // the snapshot, through the directory built on it
	// Renewed to the new commit, the transaction drops its directory: the
	// old handle is stale, a new one reads the change.
	if same, err := tx.Renew(); err != nil || same {
		t.Fatalf("Renew = %v, %v: want a later commit", same, err)
	}
	if _, err := tb.Get(1); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("Get through a handle from before Renew: %v, want ErrTxClosed", err)
	}
	if d := tx.rs.leafDir(tb.root); d == nil || d.dir.Load() != nil {
		t.Fatal("Renew kept the old snapshot's directory")
	}
	tb, err = tx.Table("t")
	if err != nil {
		t.Fatal(err)
	}
	checkGets(t, tb, after)
	err = db.View(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		checkGets(t, tb, after)
		if tb.dir == nil {
			t.Fatal("no leaf directory in the later transaction")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLeafDirNotInWrites: a write transaction's tables change under their
// lookups, so they never build a directory.
func TestLeafDirNotInWrites(t *testing.T) {
	path := leafDirFile(t, 3000, 60)
	db := openChecked(t, path, nil)
	var err error
	err = db.Update(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for k := int64(1); k <= 3000; k++ {
			if _, err := tb.Get(k); err != nil {
				return err
			}
			if k%500 == 0 {
				if err := tb.Delete(k - 1); err != nil {
					return err
				}
			}
		}
		if tb.dir != nil {
			t.Fatal("a write transaction built a leaf directory")
		}
		if _, err := tb.Get(499); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get of a row deleted in the transaction: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLeafDirSharedByHandles: lookups through handles taken one a lookup,
// as tx.Table(name).Get(k) does, count together, and a handle taken once
// the directory is built reads through it.
func TestLeafDirSharedByHandles(t *testing.T) {
	path := leafDirFile(t, 4000, 50)
	db, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *Tx) error {
		for k := int64(1); k <= 4000; k++ {
			tb, err := tx.Table("t")
			if err != nil {
				return err
			}
			if rec, err := tb.Get(k); err != nil || rec.Rowid() != k {
				t.Fatalf("Get(%d) = %d, %v", k, rec.Rowid(), err)
			}
		}
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		if _, err := tb.Get(77); err != nil {
			return err
		}
		if tb.dir == nil {
			t.Fatalf("no directory after 4,000 lookups through as many handles (%d lookups, built at %d)", tb.ld.lookups.Load(), tb.ld.dirAt.Load())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLeafDirSharedByTransactions: a transaction per lookup, as a
// request handler reads, from several goroutines: the lookups of every
// transaction on one commit count together, the directory built by one
// serves the next, a commit gives the next transactions a new one (built
// again when its lookups pay), and every lookup reads its own commit.
func TestLeafDirSharedByTransactions(t *testing.T) {
	path := leafDirFile(t, 4000, 50)
	model := leafDirModel(t, sqltest.Open(t, path))
	db := openChecked(t, path, nil)
	get := func(k int64) (hadDir bool) {
		err := db.View(func(tx *Tx) error {
			tb, err := tx.Table("t")
			if err != nil {
				return err
			}
			rec, err := tb.Get(k)
			if err != nil {
				return err
			}
			if got := rec.Column(1).Blob(); !bytes.Equal(got, model[k]) {
				t.Errorf("Get(%d) = %x, want %x", k, got, model[k])
			}
			hadDir = tb.dir != nil
			return nil
		})
		if err != nil {
			t.Error(err) // from the test's goroutines too
		}
		return hadDir
	}
	for round := range 3 {
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := int64(1 + g); k <= 4000; k += 4 {
					get(k)
				}
			}()
		}
		wg.Wait()
		if !get(77) {
			t.Fatalf("round %d: no directory after 4,000 transactions of one lookup each", round)
		}
		// A commit: the next transaction begins on a new state, without
		// a directory until its lookups pay for one.
		k := int64(round*7 + 3)
		v := []byte(fmt.Sprintf("round %d", round))
		if err := db.Update(func(tx *Tx) error {
			tb, err := tx.Table("t")
			if err != nil {
				return err
			}
			return tb.Put(k, nil, v)
		}); err != nil {
			t.Fatal(err)
		}
		model[k] = v
		if get(k) {
			t.Fatalf("round %d: the first transaction after a commit read through a directory of the commit before", round)
		}
	}
}

// TestLongReadersBesideWriter: readers that hold their snapshots while
// they read a table row by row (through its leaf directory, after the
// first few hundred lookups) beside a writer that keeps changing rows,
// with a checkpoint after every commit and the WAL restarting whenever no
// reader reads it; the readers renew or begin again between passes. Each
// commit keeps the rows' sum in row 0: a reader that saw a page of a later
// commit, or a torn one, finds another sum. (The pager's own tests pin
// the orders that broke isolation, as TestSnapshotAcrossWALRestart does:
// this one samples the timings.)
func TestLongReadersBesideWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.db")
	const rows = 3000
	sqltest.Exec(t, path, "CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER, pad BLOB)",
		fmt.Sprintf("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < %d) INSERT INTO t SELECT i, 1, zeroblob(40) FROM n", rows),
		fmt.Sprintf("INSERT INTO t VALUES (0, %d, NULL)", rows))
	db := openChecked(t, path, &Options{CheckpointPages: 1, Sync: SyncOff, JournalMode: JournalWAL}) // readers beside the writer
	const commits = 400                                                                              // the readers read until the writer has made them
	stop, written := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	var closeWritten sync.Once
	go func() {
		// The readers stop at the commits, or when the writer fails.
		defer closeWritten.Do(func() { close(written) })
		r := rand.New(rand.NewPCG(1, 1))
		vals := make([]int64, rows+1)
		for i := 1; i <= rows; i++ {
			vals[i] = 1
		}
		sum := int64(rows)
		for c := 0; ; c++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if c == commits {
				closeWritten.Do(func() { close(written) })
			}
			err := db.Update(func(tx *Tx) error {
				tb, err := tx.Table("t")
				if err != nil {
					return err
				}
				for range 20 {
					k := 1 + r.IntN(rows)
					nv := r.Int64N(1000)
					if err := tb.Put(int64(k), nil, nv, make([]byte, 40+r.IntN(60))); err != nil {
						return err
					}
					sum += nv - vals[k]
					vals[k] = nv
				}
				return tb.Put(0, nil, sum, nil)
			})
			if err != nil {
				done <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for reader := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := db.Begin(false)
			if err != nil {
				errs <- err
				return
			}
			defer func() { tx.Rollback() }()
			for pass := 0; ; pass++ {
				select {
				case <-written:
					return
				default:
				}
				switch {
				case reader != 1 && pass > 0:
					if _, err := tx.Renew(); err != nil {
						errs <- err
						return
					}
				case reader == 1 && pass > 0:
					tx.Rollback()
					if tx, err = db.Begin(false); err != nil {
						errs <- err
						return
					}
				}
				tb, err := tx.Table("t")
				if err != nil {
					errs <- err
					return
				}
				rec, err := tb.Get(0)
				if err != nil {
					errs <- err
					return
				}
				want, got := rec.Column(1).Int(), int64(0)
				for k := int64(1); k <= rows; k++ {
					rec, err := tb.Get(k)
					if err != nil {
						errs <- fmt.Errorf("reader %d pass %d: Get(%d): %w", reader, pass, k, err)
						return
					}
					got += rec.Column(1).Int()
				}
				if got != want {
					errs <- fmt.Errorf("reader %d pass %d: rows sum to %d, row 0 says %d", reader, pass, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestLeafDirAfterRenewSame: a transaction ended and renewed on the same
// snapshot keeps its handles valid; a handle taken before must not pick up
// the directory slot that another table's handle took after.
func TestLeafDirAfterRenewSame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	sqltest.Exec(t, path, "CREATE TABLE a(id INTEGER PRIMARY KEY, v BLOB)", "CREATE TABLE b(id INTEGER PRIMARY KEY, v BLOB)",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 4000) INSERT INTO a SELECT i, 'a' || i FROM n",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 4000) INSERT INTO b SELECT i * 2, 'b' || i FROM n")
	_, tx, ta := readTable(t, path, &Options{ReadOnly: true}, "a")
	if _, err := ta.Get(1); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if same, err := tx.Renew(); err != nil || !same {
		t.Fatalf("Renew = %v, %v: want the same snapshot", same, err)
	}
	tb, err := tx.Table("b")
	if err != nil {
		t.Fatal(err)
	}
	for k := int64(1); k <= 4000; k++ {
		rec, err := tb.Get(2 * k)
		if err != nil || string(rec.Column(1).Text()) != fmt.Sprintf("b%d", k) {
			t.Fatalf("b: Get(%d) = %q, %v", 2*k, rec.Column(1).Text(), err)
		}
	}
	for k := int64(1); k <= 4000; k++ {
		rec, err := ta.Get(k)
		if err != nil || string(rec.Column(1).Text()) != fmt.Sprintf("a%d", k) {
			t.Fatalf("a, through the handle from before Renew: Get(%d) = %q, %v", k, rec.Column(1).Text(), err)
		}
	}
	if ta.dir == nil || ta.dir == tb.dir {
		t.Fatal("a's handle has no directory of its own")
	}
}

// TestWithoutRowIDCursorSurvivesChanges: a write transaction's cursor over
// a WITHOUT ROWID table (a composite key, the first column NOCASE) finds
// its row again by its key after rows are inserted before and after it and
// deleted, its own among them: it moves on in key order, and yields every
// row that was there before the loop and stayed, once.
func TestWithoutRowIDCursorSurvivesChanges(t *testing.T) {
	db := openChecked(t, filepath.Join(t.TempDir(), "w.db"), &Options{PageSize: 512})
	r := rand.New(rand.NewPCG(3, 9))
	type key struct {
		s string
		n int64
	}
	less := func(a, b key) bool {
		if x, y := strings.ToLower(a.s), strings.ToLower(b.s); x != y {
			return x < y
		}
		return a.n < b.n
	}
	mustUpdate(t, db, func(tx *Tx) error {
		w, err := tx.CreateTable("CREATE TABLE w(s TEXT COLLATE NOCASE, n INTEGER, v BLOB, PRIMARY KEY(s, n)) WITHOUT ROWID")
		if err != nil {
			return err
		}
		live := map[key]bool{}
		randKey := func() key { return key{fmt.Sprintf("K%03d", r.IntN(400)), int64(r.IntN(3))} }
		for range 300 {
			k := randKey()
			if _, err := w.Insert(k.s, k.n, make([]byte, r.IntN(60))); err == nil {
				live[k] = true
			} else if !errors.Is(err, ErrExists) {
				return err
			}
		}
		stayed := map[key]bool{}
		for k := range live {
			stayed[k] = true
		}
		seen := map[key]int{}
		var last *key
		c := w.Cursor()
		for ok := c.First(); ok; ok = c.Next() {
			k := key{c.Record().Column(0).Text(), c.Record().Column(1).Int()}
			if last != nil && !less(*last, k) {
				t.Fatalf("cursor went from %v to %v", *last, k)
			}
			last = &k
			seen[k]++

			for range 3 {
				switch k2 := randKey(); r.IntN(3) {
				case 0, 1:
					if _, err := w.Insert(k2.s, k2.n, make([]byte, r.IntN(60))); err == nil {
						live[k2] = true
					} else if !errors.Is(err, ErrExists) {
						return err
					}
				default:
					if r.IntN(4) == 0 {
						k2 = k // the cursor's own row
					}
					if err := w.DeleteKey(k2.s, k2.n); err == nil {

						delete(live, k2)
						delete(stayed, k2)
					} else if !errors.Is(err, ErrNotFound) {
						return err
					}
				}
			}
		}
		if err := c.Err(); err != nil {
			return err
		}
		for k := range stayed {
			if seen[k] != 1 {
				t.Errorf("row %v, there all along: yielded %d times", k, seen[k])
			}
		}
		n, err := w.Count()
		if err != nil || n != int64(len(live)) {
			t.Fatalf("Count %d, %v; the model has %d", n, err, len(live))
		}
		return nil
	})
}

// TestWithoutRowIDCursorEqualKey: a row replaced during a write
// transaction's scan by one whose primary key is equal under its collation
// (NOCASE: 'alpha' is 'ALPHA') is the same row: the cursor moves on from it
// and visits each row once.
func TestWithoutRowIDCursorEqualKey(t *testing.T) {
	db := openChecked(t, filepath.Join(t.TempDir(), "e.db"), nil)
	mustUpdate(t, db, func(tx *Tx) error {
		w, err := tx.CreateTable("CREATE TABLE w(k TEXT COLLATE NOCASE PRIMARY KEY, v) WITHOUT ROWID")
		if err != nil {
			return err
		}
		for _, k := range []string{"alpha", "beta", "gamma"} {
			if _, err := w.Insert(k, 0); err != nil {
				return err
			}
		}
		var seen []string
		c := w.Cursor()
		for ok := c.First(); ok && len(seen) < 20; ok = c.Next() {
			k := c.Record().Column(0).Text()
			seen = append(seen, k)
			if err := w.DeleteKey(k); err != nil {
				return err
			}
			if _, err := w.Insert(strings.ToUpper(k), 1); err != nil {
				return err
			}
		}
		if err := c.Err(); err != nil {
			return err
		}
		if strings.Join(seen, " ") != "alpha beta gamma" {
			t.Errorf("visited %q, want each row once", seen)
		}
		return nil
	})
}
