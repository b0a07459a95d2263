package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/bench/internal/bench"
)

// smallBench are the arguments of a pagoda bench run on tiny sizes with
// tiny measurements.
var smallBench = []string{"--quick", "--rows", "2000", "--inserts", "1000", "--commits", "5", "--cache-keys", "300", "--memory-rows", "1500", "--memory-rand-rows", "1200", "--benchtime", "2ms",
	"--fs-files", "200", "--fs-blobs", "20", "--fs-src", ".", "--beside-rows", "2000", "--beside-time", "100ms",
	"--raft-stores", "10", "--raft-truncate", "3000", "--raft-applies", "10"}

// TestBench runs pagoda bench on tiny sizes and checks that the tables
// have one row per workload and peer, pebble's reads skipped.
func TestBench(t *testing.T) {
	dir := t.TempDir()
	out, stderr, err := run(t, append(smallBench, "--dir", dir)...)
	if err != nil {
		t.Fatalf("pagoda bench: %v\nstderr:\n%s", err, stderr)
	}
	for _, w := range bench.WorkloadNames() {
		if w == bench.CacheWorkload || w == bench.MemoryWorkload || w == bench.MemoryRandWorkload || w == bench.BesideWorkload || w == bench.RaftWorkload {
			continue
		}
		peers := bench.PeersOf(w, bench.PeerNames)
		if strings.HasPrefix(w, "fs-") {
			peers = bench.FSPeerNames
		}
		for _, peer := range peers {
			if !hasBenchRow(out, w, peer) {
				t.Errorf("no row for %s/%s in:\n%s", w, peer, out)
			}
		}
	}
	for _, peer := range bench.PeerNames {
		if !hasBenchRow(out, "300", peer) {
			t.Errorf("no cache row for %s in:\n%s", peer, out)
		}
		if !hasBenchRow(out, "1,500", peer) {
			t.Errorf("no memory row for %s in:\n%s", peer, out)
		}
		if !hasBenchRow(out, "1,200", peer) {
			t.Errorf("no memory-rand row for %s in:\n%s", peer, out)
		}
	}
	for _, w := range bench.RaftWorkloads {
		for _, peer := range bench.RaftPeersOf(w.Name) {
			if !hasBenchRow(out, w.Name, peer) {
				t.Errorf("no raft row for %s/%s in:\n%s", w.Name, peer, out)
			}
		}
	}
	for _, w := range bench.ModePeerWorkloads {
		if !hasBenchRow(out, w, "pagoda-exclusive") {
			t.Errorf("no row for %s/pagoda-exclusive in:\n%s", w, out)
		}
	}
	if !hasBenchRow(out, "lookup", "pebble") || hasBenchRow(out, "lookup", "pagoda-exclusive") {
		t.Errorf("want a lookup row for pebble (skipped) and none for pagoda-exclusive:\n%s", out)
	}
	for _, writer := range []string{"none", "pagoda", "mattn"} {
		if !hasBenchRow(out, writer, "-") && !hasBenchRow(out, writer, "shared") {
			t.Errorf("no beside row for writer %s in:\n%s", writer, out)
		}
	}
	for _, want := range []string{"ns/op", "allocs/op", "pagoda speed-up", "targets:", "skipped", "max RSS", "load-seq vs bbolt",
		"lookup-tx shared vs exclusive, interleaved 256 lookups at a time: ", "beside: a SQLite reader's reads/s beside pagoda over beside ", "(median of 3 rounds, ",
		"fs-walk/gen vs os", "archive/du", "median of 3 rounds [min-max], ratios paired round by round", "x (median of 3 rounds, ",
		"issue #32: raft-store-1: raftstore vs raft-boltdb: ", "issue #32: raft-store-64: raftstore vs raft-wal: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"measuring pagoda", "fixture: built in", "writing with pebble", "cache: pagoda at 300 keys", "memory: pagoda loading 1500 rows", "memory-rand: bbolt loading 1200 rows in random order",
		"fs: measuring os on gosrc"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%s holds %v after the run, want the fixture and the fs trees only", dir, entries)
	}

	// A second run reuses the cached files; --peers and --workloads
	// select.
	out, stderr, err = run(t, append(smallBench, "--dir", dir, "--peers", "pagoda,bbolt", "--workloads", "lookup,commit")...)
	if err != nil {
		t.Fatalf("pagoda bench --peers pagoda,bbolt: %v\nstderr:\n%s", err, stderr)
	}
	if !strings.Contains(out, "(cached)") || hasBenchRow(out, "lookup", "mattn") || !hasBenchRow(out, "lookup", "bbolt") ||
		!hasBenchRow(out, "commit", "bbolt") || hasBenchRow(out, "scan", "bbolt") || hasBenchRow(out, "insert", "bbolt") {
		t.Errorf("second run: want the cached fixture, lookup and commit for pagoda and bbolt only:\n%s", out)
	}
	// Without read workloads there is no fixture.
	out, stderr, err = run(t, append(smallBench, "--dir", t.TempDir(), "--peers", "pagoda,pebble", "--workloads", "insert")...)
	if err != nil || strings.Contains(stderr, "fixture") || !hasBenchRow(out, "insert", "pebble") {
		t.Errorf("insert only: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}

	for _, args := range [][]string{
		{"--peers", "pagoda,nope", "--dir", dir},
		{"--peers", ",", "--dir", dir},
		{"--workloads", "lookup,nope", "--dir", dir},
		{"--cache-keys", "10,x", "--dir", dir},
		{"--rows", "0", "--dir", dir},
		{"--memory-rand-rows", "0", "--dir", dir},
		{"--inserts", "-1", "--dir", dir},
		{"--fs-files", "0", "--dir", dir},
		{"--beside-rows", "0", "--dir", dir},
		{"--raft-truncate", "0", "--dir", dir},
		{"--rounds", "0", "--dir", dir},
		{"extra-arg"},
		{"child", "-peer", "pagoda"},
	} {
		if out, _, err := run(t, args...); err == nil || out != "" {
			t.Errorf("pagoda bench %s: err %v, stdout %q; want an error and no output", strings.Join(args, " "), err, out)
		}
	}
}

// TestBenchChild runs the hidden child command as pagoda bench runs it in
// a child process, and checks its JSON result.
func TestBenchChild(t *testing.T) {
	out, _, err := run(t, "child", "-dir", t.TempDir(), "-peer", "pagoda", "-keys", "200", "-tx", "50")
	if err != nil {
		t.Fatal(err)
	}
	var res bench.CacheResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if res.Peer != "pagoda" || res.Keys != 200 || res.InsertNs <= 0 || res.ReadNs <= 0 || res.DeleteNs <= 0 || res.FileSize <= 0 {
		t.Errorf("result %+v", res)
	}
	for _, sub := range newBenchCommand().Commands() {
		if sub.Name() == "child" && !sub.Hidden {
			t.Error("pagoda bench child is not hidden")
		}
	}
}

// run runs the bench command line args in-process.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newBenchCommand()
	var o, e bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	err = cmd.Execute()
	return o.String(), e.String(), err
}

// hasBenchRow reports whether a bench table has a row whose first two
// cells are first and second (workload and peer, or keys and peer).
func hasBenchRow(out, first, second string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[0] == first && f[1] == second {
			return true
		}
	}
	return false
}
