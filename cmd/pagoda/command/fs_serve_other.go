//go:build !unix

package command

import (
	"fmt"
	"os"
	"os/exec"
)

// runServe runs the serving command as a child with this process's
// streams, where a process cannot be replaced (Windows), and waits for it.
func runServe(path string, argv []string) error {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	return nil
}
