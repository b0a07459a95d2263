package crash

import (
	"bufio"
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/pagodadb/pagoda/internal/sqltest" // the "sqlite" driver: SQLite itself, the oracle

	"github.com/pagodadb/pagoda"
)

const (
	envKills = "PAGODA_CRASH_KILLS"
	envSeed  = "PAGODA_CRASH_SEED"

	sqliteEvery = 10 // iterations between checks of a copy by modernc.org/sqlite
	cliEvery    = 25 // iterations between checks of a copy by the sqlite3 CLI
)

// crashStats is the summary the test prints.
type crashStats struct {
	kills        int
	beforeReady  int   // kills that landed before the writer was ready (in Open or recovery)
	reported     int64 // transactions whose Commit returned nil, as the writer said
	found        int64 // transactions the file held after the kills
	unreported   int   // kills after which the file held one more than reported
	lost         int64 // reported but not found: must be 0
	walLeft      int   // kills that left a non-empty WAL
	spilled      int   // pages spilled before their commit, as the writer said
	spillTxs     int   // commits that had spilled
	checkpoints  int   // checkpoints run by commits
	ckptTxs      int   // commits that ran a checkpoint
	readySum     time.Duration
	readyMax     time.Duration
	sqliteChecks int
	cliChecks    int
	byOptions    map[string]int
	started      time.Time
}

func TestCrash(t *testing.T) {
	kills := 150
	if testing.Short() {
		kills = 20
	}
	runCrash(t, pagoda.JournalDefault, kills)
}

// TestCrashJournal is TestCrash on a rollback-journal file: the writer
// (JournalDelete) is killed mid-commit and mid-spill (its 64 KiB cache
// configurations spill big transactions into the file before their
// commit), and after every kill, besides pagoda's read-only check (which
// reads through a hot journal), the sqlite3 CLI opens a copy with its
// journal: it rolls the journal back and must find integrity_check ok,
// journal_mode delete and the transaction pagoda found.
func TestCrashJournal(t *testing.T) {
	kills := 40
	if testing.Short() {
		kills = 10
	}
	runCrash(t, pagoda.JournalDelete, kills)
}

