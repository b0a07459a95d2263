package vfs

import (
	"errors"
	"io/fs"
)

// WriteDenied reports whether err, from opening a file for writing,
// refuses write access to a file that may still be read: its permissions,
// or a read-only filesystem.
func WriteDenied(err error) bool {
	return errors.Is(err, fs.ErrPermission) || readOnlyFS(err)
}
