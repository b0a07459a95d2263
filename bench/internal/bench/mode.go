package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/pagodadb/pagoda"
)

// The modes a writable pagoda database runs in, as the report names them.
const (
	// modeShared: the file held SHARED, the WAL shared with other
	// connections through the -shm wal-index (a WAL-mode file on Linux).
	modeShared = "shared"
	// modeExclusive: the file held EXCLUSIVE from Open to Close, no -shm
	// (Options.Exclusive, a rollback-journal file, or any OS but Linux).
	modeExclusive = "exclusive"
)

// pagodaMode returns the mode of db, open writable, by asking the file:
// shared when another connection can open it beside db (a read-only DB,
// opened and closed at once), exclusive when db's lock keeps it out. The
// library has no method that tells. It is asked on Linux only, where locks
// belong to the open file: elsewhere they belong to the process, which a
// second DB of the process does not meet and whose close would drop db's
// locks; pagoda holds a writable database exclusive there anyway. An
// exclusive DB found shared is an error.
func pagodaMode(db *pagoda.DB, exclusive bool) (string, error) {
	if runtime.GOOS != "linux" {
		return modeExclusive, nil
	}
	other, err := pagoda.Open(db.Path(), &pagoda.Options{ReadOnly: true})
	switch {
	case errors.Is(err, pagoda.ErrLocked):
		return modeExclusive, nil
	case err != nil:
		return "", fmt.Errorf("bench: %s: opening a second connection beside pagoda: %w", db.Path(), err)
	}
	if err := other.Close(); err != nil {
		return "", fmt.Errorf("bench: %s: %w", db.Path(), err)
	}
	if exclusive {
		return "", fmt.Errorf("bench: %s: opened with Options.Exclusive, a second connection opened it beside", db.Path())
	}
	return modeShared, nil
}

// moder is a peer or store that says which mode it ran in (pagoda's).
type moder interface{ Mode() string }

// modeOf returns x's mode, "" when it has none.
func modeOf(x any) string {
	if m, ok := x.(moder); ok {
		return m.Mode()
	}
	return ""
}

// interleavedSlice is the lookups of one turn of interleavedViews.
const interleavedSlice = 256

// interleavedViews measures lookup-tx in both modes at once, for d: pagoda
// (the shared mode) and pagoda-exclusive, each a peer of NewTxPeer, read
// in turns of interleavedSlice lookups (the shared one's first, then the
// exclusive one's, then the other way round), so that both meet the
// machine in the same state, as interleavedCommits does for commits. The
// exclusive mode keeps its file to itself, so one of them reads c, a copy
// of the fixture f: the exclusive one when swap is false, the shared one
// when it is true. It returns the shared mode's time per lookup over the
// exclusive one's.
func interleavedViews(f, c *Fixture, d time.Duration, swap bool) (ratio float64, err error) {
	files := [2]*Fixture{f, c} // shared, exclusive
	if swap {
		files[0], files[1] = files[1], files[0]
	}
	var peers [2]Peer
	for i, name := range []string{"pagoda", pagodaExclusive} {
		p, err := NewTxPeer(name, PeerOptions{})
		if err != nil {
			return 0, err
		}
		if err := p.Open(files[i]); err != nil {
			return 0, fmt.Errorf("%s: open: %w", name, err)
		}
		defer func() { err = errors.Join(err, p.Close()) }()
		if err := Verify(p, files[i], 100); err != nil {
			return 0, err
		}
		peers[i] = p
	}
	ids := f.LookupRowids()
	mask := len(ids) - 1
	var took [2]time.Duration
	var next [2]int
	sum := 0
	for turn, end := 0, time.Now().Add(d); time.Now().Before(end); turn++ {
		order := [2]int{0, 1}
		if turn%2 == 1 {
			order = [2]int{1, 0}
		}
		for _, i := range order {
			p := peers[i]
			t0 := time.Now()
			for range interleavedSlice {
				v, err := p.Get(ids[next[i]&mask])
				if err != nil {
					return 0, fmt.Errorf("%s: %w", p.Name(), err)
				}
				sum += len(v)
				next[i]++
			}
			took[i] += time.Since(t0)
		}
	}
	if sum == 0 || took[1] == 0 {
		return 0, errors.New("no lookups")
	}
	return float64(took[0]) / float64(took[1]), nil
}

// fixtureCopy copies f's SQLite file into a new directory under dir and
// returns the copy, and a function that removes it.
func fixtureCopy(f *Fixture, dir string) (*Fixture, func() error, error) {
	cdir, err := os.MkdirTemp(dir, "run-modes-")
	if err != nil {
		return nil, nil, err
	}
	c := *f
	c.SQLitePath = filepath.Join(cdir, filepath.Base(f.SQLitePath))
	if err := copyFile(f.SQLitePath, c.SQLitePath); err != nil {
		return nil, nil, errors.Join(err, removeAll(cdir))
	}
	return &c, func() error { return removeAll(cdir) }, nil
}
