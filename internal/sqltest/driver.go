package sqltest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// The "sqlite" database/sql driver of pagoda's tests: SQLite itself
// (modernc.org/sqlite), run as a separate process, the oracle
// (internal/sqltest/oracle, a module of its own), which this package
// builds with the go command the first time a test opens a database and
// starts once per test binary. Nothing in pagoda's module imports SQLite:
// a program that imports pagoda has none in its module graph, even after
// go mod tidy, which reads the imports of its dependencies' tests.
//
// Each connection is one connection of the oracle's, which runs its
// statements in order; the connections run side by side, as they would
// in one process. Results come back whole (every row of a query at once),
// with SQLite's types: int64, float64, string for TEXT, []byte for BLOB,
// time.Time where the driver gives one, nil for NULL.
//
// PAGODA_SQLITE_ORACLE names an oracle binary to run instead of building
// one.

func init() { sql.Register("sqlite", sqliteDriver{}) }

// The wire types, as the oracle declares them.

type request struct {
	ID   uint64
	Op   string // open, exec, query, close
	Conn uint64
	DSN  string
	SQL  string
	Args []value
}

type response struct {
	ID       uint64
	Err      string
	Cols     []string
	Types    []string
	Rows     [][]value
	LastID   int64
	Affected int64
}

type value struct {
	K byte // 'n' NULL, 'i' int64, 'f' float64 (its bits in I: gob drops a -0.0 field as zero), 's' text, 'b' blob, 't' time, 'o' bool
	I int64
	B []byte
	T time.Time
}

func (v value) native() driver.Value {
	switch v.K {
	case 'i':
		return v.I
	case 'f':
		return math.Float64frombits(uint64(v.I))
	case 's':
		return string(v.B)
	case 'b':
		if v.B == nil {
			return []byte{}
		}
		return v.B
	case 't':
		return v.T
	case 'o':
		return v.I != 0
	}
	return nil
}

func valueOf(x driver.Value) (value, error) {
	switch x := x.(type) {
	case nil:
		return value{K: 'n'}, nil
	case int64:
		return value{K: 'i', I: x}, nil
	case float64:
		return value{K: 'f', I: int64(math.Float64bits(x))}, nil
	case string:
		return value{K: 's', B: []byte(x)}, nil
	case []byte:
		return value{K: 'b', B: x}, nil
	case time.Time:
		return value{K: 't', T: x}, nil
	case bool:
		if x {
			return value{K: 'o', I: 1}, nil
		}
		return value{K: 'o'}, nil
	}
	return value{}, fmt.Errorf("sqltest: cannot send a %T to SQLite", x)
}

// oracle is the running oracle process. A caller sends its request, then
// reads responses itself while no other caller is reading, keeping those
// of others for them, so that one caller at a time pays no goroutine's
// wake-up; the pipes are blocking files, read without the runtime's poller.
type oracle struct {
	wmu sync.Mutex // the encoder
	w   *bufio.Writer
	enc *gob.Encoder

	mu      sync.Mutex // what follows
	cond    *sync.Cond // a response kept, or the reader gone
	dec     *gob.Decoder
	reading bool
	next    uint64
	kept    map[uint64]response
	err     error // the process is gone
}

var (
	oracleOnce sync.Once
	theOracle  *oracle
	oracleErr  error
)

// call sends req and waits for its response.
func (o *oracle) call(req request) (response, error) {
	o.mu.Lock()
	if o.err != nil {
		defer o.mu.Unlock()
		return response{}, o.err
	}
	o.next++
	id := o.next
	o.mu.Unlock()
	req.ID = id
	o.wmu.Lock()
	err := o.enc.Encode(req)
	if err == nil {
		err = o.w.Flush()
	}
	o.wmu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("sqltest: the SQLite oracle: %w", err)
	}
	for {
		if r, ok := o.kept[id]; ok {
			delete(o.kept, id)
			return outcome(r)
		}
		if o.err != nil {
			return response{}, o.err
		}
		if o.reading {
			o.cond.Wait()
			continue
		}
		o.reading = true
		o.mu.Unlock()
		var r response
		err := o.dec.Decode(&r)
		o.mu.Lock()
		o.reading = false
		o.cond.Broadcast() // someone else may read now, or find its response
		if err != nil {
			o.err = fmt.Errorf("sqltest: the SQLite oracle stopped: %w", err)
			continue
		}
		if r.ID == id {
			return outcome(r)
		}
		o.kept[r.ID] = r
	}
}

func outcome(r response) (response, error) {
	if r.Err != "" {
		return r, errors.New(r.Err)
	}
	return r, nil
}

