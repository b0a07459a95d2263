package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	raftwal "github.com/hashicorp/raft-wal"

	"github.com/pagodadb/pagoda/raftstore"
)

// The raft workloads (issue #32) compare hashicorp/raft's log stores:
// pagoda's raftstore, raft-boltdb v2 and raft-wal, each with its defaults
// (every StoreLogs durable: raftstore SyncFull, raft-boltdb an fsync per
// commit, raft-wal an fsync per append).
//
// raft-boltdb is v2.3.0: v2.3.1 imports github.com/hashicorp/go-metrics/compat,
// which go-metrics v0.7.0 (the version raft v1.8.0 requires, and so MVS
// picks) no longer has, so that v2.3.1 does not build beside raft v1.8.0;
// v2.3.0's code is v2.3.1's but for that import (armon/go-metrics instead).
//
// RaftWorkload selects them all.
const RaftWorkload = "raft"

// RaftWorkloads are the raft workloads, in report order.
var RaftWorkloads = []WriteWorkload{
	{Name: "raft-store-1", Doc: "%s StoreLogs of one %s-byte entry each, into a fresh store of each, the stores interleaved call by call", Unit: "entry"},
	{Name: "raft-store-64", Doc: "%s StoreLogs of 64 entries each, the same way", Unit: "entry"},
	{Name: "raft-getlog", Doc: "%s GetLog of random indexes of a store of %s entries", Unit: "call"},
	{Name: "raft-truncate", Doc: "DeleteRange of the first %s entries of that store (head truncation, as after a snapshot); file: the store's after it", Unit: "entry"},
	{Name: "raft-apply", Doc: "3-node cluster (raft.NewInmemTransport, in one process), the store as log and stable store of each node: %s Apply, one at a time", Unit: "apply"},
	{Name: "raft-apply-64", Doc: "the same, %s Apply, 64 in flight at a time", Unit: "apply"},
}

// Raft log stores (peers of the raft workloads only).
const (
	raftStorePeer = "raftstore"
	raftBoltPeer  = "raft-boltdb"
	raftWALPeer   = "raft-wal"
)

// RaftPeers are the stores of the raft workloads; the cluster workloads
// run raftstore and raft-boltdb only (issue #32).
var RaftPeers = []string{raftStorePeer, raftBoltPeer, raftWALPeer}

// raftClusterPeers are the stores of raft-apply and raft-apply-64.
var raftClusterPeers = []string{raftStorePeer, raftBoltPeer}

// RaftOptions are the sizes of the raft workloads.
type RaftOptions struct {
	EntrySize int // bytes of data per entry (default 256)
	Store1    int // StoreLogs calls of raft-store-1 (default 500)
	Store64   int // StoreLogs calls of raft-store-64 (default 2/5 of Store1)
	Truncate  int // entries deleted from the head (default 100,000)
	Keep      int // entries left after the truncation (default a tenth of Truncate)
	GetLogs   int // GetLog calls (default Truncate)
	Applies   int // applies of raft-apply (default 300); raft-apply-64 makes 8 times as many
}

func (o RaftOptions) withDefaults() RaftOptions {
	if o.EntrySize <= 0 {
		o.EntrySize = 256
	}
	if o.Store1 <= 0 {
		o.Store1 = 500
	}
	if o.Store64 <= 0 {
		o.Store64 = max(o.Store1*2/5, 1)
	}
	if o.Truncate <= 0 {
		o.Truncate = 100_000
	}
	if o.Keep <= 0 {
		o.Keep = max(o.Truncate/10, 1)
	}
	if o.GetLogs <= 0 {
		o.GetLogs = o.Truncate
	}
	if o.Applies <= 0 {
		o.Applies = 300
	}
	return o
}

// raftLogStore is a log store of the raft workloads.
type raftLogStore interface {
	raft.LogStore
	raft.StableStore
	io.Closer
}

// openRaftStore opens (creating) peer's store in dir, which exists.
func openRaftStore(peer, dir string) (raftLogStore, error) {
	switch peer {
	case raftStorePeer:
		return raftstore.Open(filepath.Join(dir, "raft.db"), nil)
	case raftBoltPeer:
		return raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	case raftWALPeer:
		return raftwal.Open(dir)
	}
	return nil, fmt.Errorf("bench: unknown raft store %q (want one of %s)", peer, strings.Join(RaftPeers, ", "))
}

// isRaftWAL reports whether s is raft-wal's.
func isRaftWAL(s raftLogStore) bool {
	_, ok := s.(*raftwal.WAL)
	return ok
}

