package bench

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
)

// The cgo-free SQLites a Go user picks besides modernc's database/sql
// driver, each through its own API (no database/sql):
//
//   - ncruces: github.com/ncruces/go-sqlite3, SQLite compiled to WebAssembly
//     and translated to Go (go-sqlite3-wasm; no wazero since v0.30). Its
//     database/sql driver (package driver) registers the name "sqlite3" in
//     its init, as mattn's does, so that the two cannot be linked into one
//     binary (sql.Register panics): it is measured through its Conn and
//     Stmt, its fastest path (ColumnRawBlob, no copy).
//   - zombiezen: zombiezen.com/go/sqlite, modernc's translation of SQLite
//     behind a crawshaw-style API (Conn, Stmt); a column's bytes are
//     copied out (ColumnBytes), its API has no zero-copy read.
//
// Both run the same statements, pragmas and transactions as mattn and
// modernc: one connection, statements prepared once, BEGIN and COMMIT,
// WAL mode, synchronous=FULL for the stores.

// directConn is one connection of a direct SQLite API.
type directConn interface {
	prepare(sql string) (directStmt, error)
	close() error
}

// directStmt is a prepared statement of a direct SQLite API. Parameters
// count from 1, columns from 0.
type directStmt interface {
	bindInt64(param int, v int64) error
	bindBlob(param int, v []byte) error
	// step steps the statement: true when it has a row.
	step() (bool, error)
	int64At(col int) int64
	// blob returns column col of the row, valid until the statement
	// steps or resets; buf may hold the bytes (zombiezen copies them).
	blob(col int, buf []byte) []byte
	reset() error
	close() error
}

// openDirect opens a connection of the API called name.
func openDirect(name, path string) (directConn, error) {
	switch name {
	case ncruces:
		return openNcruces(path)
	case zombiezen:
		return openZombiezen(path)
	}
	return nil, unknownPeer(name)
}

// Peer names of the direct APIs.
const (
	ncruces   = "ncruces"
	zombiezen = "zombiezen"
)

// isDirect reports whether name is a direct SQLite API.
func isDirect(name string) bool { return name == ncruces || name == zombiezen }

// execDirect runs sql on c to its end.
func execDirect(c directConn, sql string) error {
	st, err := c.prepare(sql)
	if err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	for {
		ok, err := st.step()
		if err != nil {
			st.close()
			return fmt.Errorf("%s: %w", sql, err)
		}
		if !ok {
			break
		}
	}
	return st.close()
}

// textDirect returns the first column of the first row of sql, as text.
func textDirect(c directConn, sql string) (string, error) {
	st, err := c.prepare(sql)
	if err != nil {
		return "", err
	}
	ok, err := st.step()
	var s string
	if ok {
		s = string(st.blob(0, nil))
	}
	return s, errors.Join(err, st.close())
}

// directDB is the statements of a direct peer or store on one connection.
type directDB struct {
	name string
	conn directConn
	// The statements, prepared at open; nil when not used.
	get, scan, ins, del, begin, commit, rollback directStmt
	inTx                                         bool
	buf                                          []byte
}

