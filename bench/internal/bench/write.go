package bench

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// WriteWorkload is a named measurement that writes into fresh stores, each
// in a directory of its own that is removed afterwards. Every peer is
// checked after each one (checkRows, on the store reopened after Close).
type WriteWorkload struct {
	Name string
	Doc  string // one line, for reports; %s is where the sizes go
	Unit string // what one operation is: "row" or "commit"
	// Peers, when set, are the only peers the workload runs.
	Peers []string
	// Bucket has pagoda write through its bucket API (a store of
	// bucket t, keys the 8 big-endian bytes of bbolt's and pebble's).
	Bucket bool
}

// bucketWritePeers are the peers of the bucket API's write workloads: the
// key/value stores.
var bucketWritePeers = []string{"pagoda", "bbolt", "pebble"}

// WriteWorkloads lists the write workloads, in report order.
var WriteWorkloads = []WriteWorkload{
	{Name: "load-seq", Doc: "bulk load of %s rows in one transaction, keys in order, timed from Begin to the end of Close", Unit: "row"},
	{Name: "load-rand", Doc: "the same, keys in random order", Unit: "row"},
	{Name: "insert", Doc: "%s random inserts into an empty store, %s per transaction", Unit: "row"},
	{Name: "delete", Doc: "then deletes of %s of those keys, random order, %s per transaction", Unit: "row"},
	{Name: "insert-bucket", Doc: "insert through pagoda's bucket API (Bucket.Put of 8 big-endian bytes)", Unit: "row", Peers: bucketWritePeers, Bucket: true},
	{Name: "delete-bucket", Doc: "delete through pagoda's bucket API (Bucket.Delete)", Unit: "row", Peers: bucketWritePeers, Bucket: true},
	{Name: "commit", Doc: "%s one-row transactions, each durable", Unit: "commit"},
	{Name: "commit-8", Doc: "the same from 8 goroutines at once: pagoda and bbolt with Batch, pebble Set with Sync, SQLite on its one connection (it writes one transaction at a time)", Unit: "commit"},
}

// commitGoroutines is the number of writers of the commit-8 workload.
const commitGoroutines = 8

// WriteOptions are the sizes of the write workloads.
type WriteOptions struct {
	LoadRows   int   // rows of each bulk load (default 1,000,000)
	InsertRows int   // random inserts (default 100,000); delete removes a tenth of them
	TxRows     int   // rows per transaction of insert, delete and cache (default 1,000)
	Commits    int   // durable one-row commits (default 300)
	CacheKeys  []int // key counts of the cache workload (default 500, 5,000, 50,000)
	MemoryRows int   // rows of the memory workload's load (default 10,000,000)
	// MemoryRandRows are the rows of the memory-rand workload's load
	// (default 1,000,000), and MemoryRandLimit the time after which it is
	// stopped, as Limit stops the bulk loads (0 means none).
	MemoryRandRows  int
	MemoryRandLimit time.Duration
	// Limit stops a bulk load (load-seq, load-rand) that has run that
	// long (0 means none): bbolt inserting 1,000,000 keys in random order
	// in one transaction would take hours, since a bbolt node is split
	// only at commit and each insert shifts the growing node's entries.
	// The stopped load reports the rows it wrote in that time, a lower
	// bound of its ns/row.
	Limit time.Duration
}

func (o WriteOptions) withDefaults() WriteOptions {
	if o.LoadRows <= 0 {
		o.LoadRows = 1_000_000
	}
	if o.InsertRows <= 0 {
		o.InsertRows = 100_000
	}
	if o.TxRows <= 0 {
		o.TxRows = 1000
	}
	if o.Commits <= 0 {
		o.Commits = 300
	}
	if o.MemoryRows <= 0 {
		o.MemoryRows = 10_000_000
	}
	if o.MemoryRandRows <= 0 {
		o.MemoryRandRows = memoryRandIssueRows
	}
	if len(o.CacheKeys) == 0 {
		o.CacheKeys = []int{500, 5000, 50_000}
	}
	return o
}

