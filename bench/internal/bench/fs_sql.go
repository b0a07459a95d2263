package bench

import (
	"bytes"
	"compress/zlib"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"
)

// sqlFS is the SQL peers' filesystem: an io/fs (fs.ReadDirFS, fs.ReadFileFS,
// fs.StatFS) over the sqlar table of a SQLite Archive, read through
// database/sql with mattn/go-sqlite3 or modernc.org/sqlite, written the way
// a Go program would write it on top of SQL:
//
//   - ReadDir is one query per directory, the range of names under the
//     directory's prefix (name > 'dir/' AND name < 'dir0', served by an
//     index), keeping the direct children only (the filter runs in SQLite,
//     so the rows of deeper entries never reach Go, but SQLite still steps
//     over them: a listing reads the directory's whole subtree); the root
//     is a filter over every name;
//   - Stat is SELECT mode, mtime, sz FROM sqlar WHERE name = ?; ReadFile
//     SELECT mode, sz, data ... WHERE name = ?, the data returned as it is
//     when sz == length(data) and inflated with zlib otherwise; Open is
//     Stat, then ReadFile for a file or ReadDir for a directory;
//   - one connection, the statements prepared once, each statement its own
//     implicit read transaction (a snapshot per call, as pagoda's fsys
//     takes one per call), the file opened read-only (mode=ro).
//
// Archives made by pagoda carry an index sqlar_listing(name, mode, mtime,
// sz), which SQLite picks for the listings and Stat (a covering index). An
// sqlFS is used by one goroutine at a time.
type sqlFS struct {
	name string // the peer's name, for errors
	db   *sql.DB
	conn *sql.Conn
	// The prepared statements.
	listRoot, list, stat, read, blob *sql.Stmt
}

// The sqlFS statements.
const (
	sqlarListRoot = "SELECT name, mode, mtime, sz FROM sqlar WHERE instr(name, '/') = 0 ORDER BY name"
	sqlarList     = "SELECT name, mode, mtime, sz FROM sqlar WHERE name > ? AND name < ? AND instr(substr(name, ?), '/') = 0 ORDER BY name"
	sqlarStat     = "SELECT mode, mtime, sz FROM sqlar WHERE name = ?"
	sqlarRead     = "SELECT mode, sz, data FROM sqlar WHERE name = ?"
	sqlarBlob     = "SELECT data FROM sqlar WHERE name = ?" // fs-blob's read
)

// openSQLFS opens the archive at file read-only with driver (mattnDriver
// or moderncDriver), runs pragmas on the connection and prepares the
// statements.
func openSQLFS(name, driver, file string, pragmas []string) (_ *sqlFS, err error) {
	db, err := sql.Open(driver, sqliteURI(file)+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := &sqlFS{name: name, db: db}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	ctx := context.Background()
	if f.conn, err = db.Conn(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, s := range pragmas {
		if _, err := f.conn.ExecContext(ctx, s); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, s, err)
		}
	}
	for _, st := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&f.listRoot, sqlarListRoot}, {&f.list, sqlarList}, {&f.stat, sqlarStat}, {&f.read, sqlarRead}, {&f.blob, sqlarBlob}} {
		if *st.stmt, err = f.conn.PrepareContext(ctx, st.sql); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, st.sql, err)
		}
	}
	return f, nil
}

// sqliteURI is the file: URI of a path, with the characters that a URI
// gives a meaning escaped.
func sqliteURI(file string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(file)
}

// Close closes the statements and the database.
func (f *sqlFS) Close() error {
	if f.db == nil {
		return nil
	}
	var errs []error
	for _, s := range []*sql.Stmt{f.listRoot, f.list, f.stat, f.read, f.blob} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	if f.conn != nil {
		errs = append(errs, f.conn.Close())
	}
	errs = append(errs, f.db.Close())
	*f = sqlFS{name: f.name}
	return errors.Join(errs...)
}

// sqlInfo is an entry of the archive: its fs.FileInfo and fs.DirEntry.
type sqlInfo struct {
	name  string // base name
	mode  fs.FileMode
	mtime int64
	size  int64
}

