package command

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
)

func newFSServeCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve FILE",
		Short: "Serve the archive over HTTP",
		Long: `Serve FILE's archive over HTTP at --addr: files, and directory listings
(or a directory's index.html), as http.FileServer serves a directory.
FILE is opened read-only; each request sees the last commit. The URL is
printed; SIGINT or SIGTERM stops the server once the requests in
progress are done (at most 5 seconds).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := openDB(args[0], &pagoda.Options{ReadOnly: true})
			if err != nil {
				return err
			}
			defer db.Close()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(cmd.OutOrStdout(), "serving %s at http://%s/\n", args[0], ln.Addr()); err != nil {
				ln.Close()
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, ln, fsHandler(fsys.New(db, nil)))
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on, host:port")
	return cmd
}

// fsHandler serves the tree of f as http.FileServer serves a directory.
func fsHandler(f *fsys.FS) http.Handler { return http.FileServer(http.FS(f)) }

// serve serves h on ln until ctx is done, then shuts the server down,
// letting the requests in progress finish for up to 5 seconds.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close() // the requests still running are cut off
	}
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