// deleteRows is the number of keys the delete workload deletes.
func (o WriteOptions) deleteRows() int { return max(o.InsertRows/10, 1) }

// WriteResult is one measured (write workload, peer) pair.
type WriteResult struct {
	Workload string
	Peer     string
	Skipped  bool   // the peer has no store (it only reads)
	Mode     string // pagoda's: shared or exclusive (see pagodaMode); "" for the other peers
	Ops      int    // operations timed: rows, or commits
	Unit     string
	NsPerOp  float64       // the median over rounds
	MinNs    float64       // fastest and slowest ns/op over rounds
	MaxNs    float64       //
	RoundNs  []float64     // ns/op of each round, in round order
	Total    time.Duration // the whole timed part, of the median round
	// Stopped says that the load passed WriteOptions.Limit and was stopped
	// (rolled back) after Ops rows: NsPerOp is a lower bound.
	Stopped bool
	// AllocsPerOp and BytesPerOp count Go heap allocations per operation
	// (not the C allocations of mattn).
	AllocsPerOp float64
	BytesPerOp  float64
	// RoundAllocs and RoundBytes are AllocsPerOp and BytesPerOp of each
	// round, in round order (AllocsPerOp and BytesPerOp their medians).
	RoundAllocs, RoundBytes []float64
	FileSize                int64 // the store's files after the workload, once closed
	// WALFrames and Commits are what pagoda wrote in the timed part (0
	// for other peers), and FloorNs the disk floor of that: the time per
	// operation of writing as many bytes, in as many writes each followed
	// by one fdatasync, into a plain file beside the store (see diskFloor).
	WALFrames, Commits uint64
	FloorNs            float64
	// RoundFloorNs is FloorNs of each round, in round order.
	RoundFloorNs []float64
	// FloorRatio, for commit, is pagoda's commit time over its floor's,
	// measured commit by commit in one loop (see interleavedFloor).
	FloorRatio float64
	// PagodaRatio, for commit, is the peer's commit time over pagoda's,
	// measured commit by commit in one loop (see interleavedCommits);
	// for pagoda-exclusive, the exclusive mode's over the shared one's.
	PagodaRatio float64
	// FloorRatios and PagodaRatios are the ratios of each round, in round
	// order, when they were measured (FloorRatio and PagodaRatio are then
	// their medians).
	FloorRatios, PagodaRatios []float64
}

// WriteBench measures the write workloads of any peer with the same rows:
// keys and values, and the random orders, are generated once, before any
// timing.
type WriteBench struct {
	Dir    string // stores are created in directories under it
	Opt    WriteOptions
	Values FixtureOptions // value size and seed
	PeerOptions

	data                          *rowData
	loadRand, inserts, deleteKeys []int64
}

// NewWriteBench returns a WriteBench writing its stores under dir.
func NewWriteBench(dir string, values FixtureOptions, opt WriteOptions, peer PeerOptions) *WriteBench {
	return &WriteBench{Dir: dir, Opt: opt.withDefaults(), Values: values.withDefaults(), PeerOptions: peer}
}

// prepare generates the rows and orders that workloads names need.
func (w *WriteBench) prepare(names []string) {
	o := w.Opt
	n := 0
	if slices.Contains(names, "load-seq") || slices.Contains(names, "load-rand") {
		n = o.LoadRows
	}
	inserts := slices.ContainsFunc(names, isInsertDelete)
	if inserts {
		n = max(n, o.InsertRows)
	}
	if slices.Contains(names, "commit") || slices.Contains(names, "commit-8") {
		n = max(n, o.Commits)
	}
	if w.data == nil || w.data.n < n {
		w.data = newRowData(w.Values, n)
	}
	if slices.Contains(names, "load-rand") && w.loadRand == nil {
		w.loadRand = shuffled(o.LoadRows, w.Values.Seed, saltLoad)
	}
	if inserts && w.inserts == nil {
		w.inserts = shuffled(o.InsertRows, w.Values.Seed, saltInsert)
		w.deleteKeys = shuffled(o.InsertRows, w.Values.Seed, saltDelete)[:o.deleteRows()]
	}
}

