// Package serve is pagoda's HTTP server for a SQLite Archive: what
// `pagoda fs serve` runs. It lives apart from the pagoda command, in the
// pagoda-fs-serve command, so that pagoda does not link net/http (see
// cmd/pagoda/internal/cli).
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pagodadb/pagoda/fsys"
)

// Run serves f, the archive of the file called name, at addr until
// SIGINT, SIGTERM or the end of ctx: it prints the URL on out and logs
// damaged files on logOut. At most maxRequests requests are served at a
// time (Handler).
func Run(ctx context.Context, out, logOut io.Writer, f *fsys.FS, name, addr string, maxRequests int) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(out, "serving %s at http://%s/\n", name, ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Serve(ctx, ln, Handler(f, maxRequests, log.New(logOut, "pagoda: ", log.LstdFlags)))
}

// Handler serves the tree of f as http.FileServer serves a directory,
// at most limit requests at a time, logging damaged files on logger:
//
//  1. A request waits for one of limit slots (or for its client to go) and
//     holds it until its response is written: each request reads the
//     archive through one buffer and one inflater, so memory is bounded
//     by limit, not by what the archive claims.
//  2. A regular file of up to verifyLimit bytes is read through before
//     http.FileServer gets it: damage there fails the open.
//  3. The response's header waits for the first byte of its body: an
//     error met before that (an open, a listing, a read to sniff the
//     content type, the body's first read) answers the request with 500,
//     whatever http.FileServer wrote.
//  4. Damage met in a file once its body has started stops its reads
//     (fsys never yields the last byte of a damaged file) and the handler
//     aborts the response (http.ErrAbortHandler): the client sees a body
//     shorter than its Content-Length and a closed connection.
//  5. Every error but a missing name or a forbidden one is logged, with
//     the request's method and path.
func Handler(f *fsys.FS, limit int, logger *log.Logger) http.Handler {
	return &fsServer{fsys: f, slots: make(chan struct{}, limit), log: logger}
}

// verifyLimit is the size up to which Handler reads a file through
// before serving it (rule 2).
const verifyLimit = 1 << 20

type fsServer struct {
	fsys  *fsys.FS
	slots chan struct{}
	log   *log.Logger
}

func (s *fsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case s.slots <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	defer func() { <-s.slots }()
	req := &servedFS{fsys: s.fsys}
	resp := &servedResponse{ResponseWriter: w, req: req}
	http.FileServer(req).ServeHTTP(resp, r)
	resp.start()
	err := req.failure()
	if err == nil {
		return
	}
	s.log.Printf("%s %s: %v", r.Method, r.URL.Path, err)
	if resp.started {
		panic(http.ErrAbortHandler) // rule 4
	}
}

// servedFS is the archive as one request sees it, for http.FileServer:
// it notes the request's first error worth logging.
type servedFS struct {
	fsys *fsys.FS
	mu   sync.Mutex // a request for several ranges reads in a goroutine of http.ServeContent's
	err  error
}

// note keeps err if it is the request's first error worth logging.
func (s *servedFS) note(err error) {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// failure returns the error noted, if any.
func (s *servedFS) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Open implements http.FileSystem: name is rooted and cleaned.
func (s *servedFS) Open(name string) (http.File, error) {
	if name = strings.TrimPrefix(name, "/"); name == "" {
		name = "."
	}
	f, err := s.fsys.Open(name)
	if errors.Is(err, fs.ErrInvalid) {
		// A name no entry can have, or a path through a file: not found.
		err = &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if err == nil {
		var fi fs.FileInfo
		if fi, err = f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() <= verifyLimit {
			// Rule 2.
			if _, err = io.Copy(io.Discard, f); err == nil {
				_, err = f.(io.Seeker).Seek(0, io.SeekStart)
			}
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		s.note(err)
		return nil, err
	}
	return &servedFile{File: f, req: s}, nil
}

// servedFile is an open file or directory of the archive, as
// http.FileServer reads it; it notes its errors in its request's
// servedFS.
type servedFile struct {
	fs.File // an *fsys.File
	req     *servedFS
}

func (f *servedFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	if err != nil && err != io.EOF {
		f.req.note(err)
	}
	return n, err
}

func (f *servedFile) Seek(offset int64, whence int) (int64, error) {
	return f.File.(io.Seeker).Seek(offset, whence)
}

func (f *servedFile) Readdir(count int) ([]fs.FileInfo, error) {
	d, ok := f.File.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Err: fsys.ErrNotDir}
	}
	entries, err := d.ReadDir(count)
	infos := make([]fs.FileInfo, 0, len(entries))
	for _, e := range entries {
		fi, ierr := e.Info()
		if ierr != nil {
			err = ierr
			break
		}
		infos = append(infos, fi)
	}
	if err != nil && err != io.EOF {
		f.req.note(err)
	}
	return infos, err
}

// servedResponse is a request's response: it holds back the header
// http.FileServer gives until the first byte of the body, or the end of
// the request, and answers 500 instead if the request met an error by
// then (rule 3).
type servedResponse struct {
	http.ResponseWriter
	req     *servedFS
	code    int  // the status http.FileServer gave
	started bool // the header went out as http.FileServer gave it
	failed  bool // a 500 went out instead; what follows is dropped
}

// errAnswered stops http.FileServer's writes after a 500 went out.
var errAnswered = errors.New("the request was answered with 500")

func (w *servedResponse) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *servedResponse) Write(p []byte) (int, error) {
	w.start()
	if w.failed {
		return 0, errAnswered
	}
	return w.ResponseWriter.Write(p)
}

// start sends the header held back, or a 500 instead.
func (w *servedResponse) start() {
	if w.started || w.failed {
		return
	}
	if err := w.req.failure(); err != nil {
		w.failed = true
		for _, k := range []string{"Content-Range", "Accept-Ranges", "Last-Modified", "Etag", "Content-Encoding"} {
			w.Header().Del(k)
		}
		http.Error(w.ResponseWriter, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.started = true
	w.ResponseWriter.WriteHeader(w.code)
}

// Unwrap gives http.ResponseController the response underneath.
func (w *servedResponse) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Serve serves h on ln until ctx is done, then shuts the server down,
// letting the requests in progress finish for up to 5 seconds.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
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
