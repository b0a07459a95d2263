package pager

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/pagodadb/pagoda/internal/vfs"
)

// A read-only pager of a WAL-mode file takes part in sqlite3's -shm
// protocol as a reader, so that sqlite3 processes writing the file beside
// it leave alone what it reads. It holds, from Open to Close:
//
//   - a shared lock on the DMS byte, which tells each sqlite3 connection
//     that opens the file that it is not the first, so that it keeps the
//     -shm file rather than starting it over;
//   - a shared lock on one of the read-lock bytes READ(1)..READ(4), whose
//     read mark says up to which WAL frame checkpoints may copy pages into
//     the database file. The pager's mark is 0: no checkpoint copies
//     anything, no checkpoint in RESTART or TRUNCATE mode runs, and no
//     writer starts the WAL over, while it is open. sqlite3 processes go
//     on committing, into a WAL that grows until the pager closes; the
//     pager reads the file as of Open and does not see their commits.
//
// The pager reads nothing else of the -shm file (it finds pages through its
// own index of the WAL) and writes only its read mark. The first
// connection to a -shm file starts it over (truncates it), as sqlite3's
// does, so that the next sqlite3 connection rebuilds the wal-index from the
// WAL instead of trusting one a dead process left.
//
// The -shm file's first 136 bytes, in the machine's byte order:
//
//	offset  size  field
//	0       48    the wal-index header
//	48      48    its copy
//	96      4     nBackfill: WAL frames copied into the database file
//	100     20    aReadMark[0..4]: the read marks, 0xffffffff when unused
//	120     8     (lock bytes, never read or written: locked with fcntl)
//	128     8     nBackfillAttempted, unused
//
// The lock bytes: WRITE 120, CKPT 121, RECOVER 122, READ(0..4) 123..127,
// DMS 128.
const (
	shmReadMarks    = 100          // aReadMark[0]
	shmLocks        = 120          // the first lock byte, WRITE
	shmReadLock0    = shmLocks + 3 // READ(0)
	shmReaders      = 5            // read-lock bytes and marks: READ(0)..READ(4)
	shmDMS          = shmLocks + 8 // held shared by every connection
	readMarkNotUsed = uint32(1<<32 - 1)
)

// shmPatience is the least time joinShm waits for locks held elsewhere.
const shmPatience = 100 * time.Millisecond

// shmPath returns the path of the -shm file of database path.
func shmPath(path string) string { return path + "-shm" }

// joinShm takes the pager's part in the -shm protocol (see above),
// retrying until opts.Timeout (at least shmPatience) while sqlite3
// connections hold the locks it needs. Without a -shm file it cannot create, no sqlite3 process can
// write the file either: it does without.
func (p *Pager) joinShm() error {
	path := shmPath(p.path)
	f, err := p.fs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	writable := err == nil
	if err != nil && vfs.WriteDenied(err) {
		f, err = p.fs.OpenFile(path, os.O_RDONLY, 0)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pager: %w", err)
	}
	// sqlite3 holds these locks exclusively only for moments (a first
	// connection starting the file, a checkpoint or reader moving a mark),
	// so the pager waits for them a little even when Timeout is 0, as
	// sqlite3's readers retry.
	deadline := time.Now().Add(max(p.opts.Timeout, shmPatience))
	pause := time.Millisecond
	for {
		slot, err := tryJoinShm(f, writable)
		if err == nil {
			p.shm, p.shmSlot = f, slot
			return nil
		}
		left := time.Until(deadline)
		if !errors.Is(err, ErrLocked) || left <= 0 {
			f.Close()
			if errors.Is(err, ErrLocked) && !writable {
				return fmt.Errorf("pager: %s: no read slot: the file is read-only to this process, and no sqlite3 reader holds a slot it could share: %w", path, ErrLocked)
			}
			if errors.Is(err, ErrLocked) {
				return fmt.Errorf("pager: %s: sqlite3 connections hold the read slots of the WAL-mode file: %w", path, ErrLocked)
			}
			return fmt.Errorf("pager: %s: %w", path, err)
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, lockRetryMax)
	}
}

// tryJoinShm takes the DMS and a read slot once, returning the slot; a
// lock held elsewhere is ErrLocked, and f is left holding nothing.
func tryJoinShm(f vfs.File, writable bool) (slot int, err error) {
	if writable && f.LockRange(shmDMS, 1, true) == nil {
		// The first connection: start the file over.
		if err := f.Truncate(0); err != nil {
			f.UnlockRange(shmDMS, 1)
			return 0, err
		}
	}
	if err := f.LockRange(shmDMS, 1, false); err != nil {
		return 0, err
	}
	// A slot of its own, marked 0; else a slot sqlite3 readers hold, with
	// a mark: the WAL cannot start over while the slot is held, and the
	// mark, a frame of the WAL's current round, is at most what the pager
	// then reads of it.
	if writable {
		for i := 1; i < shmReaders; i++ {
			if f.LockRange(shmReadLock0+int64(i), 1, true) != nil {
				continue
			}
			err := writeReadMark(f, i, 0)
			if err == nil {
				err = f.LockRange(shmReadLock0+int64(i), 1, false)
			}
			if err != nil {
				f.UnlockRange(shmReadLock0+int64(i), 1)
				f.UnlockRange(shmDMS, 1)
				return 0, err
			}
			return i, nil
		}
	}
	for i := 1; i < shmReaders; i++ {
		m, err := readMark(f, i)
		if err != nil || m == readMarkNotUsed {
			continue
		}
		if f.LockRange(shmReadLock0+int64(i), 1, false) != nil {
			continue
		}
		if again, err := readMark(f, i); err == nil && again == m {
			return i, nil
		}
		f.UnlockRange(shmReadLock0+int64(i), 1)
	}
	f.UnlockRange(shmDMS, 1)
	return 0, fmt.Errorf("no read slot free: %w", ErrLocked)
}

// readMark reads aReadMark[i]; bytes past the end of the file read as 0.
func readMark(f vfs.File, i int) (uint32, error) {
	var b [4]byte
	n, err := f.ReadAt(b[:], shmReadMarks+4*int64(i))
	if n < len(b) && err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return binary.NativeEndian.Uint32(b[:]), nil
}

// writeReadMark sets aReadMark[i] to m.
func writeReadMark(f vfs.File, i int, m uint32) error {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], m)
	_, err := f.WriteAt(b[:], shmReadMarks+4*int64(i))
	return err
}

// leaveShm releases the pager's -shm locks and file.
func (p *Pager) leaveShm() error {
	if p.shm == nil {
		return nil
	}
	err := errors.Join(p.shm.UnlockRange(shmReadLock0+int64(p.shmSlot), 1), p.shm.UnlockRange(shmDMS, 1), p.shm.Close())
	p.shm = nil
	return err
}