// Measure runs the write workloads called names (in the order of
// WriteWorkloads) for peer, each on a fresh store, and returns one result
// per workload. insert and delete share a store: delete deletes from what
// insert inserted (and, asked alone, inserts first without timing it).
// A peer without a store gets Skipped results.
func (w *WriteBench) Measure(peer string, names []string) ([]WriteResult, error) {
	for _, name := range names {
		if _, err := writeWorkload(name); err != nil {
			return nil, err
		}
	}
	if _, err := NewStore(peer, w.PeerOptions); err != nil {
		if !Skipped(err) {
			return nil, err
		}
		var out []WriteResult
		for _, wl := range WriteWorkloads {
			if slices.Contains(names, wl.Name) {
				out = append(out, WriteResult{Workload: wl.Name, Peer: peer, Skipped: true, Unit: wl.Unit})
			}
		}
		return out, nil
	}
	w.prepare(names)
	var out []WriteResult
	for _, wl := range WriteWorkloads {
		if !slices.Contains(names, wl.Name) {
			continue
		}
		var rs []WriteResult
		var err error
		switch wl.Name {
		case "load-seq":
			rs, err = w.measure(peer, func(s Store, dir string) ([]WriteResult, error) {
				return w.load(s, dir, inOrder(w.Opt.LoadRows), true)
			})
		case "load-rand":
			rs, err = w.measure(peer, func(s Store, dir string) ([]WriteResult, error) {
				return w.load(s, dir, w.loadRand, false)
			})
		case "insert", "insert-bucket":
			del := deleteOf(wl.Name)
			rs, err = w.measureStore(peer, wl.Bucket, func(s Store, dir string) ([]WriteResult, error) {
				return w.insertDelete(s, dir, wl.Name, del, true, slices.Contains(names, del))
			})
		case "delete", "delete-bucket":
			if slices.Contains(names, insertOf(wl.Name)) {
				continue // measured with insert
			}
			rs, err = w.measureStore(peer, wl.Bucket, func(s Store, dir string) ([]WriteResult, error) {
				return w.insertDelete(s, dir, insertOf(wl.Name), wl.Name, false, true)
			})
		case "commit":
			rs, err = w.measure(peer, w.commits)
		case "commit-8":
			rs, err = w.measure(peer, w.concurrentCommits)
		}
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %s: %w", peer, wl.Name, err)
		}
		for i := range rs {
			rs[i].Peer = peer
		}
		out = append(out, rs...)
	}
	return out, nil
}

func writeWorkload(name string) (WriteWorkload, error) {
	for _, wl := range WriteWorkloads {
		if wl.Name == name {
			return wl, nil
		}
	}
	return WriteWorkload{}, fmt.Errorf("bench: unknown workload %q", name)
}

// isInsertDelete reports whether name is insert or delete, of either API.
func isInsertDelete(name string) bool {
	return name == "insert" || name == "delete" || name == "insert-bucket" || name == "delete-bucket"
}

// deleteOf and insertOf pair insert with delete, insert-bucket with
// delete-bucket.
func deleteOf(insert string) string { return strings.Replace(insert, "insert", "delete", 1) }
func insertOf(delete string) string { return strings.Replace(delete, "delete", "insert", 1) }

// measure runs fn on a fresh store of peer in a new directory under w.Dir,
// and removes the directory afterwards.
func (w *WriteBench) measure(peer string, fn func(s Store, dir string) ([]WriteResult, error)) (rs []WriteResult, err error) {
	return w.measureStore(peer, false, fn)
}

// measureStore is measure with pagoda's store writing a bucket when bucket
// is set.
func (w *WriteBench) measureStore(peer string, bucket bool, fn func(s Store, dir string) ([]WriteResult, error)) (rs []WriteResult, err error) {
	s, err := NewStore(peer, w.PeerOptions)
	if err != nil {
		return nil, err
	}
	if ps, ok := s.(*pagodaStore); ok {
		ps.bucket = bucket
	}
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(w.Dir, peer+"-")
	if err != nil {
		return nil, err
	}
	defer func() {
		err = errors.Join(err, s.Close(), removeAll(dir))
	}()
	rs, err = fn(s, dir)
	for i := range rs {
		rs[i].Mode = modeOf(s)
	}
	return rs, err
}

