package pagoda_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// requireRollbackFile fails t unless the file at path is a rollback-journal
// database (header bytes 18 and 19 are 1, journal_mode=delete in SQLite's
// eyes) with no -wal and no -journal beside it, sound by DB.Check and
// SQLite's integrity_check (dbtest.Check).
func requireRollbackFile(t *testing.T, path string) {
	t.Helper()
	for _, sfx := range []string{"-wal", "-journal"} {
		if _, err := os.Stat(path + sfx); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s beside %s: %v", sfx, filepath.Base(path), err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var hdr [20]byte
	_, err = f.ReadAt(hdr[:], 0)
	f.Close()
	if err != nil || hdr[18] != 1 || hdr[19] != 1 {
		t.Fatalf("%s: header bytes 18 and 19 are %d and %d (%v), want 1 and 1", filepath.Base(path), hdr[18], hdr[19], err)
	}
	if m := sqltest.One(t, path, "PRAGMA journal_mode"); m != "delete" {
		t.Fatalf("%s: SQLite says journal_mode=%s", filepath.Base(path), m)
	}
	dbtest.Check(t, path)
}

// rollbackFixture is a rollback-journal database made by SQLite: a table
// t(id, v, n) of 300 rows, n summing to 45150.
func rollbackFixture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rb.db")
	sqltest.Exec(t, path, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, n INTEGER)", "CREATE INDEX tv ON t(v)",
		"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<300) INSERT INTO t SELECT i, printf('sqlite-%d', i), i FROM c")
	return path
}

