package pagoda

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// checkJournalMode requires the file at path to be a rollback-journal
// database in SQLite's eyes (journal_mode=delete), with no -wal and no
// -journal beside it, that DB.Check and integrity_check find sound.
func checkJournalMode(t *testing.T, path string) {
	t.Helper()
	for _, sfx := range []string{"-wal", "-journal"} {
		if _, err := os.Stat(path + sfx); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s beside a rollback-journal database: %v", sfx, err)
		}
	}
	if m := sqltest.One(t, path, "PRAGMA journal_mode"); m != "delete" {
		t.Fatalf("SQLite: journal_mode=%s, want delete", m)
	}
	db, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Check(); err != nil {
		t.Fatalf("DB.Check: %v", err)
	}
	db.Close()
	sqltest.IntegrityCheck(t, path)
}

// TestJournalKeepsMode: pagoda writes a file sqlite3 made in its default
// mode (rows, an index, DDL, deletes) and it stays a rollback-journal
// database that SQLite reads row for row as pagoda does; with
// JournalDelete a new file is one too, and JournalWAL converts one.
func TestJournalKeepsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.db")
	sqltest.Exec(t, path, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, n INTEGER)", "CREATE INDEX tv ON t(v)",
		"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<500) INSERT INTO t SELECT i, printf('sqlite-%d', i), i FROM c")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		err := db.Update(func(tx *Tx) error {
			tb, err := tx.Table("t")
			if err != nil {
				return err
			}
			for i := range 200 {
				id := int64(1000 + round*200 + i)
				if err := tb.Put(id, nil, fmt.Sprintf("pagoda-%d-%s", id, strings.Repeat("x", i%50)), id); err != nil {
					return err
				}
			}
			for id := int64(round*40 + 1); id <= int64(round*40+40); id++ {
				if err := tb.Delete(id); err != nil {
					return err
				}
			}
			if round == 2 {
				if _, err := tx.CreateTable("CREATE TABLE u(a TEXT PRIMARY KEY, b) WITHOUT ROWID"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	var sum int64
	if err := db.View(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for _, rec := range tb.All() {
			sum += rec.Column(2).Int()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Checkpoint(CheckpointTruncate); n != 0 || err != nil {
		t.Fatalf("Checkpoint of a rollback-journal database: %d, %v", n, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	checkJournalMode(t, path)
	if got := sqltest.One(t, path, "SELECT count(*) || ' ' || sum(n) FROM t"); got != fmt.Sprintf("%d %d", 500-200+1000, sum) {
		t.Fatalf("SQLite reads count and sum %s; pagoda's sum %d", got, sum)
	}

	fresh := filepath.Join(t.TempDir(), "new.db")
	db, err = Open(fresh, &Options{JournalMode: JournalDelete})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *Tx) error {
		_, err := tx.CreateTable("CREATE TABLE t(a)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	checkJournalMode(t, fresh)
	db, err = Open(fresh, &Options{JournalMode: JournalWAL})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *Tx) error {
		_, err := tx.CreateTable("CREATE TABLE u(a)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if m := sqltest.One(t, fresh, "PRAGMA journal_mode"); m != "wal" {
		t.Fatalf("JournalWAL: SQLite says journal_mode=%s", m)
	}
}

// journalPeer is a C SQLite process (Python's sqlite3 module) that makes
// transfers between the rows of acct in its own transactions and checks
// the total at every read, until the file stop exists; it prints its
// commits, reads and the rows of pagoda's it saw.
const journalPeer = `
import os, sqlite3, sys
path, stop, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = sqlite3.connect(path, timeout=2.0, isolation_level=None)
commits = reads = seen = 0
i = 0
while not os.path.exists(stop):
    i += 1
    db.execute("BEGIN IMMEDIATE")
    a, b = 1 + i % 8, 1 + (i * 3) % 8
    db.execute("UPDATE acct SET bal = bal - 1 WHERE id = ?", (a,))
    db.execute("UPDATE acct SET bal = bal + 1, who = 'sqlite' WHERE id = ?", (b,))
    db.execute("INSERT INTO log(who) VALUES ('sqlite')")
    db.execute("COMMIT")
    commits += 1
    (s,) = db.execute("SELECT sum(bal) FROM acct").fetchone()
    if s != total:
        print("torn read: sum", s, file=sys.stderr)
        sys.exit(2)
    reads += 1
    (n,) = db.execute("SELECT count(*) FROM log WHERE who = 'pagoda'").fetchone()
    seen = max(seen, n)
print(commits, reads, seen)
`

// TestJournalBesideSQLite: a pagoda writer and a C SQLite process (Python's
// sqlite3 module) make transfers on one rollback-journal file, each in its
// own transactions with a 2 s timeout: neither gets a busy error, every
// read of either sees the total (a whole commit), each sees the other's
// commits, and the file ends in rollback-journal mode, sound.
func TestJournalBesideSQLite(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sharing a rollback-journal file needs locks that belong to the open file (Linux's OFD locks)")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 (the C SQLite peer) is not installed")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "beside.db")
	const total = 8 * 1000
	sqltest.Exec(t, path, "CREATE TABLE acct(id INTEGER PRIMARY KEY, bal INTEGER, who TEXT)",
		"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<8) INSERT INTO acct SELECT i, 1000, 'init' FROM c",
		"CREATE TABLE log(id INTEGER PRIMARY KEY, who TEXT)")
	stop := filepath.Join(dir, "stop")
	peer := exec.Command(py, "-c", journalPeer, path, stop, fmt.Sprint(total))
	var out, stderr strings.Builder
	peer.Stdout, peer.Stderr = &out, &stderr
	if err := peer.Start(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path, &Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(1500 * time.Millisecond)
	commits, seen := 0, int64(0)
	for i := 0; time.Now().Before(deadline); i++ {
		err := db.Update(func(tx *Tx) error {
			acct, err := tx.Table("acct")
			if err != nil {
				return err
			}
			a, b := int64(1+i%8), int64(1+(i*5)%8)
			ra, err := acct.Get(a)
			if err != nil {
				return err
			}
			if err := acct.Put(a, nil, ra.Column(1).Int()+1, "pagoda"); err != nil {
				return err
			}
			rb, err := acct.Get(b)
			if err != nil {
				return err
			}
			if err := acct.Put(b, nil, rb.Column(1).Int()-1, "pagoda"); err != nil {
				return err
			}
			log, err := tx.Table("log")
			if err != nil {
				return err
			}
			_, err = log.Insert(nil, "pagoda")
			return err
		})
		if err != nil {
			t.Fatalf("pagoda commit %d: %v", i, err)
		}
		commits++
		// As a program between requests: sqlite3's busy handler sleeps
		// between tries, and a writer that never pauses starves it.
		time.Sleep(2 * time.Millisecond)
		if err := db.View(func(tx *Tx) error {
			acct, err := tx.Table("acct")
			if err != nil {
				return err
			}
			var sum int64
			for _, rec := range acct.All() {
				sum += rec.Column(1).Int()
			}
			if sum != total {
				return fmt.Errorf("torn read: sum %d", sum)
			}
			log, err := tx.Table("log")
			if err != nil {
				return err
			}
			var n int64
			for _, rec := range log.All() {
				if rec.Column(1).Text() == "sqlite" {
					n++
				}
			}
			seen = max(seen, n)
			return nil
		}); err != nil {
			t.Fatalf("pagoda read: %v", err)
		}
	}
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := peer.Wait(); err != nil {
		t.Fatalf("the SQLite peer: %v: %s", err, stderr.String())
	}
	var pc, pr, pseen int
	if _, err := fmt.Sscan(out.String(), &pc, &pr, &pseen); err != nil {
		t.Fatalf("the SQLite peer printed %q: %v", out.String(), err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("pagoda: %d commits, saw %d of sqlite's; sqlite: %d commits, %d reads, saw %d of pagoda's", commits, seen, pc, pr, pseen)
	if commits == 0 || pc == 0 || seen == 0 || pseen == 0 {
		t.Fatal("each side must commit and see the other's commits")
	}
	checkJournalMode(t, path)
	if got := sqltest.One(t, path, "SELECT (SELECT sum(bal) FROM acct) || ' ' || (SELECT count(*) FROM log)"); got != fmt.Sprintf("%d %d", total, commits+pc) {
		t.Fatalf("SQLite reads total and log rows %s, want %d %d", got, total, commits+pc)
	}
}