// runCrash runs kills kills of a writer in journal mode mode.
func runCrash(t *testing.T, mode pagoda.JournalMode, kills int) {
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1":
		t.Skipf("no SIGKILL on %s", runtime.GOOS)
	}
	if s := os.Getenv(envKills); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", envKills, s)
		}
		kills = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(envSeed); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned number", envSeed, s)
		}
		seed = n
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 0x6b696c6c))
	pageSizes := []int{512, 1024, 4096, 4096, 8192, 65536}
	pageSize := pageSizes[r.IntN(len(pageSizes))]
	t.Logf("seed %d (%s=%d replays it), %d kills, page size %d, journal mode %v", seed, envSeed, seed, kills, pageSize, mode)

	dir := t.TempDir()
	path := filepath.Join(dir, "crash.db")
	cli, _ := exec.LookPath("sqlite3")
	if cli == "" {
		if mode == pagoda.JournalDelete {
			t.Skip("sqlite3 not installed: the journal's crash test checks every kill with it")
		}
		t.Log("sqlite3 not installed: copies are checked by modernc.org/sqlite only")
	}
	journal := mode == pagoda.JournalDelete
	var hotLeft, spillLeft int // kills that left a hot journal, of several segments
	m := newModel(seed)
	st := crashStats{byOptions: map[string]int{}, started: time.Now()}
	var prevK int64

	for iter := 1; iter <= kills; iter++ {
		cfg := childConfig{seed: seed, runSeed: r.Uint64(), pageSize: pageSize, journal: mode}
		label := "default"
		switch r.IntN(4) {
		case 1:
			cfg.cache, label = 64<<10, "cache64k"
		case 2:
			cfg.ckpt = 8 + r.IntN(64)
			label = "checkpoint-small"
		case 3:
			cfg.cache, cfg.ckpt = 64<<10, 8+r.IntN(64)
			label = "cache64k+checkpoint-small"
		}
		// SyncFull mostly; SyncNormal and SyncOff now and then, which
		// promise the same for a crash of the process (the kernel keeps
		// what was written) and take other paths (no direct writes of new
		// pages under SyncNormal, its WAL sync at checkpoints).
		switch p := r.IntN(100); {
		case p < 10:
			cfg.sync = pagoda.SyncNormal
			label += "+normal"
		case p < 15:
			cfg.sync = pagoda.SyncOff
			label += "+off"
		}
		st.byOptions[label]++
		// Mostly counted from the moment the writer is ready, so that the
		// kill lands among its commits; sometimes from its start, so that
		// it lands in Open and the recovery of the WAL.
		fromStart := r.IntN(100) < 15
		delay := time.Duration(5+r.IntN(76)) * time.Millisecond

		fail := func(format string, args ...any) {
			t.Helper()
			keep := keepFiles(t, path, seed, iter)
			t.Fatalf("seed %d, kill %d of %d (writer options %s: cache %d, checkpoint %d, sync %d; kill %v after %s): %s\nfiles kept in %s\nreplay: %s=%d go test ./internal/crash -run Crash -count=1 -v",
				seed, iter, kills, label, cfg.cache, cfg.ckpt, cfg.sync, delay, map[bool]string{true: "start", false: "ready"}[fromStart],
				fmt.Sprintf(format, args...), keep, envSeed, seed)
		}

		out, err := runChild(exe, path, cfg, fromStart, delay)
		if err != nil {
			fail("%v", err)
		}
		st.kills++
		lastReported := prevK
		if out.ready {
			if out.k0 != prevK {
				fail("the writer started from transaction %d; the file held %d after the last kill", out.k0, prevK)
			}
			lastReported = out.last
			st.spilled += out.spilled
			st.spillTxs += out.commitsWithSpill
			st.checkpoints += out.checkpoints
			st.ckptTxs += out.commitsWithCheckpoint
			st.readySum += out.readyAfter
			st.readyMax = max(st.readyMax, out.readyAfter)
		} else {
			st.beforeReady++
		}
		if out.bad != "" {
			fail("writer output: %s", out.bad)
		}
		if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 32 {
			st.walLeft++
		}
		if n := hotJournal(path); journal && n > 0 {
			hotLeft++
			if n > 1 {
				spillLeft++
			}
		}

		k, err := verify(path, m, prevK, lastReported)
		if err != nil {
			fail("%v", err)
		}
		st.reported += lastReported - prevK
		st.found += k - prevK
		if k > lastReported {
			st.unreported++
		}
		st.lost += max(0, lastReported-k)
		prevK = k

		if iter%sqliteEvery == 0 || iter == kills {
			if err := sqliteCheck(dir, path, m); err != nil {
				fail("modernc.org/sqlite on a copy after transaction %d: %v", k, err)
			}
			st.sqliteChecks++
		}
		if cli != "" && (journal || iter%cliEvery == 0 || iter == kills) {
			if err := cliCheck(dir, path, cli, m, journal); err != nil {
				fail("sqlite3 on a copy after transaction %d: %v", k, err)
			}
			st.cliChecks++
		}
	}
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	t.Logf("%d kills in %v (%d before the writer was ready, %d leaving a WAL); writer options %v",
		st.kills, time.Since(st.started).Round(time.Millisecond), st.beforeReady, st.walLeft, st.byOptions)
	if n := st.kills - st.beforeReady; n > 0 {
		t.Logf("writer start to ready (exec, Open, recovery, model replay): mean %v, max %v",
			(st.readySum / time.Duration(n)).Round(time.Millisecond/10), st.readyMax.Round(time.Millisecond/10))
	}
	t.Logf("transactions: %d committed in all (max k %d), %d reported by the writer, %d found; %d kills found one more than reported; lost committed transactions: %d",
		prevK, prevK, st.reported, st.found, st.unreported, st.lost)
	t.Logf("reported commits that spilled pages first: %d (%d pages); that ran a checkpoint: %d (plus explicit ones and Close)",
		st.spillTxs, st.spilled, st.ckptTxs)
	t.Logf("final file: %d bytes, %d rows in t, %d bucket keys; checks by modernc.org/sqlite: %d, by sqlite3: %d",
		size, len(m.rows), len(m.kv), st.sqliteChecks, st.cliChecks)
	if journal {
		t.Logf("kills that left a hot journal (rolled back by sqlite3 on a copy, read through by pagoda, then rolled back by the next writer): %d; of several segments (after a spill): %d", hotLeft, spillLeft)
	}
	if st.lost != 0 {
		t.Fatalf("seed %d: %d committed transactions lost", seed, st.lost)
	}
}

