package sharetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
)

// cli is the pagoda command, built once into a directory that TestMain
// removes.
var cli struct {
	once      sync.Once
	dir, path string
	skip, err error
}

// pagodaCLI returns the path of cmd/pagoda built for this test run, or
// skips the test where the go command is not there to build it.
func pagodaCLI(t testing.TB) string {
	t.Helper()
	cli.once.Do(func() {
		goCmd, err := exec.LookPath("go")
		if err != nil {
			goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
			if _, err := os.Stat(goCmd); err != nil {
				cli.skip = fmt.Errorf("no go command to build cmd/pagoda with: %v", err)
				return
			}
		}
		if cli.dir, cli.err = os.MkdirTemp("", "pagoda-cli-"); cli.err != nil {
			return
		}
		cli.path = filepath.Join(cli.dir, "pagoda")
		out, err := exec.Command(goCmd, "build", "-o", cli.path, "github.com/pagodadb/pagoda/cmd/pagoda").CombinedOutput()
		if err != nil {
			cli.err = fmt.Errorf("go build cmd/pagoda: %v\n%s", err, out)
		}
	})
	if cli.skip != nil {
		t.Skip(cli.skip)
	}
	if cli.err != nil {
		t.Fatal(cli.err)
	}
	return cli.path
}

// removeCLI removes what pagodaCLI built.
func removeCLI() {
	if cli.dir != "" {
		os.RemoveAll(cli.dir)
	}
}

// TestPagodaWritersAndScans: two pagoda writer processes make transfers on
// one file (each checkpointing every 40 frames and now and then in a
// random mode) while `pagoda scan` and `pagoda check` processes, one after
// the other, read it, and a driven pagoda reader reads beside them: every
// scan of the accounts adds up to the total, every scan of meta sees every
// commit acknowledged before it started, every check passes; both writers
// commit, and every acknowledged commit is in the file.
func TestPagodaWritersAndScans(t *testing.T) {
	path := newBank(t)
	w := newWorld(t, path)
	bin := pagodaCLI(t)
	var ws []*proc
	for _, who := range []string{"pg1", "pg2"} {
		p := pagodaChild(t, "pagoda writer "+who, "writer", path, "who="+who, "cpages=40", "ckpt=20", "timeout=5000", "pad=3000", seedArg(t, who))
		w.watch(p, who, "pagoda writer")
		ws = append(ws, p)
	}
	w.readAlong(pagodaChild(t, "pagoda driven reader", "reader", path, "driven=1"), "pagoda driven reads")
	// The CLI runs stop first: the last connection to close checkpoints
	// under EXCLUSIVE, and a CLI's Open (no timeout) then fails, as
	// sqlite3's without .timeout does.
	stopCLI := w.cliLoop("pagoda CLI runs", func(i int) error {
		switch i % 3 {
		case 0:
			return scanAccounts(bin, path)
		case 1:
			return w.scanMeta(bin)
		}
		out, err := exec.Command(bin, "check", path).CombinedOutput()
		if err == nil && strings.TrimSpace(string(out)) != "ok" {
			return fmt.Errorf("pagoda check printed %q", out)
		} else if err != nil {
			return fmt.Errorf("pagoda check: %v\n%s", err, out)
		}
		return nil
	})
	w.run(3 * time.Second)
	stopCLI()
	w.stopAll(ws...)
	w.halt()
	w.check()
	w.verify("at the end")
	acked, _, _ := w.led.snapshot()
	for _, who := range []string{"pg1", "pg2"} {
		if acked[who] < 10 {
			t.Errorf("writer %s: %d commits acknowledged, want at least 10", who, acked[who])
		}
	}
	w.need("pagoda CLI runs", 9)
	w.need("pagoda driven reads", 20)
	w.check()
	t.Log(w.summary())
}

// scanAccounts runs `pagoda scan FILE acct`: every account, adding up to
// the total.
func scanAccounts(bin, path string) error {
	out, err := exec.Command(bin, "scan", path, "acct").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pagoda scan acct: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var sum int64
	for _, l := range lines {
		v, err := parseInts(l, 2)
		if err != nil {
			return fmt.Errorf("pagoda scan acct: %v", err)
		}
		sum += v[1]
	}
	if len(lines) != accounts || sum != total {
		return fmt.Errorf("pagoda scan acct: %d accounts adding up to %d, want %d adding up to %d", len(lines), sum, accounts, total)
	}
	return nil
}

