package sharetest

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// member is a child that the test kills with SIGKILL and starts again:
// start makes incarnation inc, and names its writer ("" for others).
type member struct {
	name, kind string
	start      func(inc int) (p *proc, who string)

	inc  int
	p    *proc
	who  string
	done <-chan struct{} // the watcher of p has read every line
}

// member starts a child the test may kill; kind names its counters.
func (w *world) member(name, kind string, start func(inc int) (*proc, string)) *member {
	m := &member{name: name, kind: kind, start: start}
	w.restart(m)
	return m
}

// restart starts m's next incarnation.
func (w *world) restart(m *member) {
	m.inc++
	m.p, m.who = m.start(m.inc)
	m.done = w.watch(m.p, m.who, m.kind)
}

// kill sends SIGKILL to m's process, whatever it is doing, and waits
// until every line it printed has been taken into account: a writer's
// acknowledgements are in the ledger, and the ledger knows it is gone.
func (m *member) kill() {
	m.p.kill()
	<-m.done
}

// pagodaWriter is a member that runs pagoda writer processes as writers
// prefix.1, prefix.2, ..., each with args.
func (w *world) pagodaWriter(prefix string, args ...string) *member {
	return w.member("pagoda writer "+prefix, "pagoda writer", func(inc int) (*proc, string) {
		who := prefix + "." + strconv.Itoa(inc)
		a := append([]string{"who=" + who, seedArg(w.t, who)}, args...)
		return pagodaChild(w.t, "pagoda writer "+who, "writer", w.path, a...), who
	})
}

// pythonWriter is a member that runs Python's sqlite3 writer processes as
// writers prefix.1, prefix.2, ..., each with args.
func (w *world) pythonWriter(prefix string, args ...string) *member {
	return w.member("python writer "+prefix, "python writer", func(inc int) (*proc, string) {
		who := prefix + "." + strconv.Itoa(inc)
		a := append([]string{"who=" + who, seedArg(w.t, who)}, args...)
		return pythonChild(w.t, "python writer "+who, "writer", w.path, a...), who
	})
}

// TestKillWriters: a pagoda writer, a Python sqlite3 writer and a sqlite3
// shell writer make transfers on one file (with checkpoints of every mode
// from both sides), pagoda, Python and shell readers read, and one writer
// after the other, of each kind twice, is killed with SIGKILL in the
// middle of its commits and started again. After every kill, in fresh
// processes, integrity_check and DB.Check pass and every acknowledged
// commit is there, the killed writer's with at most the one it was making
// when it died after them; the survivors go on without an error (no
// SQLITE_PROTOCOL, no corruption, no busy reader) and keep committing.
func TestKillWriters(t *testing.T) {
	path := newBank(t)
	w := newWorld(t, path)
	sqlite3Path(t)
	pythonPath(t)
	r := newRand(t, "kills")
	pg := w.pagodaWriter("pg", "cpages=50", "ckpt=20", "timeout=2000", "pad=6000")
	py := w.pythonWriter("py", "timeout=5000", "ckpt=20", "autockpt=50", "pad=6000")
	sh := w.shellWriter("sh", 6000)
	readers := []*proc{
		pagodaChild(t, "pagoda reader", "reader", path, "timeout=2000"),
		pythonChild(t, "python reader", "reader", path, "timeout=2000", "hold=2"),
	}
	w.watch(readers[0], "", "pagoda")
	w.watch(readers[1], "", "python")
	w.shellReader("sqlite3 reader")
	w.run(500 * time.Millisecond)
	kills := 0
	for round := 0; round < 2 && !w.failed(); round++ {
		for _, kind := range []string{"pagoda", "python", "sqlite3 shell"} {
			w.run(time.Duration(150+r.IntN(450)) * time.Millisecond)
			if w.failed() {
				break
			}
			before := w.led.commitCount()
			var who string
			switch kind {
			case "pagoda":
				who = pg.who
				pg.kill()
				w.restart(pg)
			case "python":
				who = py.who
				py.kill()
				w.restart(py)
			default:
				var err error
				if who, err = sh.kill(); err != nil {
					t.Fatal(err)
				}
			}
			kills++
			w.verify(fmt.Sprintf("after killing %s writer %s", kind, who))
			// The survivors, and the new incarnation, go on.
			for deadline := time.Now().Add(20 * time.Second); w.led.commitCount() < before+5 && !w.failed(); {
				if time.Now().After(deadline) {
					w.fail(fmt.Errorf("after killing %s writer %s: %d commits in 20 s", kind, who, w.led.commitCount()-before))
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	w.check()
	w.run(300 * time.Millisecond)
	w.stopAll(pg.p, py.p)
	w.stopAll(readers...)
	w.halt()
	w.check()
	w.verify("at the end")
	w.count("kills", kills)
	w.count("commits", w.led.commitCount())
	w.need("kills", 6)
	w.need("pagoda reads", 20)
	w.need("python reads", 20)
	w.need("sqlite3 shell reads", 5)
	w.check()
	t.Log(w.summary())
}
