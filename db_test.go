package pagoda

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/vfs"
)

func apiDB(t *testing.T, opts *Options) *DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "api.db")
	sqltest.Exec(t, path,
		"CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)",
		"INSERT INTO t VALUES (1, 'a'), (2, 'b')",
		`CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`,
		"CREATE INDEX tn ON t(name)")
	db := openChecked(t, path, opts)
	return db
}

// readTable opens path with opts, begins a read transaction and takes
// table name in it; the transaction and the database end with the test.
// It writes nothing, and so checks nothing: its files may be damaged on
// purpose.
func readTable(t *testing.T, path string, opts *Options, name string) (*DB, *Tx, *Table) {
	t.Helper()
	db := openDamaged(t, path, opts)
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	tb, err := tx.Table(name)
	if err != nil {
		t.Fatal(err)
	}
	return db, tx, tb
}

// The contract's errors, tested with errors.Is.
func TestErrorsOfTheContract(t *testing.T) {
	db := apiDB(t, nil)
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Bucket("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing bucket: %v", err)
	}
	if _, err := tx.Bucket("t"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("table of another shape as a bucket: %v", err)
	}
	if _, err := tx.Table("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing table: %v", err)
	}
	if _, err := tx.Index("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing index: %v", err)
	}
	tbl, err := tx.Table("T") // names are case-insensitive
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Get(3); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing row: %v", err)
	}
	if _, err := tbl.GetKey(1); !errors.Is(err, ErrUnsupported) {
		t.Errorf("GetKey on a rowid table: %v", err)
	}
	b, err := tx.Bucket("b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get([]byte("k")); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing key: %v", err)
	}
	if err := tx.Commit(); !errors.Is(err, ErrTxNotWritable) {
		t.Errorf("Commit of a read tx: %v", err)
	}
	c := tbl.Cursor()
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); !errors.Is(err, ErrTxClosed) {
		t.Errorf("second Rollback: %v", err)
	}
	if _, err := tbl.Get(1); !errors.Is(err, ErrTxClosed) {
		t.Errorf("Get after Rollback: %v", err)
	}
	if c.First() || !errors.Is(c.Err(), ErrTxClosed) {
		t.Errorf("cursor after Rollback: %v", c.Err())
	}
	if _, err := tx.Table("t"); !errors.Is(err, ErrTxClosed) {
		t.Errorf("Table after Rollback: %v", err)
	}
	wtx, err := db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	if err := wtx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := wtx.Commit(); !errors.Is(err, ErrTxClosed) {
		t.Errorf("Commit after Rollback: %v", err)
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	db := apiDB(t, &Options{ReadOnly: true})
	if _, err := db.Begin(true); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Begin(true) on a read-only db: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing.db"), &Options{ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file opened read-only: %v", err)
	}
	junk := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(junk, make([]byte, 8192), 0o644)
	_, err := Open(junk, nil)
	var ce *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Page != 1 {
		t.Errorf("zeroed file: %v", err)
	}
}

// View returns the error that stopped an iterator inside it, and Close
// waits for open transactions.
func TestViewAndClose(t *testing.T) {
	db := apiDB(t, nil)
	err := db.View(func(tx *Tx) error {
		tx.setErr(ErrCorrupt)
		return nil
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("View: %v", err)
	}
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error)
	go func() { closed <- db.Close() }()
	time.Sleep(20 * time.Millisecond) // let Close reach its wait
	select {
	case <-closed:
		t.Fatal("Close returned while a transaction was open")
	default:
	}
	tx.Rollback()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := db.Begin(false); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("Begin after Close: %v", err)
	}
}

// TestReadBesideSQLiteWriter reads a WAL-mode file while a SQLite
// connection (another process) writes it and checkpoints in every mode: a
// read transaction keeps its snapshot, its read mark keeping the
// checkpoints from copying pages into the database file or starting the
// WAL over; the next read transaction sees the last commit. An exclusive
// read-only DB holds its read slot from Open to Close, and reads the file
// as of Open.
func TestReadBesideSQLiteWriter(t *testing.T) {
	requireFileLocks(t)
	for _, exclusive := range []bool{false, true} {
		t.Run(fmt.Sprintf("exclusive=%v", exclusive), func(t *testing.T) { readBesideSQLiteWriter(t, exclusive) })
	}
}

