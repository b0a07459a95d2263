//go:build !linux

package bench

import "os"

// datasync is f.Sync, as pagoda syncs its WAL outside Linux.
func datasync(f *os.File) error { return f.Sync() }

// settleDisk does nothing here.
func settleDisk() {}