// timer measures the time and the Go heap allocations of a timed part.
type timer struct {
	start         time.Time
	mallocs, heap uint64
}

// startTimer collects garbage (so that one peer's does not land on the
// next), then starts timing.
func startTimer() *timer {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return &timer{mallocs: ms.Mallocs, heap: ms.TotalAlloc, start: time.Now()}
}

// stop ends the timed part of ops operations and returns its result.
func (t *timer) stop(workload string, ops int) WriteResult {
	d := time.Since(t.start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	wl, _ := writeWorkload(workload)
	ns := float64(d.Nanoseconds()) / float64(ops)
	return WriteResult{
		Workload:    workload,
		Ops:         ops,
		Unit:        wl.Unit,
		NsPerOp:     ns,
		MinNs:       ns,
		MaxNs:       ns,
		Total:       d,
		AllocsPerOp: float64(ms.Mallocs-t.mallocs) / float64(ops),
		BytesPerOp:  float64(ms.TotalAlloc-t.heap) / float64(ops),
	}
}

// errStopped says that a load passed WriteOptions.Limit.
var errStopped = errors.New("stopped at the time limit")

// writeRows inserts keys (or deletes them, with del), txRows per
// transaction; txRows <= 0 means all in one. Past deadline (unless zero)
// it stops, with the transaction still open, and returns the number of
// rows written and errStopped.
func writeRows(s Store, d *rowData, keys []int64, txRows int, del bool, deadline time.Time) (int, error) {
	if txRows <= 0 {
		txRows = len(keys)
	}
	done := 0
	for chunk := range slices.Chunk(keys, txRows) {
		if err := s.Begin(); err != nil {
			return done, err
		}
		for _, k := range chunk {
			if done%1024 == 0 && !deadline.IsZero() && time.Now().After(deadline) {
				return done, errStopped
			}
			var err error
			if del {
				err = s.Delete(k)
			} else {
				err = s.Insert(k, d.value(k))
			}
			if err != nil {
				op := "insert"
				if del {
					op = "delete"
				}
				return done, fmt.Errorf("%s key %d: %w", op, k, err)
			}
			done++
		}
		if err := s.Commit(); err != nil {
			return done, fmt.Errorf("commit: %w", err)
		}
	}
	return done, nil
}

// closeCheck closes s, measures the size of its files, reopens it and
// checks that it holds exactly want. It leaves s open.
func closeCheck(s Store, dir string, d *rowData, want *keySet) (size int64, err error) {
	if err := s.Close(); err != nil {
		return 0, fmt.Errorf("close: %w", err)
	}
	return sizeCheck(s, dir, d, want)
}

// sizeCheck is closeCheck for a closed store.
func sizeCheck(s Store, dir string, d *rowData, want *keySet) (size int64, err error) {
	if size, err = dirSize(dir); err != nil {
		return 0, err
	}
	if err := s.Open(dir, StoreOptions{}); err != nil {
		return 0, fmt.Errorf("reopen: %w", err)
	}
	return size, checkRows(s, d, want)
}

// flusher is a store whose Close leaves the rows of a load in its log:
// pebble, whose Close does not flush its memtable into sstables.
type flusher interface{ Flush() error }

// load writes keys into an empty store in one transaction, timed from
// Begin to the end of Close, when every engine has put the rows where they
// stay (SQLite and pagoda checkpoint their WAL into the database file;
// pebble's memtable is flushed into sstables first, Flush, since its Close
// leaves them in its WAL).
func (w *WriteBench) load(s Store, dir string, keys []int64, sequential bool) ([]WriteResult, error) {
	name := "load-rand"
	if sequential {
		name = "load-seq"
	}
	if err := s.Open(dir, StoreOptions{Sequential: sequential}); err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	var deadline time.Time
	if w.Opt.Limit > 0 {
		deadline = time.Now().Add(w.Opt.Limit)
	}
	t := startTimer()
	done, err := writeRows(s, w.data, keys, 0, false, deadline)
	if errors.Is(err, errStopped) {
		res := t.stop(name, done)
		res.Stopped = true
		return []WriteResult{res}, nil // the deferred Close rolls back
	}
	if err != nil {
		return nil, err
	}
	if f, ok := s.(flusher); ok {
		if err := f.Flush(); err != nil {
			return nil, fmt.Errorf("flush: %w", err)
		}
	}
	if err := s.Close(); err != nil {
		return nil, fmt.Errorf("close: %w", err)
	}
	res := t.stop(name, len(keys))
	res.FileSize, err = sizeCheck(s, dir, w.data, newKeySet(len(keys), keys))
	return []WriteResult{res}, err
}

// insertDelete inserts w.inserts into an empty store, TxRows per
// transaction, then deletes w.deleteKeys, checking the store after each
// phase; it times the phases asked for, as workloads insName and delName.
func (w *WriteBench) insertDelete(s Store, dir, insName, delName string, timeInsert, timeDelete bool) ([]WriteResult, error) {
	if err := s.Open(dir, StoreOptions{}); err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	var out []WriteResult
	w0 := walStatsOf(s)
	t := startTimer()
	if _, err := writeRows(s, w.data, w.inserts, w.Opt.TxRows, false, time.Time{}); err != nil {
		return nil, err
	}
	ins := t.stop(insName, len(w.inserts))
	if err := w.floor(&ins, s, dir, w0); err != nil {
		return nil, err
	}
	want := newKeySet(len(w.inserts), w.inserts)
	var err error
	if ins.FileSize, err = closeCheck(s, dir, w.data, want); err != nil {
		return nil, err
	}
	if timeInsert {
		out = append(out, ins)
	}
	if !timeDelete {
		return out, nil
	}
	w0 = walStatsOf(s)
	t = startTimer()
	if _, err := writeRows(s, w.data, w.deleteKeys, w.Opt.TxRows, true, time.Time{}); err != nil {
		return nil, err
	}
	del := t.stop(delName, len(w.deleteKeys))
	if err := w.floor(&del, s, dir, w0); err != nil {
		return nil, err
	}
	for _, k := range w.deleteKeys {
		want.remove(k)
	}
	if del.FileSize, err = closeCheck(s, dir, w.data, want); err != nil {
		return nil, err
	}
	return append(out, del), nil
}

// commits writes Commits one-row transactions (keys in order) into an
// empty store, each committed durably.
func (w *WriteBench) commits(s Store, dir string) ([]WriteResult, error) {
	if err := s.Open(dir, StoreOptions{}); err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	keys := inOrder(w.Opt.Commits)
	settleDisk()
	t := startTimer()
	if _, err := writeRows(s, w.data, keys, 1, false, time.Time{}); err != nil {
		return nil, err
	}
	res := t.stop("commit", len(keys))
	if s.Name() == "pagoda" {
		c, f, err := w.interleavedFloor(s.Name(), len(keys))
		if err != nil {
			return nil, fmt.Errorf("disk floor: %w", err)
		}
		res.FloorNs, res.FloorRatio = float64(f.Nanoseconds())/float64(len(keys)), float64(c)/float64(f)
	} else {
		p, c, err := w.interleavedCommits(s.Name(), len(keys))
		if err != nil {
			return nil, fmt.Errorf("commits beside pagoda's: %w", err)
		}
		res.PagodaRatio = float64(c) / float64(p)
	}
	var err error
	res.FileSize, err = closeCheck(s, dir, w.data, newKeySet(len(keys), keys))
	return []WriteResult{res}, err
}

// interleavedFloor measures the disk floor of a one-row commit against
// the commits themselves: n one-row transactions into a fresh store of
// peer, each followed by an append of 4 KiB and fdatasync to a plain file
// beside it, commit by commit, so that both meet the disk in the same
// state (its sync latency drifts from one minute to the next). It returns
// the time the commits took and the time the appends took.
func (w *WriteBench) interleavedFloor(peer string, n int) (commits, floor time.Duration, err error) {
	s, err := NewStore(peer, w.PeerOptions)
	if err != nil {
		return 0, 0, err
	}
	dir, err := os.MkdirTemp(w.Dir, peer+"-floor-")
	if err != nil {
		return 0, 0, err
	}
	defer func() { err = errors.Join(err, removeAll(dir)) }()
	if err := s.Open(dir, StoreOptions{}); err != nil {
		return 0, 0, err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	f, err := os.CreateTemp(dir, "floor-")
	if err != nil {
		return 0, 0, err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	buf := make([]byte, 4096)
	settleDisk()
	for i, k := range inOrder(n) {
		t0 := time.Now()
		if _, err := writeRows(s, w.data, []int64{k}, 1, false, time.Time{}); err != nil {
			return 0, 0, err
		}
		t1 := time.Now()
		if _, err := f.WriteAt(buf, int64(i)*int64(len(buf))); err != nil {
			return 0, 0, err
		}
		if err := datasync(f); err != nil {
			return 0, 0, err
		}
		commits, floor = commits+t1.Sub(t0), floor+time.Since(t1)
	}
	return commits, floor, nil
}

// interleavedCommits commits n one-row transactions into a fresh pagoda
// store and n into a fresh store of peer, alternately (pagoda's first, then
// the peer's first, and so on), so that both meet the disk in the same
// state, and returns the time each took.
func (w *WriteBench) interleavedCommits(peer string, n int) (pagoda, other time.Duration, err error) {
	var stores [2]Store
	for i, name := range []string{"pagoda", peer} {
		s, err := NewStore(name, w.PeerOptions)
		if err != nil {
			return 0, 0, err
		}
		dir, err := os.MkdirTemp(w.Dir, name+"-ab-")
		if err != nil {
			return 0, 0, err
		}
		defer func() { err = errors.Join(err, removeAll(dir)) }()
		if err := s.Open(dir, StoreOptions{}); err != nil {
			return 0, 0, err
		}
		defer func() { err = errors.Join(err, s.Close()) }()
		stores[i] = s
	}
	var took [2]time.Duration
	settleDisk()
	for j, k := range inOrder(n) {
		order := [2]int{0, 1}
		if j%2 == 1 {
			order = [2]int{1, 0}
		}
		for _, i := range order {
			s := stores[i]
			t0 := time.Now()
			if _, err := writeRows(s, w.data, []int64{k}, 1, false, time.Time{}); err != nil {
				return 0, 0, err
			}
			took[i] += time.Since(t0)
		}
	}
	return took[0], took[1], nil
}

// concurrentStore is a store that can take durable one-row transactions
// from many goroutines at once, each call its own transaction, committed
// the way the engine offers to concurrent writers.
type concurrentStore interface {
	InsertDurable(key int64, v []byte) error
}

// concurrentCommits writes Commits one-row transactions (keys in order)
// into an empty store from commitGoroutines goroutines at once.
func (w *WriteBench) concurrentCommits(s Store, dir string) ([]WriteResult, error) {
	cs, ok := s.(concurrentStore)
	if !ok {
		return nil, fmt.Errorf("%s has no concurrent writes", s.Name())
	}
	if err := s.Open(dir, StoreOptions{}); err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	keys := inOrder(w.Opt.Commits)
	errs := make(chan error, commitGoroutines)
	settleDisk()
	t := startTimer()
	for g := range commitGoroutines {
		go func() {
			var err error
			for i := g; i < len(keys) && err == nil; i += commitGoroutines {
				if err = cs.InsertDurable(keys[i], w.data.value(keys[i])); err != nil {
					err = fmt.Errorf("insert key %d: %w", keys[i], err)
				}
			}
			errs <- err
		}()
	}
	var err error
	for range commitGoroutines {
		err = errors.Join(err, <-errs)
	}
	if err != nil {
		return nil, err
	}
	res := t.stop("commit-8", len(keys))
	res.FileSize, err = closeCheck(s, dir, w.data, newKeySet(len(keys), keys))
	return []WriteResult{res}, err
}
