//go:build unix

package vfs

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openFile opens name as os.OpenFile does, without os.OpenFile's attempt
// to register the descriptor with the runtime's network poller: a
// regular file cannot be polled, and the attempt costs the process an
// epoll instance, an eventfd and five more system calls on its first
// open. os.NewFile wraps a blocking descriptor without trying.
func openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	for {
		fd, err := unix.Open(name, flag|unix.O_CLOEXEC, uint32(perm.Perm()))
		if err == nil {
			return os.NewFile(uintptr(fd), name), nil
		}
		if err != unix.EINTR {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
}
