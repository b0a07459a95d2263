//go:build unix

package bench

import (
	"io/fs"
	"syscall"
)

// diskUsage is the space info's file takes on disk, as du counts it: its
// allocated 512-byte blocks.
func diskUsage(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return roundBlock(info.Size())
}
