//go:build !unix

package sqltest

import "os"

// blockingPipe returns a pipe (elsewhere than on Unix, os.Pipe's).
func blockingPipe() (r, w *os.File, err error) { return os.Pipe() }
