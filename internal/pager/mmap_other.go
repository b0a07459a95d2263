//go:build !unix

package pager

import (
	"io"
	"os"
)

// mapFile reads the file into memory where mmap is not available.
func mapFile(f *os.File, size int) ([]byte, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, int64(size)), b); err != nil {
		return nil, err
	}
	return b, nil
}

func unmapFile(b []byte) error { return nil }
