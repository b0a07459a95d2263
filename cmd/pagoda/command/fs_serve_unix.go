//go:build unix

package command

import (
	"fmt"
	"os"
	"syscall"
)

// runServe replaces the process with the serving command's: signals and
// the exit status are then the server's own.
func runServe(path string, argv []string) error {
	return fmt.Errorf("run %s: %w", path, syscall.Exec(path, argv, os.Environ()))
}
