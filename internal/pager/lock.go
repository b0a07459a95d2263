package pager

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// ErrLocked is the error, wrapped, of an Open that could not lock the
// database file because another process or pager holds it.
var ErrLocked = format.ErrLocked

// Locking. A pager holds SQLite's own file locks (vfs.File.Lock: the
// PENDING, RESERVED and SHARED bytes at 1 GiB). A WAL-mode database that
// the pager shares (shared.go, rules 23 to 31) is held SHARED from Open to
// Close; a rollback-journal database (rollback.go, rules 32 to 40) only
// during transactions, where locks belong to the open file. Otherwise
// they are held from Open to Close:
//
//   - A writable pager holds EXCLUSIVE, as sqlite3 does in
//     PRAGMA locking_mode=EXCLUSIVE: no other pager, and no sqlite3
//     process, may read or write the file meanwhile (sqlite3 reports
//     "database is locked"). pagoda does not implement the -shm wal-index
//     through which sqlite3 processes share a WAL-mode file, so it cannot
//     let others in while it writes.
//   - A read-only pager holds SHARED: other readers (pagers or sqlite3)
//     may open the file, and a writing pager cannot. A sqlite3 process may
//     still write a WAL-mode file beside it, because sqlite3's writers in
//     WAL mode hold only SHARED on the database file and coordinate
//     through the -shm file: there the pager holds a read slot (shm.go)
//     that keeps their checkpoints from changing what it reads. A
//     rollback-journal file needs nothing more: sqlite3 needs EXCLUSIVE to
//     write it.
//
// On Linux the locks belong to the pager's open file, so two pagers in one
// process exclude each other too; on other unix systems they are POSIX
// locks, which belong to the process (two pagers of one process do not
// exclude each other, and closing any other descriptor of the file in the
// process drops them); elsewhere there are none (see package vfs).

// lockRetryMax is the longest pause between two attempts to lock.
const lockRetryMax = 50 * time.Millisecond

// lockFile takes the pager's lock on the database file, deciding whether
// the pager shares it (shareWAL). A read-only pager takes SHARED. A
// writable one takes SHARED, then reads the file's header: a WAL-mode
// database (or a new, empty file, which becomes one) that the pager may
// share (sharing) keeps SHARED, as a WAL-mode sqlite3 connection does, and
// takes EXCLUSIVE for the moment Open writes (a hot journal rolled back, a
// new file's first page: Open downgrades it after); any other keeps
// EXCLUSIVE until Close.
func (p *Pager) lockFile() error {
	if err := p.lock(vfs.LockShared); err != nil {
		return err
	}
	var hdr [format.HeaderSize]byte
	n, _ := p.f.ReadAt(hdr[:], 0)
	if n == len(hdr) && format.Header(hdr[:]).ReadVersion() == format.FileFormatWAL &&
		p.opts.JournalMode == JournalDelete && !p.readOnly {
		if err := p.walToRollback(hdr[:]); err != nil {
			return err
		}
		n, _ = p.f.ReadAt(hdr[:], 0)
	}
	empty := n == 0
	rbMode, err := p.rollbackFile(hdr[:], n)
	if err != nil {
		return err
	}
	if rbMode {
		// A rollback-journal database (rule 32): locks per transaction
		// where they belong to the open file, else held until Close as
		// below. EXCLUSIVE for the moment Open rolls back a hot journal
		// or writes a new file's first page.
		p.rb = &rollback{perTx: vfs.FileLocks && !p.opts.Exclusive}
		if p.readOnly {
			return nil
		}
		if p.rb.perTx {
			if _, jerr := p.fs.Stat(JournalPath(p.path)); jerr != nil && !empty {
				return nil
			}
		}
		return p.lock(vfs.LockExclusive)
	}
	walMode := n == len(hdr) && format.Header(hdr[:]).ReadVersion() == format.FileFormatWAL
	p.shareWAL = p.sharing(walMode || (empty && !p.readOnly))
	if p.readOnly {
		if p.shareWAL {
			// Without the right to write the -shm file, a reader takes a
			// read slot the old way (shm.go).
			f, err := p.openSide(shmPath(p.path), os.O_RDWR)
			if err != nil {
				p.shareWAL = false
			} else {
				f.Close()
			}
		}
		return nil
	}
	if p.shareWAL {
		_, jerr := p.fs.Stat(JournalPath(p.path))
		if jerr != nil && !empty {
			return nil // nothing to write at Open
		}
	}
	return p.lock(vfs.LockExclusive)
}

// lock takes the lock level on the database file, retrying until
// opts.Timeout.
func (p *Pager) lock(level vfs.LockLevel) error {
	deadline := time.Now().Add(p.opts.Timeout)
	pause := time.Millisecond
	for {
		err := p.f.Lock(level)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrLocked) {
			return fmt.Errorf("lock %s: %w", p.path, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			if p.opts.Timeout > 0 {
				return fmt.Errorf("%s is held by another process or handle (waited %v): %w", p.path, p.opts.Timeout, ErrLocked)
			}
			return fmt.Errorf("%s is held by another process or handle: %w", p.path, ErrLocked)
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, lockRetryMax)
	}
}
