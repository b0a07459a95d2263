package fsys

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/format"
)

// The archive's schema, as sqlite3 3.40 creates it (comments included),
// and the listing index pagoda adds to the archives it creates.
const (
	// TableName is the table an FS keeps its entries in.
	TableName = "sqlar"
	// ListingIndex names the covering index over (name, mode, mtime, sz)
	// that pagoda creates with the table, so that listings and Stat read
	// one index and never the table.
	ListingIndex = "sqlar_listing"

	createTableSQL = "CREATE TABLE sqlar(\n" +
		"  name TEXT PRIMARY KEY,  -- name of the file\n" +
		"  mode INT,               -- access permissions\n" +
		"  mtime INT,              -- last modification time\n" +
		"  sz INT,                 -- original file size\n" +
		"  data BLOB               -- compressed content\n" +
		")"
	createListingSQL = "CREATE INDEX sqlar_listing ON sqlar(name, mode, mtime, sz)"
	// nameIndex is SQLite's automatic index for sqlar's PRIMARY KEY.
	nameIndex = "sqlite_autoindex_sqlar_1"
)

// Errors beyond io/fs's, each wrapping the fs error a caller tests for.
var (
	// ErrIsDir: a file operation met a directory (writing over one, say).
	ErrIsDir error = &format.Wrapped{Msg: "is a directory: " + fs.ErrExist.Error(), Err: fs.ErrExist}
	// ErrNotDir: a path goes through, or lists, something that is not a
	// directory.
	ErrNotDir error = &format.Wrapped{Msg: "not a directory: " + fs.ErrInvalid.Error(), Err: fs.ErrInvalid}
	// ErrNotEmpty: Remove of a directory that has entries.
	ErrNotEmpty error = &format.Wrapped{Msg: "directory not empty: " + fs.ErrExist.Error(), Err: fs.ErrExist}
)

// Options configure an FS.
type Options struct {
	// Compress stores file data zlib-compressed where that makes it
	// smaller, as sqlite3 -A does; off, data is stored as is and reads
	// need no inflating. Reading handles both either way.
	Compress bool
	// Progress, when set, is called by CopyFS after each entry it stores,
	// with the entry's name and the bytes of file data stored so far.
	Progress func(name string, bytes int64)
}

// FS is a filesystem over the sqlar table of a database. It is safe for
// concurrent use, except an FS returned by In, which is as safe as its
// transaction. A database without the table reads as an empty directory;
// the first write creates it.
type FS struct {
	db   *pagoda.DB
	tx   *pagoda.Tx // the caller's transaction (In), or nil
	opts Options
	dir  string // the root of this FS in the archive ("" for the archive's root)
	pool *sync.Pool
	// hot is the view the last call gave back, taken first by the next:
	// calls made one after the other (a walk) keep one view, its cursor's
	// place and what it read ahead, wherever the goroutine runs, where
	// the pool keeps a view per processor and drops it at collections.
	hot *atomic.Pointer[view]
}

// New returns an FS over db's sqlar table.
func New(db *pagoda.DB, opts *Options) *FS {
	f := &FS{db: db, pool: &sync.Pool{New: func() any { return new(view) }}, hot: new(atomic.Pointer[view])}
	if opts != nil {
		f.opts = *opts
	}
	return f
}

// In returns an FS that reads and writes in tx instead of transactions of
// its own: its writes commit or roll back with tx, and its reads see tx's
// changes. Files it opens are valid until tx ends.
func (f *FS) In(tx *pagoda.Tx) *FS {
	g := *f
	g.tx = tx
	return &g
}

// DB returns the database the FS is in.
func (f *FS) DB() *pagoda.DB { return f.db }

// full converts a name valid for this FS into a name in the archive ("" is
// the archive's root). ok is false for an invalid name.
func (f *FS) full(name string) (string, bool) {
	if !fs.ValidPath(name) {
		return "", false
	}
	switch {
	case name == ".":
		return f.dir, true
	case f.dir == "":
		return name, true
	}
	return f.dir + "/" + name, true
}

