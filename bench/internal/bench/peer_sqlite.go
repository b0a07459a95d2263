package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	_ "github.com/mattn/go-sqlite3" // registers "sqlite3" (cgo; SQLite's C code)
	_ "modernc.org/sqlite"          // registers "sqlite" (SQLite translated to Go)
)

// database/sql driver names.
const (
	mattnDriver   = "sqlite3"
	moderncDriver = "sqlite"
)

// SQLitePragmas tune each SQLite connection (mattn and modernc) for
// reading, as a user who wants fast reads would: the file is memory-mapped,
// as pagoda and bbolt map theirs, instead of read with read(2) into a 2 MB
// page cache. PeerOptions.SQLiteDefaults turns them off.
var SQLitePragmas = []string{
	"PRAGMA mmap_size=2147418112", // SQLite's default ceiling (SQLITE_MAX_MMAP_SIZE)
	"PRAGMA cache_size=-65536",    // 64 MiB
}

// sqlPeer reads the SQLite file through database/sql: one connection, one
// long read transaction, prepared statements, and sql.RawBytes so that the
// value is not copied again by database/sql.
//
// The transaction is a BEGIN on a *sql.Conn rather than a *sql.Tx: a
// statement of a *sql.Tx watches the transaction's context with a new
// goroutine on every Query, which costs about a microsecond per lookup
// here; the Conn way is the fastest database/sql offers.
//
// With txPerOp set (NewTxPeer) there is no BEGIN: each query on the
// connection is its own read transaction, SQLite's implicit one, begun
// and ended by the query.
//
// With autocommit set the peer is used as most programs use database/sql:
// statements prepared on the *sql.DB, each query its own implicit
// transaction, SQLite's default settings.
type sqlPeer struct {
	name, driver string
	pragmas      []string
	autocommit   bool
	txPerOp      bool
	db           *sql.DB
	conn         *sql.Conn
	inTx         bool
	get, scan    *sql.Stmt
	buf          []byte
}

func (p *sqlPeer) Name() string { return p.name }

func (p *sqlPeer) Open(f *Fixture) (err error) {
	db, err := sql.Open(p.driver, f.SQLitePath)
	if err != nil {
		return err
	}
	p.db = db
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	ctx := context.Background()
	if p.autocommit {
		if p.get, err = db.PrepareContext(ctx, "SELECT v FROM t WHERE id = ?"); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		if p.scan, err = db.PrepareContext(ctx, "SELECT v FROM t ORDER BY id"); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		return nil
	}
	if p.conn, err = db.Conn(ctx); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	for _, s := range p.pragmas {
		if _, err := p.conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %s: %w", p.name, s, err)
		}
	}
	var mode string
	if err := p.conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	if mode != "wal" {
		return fmt.Errorf("%s: journal_mode is %q, want wal", p.name, mode)
	}
	if !p.txPerOp {
		if _, err := p.conn.ExecContext(ctx, "BEGIN"); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		p.inTx = true
	}
	if p.get, err = p.conn.PrepareContext(ctx, "SELECT v FROM t WHERE id = ?"); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	if p.scan, err = p.conn.PrepareContext(ctx, "SELECT v FROM t ORDER BY id"); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	return nil
}

func (p *sqlPeer) Get(rowid int64) ([]byte, error) {
	rows, err := p.get.Query(rowid)
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		err := rows.Err()
		rows.Close()
		if err == nil {
			err = fmt.Errorf("%s: rowid %d not found", p.name, rowid)
		}
		return nil, err
	}
	var v sql.RawBytes
	if err := rows.Scan(&v); err != nil {
		rows.Close()
		return nil, err
	}
	// RawBytes is valid only until the next Next or Close: keep a copy in
	// a reused buffer, which costs no allocation.
	p.buf = append(p.buf[:0], v...)
	return p.buf, rows.Close()
}

func (p *sqlPeer) Scan(fn func(v []byte)) (int, error) {
	rows, err := p.scan.Query()
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	var v sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&v); err != nil {
			return n, err
		}
		fn(v)
		n++
	}
	return n, rows.Err()
}

func (p *sqlPeer) Close() error {
	if p.db == nil {
		return nil
	}
	var errs []error
	for _, s := range []*sql.Stmt{p.get, p.scan} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	if p.inTx {
		_, err := p.conn.ExecContext(context.Background(), "ROLLBACK")
		errs = append(errs, err)
	}
	if p.conn != nil {
		errs = append(errs, p.conn.Close())
	}
	errs = append(errs, p.db.Close())
	p.db, p.conn, p.inTx, p.get, p.scan = nil, nil, false, nil, nil
	return errors.Join(errs...)
}