// countSum returns the rows of t and the sum of n, as pagoda reads them.
func countSum(t *testing.T, db *pagoda.DB) (rows, sum int64) {
	t.Helper()
	if err := db.View(func(tx *pagoda.Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for _, rec := range tb.All() {
			rows++
			sum += rec.Column(2).Int()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rows, sum
}

// TestJournalAPI: the API on a rollback-journal database. Buckets,
// Batch from several goroutines, a spilling import (a 64 KiB cache) that
// commits and one that rolls back, Renew, Checkpoint (no frames),
// Backup, Tx.WriteTo, Compact and a read-only DB beside the writer all
// work; the file, and every copy, is a rollback-journal database after
// each, sound by DB.Check and SQLite's integrity_check, holding what
// pagoda wrote.
func TestJournalAPI(t *testing.T) {
	path := rollbackFixture(t)
	dir := filepath.Dir(path)
	db, err := pagoda.Open(path, &pagoda.Options{Timeout: 5 * time.Second, CacheSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	wantRows, wantSum := int64(300), int64(300*301/2)
	check := func(what string) {
		t.Helper()
		if rows, sum := countSum(t, db); rows != wantRows || sum != wantSum {
			t.Fatalf("%s: pagoda reads %d rows summing %d, want %d and %d", what, rows, sum, wantRows, wantSum)
		}
		if got := sqltest.One(t, path, "SELECT count(*) || ' ' || sum(n) FROM t"); got != fmt.Sprintf("%d %d", wantRows, wantSum) {
			t.Fatalf("%s: SQLite reads %s, want %d %d", what, got, wantRows, wantSum)
		}
		requireRollbackFile(t, path)
	}

	// Buckets.
	if err := db.Update(func(tx *pagoda.Tx) error {
		b, err := tx.CreateBucket("kv")
		if err != nil {
			return err
		}
		for i := range 100 {
			if err := b.Put([]byte(fmt.Sprintf("k%03d", i)), bytes.Repeat([]byte{byte(i)}, 100+i)); err != nil {
				return err
			}
		}
		if err := b.Delete([]byte("k007")); err != nil {
			return err
		}
		_, err = b.NextSequence()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *pagoda.Tx) error {
		b, err := tx.Bucket("kv")
		if err != nil {
			return err
		}
		if n, err := b.Count(); err != nil || n != 99 {
			return fmt.Errorf("bucket count %d, %v", n, err)
		}
		v, err := b.Get([]byte("k042"))
		if err != nil || !bytes.Equal(v, bytes.Repeat([]byte{42}, 142)) {
			return fmt.Errorf("bucket k042: %d bytes, %v", len(v), err)
		}
		if seq, err := b.Sequence(); err != nil || seq != 1 {
			return fmt.Errorf("bucket sequence %d, %v", seq, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	check("buckets")

	// Batch from several goroutines.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				id := int64(10000 + g*100 + i)
				errs <- db.Batch(func(tx *pagoda.Tx) error {
					tb, err := tx.Table("t")
					if err != nil {
						return err
					}
					return tb.Put(id, nil, "batch-"+strconv.FormatInt(id, 10), id)
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Batch: %v", err)
		}
	}
	for g := range 8 {
		for i := range 8 {
			wantRows++
			wantSum += int64(10000 + g*100 + i)
		}
	}
	check("Batch")

	// A read-only DB beside the writer sees each commit at its next read
	// transaction; Renew says whether anything was committed.
	ro, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	tx, err := ro.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	if same, err := tx.Renew(); err != nil || !same {
		t.Fatalf("Renew with nothing committed: same %v, %v", same, err)
	}
	tx.Rollback() // the writer's commit waits for this reader
	// A spilling import: more pages than the cache holds.
	before := db.Stats().Spilled
	if err := db.Update(func(tx *pagoda.Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for i := range 3000 {
			id := int64(100000 + (i*7919)%3000)
			if err := tb.Put(id, nil, fmt.Sprintf("import-%d-%0200d", id, id), id); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if db.Stats().Spilled == before {
		t.Fatal("the import spilled nothing: the test proves nothing")
	}
	for i := range 3000 {
		wantRows++
		wantSum += int64(100000 + i)
	}
	if same, err := tx.Renew(); err != nil || same {
		t.Fatalf("Renew after a commit: same %v, %v", same, err)
	}
	tb, err := tx.Table("t")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := tb.Count(); err != nil || n != wantRows {
		t.Fatalf("the read-only DB counts %d rows after Renew (%v), want %d", n, err, wantRows)
	}
	tx.Rollback()
	check("spilling import")

	// A spilling transaction that rolls back leaves the file as it was.
	raw, _ := os.ReadFile(path)
	errStop := errors.New("stop")
	if err := db.Update(func(tx *pagoda.Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for i := range 3000 {
			if err := tb.Put(int64(i+1), nil, fmt.Sprintf("gone-%0300d", i), 0); err != nil {
				return err
			}
		}
		return errStop
	}); !errors.Is(err, errStop) {
		t.Fatalf("Update: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, raw) {
		t.Fatal("a spilling transaction rolled back changed the file")
	}
	check("spilling rollback")

	for _, mode := range []pagoda.CheckpointMode{pagoda.CheckpointPassive, pagoda.CheckpointFull, pagoda.CheckpointRestart, pagoda.CheckpointTruncate} {
		if n, err := db.Checkpoint(mode); n != 0 || err != nil {
			t.Fatalf("Checkpoint(%v): %d, %v", mode, n, err)
		}
	}

	// Copies: Backup, WriteTo and Compact keep the mode.
	backup := filepath.Join(dir, "backup.db")
	if err := db.Backup(backup); err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(dir, "written.db")
	if err := db.View(func(tx *pagoda.Tx) error {
		f, err := os.Create(written)
		if err != nil {
			return err
		}
		if _, err := tx.WriteTo(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}); err != nil {
		t.Fatal(err)
	}
	compact := filepath.Join(dir, "compact.db")
	if err := db.Compact(compact); err != nil {
		t.Fatal(err)
	}
	for _, cp := range []string{backup, written, compact} {
		requireRollbackFile(t, cp)
		if got := sqltest.One(t, cp, "SELECT count(*) || ' ' || sum(n) FROM t"); got != fmt.Sprintf("%d %d", wantRows, wantSum) {
			t.Fatalf("%s: SQLite reads %s, want %d %d", filepath.Base(cp), got, wantRows, wantSum)
		}
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	requireRollbackFile(t, path)
}

// TestJournalConvert: JournalDelete converts a WAL-mode database, with
// commits in its WAL, into a rollback-journal one at Open, as sqlite3's
// PRAGMA journal_mode=DELETE does; while another DB has it open, Open
// fails with ErrBusy.
func TestJournalConvert(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := pagoda.Open(path, &pagoda.Options{CheckpointPages: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *pagoda.Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, n INTEGER)")
		if err != nil {
			return err
		}
		for i := 1; i <= 2000; i++ {
			if err := tb.Put(int64(i), nil, fmt.Sprintf("wal-%05d", i), i); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" {
		_, err := pagoda.Open(path, &pagoda.Options{JournalMode: pagoda.JournalDelete, Timeout: 50 * time.Millisecond})
		if !errors.Is(err, pagoda.ErrBusy) {
			t.Fatalf("JournalDelete beside another DB: %v, want ErrBusy", err)
		}
		if m := sqltest.One(t, path, "PRAGMA journal_mode"); m != "wal" {
			t.Fatalf("after a refused conversion SQLite says journal_mode=%s", m)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = pagoda.Open(path, &pagoda.Options{JournalMode: pagoda.JournalDelete})
	if err != nil {
		t.Fatal(err)
	}
	if rows, sum := countSum(t, db); rows != 2000 || sum != 2001000 {
		t.Fatalf("after the conversion pagoda reads %d rows summing %d", rows, sum)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	requireRollbackFile(t, path)
	if got := sqltest.One(t, path, "SELECT count(*) || ' ' || sum(n) FROM t"); got != "2000 2001000" {
		t.Fatalf("SQLite reads %s", got)
	}
}
