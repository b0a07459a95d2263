package pagoda

import (
	"errors"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
