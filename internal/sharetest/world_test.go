package sharetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// debug, set by PAGODA_SHARE_DEBUG, logs the children's lines but acks and
// read counts.
var debug = os.Getenv("PAGODA_SHARE_DEBUG") != ""

// world is one test's processes around one bank: what they acknowledged
// (the ledger), what they counted, and the first failures any of them
// reported; the goroutines that watch them report there rather than fail
// the test themselves.
type world struct {
	t    *testing.T
	path string
	led  *ledger
	stop chan struct{} // closed to end the loops the test drives

	mu     sync.Mutex
	errs   []error
	counts map[string]int
	wg     sync.WaitGroup
}

func newWorld(t *testing.T, path string) *world {
	if !vfs.FileLocks {
		t.Skip("pagoda shares a database only where locks belong to the open file (Linux)")
	}
	w := &world{t: t, path: path, led: newLedger(), stop: make(chan struct{}), counts: map[string]int{}}
	t.Cleanup(w.halt)
	return w
}

// halt ends the loops the test drives and waits for the watchers.
func (w *world) halt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.wg.Wait()
}

func (w *world) stopped() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

// fail records a failure.
func (w *world) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) < 20 {
		w.errs = append(w.errs, err)
	}
}

// failed reports whether a failure was recorded.
func (w *world) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.errs) > 0
}

// check fails the test with the failures recorded.
func (w *world) check() {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, err := range w.errs {
		w.t.Error(err)
	}
	if len(w.errs) > 0 {
		w.t.FailNow()
	}
}

// count adds n to counter k.
func (w *world) count(k string, n int) {
	w.mu.Lock()
	w.counts[k] += n
	w.mu.Unlock()
}

func (w *world) get(k string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts[k]
}

// summary returns the counters, sorted.
func (w *world) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.counts))
	for k := range w.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, w.counts[k])
	}
	return strings.TrimSpace(b.String())
}

// watch consumes the lines of a child that runs on its own: acks go to the
// ledger (as writer who), "reads N" and "ckpt" lines to the counters
// (kind names them), failures to the world. A child that exits unasked
// (not killed, not stopped) is a failure. The channel it returns is closed
// once the child is gone and every line of it was taken into account.
func (w *world) watch(p *proc, who, kind string) <-chan struct{} {
	w.wg.Add(1)
	done := make(chan struct{})
	go func() {
		defer w.wg.Done()
		defer close(done)
		reads := 0
		for line := range p.lines {
			if debug && !strings.HasPrefix(line, "ack ") && !strings.HasPrefix(line, "reads ") {
				w.t.Logf("%s %s: %s", time.Now().Format("15:04:05.000"), p.name, line)
			}
			switch f := strings.Fields(line); {
			case len(f) == 0:
			case f[0] == "ack":
				if err := w.led.ack(line); err != nil {
					w.fail(fmt.Errorf("%s: %v", p.name, err))
				}
			case f[0] == "reads" && len(f) == 3:
				n, _ := strconv.Atoi(f[1])
				w.count(kind+" reads", n-reads)
				reads = n
			case f[0] == "busy":
				w.count(kind+" busy", 1)
			case f[0] == "ckpt":
				w.count(kind+" checkpoints", 1)
				if len(f) >= 4 && (f[len(f)-3] == "1" || f[len(f)-1] == "true") {
					w.count(kind+" checkpoints busy", 1)
				}
			case isFailure(line):
				w.fail(fmt.Errorf("%s: %s\n%s", p.name, line, p.tail()))
			}
		}
		if who != "" {
			w.led.finished(who)
		}
		if p.waitErr != nil && !p.wasKilled() {
			w.fail(fmt.Errorf("%s exited: %v\n%s", p.name, p.waitErr, p.tail()))
		}
	}()
	return done
}

