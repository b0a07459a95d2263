package pagoda_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pagodadb/pagoda"
)

// renewDB makes a database with a table t(id, v), rows 1..n, an index on v,
// and a bucket b with keys k1..kn.
func renewDB(t *testing.T, n int, opts *pagoda.Options) *pagoda.DB {
	t.Helper()
	db, err := pagoda.Open(filepath.Join(t.TempDir(), "renew.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	err = db.Update(func(tx *pagoda.Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
		if err != nil {
			return err
		}
		if _, err := tx.CreateIndex("CREATE INDEX tv ON t(v)"); err != nil {
			return err
		}
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		for i := 1; i <= n; i++ {
			if err := tb.Put(int64(i), nil, fmt.Sprintf("v%05d", i)); err != nil {
				return err
			}
			if err := b.Put(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "%d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestRenew: with nothing committed, a renewed transaction is the same
// snapshot, and what was taken from it works on, cursors in place; after a
// commit it sees the commit, and what was taken before fails with
// ErrTxClosed until taken again.
func TestRenew(t *testing.T) {
	db := renewDB(t, 500, nil)
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := tx.Table("t")
	ix, _ := tx.Index("tv")
	bk, _ := tx.Bucket("b")
	tc := tb.Cursor()
	if !tc.SeekRowid(200) {
		t.Fatal("row 200 missing")
	}
	ic := ix.Cursor()
	if !ic.Seek("v00300") {
		t.Fatal("index entry v00300 missing")
	}
	bc := bk.Cursor()
	if !bc.Seek([]byte("k00400")) {
		t.Fatal("key k00400 missing")
	}
	rec, _ := tb.Get(7)
	held, keep := rec.Column(1).Text(), bytes.Clone(rec.Column(1).Blob())

	for _, rollback := range []bool{false, true} {
		if rollback {
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if _, err := tb.Get(1); !errors.Is(err, pagoda.ErrTxClosed) {
				t.Fatalf("Get after Rollback: %v", err)
			}
		}
		same, err := tx.Renew()
		if err != nil || !same {
			t.Fatalf("Renew (after Rollback %v) with nothing committed = %v, %v", rollback, same, err)
		}
		if held != string(keep) {
			t.Fatal("a slice of the same snapshot changed")
		}
	}
	// Cursors are where they were.
	if !tc.Next() || tc.Rowid() != 201 {
		t.Fatalf("table cursor after Renew: %v at %d (%v)", tc.Err(), tc.Rowid(), tc.Err())
	}
	if !ic.Next() || ic.Key().Column(0).Text() != "v00301" {
		t.Fatalf("index cursor after Renew: %v", ic.Err())
	}
	if !bc.Next() || string(bc.Key()) != "k00401" {
		t.Fatalf("bucket cursor after Renew: %v", bc.Err())
	}
	if _, err := bk.Get([]byte("k00001")); err != nil {
		t.Fatal(err)
	}

	// An open read transaction does not see a commit until it is renewed.
	err = db.Update(func(w *pagoda.Tx) error {
		wt, err := w.Table("t")
		if err != nil {
			return err
		}
		return wt.Put(1000, nil, "new")
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Get(1000); !errors.Is(err, pagoda.ErrNotFound) {
		t.Fatalf("an open snapshot saw a later commit: %v", err)
	}
	same, err := tx.Renew()
	if err != nil || same {
		t.Fatalf("Renew after a commit = %v, %v; want a new snapshot", same, err)
	}
	_, getErr := tb.Get(1)
	_, countErr := ix.Count()
	_, bucketErr := bk.Get([]byte("k00001"))
	tc.Next()
	ic.Next()
	bc.Next()
	for what, err := range map[string]error{
		"Table.Get": getErr, "Index.Count": countErr, "Bucket.Get": bucketErr,
		"TableCursor": tc.Err(), "IndexCursor": ic.Err(), "Cursor": bc.Err(),
	} {
		if !errors.Is(err, pagoda.ErrTxClosed) {
			t.Errorf("%s taken before a Renew onto a later commit: %v, want ErrTxClosed", what, err)
		}
	}
	n := 0
	for range tb.All() {
		n++
	}
	if n != 0 || !errors.Is(tx.Err(), pagoda.ErrTxClosed) {
		t.Errorf("All of a stale table: %d rows, Tx.Err %v", n, tx.Err())
	}
	tb2, err := tx.Table("t")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := tb2.Get(1000); err != nil || r.Column(1).Text() != "new" {
		t.Fatalf("renewed transaction: Get(1000) = %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); !errors.Is(err, pagoda.ErrTxClosed) {
		t.Fatalf("second Rollback: %v", err)
	}

	// Write transactions cannot be renewed; nothing can after Close.
	w, err := db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Renew(); !errors.Is(err, pagoda.ErrUnsupported) {
		t.Fatalf("Renew of a write transaction: %v", err)
	}
	w.Rollback()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Renew(); !errors.Is(err, pagoda.ErrTxClosed) {
		t.Fatalf("Renew after Close: %v", err)
	}
}

// TestRenewConcurrent renews read transactions in a loop beside a writer
// that moves money between accounts, with checkpoints after every few
// commits so that the WAL is copied and starts over all along. Every
// snapshot must hold the invariant total; a slice read before a Renew that
// reports the same snapshot must still hold its bytes after it.
func TestRenewConcurrent(t *testing.T) {
	const accounts, total = 50, 50 * 1000
	db, err := pagoda.Open(filepath.Join(t.TempDir(), "bank.db"), &pagoda.Options{CheckpointPages: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(b *pagoda.Bucket, i int, v uint64) error {
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], v)
		return b.Put(fmt.Appendf(nil, "acct%03d", i), buf[:])
	}
	err = db.Update(func(tx *pagoda.Tx) error {
		b, err := tx.CreateBucket("bank")
		if err != nil {
			return err
		}
		for i := range accounts {
			if err := put(b, i, total/accounts); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var writer, readers sync.WaitGroup
	stop := make(chan struct{})
	writer.Add(1)
	go func() {
		defer writer.Done()
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			default:
			}
			err := db.Update(func(tx *pagoda.Tx) error {
				b, err := tx.Bucket("bank")
				if err != nil {
					return err
				}
				from, to := k%accounts, (k*7+3)%accounts
				fv, err := b.Get(fmt.Appendf(nil, "acct%03d", from))
				if err != nil {
					return err
				}
				f := binary.BigEndian.Uint64(fv)
				tv, err := b.Get(fmt.Appendf(nil, "acct%03d", to))
				if err != nil {
					return err
				}
				v := binary.BigEndian.Uint64(tv)
				amt := uint64(k%7 + 1)
				if from == to || f < amt {
					return nil
				}
				if err := put(b, from, f-amt); err != nil {
					return err
				}
				return put(b, to, v+amt)
			})
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	sum := func(tx *pagoda.Tx, b *pagoda.Bucket) (uint64, []byte) {
		var n uint64
		var first []byte
		for k, v := range b.All() {
			n += binary.BigEndian.Uint64(v)
			if string(k) == "acct000" {
				first = v
			}
		}
		if err := tx.Err(); err != nil {
			t.Error(err)
		}
		return n, first
	}
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			tx, err := db.Begin(false)
			if err != nil {
				t.Error(err)
				return
			}
			defer tx.Rollback()
			b, _ := tx.Bucket("bank")
			sames, news := 0, 0
			// Until the writer has committed 60 times, and at least 1000
			// times round.
			for i := 0; i < 1000 || db.Stats().Commits < 60; i++ {
				if (i+r)%2 == 0 {
					tx.Rollback() // sometimes ended between reads, sometimes not
				}
				for range 2 { // the second Renew often finds nothing committed
					same, err := tx.Renew()
					if err != nil {
						t.Error(err)
						return
					}
					if !same {
						news++
						if b, err = tx.Bucket("bank"); err != nil {
							t.Error(err)
							return
						}
					}
					n, first := sum(tx, b)
					if n != total {
						t.Errorf("reader %d, renewal %d (same %v): total %d, want %d", r, i, same, n, total)
						return
					}
					held := bytes.Clone(first)
					if same, err = tx.Renew(); err != nil {
						t.Error(err)
						return
					}
					if same {
						sames++
						if !bytes.Equal(first, held) {
							t.Errorf("reader %d, renewal %d: a slice of the same snapshot changed: % x, was % x", r, i, first, held)
							return
						}
					} else {
						news++
						if b, err = tx.Bucket("bank"); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}
			if sames == 0 || news == 0 {
				t.Errorf("reader %d: %d renewals kept the snapshot, %d took a new one: the test needs both", r, sames, news)
			}
			t.Logf("reader %d: %d renewals kept the snapshot, %d took a new one", r, sames, news)
		}()
	}
	readers.Wait()
	close(stop)
	writer.Wait()
	stats := db.Stats()
	t.Logf("checkpoints %d, commits %d", stats.Checkpoints, stats.Commits)
}