// pathErr wraps err for op on name.
func pathErr(op, name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == name {
		return err
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// now returns the time new entries get, in sqlar's whole seconds.
func now() int64 { return time.Now().Unix() }

// entry is what an FS knows of one name: its row, or an implicit directory
// (a name that only prefixes other rows, or the root).
type entry struct {
	name  string // full name in the archive
	st    int64  // st_mode
	mtime int64
	sz    int64
	rowid int64 // 0 for an implicit directory
}

func (e *entry) isDir() bool     { return e.st&sIFMT == sIFDIR }
func (e *entry) isSymlink() bool { return e.st&sIFMT == sIFLNK }

// rootEntry is the archive's root, or a directory that has no row.
func implicitDir(name string) entry { return entry{name: name, st: sIFDIR | 0o755} }

// view is one transaction's access to the archive: the indexes and table
// it reads, resolved once per transaction, and a cursor kept across
// transactions so that a call allocates little.
type view struct {
	tx       *pagoda.Tx
	own      bool          // tx is the view's own, ended by release
	spare    *pagoda.Tx    // the view's own read transaction, for acquire to renew
	epoch    uint64        // tx.Epoch() when ix and tab were taken
	warm     bool          // the cursor is on tx's index, placed by an earlier call
	present  bool          // the table exists
	pfx      string        // "./" when the archive's names have it (names.go), else ""
	lead     bool          // the table's first columns are name, mode, mtime, sz (fillRow)
	ix       *pagoda.Index // the listing index, else the name index
	covering bool          // ix is the listing index
	tab      *pagoda.Table // resolved on demand
	col      columns       // sqlar's columns in the table, for the table defined by colSQL
	ncols    int
	colSQL   string
	c        pagoda.IndexCursor
	key      []byte     // scratch for seek keys
	pre      []byte     // the prefix a listing reads
	names    []byte     // scratch for listings
	head     []byte     // scratch for fillRow
	spans    []span     // names collected by list, in names
	rows     []row      // and their metadata
	slab     []dirEntry // what is left of the slabs listings are cut from
	slabList []fs.DirEntry
	slabText strings.Builder
	// reading ahead for walks (ahead.go)
	listed map[string]struct{}   // directories listed from the index in this snapshot
	ahead  map[string][]dirEntry // listings read ahead, by directory
	aheadN int                   // entries in ahead
	levels []aheadLevel          // the directories a pass is in
}

// row is the metadata of one listed entry.
type row struct{ st, mtime, sz int64 }

// span is where one listed entry's name lies in view.names. It and row
// are small enough for the compiler to keep in registers: appending a
// larger struct built on the stack copies it in 16-byte moves, which wait
// for the 8-byte stores that built it.
type span struct{ off, n int }

// columns maps sqlar's columns to their positions in the table.
type columns struct{ name, mode, mtime, sz, data int }

// open resolves the archive's table and index in tx. A view used last in
// the same read transaction (an FS In it) keeps them, and its cursor's
// place: the next seek is often on the same leaf.
func (v *view) open(tx *pagoda.Tx) error {
	if tx == v.tx && v.epoch == tx.Epoch() && v.ix != nil && !tx.Writable() && (!v.warm || v.c.Err() == nil) {
		return nil // warm stays as the last call left it
	}
	v.tx, v.present, v.ix, v.tab, v.covering, v.warm, v.pfx = tx, false, nil, nil, false, false, ""
	v.epoch = tx.Epoch()
	v.forget()
	// The listing reads index records' bytes as UTF-8 names: the names of
	// a UTF-16 database would read wrong.
	if h, err := tx.Header(); err != nil {
		return err
	} else if h.TextEncoding == 2 || h.TextEncoding == 3 {
		return fmt.Errorf("fsys: the database's text is UTF-16 (text encoding %d), and fsys reads UTF-8 archives only: %w", h.TextEncoding, pagoda.ErrUnsupported)
	}
	ix, err := tx.Index(ListingIndex)
	if err == nil && ix.TableName() == TableName && ix.SQL() == createListingSQL {
		v.ix, v.covering, v.present = ix, true, true
		return v.detectForm()
	}
	if err != nil && !errors.Is(err, pagoda.ErrNotFound) {
		return err
	}
	ix, err = tx.Index(nameIndex)
	if err == nil {
		v.ix, v.present = ix, true
		return v.detectForm()
	}
	if !errors.Is(err, pagoda.ErrNotFound) {
		return err
	}
	// No name index: is there a table at all?
	if _, err := tx.Table(TableName); err == nil {
		return fmt.Errorf("fsys: table %s has no index on name (not a SQLite Archive): %w", TableName, pagoda.ErrUnsupported)
	} else if !errors.Is(err, pagoda.ErrNotFound) {
		return err
	}
	return nil
}

// table returns the sqlar table, resolving it and its columns on first use.
func (v *view) table() (*pagoda.Table, error) {
	if v.tab != nil {
		return v.tab, nil
	}
	t, err := v.tx.Table(TableName)
	if err != nil {
		return nil, err
	}
	// The column map outlives the transaction in the pooled view: it is
	// worked out again only when the table's definition changes.
	if sql := t.SQL(); sql != v.colSQL {
		c, n := columns{-1, -1, -1, -1, -1}, 0
		for i, col := range t.Columns() {
			n++
			switch strings.ToLower(col.Name) {
			case "name":
				c.name = i
			case "mode":
				c.mode = i
			case "mtime":
				c.mtime = i
			case "sz":
				c.sz = i
			case "data":
				c.data = i
			}
		}
		if c.name < 0 || c.mode < 0 || c.mtime < 0 || c.sz < 0 || c.data < 0 {
			return nil, fmt.Errorf("fsys: table %s lacks one of the columns name, mode, mtime, sz, data: %w", TableName, pagoda.ErrUnsupported)
		}
		// The record's first four fields are name, mode, mtime and sz when
		// the columns are, none of them generated (a VIRTUAL column has no
		// field) and only name a primary key (an INTEGER PRIMARY KEY's
		// field is NULL).
		lead := c.name == 0 && c.mode == 1 && c.mtime == 2 && c.sz == 3
		for i, col := range t.Columns()[:min(4, n)] {
			if col.Generated || (col.PrimaryKey && i > 0) {
				lead = false
			}
		}
		v.col, v.ncols, v.colSQL, v.lead = c, n, sql, lead
	}
	v.tab = t
	return t, nil
}

// cursor returns the index cursor: reset to this transaction's index, or
// where the last call in this read transaction left it.
func (v *view) cursor() *pagoda.IndexCursor {
	if !v.warm {
		v.c.Reset(v.ix)
		v.warm = !v.tx.Writable() // a read transaction's pages never change
	}
	return &v.c
}

// seek moves c to the first entry whose name is >= key, searching the
// cursor's current leaf first.
func (v *view) seek(c *pagoda.IndexCursor, key []byte) bool {
	if len(key) == 0 {
		return c.First()
	}
	return c.SeekText(key)
}

// key is one decoded index entry: the name, and on the listing index the
// metadata too.
type key struct {
	name  []byte      // aliases the page
	kind  format.Kind // the name's: TEXT, or else a BLOB or a number or NULL
	st    int64
	mtime int64
	sz    int64
	rowid int64
}

// decode reads the cursor's entry in one pass over its record
// (format.ValueInts): the name, then (listing index) mode, mtime, sz, then
// the rowid, integers as SQLite reads them (a REAL's integer part, 0 for
// TEXT, a BLOB or NULL). It is the listing's inner loop.
//
//	listing index entry: name TEXT | mode | mtime | sz | rowid
//	name index entry:    name TEXT | rowid
func (v *view) decode(c *pagoda.IndexCursor, k *key) error {
	var ints [4]int64
	n := 1
	if v.covering {
		n = 4
	}
	name, ok := format.ValueInts(c.Raw(), ints[:n])
	if !ok {
		return errEntry
	}
	k.kind, k.name = name.Kind, name.Bytes
	if v.covering {
		k.st, k.mtime, k.sz, k.rowid = ints[0], ints[1], ints[2], ints[3]
	} else {
		k.rowid = ints[0]
	}
	return nil
}

// errEntry is a malformed index entry.
var errEntry error = &format.Wrapped{Msg: "fsys: malformed entry in the archive's name index: " + pagoda.ErrCorrupt.Error(), Err: pagoda.ErrCorrupt}

// keyName returns the name of the cursor's entry, aliasing the page; ok is
// false when the name is not TEXT.
func keyName(c *pagoda.IndexCursor) ([]byte, bool) {
	if t, body, ok := format.FieldBody(c.Raw(), 0); ok {
		return body, t >= 13 && t&1 == 1
	}
	v := c.Key().Column(0) // malformed: the Record reports it
	return v.Blob(), v.Type() == pagoda.TypeText
}

// fill completes e from the decoded key (the listing index) or the table
// row.
func (v *view) fill(k *key, e *entry) error {
	if v.covering {
		e.st, e.mtime, e.sz, e.rowid = k.st, k.mtime, k.sz, k.rowid
		return nil
	}
	return v.fillRow(e, k.rowid)
}

// fillRow completes e from the table row rowid. It reads the row's
// leading fields from its leaf page (Table.Head), never its data nor the
// data's overflow pages; a row whose leading fields do not lie whole there
// (a name of hundreds of bytes), or a table of another shape, is read
// whole.
func (v *view) fillRow(e *entry, rowid int64) error {
	t, err := v.table()
	if err != nil {
		return err
	}
	if v.lead {
		// The head's first try: the name's first 200 bytes, on a 512-byte
		// page (as sqlite3 -Ac makes them) the leaf and one overflow page.
		v.head = slices.Grow(v.head[:0], headFirst)
		head, _, err := t.Head(rowid, v.head[:headFirst])
		if err != nil {
			return missingRow(rowid, err)
		}
		var ints [3]int64 // mode, mtime, sz after the name
		_, ok := format.ValueInts(head, ints[:])
		if need, known := format.FieldsEnd(head, 4); !ok && known && need > int64(len(head)) && need <= headMax {
			// A longer name: read as far as sz.
			v.head = slices.Grow(v.head[:0], int(need))
			if head, _, err = t.Head(rowid, v.head[:need]); err != nil {
				return missingRow(rowid, err)
			}
			_, ok = format.ValueInts(head, ints[:])
		}
		if ok {
			e.st, e.mtime, e.sz, e.rowid = ints[0], ints[1], ints[2], rowid
			return nil
		}
	}
	r, err := t.Get(rowid)
	if err != nil {
		return missingRow(rowid, err)
	}
	e.st, e.mtime, e.sz, e.rowid = r.Column(v.col.mode).Int(), r.Column(v.col.mtime).Int(), r.Column(v.col.sz).Int(), rowid
	return nil
}

// The bytes of a row's record fillRow reads at first, and at most: a
// header and a name of up to headFirst-40 bytes, then mode, mtime and sz,
// fit in the first; a name as long as a path can be in the second.
const (
	headFirst = 256
	headMax   = 4096 + 64
)

// missingRow is err, from reading row rowid that the name index points
// at: a missing row is damage.
func missingRow(rowid int64, err error) error {
	if errors.Is(err, pagoda.ErrNotFound) {
		return fmt.Errorf("fsys: the name index points at row %d, which is missing: %w", rowid, pagoda.ErrCorrupt)
	}
	return err
}

// lookup finds the entry called name (a full name; "" is the root) without
// following symbolic links. found is false when nothing has that name.
func (v *view) lookup(name string) (e entry, found bool, err error) {
	if name == "" {
		return implicitDir(""), true, nil
	}
	if !v.present {
		return entry{}, false, nil
	}
	c := v.cursor()
	v.key = append(append(v.key[:0], v.pfx...), name...)
	if v.seek(c, v.key) {
		var k key
		if err := v.decode(c, &k); err != nil {
			return entry{}, false, err
		}
		if k.kind == format.KindText && bytes.Equal(k.name, v.key) {
			e.name = name
			if err := v.fill(&k, &e); err != nil {
				return entry{}, false, err
			}
			return e, true, nil
		}
	}
	if err := c.Err(); err != nil {
		return entry{}, false, err
	}
	// No row: a directory nobody stored, if some name lies under it.
	v.key = append(v.key, '/')
	if v.seek(c, v.key) {
		if n, ok := keyName(c); ok && bytes.HasPrefix(n, v.key) {
			return implicitDir(name), true, nil
		}
	}
	return entry{}, false, c.Err()
}

// maxSymlinks bounds the links followed in one resolution, as Linux's
// MAXSYMLINKS does.
const maxSymlinks = 40

// resolve looks name up, following symbolic links whose targets lie inside
// the archive, at the end of name or on the way to it. A link that leaves
// the archive, dangles or loops is fs.ErrNotExist.
func (v *view) resolve(name string) (entry, error) {
	for range maxSymlinks {
		e, found, err := v.lookup(name)
		if err != nil {
			return entry{}, err
		}
		rest := ""
		if !found {
			// Perhaps a directory on the way is a link.
			if e, found, err = v.linkOnPath(name); err != nil || !found {
				if err == nil {
					err = fs.ErrNotExist
				}
				return entry{}, err
			}
			rest = name[len(e.name):]
		} else if !e.isSymlink() {
			return e, nil
		}
		target, err := v.linkTarget(&e)
		if err != nil {
			return entry{}, err
		}
		if name, err = linkPath(e.name, target); err != nil {
			return entry{}, err
		}
		if rest != "" {
			name = strings.TrimPrefix(name+rest, "/")
		}
	}
	return entry{}, fmt.Errorf("too many levels of symbolic links: %w", fs.ErrNotExist)
}

// lresolve looks name up as lstat does: following the symbolic links on
// the way to it, but not a link that name itself is.
func (v *view) lresolve(name string) (entry, error) {
	e, found, err := v.lookup(name)
	if err != nil || found {
		return e, err
	}
	dir := parent(name)
	if dir == "" {
		return entry{}, fs.ErrNotExist
	}
	d, err := v.resolve(dir)
	if err != nil {
		return entry{}, err
	}
	if !d.isDir() {
		return entry{}, ErrNotDir
	}
	if d.name == dir {
		return entry{}, fs.ErrNotExist
	}
	inner := name[len(dir)+1:]
	if d.name != "" {
		inner = d.name + "/" + inner
	}
	if e, found, err = v.lookup(inner); err == nil && !found {
		err = fs.ErrNotExist
	}
	return e, err
}

// linkOnPath finds the first directory on the way to name that is a
// symbolic link; found is false if the way is blocked before one.
func (v *view) linkOnPath(name string) (entry, bool, error) {
	for i := 0; i < len(name); i++ {
		if name[i] != '/' {
			continue
		}
		e, found, err := v.lookup(name[:i])
		switch {
		case err != nil || !found:
			return entry{}, false, err
		case e.isSymlink():
			return e, true, nil
		case !e.isDir():
			return entry{}, false, ErrNotDir
		}
	}
	return entry{}, false, nil
}

// missing says why name, not found, is missing: ErrNotDir when a file (or,
// for writes, which do not follow them, a link) lies on the way to it, as
// POSIX's ENOTDIR; else fs.ErrNotExist.
func (v *view) missing(name string) error {
	for i := 0; i < len(name); i++ {
		if name[i] != '/' {
			continue
		}
		e, found, err := v.lookup(name[:i])
		switch {
		case err != nil:
			return err
		case !found:
			return fs.ErrNotExist
		case !e.isDir():
			return ErrNotDir
		}
	}
	return fs.ErrNotExist
}

// linkPath resolves a link's target against the link's own name.
func linkPath(link, target string) (string, error) {
	if target == "" || target[0] == '/' {
		return "", fmt.Errorf("symbolic link to %q leaves the archive: %w", target, fs.ErrNotExist)
	}
	// Clean by hand: ".." may not climb above the root.
	var parts []string
	if dir := parent(link); dir != "" {
		parts = strings.Split(dir, "/")
	}
	for _, p := range strings.Split(target, "/") {
		switch p {
		case "", ".":
		case "..":
			if len(parts) == 0 {
				return "", fmt.Errorf("symbolic link to %q leaves the archive: %w", target, fs.ErrNotExist)
			}
			parts = parts[:len(parts)-1]
		default:
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/"), nil
}

// maxLinkTarget bounds a symbolic link's target: PATH_MAX on Linux.
const maxLinkTarget = 4096

// linkTarget reads a symbolic link's target from its data, stored as it
// is: sqlite3 stores sz -1 (sqlar_uncompress returns data as it is for sz
// <= 0). A positive sz other than the target's length (which would make
// the data compressed), or a target longer than any path, is ErrCorrupt.
func (v *view) linkTarget(e *entry) (string, error) {
	t, err := v.table()
	if err != nil {
		return "", err
	}
	b, err := t.OpenBlob(e.rowid, v.col.data)
	if err != nil {
		return "", err
	}
	switch n := b.Len(); {
	case e.sz > 0 && e.sz != n:
		return "", fmt.Errorf("fsys: symbolic link %q has sz %d, neither -1 nor its target's length %d: %w", e.name, e.sz, n, pagoda.ErrCorrupt)
	case n > maxLinkTarget:
		return "", fmt.Errorf("fsys: symbolic link %q has a target of %d bytes, longer than a path can be: %w", e.name, n, pagoda.ErrCorrupt)
	}
	buf := make([]byte, b.Len())
	if _, err := b.ReadAt(buf, 0); err != nil && len(buf) > 0 {
		return "", err
	}
	return string(buf), nil
}

// read runs fn in a view of the archive: in the FS's transaction, or in a
// read transaction of its own.
func (f *FS) read(fn func(v *view) error) error {
	v, err := f.acquire()
	if err != nil {
		return err
	}
	return f.release(v, fn(v))
}

// acquire returns a view of the archive in the FS's transaction, or in a
// read transaction of its own (v.own), to be given back with release.
//
// A view keeps its own transaction when release ends it (v.spare), and
// renews it at the next acquire: when nothing has been committed since,
// the snapshot is the same, so the view keeps its index, its table and its
// cursor's place, and a walk's next listing seeks from where the last one
// left off, as in one long transaction.
func (f *FS) acquire() (*view, error) {
	v := f.get()
	tx, own := f.tx, false
	if tx == nil {
		own = true
		if v.spare != nil {
			if _, err := v.spare.Renew(); err == nil {
				tx = v.spare // not the same snapshot: open sees the epoch move
			} else {
				v.spare = nil
			}
		}
		if tx == nil {
			var err error
			if tx, err = f.db.Begin(false); err != nil {
				f.put(v)
				return nil, err
			}
			v.spare = tx
		}
	}
	v.own = own
	if err := v.open(tx); err != nil {
		f.release(v, nil)
		return nil, err
	}
	return v, nil
}

// release ends what acquire began and returns err, or else an error the
// transaction kept (a malformed record met on the way).
func (f *FS) release(v *view, err error) error {
	tx := v.tx
	if v.own {
		if err == nil {
			err = tx.Err()
		}
		tx.Rollback() // kept in v.spare, for acquire to renew
	}
	if tx.Writable() || err != nil {
		v.tx, v.ix, v.tab, v.warm = nil, nil, nil, false
		v.c.Reset(nil)
		v.forget()
	}
	v.own = false
	f.put(v)
	return err
}

// get takes the hot view, or one from the pool.
func (f *FS) get() *view {
	if v := f.hot.Swap(nil); v != nil {
		return v
	}
	return f.pool.Get().(*view)
}

// put gives v back: as the hot view, or to the pool.
func (f *FS) put(v *view) {
	if !f.hot.CompareAndSwap(nil, v) {
		f.pool.Put(v)
	}
}