// open opens path with pragmas, checks that the file is in WAL mode and
// prepares the statements (scanSQL is the scan's).
func (d *directDB) open(path string, pragmas []string, scanSQL string, writes bool) (err error) {
	if d.conn, err = openDirect(d.name, path); err != nil {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	defer func() {
		if err != nil {
			d.close()
		}
	}()
	for _, p := range pragmas {
		if err := execDirect(d.conn, p); err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
	}
	if writes {
		if err := execDirect(d.conn, "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v BLOB)"); err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
	}
	mode, err := textDirect(d.conn, "PRAGMA journal_mode")
	if err != nil {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	if mode != "wal" {
		return fmt.Errorf("%s: journal_mode is %q, want wal", d.name, mode)
	}
	stmts := []struct {
		stmt *directStmt
		sql  string
	}{
		{&d.get, "SELECT v FROM t WHERE id = ?"},
		{&d.scan, scanSQL},
		{&d.begin, "BEGIN"},
		{&d.commit, "COMMIT"},
		{&d.rollback, "ROLLBACK"},
	}
	if writes {
		stmts = append(stmts, struct {
			stmt *directStmt
			sql  string
		}{&d.ins, "INSERT INTO t(id, v) VALUES (?, ?)"}, struct {
			stmt *directStmt
			sql  string
		}{&d.del, "DELETE FROM t WHERE id = ?"})
	}
	for _, st := range stmts {
		if *st.stmt, err = d.conn.prepare(st.sql); err != nil {
			return fmt.Errorf("%s: %s: %w", d.name, st.sql, err)
		}
	}
	return nil
}

// runDirect steps st to its end and resets it.
func runDirect(st directStmt) error {
	for {
		ok, err := st.step()
		if err != nil {
			st.reset()
			return err
		}
		if !ok {
			return st.reset()
		}
	}
}

func (d *directDB) beginTx() error {
	if err := runDirect(d.begin); err != nil {
		return err
	}
	d.inTx = true
	return nil
}

func (d *directDB) commitTx() error {
	d.inTx = false
	return runDirect(d.commit)
}

// getValue returns the value of row id, copied into d.buf.
func (d *directDB) getValue(id int64) ([]byte, error) {
	if err := d.get.bindInt64(1, id); err != nil {
		return nil, err
	}
	ok, err := d.get.step()
	if err == nil && !ok {
		err = fmt.Errorf("%s: rowid %d not found", d.name, id)
	}
	if err != nil {
		d.get.reset()
		return nil, err
	}
	d.buf = append(d.buf[:0], d.get.blob(0, d.buf[:cap(d.buf)])...)
	return d.buf, d.get.reset()
}

// scanRows steps the scan statement, handing each row to fn.
func (d *directDB) scanRows(fn func(st directStmt)) (int, error) {
	n := 0
	for {
		ok, err := d.scan.step()
		if err != nil {
			d.scan.reset()
			return n, err
		}
		if !ok {
			return n, d.scan.reset()
		}
		fn(d.scan)
		n++
	}
}

func (d *directDB) close() error {
	if d.conn == nil {
		return nil
	}
	var errs []error
	if d.inTx {
		errs = append(errs, runDirect(d.rollback))
		d.inTx = false
	}
	for _, st := range []directStmt{d.get, d.scan, d.ins, d.del, d.begin, d.commit, d.rollback} {
		if st != nil {
			errs = append(errs, st.close())
		}
	}
	errs = append(errs, d.conn.close()) // the last connection: SQLite checkpoints and removes the WAL
	d.conn, d.get, d.scan, d.ins, d.del, d.begin, d.commit, d.rollback = nil, nil, nil, nil, nil, nil, nil, nil
	return errors.Join(errs...)
}

// directPeer reads the fixture's SQLite file through a direct API as
// sqlPeer reads it through database/sql: one long read transaction
// (BEGIN on the connection), or, with txPerOp, each query its own
// implicit one; the value copied out before the statement resets.
type directPeer struct {
	directDB
	pragmas []string
	txPerOp bool
	val     []byte
}

func (p *directPeer) Name() string { return p.name }

func (p *directPeer) Open(f *Fixture) error {
	if err := p.open(f.SQLitePath, p.pragmas, "SELECT v FROM t ORDER BY id", false); err != nil {
		return err
	}
	if !p.txPerOp {
		if err := p.beginTx(); err != nil {
			p.close()
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return nil
}

func (p *directPeer) Get(rowid int64) ([]byte, error) { return p.getValue(rowid) }

func (p *directPeer) Scan(fn func(v []byte)) (int, error) {
	return p.scanRows(func(st directStmt) {
		p.val = st.blob(0, p.val[:cap(p.val)])
		fn(p.val)
	})
}

func (p *directPeer) Close() error { return p.close() }

// directStore writes through a direct API as sqlStore writes through
// database/sql.
type directStore struct {
	directDB
	pragmas []string
	mu      sync.Mutex // InsertDurable's callers take turns
	val     []byte
}

func (s *directStore) Name() string { return s.name }

func (s *directStore) Open(dir string, opt StoreOptions) error {
	pragmas := append(storePragmas[:len(storePragmas):len(storePragmas)], s.pragmas...)
	if opt.CacheSize > 0 {
		pragmas = append(pragmas, fmt.Sprintf("PRAGMA cache_size=-%d", opt.CacheSize>>10))
	}
	return s.open(filepath.Join(dir, storeFile), pragmas, "SELECT id, v FROM t ORDER BY id", true)
}

func (s *directStore) Begin() error { return s.beginTx() }

func (s *directStore) Insert(key int64, v []byte) error {
	if err := s.ins.bindInt64(1, key); err != nil {
		return err
	}
	if err := s.ins.bindBlob(2, v); err != nil {
		return err
	}
	return runDirect(s.ins)
}

// InsertDurable commits one row as its own transaction on the store's one
// connection, one goroutine at a time (SQLite writes one transaction at a
// time).
func (s *directStore) InsertDurable(key int64, v []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Insert(key, v)
}

func (s *directStore) Delete(key int64) error {
	if err := s.del.bindInt64(1, key); err != nil {
		return err
	}
	return runDirect(s.del)
}

func (s *directStore) Commit() error    { return s.commitTx() }
func (s *directStore) BeginRead() error { return s.beginTx() }
func (s *directStore) EndRead() error   { return s.commitTx() }

func (s *directStore) Get(key int64) ([]byte, error) { return s.getValue(key) }

func (s *directStore) Scan(fn func(key int64, v []byte)) (int, error) {
	return s.scanRows(func(st directStmt) {
		s.val = st.blob(1, s.val[:cap(s.val)])
		fn(st.int64At(0), s.val)
	})
}

func (s *directStore) Close() error { return s.close() }
