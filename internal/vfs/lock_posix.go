//go:build unix && !linux

package vfs

import "golang.org/x/sys/unix"

// lockCmd is fcntl's command for a lock that does not wait: a classic POSIX
// lock, owned by the process. Two handles in one process therefore do not
// exclude each other, and closing any descriptor of the file in this
// process releases its locks (see the package doc).
const lockCmd = unix.F_SETLK

// getLockCmd asks which lock would stand in a lock's way (HeldElsewhere):
// another process's, this process's own never.
const getLockCmd = unix.F_GETLK

// FileLocks reports that locks belong to the process (see lock_linux.go).
const FileLocks = false