func readBesideSQLiteWriter(t *testing.T, exclusive bool) {
	path := filepath.Join(t.TempDir(), "live.db")
	w := sqltest.Open(t, path)
	sqltest.Run(t, w,
		"PRAGMA journal_mode=WAL",
		"PRAGMA wal_autocheckpoint=0",
		"CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<300) INSERT INTO t SELECT x, randomblob(1500) FROM c",
		"PRAGMA wal_checkpoint(TRUNCATE)",                    // the rows in the database file
		"UPDATE t SET v = randomblob(1500) WHERE id % 3 = 0", // and a third of them in the WAL
	)

	db := openChecked(t, path, &Options{ReadOnly: true, Exclusive: exclusive})
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	rows0, sum0 := digestTable(t, tx)
	if rows0 != 300 {
		t.Fatalf("%d rows, want 300", rows0)
	}
	// The frames the reader's snapshot holds: checkpoints may copy them
	// (its read mark), and none after. An exclusive reader's mark is 0.
	seen := 0
	if !exclusive {
		st, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		seen = int((st.Size() - 32) / (4096 + 24))
	}

	// SQLite writes on: every row changes, rows are added, and it tries
	// to checkpoint in every mode.
	sqltest.Run(t, w,
		"UPDATE t SET v = randomblob(1500)",
		"WITH RECURSIVE c(x) AS (SELECT 301 UNION ALL SELECT x+1 FROM c WHERE x<600) INSERT INTO t SELECT x, randomblob(1500) FROM c",
		"DELETE FROM t WHERE id % 7 = 0",
	)
	for _, mode := range []string{"PASSIVE", "FULL", "RESTART", "TRUNCATE"} {
		var busy, logFrames, done int
		if err := w.QueryRow("PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &logFrames, &done); err != nil {
			t.Fatalf("checkpoint %s: %v", mode, err)
		}
		if done > seen {
			t.Errorf("checkpoint %s copied %d of %d frames beside the reader, whose snapshot has %d", mode, done, logFrames, seen)
		}
	}
	if rows, sum := digestTable(t, tx); rows != rows0 || sum != sum0 {
		t.Fatalf("the reader's snapshot changed: %d rows (want %d), same digest %v", rows, rows0, sum == sum0)
	}
	tx.Rollback()
	want := sqlOne(t, path, "SELECT count(*) FROM t")
	err = db.View(func(tx *Tx) error {
		rows, _ := digestTable(t, tx)
		switch {
		case exclusive && rows != rows0:
			t.Errorf("an exclusive reader's next transaction sees %d rows, want those of Open, %d", rows, rows0)
		case !exclusive && fmt.Sprint(rows) != want:
			t.Errorf("the next read transaction sees %d rows, want the last commit's %s", rows, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Once the reader is gone, SQLite checkpoints everything, and a new
	// reader sees the last commit.
	var busy, logFrames, done int
	if err := w.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil || busy != 0 {
		t.Fatalf("checkpoint after the reader closed: busy %d, %v", busy, err)
	}
	db2 := openChecked(t, path, &Options{ReadOnly: true, Exclusive: exclusive})
	err = db2.View(func(tx *Tx) error {
		if rows, _ := digestTable(t, tx); fmt.Sprint(rows) != want {
			t.Errorf("the new reader sees %d rows, want %s", rows, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var ic string
	if err := w.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
		t.Fatalf("integrity_check: %s %v", ic, err)
	}
}

// digestTable returns the rows of table t in tx and a digest of them.
func digestTable(t *testing.T, tx *Tx) (rows int, sum [32]byte) {
	t.Helper()
	tbl, err := tx.Table("t")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for id, rec := range tbl.All() {
		fmt.Fprintf(h, "%d:%x;", id, rec.Column(1).Blob())
		rows++
	}
	if err := tx.Err(); err != nil {
		t.Fatal(err)
	}
	copy(sum[:], h.Sum(nil))
	return rows, sum
}

// requireFileLocks skips a test where locks belong to the process, where a
// read-only DB does not hold a -shm read slot (internal/pager/shm.go).
func requireFileLocks(t *testing.T) {
	t.Helper()
	if !vfs.FileLocks {
		t.Skip("a read-only DB holds a -shm read slot only where locks belong to the open file (Linux)")
	}
}

// TestHotJournalRowsLikeSQLite: a database that sqlite3 left mid-transaction
// in rollback-journal mode reads as its last commit, read-only (the
// journal's pages over the file's, nothing written) and writable (rolled
// back in the file, the journal deleted), and sqlite3 finds the result
// sound.
func TestHotJournalRowsLikeSQLite(t *testing.T) {
	crashed, committed := sqltest.WithHotJournal(t, 1024,
		[]string{
			"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)",
			"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<2000) INSERT INTO t SELECT i, 'committed-' || i FROM c",
		},
		[]string{
			"UPDATE t SET b = 'UNCOMMITTED-' || a",
			"DELETE FROM t WHERE a > 1500",
			"CREATE TABLE u(x)",
		})
	if a, b := readBytes(t, crashed), readBytes(t, committed); string(a[:min(len(a), len(b))]) == string(b[:min(len(a), len(b))]) {
		t.Fatal("fixture: SQLite wrote no uncommitted page into the file; the test would prove nothing")
	}
	lite := sqltest.Open(t, committed)
	want := sqltest.Rows(t, lite, "SELECT a, b FROM t ORDER BY a")
	lite.Close()

	read := func(path string, opts *Options) (rows, tables []string) {
		t.Helper()
		db, err := Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.View(func(tx *Tx) error {
			tb, err := tx.Table("t")
			if err != nil {
				return err
			}
			for rowid, rec := range tb.All() {
				rows = append(rows, fmt.Sprintf("%d|%s", rowid, rec.Column(1).Text()))
			}
			tables = tx.TableNames()
			return tx.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		return rows, tables
	}
	for _, ro := range []bool{true, false} {
		t.Run(fmt.Sprintf("read-only %v", ro), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			sqltest.CopyFile(t, crashed, path, false)
			sqltest.CopyFile(t, crashed+"-journal", path+"-journal", false)
			rows, tables := read(path, &Options{ReadOnly: ro})
			if !slices.Equal(rows, want) {
				t.Errorf("%d rows, want %d (first %q, want %q)", len(rows), len(want), rows[:min(1, len(rows))], want[0])
			}
			if slices.Contains(tables, "u") {
				t.Error("the uncommitted table u is read")
			}
			_, err := os.Stat(path + "-journal")
			if journal := err == nil; journal != ro {
				t.Errorf("journal left: %v", journal)
			}
			if !ro {
				got := sqltest.Rows(t, sqltest.Open(t, path), "PRAGMA integrity_check")
				if len(got) != 1 || got[0] != "ok" {
					t.Errorf("integrity_check after the rollback: %v", got)
				}
			}
		})
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenLocked: a second writable Open of a file this process holds
// waits Options.Timeout and fails with ErrLocked; after Close it opens.
func TestOpenLocked(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("two DBs of one process exclude each other only with Linux's OFD locks")
	}
	path := filepath.Join(t.TempDir(), "l.db")
	db := openChecked(t, path, &Options{Exclusive: true})
	start := time.Now()
	if _, err := Open(path, &Options{Timeout: 100 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("gave up after %v, before the timeout", took)
	}
	if _, err := Open(path, &Options{ReadOnly: true}); !errors.Is(err, ErrLocked) {
		t.Fatalf("read-only Open beside a writer: %v, want ErrLocked", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openChecked(t, path, nil)
	db.Close()
}

// TestTwoWritersShare: two DBs of one file (as two processes would have
// it) take turns at writing: a write transaction waits for the other's
// up to Options.Timeout, then fails with ErrBusy; each reads the other's
// commits in its next transaction, and the last to close removes the WAL
// and -shm.
func TestTwoWritersShare(t *testing.T) {
	requireFileLocks(t)
	path := filepath.Join(t.TempDir(), "s.db")
	a := openChecked(t, path, nil)
	b, err := Open(path, &Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, a, func(tx *Tx) error {
		_, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, who TEXT)")
		return err
	})
	insert := func(db *DB, who string) error {
		return db.Update(func(tx *Tx) error {
			tb, err := tx.Table("t")
			if err != nil {
				return err
			}
			_, err = tb.Insert(nil, who)
			return err
		})
	}
	count := func(db *DB) (n int) {
		err := db.View(func(tx *Tx) error {
			tb, err := tx.Table("t")
			if err != nil {
				return err
			}
			for range tb.All() {
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range 20 {
		if err := insert(a, "a"); err != nil {
			t.Fatal(err)
		}
		if err := insert(b, "b"); err != nil {
			t.Fatal(err)
		}
		if n := count(a); n != 2*(i+1) {
			t.Fatalf("a reads %d rows, want %d", n, 2*(i+1))
		}
		if n := count(b); n != 2*(i+1) {
			t.Fatalf("b reads %d rows, want %d", n, 2*(i+1))
		}
	}
	tx, err := a.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := b.Begin(true); !errors.Is(err, ErrBusy) {
		t.Fatalf("Begin(true) beside another DB's write transaction: %v, want ErrBusy", err)
	}
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("gave up after %v, before the timeout", took)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := insert(b, "b"); err != nil {
		t.Fatal(err)
	}
	if n := count(a); n != 41 {
		t.Fatalf("a reads %d rows, want 41", n)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("b, not the last connection, removed the WAL: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for _, sfx := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + sfx); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the last connection left %s: %v", sfx, err)
		}
	}
}

// openChecked opens path for a test; the test's cleanup closes it and,
// unless opts opens it read-only, checks the file the test leaves: DB.Check
// and SQLite's integrity_check. (Tests outside the package use
// internal/dbtest, which this package's own tests cannot import.)
func openChecked(t testing.TB, path string, opts *Options) *DB {
	t.Helper()
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close %s: %v", path, err)
			return
		}
		if opts != nil && opts.ReadOnly {
			return
		}
		ro, err := Open(path, &Options{ReadOnly: true})
		if err != nil {
			t.Errorf("open %s to check it: %v", path, err)
			return
		}
		if err := ro.Check(); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		ro.Close()
		sqltest.IntegrityCheck(t, path)
	})
	return db
}

// openDamaged opens a file a test has damaged, or left in a state sqlite3
// does not accept, on purpose; its cleanup only closes it.
func openDamaged(t testing.TB, path string, opts *Options) *DB {
	t.Helper()
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestReadBesideSQLite3Process is TestReadBesideSQLiteWriter with the
// sqlite3 command line tool writing from another process, and the DB
// shared: a read transaction keeps its snapshot through sqlite3's commits
// and checkpoints; the next one sees sqlite3's last commit.
func TestReadBesideSQLite3Process(t *testing.T) {
	requireFileLocks(t)
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("the sqlite3 command line tool is not installed (CI installs it)")
	}
	path := filepath.Join(t.TempDir(), "live.db")
	run := func(sql string) string {
		t.Helper()
		out, err := exec.Command(sqlite3, path, sql).CombinedOutput()
		if err != nil {
			t.Fatalf("sqlite3 %s: %v\n%s", sql, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("PRAGMA journal_mode=WAL; CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB); " +
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<300) INSERT INTO t SELECT x, randomblob(1500) FROM c;")

	db := openChecked(t, path, &Options{ReadOnly: true})
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	rows0, sum0 := digestTable(t, tx)
	// Every commit tries a checkpoint (wal_autocheckpoint=1), then one in
	// TRUNCATE mode; sqlite3 exits, which checkpoints too when it can.
	out := run("PRAGMA wal_autocheckpoint=1; UPDATE t SET v = randomblob(1500); " +
		"WITH RECURSIVE c(x) AS (SELECT 301 UNION ALL SELECT x+1 FROM c WHERE x<450) INSERT INTO t SELECT x, randomblob(1500) FROM c; " +
		"DELETE FROM t WHERE id % 5 = 0; PRAGMA wal_checkpoint(TRUNCATE);")
	if f := strings.Fields(strings.ReplaceAll(out, "|", " ")); len(f) < 3 || f[len(f)-1] != "0" {
		t.Errorf("sqlite3's TRUNCATE checkpoint beside the reader: %q, want 0 frames copied", out)
	}
	if rows, sum := digestTable(t, tx); rows != rows0 || sum != sum0 {
		t.Fatalf("the reader's snapshot changed: %d rows (want %d)", rows, rows0)
	}
	tx.Rollback()
	err = db.View(func(tx *Tx) error {
		if rows, _ := digestTable(t, tx); rows != 360 {
			t.Errorf("the next read transaction sees %d rows, want sqlite3's 360", rows)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := run("PRAGMA integrity_check; SELECT count(*) FROM t;"); got != "ok\n360" {
		t.Fatalf("sqlite3 after the reader closed: %q", got)
	}
}

// TestSchemaChangesShared: a SQLite connection (another process) and a
// shared pagoda DB change the schema of one live file in turn: each sees
// the other's new table, index and rows at its next transaction, and
// writes through them, as Litestream's own tables are created beside an
// application.
func TestSchemaChangesShared(t *testing.T) {
	requireFileLocks(t)
	path := filepath.Join(t.TempDir(), "live.db")
	db := openChecked(t, path, &Options{Timeout: 5 * time.Second})
	mustUpdate(t, db, func(tx *Tx) error {
		_, err := tx.CreateTable("CREATE TABLE a(id INTEGER PRIMARY KEY, v TEXT)")
		return err
	})
	lite := sqltest.Open(t, path)
	sqltest.Run(t, lite,
		"PRAGMA busy_timeout=5000",
		"CREATE TABLE b(id INTEGER PRIMARY KEY, v TEXT UNIQUE)",
		"INSERT INTO b(v) VALUES ('from sqlite')",
		"INSERT INTO a(v) VALUES ('sqlite in a')",
	)
	mustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.Table("b")
		if err != nil {
			return fmt.Errorf("pagoda does not see sqlite's table: %w", err)
		}
		if _, err := b.Insert(nil, "from pagoda"); err != nil {
			return err
		}
		if _, err := b.Insert(nil, "from sqlite"); !errors.Is(err, ErrExists) {
			return fmt.Errorf("UNIQUE index sqlite made: insert of a duplicate: %v, want ErrExists", err)
		}
		_, err = tx.CreateTable("CREATE TABLE c(x INTEGER PRIMARY KEY, y)")
		return err
	})
	sqltest.Run(t, lite, "INSERT INTO c(y) VALUES ('sqlite in c')", "CREATE INDEX ay ON a(v)")
	if got := strings.Join(sqltest.Rows(t, lite, "SELECT v FROM b ORDER BY id"), "|"); got != "from sqlite|from pagoda" {
		t.Errorf("sqlite reads b: %q", got)
	}
	err := db.View(func(tx *Tx) error {
		c, err := tx.Table("c")
		if err != nil {
			return err
		}
		rec, err := c.Get(1)
		if err != nil {
			return err
		}
		if got := rec.Column(1).Text(); got != "sqlite in c" {
			t.Errorf("pagoda reads c: %q", got)
		}
		if _, err := tx.Index("ay"); err != nil {
			return fmt.Errorf("pagoda does not see sqlite's index: %w", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx *Tx) error {
		a, err := tx.Table("a")
		if err != nil {
			return err
		}
		_, err = a.Insert(nil, "pagoda in a") // and in sqlite's index ay
		return err
	})
	if got := strings.Join(sqltest.Rows(t, lite, "SELECT count(*) FROM a INDEXED BY ay WHERE v > ''"), ""); got != "2" {
		t.Errorf("sqlite's index on a holds %s rows, want 2", got)
	}
	if got := strings.Join(sqltest.Rows(t, lite, "PRAGMA integrity_check"), "\n"); got != "ok" {
		t.Errorf("integrity_check: %s", got)
	}
}

// TestOpenCommitPastFileAndWAL: a transaction that takes pages past the
// file's end and frees them again commits a size past the file and the
// WAL; those pages were never written, and a copy of the files taken
// before any checkpoint (as after a crash) opens, reading them as zeros,
// as SQLite does.
func TestOpenCommitPastFileAndWAL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "grow.db")
	db, err := Open(path, &Options{CheckpointPages: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
		if err != nil {
			return err
		}
		for k := int64(1); k <= 2000; k++ {
			if err := tb.Put(k, nil, make([]byte, 500)); err != nil {
				return err
			}
		}
		for k := int64(1); k <= 2000; k++ {
			if err := tb.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(dir, "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cp+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := openChecked(t, cp, nil)
	if err := c.View(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		if n, err := tb.Count(); err != nil || n != 0 {
			t.Errorf("Count = %d, %v; want 0", n, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