// raftEntries makes n entries of data from index first, term 1, as raft
// hands them over (AppendedAt set).
func raftEntries(first uint64, n int, data []byte) []*raft.Log {
	at := time.Unix(1_700_000_000, 0)
	logs := make([]*raft.Log, n)
	for i := range logs {
		logs[i] = &raft.Log{Index: first + uint64(i), Term: 1, Type: raft.LogCommand, Data: data, AppendedAt: at}
	}
	return logs
}

// raftData is the data of every entry: size reproducible random bytes.
func raftData(size int) []byte {
	return FixtureOptions{ValueSize: size, Seed: 32}.Value(nil, 1)
}

// runRaft measures the raft workloads called names in stores under dir,
// cfg.Count rounds, the stores in a rotated order each round.
func runRaft(cfg *Config, dir string, names []string, rep *Report) error {
	o := cfg.Raft.withDefaults()
	data := raftData(o.EntrySize)
	samples := map[[2]string][]WriteResult{}
	for round := 1; round <= cfg.Count; round++ {
		peers := slices.Clone(RaftPeers)
		k := (round - 1) % len(peers)
		peers = append(peers[k:], peers[:k]...)
		for _, batch := range []int{1, 64} {
			name := fmt.Sprintf("raft-store-%d", batch)
			if !slices.Contains(names, name) {
				continue
			}
			calls := o.Store1
			if batch == 64 {
				calls = o.Store64
			}
			cfg.progress("%sraft: %s, the stores interleaved call by call ...", cfg.round(round), name)
			rs, err := raftStoreLogs(dir, peers, name, calls, batch, data)
			if err != nil {
				return fmt.Errorf("bench: raft: %s: %w", name, err)
			}
			for _, r := range rs {
				k := [2]string{r.Workload, r.Peer}
				samples[k] = append(samples[k], r)
			}
		}
		for _, peer := range peers {
			cfg.progress("%sraft: measuring %s ...", cfg.round(round), peer)
			rs, err := measureRaft(dir, peer, names, o, data)
			if err != nil {
				return fmt.Errorf("bench: raft: %s: %w", peer, err)
			}
			for _, r := range rs {
				k := [2]string{r.Workload, r.Peer}
				samples[k] = append(samples[k], r)
			}
		}
	}
	for _, w := range RaftWorkloads {
		if !slices.Contains(names, w.Name) {
			continue
		}
		for _, peer := range RaftPeersOf(w.Name) {
			if rs := samples[[2]string{w.Name, peer}]; len(rs) > 0 {
				rep.Raft = append(rep.Raft, medianWrite(rs))
			}
		}
	}
	return nil
}

// RaftPeersOf returns the stores of raft workload name.
func RaftPeersOf(name string) []string {
	if strings.HasPrefix(name, "raft-apply") {
		return raftClusterPeers
	}
	return RaftPeers
}

// measureRaft runs the raft workloads names with peer's store, each on a
// fresh one in a directory under dir that it removes.
func measureRaft(dir, peer string, names []string, o RaftOptions, data []byte) ([]WriteResult, error) {
	var out []WriteResult
	has := func(n string) bool { return slices.Contains(names, n) }
	if has("raft-getlog") || has("raft-truncate") {
		var rs []WriteResult
		_, err := inRaftDir(dir, peer, func(s raftLogStore, d string) (WriteResult, error) {
			var err error
			rs, err = raftReadTruncate(s, d, o, data, has("raft-getlog"), has("raft-truncate"))
			return WriteResult{}, err
		})
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	if slices.Contains(raftClusterPeers, peer) && (has("raft-apply") || has("raft-apply-64")) {
		var ws []raftApplies
		if has("raft-apply") {
			ws = append(ws, raftApplies{"raft-apply", o.Applies, 1})
		}
		if has("raft-apply-64") {
			ws = append(ws, raftApplies{"raft-apply-64", 8 * o.Applies, 64})
		}
		d, err := os.MkdirTemp(dir, peer+"-cluster-")
		if err != nil {
			return nil, err
		}
		rs, err := raftCluster(d, peer, ws, data)
		if err = errors.Join(err, removeAll(d)); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		out = append(out, rs...)
	}
	for i := range out {
		out[i].Peer = peer
		if wl, ok := raftWorkload(out[i].Workload); ok {
			out[i].Unit = wl.Unit
		}
	}
	return out, nil
}

// raftWorkload returns the raft workload called name.
func raftWorkload(name string) (WriteWorkload, bool) {
	i := slices.IndexFunc(RaftWorkloads, func(w WriteWorkload) bool { return w.Name == name })
	if i < 0 {
		return WriteWorkload{}, false
	}
	return RaftWorkloads[i], true
}

// inRaftDir runs fn on a fresh store of peer in a new directory under dir,
// closes the store and removes the directory.
func inRaftDir(dir, peer string, fn func(s raftLogStore, dir string) (WriteResult, error)) (res WriteResult, err error) {
	d, err := os.MkdirTemp(dir, peer+"-")
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, removeAll(d)) }()
	s, err := openRaftStore(peer, d)
	if err != nil {
		return res, err
	}
	defer func() {
		if s != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	return fn(s, d)
}

