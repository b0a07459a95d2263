// Command oracle is SQLite (modernc.org/sqlite, pure Go) behind a pipe:
// pagoda's tests reach it through the "sqlite" database/sql driver of
// internal/sqltest, which starts one oracle process per test binary. It
// is a module of its own so that nothing in pagoda's module, tests
// included, imports SQLite: a program that imports pagoda, even after go
// mod tidy, has no SQLite in its module graph.
//
// It reads gob-encoded requests on stdin and writes gob-encoded responses
// on stdout, each response carrying its request's ID. Each connection's
// requests run in order on a goroutine of their own, so that one waiting
// on a lock holds up no other. It exits when stdin closes.
package main

import (
	"bufio"
	"context"
	"database/sql/driver"
	"encoding/gob"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
)

// The wire types: internal/sqltest declares the same (gob matches them by
// field name).

type request struct {
	ID   uint64
	Op   string // open, exec, query, close
	Conn uint64
	DSN  string // open
	SQL  string // exec, query
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

// value is one SQL value; K says which field holds it.
type value struct {
	K byte // 'n' NULL, 'i' int64, 'f' float64 (its bits in I: gob drops a -0.0 field as zero), 's' text, 'b' blob, 't' time, 'o' bool
	I int64
	B []byte
	T time.Time
}

func (v value) native() any {
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

func valueOf(x any) value {
	switch x := x.(type) {
	case nil:
		return value{K: 'n'}
	case int64:
		return value{K: 'i', I: x}
	case float64:
		return value{K: 'f', I: int64(math.Float64bits(x))}
	case string:
		return value{K: 's', B: []byte(x)}
	case []byte:
		return value{K: 'b', B: append([]byte{}, x...)}
	case time.Time:
		return value{K: 't', T: x}
	case bool:
		if x {
			return value{K: 'o', I: 1}
		}
		return value{K: 'o'}
	}
	return value{K: 's', B: fmt.Append(nil, x)}
}

// conn is one client connection: a connection of SQLite's driver, and the
// requests waiting for it. The driver is used as database/sql would use it,
// without database/sql's pool and conversions.
type conn struct {
	c    driver.Conn
	reqs chan request
	// waits is set once the connection asks for a busy timeout: then a
	// statement may wait on a lock, and its requests run on the
	// connection's goroutine so that the others go on meanwhile. Without
	// one, SQLite never waits, and a statement runs at once on the reading
	// goroutine, which saves a goroutine's wake-up (15 µs a statement
	// here).
	waits bool
}

func main() {
	in := gob.NewDecoder(bufio.NewReaderSize(os.Stdin, 1<<16))
	w := bufio.NewWriterSize(os.Stdout, 1<<16)
	out := gob.NewEncoder(w)
	var mu sync.Mutex
	send := func(r response) {
		mu.Lock()
		defer mu.Unlock()
		if err := out.Encode(r); err != nil {
			os.Exit(1)
		}
		if err := w.Flush(); err != nil {
			os.Exit(1)
		}
	}
	conns := map[uint64]*conn{}
	for {
		var req request
		if err := in.Decode(&req); err != nil {
			os.Exit(0) // the test binary is gone
		}
		if req.Op == "open" {
			c := &conn{reqs: make(chan request, 16)}
			conns[req.ID] = c
			go c.serve(send)
		}
		c := conns[req.Conn]
		if req.Op == "open" {
			c = conns[req.ID]
		}
		if c == nil {
			send(response{ID: req.ID, Err: "oracle: no such connection"})
			continue
		}
		if req.Op == "close" {
			delete(conns, req.Conn)
		}
		if strings.Contains(req.DSN, "busy") || strings.Contains(strings.ToLower(req.SQL), "busy_timeout") {
			c.waits = true
		}
		if !c.waits && len(c.reqs) == 0 && (req.Op == "exec" || req.Op == "query") {
			c.run(req, send)
			continue
		}
		c.reqs <- req
	}
}

// serve runs the connection's requests in order.
func (c *conn) serve(send func(response)) {
	for req := range c.reqs {
		c.run(req, send)
		if req.Op == "close" {
			return
		}
	}
}

// run runs one request and sends its response.
func (c *conn) run(req request, send func(response)) {
	ctx := context.Background()
	r := response{ID: req.ID}
	var err error
	switch req.Op {
	case "open":
		c.c, err = (&sqlite.Driver{}).Open(req.DSN)
	case "close":
		if c.c != nil {
			err = c.c.Close()
		}
	case "exec":
		var res driver.Result
		if res, err = c.c.(driver.ExecerContext).ExecContext(ctx, req.SQL, natives(req.Args)); err == nil {
			r.LastID, _ = res.LastInsertId()
			r.Affected, _ = res.RowsAffected()
		}
	case "query":
		err = c.query(ctx, req, &r)
	default:
		err = fmt.Errorf("oracle: unknown operation %q", req.Op)
	}
	if err != nil {
		r.Err = err.Error()
	}
	send(r)
}

// query runs req and puts every row in r.
func (c *conn) query(ctx context.Context, req request, r *response) error {
	rows, err := c.c.(driver.QueryerContext).QueryContext(ctx, req.SQL, natives(req.Args))
	if err != nil {
		return err
	}
	defer rows.Close()
	r.Cols = rows.Columns()
	if tn, ok := rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		for i := range r.Cols {
			r.Types = append(r.Types, tn.ColumnTypeDatabaseTypeName(i))
		}
	}
	dest := make([]driver.Value, len(r.Cols))
	for {
		if err := rows.Next(dest); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		row := make([]value, len(dest))
		for i, x := range dest {
			row[i] = valueOf(x)
		}
		r.Rows = append(r.Rows, row)
	}
}

func natives(vs []value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(vs))
	for i, v := range vs {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v.native()}
	}
	return out
}
