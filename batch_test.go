package pagoda

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// openBatchDB opens a new database with a table kv(k INTEGER PRIMARY KEY, v TEXT).
func openBatchDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "b.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mustUpdate(t, db, func(tx *Tx) error {
		_, err := tx.CreateTable("CREATE TABLE kv(k INTEGER PRIMARY KEY, v TEXT)")
		return err
	})
	return db
}

func insertKV(k int64) func(*Tx) error {
	return func(tx *Tx) error {
		t, err := tx.Table("kv")
		if err != nil {
			return err
		}
		_, err = t.Insert(k, fmt.Sprint("v", k))
		return err
	}
}

// waitPending waits until n Batch calls are queued behind the running one.
func waitPending(t *testing.T, db *DB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		db.mu.Lock()
		got := len(db.batch.pending)
		db.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Batch calls queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// runHeldBatch starts a Batch whose function blocks until release is
// closed, then the Batch calls of fns concurrently, waits until they are
// all queued behind it, releases it, and returns every call's error (the
// blocking one first).
func runHeldBatch(t *testing.T, db *DB, fns []func(*Tx) error) []error {
	t.Helper()
	release := make(chan struct{})
	started := make(chan struct{})
	errs := make([]error, len(fns)+1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs[0] = db.Batch(func(tx *Tx) error {
			close(started)
			<-release
			return insertKV(-1)(tx)
		})
	}()
	<-started
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i+1] = db.Batch(fn)
		}()
	}
	waitPending(t, db, len(fns))
	close(release)
	wg.Wait()
	return errs
}

func countKV(t *testing.T, db *DB) map[int64]bool {
	t.Helper()
	got := map[int64]bool{}
	err := db.View(func(tx *Tx) error {
		tb, err := tx.Table("kv")
		if err != nil {
			return err
		}
		for k := range tb.All() {
			got[k] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestBatchGroupsCommits checks that the calls arriving while a batch
// commits are committed together, in one transaction and one sync.
func TestBatchGroupsCommits(t *testing.T) {
	db := openBatchDB(t)
	before := db.Stats()
	var fns []func(*Tx) error
	for k := range int64(7) {
		fns = append(fns, insertKV(k+1))
	}
	for i, err := range runHeldBatch(t, db, fns) {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	after := db.Stats()
	if commits := after.Commits - before.Commits; commits != 2 {
		t.Errorf("8 Batch calls took %d commits, want 2 (the first alone, then the 7 queued behind it)", commits)
	}
	if syncs := after.Syncs - before.Syncs; syncs > 3 {
		t.Errorf("8 Batch calls took %d syncs, want at most 3", syncs)
	}
	if got := countKV(t, db); len(got) != 8 {
		t.Errorf("%d rows after the batches, want 8", len(got))
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestBatchFailingCall checks that a call whose function fails, or
// panics, gets its own error and leaves no trace, while the calls batched
// with it commit.
func TestBatchFailingCall(t *testing.T) {
	db := openBatchDB(t)
	bad := errors.New("bad call")
	fns := []func(*Tx) error{
		insertKV(1),
		func(tx *Tx) error {
			if err := insertKV(100)(tx); err != nil {
				return err
			}
			return bad
		},
		insertKV(2),
		func(tx *Tx) error {
			if err := insertKV(200)(tx); err != nil {
				return err
			}
			panic("boom")
		},
		insertKV(3),
		insertKV(1), // a duplicate rowid: ErrExists
	}
	errs := runHeldBatch(t, db, fns)
	for _, i := range []int{0, 3, 5} {
		if errs[i] != nil {
			t.Errorf("call %d: %v, want nil", i, errs[i])
		}
	}
	if !errors.Is(errs[2], bad) {
		t.Errorf("failing call: %v, want %v", errs[2], bad)
	}
	if errs[4] == nil {
		t.Error("the panicking call got no error")
	}
	// Calls 1 and 6 both insert rowid 1, in the order they were queued:
	// one commits, the other gets ErrExists.
	if (errs[1] == nil) == (errs[6] == nil) || !errors.Is(errors.Join(errs[1], errs[6]), ErrExists) {
		t.Errorf("two inserts of rowid 1: %v and %v, want one nil and one ErrExists", errs[1], errs[6])
	}
	got := countKV(t, db)
	for _, k := range []int64{-1, 1, 2, 3} {
		if !got[k] {
			t.Errorf("row %d missing", k)
		}
	}
	for _, k := range []int64{100, 200} {
		if got[k] {
			t.Errorf("row %d of a failed call was committed", k)
		}
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestBatchConcurrent runs many goroutines of Batch calls and checks that
// every row arrives, with fewer commits than calls.
func TestBatchConcurrent(t *testing.T) {
	db := openBatchDB(t)
	const goroutines, each = 8, 50
	before := db.Stats()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				errs <- db.Batch(insertKV(int64(g*each + i + 1)))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := countKV(t, db); len(got) != goroutines*each {
		t.Fatalf("%d rows, want %d", len(got), goroutines*each)
	}
	commits := db.Stats().Commits - before.Commits
	t.Logf("%d Batch calls from %d goroutines: %d commits", goroutines*each, goroutines, commits)
	if commits > goroutines*each {
		t.Fatalf("%d commits for %d calls", commits, goroutines*each)
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestBatchReadOnlyAndClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	db := openChecked(t, path, nil)
	mustUpdate(t, db, func(tx *Tx) error { _, err := tx.CreateBucket("b"); return err })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Batch(func(*Tx) error { return nil }); err == nil {
		t.Error("Batch on a closed database succeeded")
	}
	ro, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.Batch(func(*Tx) error { return nil }); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Batch on a read-only database: %v, want ErrReadOnly", err)
	}
}
