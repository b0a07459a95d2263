package bench

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"time"
)

// The memory-rand workload (issue #31) prices a load in random order: a
// fresh store gets MemoryRandRows rows in one transaction, in a child
// process of its own as the memory workload's, but with keys in random
// order and each engine with its default options: pagoda with a nil
// *Options (CacheSize 64 MiB), the SQLite peers in WAL mode with
// synchronous=FULL and SQLite's default cache (no SQLitePragmas), bbolt
// and pebble as they come. The child reports the peak anonymous memory,
// the peak resident memory, the time from Begin to the end of Close and
// the size of the files after Close, then reopens the store and checks
// its rows (countRows), after taking the memory figures: the check reads
// the whole file.
//
// The keys come from a randOrder, computed one at a time: an array of
// 1,000,000 keys would count in the memory measured. Every peer gets the
// same order (the fixture's seed). A load still running after
// WriteOptions.MemoryRandLimit is stopped and rolled back, its figures lower
// bounds: bbolt would take hours, since it splits a node only at commit
// and each insert shifts the growing node's entries.

// MemoryRandWorkload is the name of the memory-rand workload.
const MemoryRandWorkload = "memory-rand"

// MemoryRandLimit is the peak resident memory issue #31 allows pagoda
// loading 1,000,000 rows in random order.
const MemoryRandLimit = 200 << 20

// memoryRandIssueRows is the load of issue #31's target.
const memoryRandIssueRows = 1_000_000

// saltMemoryRand keys the randOrder of the memory-rand workload.
const saltMemoryRand = 0x6d72616e64 // "mrand"

// randOrder is a permutation of 0..n-1 computed index by index in
// constant memory (format-preserving encryption):
//
//  1. The domain is 0..2^(2h)-1, the smallest even number of bits (2h >= 2)
//     that holds n-1: less than 4n values.
//  2. On it, a 4-round Feistel network keyed by the seed permutes: the h
//     high and h low bits (l, r) become (r, l xor F(r, key)) in each round,
//     a bijection whatever F is.
//  3. at(i) applies the network to i, again and again, until the value is
//     below n (cycle walking): the walk stays on i's cycle, which returns to
//     i < n, so it ends, and two indexes never reach the same value. Fewer
//     than 4 steps on average.
type randOrder struct {
	n    uint64
	half uint   // h, bits of each half
	mask uint64 // 2^h - 1
	keys [4]uint64
}

func newRandOrder(n int, seed uint64) randOrder {
	b := max(bits.Len64(uint64(max(n, 1)-1)), 2)
	b += b & 1
	o := randOrder{n: uint64(n), half: uint(b / 2), mask: 1<<(b/2) - 1}
	r := rand.New(rand.NewPCG(seed, saltMemoryRand))
	for i := range o.keys {
		o.keys[i] = r.Uint64()
	}
	return o
}

// at returns the i-th value of the order, 0 <= i < n.
func (o randOrder) at(i int) int64 {
	x := uint64(i)
	for {
		l, r := x>>o.half, x&o.mask
		for _, k := range o.keys {
			l, r = r, l^(mix64(r^k)&o.mask)
		}
		if x = l<<o.half | r; x < o.n {
			return int64(x)
		}
	}
}

// mix64 is splitmix64's finalizer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// loadRandom inserts keys 1..rows in one transaction in the order of
// newRandOrder(rows, values.Seed), each value generated just before its
// insert. Past deadline (unless zero) it stops, checking every 1,024
// rows, with the transaction open, and returns the rows inserted and
// errStopped.
func loadRandom(s Store, values FixtureOptions, rows int, deadline time.Time) (int, error) {
	order := newRandOrder(rows, values.Seed)
	if err := s.Begin(); err != nil {
		return 0, err
	}
	v := make([]byte, 0, values.ValueSize)
	for i := range rows {
		if i > 0 && i%1024 == 0 && !deadline.IsZero() && time.Now().After(deadline) {
			return i, errStopped
		}
		k := order.at(i) + 1
		v = values.Value(v[:0], k)
		if err := s.Insert(k, v); err != nil {
			return i, fmt.Errorf("insert key %d: %w", k, err)
		}
	}
	return rows, s.Commit()
}

