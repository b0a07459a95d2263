package bench

import (
	"time"

	ncsqlite "github.com/ncruces/go-sqlite3"
	zsqlite "zombiezen.com/go/sqlite"
)

// directBusyTimeout is how long a direct connection waits for a lock
// another connection holds, as mattn's default busy_timeout.
const directBusyTimeout = 5 * time.Second

// ncrucesConn is a connection of github.com/ncruces/go-sqlite3.
type ncrucesConn struct{ c *ncsqlite.Conn }

func openNcruces(path string) (directConn, error) {
	c, err := ncsqlite.Open(path)
	if err != nil {
		return nil, err
	}
	if err := c.BusyTimeout(directBusyTimeout); err != nil {
		c.Close()
		return nil, err
	}
	return ncrucesConn{c}, nil
}

func (c ncrucesConn) prepare(sql string) (directStmt, error) {
	st, _, err := c.c.Prepare(sql)
	if err != nil {
		return nil, err
	}
	return ncrucesStmt{st}, nil
}

func (c ncrucesConn) close() error { return c.c.Close() }

type ncrucesStmt struct{ s *ncsqlite.Stmt }

func (s ncrucesStmt) bindInt64(i int, v int64) error { return s.s.BindInt64(i, v) }
func (s ncrucesStmt) bindBlob(i int, v []byte) error { return s.s.BindBlob(i, v) }
func (s ncrucesStmt) step() (bool, error) {
	if s.s.Step() {
		return true, nil
	}
	return false, s.s.Err()
}
func (s ncrucesStmt) int64At(col int) int64         { return s.s.ColumnInt64(col) }
func (s ncrucesStmt) blob(col int, _ []byte) []byte { return s.s.ColumnRawBlob(col) }
func (s ncrucesStmt) reset() error                  { return s.s.Reset() }
func (s ncrucesStmt) close() error                  { return s.s.Close() }

// zombiezenConn is a connection of zombiezen.com/go/sqlite.
type zombiezenConn struct{ c *zsqlite.Conn }

func openZombiezen(path string) (directConn, error) {
	c, err := zsqlite.OpenConn(path) // OpenReadWrite, OpenCreate, OpenWAL, OpenURI
	if err != nil {
		return nil, err
	}
	c.SetBusyTimeout(directBusyTimeout)
	return zombiezenConn{c}, nil
}

func (c zombiezenConn) prepare(sql string) (directStmt, error) {
	st, _, err := c.c.PrepareTransient(sql)
	if err != nil {
		return nil, err
	}
	return zombiezenStmt{st}, nil
}

func (c zombiezenConn) close() error { return c.c.Close() }

type zombiezenStmt struct{ s *zsqlite.Stmt }

func (s zombiezenStmt) bindInt64(i int, v int64) error { s.s.BindInt64(i, v); return nil }
func (s zombiezenStmt) bindBlob(i int, v []byte) error { s.s.BindBytes(i, v); return nil }
func (s zombiezenStmt) step() (bool, error)            { return s.s.Step() }
func (s zombiezenStmt) int64At(col int) int64          { return s.s.ColumnInt64(col) }

// blob copies the column into buf: zombiezen has no zero-copy read.
func (s zombiezenStmt) blob(col int, buf []byte) []byte {
	n := s.s.ColumnLen(col)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	s.s.ColumnBytes(col, buf)
	return buf
}
func (s zombiezenStmt) reset() error { return s.s.Reset() }
func (s zombiezenStmt) close() error { return s.s.Finalize() }