// shellReader reads the bank with a sqlite3 shell (busy timeout 2 s) until
// the world stops: every read is whole, never older than the last, and
// sees every commit acknowledged before it began.
func (w *world) shellReader(name string) {
	sh := sqliteShell(w.t, name, w.path, 2*time.Second)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var last int64
		for !w.stopped() {
			seq0 := w.led.seq()
			lines, err := sh.query(bankQuery+";", 10*time.Second)
			if err != nil {
				if !sh.wasKilled() {
					w.fail(err)
				}
				return
			}
			s, err := parseState(lines)
			if err == nil {
				err = s.check()
			}
			if err == nil && s.seq < seq0 {
				err = fmt.Errorf("seq %d read after seq %d was acknowledged", s.seq, seq0)
			}
			if err == nil && s.seq < last {
				err = fmt.Errorf("seq %d after %d: back in time", s.seq, last)
			}
			if err != nil {
				w.fail(fmt.Errorf("%s: %v", name, err))
				return
			}
			last = s.seq
			w.count("sqlite3 shell reads", 1)
		}
		if err := sh.stop(5 * time.Second); err != nil {
			w.fail(err)
		}
	}()
}

// parseState parses the one line of bankQuery.
func parseState(lines []string) (bankState, error) {
	if len(lines) != 1 {
		return bankState{}, fmt.Errorf("bank query: %q", lines)
	}
	v, err := parseInts(lines[0], 3)
	if err != nil {
		return bankState{}, err
	}
	return bankState{v[0], v[1], v[2]}, nil
}

// shellWriters is a shellWriter's loop, for its test to kill its shell.
type shellWriters struct {
	w   *world
	mu  sync.Mutex
	sh  *shell
	who string
}

// kill sends SIGKILL to the shell now writing, whatever it is doing, and
// returns its writer's name once the ledger knows it is gone; the loop goes
// on with a new shell.
func (h *shellWriters) kill() (string, error) {
	h.mu.Lock()
	sh, who := h.sh, h.who
	h.mu.Unlock()
	if sh == nil {
		return "", errors.New("no sqlite3 shell writes yet")
	}
	sh.kill()
	return who, h.w.led.waitDone(who, 30*time.Second)
}

// shellWriter makes transfers with sqlite3 shells (busy timeout 10 s) as
// writers prefix.1, prefix.2, ... until the world stops: a shell that finds
// the database locked past its timeout exits (.bail), and one killed
// (shellWriters.kill) is gone; the next takes over. Each commit must see
// every commit acknowledged before it began: its seq is past them.
func (w *world) shellWriter(prefix string, padMax int) *shellWriters {
	h := &shellWriters{w: w}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		r := newRand(w.t, prefix)
		for inc := 1; !w.stopped(); inc++ {
			who := fmt.Sprintf("%s.%d", prefix, inc)
			sh := sqliteShell(w.t, who, w.path, 10*time.Second)
			h.mu.Lock()
			h.sh, h.who = sh, who
			h.mu.Unlock()
			err := w.shellTransfers(sh, who, r, padMax)
			switch {
			case err == nil: // the world stopped
				if err := sh.stop(10 * time.Second); err != nil {
					w.fail(err)
				}
			case sh.wasKilled():
				w.count("sqlite3 shells killed", 1)
			case strings.Contains(err.Error(), "database is locked"):
				w.count("sqlite3 shell busy", 1)
			default:
				w.fail(err)
				w.led.finished(who)
				return
			}
			w.led.finished(who)
		}
	}()
	return h
}

// shellTransfers makes transfers in shell sh as writer who until the world
// stops (nil) or one fails.
func (w *world) shellTransfers(sh *shell, who string, r *rand.Rand, padMax int) error {
	for n := int64(1); !w.stopped(); n++ {
		seq0 := w.led.seq()
		seq, err := shellTransfer(sh, who, n, r, padMax)
		if err != nil {
			return err
		}
		if seq <= seq0 {
			return fmt.Errorf("%s: commit %d has seq %d: seq %d was acknowledged before it began", who, n, seq, seq0)
		}
		if err := w.led.ack(fmt.Sprintf("ack %s %d %d", who, n, seq)); err != nil {
			return err
		}
	}
	return nil
}

