//go:build unix

package pager

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f read-only and shared. Pages are
// served as sub-slices of the mapping: no copy, no allocation.
func mapFile(f *os.File, size int) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	return unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
}

func unmapFile(b []byte) error {
	if b == nil {
		return nil
	}
	return unix.Munmap(b)
}