func (i *sqlInfo) Name() string               { return i.name }
func (i *sqlInfo) Size() int64                { return i.size }
func (i *sqlInfo) Mode() fs.FileMode          { return i.mode }
func (i *sqlInfo) ModTime() time.Time         { return time.Unix(i.mtime, 0) }
func (i *sqlInfo) IsDir() bool                { return i.mode.IsDir() }
func (i *sqlInfo) Sys() any                   { return nil }
func (i *sqlInfo) Type() fs.FileMode          { return i.mode.Type() }
func (i *sqlInfo) Info() (fs.FileInfo, error) { return i, nil }
func (i *sqlInfo) String() string             { return fs.FormatDirEntry(i) }

// rootInfo is the root directory, which has no row.
var rootInfo = sqlInfo{name: ".", mode: fs.ModeDir | 0o555}

// Unix file type bits of sqlar's mode column (st_mode).
const (
	unixTypeMask = 0o170000
	unixDir      = 0o040000
	unixRegular  = 0o100000
	unixSymlink  = 0o120000
)

// fileMode converts an st_mode to an fs.FileMode.
func fileMode(m int64) fs.FileMode {
	perm := fs.FileMode(m & 0o777)
	switch m & unixTypeMask {
	case unixDir:
		return perm | fs.ModeDir
	case unixRegular, 0:
		return perm
	case unixSymlink:
		return perm | fs.ModeSymlink
	}
	return perm | fs.ModeIrregular
}

// unixMode converts an fs.FileMode to an st_mode, as sqlite3 -A stores it.
func unixMode(m fs.FileMode) int64 {
	perm := int64(m.Perm())
	switch {
	case m.IsDir():
		return unixDir | perm
	case m&fs.ModeSymlink != 0:
		return unixSymlink | perm
	}
	return unixRegular | perm
}

var errIsDir = errors.New("is a directory")

// ReadDir lists the directory name with one query, sorted by name.
func (f *sqlFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	var rows *sql.Rows
	var err error
	skip := 0 // bytes of the directory's prefix in each name
	if name == "." {
		rows, err = f.listRoot.Query()
	} else {
		skip = len(name) + 1
		rows, err = f.list.Query(name+"/", name+"0", skip+1)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	var infos []sqlInfo
	var raw sql.RawBytes
	var mode, mtime, sz int64
	for rows.Next() {
		if err := rows.Scan(&raw, &mode, &mtime, &sz); err != nil {
			rows.Close()
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
		}
		infos = append(infos, sqlInfo{name: string(raw[skip:]), mode: fileMode(mode), mtime: mtime, size: sz})
	}
	err = rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	if len(infos) == 0 && name != "." {
		// An empty directory, or no directory at all.
		info, err := f.Stat(name)
		if err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.Unwrap(err)}
		}
		if !info.IsDir() {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
		}
	}
	out := make([]fs.DirEntry, len(infos))
	for i := range infos {
		out[i] = &infos[i]
	}
	return out, nil
}

// Stat returns the entry's row.
func (f *sqlFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		info := rootInfo
		return &info, nil
	}
	rows, err := f.stat.Query(name)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
		}
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	info := &sqlInfo{name: path.Base(name)}
	var mode int64
	if err := rows.Scan(&mode, &info.mtime, &info.size); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	info.mode = fileMode(mode)
	return info, rows.Close()
}

// ReadFile returns the file's data in a new slice.
func (f *sqlFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errIsDir}
	}
	rows, err := f.read.Query(name)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	var mode, sz int64
	var raw sql.RawBytes
	if err := rows.Scan(&mode, &sz, &raw); err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	switch m := fileMode(mode); {
	case m.IsDir():
		return nil, &fs.PathError{Op: "read", Path: name, Err: errIsDir}
	case !m.IsRegular():
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("not a regular file (symbolic links are not followed)")}
	}
	data, err := sqlarData(raw, sz)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, rows.Close()
}

