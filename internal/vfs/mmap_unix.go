//go:build unix

package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// MapCopies says whether File.Map returns a copy of the file, which must be
// taken again to see later writes (see mmap_other.go). Here it is a real
// shared mapping that sees them.
const MapCopies = false

// mapFile maps the first size bytes of f read-only and shared. Pages are
// served as sub-slices of the mapping: no copy, no allocation.
func mapFile(f *os.File, size int) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	return b, nil
}

func unmapFile(b []byte) error {
	if b == nil {
		return nil
	}
	return unix.Munmap(b)
}

// mapShared maps size bytes of f from off read-write and shared.
func mapShared(f *os.File, off int64, size int) ([]byte, error) {
	b, err := unix.Mmap(int(f.Fd()), off, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	return b, nil
}

// dropResident lets the pages of mapping b go from the process's resident
// set: they stay in the page cache, and an access maps them again from
// the file (a shared file mapping loses nothing). A retired mapping's
// pages would otherwise count twice, there and in its successor.
func dropResident(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
	}
}
