package sharetest

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
)

// The bank: accounts whose balances add up to total, a sequence number that
// every transfer adds one to, and a log row per transfer naming its writer
// and that writer's count of transfers.
const (
	accounts = 100
	initial  = 1000
	total    = accounts * initial
)

var bankSchema = []string{
	`CREATE TABLE acct(id INTEGER PRIMARY KEY, bal INTEGER NOT NULL)`,
	`CREATE TABLE meta(id INTEGER PRIMARY KEY, seq INTEGER NOT NULL)`,
	`CREATE TABLE log(id INTEGER PRIMARY KEY, who TEXT NOT NULL, n INTEGER NOT NULL, seq INTEGER NOT NULL, pad BLOB)`,
	`CREATE UNIQUE INDEX log_who ON log(who, n)`,
}

// createBank makes the bank's database at path with pagoda, in WAL mode.
func createBank(t testing.TB, path string) {
	t.Helper()
	db, err := pagoda.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *pagoda.Tx) error {
		for _, s := range bankSchema {
			var err error
			if strings.HasPrefix(s, "CREATE TABLE") {
				_, err = tx.CreateTable(s)
			} else {
				_, err = tx.CreateIndex(s)
			}
			if err != nil {
				return err
			}
		}
		acct, err := tx.Table("acct")
		if err != nil {
			return err
		}
		for i := int64(1); i <= accounts; i++ {
			if err := acct.Put(i, i, initial); err != nil {
				return err
			}
		}
		meta, err := tx.Table("meta")
		if err != nil {
			return err
		}
		return meta.Put(1, 1, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// newBank returns the path of a new bank in a directory of the test's.
func newBank(t testing.TB) string {
	path := filepath.Join(t.TempDir(), "bank.db")
	createBank(t, path)
	return path
}

// transfer is a pagoda writer's transaction: amount x from account a to b,
// seq + 1, and log row (who, n, seq, a pad of random bytes). It returns the
// new seq.
func transfer(tx *pagoda.Tx, r *rand.Rand, who string, n int64, padMax int) (int64, error) {
	acct, err := tx.Table("acct")
	if err != nil {
		return 0, err
	}
	meta, err := tx.Table("meta")
	if err != nil {
		return 0, err
	}
	lg, err := tx.Table("log")
	if err != nil {
		return 0, err
	}
	a := 1 + r.Int64N(accounts)
	b := 1 + r.Int64N(accounts-1)
	if b >= a {
		b++
	}
	x := r.Int64N(100)
	bal := func(id int64) (int64, error) {
		rec, err := acct.Get(id)
		if err != nil {
			return 0, fmt.Errorf("account %d: %w", id, err)
		}
		return rec.Column(1).Int(), nil
	}
	ba, err := bal(a)
	if err != nil {
		return 0, err
	}
	bb, err := bal(b)
	if err != nil {
		return 0, err
	}
	if err := acct.Put(a, a, ba-x); err != nil {
		return 0, err
	}
	if err := acct.Put(b, b, bb+x); err != nil {
		return 0, err
	}
	m, err := meta.Get(1)
	if err != nil {
		return 0, err
	}
	seq := m.Column(1).Int() + 1
	if err := meta.Put(1, 1, seq); err != nil {
		return 0, err
	}
	pad := make([]byte, padSize(r, padMax))
	for i := range pad {
		pad[i] = byte(r.Uint32())
	}
	if _, err := lg.Insert(nil, who, n, seq, pad); err != nil {
		return 0, err
	}
	return seq, nil
}

// padSize returns a pad's size: mostly small, now and then up to padMax
// (overflow chains, commits of many frames).
func padSize(r *rand.Rand, padMax int) int {
	if padMax <= 0 {
		return 0
	}
	if r.IntN(8) == 0 {
		return r.IntN(padMax + 1)
	}
	return r.IntN(min(padMax, 600) + 1)
}

// bankState is what one snapshot of the bank says.
type bankState struct {
	sum, seq, rows int64
}

// check returns what is wrong with s, or nil.
func (s bankState) check() error {
	if s.sum != total {
		return fmt.Errorf("balances add up to %d, want %d (seq %d, %d log rows)", s.sum, total, s.seq, s.rows)
	}
	if s.rows != s.seq {
		return fmt.Errorf("seq %d but %d log rows: a commit seen in part", s.seq, s.rows)
	}
	return nil
}

// readBank reads the bank's state in pagoda's read transaction tx.
func readBank(tx *pagoda.Tx) (bankState, error) {
	var s bankState
	acct, err := tx.Table("acct")
	if err != nil {
		return s, err
	}
	n := 0
	for _, rec := range acct.All() {
		s.sum += rec.Column(1).Int()
		n++
	}
	if err := tx.Err(); err != nil {
		return s, err
	}
	if n != accounts {
		return s, fmt.Errorf("%d accounts, want %d", n, accounts)
	}
	meta, err := tx.Table("meta")
	if err != nil {
		return s, err
	}
	m, err := meta.Get(1)
	if err != nil {
		return s, err
	}
	s.seq = m.Column(1).Int()
	lg, err := tx.Table("log")
	if err != nil {
		return s, err
	}
	s.rows, err = lg.Count()
	return s, err
}

// writerLog is what the log holds of one writer: its rows and the largest
// n among them.
type writerLog struct{ rows, max int64 }

// readLogs reads, in pagoda's transaction tx, every writer's rows.
func readLogs(tx *pagoda.Tx) (map[string]writerLog, error) {
	lg, err := tx.Table("log")
	if err != nil {
		return nil, err
	}
	m := map[string]writerLog{}
	for _, rec := range lg.All() {
		w := m[rec.Column(1).Text()]
		w.rows++
		w.max = max(w.max, rec.Column(2).Int())
		m[rec.Column(1).Text()] = w
	}
	return m, tx.Err()
}

// bankQuery is the SQL a SQLite reader reads the bank's state with: one
// statement, so one read transaction.
const bankQuery = `SELECT (SELECT sum(bal) FROM acct), (SELECT seq FROM meta WHERE id=1), (SELECT count(*) FROM log)`

// logsQuery lists every writer's rows and largest n.
const logsQuery = `SELECT who, count(*), max(n) FROM log GROUP BY who`

// sqlite3Path returns the sqlite3 shell's path, or skips the test.
func sqlite3Path(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("the sqlite3 command line tool is not installed (.ci/run installs it)")
	}
	return p
}

// sqlite3Run runs the sqlite3 shell on path with a busy timeout of 5 s and
// returns its output's lines; a failure (an error message, a non-zero
// exit) fails the test.
func sqlite3Run(t testing.TB, path, sql string) []string {
	t.Helper()
	out, err := exec.Command(sqlite3Path(t), "-bail", "-cmd", ".timeout 5000", path, sql).CombinedOutput()
	if err != nil {
		t.Fatalf("sqlite3 %q: %v\n%s", sql, err, out)
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// parseInts parses a line of |-separated integers.
func parseInts(line string, n int) ([]int64, error) {
	f := strings.Split(line, "|")
	if len(f) != n {
		return nil, fmt.Errorf("%q: want %d fields", line, n)
	}
	v := make([]int64, n)
	for i := range f {
		var err error
		if v[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return nil, fmt.Errorf("%q: %v", line, err)
		}
	}
	return v, nil
}

// sqliteVerify reads the bank with the sqlite3 shell, in one read
// transaction: integrity_check, the state, and every writer's log.
func sqliteVerify(t testing.TB, path string) (bankState, map[string]writerLog, error) {
	t.Helper()
	lines := sqlite3Run(t, path, "BEGIN; PRAGMA integrity_check; "+bankQuery+"; "+logsQuery+"; COMMIT;")
	var s bankState
	if len(lines) < 2 || lines[0] != "ok" {
		return s, nil, fmt.Errorf("integrity_check: %q", lines)
	}
	v, err := parseInts(lines[1], 3)
	if err != nil {
		return s, nil, err
	}
	s = bankState{v[0], v[1], v[2]}
	logs := map[string]writerLog{}
	for _, l := range lines[2:] {
		f := strings.Split(l, "|")
		if len(f) != 3 {
			return s, nil, fmt.Errorf("log line %q", l)
		}
		v, err := parseInts(f[1]+"|"+f[2], 2)
		if err != nil {
			return s, nil, err
		}
		logs[f[0]] = writerLog{v[0], v[1]}
	}
	return s, logs, nil
}

// lookSQLite3 finds the sqlite3 shell.
func lookSQLite3() (string, error) { return exec.LookPath("sqlite3") }

// seed is the run's seed: PAGODA_SHARE_SEED, or the clock's.
var seed = func() uint64 {
	if s := os.Getenv("PAGODA_SHARE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			panic("PAGODA_SHARE_SEED=" + s + ": want an unsigned number")
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}()

// newRand returns the random source of what the test calls name, from the
// run's seed, which it logs.
func newRand(t testing.TB, name string) *rand.Rand {
	t.Logf("%s: PAGODA_SHARE_SEED=%d", name, seed)
	h := fnv.New64a()
	h.Write([]byte(t.Name() + "/" + name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// seedArg returns a child's seed argument, from the run's seed.
func seedArg(t testing.TB, name string) string {
	return "seed=" + strconv.FormatUint(newRand(t, name).Uint64()>>1, 10)
}
