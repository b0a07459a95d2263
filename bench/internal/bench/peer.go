package bench

import (
	"errors"
	"fmt"
)

// Peer is one engine reading a fixture. A peer is used by one goroutine:
// Open, any number of Get and Scan calls, Close. A peer of NewPeer holds
// one read transaction (a snapshot) between Open and Close, as a reader
// serving many requests from one snapshot would; a peer of NewTxPeer reads
// each Get and each Scan in a read transaction of its own, as a request
// handler does.
type Peer interface {
	// Name is the peer's short name: pagoda, pagoda-exclusive, mattn,
	// modernc, ncruces, zombiezen, bbolt or mattn-autocommit.
	Name() string
	// Open opens the peer's file of f and, unless the peer reads in a
	// transaction per call, begins a read transaction.
	Open(f *Fixture) error
	// Get returns the value of the row with the given rowid. The slice is
	// valid until the next call on the peer and must not be modified.
	Get(rowid int64) ([]byte, error)
	// Scan reads every row in rowid order and hands each value to fn (the
	// slice is valid only during the call). It returns the number of rows.
	Scan(fn func(v []byte)) (rows int, err error)
	// Close ends the read transaction, if any, and closes the file.
	Close() error
}

// PeerNames lists the peers, in the order they are measured and reported.
// mattn is left out of binaries built without cgo. pebble only writes: it
// has a [Store] but no [Peer], and the read workloads skip it. Two more
// peers can be asked for by name: pagoda-exclusive, pagoda opened with
// Options.Exclusive (a peer and a store, which Run adds by default to the
// workloads that compare the modes: see ModePeerWorkloads), and
// mattn-autocommit, mattn used as most programs use database/sql (no long
// transaction, SQLite's defaults), which only reads.
var PeerNames = peerNames()

// pagodaExclusive is the name of peer pagoda-exclusive.
const pagodaExclusive = "pagoda-exclusive"

// ModePeerWorkloads are the workloads whose default peers include
// pagoda-exclusive beside pagoda: those of issue #28's ratios between the
// shared and the exclusive mode.
var ModePeerWorkloads = []string{"lookup-tx", "commit", "commit-8"}

// isPagoda reports whether name is pagoda in either mode.
func isPagoda(name string) bool { return name == "pagoda" || name == pagodaExclusive }

func peerNames() []string {
	if !cgoEnabled {
		return []string{"pagoda", "modernc", ncruces, zombiezen, "bbolt", "pebble"}
	}
	return []string{"pagoda", "mattn", "modernc", ncruces, zombiezen, "bbolt", "pebble"}
}

// errNoReads is the error of NewPeer for peers that only write.
var errNoReads = errors.New("has no read workloads")

// Skipped reports whether err, from NewPeer or NewStore, says that the peer
// exists but has no implementation of that kind of workload, so that the
// workload is skipped for it rather than failing the run.
func Skipped(err error) bool { return errors.Is(err, errNoReads) || errors.Is(err, errNoWrites) }

// PeerOptions configure peers.
type PeerOptions struct {
	// SQLiteDefaults runs mattn and modernc with SQLite's default settings
	// (no memory map, a 2 MB page cache) instead of SQLitePragmas.
	SQLiteDefaults bool
}

// NewPeer returns a new, unopened peer by name, with default options.
func NewPeer(name string) (Peer, error) { return NewPeerWith(name, PeerOptions{}) }

// NewPeerWith returns a new, unopened peer by name, which holds one read
// transaction from Open to Close.
func NewPeerWith(name string, opt PeerOptions) (Peer, error) { return newPeer(name, opt, false) }

// NewTxPeer returns a new, unopened peer by name that reads each Get and
// each Scan in a read transaction of its own, begun and ended in the call,
// the way a request handler reads: pagoda View (Table, Get, Column),
// bbolt View (Bucket, Get), and SQLite (mattn, modernc) one query per
// call outside any BEGIN, which is its own read transaction (SQLite's
// implicit one: a BEGIN is deferred and takes no lock, so BEGIN, SELECT,
// COMMIT would begin and end the same read transaction, with two more
// statements through the driver). The value is copied out before the
// transaction ends.
func NewTxPeer(name string, opt PeerOptions) (Peer, error) { return newPeer(name, opt, true) }

func newPeer(name string, opt PeerOptions, txPerOp bool) (Peer, error) {
	return newVariantPeer(name, opt, txPerOp, "")
}

// NewWorkloadPeer returns a new, unopened peer by name for workload w: a
// transaction per operation if w.TxPerOp, pagoda reading through w's API
// (Workload.Variant).
func NewWorkloadPeer(w Workload, name string, opt PeerOptions) (Peer, error) {
	return newVariantPeer(name, opt, w.TxPerOp, w.Variant)
}

// newVariantPeer is newPeer for a workload of Variant variant: pagoda's
// peer reads through that API, the others as they always do.
func newVariantPeer(name string, opt PeerOptions, txPerOp bool, variant string) (Peer, error) {
	pragmas := SQLitePragmas
	if opt.SQLiteDefaults {
		pragmas = nil
	}
	switch name {
	case "pagoda", pagodaExclusive:
		return &pagodaPeer{name: name, exclusive: name == pagodaExclusive, txPerOp: txPerOp, variant: variant}, nil
	case "mattn":
		if !cgoEnabled {
			return nil, errNoCgo
		}
		return &sqlPeer{name: name, driver: mattnDriver, pragmas: pragmas, txPerOp: txPerOp}, nil
	case "mattn-autocommit":
		if !cgoEnabled {
			return nil, errNoCgo
		}
		return &sqlPeer{name: name, driver: mattnDriver, autocommit: true, txPerOp: true}, nil
	case "modernc":
		return &sqlPeer{name: name, driver: moderncDriver, pragmas: pragmas, txPerOp: txPerOp}, nil
	case ncruces, zombiezen:
		return &directPeer{directDB: directDB{name: name}, pragmas: pragmas, txPerOp: txPerOp}, nil
	case "bbolt":
		return &boltPeer{txPerOp: txPerOp}, nil
	case "pebble":
		return nil, fmt.Errorf("bench: peer %s %w", name, errNoReads)
	}
	return nil, unknownPeer(name)
}
