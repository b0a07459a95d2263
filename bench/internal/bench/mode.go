package bench

import (
	"errors"
	"fmt"
	"runtime"

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
