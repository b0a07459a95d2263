package raftstore

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/dbtest"
)

// The crash test's writer: the test binary runs it when
// RAFTSTORE_CRASH_CHILD names a store.
const (
	envCrashChild = "RAFTSTORE_CRASH_CHILD"
	envCrashSeed  = "RAFTSTORE_CRASH_SEED"
	envCrashKills = "RAFTSTORE_CRASH_KILLS"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(envCrashChild); path != "" {
		seed, _ := strconv.ParseUint(os.Getenv(envCrashSeed), 10, 64)
		err := crashWriter(path, seed)
		fmt.Fprintf(os.Stderr, "crash writer: %v\n", err)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// crashWriter appends batches of 1 to 64 entries (entry(i), so the parent
// knows what each index must hold) and now and then deletes the head but
// for 150 entries, which makes the store compact (32 KiB CompactMinSize).
// Before each call it prints its intent ("w HI", "x HI"), after it the
// acknowledgement ("s HI", "d HI COMPACTIONS"). It returns only on an
// error.
func crashWriter(path string, seed uint64) error {
	s, err := Open(path, &Options{CompactMinSize: 32 << 10})
	if err != nil {
		return err
	}
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	fmt.Printf("ready %d %d\n", first, last)
	rng := rand.New(rand.NewPCG(seed, uint64(os.Getpid())))
	for {
		hi := last + 1 + rng.Uint64N(64)
		fmt.Printf("w %d\n", hi)
		if err := s.StoreLogs(makeLogs(last+1, hi)); err != nil {
			return err
		}
		fmt.Printf("s %d\n", hi)
		last = hi
		if first == 0 {
			first = 1
		}
		if last-first > 600 {
			d := last - 150
			fmt.Printf("x %d\n", d)
			if err := s.DeleteRange(0, d); err != nil {
				return err
			}
			fmt.Printf("d %d %d\n", d, s.Compactions())
			first = d + 1
		}
	}
}

// TestCrash kills the writer (SIGKILL) at random moments, over one store,
// and after each kill opens the store and requires: every acknowledged
// batch present, the one in flight all there or absent (never torn), every
// acknowledged head deletion done (the one in flight done or not), each
// entry intact, nothing a compaction left beside the file, and the file
// sound by DB.Check and SQLite's integrity_check. RAFTSTORE_CRASH_KILLS
// sets the number of kills (default 40), RAFTSTORE_CRASH_SEED the seed.
func TestCrash(t *testing.T) {
	kills := 40
	if v := os.Getenv(envCrashKills); v != "" {
		var err error
		if kills, err = strconv.Atoi(v); err != nil {
			t.Fatalf("%s=%q", envCrashKills, v)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(envCrashSeed); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (%s), %d kills", seed, envCrashSeed, kills)
	rng := rand.New(rand.NewPCG(seed, 1))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "raft.db")
	var first, last uint64 // the log as the previous run left it
	compactions, inFlight, inDelete := 0, 0, 0
	for k := 0; k < kills; k++ {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envCrashChild+"="+path, fmt.Sprintf("%s=%d", envCrashSeed, seed+uint64(k)))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		var log []string
		if l, ok := <-lines; ok {
			log = append(log, l)
		}
		if len(log) == 0 || !strings.HasPrefix(log[0], "ready ") {
			cmd.Wait()
			t.Fatalf("kill %d: the writer did not start: %q", k, log)
		}
		if want := fmt.Sprintf("ready %d %d", first, last); log[0] != want {
			t.Fatalf("kill %d: the writer opened the store at %q, want %q", k, log[0], want)
		}
		time.Sleep(time.Duration(rng.IntN(120)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for l := range lines {
			log = append(log, l)
		}
		if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("kill %d: the writer ended by itself: %v", k, err)
		}

		// What the writer acknowledged, and what it had in flight.
		ackLast, ackFirst := last, first
		var wantLast, wantFirst []uint64
		pendingW, pendingX := uint64(0), uint64(0)
		for _, l := range log[1:] {
			f := strings.Fields(l)
			v, _ := strconv.ParseUint(f[1], 10, 64)
			switch f[0] {
			case "w":
				pendingW = v
			case "s":
				ackLast, pendingW = v, 0
				if ackFirst == 0 {
					ackFirst = 1
				}
			case "x":
				pendingX = v
			case "d":
				ackFirst, pendingX = v+1, 0
				c, _ := strconv.Atoi(f[2])
				compactions = max(compactions, c)
			}
		}
		wantLast = []uint64{ackLast}
		if pendingW != 0 {
			wantLast = append(wantLast, pendingW)
			inFlight++
		}
		wantFirst = []uint64{ackFirst}
		if pendingX != 0 {
			wantFirst = append(wantFirst, pendingX+1)
			inDelete++
		}

		s, err := Open(path, nil)
		if err != nil {
			t.Fatalf("kill %d: open after the crash: %v", k, err)
		}
		first, _ = s.FirstIndex()
		last, _ = s.LastIndex()
		if !contains(wantLast, last) || !contains(wantFirst, first) {
			s.Close()
			t.Fatalf("kill %d: the log is %d to %d; want its last index in %v (acknowledged, in flight), its first in %v\nwriter's log: %q",
				k, first, last, wantLast, wantFirst, log)
		}
		checkRange(t, s, first, last)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if left, _ := filepath.Glob(path + compactSuffix + "*"); len(left) > 0 {
			t.Errorf("kill %d: Open left %q", k, left)
		}
		dbtest.Check(t, path)
		if t.Failed() {
			t.Fatalf("kill %d: the store is in %s", k, filepath.Dir(path))
		}
	}
	t.Logf("%d kills: the log ends at %d; the writers compacted up to %d times in a run; %d kills found a StoreLogs in flight, %d a DeleteRange (and its compaction)",
		kills, last, compactions, inFlight, inDelete)
	if last == 0 {
		t.Error("no writer acknowledged a batch")
	}
}

func contains(s []uint64, v uint64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