// MeasureMemoryRand loads rows rows in random order into a fresh store of
// peer with its default options, in a new directory under dir that it
// removes, stopping after limit (0: never), and returns the figures. Run
// it in a process of its own (RunChild with -memory-rand-rows), as
// MeasureMemory.
func MeasureMemoryRand(dir, peer string, rows int, values FixtureOptions, limit time.Duration) (MemoryResult, error) {
	var deadline time.Time
	if limit > 0 {
		deadline = time.Now().Add(limit)
	}
	return measureLoad(dir, peer, "memory-rand", rows, values, PeerOptions{SQLiteDefaults: true},
		StoreOptions{Defaults: true}, StoreOptions{Defaults: true},
		func(s Store) (int, error) {
			loaded, err := loadRandom(s, values.withDefaults(), rows, deadline)
			switch {
			case errors.Is(err, errStopped):
				if err := s.Close(); err != nil { // rolls back
					return loaded, err
				}
				return loaded, errStopped
			case err != nil:
				return loaded, err
			}
			if f, ok := s.(flusher); ok { // pebble: the rows into sstables, as load-rand
				err = f.Flush()
			}
			return loaded, errors.Join(err, s.Close())
		})
}

// runMemoryRand measures the memory-rand workload, each peer in a child
// process when cfg.ChildCommand is set (else in this process, reporting
// no memory), as runMemory.
func runMemoryRand(cfg *Config, dir string, rep *Report) error {
	rows, limit := cfg.Writes.MemoryRandRows, cfg.Writes.MemoryRandLimit
	var err error
	rep.MemoryRand, err = runLoads(cfg, rows, "memory-rand: %s loading %d rows in random order ...", func(name string) (MemoryResult, error) {
		if cfg.ChildCommand != nil {
			return runLoadChild(cfg.ChildCommand, dir, name, MemoryRandWorkload, rows, cfg.Fixture, cfg.PeerOptions,
				"-memory-rand-rows", strconv.Itoa(rows), "-limit", limit.String())
		}
		return MeasureMemoryRand(dir, name, rows, cfg.Fixture, limit)
	})
	return err
}

// memoryRandTargets are issue #31's targets on the memory-rand workload:
//
//  1. pagoda's peak resident memory under MemoryRandLimit (200 MiB),
//     the median of the rounds;
//  2. pagoda's files no larger than SQLite's (the first of sqlitePeers
//     that ran), the median of the rounds' ratios.
//
// Neither is printed without pagoda's figures. A load stopped at the
// time limit decides only what its lower bounds already fail.
func (r *Report) memoryRandTargets() []string {
	var p *MemoryResult
	for i, res := range r.MemoryRand {
		if res.Peer == "pagoda" && !res.Skipped {
			p = &r.MemoryRand[i]
		}
	}
	if p == nil {
		return nil
	}
	const is = "issue #31: memory-rand: "
	note := ""
	if p.Rows < memoryRandIssueRows {
		note = fmt.Sprintf(" (the issue's figure is for %s rows)", group(memoryRandIssueRows))
	}
	stopped := fmt.Sprintf("undecided (stopped at the time limit after %s rows)", group(int64(p.Loaded)))
	var out []string
	if p.MaxRSS > 0 {
		rss := roundsOf(*p, func(r MemoryResult) float64 { return float64(r.MaxRSS) })
		v := verdict(p.MaxRSS < MemoryRandLimit)
		if p.Stopped && p.MaxRSS < MemoryRandLimit {
			v = stopped
		}
		out = append(out, fmt.Sprintf(is+"pagoda peak RSS %s, want < %s: %s%s", mibFigure(rss), mib(MemoryRandLimit), v, note))
	}
	for _, peer := range sqlitePeers {
		var s *MemoryResult
		for i, res := range r.MemoryRand {
			if res.Peer == peer && !res.Skipped && !res.Stopped && res.FileSize > 0 {
				s = &r.MemoryRand[i]
			}
		}
		if s == nil {
			continue
		}
		if p.Stopped || p.FileSize == 0 {
			out = append(out, fmt.Sprintf(is+"pagoda's file vs SQLite's (%s): want <= 1x: %s", peer, stopped))
			break
		}
		size := func(r MemoryResult) float64 { return float64(r.FileSize) }
		x, fig := pairedFigure(roundsOf(*p, size), roundsOf(*s, size))
		out = append(out, fmt.Sprintf(is+"pagoda's file vs SQLite's (%s): %s, want <= 1x: %s (pagoda %s, %s %s)%s",
			peer, fig, verdict(x <= 1), mb(p.FileSize), peer, mb(s.FileSize), note))
		break
	}
	return out
}

