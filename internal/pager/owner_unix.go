//go:build unix

package pager

import (
	"io/fs"
	"os"
	"syscall"
)

// runsAsRoot is whether the process may give files away (ownSide).
var runsAsRoot = os.Geteuid() == 0

// fileOwner returns the owner of the file st describes.
func fileOwner(st fs.FileInfo) (uid, gid int, ok bool) {
	if sys, isStat := st.Sys().(*syscall.Stat_t); isStat {
		return int(sys.Uid), int(sys.Gid), true
	}
	return 0, 0, false
}

func chown(path string, uid, gid int) error { return os.Chown(path, uid, gid) }
