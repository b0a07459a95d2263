package raftstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/dbtest"
)

// mapFSM is a key/value map; a command is "key=value".
type mapFSM struct {
	mu sync.Mutex
	m  map[string]string
}

func (f *mapFSM) Apply(l *raft.Log) any {
	k, v, _ := bytes.Cut(l.Data, []byte("="))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[string(k)] = string(v)
	return nil
}

func (f *mapFSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := json.Marshal(f.m)
	return mapSnapshot(b), err
}

func (f *mapFSM) Restore(r io.ReadCloser) error {
	defer r.Close()
	m := map[string]string{}
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m = m
	return nil
}

func (f *mapFSM) copy() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.m)
}

type mapSnapshot []byte

func (s mapSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (mapSnapshot) Release() {}

// stateMachine is a test cluster's FSM: a key/value map whose commands
// are "key=value", in memory (mapFSM) or in a pagoda database (kvFSM).
type stateMachine interface {
	raft.FSM
	copy() map[string]string
}

// kvFSM is the FSM of fsm.go over a bucket "kv".
type kvFSM struct{ *FSM }

func newKVFSM(t *testing.T, path string) kvFSM {
	f, err := NewFSM(path, func(tx *pagoda.Tx, _ uint64, cmd []byte) (any, error) {
		k, v, _ := bytes.Cut(cmd, []byte("="))
		b, err := tx.CreateBucketIfNotExists("kv")
		if err != nil {
			return nil, err
		}
		return nil, b.Put(k, v)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return kvFSM{f}
}

func (f kvFSM) copy() map[string]string {
	m := map[string]string{}
	err := f.View(func(tx *pagoda.Tx) error {
		b, err := tx.Bucket("kv")
		if errors.Is(err, pagoda.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for k, v := range b.All() {
			m[string(k)] = string(v)
		}
		return tx.Err()
	})
	if err != nil {
		panic(err)
	}
	return m
}

// node is one member of the test cluster: its raft, its store and its
// files, which a restart opens again.
type node struct {
	id    raft.ServerID
	dir   string
	store *Store
	trans *raft.InmemTransport
	fsm   stateMachine
	raft  *raft.Raft
	down  bool
}

// startNode starts a node on the files in dir, with an FSM of kind "map"
// or "pagoda".
func startNode(t *testing.T, id raft.ServerID, dir, kind string) *node {
	t.Helper()
	n := &node{id: id, dir: dir}
	if kind == "pagoda" {
		n.fsm = newKVFSM(t, filepath.Join(dir, "fsm.db"))
	} else {
		n.fsm = &mapFSM{m: map[string]string{}}
	}
	var err error
	// A small CompactMinSize, so that the snapshots' truncations compact
	// the files while raft runs.
	n.store, err = Open(filepath.Join(dir, "raft.db"), &Options{CompactMinSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	_, n.trans = raft.NewInmemTransport(raft.ServerAddress(id))
	conf := raft.DefaultConfig()
	conf.LocalID = id
	conf.Logger = hclog.New(&hclog.LoggerOptions{Name: string(id), Level: hclog.Error, Output: raftErrors(t)})
	// Timeouts for a loaded 2-core machine, where a sync can take tens of
	// milliseconds.
	conf.HeartbeatTimeout = 300 * time.Millisecond
	conf.ElectionTimeout = 300 * time.Millisecond
	conf.LeaderLeaseTimeout = 300 * time.Millisecond
	conf.CommitTimeout = 5 * time.Millisecond
	conf.SnapshotInterval = 100 * time.Millisecond
	conf.SnapshotThreshold = 256
	conf.TrailingLogs = 64
	n.raft, err = raft.NewRaft(conf, n.fsm, n.store, n.store, snaps, n.trans)
	if err != nil {
		t.Fatal(err)
	}
	// A test that fails stops its nodes before its directories go.
	t.Cleanup(func() {
		if !n.down {
			n.raft.Shutdown().Error()
			n.store.Close()
			n.closeFSM()
		}
	})
	return n
}

// closeFSM closes a pagoda FSM's database.
func (n *node) closeFSM() error {
	if f, ok := n.fsm.(kvFSM); ok {
		return f.Close()
	}
	return nil
}

// raftErrors returns the writer of the test's raft loggers: what raft
// logs is shown if the test fails. (Some errors are expected: a node
// that cannot reach the stopped one, a leader whose log no longer holds
// what a follower needs and sends a snapshot instead.)
func raftErrors(t *testing.T) io.Writer {
	logsMu.Lock()
	defer logsMu.Unlock()
	if logs[t] == nil {
		logs[t] = new(lockedBuffer)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("raft's errors:\n%s", logs[t].String())
			}
		})
	}
	return logs[t]
}

var (
	logsMu sync.Mutex
	logs   = map[*testing.T]*lockedBuffer{}
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// stop shuts the node's raft down and closes its store.
func (n *node) stop(t *testing.T) {
	t.Helper()
	n.down = true
	if err := n.raft.Shutdown().Error(); err != nil {
		t.Fatal(err)
	}
	if err := n.store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.closeFSM(); err != nil {
		t.Fatal(err)
	}
}

func connect(nodes []*node) {
	for _, a := range nodes {
		for _, b := range nodes {
			if a != b {
				a.trans.Connect(b.trans.LocalAddr(), b.trans)
			}
		}
	}
}

// waitLeader returns the node that leads, among nodes, within the timeout.
func waitLeader(t *testing.T, nodes []*node) *node {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range nodes {
			if n.raft.State() == raft.Leader {
				return n
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no leader within 20s")
	return nil
}

// apply applies commands lo to hi-1 through the leader, and returns the
// leader at the end. Should leadership change meanwhile (a loaded machine
// can miss a heartbeat), the commands from the first that failed are
// applied again through the new leader: no two commands of one call set
// the same key, so this is idempotent.
func apply(t *testing.T, leader *node, nodes []*node, lo, hi int) *node {
	t.Helper()
	for tries := 0; lo < hi; tries++ {
		futures := make([]raft.ApplyFuture, 0, hi-lo)
		for i := lo; i < hi; i++ {
			futures = append(futures, leader.raft.Apply([]byte(fmt.Sprintf("k%04d=v%d", i%1500, i)), 5*time.Second))
		}
		failed := hi
		for i, f := range futures {
			if err := f.Error(); err != nil {
				if tries == 5 || err != raft.ErrLeadershipLost && err != raft.ErrNotLeader {
					t.Fatalf("apply %d through %s: %v", lo+i, leader.id, err)
				}
				failed = min(failed, lo+i)
			}
		}
		if failed < hi {
			t.Logf("leadership lost at command %d: applying the rest again", failed)
			time.Sleep(100 * time.Millisecond)
			leader = waitLeader(t, nodes)
		}
		lo = failed
	}
	return leader
}

// TestCluster is issue #32's cluster test: three nodes on raftstore files
// over an in-memory transport; 1,000 applies; the leader shut down; 1,000
// more through the new leader, which then snapshots and truncates its log;
// the old leader restarted from its files, catching up by installing that
// snapshot (its log ends before the leader's begins); all FSMs equal, the logs equal where they overlap, every file
// sound by DB.Check and SQLite's integrity_check.
//
// It runs with an FSM in memory and with the FSM of fsm.go, whose state is
// a pagoda database (a bucket), snapshotted with Tx.WriteTo while applies
// go on and restored by the restarted node: there the FSMs' files are
// checked too.
func TestCluster(t *testing.T) {
	for _, kind := range []string{"map", "pagoda"} {
		t.Run(kind, func(t *testing.T) { cluster(t, kind) })
	}
}

func cluster(t *testing.T, kind string) {
	start := time.Now()
	ids := []raft.ServerID{"n1", "n2", "n3"}
	dirs := make([]string, len(ids))
	nodes := make([]*node, len(ids))
	var cfg raft.Configuration
	for i, id := range ids {
		dirs[i] = t.TempDir()
		nodes[i] = startNode(t, id, dirs[i], kind)
		cfg.Servers = append(cfg.Servers, raft.Server{ID: id, Address: raft.ServerAddress(id)})
	}
	connect(nodes)
	if err := nodes[0].raft.BootstrapCluster(cfg).Error(); err != nil {
		t.Fatal(err)
	}
	leader := waitLeader(t, nodes)
	leader = apply(t, leader, nodes, 0, 1000)

	old := leader
	oldLast, _ := old.store.LastIndex()
	old.stop(t)
	var rest []*node
	for _, n := range nodes {
		if n != old {
			n.trans.Disconnect(old.trans.LocalAddr())
			rest = append(rest, n)
		}
	}
	leader = waitLeader(t, rest)
	leader = apply(t, leader, rest, 1000, 2000)
	// A snapshot now truncates the leader's log past the old leader's
	// last entry: the old leader can catch up only by installing it.
	if err := leader.raft.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	if first, _ := leader.store.FirstIndex(); first <= oldLast+1 {
		t.Fatalf("after a snapshot the new leader's log starts at %d, within the old leader's (%d)", first, oldLast)
	}

	for i, n := range nodes {
		if n == old {
			nodes[i] = startNode(t, old.id, old.dir, kind)
			old = nodes[i]
		}
	}
	connect(nodes)
	if err := leader.raft.Barrier(5 * time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	want := leader.fsm.copy()
	if len(want) != 1500 {
		t.Fatalf("the leader's FSM has %d keys, want 1500", len(want))
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, n := range nodes {
		for !maps.Equal(n.fsm.copy(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("%s's FSM (%d keys) differs from the leader's after 20s", n.id, len(n.fsm.copy()))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got := old.fsm.copy()["k0499"]; got != "v1999" {
		t.Errorf("the restarted node's k0499 = %q, want v1999", got)
	}

	// The logs agree where they overlap (a store that installed a
	// snapshot may be empty: raft deletes a monotonic store's whole log).
	// A node that installed a snapshot deletes its old log after its FSM
	// is restored (raft's installSnapshot): wait for that as for the FSMs.
	var lo, hi uint64
	var logged []*node
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		lo, hi, logged = 0, ^uint64(0), nil
		for _, n := range nodes {
			first, _ := n.store.FirstIndex()
			last, _ := n.store.LastIndex()
			if last != 0 {
				lo, hi = max(lo, first), min(hi, last)
				logged = append(logged, n)
			}
		}
		if len(logged) >= 2 && lo <= hi {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("fewer than two logs overlap after 20s: %d..%d", lo, hi)
			break
		}
	}
	for i := lo; i <= hi && len(logged) > 1; i++ {
		var a raft.Log
		if err := logged[0].store.GetLog(i, &a); err != nil {
			t.Fatal(err)
		}
		for _, n := range logged[1:] {
			var b raft.Log
			if err := n.store.GetLog(i, &b); err != nil {
				t.Fatal(err)
			}
			if a.Term != b.Term || a.Type != b.Type || !bytes.Equal(a.Data, b.Data) {
				t.Errorf("entry %d: %s has term %d %q, %s term %d %q", i, logged[0].id, a.Term, a.Data, n.id, b.Term, b.Data)
			}
		}
	}
	compactions := 0
	for _, n := range nodes {
		compactions += n.store.Compactions()
	}
	restored := old.raft.Stats()["last_snapshot_index"]
	for _, n := range nodes {
		n.stop(t)
	}
	for _, n := range nodes {
		dbtest.Check(t, filepath.Join(n.dir, "raft.db"))
		if kind == "pagoda" {
			dbtest.Check(t, filepath.Join(n.dir, "fsm.db"))
		}
	}
	t.Logf("%v: %d logs agree on %d..%d; %d compactions (after Open) in the live stores; the restarted node's last snapshot is at %s (it stopped at %d)",
		time.Since(start).Round(time.Millisecond), len(logged), lo, hi, compactions, restored, oldLast)
}