// scanMeta runs `pagoda scan FILE meta`: the seq, at least that of every
// commit acknowledged before it started.
func (w *world) scanMeta(bin string) error {
	seq0 := w.led.seq()
	out, err := exec.Command(bin, "scan", w.path, "meta").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pagoda scan meta: %v\n%s", err, out)
	}
	v, err := parseInts(strings.TrimSpace(string(out)), 2)
	if err != nil {
		return fmt.Errorf("pagoda scan meta: %v", err)
	}
	if v[1] < seq0 {
		return fmt.Errorf("pagoda scan meta: seq %d, seq %d was acknowledged before it started", v[1], seq0)
	}
	return nil
}

// TestPagodaScansWhileWALRestarts: a pagoda writer starts the WAL over
// again and again (a commit, then Checkpoint(Restart), so that the next
// commit restarts it) while `pagoda scan` processes open the file one
// after another: every scan reads the whole bank. A restart writes the
// WAL's new header before the wal-index's; a connection that opens in
// between must not take the old salts in the index for a corrupt WAL.
func TestPagodaScansWhileWALRestarts(t *testing.T) {
	path := newBank(t)
	w := newWorld(t, path)
	bin := pagodaCLI(t)
	pw := pagodaChild(t, "pagoda writer", "writer", path, "who=pg", "driven=1", "timeout=2000", seedArg(t, "pg"))
	if _, err := pw.expect("ready", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	stopCLI := w.cliLoop("pagoda scans", func(int) error { return w.scanMeta(bin) })
	restarts := 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && !w.failed(); {
		salts := walSalts(t, path)
		if err := w.commit(pw, 1); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(salts, walSalts(t, path)) {
			restarts++
		}
		if _, _, err := checkpointBy(pw, pagoda.CheckpointRestart); err != nil {
			t.Fatal(err)
		}
	}
	stopCLI()
	w.stopAll(pw)
	w.led.finished("pg")
	w.halt()
	w.check()
	if restarts < 10 {
		t.Errorf("the WAL started over %d times, want at least 10", restarts)
	}
	w.need("pagoda scans", 20)
	w.verify("at the end")
	w.check()
	t.Logf("%d restarts, %s", restarts, w.summary())
}

// TestPagodaScansWhileWALTruncates: a pagoda writer fills the WAL (20
// commits) and cuts it to 0 bytes (Checkpoint(Truncate)), again and
// again, while `pagoda scan` processes open the file one after another:
// every scan reads the bank. A connection maps the WAL; one that opens
// while another cuts it must not read past the file's new end.
func TestPagodaScansWhileWALTruncates(t *testing.T) {
	path := newBank(t)
	w := newWorld(t, path)
	bin := pagodaCLI(t)
	pw := pagodaChild(t, "pagoda writer", "writer", path, "who=pg", "driven=1", "timeout=2000", "pad=6000", seedArg(t, "pg"))
	if _, err := pw.expect("ready", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	stopCLI := w.cliLoop("pagoda scans", func(int) error { return w.scanMeta(bin) })
	truncates := 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) && !w.failed(); {
		if err := w.commit(pw, 20); err != nil {
			t.Fatal(err)
		}
		left, busy, err := checkpointBy(pw, pagoda.CheckpointTruncate)
		if err != nil {
			t.Fatal(err)
		}
		if !busy && left == 0 && fileSize(path+"-wal") == 0 {
			truncates++
		}
	}
	stopCLI()
	w.stopAll(pw)
	w.led.finished("pg")
	w.halt()
	w.check()
	if truncates < 5 {
		t.Errorf("the WAL was cut %d times, want at least 5", truncates)
	}
	w.need("pagoda scans", 20)
	w.verify("at the end")
	w.check()
	t.Logf("%d truncates, %s", truncates, w.summary())
}

// cliLoop runs run(0), run(1), ... in a goroutine of its own, counting
// each under what, until the function it returns is called (which waits
// for the run in progress) or a run fails the world.
func (w *world) cliLoop(what string, run func(i int) error) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-quit:
				return
			default:
			}
			if err := run(i); err != nil {
				w.fail(err)
				return
			}
			w.count(what, 1)
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}
