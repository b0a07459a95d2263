package pager

import (
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
// it leave alone what it reads. From Open to Close it holds a shared lock
// on one of the read-lock bytes READ(1)..READ(4) of the -shm file, whose
// read mark says up to which WAL frame checkpoints may copy pages into the
// database file. The pager's mark is 0, or a mark a sqlite3 reader of the
// same slot set: no checkpoint copies anything past it, none in RESTART or
// TRUNCATE mode runs, and no writer starts the WAL over, while the pager
// is open. sqlite3 processes go on committing, into a WAL that grows until
// the pager closes; the pager reads the file as of Open and does not see
// their commits.
//
// The pager reads nothing else of the -shm file (it finds pages through its
// own index of the WAL), writes only its read mark, and takes no other
// lock there: a sqlite3 connection that opens the file later may find
// itself the first and start the -shm file over, zeroing the marks, and
// rebuild it from the WAL; the pager's slot, which it holds, then reads 0,
// which still holds checkpoints back, and no rebuild resets it.
//
// This needs locks that belong to the pager's open file (Linux's OFD
// locks). Where locks belong to the process, sqlite3 in the same process
// would take the pager's locks for its own, and closing the pager's -shm
// handle would drop sqlite3's: there the pager does without (see
// vfs.FileLocks).
//
// The -shm file's layout, its read marks and lock bytes, is drawn in
// walindex.go. The pager reads and writes its mark with pread and pwrite:
// it does not map the file.

// shmPatience is the least time joinShm waits for locks held elsewhere.
const shmPatience = 100 * time.Millisecond

// shmPath returns the path of the -shm file of database path.
func shmPath(path string) string { return path + "-shm" }

// joinShm takes the pager's part in the -shm protocol (see above),
// retrying until opts.Timeout (at least shmPatience) while sqlite3
// connections hold the locks it needs. Without a -shm file, and unable to
// create one (in a read-only directory, say), it does without: a sqlite3
// process allowed to create it and write the file beside the pager could
// then change what the pager reads.
func (p *Pager) joinShm() error {
	path := shmPath(p.path)
	f, err := p.openSide(path, os.O_RDWR)
	writable := err == nil
	if err != nil && vfs.WriteDenied(err) {
		f, err = p.fs.OpenFile(path, os.O_RDONLY, 0)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	// sqlite3 holds these locks exclusively only for moments (a checkpoint
	// or a reader moving a mark), so the pager waits for them a little even
	// when Timeout is 0, as sqlite3's readers retry.
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
				return fmt.Errorf("%s: no read slot: the file is read-only to this process, and no sqlite3 reader holds a slot it could share: %w", path, ErrLocked)
			}
			if errors.Is(err, ErrLocked) {
				return fmt.Errorf("%s: sqlite3 connections hold the read slots of the WAL-mode file: %w", path, ErrLocked)
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, lockRetryMax)
	}
}

// tryJoinShm takes a read slot once and returns it; a lock held elsewhere
// is ErrLocked, and f is left holding nothing. A slot of its own, marked 0,
// if it can write the file; else a slot sqlite3 readers hold, with a mark:
// the WAL cannot start over while the slot is held, and the mark, a frame
// of the WAL's current round, is at most what the pager then reads of it.
func tryJoinShm(f vfs.File, writable bool) (slot int, err error) {
	if writable {
		for i := 1; i < shmReaders; i++ {
			if f.LockRange(walLockRead(i).offset(), 1, true) != nil {
				continue
			}
			err := writeReadMark(f, i, 0)
			if err == nil {
				err = f.LockRange(walLockRead(i).offset(), 1, false)
			}
			if err != nil {
				f.UnlockRange(walLockRead(i).offset(), 1)
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
		if f.LockRange(walLockRead(i).offset(), 1, false) != nil {
			continue
		}
		if again, err := readMark(f, i); err == nil && again == m {
			return i, nil
		}
		f.UnlockRange(walLockRead(i).offset(), 1)
	}
	return 0, fmt.Errorf("no read slot free: %w", ErrLocked)
}

// readMark reads aReadMark[i]; bytes past the end of the file read as 0.
func readMark(f vfs.File, i int) (uint32, error) {
	var b [4]byte
	n, err := f.ReadAt(b[:], shmOffReadMarks+4*int64(i))
	if n < len(b) && err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return shmWord(b[:]), nil
}

// writeReadMark sets aReadMark[i] to m.
func writeReadMark(f vfs.File, i int, m uint32) error {
	var b [4]byte
	putShmWord(b[:], m)
	_, err := f.WriteAt(b[:], shmOffReadMarks+4*int64(i))
	return err
}

// leaveShm releases the pager's -shm locks and file.
func (p *Pager) leaveShm() error {
	if p.shm == nil {
		return nil
	}
	err := errors.Join(p.shm.UnlockRange(walLockRead(p.shmSlot).offset(), 1), p.shm.Close())
	p.shm = nil
	return err
}
