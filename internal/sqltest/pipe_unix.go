//go:build unix

package sqltest

import (
	"os"
	"syscall"
)

// blockingPipe returns a pipe whose ends are blocking files: reads and
// writes are plain system calls, a reader woken by the kernel at once,
// not through the runtime's poller.
func blockingPipe() (r, w *os.File, err error) {
	var fds [2]int
	syscall.ForkLock.RLock()
	err = syscall.Pipe(fds[:])
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, os.NewSyscallError("pipe", err)
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}
