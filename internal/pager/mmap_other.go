//go:build !unix

package pager

import (
	"io"
	"os"
)

// mapCopies says that a "mapping" is a copy, which must be made again to
// see later writes.
const mapCopies = true

// mapFile reads the file into memory where mmap is not available: size
// bytes, of which those past the end of the file are zeros.
func mapFile(f *os.File, size int) ([]byte, error) {
	b := make([]byte, size)
	n, err := f.ReadAt(b, 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	_ = n
	return b, nil
}

func unmapFile(b []byte) error { return nil }
