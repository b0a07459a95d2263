package bench

import (
	"errors"
	"fmt"
)

// Peer is one engine reading a fixture. A peer is used by one goroutine:
// Open, any number of Get and Scan calls, Close. Between Open and Close it
// holds one read transaction (a snapshot), as a reader serving many
// requests would.
type Peer interface {
	// Name is the peer's short name: pagoda, mattn, modernc or bbolt.
	Name() string
	// Open opens the peer's file of f and begins a read transaction.
	Open(f *Fixture) error
	// Get returns the value of the row with the given rowid. The slice is
	// valid until the next call on the peer and must not be modified.
	Get(rowid int64) ([]byte, error)
	// Scan reads every row in rowid order and hands each value to fn (the
	// slice is valid only during the call). It returns the number of rows.
	Scan(fn func(v []byte)) (rows int, err error)
	// Close ends the read transaction and closes the file.
	Close() error
}

// PeerNames lists the peers, in the order they are measured and reported.
// mattn is left out of binaries built without cgo. pebble only writes: it
// has a [Store] but no [Peer], and the read workloads skip it. One more
// peer can be asked for by name: mattn-autocommit, mattn used as most
// programs use database/sql (no long transaction, SQLite's defaults),
// which only reads.
var PeerNames = peerNames()

func peerNames() []string {
	if !cgoEnabled {
		return []string{"pagoda", "modernc", "bbolt", "pebble"}
	}
	return []string{"pagoda", "mattn", "modernc", "bbolt", "pebble"}
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

// NewPeerWith returns a new, unopened peer by name.
func NewPeerWith(name string, opt PeerOptions) (Peer, error) {
	pragmas := SQLitePragmas
	if opt.SQLiteDefaults {
		pragmas = nil
	}
	switch name {
	case "pagoda":
		return &pagodaPeer{}, nil
	case "mattn":
		if !cgoEnabled {
			return nil, errNoCgo
		}
		return &sqlPeer{name: name, driver: mattnDriver, pragmas: pragmas}, nil
	case "mattn-autocommit":
		if !cgoEnabled {
			return nil, errNoCgo
		}
		return &sqlPeer{name: name, driver: mattnDriver, autocommit: true}, nil
	case "modernc":
		return &sqlPeer{name: name, driver: moderncDriver, pragmas: pragmas}, nil
	case "bbolt":
		return &boltPeer{}, nil
	case "pebble":
		return nil, fmt.Errorf("bench: peer %s %w", name, errNoReads)
	}
	return nil, unknownPeer(name)
}
