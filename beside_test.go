package pagoda

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// TestReadBesideSQLiteWriter reads a WAL-mode file while a SQLite
// connection (modernc, in this process, with its own POSIX locks) writes
// it: the read-only DB keeps the snapshot it opened with, because it holds
// a read slot of the -shm file that keeps SQLite's checkpoints from
// copying pages into the database file or starting the WAL over.
func TestReadBesideSQLiteWriter(t *testing.T) {
	requireFileLocks(t)
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

	db, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	digest := func(db *DB) (rows int, sum [32]byte) {
		t.Helper()
		h := sha256.New()
		err := db.View(func(tx *Tx) error {
			tbl, err := tx.Table("t")
			if err != nil {
				return err
			}
			for id, rec := range tbl.All() {
				fmt.Fprintf(h, "%d:%x;", id, rec.Column(1).Blob())
				rows++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		copy(sum[:], h.Sum(nil))
		return rows, sum
	}
	rows0, sum0 := digest(db)
	if rows0 != 300 {
		t.Fatalf("%d rows, want 300", rows0)
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
		if done != 0 {
			t.Errorf("checkpoint %s copied %d of %d frames beside the reader", mode, done, logFrames)
		}
	}
	if rows, sum := digest(db); rows != rows0 || sum != sum0 {
		t.Fatalf("the reader's snapshot changed: %d rows (want %d), same digest %v", rows, rows0, sum == sum0)
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
	db2, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	want := sqlOne(t, path, "SELECT count(*) FROM t")
	if rows, _ := digest(db2); fmt.Sprint(rows) != want {
		t.Fatalf("the new reader sees %d rows, want %s", rows, want)
	}
	var ic string
	if err := w.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
		t.Fatalf("integrity_check: %s %v", ic, err)
	}
}

// requireFileLocks skips a test where locks belong to the process, where a
// read-only DB does not hold a -shm read slot (internal/pager/shm.go).
func requireFileLocks(t *testing.T) {
	t.Helper()
	if !vfs.FileLocks {
		t.Skip("a read-only DB holds a -shm read slot only where locks belong to the open file (Linux)")
	}
}

// TestReadBesideSQLite3Process is TestReadBesideSQLiteWriter with the
// sqlite3 command line tool writing from another process.
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

	db, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	digest := func() (rows int, sum string) {
		t.Helper()
		var b bytes.Buffer
		err := db.View(func(tx *Tx) error {
			tbl, err := tx.Table("t")
			if err != nil {
				return err
			}
			for id, rec := range tbl.All() {
				fmt.Fprintf(&b, "%d:%x;", id, rec.Column(1).Blob())
				rows++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return rows, fmt.Sprintf("%x", sha256.Sum256(b.Bytes()))
	}
	rows0, sum0 := digest()
	// Every commit tries a checkpoint (wal_autocheckpoint=1), then one in
	// TRUNCATE mode; sqlite3 exits, which checkpoints too when it can.
	out := run("PRAGMA wal_autocheckpoint=1; UPDATE t SET v = randomblob(1500); " +
		"WITH RECURSIVE c(x) AS (SELECT 301 UNION ALL SELECT x+1 FROM c WHERE x<450) INSERT INTO t SELECT x, randomblob(1500) FROM c; " +
		"DELETE FROM t WHERE id % 5 = 0; PRAGMA wal_checkpoint(TRUNCATE);")
	if f := strings.Fields(strings.ReplaceAll(out, "|", " ")); len(f) < 3 || f[len(f)-1] != "0" {
		t.Errorf("sqlite3's TRUNCATE checkpoint beside the reader: %q, want 0 frames copied", out)
	}
	if rows, sum := digest(); rows != rows0 || sum != sum0 {
		t.Fatalf("the reader's snapshot changed: %d rows (want %d), digest %s (want %s)", rows, rows0, sum, sum0)
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
	db2, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	db = db2
	if rows, _ := digest(); rows != 360 {
		t.Fatalf("a new reader sees %d rows, want 360", rows)
	}
}
