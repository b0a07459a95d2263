//go:build !unix

package bench

import "io/fs"

// diskUsage is an estimate of the space info's file takes on disk: its
// size rounded up to 4 KiB blocks (this OS does not report the blocks).
func diskUsage(info fs.FileInfo) int64 { return roundBlock(info.Size()) }
