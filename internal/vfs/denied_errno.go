//go:build !plan9

package vfs

import (
	"errors"
	"syscall"
)

// readOnlyFS reports whether err is EROFS.
func readOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }
