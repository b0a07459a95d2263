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
	w.count("commits", w.led.commits)
	w.need("commits", 50)
	w.need("sqlite3 shell reads", 20)
	if len(readers) > 0 {
		w.need("python reads", 50)
	}
	w.check()
	t.Log(w.summary())
}
