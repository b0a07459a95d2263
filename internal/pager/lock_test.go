package pager

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// ofdLocks says whether two pagers of one process exclude each other
// (Linux's open-file-description locks; POSIX locks elsewhere do not).
var ofdLocks = runtime.GOOS == "linux"

func requireOFD(t *testing.T) {
	t.Helper()
	if !ofdLocks {
		t.Skip("pagers of one process exclude each other only with Linux's OFD locks")
	}
}

func mustOpen(t *testing.T, path string, opts Options) *Pager {
	t.Helper()
	p, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLockTwoWriters: a second writable pager waits Timeout for the first
// and then fails with ErrLocked; once the first closes, it opens.
func TestLockTwoWriters(t *testing.T) {
	requireOFD(t)
	path := filepath.Join(t.TempDir(), "w.db")
	p := mustOpen(t, path, Options{Exclusive: true})
	setUserVersion(t, p, 1)
	for _, timeout := range []time.Duration{0, 200 * time.Millisecond} {
		start := time.Now()
		q, err := Open(path, Options{Exclusive: true, Timeout: timeout})
		took := time.Since(start)
		if !errors.Is(err, ErrLocked) {
			if q != nil {
				q.Close()
			}
			t.Fatalf("second writer with timeout %v: %v, want ErrLocked", timeout, err)
		}
		if took < timeout || took > timeout+2*time.Second {
			t.Errorf("timeout %v: gave up after %v", timeout, took)
		}
		t.Logf("timeout %v: %v after %v", timeout, err, took)
	}
	// The failed attempts left the file as it was.
	if got := query(t, path, "PRAGMA user_version"); got != "1" {
		t.Fatalf("user_version = %s", got)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	q := mustOpen(t, path, Options{Exclusive: true})
	defer q.Close()
	setUserVersion(t, q, 2)
}

// TestLockWaits: an Open with a timeout gets the lock when the holder lets
// go within it.
func TestLockWaits(t *testing.T) {
	requireOFD(t)
	path := filepath.Join(t.TempDir(), "w.db")
	p := mustOpen(t, path, Options{Exclusive: true})
	go func() {
		time.Sleep(100 * time.Millisecond)
		p.Close()
	}()
	q, err := Open(path, Options{Exclusive: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
}

// TestLockReadersAndWriter: read-only pagers share the file and keep a
// writer out; a writer keeps them out.
func TestLockReadersAndWriter(t *testing.T) {
	requireOFD(t)
	path := makeDB(t, "CREATE TABLE t(a)")
	r1 := mustOpen(t, path, Options{Exclusive: true, ReadOnly: true})
	r2 := mustOpen(t, path, Options{Exclusive: true, ReadOnly: true})
	if _, err := Open(path, Options{Exclusive: true}); !errors.Is(err, ErrLocked) {
		t.Fatalf("writer beside readers: %v, want ErrLocked", err)
	}
	r1.Close()
	if _, err := Open(path, Options{Exclusive: true}); !errors.Is(err, ErrLocked) {
		t.Fatalf("writer beside a reader: %v, want ErrLocked", err)
	}
	r2.Close()
	w := mustOpen(t, path, Options{Exclusive: true})
	if _, err := Open(path, Options{Exclusive: true, ReadOnly: true}); !errors.Is(err, ErrLocked) {
		t.Fatalf("reader beside a writer: %v, want ErrLocked", err)
	}
	w.Close()
	mustOpen(t, path, Options{Exclusive: true, ReadOnly: true}).Close()
}

// TestLockReleasedOnFailedOpen: an Open that fails after locking (here on
// a corrupt header) lets the lock go.
func TestLockReleasedOnFailedOpen(t *testing.T) {
	requireOFD(t)
	good := makeDB(t, "CREATE TABLE t(a)")
	bad := mutate(t, good, func(b []byte) []byte { b[0] = 'X'; return b })
	if _, err := Open(bad, Options{Exclusive: true}); err == nil {
		t.Fatal("opened a corrupt file")
	}
	if err := os.WriteFile(bad, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, bad, Options{Exclusive: true}).Close()
}

func sqlite3CLI(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("the sqlite3 command-line shell is not installed: the test against a separate sqlite3 process is skipped")
	}
	return bin
}

// runSQLite runs the sqlite3 shell on path with sql and returns what it
// printed (stdout and stderr) and whether it succeeded.
func runSQLite(t *testing.T, bin, path, sql string) (string, bool) {
	t.Helper()
	out, err := exec.Command(bin, path, sql).CombinedOutput()
	return string(out), err == nil
}

// TestLockAgainstSQLite3: while pagoda writes a file a sqlite3 process can
// neither read nor write it, and the file is untouched; after Close it
// works normally.
func TestLockAgainstSQLite3(t *testing.T) {
	bin := sqlite3CLI(t)
	path := filepath.Join(t.TempDir(), "p.db")
	p := mustOpen(t, path, Options{Exclusive: true})
	setUserVersion(t, p, 7)
	before := snapshotCopy(t, path)
	for _, sql := range []string{
		"SELECT count(*) FROM sqlite_schema",
		"PRAGMA user_version",
		"CREATE TABLE x(a)",
		"PRAGMA user_version=9",
	} {
		out, ok := runSQLite(t, bin, path, sql)
		if ok || !strings.Contains(out, "database is locked") {
			t.Errorf("sqlite3 %q while pagoda writes: ok=%v, %q; want \"database is locked\"", sql, ok, out)
		}
	}
	// The WAL and the file are as pagoda left them.
	for _, suffix := range []string{"", "-wal"} {
		a, _ := os.ReadFile(before + suffix)
		b, _ := os.ReadFile(path + suffix)
		if string(a) != string(b) {
			t.Errorf("file%s changed while sqlite3 was locked out", suffix)
		}
	}
	if _, err := os.Stat(path + "-shm"); err == nil {
		t.Logf("sqlite3 left a -shm file")
	}
	setUserVersion(t, p, 8) // pagoda goes on writing
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for sql, want := range map[string]string{
		"PRAGMA user_version":    "8",
		"PRAGMA integrity_check": "ok",
	} {
		if out, ok := runSQLite(t, bin, path, sql); !ok || strings.TrimSpace(out) != want {
			t.Errorf("sqlite3 %q after Close: ok=%v %q, want %q", sql, ok, out, want)
		}
	}
	if out, ok := runSQLite(t, bin, path, "CREATE TABLE x(a); INSERT INTO x VALUES(1); SELECT count(*) FROM x;"); !ok || strings.TrimSpace(out) != "1" {
		t.Errorf("sqlite3 write after Close: ok=%v %q", ok, out)
	}
}

// holdWithSQLite3 starts a sqlite3 shell on path that runs sql and then
// waits, holding its locks, until the returned function is called.
func holdWithSQLite3(t *testing.T, bin, path, sql string) (release func()) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command(bin, path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The shell creates the marker once sql has run: its locks are held.
	if _, err := io.WriteString(stdin, sql+"\n.shell touch '"+marker+"'\n"); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if done {
			return
		}
		done = true
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("sqlite3: %v: %s", err, out.String())
		}
	}
	t.Cleanup(release)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			return release
		}
		if time.Now().After(deadline) {
			t.Fatalf("sqlite3 did not get ready: %s", out.String())
		}
	}
}

