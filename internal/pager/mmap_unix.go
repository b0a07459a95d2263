//go:build unix

package pager

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapCopies says that a mapping is a copy (see mmap_other.go); here it is
// a real shared mapping that sees later writes to the file.
const mapCopies = false

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
