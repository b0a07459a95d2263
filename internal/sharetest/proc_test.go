package sharetest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is a child process: its output, standard error merged, comes line
// by line on lines, which is closed once the process has exited and every
// line was read.
type proc struct {
	name  string
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string

	mu     sync.Mutex
	last   []string // the last lines read, for failure messages
	killed bool

	exited  chan struct{}
	waitErr error
}

const tailLines = 30

// start starts cmd as proc name; the test's end kills it if it still runs.
func start(t testing.TB, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	w.Close()
	p := &proc{name: name, cmd: cmd, in: in, lines: make(chan string, 1<<14), exited: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.last = append(p.last, line)
			if len(p.last) > tailLines {
				p.last = p.last[len(p.last)-tailLines:]
			}
			p.mu.Unlock()
			p.lines <- line
		}
		r.Close()
		p.waitErr = cmd.Wait()
		close(p.exited)
		close(p.lines)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// kill sends SIGKILL, unless the process is gone, and waits for it.
func (p *proc) kill() {
	p.mu.Lock()
	p.killed = true
	p.mu.Unlock()
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// wasKilled reports whether kill was called.
func (p *proc) wasKilled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killed
}

// stop closes the process's standard input, its signal to finish, and waits
// up to d for it to exit; it reports an exit that was not clean.
func (p *proc) stop(d time.Duration) error {
	p.in.Close()
	select {
	case <-p.exited:
	case <-time.After(d):
		p.kill()
		return fmt.Errorf("%s did not stop within %v\n%s", p.name, d, p.tail())
	}
	if p.waitErr != nil {
		return fmt.Errorf("%s: %v\n%s", p.name, p.waitErr, p.tail())
	}
	return nil
}

// tail returns the last lines the process printed.
func (p *proc) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "\t" + strings.Join(p.last, "\n\t")
}

// send writes s to the process's standard input.
func (p *proc) send(s string) error {
	_, err := io.WriteString(p.in, s)
	return err
}

// next returns the next line, waiting up to d; ok is false at the end of
// the output or after d.
func (p *proc) next(d time.Duration) (line string, ok bool) {
	select {
	case line, ok = <-p.lines:
		return line, ok
	case <-time.After(d):
		return "", false
	}
}

// expect reads lines until one starts with prefix, and returns it.
func (p *proc) expect(prefix string, d time.Duration) (string, error) {
	deadline := time.Now().Add(d)
	for {
		line, ok := p.next(time.Until(deadline))
		if !ok {
			return "", fmt.Errorf("%s: no %q line\n%s", p.name, prefix, p.tail())
		}
		if strings.HasPrefix(line, prefix) {
			return line, nil
		}
		if isFailure(line) {
			return "", fmt.Errorf("%s: %s\n%s", p.name, line, p.tail())
		}
	}
}

// isFailure reports whether a child's line says something went wrong:
// the children's own "bad" and "error" lines, the sqlite3 shell's error
// messages, a Go panic.
func isFailure(line string) bool {
	for _, s := range []string{"bad ", "error ", "Error", "Runtime error", "Parse error", "panic:", "fatal error:", "Traceback"} {
		if strings.HasPrefix(line, s) {
			return true
		}
	}
	return false
}

// pagodaChild starts the test binary as a pagoda child in role, with
// arguments (key=value) args.
func pagodaChild(t testing.TB, name, role, path string, args ...string) *proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"="+role, envPath+"="+path, envArgs+"="+strings.Join(args, " "))
	return start(t, name, cmd)
}

// pythonChild starts Python's sqlite3 as a child in role (python_test.go).
func pythonChild(t testing.TB, name, role, path string, args ...string) *proc {
	t.Helper()
	py := pythonPath(t)
	cmd := exec.Command(py, append([]string{"-u", "-c", pythonScript, role, path}, args...)...)
	return start(t, name, cmd)
}

// pythonPath returns the path of a python3 with the sqlite3 module, or skips
// the test.
func pythonPath(t testing.TB) string {
	t.Helper()
	p, err := lookPython()
	if err != nil {
		t.Skip(err)
	}
	return p
}

// lookPython finds a python3 with the sqlite3 module.
func lookPython() (string, error) {
	pythonOnce.Do(func() {
		p, err := exec.LookPath("python3")
		if err != nil {
			pythonErr = fmt.Errorf("python3 is not installed: no Python sqlite3 children")
			return
		}
		if exec.Command(p, "-c", "import sqlite3").Run() != nil {
			pythonErr = fmt.Errorf("python3 has no sqlite3 module: no Python sqlite3 children")
			return
		}
		python = p
	})
	return python, pythonErr
}

var (
	pythonOnce sync.Once
	python     string
	pythonErr  error
)

// shell is a sqlite3 shell process that the test drives statement by
// statement (query), with .bail on: an error ends it.
type shell struct {
	*proc
	k int
}

