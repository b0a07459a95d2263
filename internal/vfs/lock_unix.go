//go:build unix

package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Lock takes level as sqlite3's unixLock does (see the package doc). A
// failed attempt leaves the file at the level it had.
func (f *osFile) Lock(level LockLevel) error {
	if level <= f.level {
		return nil
	}
	prev := f.level
	// undo goes back to prev after a failed step.
	undo := func(err error) error {
		switch {
		case prev == LockNone:
			_ = f.Unlock()
		case prev < LockPending && f.level >= LockPending:
			_ = f.setlk(unix.F_UNLCK, PendingByte, 1)
		}
		f.level = prev
		return err
	}
	if f.level == LockNone {
		if err := f.lockShared(); err != nil {
			return err
		}
		f.level = LockShared
	}
	if level == LockShared {
		return nil
	}
	if level == LockReserved {
		if err := f.setlk(unix.F_WRLCK, ReservedByte, 1); err != nil {
			return undo(err)
		}
		f.level = LockReserved
		return nil
	}
	if f.level < LockPending {
		if err := f.setlk(unix.F_WRLCK, PendingByte, 1); err != nil {
			return undo(err)
		}
		f.level = LockPending
	}
	if level == LockExclusive {
		if err := f.setlk(unix.F_WRLCK, SharedFirst, SharedSize); err != nil {
			return undo(err)
		}
		f.level = LockExclusive
	}
	return nil
}

// lockShared takes SHARED: a read lock on PENDING_BYTE (which fails while
// a writer holds or waits for EXCLUSIVE), a read lock on the SHARED range,
// then lets PENDING_BYTE go.
func (f *osFile) lockShared() error {
	if err := f.setlk(unix.F_RDLCK, PendingByte, 1); err != nil {
		return err
	}
	err := f.setlk(unix.F_RDLCK, SharedFirst, SharedSize)
	if uerr := f.setlk(unix.F_UNLCK, PendingByte, 1); err == nil {
		err = uerr
	}
	if err != nil {
		_ = f.setlk(unix.F_UNLCK, SharedFirst, SharedSize)
	}
	return err
}

// Downgrade goes to SHARED (see File): the SHARED range a read lock again,
// then PENDING and RESERVED released.
func (f *osFile) Downgrade() error {
	if f.level <= LockShared {
		return nil
	}
	if f.level == LockExclusive {
		if err := f.setlk(unix.F_RDLCK, SharedFirst, SharedSize); err != nil {
			return err
		}
	}
	f.level = LockShared
	return errors.Join(f.setlk(unix.F_UNLCK, PendingByte, 1), f.setlk(unix.F_UNLCK, ReservedByte, 1))
}

// Unlock releases every lock byte.
func (f *osFile) Unlock() error {
	if f.level == LockNone {
		return nil
	}
	f.level = LockNone
	return f.setlk(unix.F_UNLCK, PendingByte, SharedFirst+SharedSize-PendingByte)
}

// LockRange locks n bytes from start (see File).
func (f *osFile) LockRange(start, n int64, exclusive bool) error {
	typ := int16(unix.F_RDLCK)
	if exclusive {
		typ = unix.F_WRLCK
	}
	return f.setlk(typ, start, n)
}

// UnlockRange releases n bytes from start (see File).
func (f *osFile) UnlockRange(start, n int64) error { return f.setlk(unix.F_UNLCK, start, n) }

// HeldElsewhere asks fcntl (getLockCmd) which lock an exclusive lock of
// the bytes would meet (see File).
func (f *osFile) HeldElsewhere(start, n int64) (bool, error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: start, Len: n}
	for {
		err := unix.FcntlFlock(f.f.Fd(), getLockCmd, &lk)
		switch {
		case err == nil:
			return lk.Type != unix.F_UNLCK, nil
		case errors.Is(err, unix.EINTR):
			continue
		}
		return false, err
	}
}

// setlk sets a lock of type typ on n bytes from start, without waiting
// (lockCmd: F_OFD_SETLK on Linux, F_SETLK elsewhere). A conflict is
// ErrLocked.
func (f *osFile) setlk(typ int16, start, n int64) error {
	lk := unix.Flock_t{Type: typ, Whence: io.SeekStart, Start: start, Len: n}
	for {
		err := unix.FcntlFlock(f.f.Fd(), lockCmd, &lk)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EACCES):
			return fmt.Errorf("%s: %w", f.f.Name(), ErrLocked)
		}
		return &os.PathError{Op: "fcntl lock", Path: f.f.Name(), Err: err}
	}
}