// shellTransfer makes transfer n of writer who in the sqlite3 shell sh, in
// one BEGIN IMMEDIATE transaction, and returns its seq once COMMIT has
// returned.
func shellTransfer(sh *shell, who string, n int64, r *rand.Rand, padMax int) (int64, error) {
	x, a := r.IntN(100), 1+r.IntN(accounts)
	b := 1 + r.IntN(accounts-1)
	if b >= a {
		b++
	}
	sql := fmt.Sprintf("BEGIN IMMEDIATE;\nUPDATE acct SET bal=bal-%d WHERE id=%d;\nUPDATE acct SET bal=bal+%d WHERE id=%d;\n"+
		"UPDATE meta SET seq=seq+1 WHERE id=1;\nINSERT INTO log(who, n, seq, pad) SELECT '%s', %d, seq, randomblob(%d) FROM meta WHERE id=1;\n"+
		"SELECT 'ack', seq FROM meta WHERE id=1;\nCOMMIT;", x, a, x, b, who, n, padSize(r, padMax))
	lines, err := sh.query(sql, 30*time.Second)
	if err != nil {
		return 0, err
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "ack|") {
		return 0, fmt.Errorf("%s: transfer %d printed %q", who, n, lines)
	}
	return strconv.ParseInt(strings.TrimPrefix(lines[0], "ack|"), 10, 64)
}

// drive makes transfers with a driven writer child (pagoda's or Python's,
// driven=1) until the world stops: each commit must see every commit
// acknowledged before it began.
func (w *world) drive(p *proc, who string) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		if _, err := p.expect("ready", 30*time.Second); err != nil {
			w.fail(err)
			return
		}
		for !w.stopped() {
			if err := w.commit(p, 1); err != nil {
				w.fail(err)
				return
			}
		}
		if err := p.stop(30 * time.Second); err != nil {
			w.fail(err)
		}
		w.led.finished(who)
	}()
}

// readAlong has driven reader p read (readLatest) until the world stops,
// counting its reads as counter k.
func (w *world) readAlong(p *proc, k string) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		if _, err := p.expect("ready", 30*time.Second); err != nil {
			w.fail(err)
			return
		}
		for !w.stopped() {
			if _, err := w.readLatest(p); err != nil {
				w.fail(err)
				return
			}
			w.count(k, 1)
		}
		if err := p.stop(30 * time.Second); err != nil {
			w.fail(err)
		}
	}()
}

// commit has driven writer p (pagoda's or Python's, "ready" read) make k
// transfers, one after the other: each acknowledged, each past every
// commit acknowledged before it began.
func (w *world) commit(p *proc, k int) error {
	for range k {
		seq0 := w.led.seq()
		if err := p.send("t\n"); err != nil {
			return fmt.Errorf("%s: %v", p.name, err)
		}
		line, err := p.expect("ack ", 60*time.Second)
		if err != nil {
			return err
		}
		if err := w.led.ack(line); err != nil {
			return err
		}
		if seq, _ := strconv.ParseInt(strings.Fields(line)[3], 10, 64); seq <= seq0 {
			return fmt.Errorf("%s: %s: seq %d was acknowledged before it began", p.name, line, seq0)
		}
	}
	return nil
}

// checkpointBy has driven pagoda writer p run DB.Checkpoint(mode): the
// frames it says remain, and whether it returned ErrBusy.
func checkpointBy(p *proc, mode pagoda.CheckpointMode) (left int, busy bool, err error) {
	if err := p.send(fmt.Sprintf("c %d\n", mode)); err != nil {
		return 0, false, fmt.Errorf("%s: %v", p.name, err)
	}
	line, err := p.expect("ckpt ", 60*time.Second)
	if err != nil {
		return 0, false, err
	}
	f := strings.Fields(line)
	if len(f) != 4 {
		return 0, false, fmt.Errorf("%s: %q", p.name, line)
	}
	left, err = strconv.Atoi(f[2])
	return left, f[3] == "true", err
}

