package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes f's data, and the metadata needed to read it back (its
// size), to stable storage: fdatasync(2), as sqlite3 uses on Linux. It
// skips what fsync would also write (modification times), so a commit that
// overwrites frames of a restarted WAL costs one device flush.
func datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// startWriteback asks the kernel to start writing n bytes of f from off to
// the device, without waiting: sync_file_range(2) with
// SYNC_FILE_RANGE_WRITE. The Sync that follows then waits for less.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
