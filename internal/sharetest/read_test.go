package sharetest

import (
	"testing"
	"time"
)

// TestSQLiteReadsPagodaWrites: a pagoda process makes transfers (its
// commits checkpoint every 40 frames, and now and then it checkpoints in a
// random mode, so the WAL restarts under the readers) while Python's
// sqlite3 and the sqlite3 shell read, with a busy timeout of 2 s: every
// read sees a whole commit, never an older one than before, nor one older
// than the last acknowledged before it began, and none gets SQLITE_BUSY.
func TestSQLiteReadsPagodaWrites(t *testing.T) {
	path := newBank(t)
	w := newWorld(t, path)
	sqlite3Path(t)
	pw := pagodaChild(t, "pagoda writer", "writer", path, "who=pg", "cpages=40", "ckpt=30", "timeout=1000", "pad=6000", seedArg(t, "pg"))
	w.watch(pw, "pg", "pagoda writer")
	var readers []*proc
	if _, err := lookPython(); err == nil {
		for _, hold := range []string{"0", "5"} {
			p := pythonChild(t, "python reader "+hold, "reader", path, "timeout=2000", "hold="+hold)
			w.watch(p, "", "python")
			readers = append(readers, p)
		}
	} else {
		t.Log("no python3 with sqlite3: the sqlite3 shell reads alone")
	}
	w.shellReader("sqlite3 reader")
	w.run(3 * time.Second)
	w.stopAll(pw)
	w.stopAll(readers...)
	w.halt()
	w.check()
	w.verify("at the end")
	w.check()
	w.count("commits", w.led.commitCount())
	w.need("commits", 50)
	w.need("sqlite3 shell reads", 20)
	if len(readers) > 0 {
		w.need("python reads", 50)
	}
	w.check()
	t.Log(w.summary())
}

// TestPagodaReadsSQLiteWrites: SQLite processes write (Python's sqlite3,
// with wal_autocheckpoint at 40 pages and now and then a checkpoint of a
// random mode, and the sqlite3 shell) while a Python sidecar runs
// wal_checkpoint(PASSIVE) and (TRUNCATE) every 100 ms, so the WAL is
// copied and started over under pagoda's readers: pagoda processes read,
// each transaction held 0 or 5 ms, and every read sees a whole commit,
// never an older one than before; a driven reader's every read sees each
// commit acknowledged before it began.
func TestPagodaReadsSQLiteWrites(t *testing.T) {
	path := newBank(t)
	w := newWorld(t, path)
	sqlite3Path(t)
	pythonPath(t)
	py := pythonChild(t, "python writer", "writer", path, "who=py", "timeout=2000", "pad=6000", "ckpt=40", "autockpt=40", seedArg(t, "py"))
	w.watch(py, "py", "python writer")
	// Its busy timeout is short: beside pagoda readers that read without
	// pause its TRUNCATE waits it out (TestSQLiteCheckpointWhilePagodaReadsOn).
	ck := pythonChild(t, "python checkpointer", "ckpt", path, "every=100", "timeout=500")
	w.watch(ck, "", "python")
	w.shellWriter("sh", 3000)
	ps := []*proc{py, ck}
	for _, hold := range []string{"0", "5"} {
		p := pagodaChild(t, "pagoda reader "+hold, "reader", path, "timeout=2000", "hold="+hold)
		w.watch(p, "", "pagoda")
		ps = append(ps, p)
	}
	w.readAlong(pagodaChild(t, "pagoda driven reader", "reader", path, "driven=1"), "pagoda driven reads")
	w.run(3 * time.Second)
	w.stopAll(ps...)
	w.halt()
	w.check()
	w.verify("at the end")
	w.count("commits", w.led.commitCount())
	w.need("commits", 50)
	w.need("pagoda reads", 50)
	w.need("pagoda driven reads", 20)
	w.need("python checkpoints", 3)
	w.check()
	t.Log(w.summary())
}
