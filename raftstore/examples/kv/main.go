// Command kv runs a replicated key/value store of three raft nodes on one
// machine, each in a directory of its own with a raftstore log and a
// pagoda state machine (raftstore.FSM), talking over loopback TCP
// (raft.NewTCPTransport). It writes keys through the leader, stops the
// leader, writes more through the node elected next, starts the old
// leader again from its files, and shows that every node holds the same
// keys: each node's fsm.db is a SQLite database (sqlite3 DIR/n1/fsm.db
// 'SELECT count(*) FROM kv').
//
//	go run ./raftstore/examples/kv [-dir DIR] [-keys N]
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/raftstore"
)

func main() {
	dir := flag.String("dir", "", "directory of the nodes' files (default: a new temporary one, removed at the end)")
	keys := flag.Int("keys", 500, "keys written before and after the failover")
	flag.Parse()
	if err := run(*dir, *keys, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// node is one member: its raft, its log store, its state machine.
type node struct {
	id    raft.ServerID
	dir   string
	addr  raft.ServerAddress
	raft  *raft.Raft
	store *raftstore.Store
	fsm   *raftstore.FSM
	trans *raft.NetworkTransport
}

// put is the state machine's transition: a command "key=value" puts value
// under key in bucket kv.
func put(tx *pagoda.Tx, _ uint64, cmd []byte) (any, error) {
	k, v, ok := bytes.Cut(cmd, []byte("="))
	if !ok {
		return nil, fmt.Errorf("command %q is not key=value", cmd)
	}
	b, err := tx.CreateBucketIfNotExists("kv")
	if err != nil {
		return nil, err
	}
	return nil, b.Put(k, v)
}

func start(id raft.ServerID, dir string, addr raft.ServerAddress) (*node, error) {
	n := &node{id: id, dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var err error
	if n.store, err = raftstore.Open(filepath.Join(dir, "raft.db"), nil); err != nil {
		return nil, err
	}
	if n.fsm, err = raftstore.NewFSM(filepath.Join(dir, "fsm.db"), put, nil); err != nil {
		return nil, err
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hclog.NewNullLogger())
	if err != nil {
		return nil, err
	}
	bind := string(addr)
	if bind == "" {
		bind = "127.0.0.1:0"
	}
	if n.trans, err = raft.NewTCPTransportWithLogger(bind, nil, 3, 5*time.Second, hclog.NewNullLogger()); err != nil {
		return nil, err
	}
	n.addr = n.trans.LocalAddr()
	conf := raft.DefaultConfig()
	conf.LocalID = id
	conf.Logger = hclog.NewNullLogger()
	conf.SnapshotThreshold = 256
	conf.TrailingLogs = 128
	if n.raft, err = raft.NewRaft(conf, n.fsm, n.store, n.store, snaps, n.trans); err != nil {
		return nil, err
	}
	return n, nil
}

func (n *node) stop() error {
	return errors.Join(n.raft.Shutdown().Error(), n.trans.Close(), n.store.Close(), n.fsm.Close())
}

func (n *node) count() (int, error) {
	c := 0
	err := n.fsm.View(func(tx *pagoda.Tx) error {
		b, err := tx.Bucket("kv")
		if errors.Is(err, pagoda.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		n, err := b.Count()
		c = int(n)
		return err
	})
	return c, err
}

func leader(nodes []*node) (*node, error) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range nodes {
			if n != nil && n.raft.State() == raft.Leader {
				return n, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, errors.New("no leader within 20s")
}

// write applies keys lo..hi-1 through the leader of nodes.
func write(nodes []*node, lo, hi int) (*node, error) {
	l, err := leader(nodes)
	if err != nil {
		return nil, err
	}
	fs := make([]raft.ApplyFuture, 0, hi-lo)
	for i := lo; i < hi; i++ {
		fs = append(fs, l.raft.Apply([]byte(fmt.Sprintf("key%05d=value %d", i, i)), 5*time.Second))
	}
	for _, f := range fs {
		if err := f.Error(); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func run(dir string, keys int, out io.Writer) (err error) {
	if dir == "" {
		if dir, err = os.MkdirTemp("", "pagoda-kv"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	ids := []raft.ServerID{"n1", "n2", "n3"}
	nodes := make([]*node, len(ids))
	var cfg raft.Configuration
	for i, id := range ids {
		if nodes[i], err = start(id, filepath.Join(dir, string(id)), ""); err != nil {
			return err
		}
		cfg.Servers = append(cfg.Servers, raft.Server{ID: id, Address: nodes[i].addr})
	}
	defer func() {
		for _, n := range nodes {
			if n != nil {
				err = errors.Join(err, n.stop())
			}
		}
	}()
	if err := nodes[0].raft.BootstrapCluster(cfg).Error(); err != nil {
		return err
	}
	l, err := write(nodes, 0, keys)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d keys written through %s (%s)\n", keys, l.id, l.addr)

	// The leader stops; the others elect one of them.
	i := slicesIndex(nodes, l)
	if err := l.stop(); err != nil {
		return err
	}
	nodes[i] = nil
	next, err := write(nodes, keys, 2*keys)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s stopped; %d more keys written through %s, the new leader\n", l.id, keys, next.id)

	// The old leader comes back from its files, at its old address.
	if nodes[i], err = start(l.id, l.dir, l.addr); err != nil {
		return err
	}
	if err := next.raft.Barrier(10 * time.Second).Error(); err != nil {
		return err
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, n := range nodes {
		for {
			c, err := n.count()
			if err != nil {
				return err
			}
			if c == 2*keys {
				fmt.Fprintf(out, "%s: %d keys (applied index %d) in %s\n", n.id, c, n.fsm.AppliedIndex(), filepath.Join(n.dir, "fsm.db"))
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s holds %d keys, want %d", n.id, c, 2*keys)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

func slicesIndex(nodes []*node, n *node) int {
	for i, m := range nodes {
		if m == n {
			return i
		}
	}
	return -1
}
