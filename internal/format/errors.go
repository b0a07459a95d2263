package format

import (
	"errors"
	"fmt"
)

// The engine's sentinel errors that every layer may wrap. The root package
// re-exports them under the same names; callers test with errors.Is.
var (
	// ErrCorrupt reports bytes that break a rule of the file format.
	ErrCorrupt = errors.New("database is corrupt")
	// ErrUnsupported reports a valid file (or request) using a feature
	// pagoda does not implement.
	ErrUnsupported = errors.New("unsupported")
	// ErrLocked reports that another process, or another handle in this
	// one, holds a lock on the database file that excludes the one asked
	// for.
	ErrLocked = errors.New("database is locked")
	// ErrBusy reports that another connection to the database, in this
	// process or another, holds what a transaction or a checkpoint needs
	// (the write lock of a shared WAL-mode database), and it did not let
	// go in time: sqlite3's SQLITE_BUSY. Retry later.
	ErrBusy = errors.New("database is busy")
	// ErrTooBig reports a value, key or record longer than MaxLength
	// bytes, which sqlite3 refuses to read or write ("string or blob too
	// big", SQLITE_TOOBIG).
	ErrTooBig = errors.New("string or blob too big")
	// ErrCheckpoint reports that closing could not copy the WAL into the
	// database file (a full disk, say): every commit stands, durable in
	// the WAL beside the file, which the next connection reads.
	ErrCheckpoint = errors.New("checkpoint failed, every commit stands in the WAL")
)

// Wrapped is an error whose message is Msg and which wraps Err, as
// fmt.Errorf with %w makes one, for errors made as a package starts: fmt's
// first use costs a process a few dozen microseconds of page faults, which
// every program linking pagoda would pay whether it ever fails or not.
type Wrapped struct {
	Msg string
	Err error
}

func (e *Wrapped) Error() string { return e.Msg }
func (e *Wrapped) Unwrap() error { return e.Err }

// MaxLength is the longest string, blob or record SQLite accepts in bytes:
// SQLITE_MAX_LENGTH as it is built by default. sqlite3 fails every read
// of a longer one, integrity_check included.
const MaxLength = 1_000_000_000

// CorruptError says where a file breaks the format: the page (0 when the
// problem is not tied to one page, e.g. the WAL), the byte offset in that
// page (-1 when unknown) and what is wrong. It unwraps to ErrCorrupt.
type CorruptError struct {
	Page   uint32
	Offset int
	Msg    string
}

func (e *CorruptError) Error() string {
	switch {
	case e.Page == 0:
		return "database is corrupt: " + e.Msg
	case e.Offset < 0:
		return fmt.Sprintf("database is corrupt: page %d: %s", e.Page, e.Msg)
	default:
		return fmt.Sprintf("database is corrupt: page %d offset %d: %s", e.Page, e.Offset, e.Msg)
	}
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// Corruptf returns a *CorruptError for page pgno (offset unknown).
func Corruptf(pgno uint32, format string, args ...any) error {
	return &CorruptError{Page: pgno, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// CorruptAt returns a *CorruptError for a byte offset of page pgno.
func CorruptAt(pgno uint32, off int, format string, args ...any) error {
	return &CorruptError{Page: pgno, Offset: off, Msg: fmt.Sprintf(format, args...)}
}
