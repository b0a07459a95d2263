package vfs

import "golang.org/x/sys/unix"

// lockCmd is fcntl's command for a lock that does not wait. On Linux it is
// an open-file-description lock: owned by the open file, so that handles
// in one process exclude each other and closing another descriptor of the
// file keeps it, and in conflict with sqlite3's POSIX locks all the same.
const lockCmd = unix.F_OFD_SETLK
