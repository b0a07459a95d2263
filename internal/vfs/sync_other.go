//go:build !linux

package vfs

import "os"

// datasync is f.Sync where fdatasync is not available (on Darwin, Go's
// Sync asks for F_FULLFSYNC).
func datasync(f *os.File) error { return f.Sync() }
