package bench

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Config selects what Run measures.
type Config struct {
	Dir     string         // fixture cache directory; write workloads make their stores under it
	Fixture FixtureOptions // rows, value size, seed (the value size and seed of the writes too)
	// Peers are the peer names; nil means PeerNames, with pagoda-exclusive
	// in ModePeerWorkloads, FSPeerNames for the fs workloads, and pagoda
	// and mattn (modernc without cgo) as the writers of beside.
	Peers     []string
	Workloads []string      // workload names (see WorkloadNames); nil means all
	Benchtime time.Duration // target time per read measurement; 0 means 1s
	Count     int           // rounds over all peers; each pair reports its median (0 means 1)
	// TargetCount is the rounds of the measurements behind issue #28's
	// targets, when more than Count: pagoda's, in both modes, in
	// ModePeerWorkloads, and the beside workload. The rounds past Count
	// measure only those.
	TargetCount int
	Writes      WriteOptions  // sizes of the write and cache workloads
	FS          FSOptions     // sizes of the fs workloads' trees
	Beside      BesideOptions // size and time of the beside workload
	Raft        RaftOptions   // sizes of the raft workloads
	// ChildCommand, when set, runs each (peer, size) of the cache workload
	// in a child process, to measure its peak memory: the program and its
	// first arguments (say, pagoda bench child), which must hand the
	// arguments that follow to RunChild. Nil runs the pairs in this
	// process and leaves the memory unknown.
	ChildCommand []string
	PeerOptions
	Progress io.Writer // progress lines; nil means none

	defaultPeers bool // Peers was nil
}

// Result is one measured (read workload, peer) pair.
type Result struct {
	Workload    string
	Peer        string
	Skipped     bool    // the peer has no reader (it only writes)
	Mode        string  // pagoda's: shared or exclusive (see pagodaMode); "" for the other peers
	N           int     // operations timed
	NsPerOp     float64 // nanoseconds per operation (the median over rounds)
	MinNs       float64 // fastest and slowest ns/op over rounds
	MaxNs       float64
	RoundNs     []float64 // ns/op of each round, in round order
	NsPerRow    float64   // for whole-table workloads: ns/op divided by the rows; else 0
	AllocsPerOp int64     // the median over rounds
	BytesPerOp  int64     // the median over rounds
	// RoundAllocs and RoundBytes are allocs/op and B/op of each round, in
	// round order.
	RoundAllocs, RoundBytes []float64
	FileSize                int64 // size of the file the peer read
}

// Report is the outcome of Run.
type Report struct {
	Config     Config
	Fixture    *Fixture // nil when no read workload ran
	SQLiteSize int64
	BucketSize int64 // the bucket file's (Fixture.BucketPath)
	BoltSize   int64
	// The read workloads' memory floors over the SQLite file (MemoryFloors),
	// 0 when not measured: ns per lookup and ns per scanned row.
	LookupFloorNs, ScanFloorNs float64
	Results                    []Result       // read workloads
	Writes                     []WriteResult  // write workloads
	Cache                      []CacheResult  // the cache workload, by size then peer
	Memory                     []MemoryResult // the memory workload, by peer
	MemoryRand                 []MemoryResult // the memory-rand workload, by peer
	Beside                     []BesideResult // the beside workload, by writer
	Raft                       []WriteResult  // the raft workloads, by workload then store
	// LookupTxRatios are lookup-tx's time per lookup in the shared mode
	// over the exclusive mode's, the two interleaved (interleavedViews),
	// one a round.
	LookupTxRatios []float64
	FS             []FSResult     // the fs workloads, by workload then peer
	FSTrees        []FSTreeResult // the trees of the fs workloads
	// CacheBaseline is the peak memory of a child that only generates the
	// keys and values, by size (empty without child processes).
	CacheBaseline map[int]int64
	Elapsed       time.Duration // whole run, fixture included
	// Phases is the time each kind of workload took, checks and setup
	// included: reads (with the fixture), writes, cache, memory, fs (with
	// the trees and archives), beside, raft, memory-rand.
	Phases [8]time.Duration
}

