package pagoda

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestBucketSequence: NextSequence, SetSequence and Sequence, kept in
// sqlite_sequence where sqlite3 reads them, one row a bucket; a deleted
// bucket's row goes with it, and a new bucket of a name sqlite3 dropped
// does not take up the old sequence.
func TestBucketSequence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seq.db")
	db := openChecked(t, path, nil)
	mustUpdate(t, db, func(tx *Tx) error {
		a, err := tx.CreateBucket("a")
		if err != nil {
			return err
		}
		if s, err := a.Sequence(); err != nil || s != 0 {
			t.Errorf("new bucket: Sequence %d, %v", s, err)
		}
		for want := uint64(1); want <= 3; want++ {
			if got, err := a.NextSequence(); err != nil || got != want {
				t.Errorf("NextSequence = %d, %v; want %d", got, err, want)
			}
		}
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		if err := b.SetSequence(100); err != nil {
			return err
		}
		if got, err := b.NextSequence(); err != nil || got != 101 {
			t.Errorf("after SetSequence(100): NextSequence = %d, %v", got, err)
		}
		if err := b.SetSequence(math.MaxUint64); !errors.Is(err, ErrUnsupported) {
			t.Errorf("SetSequence(MaxUint64): %v, want ErrUnsupported", err)
		}
		if err := a.SetSequence(math.MaxInt64); err != nil {
			return err
		}
		if _, err := a.NextSequence(); err == nil {
			t.Error("NextSequence past the largest int64: no error")
		}
		return a.SetSequence(3)
	})
	err := db.View(func(tx *Tx) error {
		b, err := tx.Bucket("b")
		if err != nil {
			return err
		}
		if s, err := b.Sequence(); err != nil || s != 101 {
			t.Errorf("read transaction: Sequence %d, %v; want 101", s, err)
		}
		_, err = b.NextSequence()
		if !errors.Is(err, ErrTxNotWritable) {
			t.Errorf("NextSequence in a read transaction: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sqltest.Rows(t, sqltest.Open(t, path), "SELECT name, seq FROM sqlite_sequence ORDER BY name"), ","); got != "a|3,b|101" {
		t.Errorf("sqlite_sequence: %s", got)
	}
	mustUpdate(t, db, func(tx *Tx) error { return tx.DeleteBucket("a") })
	if got := strings.Join(sqltest.Rows(t, sqltest.Open(t, path), "SELECT name FROM sqlite_sequence"), ","); got != "b" {
		t.Errorf("after DeleteBucket(a): sqlite_sequence names %s", got)
	}
	// sqlite3 drops b (a table without AUTOINCREMENT: it leaves the row).
	lite := sqltest.Open(t, path)
	sqltest.Run(t, lite, "DROP TABLE b")
	mustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		if s, err := b.Sequence(); err != nil || s != 0 {
			t.Errorf("a new bucket b: Sequence %d, %v; want 0", s, err)
		}
		return nil
	})
}

