package command

import (
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/bench"
)

// TestBench runs pagoda bench on a tiny table with tiny measurements and
// checks that the table has one row per workload and peer.
func TestBench(t *testing.T) {
	dir := t.TempDir()
	out, stderr, err := run(t, "bench", "--quick", "--rows", "2000", "--benchtime", "2ms", "--dir", dir)
	if err != nil {
		t.Fatalf("pagoda bench: %v\nstderr:\n%s", err, stderr)
	}
	for _, w := range bench.Workloads {
		for _, peer := range bench.PeerNames {
			if !hasBenchRow(out, w.Name, peer) {
				t.Errorf("no row for %s/%s in:\n%s", w.Name, peer, out)
			}
		}
	}
	for _, want := range []string{"ns/op", "allocs/op", "pagoda speed-up", "targets:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "measuring pagoda") || !strings.Contains(stderr, "fixture: built in") {
		t.Errorf("stderr lacks progress lines:\n%s", stderr)
	}

	// A second run reuses the cached files; --peers selects peers.
	out, stderr, err = run(t, "bench", "--quick", "--rows", "2000", "--benchtime", "2ms", "--dir", dir, "--peers", "pagoda,bbolt")
	if err != nil {
		t.Fatalf("pagoda bench --peers pagoda,bbolt: %v\nstderr:\n%s", err, stderr)
	}
	if !strings.Contains(out, "(cached)") || hasBenchRow(out, "lookup", "mattn") || !hasBenchRow(out, "lookup", "bbolt") {
		t.Errorf("second run: want the cached fixture and no mattn row:\n%s", out)
	}

	for _, args := range [][]string{
		{"bench", "--peers", "pagoda,nope", "--dir", dir},
		{"bench", "--peers", ",", "--dir", dir},
		{"bench", "--rows", "0", "--dir", dir},
		{"bench", "extra-arg"},
	} {
		if out, _, err := run(t, args...); err == nil || out != "" {
			t.Errorf("pagoda %s: err %v, stdout %q; want an error and no output", strings.Join(args, " "), err, out)
		}
	}
}

// hasBenchRow reports whether the bench table has a row for workload and
// peer.
func hasBenchRow(out, workload, peer string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[0] == workload && f[1] == peer {
			return true
		}
	}
	return false
}