// TestSQLite3LocksPagodaOut: while a sqlite3 process holds the file, Open
// fails with ErrLocked.
func TestSQLite3LocksPagodaOut(t *testing.T) {
	bin := sqlite3CLI(t)
	t.Run("rollback journal, BEGIN EXCLUSIVE", func(t *testing.T) {
		path := makeDB(t, "CREATE TABLE t(a)")
		release := holdWithSQLite3(t, bin, path, "BEGIN EXCLUSIVE; INSERT INTO t VALUES(1);")
		for _, ro := range []bool{false, true} {
			if _, err := Open(path, Options{Exclusive: true, ReadOnly: ro, Timeout: 50 * time.Millisecond}); !errors.Is(err, ErrLocked) {
				t.Fatalf("Open (read-only %v) beside sqlite3's EXCLUSIVE: %v, want ErrLocked", ro, err)
			}
		}
		release()
		p := mustOpen(t, path, Options{Exclusive: true})
		defer p.Close()
		setUserVersion(t, p, 3)
	})
	t.Run("WAL, reading", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "w.db")
		p := mustOpen(t, path, Options{Exclusive: true})
		setUserVersion(t, p, 1)
		p.Close()
		// sqlite3 in WAL mode holds SHARED on the database file for as
		// long as it has it open, once it has read it.
		release := holdWithSQLite3(t, bin, path, "SELECT count(*) FROM sqlite_schema;")
		if _, err := Open(path, Options{Exclusive: true}); !errors.Is(err, ErrLocked) {
			t.Fatalf("writable Open beside a sqlite3 reader: %v, want ErrLocked", err)
		}
		// A read-only pager shares the file with it.
		r := mustOpen(t, path, Options{Exclusive: true, ReadOnly: true})
		r.Close()
		release()
		mustOpen(t, path, Options{Exclusive: true}).Close()
	})
}

// TestLockAgainstModernc: what happens between pagoda's OFD locks and the
// POSIX locks that modernc.org/sqlite takes in the same process: they
// conflict as between two processes.
func TestLockAgainstModernc(t *testing.T) {
	requireOFD(t)
	path := filepath.Join(t.TempDir(), "m.db")
	p := mustOpen(t, path, Options{Exclusive: true})
	setUserVersion(t, p, 5)
	db := sqltest.Open(t, path)
	var n int
	err := db.QueryRow("SELECT count(*) FROM sqlite_schema").Scan(&n)
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("modernc.org/sqlite reading a file pagoda writes: %v, want \"database is locked\"", err)
	}
	if _, err := db.Exec("CREATE TABLE x(a)"); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("modernc.org/sqlite writing a file pagoda writes: %v, want \"database is locked\"", err)
	}
	p.Close()
	var uv string
	if err := db.QueryRow("PRAGMA user_version").Scan(&uv); err != nil || uv != "5" {
		t.Fatalf("modernc after Close: %v %s", err, uv)
	}
	// Now modernc holds SHARED (WAL mode, connection open): pagoda cannot
	// write.
	if _, err := Open(path, Options{Exclusive: true}); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open beside a modernc connection: %v, want ErrLocked", err)
	}
	db.Close()
	mustOpen(t, path, Options{Exclusive: true}).Close()
}
