package vfs

import "golang.org/x/sys/unix"

// lockCmd is fcntl's command for a lock that does not wait. On Linux it is
// an open-file-description lock: owned by the open file, so that handles
// in one process exclude each other and closing another descriptor of the
// file keeps it, and in conflict with sqlite3's POSIX locks all the same.
const lockCmd = unix.F_OFD_SETLK

// getLockCmd asks which lock would stand in a lock's way (HeldElsewhere):
// another open file's, this one's own never.
const getLockCmd = unix.F_OFD_GETLK

// FileLocks reports that locks belong to the open file, not the process:
// a lock taken through one handle is not released, nor merged, by another
// handle of the same file in this process (and sqlite3's POSIX locks there
// conflict with it as another process's would).
const FileLocks = true
