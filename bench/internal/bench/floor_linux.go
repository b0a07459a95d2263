package bench

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync is fdatasync(2), as pagoda syncs its WAL on Linux.
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// settleDisk writes back every dirty page of every file system (sync(2))
// so that a measurement of syncs does not pay for the writes of the one
// before it.
func settleDisk() { unix.Sync() }
