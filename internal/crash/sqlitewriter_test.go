package crash

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// sqliteWriter is a C SQLite writer (Python's sqlite3 module) on a
// rollback-journal file, with a 16-page cache so that its transactions
// spill into the file before their commit. Transaction k inserts rowsOf(k)
// rows tagged k, deletes those of k-5 and sets meta's k; it prints k once
// its COMMIT returned. Python's blobs are random: only counts are checked.
const sqliteWriter = `
import sqlite3, sys, random
path = sys.argv[1]
db = sqlite3.connect(path, isolation_level=None, timeout=10)
db.execute("PRAGMA cache_size=16")
db.execute("CREATE TABLE IF NOT EXISTS meta(id INTEGER PRIMARY KEY, k INTEGER)")
db.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, k INTEGER, v BLOB)")
db.execute("CREATE INDEX IF NOT EXISTS tk ON t(k)")
db.execute("INSERT OR IGNORE INTO meta VALUES (1, 0)")
(k,) = db.execute("SELECT k FROM meta WHERE id = 1").fetchone()
print("ready", k, flush=True)
while True:
    k += 1
    n = 1 + (k * 7919) % 300
    db.execute("BEGIN")
    db.executemany("INSERT INTO t(k, v) VALUES (?, randomblob(?))", [(k, random.randint(0, 900)) for _ in range(n)])
    db.execute("DELETE FROM t WHERE k = ?", (k - 5,))
    db.execute("UPDATE meta SET k = ? WHERE id = 1", (k,))
    db.execute("COMMIT")
    print(k, flush=True)
`

// rowsOf is the number of rows sqliteWriter's transaction k inserts.
func rowsOf(k int64) int64 { return 1 + (k*7919)%300 }

// TestCrashSQLiteWriter: a C SQLite writer on a rollback-journal file is
// killed with SIGKILL mid-transaction, mid-spill or mid-commit; pagoda
// opens the file, rolls back the hot journal it left, and finds exactly
// transaction k or k+1 (k the last the writer acknowledged): meta's k,
// the rows of the last five transactions and none other, DB.Check and
// SQLite's integrity_check ok, the file still in rollback-journal mode.
// Then pagoda commits a row of its own, which the next writer leaves.
func TestCrashSQLiteWriter(t *testing.T) {
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1":
		t.Skipf("no SIGKILL on %s", runtime.GOOS)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 (the C SQLite writer) is not installed")
	}
	kills := 12
	if testing.Short() {
		kills = 4
	}
	if s := os.Getenv(envKills); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			kills = n / 4
		}
	}
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 7))
	t.Logf("seed %d for the kill delays, %d kills", seed, kills)
	path := filepath.Join(t.TempDir(), "sqlite.db")
	var prevK int64
	hot := 0
	for iter := 1; iter <= kills; iter++ {
		delay := time.Duration(20+r.IntN(150)) * time.Millisecond
		last, err := runSQLiteWriter(py, path, delay)
		if err != nil {
			t.Fatalf("kill %d: %v", iter, err)
		}
		if hotJournal(path) > 0 {
			hot++
		}
		k, err := verifySQLiteWriter(path, iter-1, max(last, prevK))
		if err != nil {
			keep := keepFiles(t, path, seed, iter)
			t.Fatalf("kill %d (after %v; the writer acknowledged %d): %v\nfiles kept in %s", iter, delay, last, err, keep)
		}
		sqltest.IntegrityCheck(t, path)
		prevK = k
	}
	t.Logf("%d kills: %d transactions committed, %d kills left a hot journal that pagoda rolled back", kills, prevK, hot)
	if m := sqltest.One(t, path, "PRAGMA journal_mode"); m != "delete" {
		t.Fatalf("SQLite says journal_mode=%s", m)
	}
}

