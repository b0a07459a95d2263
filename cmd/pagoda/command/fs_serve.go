package command

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
)

func newFSServeCmd() *cli.Command {
	var addr string
	var maxRequests int
	cmd := &cli.Command{
		Use:   "serve FILE",
		Short: "Serve the archive over HTTP",
		Long: `Serve FILE's archive over HTTP at --addr: files, and directory listings
(or a directory's index.html), as http.FileServer serves a directory.
FILE is opened read-only; each request sees the last commit. The URL is
printed; SIGINT or SIGTERM stops the server once the requests in
progress are done (at most 5 seconds).

At most --max-requests requests are served at a time; the others wait
their turn. Compressed files are inflated as they are sent, so memory
stays bounded whatever sizes the archive claims.

A damaged file (data that does not inflate to its stored size, say) is
logged on stderr and answered with 500 Internal Server Error when the
damage shows before the first byte of the response's body, as it always
does in a file of up to 1 MiB, which is read through first. Damage found
later in a larger file cuts its response short: the client gets fewer
bytes than the Content-Length, and the connection is closed.

The server is the pagoda-fs-serve command, which pagoda runs in its
place: it is installed beside pagoda (go install ./cmd/... from a
clone), or in the PATH. pagoda itself does not link Go's HTTP server,
so that every other command starts faster.`,
		Args: cli.ExactArgs(1),
		RunE: func(cmd *cli.Command, args []string) error {
			if maxRequests < 1 {
				return fmt.Errorf("--max-requests must be positive, not %d", maxRequests)
			}
			if Serve == nil {
				return execServe(args[0], addr, maxRequests)
			}
			db, err := openDB(args[0], &pagoda.Options{ReadOnly: true, Timeout: lockWait})
			if err != nil {
				return err
			}
			defer db.Close()
			f, err := fsys.Open(db, nil)
			if err != nil {
				return noArchive(args[0], err)
			}
			return Serve(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), f, args[0], addr, maxRequests)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on, host:port")
	cmd.Flags().IntVar(&maxRequests, "max-requests", 32, "requests served at a time; the others wait")
	return cmd
}

// Serve serves the archive f of the file called name over HTTP: nil in
// the pagoda command, which runs pagoda-fs-serve instead (execServe); the
// pagoda-fs-serve command sets it (to cmd/internal/serve.Run).
var Serve func(ctx context.Context, out, logOut io.Writer, f *fsys.FS, name, addr string, maxRequests int) error

// serveCommand is the name of the command that serves archives.
const serveCommand = "pagoda-fs-serve"

// execServe runs pagoda-fs-serve, found beside the running executable or
// else in the PATH, serving file: in place of this process where the
// system can (runServe).
func execServe(file, addr string, maxRequests int) error {
	path, err := servePath()
	if err != nil {
		return err
	}
	argv := []string{serveCommand, "--addr", addr, "--max-requests", strconv.Itoa(maxRequests), "--", file}
	return runServe(path, argv)
}

// servePath finds pagoda-fs-serve.
func servePath() (string, error) {
	if exe, err := os.Executable(); err == nil {
		name := serveCommand
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		p := filepath.Join(filepath.Dir(exe), name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	p, err := exec.LookPath(serveCommand)
	if err != nil {
		return "", fmt.Errorf("fs serve runs the %s command, which is neither beside %s nor in the PATH; install it with go install github.com/pagodadb/pagoda/cmd/%s@latest (%w)",
			serveCommand, os.Args[0], serveCommand, exec.ErrNotFound)
	}
	return p, nil
}
