package sharetest

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// zeroFile writes zeros over the whole file at path, in place: its size
// stays, so that no process that maps it reads past its end.
func zeroFile(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err == nil {
		_, err = f.WriteAt(make([]byte, st.Size()), 0)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestShmLost: with every connection gone (killed in the middle of their
// work, so the WAL and the -shm stay), the -shm file is deleted, zeroed,
// or replaced by an older copy of itself; the first connection to open the
// file, pagoda's or sqlite3's, rebuilds the wal-index from the WAL: every
// acknowledged commit is there, integrity_check and DB.Check pass, and
// both sides commit after it.
func TestShmLost(t *testing.T) {
	sqlite3Path(t)
	for _, damage := range []string{"deleted", "zeroed", "stale"} {
		for _, first := range []string{"pagoda", "sqlite3"} {
			t.Run(damage+"/"+first+" first", func(t *testing.T) {
				shmLost(t, damage, first)
			})
		}
	}
}

func shmLost(t *testing.T, damage, first string) {
	path := newBank(t)
	w := newWorld(t, path)
	pw := pagodaChild(t, "pagoda writer", "writer", path, "who=pg", "driven=1", "cpages=-1", "pad=3000", seedArg(t, "pg"))
	if _, err := pw.expect("ready", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	sh := sqliteShell(t, "sqlite3 writer", path, 5*time.Second)
	r := newRand(t, "sh")
	n := int64(0)
	shellCommits := func(k int) {
		t.Helper()
		for range k {
			n++
			seq, err := shellTransfer(sh, "sh", n, r, 3000)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.led.ack(fmt.Sprintf("ack sh %d %d", n, seq)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.commit(pw, 5); err != nil {
		t.Fatal(err)
	}
	shellCommits(3)
	stale, err := os.ReadFile(path + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.commit(pw, 5); err != nil {
		t.Fatal(err)
	}
	shellCommits(3)
	pw.kill()
	sh.kill()
	w.led.finished("pg")
	w.led.finished("sh")
	if fileSize(path+"-wal") <= 0 || fileSize(path+"-shm") <= 0 {
		t.Fatalf("killed, the writers left a WAL of %d bytes and a -shm of %d", fileSize(path+"-wal"), fileSize(path+"-shm"))
	}
	switch damage {
	case "deleted":
		err = os.Remove(path + "-shm")
	case "zeroed":
		zeroFile(t, path+"-shm")
	case "stale":
		err = os.WriteFile(path+"-shm", stale, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	acked, done, seq := w.led.snapshot()
	var steps []func() error
	pagodaFirst := func() error {
		s, logs, err := pagodaVerify(t, path)
		if err == nil {
			err = verify(s, logs, acked, done, seq)
		}
		return err
	}
	sqliteFirst := func() error {
		s, logs, err := sqliteVerify(t, path)
		if err == nil {
			err = verify(s, logs, acked, done, seq)
		}
		return err
	}
	if first == "pagoda" {
		steps = append(steps, pagodaFirst, sqliteFirst)
	} else {
		steps = append(steps, sqliteFirst, pagodaFirst)
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("-shm %s, read first by %s: %v", damage, first, err)
		}
	}
	// Both sides commit after it.
	pw = pagodaChild(t, "pagoda writer 2", "writer", path, "who=pg2", "driven=1", "pad=3000", seedArg(t, "pg2"))
	if _, err := pw.expect("ready", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	sh = sqliteShell(t, "sqlite3 writer 2", path, 5*time.Second)
	for range 3 {
		if err := w.commit(pw, 2); err != nil {
			t.Fatal(err)
		}
		seq, err := shellTransfer(sh, "sh2", int64(w.led.ackedBy("sh2")+1), r, 3000)
		if err == nil {
			err = w.led.ack(fmt.Sprintf("ack sh2 %d %d", w.led.ackedBy("sh2")+1, seq))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := sh.stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	w.stopAll(pw)
	w.led.finished("pg2")
	w.led.finished("sh2")
	w.halt()
	w.verify("at the end")
	w.check()
}

// TestShmZeroedWhileOpen: pagoda processes (a writer, a reader), a sqlite3
// shell and a Python sqlite3 writer keep the file open while, between
// their transactions, the -shm file is zeroed in place (sqlite3 tolerates
// that: a zero header is not valid, and the next transaction rebuilds the
// index from the WAL; deleting the file while connections map it is not
// tolerated by sqlite3 either, since a new connection would make another).
// Each side's next transaction reads every acknowledged commit, and
// commits after it, round after round; at the end integrity_check and
// DB.Check pass.
func TestShmZeroedWhileOpen(t *testing.T) {
	path := newBank(t)
	w := newWorld(t, path)
	sqlite3Path(t)
	pw := pagodaChild(t, "pagoda writer", "writer", path, "who=pg", "driven=1", "cpages=-1", "pad=3000", seedArg(t, "pg"))
	pr := pagodaChild(t, "pagoda reader", "reader", path, "driven=1")
	ps := []*proc{pw, pr}
	var py *proc
	if _, err := lookPython(); err == nil {
		py = pythonChild(t, "python writer", "writer", path, "who=py", "driven=1", "timeout=5000", "pad=3000", seedArg(t, "py"))
		ps = append(ps, py)
	} else {
		t.Log(err)
	}
	for _, p := range ps {
		if _, err := p.expect("ready", 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	sh := sqliteShell(t, "sqlite3 shell", path, 5*time.Second)
	r := newRand(t, "sh")
	n := int64(0)
	commitAll := func() {
		t.Helper()
		if err := w.commit(pw, 3); err != nil {
			t.Fatal(err)
		}
		if py != nil {
			if err := w.commit(py, 2); err != nil {
				t.Fatal(err)
			}
		}
		n++
		seq, err := shellTransfer(sh, "sh", n, r, 3000)
		if err == nil {
			err = w.led.ack(fmt.Sprintf("ack sh %d %d", n, seq))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	readAll := func(round int) {
		t.Helper()
		if _, err := w.readLatest(pr); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		seq0 := w.led.seq()
		s, err := parseState(mustLines(t, sh, bankQuery+";"))
		if err == nil {
			err = s.check()
		}
		if err == nil && s.seq < seq0 {
			err = fmt.Errorf("seq %d, %d was acknowledged", s.seq, seq0)
		}
		if err != nil {
			t.Fatalf("round %d: the shell: %v", round, err)
		}
	}
	for round := range 4 {
		commitAll()
		readAll(round)
		if round%2 == 1 {
			time.Sleep(100 * time.Millisecond) // pagoda's idle read slots go
		}
		zeroFile(t, path+"-shm")
		// Readers first in even rounds, writers first in odd ones.
		if round%2 == 0 {
			readAll(round)
			commitAll()
		} else {
			commitAll()
			readAll(round)
		}
	}
	if err := sh.stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	w.stopAll(ps...)
	for _, who := range []string{"pg", "py", "sh"} {
		w.led.finished(who)
	}
	w.halt()
	w.verify("at the end")
	w.check()
}

// mustLines runs sql in shell sh and returns its lines, or fails the test.
func mustLines(t *testing.T, sh *shell, sql string) []string {
	t.Helper()
	lines, err := sh.query(sql, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}