// readBy has driven reader p (pagoda's or Python's) run cmd, a read, and
// returns the state it read, which it checked.
func readBy(p *proc, cmd string) (bankState, error) {
	if err := p.send(cmd + "\n"); err != nil {
		return bankState{}, fmt.Errorf("%s: %v", p.name, err)
	}
	line, err := p.expect("state ", 60*time.Second)
	if err != nil {
		return bankState{}, err
	}
	f := strings.Fields(line)
	v, err := parseInts(strings.Join(f[1:], "|"), 3)
	if err != nil {
		return bankState{}, fmt.Errorf("%s: %v", p.name, err)
	}
	return bankState{v[0], v[1], v[2]}, nil
}

// readLatest has driven reader p read in a transaction of its own, which
// must see every commit acknowledged before it began.
func (w *world) readLatest(p *proc) (bankState, error) {
	seq0 := w.led.seq()
	s, err := readBy(p, "r")
	if err == nil && s.seq < seq0 {
		err = fmt.Errorf("%s read seq %d after seq %d was acknowledged", p.name, s.seq, seq0)
	}
	return s, err
}

// verify reads the bank with the sqlite3 shell (when installed) and with a
// pagoda child (DB.Check first), each in one read transaction that begins
// after the ledger's snapshot, and checks what they read (verify).
func (w *world) verify(what string) {
	w.t.Helper()
	acked, done, seq := w.led.snapshot()
	if hasSQLite3() {
		s, logs, err := sqliteVerify(w.t, w.path)
		if err == nil {
			err = verify(s, logs, acked, done, seq)
		}
		if err != nil {
			w.fail(fmt.Errorf("%s: sqlite3: %v", what, err))
		}
		w.count("sqlite3 integrity checks", 1)
	}
	s, logs, err := pagodaVerify(w.t, w.path)
	if err == nil {
		err = verify(s, logs, acked, done, seq)
	}
	if err != nil {
		w.fail(fmt.Errorf("%s: pagoda: %v", what, err))
	}
	w.count("pagoda checks", 1)
}

// hasSQLite3 reports whether the sqlite3 shell is installed.
func hasSQLite3() bool {
	_, err := lookSQLite3()
	return err == nil
}

// pagodaVerify runs a pagoda check child on path and returns what it read.
func pagodaVerify(t testing.TB, path string) (bankState, map[string]writerLog, error) {
	p := pagodaChild(t, "check", "check", path)
	var s bankState
	logs := map[string]writerLog{}
	for {
		line, ok := p.next(60 * time.Second)
		if !ok {
			p.kill()
			return s, nil, fmt.Errorf("check child: no end\n%s", p.tail())
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 4 && f[0] == "state":
			v, err := parseInts(f[1]+"|"+f[2]+"|"+f[3], 3)
			if err != nil {
				return s, nil, err
			}
			s = bankState{v[0], v[1], v[2]}
		case len(f) == 4 && f[0] == "log":
			v, err := parseInts(f[2]+"|"+f[3], 2)
			if err != nil {
				return s, nil, err
			}
			logs[f[1]] = writerLog{v[0], v[1]}
		case len(f) > 0 && f[0] == "checked":
			if err := p.stop(30 * time.Second); err != nil {
				return s, nil, err
			}
			return s, logs, nil
		case isFailure(line):
			p.kill()
			return s, nil, errors.New(line + "\n" + p.tail())
		}
	}
}

// fileSize returns the size of the file at path, -1 when there is none.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

// run lets the processes work for d, or until one reports a failure.
func (w *world) run(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && !w.failed() {
		time.Sleep(min(50*time.Millisecond, time.Until(deadline)))
	}
}

// stopAll stops the children (their standard input closed) and fails the
// world with any that does not exit cleanly.
func (w *world) stopAll(ps ...*proc) {
	for _, p := range ps {
		p.in.Close() // all at once: some take a while to finish
	}
	for _, p := range ps {
		if err := p.stop(30 * time.Second); err != nil {
			w.fail(err)
		}
	}
}

// need reports whether counter k reached at least n, and fails the world
// otherwise: a test whose processes did too little proves little.
func (w *world) need(k string, n int) {
	if got := w.get(k); got < n {
		w.fail(fmt.Errorf("%s: %d, want at least %d (%s)", k, got, n, w.summary()))
	}
}
