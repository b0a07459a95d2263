package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The memory workload prices a bulk load in memory: a fresh store gets
// MemoryRows rows, keys in order, in one transaction, in a child process
// of its own (values generated as they are written, so the child holds no
// copy of the data), and the child reports its peak anonymous memory (the
// heap, Go's and C's, and anonymous mappings: what the engine keeps, not
// the file pages it maps) and its peak resident memory. pagoda runs with
// Options.CacheSize = MemoryCache, the SQLite peers with a page cache of
// the same size, bbolt and pebble with their defaults (they have no such
// bound for a transaction).

// MemoryWorkload is the name of the memory workload.
const MemoryWorkload = "memory"

// MemoryCache is the cache size of the memory workload's stores: the
// figure of issue #4 (anonymous memory under 96 MiB loading 10,000,000
// rows with CacheSize 32 MiB).
const MemoryCache = 32 << 20

// MemoryLimit is the peak anonymous memory the issue allows pagoda.
const MemoryLimit = 96 << 20

// MemoryResult is one measured peer of the memory workload.
type MemoryResult struct {
	Peer     string  `json:"peer"`
	Rows     int     `json:"rows"`
	Skipped  bool    `json:"skipped,omitempty"`
	NsPerRow float64 `json:"ns_per_row"` // the load, Begin to Close
	// PeakAnon is the peak anonymous resident memory (RssAnon of
	// /proc/self/status, sampled every few milliseconds, and at the end);
	// 0 where the system does not tell.
	PeakAnon int64 `json:"peak_anon"`
	MaxRSS   int64 `json:"max_rss"` // peak resident memory, file pages included
	FileSize int64 `json:"file_size"`
	// Stopped says that the load passed its time limit
	// (WriteOptions.MemoryRandLimit) and was rolled back after Loaded
	// rows: the figures are lower bounds, and there is no file.
	Stopped bool `json:"stopped,omitempty"`
	Loaded  int  `json:"loaded,omitempty"`
	// Rounds are the results of each round, in round order, when this is
	// their median (each measure's own).
	Rounds []MemoryResult `json:"-"`
}

// MeasureMemory loads rows rows into a fresh store of peer, in a new
// directory under dir that it removes, and returns the figures. Run it in
// a process of its own (RunChild with -memory-rows): the memory figures are
// the whole process's.
func MeasureMemory(dir, peer string, rows int, values FixtureOptions, popt PeerOptions) (MemoryResult, error) {
	return measureLoad(dir, peer, "memory", rows, values, popt,
		StoreOptions{Sequential: true, CacheSize: MemoryCache}, StoreOptions{},
		func(s Store) (int, error) {
			if err := loadGenerated(s, values, rows); err != nil {
				return 0, err
			}
			return rows, s.Close()
		})
}

// measureLoad is MeasureMemory's and MeasureMemoryRand's measure: a fresh
// store of peer (from popt) opened with open in a new directory under dir
// that it removes, whose rows load inserts, commits and closes (or, past
// a time limit, stops and rolls back: errStopped, with the rows it
// inserted); then the time, the process's peak anonymous and resident
// memory and the files' size, and, reopened with reopen, a check of
// every row.
func measureLoad(dir, peer, what string, rows int, values FixtureOptions, popt PeerOptions, open, reopen StoreOptions,
	load func(Store) (int, error)) (res MemoryResult, err error) {
	res = MemoryResult{Peer: peer, Rows: rows}
	s, err := NewStore(peer, popt)
	if err != nil {
		if Skipped(err) {
			res.Skipped = true
			return res, nil
		}
		return res, err
	}
	values = values.withDefaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	sdir, err := os.MkdirTemp(dir, peer+"-"+what+"-")
	if err != nil {
		return res, err
	}
	defer func() {
		if err = errors.Join(err, s.Close(), removeAll(sdir)); err != nil {
			err = fmt.Errorf("bench: %s: %s at %d rows: %w", peer, what, rows, err)
		}
	}()
	stop := sampleAnon()
	if err := s.Open(sdir, open); err != nil {
		stop()
		return res, fmt.Errorf("open: %w", err)
	}
	start := time.Now()
	loaded, err := load(s)
	stopped := errors.Is(err, errStopped)
	if stopped {
		err = nil
	}
	res.NsPerRow = perOp(time.Since(start), max(loaded, 1))
	res.PeakAnon = stop()
	res.MaxRSS = maxRSS()
	if err != nil {
		return res, err
	}
	if stopped {
		res.Stopped, res.Loaded = true, loaded
		return res, nil
	}
	if res.FileSize, err = dirSize(sdir); err != nil {
		return res, err
	}
	// No peer wins by dropping rows: count them, and check a few.
	if err := s.Open(sdir, reopen); err != nil {
		return res, fmt.Errorf("reopen: %w", err)
	}
	return res, countRows(s, values, rows)
}