// sqliteShell starts the sqlite3 shell on path with a busy timeout.
func sqliteShell(t testing.TB, name, path string, timeout time.Duration) *shell {
	t.Helper()
	cmd := exec.Command(sqlite3Path(t), "-bail", "-cmd", ".timeout "+strconv.Itoa(int(timeout/time.Millisecond)), path)
	return &shell{proc: start(t, name, cmd)}
}

// query runs sql and returns the lines it printed; an error message, or the
// shell's end, is an error.
func (s *shell) query(sql string, d time.Duration) ([]string, error) {
	s.k++
	mark := "@@" + strconv.Itoa(s.k)
	if err := s.send(sql + "\nSELECT '" + mark + "';\n"); err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", s.name, err, s.tail())
	}
	var out []string
	deadline := time.Now().Add(d)
	for {
		line, ok := s.next(time.Until(deadline))
		if !ok {
			return out, fmt.Errorf("%s: no answer to %q\n%s", s.name, sql, s.tail())
		}
		if line == mark {
			return out, nil
		}
		if isFailure(line) {
			return out, fmt.Errorf("%s: %s (for %q)", s.name, line, sql)
		}
		out = append(out, line)
	}
}

// ledger records what writers acknowledged: per writer (one incarnation of
// one process), the largest n whose commit returned, and the largest seq
// of any.
type ledger struct {
	mu      sync.Mutex
	acked   map[string]int64
	done    map[string]bool // writers whose process has exited, every line read
	maxSeq  int64
	commits int
	busy    int // write transactions that found the write lock taken past their timeout
}

func newLedger() *ledger { return &ledger{acked: map[string]int64{}, done: map[string]bool{}} }

// ack records line "ack WHO N SEQ"; N must follow the writer's last.
func (l *ledger) ack(line string) error {
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "ack" {
		return fmt.Errorf("bad ack line %q", line)
	}
	n, err1 := strconv.ParseInt(f[2], 10, 64)
	seq, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("bad ack line %q", line)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev := l.acked[f[1]]; n != prev+1 {
		return fmt.Errorf("%s acknowledged %d after %d", f[1], n, prev)
	}
	l.acked[f[1]] = n
	l.maxSeq = max(l.maxSeq, seq)
	l.commits++
	return nil
}

// waitDone waits up to d for finished(who).
func (l *ledger) waitDone(who string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		l.mu.Lock()
		done := l.done[who]
		l.mu.Unlock()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("writer %s: still not gone after %v", who, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ackedBy returns the largest n that writer who acknowledged.
func (l *ledger) ackedBy(who string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acked[who]
}

// commitCount returns how many commits were acknowledged so far.
func (l *ledger) commitCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.commits
}

// seq returns the largest seq acknowledged so far.
func (l *ledger) seq() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.maxSeq
}

// finished records that writer who's process is gone: none of its commits
// is still to be acknowledged.
func (l *ledger) finished(who string) {
	l.mu.Lock()
	l.done[who] = true
	l.mu.Unlock()
}

// snapshot returns a copy of the acknowledgements and of the set of
// finished writers, to compare with a read that begins after it.
func (l *ledger) snapshot() (acked map[string]int64, done map[string]bool, seq int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	acked = make(map[string]int64, len(l.acked))
	for k, v := range l.acked {
		acked[k] = v
	}
	done = make(map[string]bool, len(l.done))
	for k, v := range l.done {
		done[k] = v
	}
	return acked, done, l.maxSeq
}

// verify checks a read of the bank that began after snapshot (acked, done,
// seq) was taken: the state is whole and at least as new as every
// acknowledged commit, every acknowledged commit is in the log, each
// writer's rows are 1..max without a gap, and a writer that is gone
// committed at most one transaction past its last acknowledgement.
func verify(s bankState, logs map[string]writerLog, acked map[string]int64, done map[string]bool, seq int64) error {
	if err := s.check(); err != nil {
		return err
	}
	if s.seq < seq {
		return fmt.Errorf("the read sees seq %d; seq %d was acknowledged before it began", s.seq, seq)
	}
	var rows int64
	for who, w := range logs {
		rows += w.rows
		if w.rows != w.max {
			return fmt.Errorf("writer %s: %d log rows, the largest n %d", who, w.rows, w.max)
		}
		a := acked[who]
		if w.max < a {
			return fmt.Errorf("writer %s: commit %d acknowledged, the log ends at %d: a commit lost", who, a, w.max)
		}
		if done[who] && w.max > a+1 {
			return fmt.Errorf("writer %s is gone with %d acknowledged, the log has %d", who, a, w.max)
		}
	}
	for who, a := range acked {
		if a > 0 && logs[who].rows == 0 {
			return fmt.Errorf("writer %s: %d commits acknowledged, none in the log", who, a)
		}
	}
	if rows != s.rows {
		return fmt.Errorf("the writers' rows add up to %d, the log has %d", rows, s.rows)
	}
	return nil
}
