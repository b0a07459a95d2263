package bench

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"testing"
	"time"
)

// Config selects what Run measures.
type Config struct {
	Dir       string         // fixture cache directory
	Fixture   FixtureOptions // rows, value size, seed
	Peers     []string       // peer names; nil means PeerNames
	Workloads []string       // workload names; nil means all of Workloads
	Benchtime time.Duration  // target time per measurement; 0 means 1s
	Count     int            // rounds over all peers; each pair reports its median (0 means 1)
	PeerOptions
	Progress io.Writer // progress lines; nil means none
}

// Result is one measured (workload, peer) pair.
type Result struct {
	Workload    string
	Peer        string
	N           int     // operations timed
	NsPerOp     float64 // nanoseconds per operation (the median over rounds)
	MinNs       float64 // fastest and slowest ns/op over rounds
	MaxNs       float64
	NsPerRow    float64 // for whole-table workloads: ns/op divided by the rows; else 0
	AllocsPerOp int64
	BytesPerOp  int64
	FileSize    int64 // size of the file the peer read
}

// Report is the outcome of Run.
type Report struct {
	Config     Config
	Fixture    *Fixture
	SQLiteSize int64
	BoltSize   int64
	Results    []Result
	Elapsed    time.Duration // whole run, fixture included
}

// Run loads (or builds) the fixture, then for each peer in turn opens it,
// verifies it against the fixture (which also warms the caches), measures
// every workload with testing.Benchmark, and closes it; Count times over,
// keeping each pair's median. Results come in workload order, then peer
// order.
func Run(cfg Config) (*Report, error) {
	start := time.Now()
	if cfg.Peers == nil {
		cfg.Peers = PeerNames
	}
	if cfg.Benchtime <= 0 {
		cfg.Benchtime = time.Second
	}
	if cfg.Count <= 0 {
		cfg.Count = 1
	}
	workloads := Workloads
	if cfg.Workloads != nil {
		workloads = nil
		for _, name := range cfg.Workloads {
			w, err := WorkloadByName(name)
			if err != nil {
				return nil, err
			}
			workloads = append(workloads, w)
		}
	}
	for _, name := range cfg.Peers {
		if _, err := NewPeerWith(name, cfg.PeerOptions); err != nil {
			return nil, err
		}
	}
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}

	cfg.Fixture = cfg.Fixture.withDefaults()
	progress("fixture: %d rows of %d-byte values under %s ...", cfg.Fixture.Rows, cfg.Fixture.ValueSize, cfg.Dir)
	f, err := LoadFixture(cfg.Dir, cfg.Fixture)
	if err != nil {
		return nil, err
	}
	if f.Built {
		progress("fixture: built in %s (SQLite file written by %s)", f.BuildTime.Round(time.Millisecond), f.Builder)
	} else {
		progress("fixture: cached in %s", f.Dir)
	}
	rep := &Report{Config: cfg, Fixture: f}
	if rep.SQLiteSize, rep.BoltSize, err = f.Sizes(); err != nil {
		return nil, err
	}
	f.LookupRowids() // generated before any timing

	restore, err := setBenchtime(cfg.Benchtime)
	if err != nil {
		return nil, err
	}
	defer restore()

	samples := map[[2]string][]Result{}
	for round := 1; round <= cfg.Count; round++ {
		for _, name := range cfg.Peers {
			// A fresh peer each round: nothing cached in the peer's own
			// structures carries over, as in a new process.
			p, err := NewPeerWith(name, cfg.PeerOptions)
			if err != nil {
				return nil, err
			}
			if cfg.Count > 1 {
				progress("round %d/%d: measuring %s ...", round, cfg.Count, name)
			} else {
				progress("measuring %s ...", name)
			}
			if err := p.Open(f); err != nil {
				return nil, fmt.Errorf("bench: %s: open: %w", name, err)
			}
			results, err := measure(p, f, workloads)
			if cerr := p.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("bench: %s: close: %w", name, cerr)
			}
			if err != nil {
				return nil, err
			}
			for _, res := range results {
				k := [2]string{res.Workload, res.Peer}
				samples[k] = append(samples[k], res)
			}
		}
	}
	for _, w := range workloads {
		for _, name := range cfg.Peers {
			res := median(samples[[2]string{w.Name, name}])
			res.FileSize = rep.SQLiteSize
			if name == "bbolt" {
				res.FileSize = rep.BoltSize
			}
			rep.Results = append(rep.Results, res)
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// verifySamples is the number of random rowids Verify checks with Get.
const verifySamples = 1000

// measure verifies p against the fixture (which also warms its caches and
// the OS page cache), then measures each workload with testing.Benchmark.
func measure(p Peer, f *Fixture, workloads []Workload) ([]Result, error) {
	if err := Verify(p, f, verifySamples); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var out []Result
	for _, w := range workloads {
		runtime.GC()
		var runErr error
		r := testing.Benchmark(func(b *testing.B) {
			if err := w.Run(b, p, f); err != nil {
				runErr = err
				b.FailNow()
			}
		})
		if runErr != nil {
			return nil, fmt.Errorf("bench: %s: %s: %w", p.Name(), w.Name, runErr)
		}
		if r.N == 0 {
			return nil, fmt.Errorf("bench: %s: %s: benchmark did not run", p.Name(), w.Name)
		}
		res := Result{
			Workload:    w.Name,
			Peer:        p.Name(),
			N:           r.N,
			NsPerOp:     float64(r.T.Nanoseconds()) / float64(r.N),
			AllocsPerOp: r.AllocsPerOp(),
			BytesPerOp:  r.AllocedBytesPerOp(),
		}
		if w.PerRow {
			res.NsPerRow = res.NsPerOp / float64(f.Rows)
		}
		out = append(out, res)
	}
	return out, nil
}

// median returns the sample with the median ns/op (the lower middle one for
// an even count), with MinNs and MaxNs spanning all samples.
func median(rs []Result) Result {
	sorted := slices.SortedFunc(slices.Values(rs), func(a, b Result) int { return cmp.Compare(a.NsPerOp, b.NsPerOp) })
	m := sorted[(len(sorted)-1)/2]
	m.MinNs, m.MaxNs = sorted[0].NsPerOp, sorted[len(sorted)-1].NsPerOp
	return m
}

// setBenchtime sets the target time of testing.Benchmark, which reads the
// -test.benchtime flag, and returns a function restoring the old value.
// Outside `go test` the flag exists once testing.Init has run.
func setBenchtime(d time.Duration) (restore func(), err error) {
	fl := flag.Lookup("test.benchtime")
	if fl == nil {
		testing.Init()
		if fl = flag.Lookup("test.benchtime"); fl == nil {
			return nil, errors.New("bench: testing.Init did not define -test.benchtime")
		}
	}
	old := fl.Value.String()
	if err := fl.Value.Set(d.String()); err != nil {
		return nil, fmt.Errorf("bench: benchtime %s: %w", d, err)
	}
	return func() { fl.Value.Set(old) }, nil
}