// TestBucketCount: Count counts keys, in write and read transactions, with
// keys that spill onto overflow pages and a tree of several levels.
func TestBucketCount(t *testing.T) {
	db := openChecked(t, filepath.Join(t.TempDir(), "count.db"), nil)
	mustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		if n, err := b.Count(); err != nil || n != 0 {
			t.Errorf("empty: Count %d, %v", n, err)
		}
		for i := range 3000 {
			k := []byte(strings.Repeat("k", i%7*1000) + string(rune('a'+i%26)) + strconv.Itoa(i))
			if err := b.Put(k, []byte("v")); err != nil {
				return err
			}
		}
		if n, err := b.Count(); err != nil || n != 3000 {
			t.Errorf("write transaction: Count %d, %v", n, err)
		}
		return nil
	})
	err := db.View(func(tx *Tx) error {
		b, err := tx.Bucket("b")
		if err != nil {
			return err
		}
		if n, err := b.Count(); err != nil || n != 3000 {
			t.Errorf("read transaction: Count %d, %v", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBucketKeyDir: a bucket's lookups in read transactions go through a
// directory of its leaves (btree.KeyDir) once they pay for one, shared by
// the transactions of a commit, one lookup each as a request handler
// makes them; every key is found (in a leaf or an interior page), and
// keys absent, before the first and after the last are not. A commit
// starts the next transactions without it.
func TestBucketKeyDir(t *testing.T) {
	db := openChecked(t, filepath.Join(t.TempDir(), "kd.db"), nil)
	model := map[string][]byte{}
	r := rand.New(rand.NewPCG(5, 6))
	err := db.Update(func(tx *Tx) error {
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		for range 6000 {
			k := binary.BigEndian.AppendUint64(nil, r.Uint64()>>8)
			v := bytes.Repeat(k[7:], 1+r.IntN(120))
			model[string(k)] = v
			if err := b.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	probes := [][]byte{nil, {0}, bytes.Repeat([]byte{0xff}, 9)}
	for k := range model {
		probes = append(probes, []byte(k), append([]byte(k), 0), []byte(k)[:7])
	}
	for round := range 2 {
		hadDir := false
		for _, k := range probes {
			err := db.View(func(tx *Tx) error {
				b, err := tx.Bucket("b")
				if err != nil {
					return err
				}
				v, err := b.Get(k)
				want, ok := model[string(k)]
				switch {
				case !ok && !errors.Is(err, ErrNotFound):
					t.Fatalf("Get(%x) = %x, %v; want ErrNotFound", k, v, err)
				case ok && (err != nil || !bytes.Equal(v, want)):
					t.Fatalf("Get(%x) = %x, %v; want %x", k, v, err, want)
				}
				hadDir = hadDir || b.dir != nil
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if !hadDir {
			t.Fatalf("round %d: no directory after %d transactions of a lookup each", round, len(probes))
		}
		// A commit: the next transaction starts without one.
		k := []byte(fmt.Sprintf("new key %d", round))
		model[string(k)] = []byte("v")
		if err := db.Update(func(tx *Tx) error {
			b, err := tx.Bucket("b")
			if err != nil {
				return err
			}
			if _, err := b.Get(k); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get in the write transaction: %v", err)
			}
			if b.dir != nil {
				t.Error("a write transaction's bucket has a directory")
			}
			return b.Put(k, []byte("v"))
		}); err != nil {
			t.Fatal(err)
		}
		probes = append(probes, k)
	}
}

// TestBucketGetParallel: View-per-lookup bucket reads from four goroutines
// share the commit's key directory and read through FindBlob while a
// writer commits beside them: each lookup sees its own snapshot's value
// (the value a key had at the commit it began on), never another commit's,
// and the lookups after a few hundred take the directory.
func TestBucketGetParallel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "par.db")
	const keys = 3000
	db := openChecked(t, path, nil)
	key := func(k int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(k)*7) }
	val := func(k, gen int) []byte { return fmt.Appendf(nil, "%06d-%04d-%s", k, gen, strings.Repeat("v", 60)) }
	if err := db.Update(func(tx *Tx) error {
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		for k := range keys {
			if err := b.Put(key(k), val(k, 0)); err != nil {
				return err
			}
		}
		return b.Put([]byte("commit"), []byte("0"))
	}); err != nil {
		t.Fatal(err)
	}
	// commits[c] holds the keys commit c changed and their generation,
	// recorded before the commit: a reader checks its value against its
	// snapshot's, whose commit the key "commit" names.
	var mu sync.Mutex
	commits := []map[int]int{{}} // commit i: the generation of each key changed up to it
	genAt := func(c, k int) int {
		mu.Lock()
		defer mu.Unlock()
		g := 0
		for i := 0; i <= c && i < len(commits); i++ {
			if v, ok := commits[i][k]; ok {
				g = v
			}
		}
		return g
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var withDir atomic.Int64
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				k := r.IntN(keys)
				err := db.View(func(tx *Tx) error {
					b, err := tx.Bucket("b")
					if err != nil {
						return err
					}
					cv, err := b.Get([]byte("commit")) // the snapshot's commit
					if err != nil {
						return err
					}
					c, _ := strconv.Atoi(string(cv))
					v, err := b.Get(key(k))
					if err != nil {
						return fmt.Errorf("Get(%d): %w", k, err)
					}
					if want := val(k, genAt(c, k)); !bytes.Equal(v, want) {
						return fmt.Errorf("Get(%d) at commit %d = %q, want %q", k, c, v, want)
					}
					if b.dir != nil {
						withDir.Add(1)
					}
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for c := 1; c <= 20; c++ {
		changed := map[int]int{}
		for range 30 {
			changed[rand.IntN(keys)] = c
		}
		mu.Lock()
		commits = append(commits, changed)
		mu.Unlock()
		if err := db.Update(func(tx *Tx) error {
			b, err := tx.Bucket("b")
			if err != nil {
				return err
			}
			for k, g := range changed {
				if err := b.Put(key(k), val(k, g)); err != nil {
					return err
				}
			}
			return b.Put([]byte("commit"), []byte(strconv.Itoa(c)))
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if withDir.Load() == 0 {
		t.Error("no lookup read through the key directory")
	}
}

// TestCursorReadRuns steps read-transaction cursors of a table and a
// bucket (which decode a leaf's cells in runs) forward and back, over
// rows of mixed sizes (empty, plain, spilling onto overflow pages), and
// checks each entry against SQLite's rows; a Renew onto a later commit
// stops a cursor in the middle of a run with ErrTxClosed.
func TestCursorReadRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	db := openChecked(t, path, nil)
	r := rand.New(rand.NewPCG(5, 6))
	if err := db.Update(func(tx *Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
		if err != nil {
			return err
		}
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		for k := range 3000 {
			v := make([]byte, []int{0, 1, 40, 100, 5000}[r.IntN(5)])
			for i := range v {
				v[i] = byte(r.Uint32())
			}
			if _, err := tb.Insert(int64(k+1), v); err != nil {
				return err
			}
			if err := b.Put(binary.BigEndian.AppendUint32(nil, uint32(k)), v); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := sqltest.Rows(t, sqltest.Open(t, path), "SELECT hex(v) FROM t ORDER BY id")
	wantKV := sqltest.Rows(t, sqltest.Open(t, path), "SELECT hex(key) || '|' || hex(value) FROM b ORDER BY key")
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	tb, _ := tx.Table("t")
	b, _ := tx.Bucket("b")
	hex := func(b []byte) string { return strings.ToUpper(fmt.Sprintf("%x", b)) }

	var got, gotKV []string
	tc, bc := tb.Cursor(), b.Cursor()
	for ok := tc.First(); ok; ok = tc.Next() {
		got = append(got, hex(tc.Record().Column(1).Blob()))
	}
	for ok := bc.First(); ok; ok = bc.Next() {
		gotKV = append(gotKV, hex(bc.Key())+"|"+hex(bc.Value()))
	}
	if tc.Err() != nil || bc.Err() != nil || !slices.Equal(got, want) || !slices.Equal(gotKV, wantKV) {
		t.Fatalf("forward: %d rows (%v), %d entries (%v); want %d and %d", len(got), tc.Err(), len(gotKV), bc.Err(), len(want), len(wantKV))
	}
	got, gotKV = got[:0], gotKV[:0]
	for ok := tc.Last(); ok; ok = tc.Prev() {
		got = append(got, hex(tc.Record().Column(1).Blob()))
	}
	for ok := bc.Last(); ok; ok = bc.Prev() {
		gotKV = append(gotKV, hex(bc.Key())+"|"+hex(bc.Value()))
	}
	slices.Reverse(got)
	slices.Reverse(gotKV)
	if !slices.Equal(got, want) || !slices.Equal(gotKV, wantKV) {
		t.Fatalf("backward: %d rows, %d entries; want %d and %d", len(got), len(gotKV), len(want), len(wantKV))
	}

	// Stop both in the middle of a run: row 1001 and key 1000 are each
	// the second of theirs when they are plain (a run starts at the row a
	// step first reads).
	if !tc.SeekRowid(1000) || !tc.Next() || !bc.Seek(binary.BigEndian.AppendUint32(nil, 999)) || !bc.Next() {
		t.Fatal("seek and step")
	}
	if err := db.Update(func(w *Tx) error {
		wt, err := w.Table("t")
		if err != nil {
			return err
		}
		_, err = wt.Insert(5000, []byte("later"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if same, err := tx.Renew(); err != nil || same {
		t.Fatalf("Renew = %v, %v", same, err)
	}
	if tc.Next() || !errors.Is(tc.Err(), ErrTxClosed) || bc.Next() || !errors.Is(bc.Err(), ErrTxClosed) {
		t.Fatalf("cursors across a Renew onto a later commit: %v, %v; want ErrTxClosed", tc.Err(), bc.Err())
	}
}

// TestCursorOnEmptyKey checks that a write transaction's cursor on the
// empty key is on a key like any other: Cursor.Delete deletes it, and
// after changes to the bucket it finds its place again before it moves.
func TestCursorOnEmptyKey(t *testing.T) {
	db := openChecked(t, filepath.Join(t.TempDir(), "e.db"), nil)
	mustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		for _, k := range []string{"", "c"} {
			if err := b.Put([]byte(k), []byte("v"+k)); err != nil {
				return err
			}
		}
		c := b.Cursor()
		if !c.First() || c.Key() == nil || len(c.Key()) != 0 {
			t.Fatalf("First: key %q (nil %v), %v", c.Key(), c.Key() == nil, c.Err())
		}
		// Keys before and after it, enough to split pages, then Next.
		for i := range 200 {
			if err := b.Put([]byte(fmt.Sprintf("k%03d", i)), make([]byte, 100)); err != nil {
				return err
			}
		}
		if err := b.Put([]byte("0"), []byte("v0")); err != nil {
			return err
		}
		if !c.Next() || string(c.Key()) != "0" {
			t.Fatalf("Next after the puts: %q, %v; want \"0\"", c.Key(), c.Err())
		}
		if !c.First() || len(c.Key()) != 0 {
			t.Fatalf("First: %q, %v", c.Key(), c.Err())
		}
		if err := b.Delete([]byte("")); err != nil {
			return err
		}
		if !c.Next() || string(c.Key()) != "0" {
			t.Fatalf("Next after deleting the empty key: %q, %v; want \"0\"", c.Key(), c.Err())
		}
		if err := b.Put(nil, []byte("again")); err != nil {
			return err
		}
		if !c.First() || len(c.Key()) != 0 {
			t.Fatalf("First: %q, %v", c.Key(), c.Err())
		}
		if err := c.Delete(); err != nil {
			t.Fatalf("Cursor.Delete on the empty key: %v", err)
		}
		if _, err := b.Get(nil); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get of the deleted empty key: %v", err)
		}
		return c.Err()
	})
}

// TestBucketForeignKeyTypes: a table of a bucket's shape that is not
// STRICT, where sqlite3 stored keys of other types than BLOB. The bucket
// API reads its BLOB keys and says ErrUnsupported for the others, never
// handing out a number or a TEXT as a key's bytes.
func TestBucketForeignKeyTypes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	sqltest.Exec(t, path,
		"CREATE TABLE kv(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID",
		"INSERT INTO kv VALUES (1, x'01'), (2.5, x'02'), ('k', x'03'), (x'6b', x'04'), (x'6c', 'text value'), (x'6d', 7)",
	)
	db := openChecked(t, path, &Options{ReadOnly: true})
	err := db.View(func(tx *Tx) error {
		b, err := tx.Bucket("kv")
		if err != nil {
			return err
		}
		if v, err := b.Get([]byte("k")); err != nil || string(v) != "\x04" {
			t.Errorf("Get(k): %q, %v; want the BLOB key's value", v, err)
		}
		if v, err := b.Get([]byte("l")); err != nil || string(v) != "text value" {
			t.Errorf("Get(l): %q, %v; want the TEXT value's bytes", v, err)
		}
		if v, err := b.Get([]byte("m")); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Get(m), an INTEGER value: %q, %v; want ErrUnsupported", v, err)
		}
		c := b.Cursor()
		if c.First() {
			t.Errorf("First: key %q, on the INTEGER key", c.Key())
		}
		if !errors.Is(c.Err(), ErrUnsupported) {
			t.Errorf("First: %v, want ErrUnsupported", c.Err())
		}
		for k := range b.All() {
			t.Errorf("All: key %q, from the INTEGER key", k)
		}
		if !errors.Is(tx.Err(), ErrUnsupported) {
			t.Errorf("All: %v, want ErrUnsupported", tx.Err())
		}
		return nil
	})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("View: %v", err)
	}
}