// childOut is what the parent learned from a writer's stdout.
type childOut struct {
	ready      bool          // the writer printed "ready k0"
	readyAfter time.Duration // from its start
	k0         int64         // the transaction it found in the file
	last       int64         // the last k it printed (k0 if none)
	bad        string        // malformed or out-of-sequence output

	spilled, checkpoints                    int // pages spilled before commits; checkpoints run by commits
	commitsWithSpill, commitsWithCheckpoint int
}

// runChild starts a writer, kills it with SIGKILL delay after it is ready
// (or after its start, when fromStart), and returns what it printed. An
// error means it did not run as it should (it exited on its own, printed
// an error, or never became ready).
func runChild(exe, path string, cfg childConfig, fromStart bool, delay time.Duration) (childOut, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return childOut{}, err
	}
	defer pr.Close()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envChild+"="+path, envConfig+"="+cfg.String())
	cmd.Stdout = pw
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		pw.Close()
		return childOut{}, err
	}
	pw.Close()

	var out childOut
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReader(pr)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return // EOF: the writer is dead (a last line without '\n' is ignored)
			}
			line = strings.TrimSuffix(line, "\n")
			if s, ok := strings.CutPrefix(line, "ready "); ok && !out.ready {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					out.bad = fmt.Sprintf("line %q", line)
					continue
				}
				out.ready, out.k0, out.last = true, n, n
				out.readyAfter = time.Since(start)
				close(ready)
				continue
			}
			var n int64
			var spilled, ckpts int
			if _, err := fmt.Sscanf(line, "%d %d %d", &n, &spilled, &ckpts); err != nil || !out.ready || n != out.last+1 {
				if out.bad == "" {
					out.bad = fmt.Sprintf("line %q after %d", line, out.last)
				}
				continue
			}
			out.last = n
			out.spilled += spilled
			out.checkpoints += ckpts
			if ckpts > 0 {
				out.commitsWithCheckpoint++
			}
			if spilled > 0 {
				out.commitsWithSpill++
			}
		}
	}()

	exited := false
	if !fromStart {
		select {
		case <-ready:
		case <-done:
			exited = true
		case <-time.After(60 * time.Second):
		}
	}
	if !exited {
		select {
		case <-time.After(delay):
		case <-done:
			exited = true
		}
	}
	_ = cmd.Process.Kill() // SIGKILL
	<-done
	werr := cmd.Wait()
	switch {
	case exited || cmd.ProcessState.Exited():
		return out, fmt.Errorf("the writer exited by itself (%v) instead of being killed: %s", werr, strings.TrimSpace(stderr.String()))
	case !fromStart && !out.ready:
		return out, fmt.Errorf("the writer was not ready after 60s: %s", strings.TrimSpace(stderr.String()))
	case stderr.Len() > 0:
		return out, fmt.Errorf("the writer wrote to stderr: %s", strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// verify opens the database after a kill and checks it: sound (db.Check),
// holding a transaction k with prevK <= k, lastReported <= k <=
// lastReported+1, and exactly the model's contents after k. It advances
// the model to k and returns k.
func verify(path string, m *model, prevK, lastReported int64) (int64, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && prevK == 0 && lastReported == 0 {
		return 0, nil // killed before it created the file
	}
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		return 0, fmt.Errorf("open: %w", err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		return 0, fmt.Errorf("db.Check: %w", err)
	}
	var k int64
	err = db.View(func(tx *pagoda.Tx) error {
		if k, err = metaK(tx); err != nil {
			return err
		}
		switch {
		case k < lastReported:
			return fmt.Errorf("LOST COMMITTED TRANSACTIONS: the file holds transaction %d, the writer's Commit returned nil up to %d (%d lost)", k, lastReported, lastReported-k)
		case k < prevK:
			return fmt.Errorf("the file went back from transaction %d to %d", prevK, k)
		case k > lastReported+1:
			return fmt.Errorf("the file holds transaction %d, but the writer reported only up to %d: at most one commit can be in flight", k, lastReported)
		}
		m.advance(k)
		if err := m.compare(tx); err != nil {
			return fmt.Errorf("after transaction %d, the file differs from the model:\n%w", k, err)
		}
		return nil
	})
	if err != nil {
		return k, err
	}
	return k, db.Close()
}

// copyDB copies the database, its WAL and its journal (SQLite may
// checkpoint and remove the WAL of what it opens, and rolls back a hot
// journal) into a new directory under dir.
func copyDB(dir, path string) (string, error) {
	d, err := os.MkdirTemp(dir, "copy-")
	if err != nil {
		return "", err
	}
	dst := filepath.Join(d, filepath.Base(path))
	for _, suffix := range []string{"", "-wal", "-journal"} {
		if err := copyFile(dst+suffix, path+suffix); err != nil && !(suffix != "" && errors.Is(err, fs.ErrNotExist)) {
			return "", err
		}
	}
	return dst, nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// sqliteCheck opens a copy of the database with modernc.org/sqlite: PRAGMA
// integrity_check must say ok and the counts and byte totals must be the
// model's.
func sqliteCheck(dir, path string, m *model) error {
	cp, err := copyDB(dir, path)
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(cp))
	db, err := sql.Open("sqlite", cp)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		return err
	}
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return err
		}
		lines = append(lines, s)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(lines) != 1 || lines[0] != "ok" {
		return fmt.Errorf("PRAGMA integrity_check:\n%s", strings.Join(lines, "\n"))
	}
	if m.k == 0 {
		return db.Close()
	}
	want := m.sums()
	var got sums
	var k int64
	if err := db.QueryRow("SELECT count(*), coalesce(sum(length(data)), 0) FROM t").Scan(&got.rows, &got.dataBytes); err != nil {
		return err
	}
	if err := db.QueryRow("SELECT count(*), coalesce(sum(length(value)), 0) FROM "+bucketName).Scan(&got.kvKeys, &got.kvBytes); err != nil {
		return err
	}
	if err := db.QueryRow("SELECT k FROM meta WHERE id = 1").Scan(&k); err != nil {
		return err
	}
	if got != want || k != m.k {
		return fmt.Errorf("SQLite reads transaction %d, %+v; the model is at %d, %+v", k, got, m.k, want)
	}
	return db.Close()
}

