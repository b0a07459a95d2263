package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// storePragmas set up every SQLite store connection: WAL mode, and every
// commit durable (synchronous=FULL syncs the WAL at each commit; NORMAL,
// the usual choice with WAL, would only sync at checkpoints, which bbolt
// cannot match). SQLitePragmas follow unless PeerOptions.SQLiteDefaults:
// the 64 MiB page cache matches pagoda's default cache size.
var storePragmas = []string{
	"PRAGMA journal_mode=WAL",
	"PRAGMA synchronous=FULL",
}

// sqlStore writes through database/sql as the read peer reads: one
// connection, transactions as BEGIN and COMMIT on a *sql.Conn, statements
// prepared once per store and reused for every row.
type sqlStore struct {
	name, driver string
	pragmas      []string
	db           *sql.DB
	conn         *sql.Conn
	inTx         bool
	mu           sync.Mutex // InsertDurable's callers take turns

	ins, del, get, scan *sql.Stmt
	buf                 []byte
}

func (s *sqlStore) Name() string { return s.name }

func (s *sqlStore) Open(dir string, opt StoreOptions) (err error) {
	db, err := sql.Open(s.driver, filepath.Join(dir, storeFile))
	if err != nil {
		return err
	}
	s.db = db
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	ctx := context.Background()
	if s.conn, err = db.Conn(ctx); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	pragmas := append(storePragmas[:len(storePragmas):len(storePragmas)], s.pragmas...)
	if opt.CacheSize > 0 {
		pragmas = append(pragmas, fmt.Sprintf("PRAGMA cache_size=-%d", opt.CacheSize>>10))
	}
	for _, p := range pragmas {
		if _, err := s.conn.ExecContext(ctx, p); err != nil {
			return fmt.Errorf("%s: %s: %w", s.name, p, err)
		}
	}
	var mode string
	if err := s.conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	if mode != "wal" {
		return fmt.Errorf("%s: journal_mode is %q, want wal", s.name, mode)
	}
	if _, err := s.conn.ExecContext(ctx, strings.Replace(storeTableSQL, "TABLE", "TABLE IF NOT EXISTS", 1)); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	for _, st := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&s.ins, "INSERT INTO t(id, v) VALUES (?, ?)"},
		{&s.del, "DELETE FROM t WHERE id = ?"},
		{&s.get, "SELECT v FROM t WHERE id = ?"},
		{&s.scan, "SELECT id, v FROM t ORDER BY id"},
	} {
		if *st.stmt, err = s.conn.PrepareContext(ctx, st.sql); err != nil {
			return fmt.Errorf("%s: %s: %w", s.name, st.sql, err)
		}
	}
	return nil
}

func (s *sqlStore) exec(q string) error {
	_, err := s.conn.ExecContext(context.Background(), q)
	return err
}

func (s *sqlStore) Begin() error {
	if err := s.exec("BEGIN"); err != nil {
		return err
	}
	s.inTx = true
	return nil
}

func (s *sqlStore) Insert(key int64, v []byte) error {
	_, err := s.ins.Exec(key, v)
	return err
}

// InsertDurable commits one row as its own transaction (autocommit) on
// the store's one connection, one goroutine at a time: SQLite writes one
// transaction at a time, and more connections would only wait on its
// lock.
func (s *sqlStore) InsertDurable(key int64, v []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.ins.Exec(key, v)
	return err
}

func (s *sqlStore) Delete(key int64) error {
	_, err := s.del.Exec(key)
	return err
}

func (s *sqlStore) Commit() error {
	s.inTx = false
	return s.exec("COMMIT")
}

func (s *sqlStore) BeginRead() error { return s.Begin() }

func (s *sqlStore) Get(key int64) ([]byte, error) {
	rows, err := s.get.Query(key)
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		err := rows.Err()
		rows.Close()
		if err == nil {
			err = fmt.Errorf("%s: key %d not found", s.name, key)
		}
		return nil, err
	}
	var v sql.RawBytes
	if err := rows.Scan(&v); err != nil {
		rows.Close()
		return nil, err
	}
	s.buf = append(s.buf[:0], v...) // RawBytes is valid until Close
	return s.buf, rows.Close()
}

func (s *sqlStore) Scan(fn func(key int64, v []byte)) (int, error) {
	rows, err := s.scan.Query()
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	var key int64
	var v sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&key, &v); err != nil {
			return n, err
		}
		fn(key, v)
		n++
	}
	return n, rows.Err()
}

func (s *sqlStore) EndRead() error { return s.Commit() }

func (s *sqlStore) Close() error {
	if s.db == nil {
		return nil
	}
	var errs []error
	for _, st := range []*sql.Stmt{s.ins, s.del, s.get, s.scan} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.inTx {
		errs = append(errs, s.exec("ROLLBACK"))
	}
	if s.conn != nil {
		errs = append(errs, s.conn.Close())
	}
	errs = append(errs, s.db.Close()) // the last connection: SQLite checkpoints and removes the WAL
	s.db, s.conn, s.inTx = nil, nil, false
	s.ins, s.del, s.get, s.scan = nil, nil, nil, nil
	return errors.Join(errs...)
}
