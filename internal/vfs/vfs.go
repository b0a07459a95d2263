package vfs

import (
	"io/fs"

	"github.com/pagodadb/pagoda/internal/format"
)

// FS opens, removes and syncs files by name.
type FS interface {
	// OpenFile opens name with os.OpenFile's flags and permissions.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Remove removes the file name.
	Remove(name string) error
	// Stat describes the file name.
	Stat(name string) (fs.FileInfo, error)
	// SyncDir makes the creations and removals of files in directory dir
	// durable (fsync of the directory). Where a directory cannot be
	// synced it does nothing.
	SyncDir(dir string) error
	// Unmap releases a mapping returned by File.Map.
	Unmap(b []byte) error
}

// File is an open file.
type File interface {
	// Name returns the name the file was opened with.
	Name() string
	// ReadAt and WriteAt are io.ReaderAt and io.WriterAt.
	ReadAt(b []byte, off int64) (int, error)
	WriteAt(b []byte, off int64) (int, error)
	// Sync makes the file's data, and the metadata needed to read it back
	// (its size), durable: fdatasync(2) where there is one.
	Sync() error
	// Truncate changes the file's size.
	Truncate(size int64) error
	// Size returns the file's size.
	Size() (int64, error)
	// Map returns a read-only view of the first size bytes of the file,
	// which may extend past its end (those bytes must not be touched until
	// the file covers them). Where MapCopies is false it is a shared
	// mapping that sees later writes to the file; where it is true it is a
	// copy, taken again to see them. Release it with FS.Unmap.
	Map(size int) ([]byte, error)
	// MapShared returns a writable view of size bytes of the file from
	// offset off (a multiple of the system's page size), shared with
	// every process that maps the file: sqlite3's -shm file is shared
	// memory this way (os_unix.c's unixShmMap). Stores through it reach
	// the file and the other mappings; they are not operations a Fault
	// counts or models. The file must already cover the bytes (a view of
	// bytes past its end faults when touched). Release it with FS.Unmap.
	// Where MapCopies is true there is no shared memory: it fails with an
	// error wrapping errors.ErrUnsupported.
	MapShared(off int64, size int) ([]byte, error)
	// Lock takes the lock level (or a stronger one) on the file without
	// waiting: a lock held elsewhere fails at once with an error wrapping
	// ErrLocked, and the file keeps the level it had. See the package doc
	// for the protocol.
	Lock(level LockLevel) error
	// Unlock releases every lock the file holds.
	Unlock() error
	// Downgrade goes from any level above LockShared back to LockShared
	// in one step, as sqlite3's unlock to SHARED does: no other holder can
	// take EXCLUSIVE in between. At LockShared or below it does nothing.
	Downgrade() error
	// LockRange takes a shared lock (or with exclusive, an exclusive one)
	// on n bytes from start without waiting, as sqlite3 locks the bytes of
	// its -shm file: a conflicting lock held elsewhere fails at once with
	// an error wrapping ErrLocked. A lock this file holds on the same
	// bytes is replaced, so a lock can be downgraded. The locks are apart
	// from Lock's levels, which Unlock does not release with them.
	LockRange(start, n int64, exclusive bool) error
	// UnlockRange releases the locks on n bytes from start.
	UnlockRange(start, n int64) error
	// HeldElsewhere reports whether another open file, in this process or
	// another, holds a lock on any of n bytes from start (one that an
	// exclusive lock would meet), without taking or changing a lock.
	HeldElsewhere(start, n int64) (bool, error)
	// Close closes the file, releasing its locks.
	Close() error
}

// LockLevel is one of SQLite's file lock levels that pagoda takes.
type LockLevel uint8

const (
	// LockNone holds nothing.
	LockNone LockLevel = iota
	// LockShared lets the holder read; nobody may hold LockExclusive.
	LockShared
	// LockReserved is LockShared and the one right to write later: others
	// may read, and nobody else may take LockReserved.
	LockReserved
	// LockPending is on the way to LockExclusive: readers may finish,
	// nobody may start reading.
	LockPending
	// LockExclusive lets the holder write; nobody else holds any lock.
	LockExclusive
)

func (l LockLevel) String() string {
	switch l {
	case LockNone:
		return "none"
	case LockShared:
		return "shared"
	case LockReserved:
		return "reserved"
	case LockPending:
		return "pending"
	case LockExclusive:
		return "exclusive"
	}
	return "invalid"
}

// SQLite's lock bytes (os_unix.c, os.h): a byte range in the page at 1 GiB,
// which no database uses for data (format.LockBytePage).
//
//	OFFSET      SIZE FIELD
//	0x40000000     1 PENDING_BYTE
//	0x40000001     1 RESERVED_BYTE
//	0x40000002   510 SHARED_FIRST .. SHARED_FIRST+SHARED_SIZE-1
const (
	PendingByte  = 0x40000000
	ReservedByte = PendingByte + 1
	SharedFirst  = PendingByte + 2
	SharedSize   = 510
)

// ErrLocked is the error that a lock held elsewhere is wrapped in; it is
// format.ErrLocked, the engine's sentinel.
var ErrLocked = format.ErrLocked

// OS is the operating system's file system: the default FS.
var OS FS = osFS{}

// StartWriteback asks the system to start writing n bytes of f from off
// (just written) to the device, without waiting for them: a hint, for a
// writer that will Sync them after more work, so that the device writes
// while it works and the Sync waits for less. A File that cannot
// (Fault's, or one on a system without sync_file_range(2)) ignores it.
func StartWriteback(f File, off, n int64) {
	if w, ok := f.(interface{ StartWriteback(off, n int64) }); ok {
		w.StartWriteback(off, n)
	}
}
