//go:build !unix

package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// MapCopies says whether File.Map returns a copy of the file, which must be
// taken again to see later writes: here, without mmap, it does.
const MapCopies = true

// mapFile reads the file into memory where mmap is not available: size
// bytes, of which those past the end of the file are zeros.
func mapFile(f *os.File, size int) ([]byte, error) {
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}

func unmapFile(b []byte) error { return nil }

// mapShared fails: without mmap there is no memory to share.
func mapShared(f *os.File, off int64, size int) ([]byte, error) {
	return nil, fmt.Errorf("vfs: %s: shared mapping: %w", f.Name(), errors.ErrUnsupported)
}

// dropResident does nothing here: a "mapping" is the only copy.
func dropResident(b []byte) {}
