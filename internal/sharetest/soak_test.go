package sharetest

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// soakConfig is the soak's length and its number of writers of each kind:
// PAGODA_SHARE_SOAK (a duration) and PAGODA_SHARE_PROCS, else a short run
// for every `go test`.
func soakConfig(t *testing.T) (d time.Duration, procs int) {
	d, procs = 12*time.Second, 2
	if s := os.Getenv("PAGODA_SHARE_SOAK"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatalf("PAGODA_SHARE_SOAK=%s: %v", s, err)
		}
	}
	if s := os.Getenv("PAGODA_SHARE_PROCS"); s != "" {
		var err error
		if procs, err = strconv.Atoi(s); err != nil || procs < 1 {
			t.Fatalf("PAGODA_SHARE_PROCS=%s: want a positive number", s)
		}
	}
	return d, procs
}

// TestSoak: pagoda writer processes and Python sqlite3 (C SQLite) writer
// processes, procs of each, make transfers on one file, with checkpoints
// of every mode from both sides; pagoda, Python and sqlite3 shell readers
// check the total on every snapshot; a Python sidecar runs
// wal_checkpoint(PASSIVE) and (TRUNCATE) in turn every 1.5 s; and every
// 2 s a random process (a writer, a reader or the sidecar) is killed with
// SIGKILL and started again. No invariant breaks, no process reports an
// error (SQLITE_PROTOCOL, corruption, a busy reader), and after every
// kill, in fresh processes, integrity_check and DB.Check pass and every
// acknowledged commit is there. Every `go test` runs it for 12 s with 2+2
// writers; the full version:
//
//	PAGODA_SHARE_SOAK=3m PAGODA_SHARE_PROCS=4 go test ./internal/sharetest -run Soak -v -timeout 30m
func TestSoak(t *testing.T) {
	d, procs := soakConfig(t)
	path := newBank(t)
	w := newWorld(t, path)
	sqlite3Path(t)
	pythonPath(t)
	r := newRand(t, "kills")
	var ms []*member
	for i := 1; i <= procs; i++ {
		ms = append(ms,
			w.pagodaWriter(fmt.Sprintf("pg%d", i), "cpages=100", "ckpt=10", "timeout=2000", "pad=4000"),
			w.pythonWriter(fmt.Sprintf("py%d", i), "timeout=2000", "ckpt=10", "autockpt=100", "pad=4000"))
	}
	readers := max(1, procs/2)
	for i := 1; i <= readers; i++ {
		hold := strconv.Itoa(i % 3 * 2) // 0, 2, 4 ms
		ms = append(ms,
			w.member(fmt.Sprintf("pagoda reader %d", i), "pagoda", func(inc int) (*proc, string) {
				return pagodaChild(t, fmt.Sprintf("pagoda reader %d.%d", i, inc), "reader", path, "timeout=2000", "hold="+hold), ""
			}),
			w.member(fmt.Sprintf("python reader %d", i), "python", func(inc int) (*proc, string) {
				return pythonChild(t, fmt.Sprintf("python reader %d.%d", i, inc), "reader", path, "timeout=2000", "hold="+hold), ""
			}))
	}
	ms = append(ms, w.member("checkpoint sidecar", "sidecar", func(inc int) (*proc, string) {
		return pythonChild(t, fmt.Sprintf("checkpoint sidecar %d", inc), "ckpt", path, "every=1500", "timeout=2000"), ""
	}))
	w.shellReader("sqlite3 reader")
	start := time.Now()
	kills := 0
	for next := start.Add(2 * time.Second); !next.After(start.Add(d)) && !w.failed(); next = next.Add(2 * time.Second) {
		w.run(time.Until(next)) // every 2 s, whatever the checks after a kill took
		if w.failed() {
			break
		}
		m := ms[r.IntN(len(ms))]
		who := m.who
		m.kill()
		w.restart(m)
		kills++
		w.count("killed "+m.kind, 1)
		what := m.name
		if who != "" {
			what += " (" + who + ")"
		}
		w.verify(fmt.Sprintf("after kill %d, of %s", kills, what))
		if testing.Verbose() {
			t.Logf("%5.1fs kill %d: %s; %d commits", time.Since(start).Seconds(), kills, what, w.led.commitCount())
		}
	}
	w.check()
	var ps []*proc
	for _, m := range ms {
		ps = append(ps, m.p)
	}
	w.stopAll(ps...)
	w.halt()
	w.check()
	w.verify("at the end")
	w.count("kills", kills)
	w.count("commits", w.led.commitCount())
	n := int(d / (2 * time.Second))
	w.need("kills", n-1)
	w.need("commits", 50*n)
	w.need("pagoda reads", 20*n)
	w.need("python reads", 20*n)
	w.need("sqlite3 shell reads", 5*n)
	acked, _, _ := w.led.snapshot()
	pg, py := 0, 0
	for who, a := range acked {
		switch who[:2] {
		case "pg":
			pg += int(a)
		case "py":
			py += int(a)
		}
	}
	if pg < 10*n || py < 10*n {
		t.Errorf("commits acknowledged: %d by pagoda writers, %d by Python writers; want at least %d each", pg, py, 10*n)
	}
	w.check()
	t.Logf("%v, %d+%d writers: %s", d, procs, procs, w.summary())
}
