//go:build unix

package bench

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps f read-only and shared, as pagoda maps a database.
func mapFile(f *os.File) (data []byte, unmap func(), err error) {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return nil, nil, err
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { unix.Munmap(data) }, nil
}
