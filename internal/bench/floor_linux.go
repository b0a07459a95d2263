package bench

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync is fdatasync(2), as pagoda syncs its WAL on Linux.
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
