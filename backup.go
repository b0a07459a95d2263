package pagoda

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/schema"
)

// WriteTo writes the database as this read transaction sees it to w: a
// complete SQLite file, every page in order, with the changes the WAL
// held at the transaction's start in place, so that it needs no WAL. The
// transaction is a snapshot: writers go on meanwhile, and the copy is
// consistent. It returns the bytes written. In a write transaction, whose
// changes are not committed, it fails with ErrUnsupported.
func (tx *Tx) WriteTo(w io.Writer) (int64, error) {
	if err := tx.check(); err != nil {
		return 0, err
	}
	if tx.writable {
		return 0, fmt.Errorf("pagoda: WriteTo in a write transaction: %w", ErrUnsupported)
	}
	s := &tx.snap
	ps := s.PageSize()
	bw := bufio.NewWriterSize(w, 1<<20)
	lockByte := format.LockBytePage(ps)
	zero := make([]byte, ps)
	var n int64
	for pgno := uint32(1); pgno <= s.PageCount(); pgno++ {
		var pg []byte
		if pgno == lockByte {
			pg = zero // never used: SQLite leaves it as it finds it
		} else {
			var err error
			if pg, err = s.Page(pgno); err != nil {
				return n, err
			}
		}
		m, err := bw.Write(pg[:ps])
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// Backup writes a consistent copy of the database, as of now, to a new
// file at path, from a read transaction: writers go on meanwhile. The copy
// is written beside path under a temporary name, synced, and renamed into
// place, so path never holds a partial copy. path must not exist, nor a
// WAL beside it (an error wrapping ErrExists).
func (db *DB) Backup(path string) error {
	return db.View(func(tx *Tx) error {
		return writeNewFile(path, func(f *os.File) error {
			_, err := tx.WriteTo(f)
			return err
		})
	})
}

// writeNewFile creates the file path through fill, atomically: fill writes
// a temporary file beside it, which is synced and renamed into place.
func writeNewFile(path string, fill func(f *os.File) error) (err error) {
	if err := checkAbsent(path); err != nil {
		return err
	}
	f, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := checkAbsent(path); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// createTemp creates a new file in dir named prefix and a random suffix,
// with mode 0644 less the umask, as Open creates a database (os.CreateTemp
// would make it 0600).
func createTemp(dir, prefix string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("pagoda: no temporary file name free in %s", dir)
}

// checkAbsent fails with ErrExists if path or its WAL exists.
func checkAbsent(path string) error {
	for _, p := range []string{path, pager.WALPath(path)} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("pagoda: %s: %w", p, ErrExists)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, fs.ErrInvalid) { // some systems cannot sync a directory
		err = nil
	}
	return errors.Join(err, d.Close())
}

// Compact writes a dense copy of the database, as of now, to a new file at
// dst, from a read transaction: writers go on meanwhile. Every table and
// index is copied in key order into pages filled as a bulk load fills
// them, with no free pages; the schema, the SQL text of every object, and
// the header's user version and application id are kept. Records are
// copied as stored, so tables that pagoda cannot write (generated
// columns, triggers, ...) are copied too; a malformed record is an error
// wrapping ErrCorrupt that names its page. An index or WITHOUT ROWID table
// whose definition pagoda cannot parse is an error wrapping
// ErrUnsupported, as is a UTF-16 database (pagoda writes only UTF-8
// databases: Backup copies one). The copy keeps the database's journal
// mode. dst must not exist (ErrExists); it appears complete or not at all.
func (db *DB) Compact(dst string) error {
	return db.View(func(src *Tx) error {
		if enc := src.cat.TextEncoding; format.IsUTF16(enc) {
			return fmt.Errorf("pagoda: compact: %w: the database is UTF-16 (text encoding %d): pagoda writes only UTF-8 databases", ErrUnsupported, enc)
		}
		if err := checkAbsent(dst); err != nil {
			return err
		}
		dir, err := os.MkdirTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".compact-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		tmp := filepath.Join(dir, "db")
		// The copy keeps the source's journal mode.
		mode := JournalDefault
		if pg1, err := src.snap.Page(1); err == nil && format.Header(pg1).ReadVersion() == format.FileFormatLegacy {
			mode = JournalDelete
		}
		out, err := Open(tmp, &Options{PageSize: src.snap.PageSize(), JournalMode: mode})
		if err != nil {
			return err
		}
		err = out.Update(func(tx *Tx) error { return compactInto(src, tx) })
		if err = errors.Join(err, out.Close()); err != nil {
			return err
		}
		// Close checkpointed the WAL into the file, synced it and
		// removed the WAL: the file is complete.
		if err := checkAbsent(dst); err != nil {
			return err
		}
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
		return syncDir(filepath.Dir(dst))
	})
}

// compactInto copies every tree of src, and its schema rows, into the
// empty database of the write transaction tx.
func compactInto(src *Tx, tx *Tx) error {
	cat := src.cat
	pg1, err := src.snap.Page(1)
	if err != nil {
		return err
	}
	sh := format.Header(pg1)
	if err := tx.w.SetApplicationFields(sh.UserVersion(), sh.ApplicationID()); err != nil {
		return err
	}
	for _, e := range cat.Entries {
		root := uint32(0)
		if e.RootPage != 0 {
			if root, err = compactTree(src, tx, cat, e); err != nil {
				return fmt.Errorf("pagoda: compact %s %s: %w", e.Type, e.Name, inner(err))
			}
		}
		var sql *string
		if e.HasSQL {
			sql = &e.SQL
		}
		if err := tx.schemaInsert(e.Type, e.Name, e.TblName, root, sql); err != nil {
			return err
		}
		if err := tx.changed(); err != nil {
			return err
		}
	}
	if len(cat.Entries) == 0 {
		return nil
	}
	return tx.schemaChanged()
}

// compactTree copies the tree of schema row e into a new tree of the
// write transaction tx, in key order, and returns the new tree's root.
func compactTree(src, tx *Tx, cat *schema.Catalog, e schema.Entry) (uint32, error) {
	bw := tx.btree()
	table := e.Type == "table"
	var kinfo *format.KeyInfo
	nKey := 0
	switch {
	case table:
		ti := cat.Table(e.Name)
		if ti == nil || ti.Table == nil || !ti.Table.WithoutRowID {
			break // a rowid table (unparsed tables are rowid tables unless they say otherwise)
		}
		m := src.db.tableMeta(cat, ti)
		table, kinfo, nKey = false, &m.kinfo, m.nKey
	default:
		ii := cat.Index(e.Name)
		if ii == nil || ii.Err != nil {
			err := fmt.Errorf("unknown index: %w", ErrUnsupported)
			if ii != nil {
				err = fmt.Errorf("%w (%v)", ErrUnsupported, ii.Err)
			}
			return 0, err
		}
		kinfo = &src.db.indexMeta(cat, ii).kinfo
	}
	if table {
		if ti := cat.Table(e.Name); ti != nil && ti.Err != nil && ti.Table == nil {
			// Unparsed: copy it as a rowid table only if its root is one.
			pg, err := src.snap.Page(e.RootPage)
			if err != nil {
				return 0, err
			}
			if t := format.PageType(pg[format.HeaderOffset(e.RootPage)]); !t.IsTable() {
				return 0, fmt.Errorf("%w (%v)", ErrUnsupported, ti.Err)
			}
		}
	}
	root, err := bw.CreateTree(table)
	if err != nil {
		return 0, err
	}
	var c btree.Cursor
	c.Init(&src.snap, e.RootPage, table, kinfo)
	for ok := c.First(); ok; ok = c.Next() {
		rowid, _, _, err := c.Entry()
		if err != nil {
			return 0, err
		}
		payload, err := c.Payload()
		if err != nil {
			return 0, err
		}
		// A malformed record is corruption named on its page, not
		// copied into a file that SQLite would then find malformed.
		check, what := format.CheckRecord, "entry"
		if table {
			check, what = format.CheckRow, fmt.Sprintf("row %d", rowid)
		}
		if _, err := check(payload); err != nil {
			pg, _ := c.Page()
			return 0, format.Corruptf(pg.Pgno, "%s %s %s: %s", e.Type, e.Name, what, corruptMsg(err))
		}
		if table {
			_, err = bw.TableInsert(root, rowid, payload)
		} else {
			_, err = bw.IndexInsert(root, kinfo, nKey, payload)
		}
		if err != nil {
			return 0, err
		}
		if err := tx.changed(); err != nil {
			return 0, err
		}
	}
	return root, c.Err()
}