// sqlarData returns a new copy of a file's data column: raw when sz is its
// length, inflated with zlib otherwise.
func sqlarData(raw []byte, sz int64) ([]byte, error) {
	if int64(len(raw)) == sz {
		return append(make([]byte, 0, len(raw)), raw...), nil
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	data := make([]byte, sz)
	if _, err := io.ReadFull(zr, data); err != nil {
		return nil, err
	}
	return data, zr.Close()
}

// readBlob is fs-blob's read: the data of name, which is stored raw, in a
// new slice.
func (f *sqlFS) readBlob(name string) ([]byte, error) {
	rows, err := f.blob.Query(name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: blob %s not found", f.name, name)
	}
	var raw sql.RawBytes
	if err := rows.Scan(&raw); err != nil {
		return nil, err
	}
	data := append(make([]byte, 0, len(raw)), raw...)
	return data, rows.Close()
}

// Open opens a file (its data read whole) or a directory (listed on the
// first ReadDir).
func (f *sqlFS) Open(name string) (fs.File, error) {
	info, err := f.Stat(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.Unwrap(err)}
	}
	si := info.(*sqlInfo)
	if si.IsDir() {
		return &sqlDir{fs: f, path: name, info: si}, nil
	}
	data, err := f.ReadFile(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.Unwrap(err)}
	}
	file := &sqlFile{info: si}
	file.Reset(data)
	return file, nil
}

// sqlFile is an open regular file.
type sqlFile struct {
	bytes.Reader
	info *sqlInfo
}

func (f *sqlFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *sqlFile) Close() error               { return nil }

// sqlDir is an open directory.
type sqlDir struct {
	fs      *sqlFS
	path    string
	info    *sqlInfo
	entries []fs.DirEntry
	listed  bool
}

func (d *sqlDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *sqlDir) Close() error               { return nil }
func (d *sqlDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.path, Err: errIsDir}
}

// ReadDir returns the next n entries (all that are left when n <= 0).
func (d *sqlDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if !d.listed {
		entries, err := d.fs.ReadDir(d.path)
		if err != nil {
			return nil, err
		}
		d.entries, d.listed = entries, true
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	out := d.entries[:n:n]
	d.entries = d.entries[n:]
	return out, nil
}

// buildArchiveSQL writes the tree at dir into a new SQLite Archive at file
// with driver: the sqlar table, pagoda's sqlar_listing index, one row per
// entry as sqlite3 -A stores them (directories with data NULL and sz 0;
// file data zlib-compressed when compress is set and that is smaller),
// in WAL mode as pagoda's files are. The tests use it to have an archive
// without pagoda.
func buildArchiveSQL(dir, file, driver string, compress bool) (err error) {
	db, err := sql.Open(driver, file)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	db.SetMaxOpenConns(1)
	err = execAll(db,
		"PRAGMA journal_mode=WAL",
		"CREATE TABLE sqlar(name TEXT PRIMARY KEY, mode INT, mtime INT, sz INT, data BLOB)",
		"CREATE INDEX sqlar_listing ON sqlar(name, mode, mtime, sz)",
	)
	if err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.Prepare("INSERT INTO sqlar(name, mode, mtime, sz, data) VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		return err
	}
	defer ins.Close()
	fsys := os.DirFS(dir)
	err = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || name == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode, mtime := unixMode(info.Mode()), info.ModTime().Unix()
		switch {
		case d.IsDir():
			_, err = ins.Exec(name, mode, mtime, 0, nil)
		case d.Type()&fs.ModeSymlink != 0:
			target, lerr := os.Readlink(dir + "/" + name)
			if lerr != nil {
				return lerr
			}
			_, err = ins.Exec(name, mode, mtime, -1, []byte(target))
		default:
			data, rerr := fs.ReadFile(fsys, name)
			if rerr != nil {
				return rerr
			}
			stored := data
			if compress {
				var buf bytes.Buffer
				zw := zlib.NewWriter(&buf)
				zw.Write(data)
				if err := zw.Close(); err != nil {
					return err
				}
				if buf.Len() < len(data) {
					stored = buf.Bytes()
				}
			}
			_, err = ins.Exec(name, mode, mtime, len(data), stored)
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := ins.Close(); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	return err
}