// runSQLiteWriter runs sqliteWriter on path, kills it delay after it is
// ready, and returns the last transaction it acknowledged.
func runSQLiteWriter(py, path string, delay time.Duration) (int64, error) {
	cmd := exec.Command(py, "-c", sqliteWriter, path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		br := bufio.NewScanner(out)
		for br.Scan() {
			lines <- br.Text()
		}
	}()
	var last int64
	ready := false
	timer := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				cmd.Wait()
				return 0, fmt.Errorf("the writer ended by itself: %s", strings.TrimSpace(stderr.String()))
			}
			if s, found := strings.CutPrefix(line, "ready "); found {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("writer line %q", line)
				}
				last, ready = n, true
				timer = time.After(delay)
				continue
			}
			n, err := strconv.ParseInt(line, 10, 64)
			if err != nil || n != last+1 {
				return 0, fmt.Errorf("writer line %q after %d", line, last)
			}
			last = n
		case <-timer:
			_ = cmd.Process.Kill() // SIGKILL
			for line := range lines {
				if n, err := strconv.ParseInt(line, 10, 64); err == nil && n == last+1 {
					last = n // acknowledged before the kill
				}
			}
			cmd.Wait()
			if !ready {
				return 0, fmt.Errorf("the writer was not ready after 30 s: %s", strings.TrimSpace(stderr.String()))
			}
			return last, nil
		}
	}
}

// verifySQLiteWriter opens path with pagoda (which rolls back a hot
// journal), checks it holds transaction last or last+1 whole, and the
// previous own rows of pagoda's (own of them), commits one more, and
// returns the transaction it found.
func verifySQLiteWriter(path string, own int, last int64) (int64, error) {
	db, err := pagoda.Open(path, &pagoda.Options{Timeout: 5 * time.Second})
	if err != nil {
		return 0, fmt.Errorf("open: %w", err)
	}
	defer db.Close()
	if hotJournal(path) > 0 {
		// (A journal whose header was never synced stays, as sqlite3
		// leaves it: it is not hot, and the next writer replaces it.)
		return 0, fmt.Errorf("a hot journal beside the file after pagoda's Open")
	}
	if err := db.Check(); err != nil {
		return 0, fmt.Errorf("db.Check: %w", err)
	}
	var k int64
	err = db.View(func(tx *pagoda.Tx) error {
		meta, err := tx.Table("meta")
		if err != nil {
			return err
		}
		rec, err := meta.Get(1)
		if err != nil {
			return err
		}
		k = rec.Column(1).Int()
		if k < last || k > last+1 {
			return fmt.Errorf("the file holds transaction %d; the writer acknowledged %d", k, last)
		}
		counts := map[int64]int64{}
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for _, rec := range tb.All() {
			counts[rec.Column(1).Int()]++
		}
		for j, n := range counts {
			if j <= k-5 || j > k {
				return fmt.Errorf("transaction %d: %d rows of transaction %d", k, n, j)
			}
		}
		for j := max(1, k-4); j <= k; j++ {
			if counts[j] != rowsOf(j) {
				return fmt.Errorf("transaction %d: %d rows of transaction %d, want %d", k, counts[j], j, rowsOf(j))
			}
		}
		if own > 0 {
			p, err := tx.Table("pagoda")
			if err != nil {
				return err
			}
			if n, err := p.Count(); err != nil || n != int64(own) {
				return fmt.Errorf("%d rows of pagoda's (%v), want %d", n, err, own)
			}
		}
		return nil
	})
	if err != nil {
		return k, err
	}
	err = db.Update(func(tx *pagoda.Tx) error {
		p, err := tx.Table("pagoda")
		if err != nil {
			if p, err = tx.CreateTable("CREATE TABLE pagoda(id INTEGER PRIMARY KEY, k INTEGER)"); err != nil {
				return err
			}
		}
		_, err = p.Insert(nil, k)
		return err
	})
	if err != nil {
		return k, fmt.Errorf("pagoda's commit: %w", err)
	}
	return k, db.Close()
}
