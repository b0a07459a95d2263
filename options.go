package pagoda

import (
	"time"

	"github.com/pagodadb/pagoda/internal/pager"
)

// Options configure Open. A nil *Options means the defaults.
type Options struct {
	// ReadOnly opens the database without write access: the file and its
	// WAL are opened read-only and never written. Without it, a file that
	// may be read but not written (its permissions, a read-only
	// filesystem) is opened read-only all the same, as sqlite3 opens it:
	// DB.ReadOnly reports it, and write transactions fail with
	// ErrReadOnly.
	ReadOnly bool
	// PageSize is the page size of a database that Open creates: a power
	// of two from 512 to 65536; 0 means 4096. An existing database keeps
	// its own.
	PageSize int
	// Sync says when commits reach stable storage; the zero value is
	// SyncFull.
	Sync SyncMode
	// CacheSize bounds the memory, in bytes, that a write transaction's
	// changed pages may hold: past it they are written to the WAL early
	// (as frames that only the commit makes valid) and their memory is
	// reused. In rollback-journal mode they are written into the database
	// file once the journal holds their originals, synced, as sqlite3
	// spills its cache: that takes the EXCLUSIVE lock, so from then to the
	// transaction's end readers wait, in this DB and other processes.
	// Once spilled, a WAL-mode transaction reads the pages it does not
	// hold from the files into copies it keeps within a quarter of
	// CacheSize, not through the memory map, so that the file's pages do
	// not add up in the process's resident set: a 1M-row load in random
	// order in one transaction peaks at about 100 MiB of RSS with the
	// default, whatever the file's size. 0 means 64 MiB.
	CacheSize int
	// CheckpointPages is the WAL size, in pages, past which a commit
	// copies the WAL into the database file. 0 means as many pages as the
	// database has, at least 1000 and at most 32 MiB of pages (8192 of 4
	// KiB): sqlite3 checkpoints at 1000 because its readers search a
	// shared-memory hash of the WAL, while pagoda's readers find a page in
	// the WAL as fast whatever its size, and a page changed by several
	// commits between two checkpoints is copied into the database file
	// once; tying it to the database's size keeps a small database's WAL
	// small. A negative value checkpoints only at Close and Checkpoint.
	CheckpointPages int
	// Timeout is how long Open waits for the database file's lock while
	// another process, or another DB of this one, holds it, and how long a
	// write transaction or a checkpoint of a shared database waits for
	// another connection's (see Open); 0 means no waiting, but for 10 ms
	// at a shared database's write lock, which a sqlite3 reader takes for
	// a moment now and then. Past it Open fails with an error wrapping
	// ErrLocked, Begin and Checkpoint with one wrapping ErrBusy.
	Timeout time.Duration
	// Exclusive keeps the database file to this DB from Open to Close, as
	// sqlite3's PRAGMA locking_mode=EXCLUSIVE: a writable DB holds
	// sqlite3's EXCLUSIVE lock, and no -shm wal-index is used. By default
	// a WAL-mode database is shared with other connections (see Open). A
	// rollback-journal database stays one: it is still written through
	// its journal.
	Exclusive bool
	// JournalMode says how the database is written. The zero value,
	// JournalDefault, keeps an existing file's mode and creates WAL-mode
	// files.
	JournalMode JournalMode
}

// SyncMode says when pagoda calls fsync.
type SyncMode uint8

const (
	// SyncFull syncs the WAL at every commit, once, and the database file
	// at every checkpoint: a committed transaction survives a power loss.
	SyncFull SyncMode = SyncMode(pager.SyncFull)
	// SyncNormal syncs only at checkpoints: a crash of the process loses
	// nothing; a power loss may lose the latest commits, never the
	// database's consistency.
	SyncNormal SyncMode = SyncMode(pager.SyncNormal)
	// SyncOff never syncs: for throwaway data and bulk loads that are
	// redone after a crash.
	SyncOff SyncMode = SyncMode(pager.SyncOff)
)