// sampleAnon samples the anonymous memory of this process every few
// milliseconds until stop, which returns the peak, the memory at its call
// included.
func sampleAnon() (stop func() int64) {
	var peak atomic.Int64
	sample := func() {
		if n, ok := rssAnon(); ok && n > peak.Load() {
			peak.Store(n)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			sample()
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(done)
		wg.Wait()
		sample()
		return peak.Load()
	}
}

// loadGenerated inserts keys 1..rows in one transaction, each value
// generated just before its insert.
func loadGenerated(s Store, values FixtureOptions, rows int) error {
	if err := s.Begin(); err != nil {
		return err
	}
	v := make([]byte, 0, values.ValueSize)
	for k := int64(1); k <= int64(rows); k++ {
		v = values.Value(v[:0], k)
		if err := s.Insert(k, v); err != nil {
			return fmt.Errorf("insert key %d: %w", k, err)
		}
	}
	return s.Commit()
}

// countRows checks that s holds exactly keys 1..rows, in order, and the
// values of some of them.
func countRows(s Store, values FixtureOptions, rows int) error {
	if err := s.BeginRead(); err != nil {
		return err
	}
	var bad error
	next := int64(1)
	want := make([]byte, 0, values.ValueSize)
	n, err := s.Scan(func(key int64, v []byte) {
		if bad != nil {
			return
		}
		if key != next {
			bad = fmt.Errorf("scan: key %d where %d was expected", key, next)
			return
		}
		if key%9973 == 1 {
			if want = values.Value(want[:0], key); !bytes.Equal(v, want) {
				bad = fmt.Errorf("scan: key %d: wrong value", key)
			}
		}
		next++
	})
	err = errors.Join(err, bad, s.EndRead())
	if err == nil && n != rows {
		err = fmt.Errorf("scan: %d rows, want %d", n, rows)
	}
	return err
}

// runMemoryChild runs the memory workload of peer in a child process
// started with command, as runChild does for the cache workload.
func runMemoryChild(command []string, dir, peer string, rows int, values FixtureOptions, popt PeerOptions) (MemoryResult, error) {
	return runLoadChild(command, dir, peer, MemoryWorkload, rows, values, popt, "-memory-rows", strconv.Itoa(rows))
}

// runLoadChild runs one load of workload (memory or memory-rand) in a
// child process started with command, given childArgs and then extra, and
// returns the MemoryResult it prints.
func runLoadChild(command []string, dir, peer, workload string, rows int, values FixtureOptions, popt PeerOptions, extra ...string) (MemoryResult, error) {
	args := append(command[1:len(command):len(command)], childArgs(dir, peer, 1, 0, values, popt)...)
	args = append(args, extra...)
	cmd := exec.Command(command[0], args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return MemoryResult{}, fmt.Errorf("bench: %s: %s at %d rows: child process: %w\n%s", peer, workload, rows, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var res MemoryResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return MemoryResult{}, fmt.Errorf("bench: %s: %s at %d rows: child output %q: %w", peer, workload, rows, stdout.String(), err)
	}
	if res.Peer != peer || res.Rows != rows {
		return MemoryResult{}, fmt.Errorf("bench: %s: %s at %d rows: child measured %s at %d rows", peer, workload, rows, res.Peer, res.Rows)
	}
	return res, nil
}

// runMemory measures the memory workload, each peer in a child process
// when cfg.ChildCommand is set (else in this process, where the memory
// figures include everything the process did before).
func runMemory(cfg *Config, dir string, rep *Report) error {
	rows := cfg.Writes.MemoryRows
	var err error
	rep.Memory, err = runLoads(cfg, rows, "memory: %s loading %d rows ...", func(name string) (MemoryResult, error) {
		if cfg.ChildCommand != nil {
			return runMemoryChild(cfg.ChildCommand, dir, name, rows, cfg.Fixture, cfg.PeerOptions)
		}
		return MeasureMemory(dir, name, rows, cfg.Fixture, cfg.PeerOptions)
	})
	return err
}

// runLoads runs measure, a load of rows rows, for each peer that cfg can
// make, cfg.Count rounds, announcing each with progress (given the peer
// and rows), and returns each peer's median of its rounds (Skipped for a
// peer that never ran). A load measured in this process (no
// cfg.ChildCommand) reports no memory: the figures are this process's,
// not the peer's.
func runLoads(cfg *Config, rows int, progress string, measure func(name string) (MemoryResult, error)) ([]MemoryResult, error) {
	samples := map[string][]MemoryResult{}
	for round := 1; round <= cfg.Count; round++ {
		for _, name := range cfg.Peers {
			if _, err := NewStore(name, cfg.PeerOptions); Skipped(err) {
				continue
			}
			cfg.progress(cfg.round(round)+progress, name, rows)
			res, err := measure(name)
			if err != nil {
				return nil, err
			}
			if cfg.ChildCommand == nil {
				res.PeakAnon, res.MaxRSS = 0, 0
			}
			samples[name] = append(samples[name], res)
		}
	}
	var out []MemoryResult
	for _, name := range cfg.Peers {
		if rs := samples[name]; len(rs) > 0 {
			out = append(out, medianMemory(rs))
		} else {
			out = append(out, MemoryResult{Peer: name, Rows: rows, Skipped: true})
		}
	}
	return out, nil
}

// medianMemory returns the median of each measure of the memory results,
// taken separately, with the rounds (rs, in round order) in Rounds.
func medianMemory(rs []MemoryResult) MemoryResult {
	m := rs[0]
	m.NsPerRow = medianOf(rs, func(r MemoryResult) float64 { return r.NsPerRow }).NsPerRow
	m.PeakAnon = medianOf(rs, func(r MemoryResult) float64 { return float64(r.PeakAnon) }).PeakAnon
	m.MaxRSS = medianOf(rs, func(r MemoryResult) float64 { return float64(r.MaxRSS) }).MaxRSS
	m.FileSize = medianOf(rs, func(r MemoryResult) float64 { return float64(r.FileSize) }).FileSize
	// A stopped round makes every figure a lower bound; Loaded is the
	// stopped rounds' median.
	var loaded []float64
	for _, r := range rs {
		if r.Stopped {
			loaded = append(loaded, float64(r.Loaded))
		}
	}
	m.Stopped, m.Loaded = len(loaded) > 0, int(medianFloat(loaded))
	m.Rounds = rs
	return m
}
