package sharetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// litestreamPath returns the litestream command's path, on PATH or in
// $(go env GOPATH)/bin, or skips the test.
func litestreamPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("litestream"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "litestream")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	t.Skip("litestream is not installed, neither on PATH nor in $(go env GOPATH)/bin (.ci/run tries: go install github.com/benbjohnson/litestream/cmd/litestream@v0.5.18)")
	return ""
}

// bankDump returns every row of the bank's tables in the database at path,
// pads in hex, and the names in its schema, as the sqlite3 shell prints
// them.
func bankDump(t *testing.T, path string) string {
	t.Helper()
	return strings.Join(sqlite3Run(t, path, "SELECT type, name FROM sqlite_schema ORDER BY name; "+dumpQuery), "\n")
}

// TestLitestream: `litestream replicate` (a file replica, syncing every
// 100 ms) runs beside a pagoda writer process that commits for 3 s, and
// creates its own tables in the file meanwhile; the writer stops,
// litestream syncs its last commits and stops; `litestream restore` then
// makes a copy that equals the source row for row, holds every
// acknowledged commit, and passes integrity_check and DB.Check.
func TestLitestream(t *testing.T) {
	bin := litestreamPath(t)
	sqlite3Path(t)
	path := newBank(t)
	w := newWorld(t, path)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "litestream.yml")
	err := os.WriteFile(cfg, fmt.Appendf(nil, `dbs:
  - path: %s
    monitor-interval: 100ms
    replica:
      type: file
      path: %s
      sync-interval: 100ms
`, path, filepath.Join(dir, "replica")), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	ls := start(t, "litestream", exec.Command(bin, "replicate", "-config", cfg))
	for deadline := time.Now().Add(30 * time.Second); ; {
		line, ok := ls.next(time.Until(deadline))
		if !ok {
			t.Fatalf("litestream does not replicate\n%s", ls.tail())
		}
		if strings.Contains(line, `msg="replicating to"`) {
			break
		}
	}
	pw := pagodaChild(t, "pagoda writer", "writer", path, "who=pg", "cpages=200", "pad=3000", "sleep=2000", seedArg(t, "pg"))
	w.watch(pw, "pg", "pagoda writer")
	w.run(3 * time.Second)
	w.stopAll(pw)
	w.halt()
	w.check()
	seq := w.led.seq()
	if seq < 50 {
		t.Fatalf("the writer acknowledged %d commits beside litestream, want at least 50", seq)
	}
	// litestream's last syncs: restore until the copy holds the last commit.
	restore := func(out string) error {
		b, err := exec.Command(bin, "restore", "-config", cfg, "-o", out, path).CombinedOutput()
		if err != nil {
			return fmt.Errorf("litestream restore: %v\n%s", err, b)
		}
		return nil
	}
	for i := 0; ; i++ {
		out := filepath.Join(dir, fmt.Sprintf("poll%d.db", i))
		err := restore(out)
		var s bankState
		if err == nil {
			s, err = parseState(sqlite3Run(t, out, bankQuery+";"))
		}
		if err == nil && s.seq == seq {
			break
		}
		if i >= 100 {
			t.Fatalf("litestream's copy does not reach seq %d in 20 s: %v, %+v\n%s", seq, err, s, ls.tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := ls.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ls.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("litestream did not stop within 30 s of SIGINT\n%s", ls.tail())
	}
	for line := range ls.lines {
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("litestream: %s", line)
		}
	}
	copyPath := filepath.Join(dir, "copy.db")
	if err := restore(copyPath); err != nil {
		t.Fatal(err)
	}
	src, cp := bankDump(t, path), bankDump(t, copyPath)
	if src != cp {
		t.Fatalf("litestream's copy differs from the source:\n%s", firstDiff(src, cp))
	}
	if !strings.Contains(src, "table|_litestream_seq") {
		t.Errorf("no _litestream_seq table in the source: did litestream write to it?\n%.300s", src)
	}
	wc := newWorld(t, copyPath)
	wc.led = w.led
	wc.verify("litestream's copy")
	wc.check()
	w.verify("the source")
	w.check()
	t.Logf("%d commits replicated", seq)
}

// firstDiff describes the first line where a and b differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: source %.120q, copy %.120q (%d and %d lines)", i+1, x, y, len(la), len(lb))
		}
	}
	return "no line differs"
}