// startOracle builds the oracle if it must and starts it.
func startOracle() (*oracle, error) {
	oracleOnce.Do(func() {
		bin := os.Getenv("PAGODA_SQLITE_ORACLE")
		if bin == "" {
			bin, oracleErr = buildOracle()
			if oracleErr != nil {
				return
			}
		}
		fromParent, toChild, err := blockingPipe()
		if err != nil {
			oracleErr = err
			return
		}
		fromChild, toParent, err := blockingPipe()
		if err != nil {
			oracleErr = err
			return
		}
		cmd := exec.Command(bin)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = fromParent, toParent, os.Stderr
		err = cmd.Start()
		fromParent.Close()
		toParent.Close()
		if err != nil {
			oracleErr = fmt.Errorf("sqltest: start the SQLite oracle %s: %w", bin, err)
			return
		}
		w := bufio.NewWriterSize(toChild, 1<<16)
		o := &oracle{w: w, enc: gob.NewEncoder(w), dec: gob.NewDecoder(bufio.NewReaderSize(fromChild, 1<<16)), kept: map[uint64]response{}}
		o.cond = sync.NewCond(&o.mu)
		theOracle = o
	})
	return theOracle, oracleErr
}

// buildOracle builds the oracle's source, found above the working
// directory (a test runs in its package's directory), into the user's
// cache, under a name that changes with the source and the Go version, and
// returns the binary's path.
func buildOracle() (string, error) {
	src, err := oracleSource()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	h.Write([]byte(runtime.Version() + runtime.GOOS + runtime.GOARCH))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "pagoda-sqlite-oracle")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "oracle-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	// Test binaries of several packages may build at once: each into its
	// own file, renamed into place.
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	gocmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gocmd); err != nil {
		gocmd = "go"
	}
	cmd := exec.Command(gocmd, "build", "-o", tmp, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("sqltest: build the SQLite oracle in %s: %v\n%s", src, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// oracleSource finds internal/sqltest/oracle in the working directory or
// above it.
func oracleSource() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		src := filepath.Join(dir, "internal", "sqltest", "oracle")
		if _, err := os.Stat(filepath.Join(src, "go.mod")); err == nil {
			return src, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("sqltest: internal/sqltest/oracle not found above the working directory: run the tests from pagoda's checkout, or set PAGODA_SQLITE_ORACLE")
		}
		dir = up
	}
}

// The database/sql driver.

type sqliteDriver struct{}

func (sqliteDriver) Open(dsn string) (driver.Conn, error) {
	o, err := startOracle()
	if err != nil {
		return nil, err
	}
	r, err := o.call(request{Op: "open", DSN: dsn})
	if err != nil {
		return nil, err
	}
	return &conn{o: o, id: r.ID}, nil
}

type conn struct {
	o  *oracle
	id uint64
}

var (
	_ driver.ExecerContext  = (*conn)(nil)
	_ driver.QueryerContext = (*conn)(nil)
	_ driver.ConnBeginTx    = (*conn)(nil)
)

func (c *conn) Prepare(q string) (driver.Stmt, error) { return &stmt{c: c, q: q}, nil }

func (c *conn) Close() error {
	_, err := c.o.call(request{Op: "close", Conn: c.id})
	return err
}

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn) BeginTx(_ context.Context, opts driver.TxOptions) (driver.Tx, error) {
	q := "BEGIN"
	if opts.ReadOnly {
		q = "BEGIN DEFERRED"
	}
	if _, err := c.exec(q, nil); err != nil {
		return nil, err
	}
	return tx{c}, nil
}

func (c *conn) ExecContext(_ context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.exec(q, args)
}

func (c *conn) QueryContext(_ context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	vals, err := values(args)
	if err != nil {
		return nil, err
	}
	r, err := c.o.call(request{Op: "query", Conn: c.id, SQL: q, Args: vals})
	if err != nil {
		return nil, err
	}
	return &rows{r: r}, nil
}

func (c *conn) exec(q string, args []driver.NamedValue) (driver.Result, error) {
	vals, err := values(args)
	if err != nil {
		return nil, err
	}
	r, err := c.o.call(request{Op: "exec", Conn: c.id, SQL: q, Args: vals})
	if err != nil {
		return nil, err
	}
	return result{r.LastID, r.Affected}, nil
}

func values(args []driver.NamedValue) ([]value, error) {
	out := make([]value, len(args))
	for i, a := range args {
		if a.Name != "" {
			return nil, errors.New("sqltest: named arguments are not supported")
		}
		v, err := valueOf(a.Value)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

type tx struct{ c *conn }

func (t tx) Commit() error {
	_, err := t.c.exec("COMMIT", nil)
	return err
}

func (t tx) Rollback() error {
	_, err := t.c.exec("ROLLBACK", nil)
	return err
}

type stmt struct {
	c *conn
	q string
}

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return -1 }

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.c.exec(s.q, named(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.c.QueryContext(context.Background(), s.q, named(args))
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

type result struct{ last, affected int64 }

func (r result) LastInsertId() (int64, error) { return r.last, nil }
func (r result) RowsAffected() (int64, error) { return r.affected, nil }

type rows struct {
	r response
	i int
}

func (r *rows) Columns() []string { return r.r.Cols }
func (r *rows) Close() error      { return nil }

func (r *rows) Next(dest []driver.Value) error {
	if r.i >= len(r.r.Rows) {
		return io.EOF
	}
	for i, v := range r.r.Rows[r.i] {
		dest[i] = v.native()
	}
	r.i++
	return nil
}

// ColumnTypeDatabaseTypeName is the column's declared type, as the
// oracle's driver gives it.
func (r *rows) ColumnTypeDatabaseTypeName(i int) string { return r.r.Types[i] }