// roundsOf is f of each round of res (res alone when it has no rounds).
func roundsOf(res MemoryResult, f func(MemoryResult) float64) []float64 {
	rs := res.Rounds
	if len(rs) == 0 {
		rs = []MemoryResult{res}
	}
	out := make([]float64, len(rs))
	for i, x := range rs {
		out[i] = f(x)
	}
	return out
}

// mib formats a size in bytes as MiB (2^20 bytes), as the issue states
// its target.
func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// mibFigure is the median of sizes in MiB, with its spread: "103 MiB
// (median of 3 rounds, 99-108)", or "103 MiB (1 round)".
func mibFigure(xs []float64) string {
	m := medianFloat(xs)
	if len(xs) == 1 {
		return mib(int64(m)) + " (1 round)"
	}
	lo, hi := rangeOf(xs, identity)
	n := func(x float64) string { return fmt.Sprintf("%.0f", x/(1<<20)) }
	return fmt.Sprintf("%s (median of %d rounds, %s-%s)", mib(int64(m)), len(xs), n(lo), n(hi))
}

func (r *Report) printMemoryRand(p *printer) {
	o := r.Config.Writes
	p.printf("memory-rand: a fresh store loads %s rows, keys in random order, in one transaction, each engine with its\n", group(int64(o.MemoryRandRows)))
	p.printf("  default options: pagoda's nil *Options (CacheSize 64 MiB), SQLite in WAL mode with synchronous=FULL and its\n")
	stop := ""
	if o.MemoryRandLimit > 0 {
		stop = fmt.Sprintf("; a load running after %s is stopped", o.MemoryRandLimit)
	}
	p.printf("  default cache, bbolt and pebble as they come%s%s\n", stop, roundsNote(r.Config.Count))
	if r.Config.ChildCommand != nil {
		p.printf("each peer in a child process of its own: peak anon and max RSS as in memory, taken before the check; file: after Close\n\n")
	} else {
		p.printf("peers ran in this process: no memory figures\n\n")
	}
	head := []string{"rows", "peer", "load", "ns/row", "peak anon", "max RSS", "file"}
	out := [][]string{head}
	for _, res := range r.MemoryRand {
		n := group(int64(res.Rows))
		if res.Skipped {
			out = append(out, skippedRow(head, n, res.Peer))
			continue
		}
		load, file, bound := durString(time.Duration(res.NsPerRow*float64(res.Rows))), mb(res.FileSize), ""
		if res.Stopped {
			load, file, bound = "stopped at "+group(int64(res.Loaded)), "-", ">=" // lower bounds
		}
		mbf := func(x float64) string { return mb(int64(x)) }
		size := func(n int64, f func(MemoryResult) float64) string {
			if n == 0 {
				return "-"
			}
			return bound + figureString(roundsOf(res, f), mbf)
		}
		out = append(out, []string{n, res.Peer, load,
			bound + figureString(roundsOf(res, func(x MemoryResult) float64 { return x.NsPerRow }), nsString),
			size(res.PeakAnon, func(x MemoryResult) float64 { return float64(x.PeakAnon) }),
			size(res.MaxRSS, func(x MemoryResult) float64 { return float64(x.MaxRSS) }),
			file})
	}
	p.table(out, 2)
}
