package sharetest

import (
	"testing"
	"time"
)

// TestSQLiteAndPagodaWrite: pagoda processes and SQLite processes (the
// sqlite3 shell, Python's sqlite3) make transfers on one file at once, all
// in BEGIN IMMEDIATE or Begin(true) transactions. The driven writers (a
// pagoda child told when to commit, the shell) check that each commit sees
// every commit acknowledged before it began, whichever side made it; the
// others go as fast as they can. At the end every acknowledged commit of
// either side is in the file, each writer's without a gap, and
// integrity_check and DB.Check pass.
func TestSQLiteAndPagodaWrite(t *testing.T) {
	path := newBank(t)
	w := newWorld(t, path)
	sqlite3Path(t)
	driven := pagodaChild(t, "pagoda driven", "writer", path, "who=pgd", "driven=1", "pad=3000", seedArg(t, "pgd"))
	w.drive(driven, "pgd")
	// A writer that begins again the moment it commits leaves sqlite3's
	// busy handler, which polls, no moment to take the write lock (as a
	// sqlite3 writer in such a loop does): 1 ms between commits.
	free := pagodaChild(t, "pagoda writer", "writer", path, "who=pg", "cpages=100", "pad=3000", "sleep=1000", seedArg(t, "pg"))
	w.watch(free, "pg", "pagoda writer")
	w.shellWriter("sh", 3000)
	ps := []*proc{free}
	if _, err := lookPython(); err == nil {
		py := pythonChild(t, "python writer", "writer", path, "who=py", "timeout=10000", "pad=3000", "autockpt=100", seedArg(t, "py"))
		w.watch(py, "py", "python writer")
		pr := pythonChild(t, "python reader", "reader", path, "timeout=2000")
		w.watch(pr, "", "python")
		ps = append(ps, py, pr)
	} else {
		t.Log(err)
	}
	pr := pagodaChild(t, "pagoda reader", "reader", path, "timeout=2000")
	w.watch(pr, "", "pagoda")
	ps = append(ps, pr)
	w.run(3 * time.Second)
	w.stopAll(ps...)
	w.halt() // the driven writers, then the watchers
	w.check()
	w.verify("at the end")
	acked, _, _ := w.led.snapshot()
	for _, who := range []string{"pgd", "pg", "sh.1"} {
		if acked[who] < 10 {
			t.Errorf("writer %s: %d commits acknowledged, want at least 10", who, acked[who])
		}
	}
	w.count("commits", w.led.commitCount())
	w.need("pagoda reads", 20)
	w.check()
	t.Log(w.summary())
}