// cliCheck runs sqlite3's PRAGMA integrity_check and a count on a copy;
// journal asks for journal_mode delete too.
func cliCheck(dir, path, cli string, m *model, journal bool) error {
	cp, err := copyDB(dir, path)
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(cp))
	if _, err := os.Stat(cp); errors.Is(err, fs.ErrNotExist) {
		return nil // killed before it created the file
	}
	stmts := "PRAGMA integrity_check;"
	want := "ok"
	if journal {
		stmts += " PRAGMA journal_mode;"
		want += "\ndelete"
	}
	if m.k > 0 {
		stmts += " SELECT count(*) FROM t; SELECT k FROM meta;"
		want += fmt.Sprintf("\n%d\n%d", len(m.rows), m.k)
	}
	out, err := exec.Command(cli, cp, stmts).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != want {
		return fmt.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	return nil
}

// keepFiles copies the database and its WAL where a failure can be
// examined after the test's temporary directory is gone.
func keepFiles(t *testing.T, path string, seed uint64, iter int) string {
	d, err := os.MkdirTemp("", fmt.Sprintf("pagoda-crash-%d-%d-", seed, iter))
	if err != nil {
		t.Logf("keeping the files: %v", err)
		return "(not kept)"
	}
	dst := filepath.Join(d, filepath.Base(path))
	for _, suffix := range []string{"", "-wal", "-journal"} {
		if err := copyFile(dst+suffix, path+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Logf("keeping %s: %v", path+suffix, err)
		}
	}
	return d
}

// hotJournal returns the segments of the journal beside the database at
// path that a rollback would play: those whose header's magic is written,
// at the multiples of 512 bytes (0: no hot journal). Several mean that the
// writer spilled before the kill.
func hotJournal(path string) int {
	b, err := os.ReadFile(path + "-journal")
	if err != nil {
		return 0
	}
	magic := []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}
	n := 0
	for off := 0; off+512 <= len(b); off += 512 {
		if bytes.Equal(b[off:off+8], magic) {
			n++
		}
	}
	return n
}