// raftStoreLogs times calls StoreLogs of batch entries each into a fresh
// store of each of peers, interleaved call by call (the peers' order
// rotating from one call to the next), so that every store meets the disk
// in the same state: its sync latency drifts from one moment to the next,
// more than the stores differ. It then checks that each store holds every
// entry, and counts each one's allocations in raftAllocCalls more calls
// of its own.
func raftStoreLogs(dir string, peers []string, name string, calls, batch int, data []byte) (out []WriteResult, err error) {
	stores := make([]raftLogStore, len(peers))
	dirs := make([]string, len(peers))
	defer func() {
		for i, s := range stores {
			if s != nil {
				err = errors.Join(err, s.Close())
			}
			if dirs[i] != "" {
				err = errors.Join(err, removeAll(dirs[i]))
			}
		}
	}()
	for i, peer := range peers {
		if dirs[i], err = os.MkdirTemp(dir, peer+"-"); err != nil {
			return nil, err
		}
		if stores[i], err = openRaftStore(peer, dirs[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", peer, err)
		}
	}
	logs := raftEntries(1, batch, data)
	took := make([]time.Duration, len(peers))
	next := uint64(1)
	runtime.GC()
	for c := range calls {
		for j := range peers {
			i := (c + j) % len(peers)
			for k, l := range logs {
				l.Index = next + uint64(k)
			}
			t0 := time.Now()
			if err := stores[i].StoreLogs(logs); err != nil {
				return nil, fmt.Errorf("%s: %w", peers[i], err)
			}
			took[i] += time.Since(t0)
		}
		next += uint64(batch)
	}
	for i, peer := range peers {
		if err := checkRaftLog(stores[i], 1, next-1, data); err != nil {
			return nil, fmt.Errorf("%s: %w", peer, err)
		}
		size, err := dirSize(dirs[i])
		if err != nil {
			return nil, err
		}
		ops := calls * batch
		ns := float64(took[i].Nanoseconds()) / float64(ops)
		res := WriteResult{Workload: name, Peer: peer, Ops: ops, NsPerOp: ns, MinNs: ns, MaxNs: ns, Total: took[i], FileSize: size}
		// Allocations, in calls of this store alone (not timed).
		t := startTimer()
		for range raftAllocCalls {
			for k, l := range logs {
				l.Index = next + uint64(k)
			}
			if err := stores[i].StoreLogs(logs); err != nil {
				return nil, fmt.Errorf("%s: %w", peer, err)
			}
			next += uint64(batch)
		}
		a := t.stop(name, raftAllocCalls*batch)
		res.AllocsPerOp, res.BytesPerOp = a.AllocsPerOp, a.BytesPerOp
		next -= uint64(raftAllocCalls * batch) // the next store starts where this one did
		out = append(out, res)
	}
	return out, nil
}

// raftAllocCalls is the calls in which raftStoreLogs counts a store's
// allocations.
const raftAllocCalls = 20

// raftFillBatch is the entries per StoreLogs when raft-getlog and
// raft-truncate fill their store (untimed).
const raftFillBatch = 1000

// raftReadTruncate fills s with o.Truncate+o.Keep entries, then times
// o.GetLogs random GetLog calls (getlog) and the DeleteRange of the first
// o.Truncate entries (truncate), checking the log after each.
func raftReadTruncate(s raftLogStore, dir string, o RaftOptions, data []byte, getlog, truncate bool) ([]WriteResult, error) {
	n := o.Truncate + o.Keep
	for first := 1; first <= n; first += raftFillBatch {
		if err := s.StoreLogs(raftEntries(uint64(first), min(raftFillBatch, n-first+1), data)); err != nil {
			return nil, fmt.Errorf("fill: %w", err)
		}
	}
	var out []WriteResult
	if getlog {
		r := rand.New(rand.NewPCG(32, uint64(n)))
		idx := make([]uint64, o.GetLogs)
		for i := range idx {
			idx[i] = 1 + r.Uint64N(uint64(n))
		}
		var l raft.Log
		sum := 0
		t := startTimer()
		for _, i := range idx {
			if err := s.GetLog(i, &l); err != nil {
				return nil, fmt.Errorf("GetLog(%d): %w", i, err)
			}
			sum += len(l.Data)
		}
		res := t.stop("raft-getlog", len(idx))
		if sum != len(idx)*len(data) {
			return nil, fmt.Errorf("GetLog read %d bytes of data, want %d", sum, len(idx)*len(data))
		}
		out = append(out, res)
	}
	if truncate {
		t := startTimer()
		if err := s.DeleteRange(1, uint64(o.Truncate)); err != nil {
			return nil, fmt.Errorf("DeleteRange: %w", err)
		}
		res := t.stop("raft-truncate", o.Truncate)
		if err := checkRaftLog(s, uint64(o.Truncate)+1, uint64(n), data); err != nil {
			return nil, fmt.Errorf("after DeleteRange: %w", err)
		}
		// raft-wal still serves a deleted entry while its segment holds it
		// (it drops whole segments; raft never reads below FirstIndex).
		var l raft.Log
		if err := s.GetLog(uint64(o.Truncate), &l); !errors.Is(err, raft.ErrLogNotFound) && !isRaftWAL(s) {
			return nil, fmt.Errorf("GetLog(%d) after its deletion: %v, want raft.ErrLogNotFound", o.Truncate, err)
		}
		var err error
		if res.FileSize, err = dirSize(dir); err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// checkRaftLog checks that s holds exactly the entries first..last: its
// first and last index, and the entries at both ends and in the middle.
func checkRaftLog(s raftLogStore, first, last uint64, data []byte) error {
	fi, err := s.FirstIndex()
	if err != nil {
		return err
	}
	li, err := s.LastIndex()
	if err != nil {
		return err
	}
	if fi != first || li != last {
		return fmt.Errorf("log holds %d..%d, want %d..%d", fi, li, first, last)
	}
	for _, i := range []uint64{first, (first + last) / 2, last} {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil {
			return fmt.Errorf("GetLog(%d): %w", i, err)
		}
		if l.Index != i || l.Term != 1 || !bytes.Equal(l.Data, data) {
			return fmt.Errorf("GetLog(%d): index %d, term %d, %d bytes of data: not the entry stored", i, l.Index, l.Term, len(l.Data))
		}
	}
	return nil
}

// raftNode is one member of a bench cluster.
type raftNode struct {
	raft  *raft.Raft
	store raftLogStore
	fsm   *countFSM
}

// raftTimeout bounds an election and an Apply in the cluster workloads
// (a loaded 2-core machine's sync can take tens of milliseconds).
const raftTimeout = 30 * time.Second

// raftApplies is a cluster workload: n applies, inFlight at a time.
type raftApplies struct {
	name        string
	n, inFlight int
}

// raftCluster starts a 3-node cluster with peer's store as each node's log
// and stable store, in dir, then for each of ws times its Applies through
// the leader, inFlight at a time (each window waited for), and checks
// that every node applied them; it shuts the cluster down.
func raftCluster(dir, peer string, ws []raftApplies, data []byte) (out []WriteResult, err error) {
	ids := []raft.ServerID{"n1", "n2", "n3"}
	var nodes []*raftNode
	var transports []*raft.InmemTransport
	defer func() {
		for _, nd := range nodes {
			err = errors.Join(err, nd.raft.Shutdown().Error(), nd.store.Close())
		}
	}()
	var servers []raft.Server
	for _, id := range ids {
		_, t := raft.NewInmemTransport(raft.ServerAddress(id))
		transports = append(transports, t)
		servers = append(servers, raft.Server{ID: id, Address: raft.ServerAddress(id)})
	}
	for i, a := range transports {
		for j, b := range transports {
			if i != j {
				a.Connect(b.LocalAddr(), b)
			}
		}
	}
	for i, id := range ids {
		d := filepath.Join(dir, string(id))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return out, err
		}
		s, err := openRaftStore(peer, d)
		if err != nil {
			return out, err
		}
		conf := raft.DefaultConfig()
		conf.LocalID = id
		conf.Logger = hclog.New(&hclog.LoggerOptions{Name: string(id), Level: hclog.Off, Output: io.Discard})
		conf.HeartbeatTimeout = 500 * time.Millisecond
		conf.ElectionTimeout = 500 * time.Millisecond
		conf.LeaderLeaseTimeout = 500 * time.Millisecond
		conf.CommitTimeout = 5 * time.Millisecond
		fsm := &countFSM{}
		r, err := raft.NewRaft(conf, fsm, s, s, raft.NewInmemSnapshotStore(), transports[i])
		if err != nil {
			s.Close()
			return out, err
		}
		nodes = append(nodes, &raftNode{raft: r, store: s, fsm: fsm})
	}
	if err := nodes[0].raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error(); err != nil {
		return out, fmt.Errorf("bootstrap: %w", err)
	}
	for _, w := range ws {
		var res WriteResult
		for try := 1; ; try++ {
			if res, err = raftApply(nodes, w, data); err == nil || try == raftTries || !leadershipLost(err) {
				break
			}
			// The leader lost its lease (a loaded machine can starve its
			// heartbeats): measure again under the next one.
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", w.name, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// raftTries is how many times a cluster workload is measured when its
// leader loses the leadership meanwhile.
const raftTries = 3

// leadershipLost reports whether err says that the node applied to is no
// longer (or not yet) the leader.
func leadershipLost(err error) bool {
	return errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) || errors.Is(err, raft.ErrLeadershipTransferInProgress)
}

// raftApply waits for a leader and for its log to be applied (Barrier:
// nothing of an earlier attempt is still in flight), times w's applies
// through it, then checks that every node applied them and that each log
// ends with the last.
func raftApply(nodes []*raftNode, w raftApplies, data []byte) (res WriteResult, err error) {
	leader, err := waitLeader(nodes)
	if err != nil {
		return res, err
	}
	if err := leader.raft.Barrier(raftTimeout).Error(); err != nil {
		return res, fmt.Errorf("barrier: %w", err)
	}
	base := leader.fsm.n.Load()
	futures := make([]raft.ApplyFuture, 0, w.inFlight)
	t := startTimer()
	for done := 0; done < w.n; {
		futures = futures[:0]
		for range min(w.inFlight, w.n-done) {
			futures = append(futures, leader.raft.Apply(data, raftTimeout))
		}
		for _, f := range futures {
			if err := f.Error(); err != nil {
				return res, fmt.Errorf("apply %d: %w", done, err)
			}
			done++
		}
	}
	res = t.stop(w.name, w.n)
	want := base + uint64(w.n)
	if got := leader.fsm.n.Load(); got != want {
		return res, fmt.Errorf("the leader applied %d commands, want %d", got-base, w.n)
	}
	deadline := time.Now().Add(raftTimeout)
	for _, nd := range nodes {
		for nd.fsm.n.Load() < want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if got := nd.fsm.n.Load(); got != want {
			return res, fmt.Errorf("a node applied %d commands, want %d", got, want)
		}
	}
	for _, nd := range nodes {
		if err := checkRaftTail(nd.store, data); err != nil {
			return res, err
		}
	}
	return res, nil
}

// checkRaftTail checks that the last entry of s is a command of data.
func checkRaftTail(s raftLogStore, data []byte) error {
	li, err := s.LastIndex()
	if err != nil {
		return err
	}
	var l raft.Log
	if err := s.GetLog(li, &l); err != nil {
		return fmt.Errorf("GetLog(%d): %w", li, err)
	}
	if l.Type != raft.LogCommand || !bytes.Equal(l.Data, data) {
		return fmt.Errorf("GetLog(%d): not the last command applied", li)
	}
	return nil
}

// waitLeader waits for one of nodes to lead.
func waitLeader(nodes []*raftNode) (*raftNode, error) {
	deadline := time.Now().Add(raftTimeout)
	for time.Now().Before(deadline) {
		for _, nd := range nodes {
			if nd.raft.State() == raft.Leader {
				return nd, nil
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil, errors.New("no leader elected")
}

// countFSM counts the commands it applies: the state machine of the
// cluster workloads, in memory, so that the log store is what differs.
type countFSM struct{ n atomic.Uint64 }

func (f *countFSM) Apply(l *raft.Log) any {
	if l.Type == raft.LogCommand {
		f.n.Add(1)
	}
	return nil
}

func (f *countFSM) Snapshot() (raft.FSMSnapshot, error) { return countSnapshot(f.n.Load()), nil }

func (f *countFSM) Restore(r io.ReadCloser) error {
	defer r.Close()
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return err
	}
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	f.n.Store(n)
	return nil
}

type countSnapshot uint64

func (s countSnapshot) Persist(sink raft.SnapshotSink) error {
	var b [8]byte
	for i := range b {
		b[i] = byte(uint64(s) >> (56 - 8*i))
	}
	if _, err := sink.Write(b[:]); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (countSnapshot) Release() {}
