//go:build !linux

package vfs

import "os"

// datasync is f.Sync where fdatasync is not available (on Darwin, Go's
// Sync asks for F_FULLFSYNC).
func datasync(f *os.File) error { return f.Sync() }

// startWriteback does nothing where there is no sync_file_range(2).
func startWriteback(f *os.File, off, n int64) {}