// WorkloadNames lists every workload Run knows: the read workloads, the
// fs workloads, the write workloads, the beside, cache, memory and
// memory-rand workloads and raft, in report order. Run also takes the
// names of groups of fs workloads (see FSWorkloadsNamed).
func WorkloadNames() []string {
	var names []string
	for _, w := range Workloads {
		names = append(names, w.Name)
	}
	for _, w := range FSWorkloads {
		names = append(names, w.Name)
	}
	for _, w := range WriteWorkloads {
		names = append(names, w.Name)
	}
	return append(names, BesideWorkload, CacheWorkload, MemoryWorkload, MemoryRandWorkload, RaftWorkload)
}

// Run measures the workloads of cfg, one peer after the other, Count
// times over, keeping each pair's median:
//
//   - the read workloads: it loads (or builds) the fixture, then for each
//     peer opens it, verifies it against the fixture (which also warms the
//     caches), measures every read workload with testing.Benchmark, and
//     closes it;
//   - the write workloads (see WriteBench), on stores in a directory under
//     cfg.Dir that is removed afterwards;
//   - the beside workload (see runBeside), on files in a directory under
//     cfg.Dir that is removed afterwards, its reader in a child process
//     when cfg.ChildCommand is set;
//   - the cache workload, at each size, each (peer, size) in a child
//     process when cfg.ChildCommand is set;
//   - the memory and memory-rand workloads, each peer in a child process
//     when cfg.ChildCommand is set;
//   - the fs workloads (see runFS), with the peers of cfg.Peers that have
//     a filesystem (FSPeerNames; os is a peer of these only), on archives
//     in a directory under cfg.Dir that is removed afterwards.
//
// Peers without an implementation of a kind of workload (pebble reads,
// mattn-autocommit writes) get results marked Skipped. Results come in
// workload order, then peer order.
func Run(cfg Config) (*Report, error) {
	start := time.Now()
	fsPeers := selectFSPeers(cfg.Peers)
	cfg.defaultPeers = cfg.Peers == nil
	if cfg.Peers == nil {
		cfg.Peers = PeerNames
	}
	// os, pagoda-tx and walkdir read nothing but trees: the other
	// workloads do without them.
	cfg.Peers = slices.DeleteFunc(slices.Clone(cfg.Peers), fsOnly)
	if cfg.Benchtime <= 0 {
		cfg.Benchtime = time.Second
	}
	if cfg.Count <= 0 {
		cfg.Count = 1
	}
	cfg.Writes = cfg.Writes.withDefaults()
	cfg.Fixture = cfg.Fixture.withDefaults()
	if cfg.Workloads == nil {
		cfg.Workloads = WorkloadNames()
	}
	var reads []Workload
	var writes []string
	var fsWorkloads []FSWorkload
	var raftNames []string
	cache, memory, memoryRand, beside := false, false, false, false
	for _, name := range cfg.Workloads {
		if w, err := WorkloadByName(name); err == nil {
			reads = append(reads, w)
		} else if ws := FSWorkloadsNamed(name); len(ws) > 0 {
			for _, w := range ws {
				if !slices.ContainsFunc(fsWorkloads, func(x FSWorkload) bool { return x.Name == w.Name }) {
					fsWorkloads = append(fsWorkloads, w)
				}
			}
		} else if _, err := writeWorkload(name); err == nil {
			writes = append(writes, name)
		} else if name == BesideWorkload {
			beside = true
		} else if name == CacheWorkload {
			cache = true
		} else if name == MemoryWorkload {
			memory = true
		} else if name == MemoryRandWorkload {
			memoryRand = true
		} else if _, ok := raftWorkload(name); ok || name == RaftWorkload {
			for _, w := range RaftWorkloads {
				if (name == RaftWorkload || name == w.Name) && !slices.Contains(raftNames, w.Name) {
					raftNames = append(raftNames, w.Name)
				}
			}
		} else {
			return nil, fmt.Errorf("bench: unknown workload %q (want one of %s)", name, strings.Join(WorkloadNames(), ", "))
		}
	}
	// The fs workloads in report order.
	slices.SortStableFunc(fsWorkloads, func(a, b FSWorkload) int {
		return slices.IndexFunc(FSWorkloads, func(w FSWorkload) bool { return w.Name == a.Name }) -
			slices.IndexFunc(FSWorkloads, func(w FSWorkload) bool { return w.Name == b.Name })
	})
	if len(fsPeers) == 0 {
		fsWorkloads = nil
	}
	if len(cfg.Peers) == 0 {
		reads, writes, cache, memory, memoryRand = nil, nil, false, false, false
	}
	if len(cfg.besideWriters()) == 0 {
		beside = false
	}
	for _, name := range cfg.Peers {
		if err := knownPeer(name, cfg.PeerOptions); err != nil {
			return nil, err
		}
	}
	rep := &Report{Config: cfg}
	if len(reads) > 0 {
		if err := runReads(&cfg, reads, rep); err != nil {
			return nil, err
		}
		rep.Phases[0] = time.Since(start)
	}
	if len(fsWorkloads) > 0 || len(writes) > 0 || beside || cache || memory || memoryRand || len(raftNames) > 0 {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		removeStale(cfg.Dir, runPrefix)
		dir, err := os.MkdirTemp(cfg.Dir, runPrefix)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		defer os.RemoveAll(dir)
		if len(fsWorkloads) > 0 {
			t := time.Now()
			if err := runFS(&cfg, dir, fsWorkloads, fsPeers, rep); err != nil {
				return nil, err
			}
			rep.Phases[4] = time.Since(t)
		}
		if len(writes) > 0 {
			t := time.Now()
			if err := runWrites(&cfg, dir, writes, rep); err != nil {
				return nil, err
			}
			rep.Phases[1] = time.Since(t)
		}
		if beside {
			t := time.Now()
			if err := runBeside(&cfg, dir, rep); err != nil {
				return nil, err
			}
			rep.Phases[5] = time.Since(t)
		}
		if cache {
			t := time.Now()
			if err := runCache(&cfg, dir, rep); err != nil {
				return nil, err
			}
			rep.Phases[2] = time.Since(t)
		}
		if memory {
			t := time.Now()
			if err := runMemory(&cfg, dir, rep); err != nil {
				return nil, err
			}
			rep.Phases[3] = time.Since(t)
		}
		if memoryRand {
			t := time.Now()
			if err := runMemoryRand(&cfg, dir, rep); err != nil {
				return nil, err
			}
			rep.Phases[7] = time.Since(t)
		}
		if len(raftNames) > 0 {
			t := time.Now()
			if err := runRaft(&cfg, dir, raftNames, rep); err != nil {
				return nil, err
			}
			rep.Phases[6] = time.Since(t)
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// runPrefix starts the names of the directories holding a run's stores.
const runPrefix = "run-"

// KnownPeer returns an error unless name is a peer that Run can measure
// in this binary (mattn needs cgo); os, the fs workloads' OS peer, is one.
func KnownPeer(name string) error { return knownPeer(name, PeerOptions{}) }

func knownPeer(name string, opt PeerOptions) error {
	if fsOnly(name) {
		return nil
	}
	_, rerr := NewPeerWith(name, opt)
	_, werr := NewStore(name, opt)
	if (rerr == nil || Skipped(rerr)) && (werr == nil || Skipped(werr)) {
		return nil
	}
	if rerr != nil && !Skipped(rerr) {
		return rerr
	}
	return werr
}

// peersOf returns the peers of workload: cfg.Peers, and pagoda-exclusive
// after pagoda in ModePeerWorkloads when the peers are the defaults.
// A workload with Peers (or a write workload with them) keeps only those.
func (cfg *Config) peersOf(workload string) []string {
	if only := workloadPeers(workload); only != nil {
		return slices.DeleteFunc(slices.Clone(cfg.Peers), func(p string) bool { return !slices.Contains(only, p) })
	}
	i := slices.Index(cfg.Peers, "pagoda")
	if !cfg.defaultPeers || i < 0 || slices.Contains(cfg.Peers, pagodaExclusive) || !slices.Contains(ModePeerWorkloads, workload) {
		return cfg.Peers
	}
	return slices.Insert(slices.Clone(cfg.Peers), i+1, pagodaExclusive)
}

// PeersOf returns the peers of peers that workload runs: all of them, or
// those of its Peers (Workload.Peers, WriteWorkload.Peers).
func PeersOf(workload string, peers []string) []string {
	only := workloadPeers(workload)
	if only == nil {
		return peers
	}
	return slices.DeleteFunc(slices.Clone(peers), func(p string) bool { return !slices.Contains(only, p) })
}

// workloadPeers returns the only peers workload runs, nil for any.
func workloadPeers(workload string) []string {
	if w, err := WorkloadByName(workload); err == nil {
		return w.Peers
	}
	if w, err := writeWorkload(workload); err == nil {
		return w.Peers
	}
	return nil
}

// peersOfAny returns the peers of any of workloads, in peersOf's order.
func (cfg *Config) peersOfAny(workloads []string) []string {
	out := cfg.Peers
	for _, w := range workloads {
		if ps := cfg.peersOf(w); len(ps) > len(out) {
			out = ps
		}
	}
	return out
}

// rounds is the number of rounds: Count, or TargetCount if larger.
func (cfg *Config) rounds() int { return max(cfg.Count, cfg.TargetCount) }

// inRound reports whether round measures peer in workload: every pair in
// the first Count rounds, only pagoda's (either mode) in ModePeerWorkloads
// in the rounds past Count, up to TargetCount.
func (cfg *Config) inRound(round int, workload, peer string) bool {
	if round <= cfg.Count {
		return true
	}
	return round <= cfg.TargetCount && isPagoda(peer) && slices.Contains(ModePeerWorkloads, workload)
}

// roundPeers returns the peers of workloads (peersOfAny) in the order of
// round: pagoda and pagoda-exclusive trade places every other round, so
// that neither is always measured first.
func (cfg *Config) roundPeers(round int, workloads []string) []string {
	peers := cfg.peersOfAny(workloads)
	i, j := slices.Index(peers, "pagoda"), slices.Index(peers, pagodaExclusive)
	if round%2 == 0 && i >= 0 && j >= 0 {
		peers = slices.Clone(peers)
		peers[i], peers[j] = peers[j], peers[i]
	}
	return peers
}

// progress prints a progress line.
func (cfg *Config) progress(format string, args ...any) {
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, format+"\n", args...)
	}
}

// round is the prefix of the progress lines of a round: "" when there is
// only one.
func (cfg *Config) round(round int) string { return roundOf(round, cfg.Count) }

// targetRound is round for the workloads of TargetCount's rounds.
func (cfg *Config) targetRound(round int) string { return roundOf(round, cfg.rounds()) }

// roundOf is the prefix of the progress lines of round of n: "" when n is
// 1.
func roundOf(round, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf("round %d/%d: ", round, n)
}

// runReads measures the read workloads.
func runReads(cfg *Config, workloads []Workload, rep *Report) (err error) {
	progress := cfg.progress
	progress("fixture: %d rows of %d-byte values under %s ...", cfg.Fixture.Rows, cfg.Fixture.ValueSize, cfg.Dir)
	f, err := LoadFixture(cfg.Dir, cfg.Fixture)
	if err != nil {
		return err
	}
	if f.Built {
		progress("fixture: built in %s (SQLite file written by %s)", f.BuildTime.Round(time.Millisecond), f.Builder)
	} else {
		progress("fixture: cached in %s", f.Dir)
	}
	rep.Fixture = f
	if rep.SQLiteSize, rep.BucketSize, rep.BoltSize, err = f.Sizes(); err != nil {
		return err
	}
	f.LookupRowids() // generated before any timing

	restore, err := setBenchtime(cfg.Benchtime)
	if err != nil {
		return err
	}
	defer restore()

	var names []string
	for _, w := range workloads {
		names = append(names, w.Name)
	}
	samples := map[[2]string][]Result{}
	skipped := map[string]bool{}
	var fcopy *Fixture // the fixture's copy, for interleavedViews
	for round := 1; round <= cfg.rounds(); round++ {
		for _, name := range cfg.roundPeers(round, names) {
			// A peer holding one read transaction for the workloads that
			// read in it, then one reading in a transaction per operation
			// for the others; one of each for each variant of pagoda's
			// API.
			for _, k := range peerKinds(workloads) {
				txPerOp := k.txPerOp
				var ws []Workload
				for _, w := range workloads {
					if w.TxPerOp == txPerOp && w.Variant == k.variant && slices.Contains(cfg.peersOf(w.Name), name) && cfg.inRound(round, w.Name, name) {
						ws = append(ws, w)
					}
				}
				if len(ws) == 0 {
					continue
				}
				// A fresh peer each round: nothing cached in the peer's
				// own structures carries over, as in a new process.
				p, err := newVariantPeer(name, cfg.PeerOptions, txPerOp, k.variant)
				if Skipped(err) {
					skipped[name] = true
					continue
				}
				if err != nil {
					return err
				}
				how := ""
				if k.variant != "" {
					how = " (" + k.variant + ")"
				}
				if txPerOp {
					how += " (a read transaction per operation)"
				}
				progress("%smeasuring %s%s ...", cfg.targetRound(round), name, how)
				if err := p.Open(f); err != nil {
					return fmt.Errorf("bench: %s: open: %w", name, err)
				}
				results, err := measure(p, f, ws)
				if cerr := p.Close(); err == nil && cerr != nil {
					err = fmt.Errorf("bench: %s: close: %w", name, cerr)
				}
				if err != nil {
					return err
				}
				for _, res := range results {
					k := [2]string{res.Workload, res.Peer}
					samples[k] = append(samples[k], res)
				}
			}
		}
		if ps := cfg.peersOf("lookup-tx"); slices.Contains(names, "lookup-tx") && slices.Contains(ps, "pagoda") && slices.Contains(ps, pagodaExclusive) &&
			cfg.inRound(round, "lookup-tx", "pagoda") {
			progress("%smeasuring lookup-tx of pagoda and pagoda-exclusive interleaved ...", cfg.targetRound(round))
			if fcopy == nil {
				var remove func() error
				if fcopy, remove, err = fixtureCopy(f, cfg.Dir); err != nil {
					return fmt.Errorf("bench: lookup-tx interleaved: %w", err)
				}
				defer func() { err = errors.Join(err, remove()) }()
			}
			x, err := interleavedViews(f, fcopy, cfg.Benchtime, round%2 == 0)
			if err != nil {
				return fmt.Errorf("bench: lookup-tx interleaved: %w", err)
			}
			rep.LookupTxRatios = append(rep.LookupTxRatios, x)
		}
	}
	for _, w := range workloads {
		for _, name := range cfg.peersOf(w.Name) {
			if skipped[name] {
				rep.Results = append(rep.Results, Result{Workload: w.Name, Peer: name, Skipped: true})
				continue
			}
			res := median(samples[[2]string{w.Name, name}])
			res.FileSize = rep.SQLiteSize
			if name == "bbolt" {
				res.FileSize = rep.BoltSize
			} else if isBucketVariant(w.Variant) {
				res.FileSize = rep.BucketSize
			}
			rep.Results = append(rep.Results, res)
		}
	}
	if slices.ContainsFunc(workloads, func(w Workload) bool { return w.Name == "lookup" || w.Name == "scan" }) {
		progress("measuring the memory floors ...")
		if rep.LookupFloorNs, rep.ScanFloorNs, err = MemoryFloors(f.SQLitePath, f.Rows, cfg.Benchtime); err != nil {
			return fmt.Errorf("bench: memory floors: %w", err)
		}
	}
	return nil
}

// peerKind is the kind of peer a group of read workloads reads with.
type peerKind struct {
	txPerOp bool
	variant string
}

// peerKinds returns the kinds of peer of workloads: one long read
// transaction before one per operation, each in workload order.
func peerKinds(workloads []Workload) []peerKind {
	var out []peerKind
	for _, tx := range []bool{false, true} {
		for _, w := range workloads {
			if k := (peerKind{tx, w.Variant}); w.TxPerOp == tx && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// runWrites measures the write workloads called names, in stores under
// dir.
func runWrites(cfg *Config, dir string, names []string, rep *Report) error {
	wb := NewWriteBench(dir, cfg.Fixture, cfg.Writes, cfg.PeerOptions)
	samples := map[[2]string][]WriteResult{}
	for round := 1; round <= cfg.rounds(); round++ {
		for _, name := range cfg.roundPeers(round, names) {
			if _, err := NewStore(name, cfg.PeerOptions); Skipped(err) {
				continue
			}
			var its []string // the workloads name is a peer of in this round
			for _, w := range names {
				if slices.Contains(cfg.peersOf(w), name) && cfg.inRound(round, w, name) {
					its = append(its, w)
				}
			}
			if len(its) == 0 {
				continue
			}
			cfg.progress("%swriting with %s (%s) ...", cfg.targetRound(round), name, strings.Join(its, ", "))
			results, err := wb.Measure(name, its)
			if err != nil {
				return err
			}
			for _, res := range results {
				k := [2]string{res.Workload, res.Peer}
				samples[k] = append(samples[k], res)
			}
		}
	}
	for _, w := range WriteWorkloads {
		if !slices.Contains(names, w.Name) {
			continue
		}
		for _, name := range cfg.peersOf(w.Name) {
			rs := samples[[2]string{w.Name, name}]
			if len(rs) == 0 {
				rep.Writes = append(rep.Writes, WriteResult{Workload: w.Name, Peer: name, Skipped: true, Unit: w.Unit})
				continue
			}
			rep.Writes = append(rep.Writes, medianWrite(rs))
		}
	}
	return nil
}

// runCache measures the cache workload, each (peer, size) in a child
// process when cfg.ChildCommand is set, in stores under dir.
func runCache(cfg *Config, dir string, rep *Report) error {
	o := cfg.Writes
	samples := map[[2]string][]CacheResult{}
	baseline := map[int][]int64{}
	for round := 1; round <= cfg.Count; round++ {
		for _, keys := range o.CacheKeys {
			if cfg.ChildCommand != nil {
				res, err := runChild(cfg.ChildCommand, dir, noPeer, keys, o.TxRows, cfg.Fixture, cfg.PeerOptions)
				if err != nil {
					return err
				}
				baseline[keys] = append(baseline[keys], res.MaxRSS)
			}
			for _, name := range cfg.Peers {
				if _, err := NewStore(name, cfg.PeerOptions); Skipped(err) {
					continue
				}
				cfg.progress("%scache: %s at %d keys ...", cfg.round(round), name, keys)
				var res CacheResult
				var err error
				if cfg.ChildCommand != nil {
					res, err = runChild(cfg.ChildCommand, dir, name, keys, o.TxRows, cfg.Fixture, cfg.PeerOptions)
				} else {
					res, err = MeasureCache(dir, name, keys, o.TxRows, cfg.Fixture, cfg.PeerOptions)
				}
				if err != nil {
					return err
				}
				k := [2]string{name, strconv.Itoa(keys)}
				samples[k] = append(samples[k], res)
			}
		}
	}
	for _, keys := range o.CacheKeys {
		for _, name := range cfg.Peers {
			rs := samples[[2]string{name, strconv.Itoa(keys)}]
			if len(rs) == 0 {
				rep.Cache = append(rep.Cache, CacheResult{Peer: name, Keys: keys, Skipped: true})
				continue
			}
			rep.Cache = append(rep.Cache, medianCache(rs))
		}
		if b := baseline[keys]; len(b) > 0 {
			if rep.CacheBaseline == nil {
				rep.CacheBaseline = map[int]int64{}
			}
			rep.CacheBaseline[keys] = medianOf(b, func(v int64) float64 { return float64(v) })
		}
	}
	return nil
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
			Mode:        modeOf(p),
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

// medianOf returns the median of xs by key (the lower middle one for an
// even count).
func medianOf[T any](xs []T, key func(T) float64) T {
	sorted := slices.SortedFunc(slices.Values(xs), func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return sorted[(len(sorted)-1)/2]
}

// medianWrite is median for write results; the interleaved ratios are the
// medians of their own, and FloorRatios and PagodaRatios list them by
// round.
func medianWrite(rs []WriteResult) WriteResult {
	m := medianOf(rs, func(r WriteResult) float64 { return r.NsPerOp })
	m.MinNs, m.MaxNs = rangeOf(rs, func(r WriteResult) float64 { return r.NsPerOp })
	m.FloorRatios, m.PagodaRatios, m.RoundNs, m.RoundAllocs, m.RoundBytes, m.RoundFloorNs = nil, nil, nil, nil, nil, nil
	for _, r := range rs {
		m.RoundNs = append(m.RoundNs, r.NsPerOp)
		m.RoundAllocs = append(m.RoundAllocs, r.AllocsPerOp)
		m.RoundBytes = append(m.RoundBytes, r.BytesPerOp)
		m.RoundFloorNs = append(m.RoundFloorNs, r.FloorNs)
		if r.FloorRatio > 0 {
			m.FloorRatios = append(m.FloorRatios, r.FloorRatio)
		}
		if r.PagodaRatio > 0 {
			m.PagodaRatios = append(m.PagodaRatios, r.PagodaRatio)
		}
	}
	if len(m.FloorRatios) > 0 {
		m.FloorRatio = medianOf(m.FloorRatios, identity)
	}
	if len(m.PagodaRatios) > 0 {
		m.PagodaRatio = medianOf(m.PagodaRatios, identity)
	}
	m.AllocsPerOp, m.BytesPerOp = medianFloat(m.RoundAllocs), medianFloat(m.RoundBytes)
	return m
}

func identity(x float64) float64 { return x }

// medianCache returns the median of each measure of the cache results,
// taken separately, with the rounds (rs, in round order) in Rounds.
func medianCache(rs []CacheResult) CacheResult {
	m := rs[0]
	m.InsertNs = medianOf(rs, func(r CacheResult) float64 { return r.InsertNs }).InsertNs
	m.ReadNs = medianOf(rs, func(r CacheResult) float64 { return r.ReadNs }).ReadNs
	m.DeleteNs = medianOf(rs, func(r CacheResult) float64 { return r.DeleteNs }).DeleteNs
	m.FileSize = medianOf(rs, func(r CacheResult) float64 { return float64(r.FileSize) }).FileSize
	m.MaxRSS = medianOf(rs, func(r CacheResult) float64 { return float64(r.MaxRSS) }).MaxRSS
	m.Rounds = rs
	return m
}

// median returns the sample with the median ns/op (the lower middle one for
// an even count), with MinNs and MaxNs spanning all samples and RoundNs
// listing them, rs being in round order; allocs/op and B/op are their own
// medians (RoundAllocs, RoundBytes).
func median(rs []Result) Result {
	sorted := slices.SortedFunc(slices.Values(rs), func(a, b Result) int { return cmp.Compare(a.NsPerOp, b.NsPerOp) })
	m := sorted[(len(sorted)-1)/2]
	m.MinNs, m.MaxNs = sorted[0].NsPerOp, sorted[len(sorted)-1].NsPerOp
	m.RoundNs, m.RoundAllocs, m.RoundBytes = nil, nil, nil
	for _, r := range rs {
		m.RoundNs = append(m.RoundNs, r.NsPerOp)
		m.RoundAllocs = append(m.RoundAllocs, float64(r.AllocsPerOp))
		m.RoundBytes = append(m.RoundBytes, float64(r.BytesPerOp))
	}
	m.AllocsPerOp = int64(medianFloat(m.RoundAllocs))
	m.BytesPerOp = int64(medianFloat(m.RoundBytes))
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
