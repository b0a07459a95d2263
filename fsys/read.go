package fsys

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/format"
)

// dirEntry is one directory entry, and its FileInfo: ReadDir cuts them,
// and their names, from the view's slabs (see entries).
type dirEntry struct {
	name  string // base name
	mode  fs.FileMode
	size  int64
	mtime int64
}

func (d *dirEntry) Name() string               { return d.name }
func (d *dirEntry) IsDir() bool                { return d.mode.IsDir() }
func (d *dirEntry) Type() fs.FileMode          { return d.mode.Type() }
func (d *dirEntry) Info() (fs.FileInfo, error) { return d, nil }
func (d *dirEntry) Size() int64                { return d.size }
func (d *dirEntry) Mode() fs.FileMode          { return d.mode }
func (d *dirEntry) ModTime() time.Time         { return time.Unix(d.mtime, 0) }
func (d *dirEntry) Sys() any                   { return nil }
func (d *dirEntry) String() string             { return fs.FormatDirEntry(d) }

// set fills d from e, named name.
func (d *dirEntry) set(name string, e *entry) {
	d.name, d.mode, d.mtime = name, fileMode(e.st), e.mtime
	d.size = 0
	if e.st&sIFMT != sIFDIR && e.sz > 0 {
		d.size = e.sz
	}
}

// info returns e's FileInfo under name's base name.
func info(name string, e *entry) *dirEntry {
	d := new(dirEntry)
	d.set(path.Base(name), e)
	return d
}

// validElem reports whether b may be one element of an fs.ValidPath name.
func validElem(b []byte) bool {
	if len(b) == 0 || (len(b) == 1 && b[0] == '.') || (len(b) == 2 && b[0] == '.' && b[1] == '.') {
		return false
	}
	// Most names are short and ASCII: eight bytes at a time, no call.
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&asciiMask8 != 0 {
			return utf8.Valid(b)
		}
	}
	for _, c := range b[i:] {
		if c >= utf8.RuneSelf {
			return utf8.Valid(b)
		}
	}
	return true
}

// asciiMask8 has the high bit of each of eight bytes: a byte of UTF-8
// outside ASCII has it.
const asciiMask8 = 0x8080808080808080

// seen returns the index of child among the names collected so far, or
// -1. They are in order, so only the ones after child are passed.
func (v *view) seen(child []byte) int {
	for i := len(v.spans) - 1; i >= 0; i-- {
		sp := v.spans[i]
		name := v.names[sp.off : sp.off+sp.n]
		switch bytes.Compare(name, child) {
		case 0:
			return i
		case -1:
			return -1
		}
	}
	return -1
}

// scanLimit is how many names a listing steps over before it seeks
// instead: a step costs tens of nanoseconds, a seek from the root about a
// microsecond, and most subtrees a listing passes are small.
const scanLimit = 8

// list returns the entries directly inside directory full ("" for the
// root), sorted by name, following a symbolic link to a directory. It is
// one ordered range of the index: it finds the directory's own row, steps
// to full+"/", then reads the names below it, stepping (or, past
// scanLimit names, seeking) over each subdirectory's subtree rather than
// reading it. A missing directory is fs.ErrNotExist, a file ErrNotDir.
func (v *view) list(full string) ([]fs.DirEntry, error) {
	if !v.present {
		if full == "" {
			return []fs.DirEntry{}, nil
		}
		return nil, fs.ErrNotExist
	}
	if list, ok := v.served(full); ok {
		return list, nil
	}
	ahead := !v.tx.Writable() && v.listedBefore(full)
	c := v.cursor()
	var k key
	var ok bool
	exists := full == ""
	v.pre = append(v.pre[:0], v.pfx...)
	if full == "" {
		ok = v.seek(c, v.pre) // the first name, or the first "./" name
	} else {
		v.key = append(append(v.key[:0], v.pfx...), full...)
		if ok = v.seek(c, v.key); ok {
			if err := v.decode(c, &k); err != nil {
				return nil, err
			}
			if k.kind == format.KindText && bytes.Equal(k.name, v.key) {
				e := entry{name: full}
				if err := v.fill(&k, &e); err != nil {
					return nil, err
				}
				switch {
				case e.isSymlink():
					t, err := v.resolve(full)
					if err != nil {
						return nil, err
					}
					if !t.isDir() {
						return nil, ErrNotDir
					}
					return v.list(t.name)
				case !e.isDir():
					return nil, ErrNotDir
				}
				exists = true
				ok = c.Next()
			}
		}
		// Step to full+"/": names such as full+".x" sort in between.
		v.pre = append(append(v.pre, full...), '/')
		for i := 0; ok; i++ {
			n, _ := keyName(c)
			if bytes.Compare(n, v.pre) >= 0 {
				break
			}
			if i == scanLimit {
				ok = v.seek(c, v.pre)
				break
			}
			ok = c.Next()
		}
	}
	prefix := v.pre
	v.spans, v.names = v.spans[:0], v.names[:0]
	rows := v.rows[:0]
	sorted := true
	for ok {
		if err := v.decode(c, &k); err != nil {
			return nil, err
		}
		if k.kind != format.KindText {
			if k.kind == format.KindBlob {
				break // blobs sort after every text
			}
			ok = c.Next() // numbers sort before
			continue
		}
		if !bytes.HasPrefix(k.name, prefix) {
			break
		}
		exists = true // a name below it, valid or not, makes the directory
		rest := k.name[len(prefix):]
		if i := bytes.IndexByte(rest, '/'); i >= 0 {
			// A name below a child: the child is a directory. Note it if
			// it has no row, then pass its subtree.
			child := rest[:i]
			dir := false
			if validElem(child) {
				switch j := v.seen(child); {
				case j < 0:
					if len(v.spans) > 0 && bytes.Compare(v.names[v.spans[len(v.spans)-1].off:], child) > 0 {
						sorted = false
					}
					v.spans = append(v.spans, span{len(v.names), len(child)})
					v.names = append(v.names, child...)
					rows = append(rows, row{st: sIFDIR | 0o755})
					dir = true
				default:
					dir = rows[j].st&sIFMT == sIFDIR
				}
			}
			v.key = append(append(append(v.key[:0], prefix...), child...), '/')
			if ahead && dir && v.aheadN < aheadMax {
				ok = v.readAhead(c, v.key)
				continue
			}
			ok = c.Next()
			for i := 0; ok; i++ {
				n, _ := keyName(c)
				if !bytes.HasPrefix(n, v.key) {
					break
				}
				if i == scanLimit {
					// child+"0" is the first name after child+"/...".
					v.key[len(v.key)-1] = '/' + 1
					ok = c.SeekText(v.key)
					break
				}
				ok = c.Next()
			}
			continue
		}
		if validElem(rest) {
			var e entry
			if err := v.fill(&k, &e); err != nil {
				return nil, err
			}
			v.spans = append(v.spans, span{len(v.names), len(rest)})
			v.names = append(v.names, rest...)
			rows = append(rows, row{e.st, e.mtime, e.sz})
		}
		ok = c.Next()
	}
	v.rows = rows
	if err := c.Err(); err != nil {
		return nil, err
	}
	if !exists {
		// Perhaps a directory on the way is a symbolic link.
		e, err := v.resolve(full)
		switch {
		case err != nil:
			return nil, err
		case !e.isDir():
			return nil, ErrNotDir
		case e.name == full:
			return nil, fs.ErrNotExist
		}
		return v.list(e.name)
	}
	names := v.text(v.names)
	out, list := v.entries(len(v.spans))
	for i, sp := range v.spans {
		off, n := sp.off, sp.n
		e := entry{st: rows[i].st, mtime: rows[i].mtime, sz: rows[i].sz}
		out[i].set(names[off:off+n], &e)
		list[i] = &out[i]
	}
	if !sorted {
		slices.SortFunc(list, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	return list, nil
}

// A listing's names, entries and the interfaces pointing at them are cut
// from slabs the view keeps, so that a walk, which lists many small
// directories, allocates a few times per hundred of them rather than three
// times for each. What a listing returns is never written again; holding
// one entry keeps its slab alive (at most slabEntries entries and
// slabText bytes of names).
const (
	slabEntries = 256
	slabText    = 4096
)

// entries returns n entries and n interfaces, cut from the view's slabs.
func (v *view) entries(n int) ([]dirEntry, []fs.DirEntry) {
	return v.dirEntries(n), v.ifaces(n)
}

// dirEntries returns n entries cut from the view's slab.
func (v *view) dirEntries(n int) []dirEntry {
	if n > len(v.slab) {
		if n > slabEntries/4 {
			return make([]dirEntry, n)
		}
		v.slab = make([]dirEntry, slabEntries)
	}
	out := v.slab[:n:n]
	v.slab = v.slab[n:]
	return out
}

// ifaces returns n interfaces cut from the view's slab.
func (v *view) ifaces(n int) []fs.DirEntry {
	if n > len(v.slabList) {
		if n > slabEntries/4 {
			return make([]fs.DirEntry, n)
		}
		v.slabList = make([]fs.DirEntry, slabEntries)
	}
	list := v.slabList[:n:n]
	v.slabList = v.slabList[n:]
	return list
}

// text returns b as a string, cut from the view's text slab: a
// strings.Builder only appends, so a string it returned never changes.
func (v *view) text(b []byte) string {
	if v.slabText.Cap()-v.slabText.Len() < len(b) {
		if len(b) > slabText/4 {
			return string(b)
		}
		v.slabText.Reset()
		v.slabText.Grow(slabText)
	}
	start := v.slabText.Len()
	v.slabText.Write(b)
	return v.slabText.String()[start:]
}

// readData returns a regular file's whole content: a copy of raw data, or
// the inflated zlib stream (inflate.go).
func (v *view) readData(e *entry) ([]byte, error) {
	b, err := v.blob(e)
	if err != nil || b == nil {
		return []byte{}, err
	}
	if b.Len() == e.sz {
		out := make([]byte, e.sz)
		if e.sz > 0 {
			if _, err := b.ReadAt(out, 0); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return readAll(b, e)
}

// readFile returns the content of file full, following symbolic links.
func (v *view) readFile(full string) ([]byte, error) {
	e, err := v.resolve(full)
	if err != nil {
		return nil, err
	}
	if e.isDir() {
		return nil, ErrIsDir
	}
	return v.readData(&e)
}

// blob opens e's data; nil for NULL data (a directory row, or an empty
// file some other tool stored that way). A negative size, or one the data
// cannot hold, is ErrCorrupt (inflate.go, rule 1).
func (v *view) blob(e *entry) (*pagoda.Blob, error) {
	t, err := v.table()
	if err != nil {
		return nil, err
	}
	b, err := t.OpenBlob(e.rowid, v.col.data)
	if err != nil {
		return nil, err
	}
	if b.Type() == pagoda.TypeNull {
		if e.sz > 0 {
			return nil, fmt.Errorf("fsys: %q has size %d but no data: %w", e.name, e.sz, pagoda.ErrCorrupt)
		}
		return nil, checkClaim(e, 0)
	}
	if err := checkClaim(e, b.Len()); err != nil {
		return nil, err
	}
	return b, nil
}

// ReadDir implements fs.ReadDirFS: the entries of directory name, sorted
// by name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	full, ok := f.full(name)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	v, err := f.acquire()
	var list []fs.DirEntry
	if err == nil {
		list, err = v.list(full)
		err = f.release(v, err)
	}
	if err != nil {
		return nil, pathErr("readdir", name, err)
	}
	return list, nil
}

// ReadFile implements fs.ReadFileFS: the whole content of file name, in a
// new slice. Symbolic links are followed.
func (f *FS) ReadFile(name string) ([]byte, error) {
	full, ok := f.full(name)
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	v, err := f.acquire()
	var data []byte
	if err == nil {
		data, err = v.readFile(full)
		err = f.release(v, err)
	}
	if err != nil {
		return nil, pathErr("read", name, err)
	}
	return data, nil
}

// Stat implements fs.StatFS, following symbolic links.
func (f *FS) Stat(name string) (fs.FileInfo, error) { return f.stat("stat", name, true) }

// Lstat implements fs.ReadLinkFS: Stat without following a final symbolic
// link.
func (f *FS) Lstat(name string) (fs.FileInfo, error) { return f.stat("lstat", name, false) }

func (f *FS) stat(op, name string, follow bool) (fs.FileInfo, error) {
	full, ok := f.full(name)
	if !ok {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	var fi fs.FileInfo
	err := f.read(func(v *view) error {
		var e entry
		var err error
		if follow {
			e, err = v.resolve(full)
		} else {
			e, err = v.lresolve(full)
		}
		if err == nil {
			fi = info(name, &e)
		}
		return err
	})
	if err != nil {
		return nil, pathErr(op, name, err)
	}
	return fi, nil
}

// ReadLink implements fs.ReadLinkFS: the target of symbolic link name.
func (f *FS) ReadLink(name string) (string, error) {
	full, ok := f.full(name)
	if !ok {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	var target string
	err := f.read(func(v *view) error {
		e, err := v.lresolve(full)
		switch {
		case err != nil:
			return err
		case !e.isSymlink():
			return fmt.Errorf("not a symbolic link: %w", fs.ErrInvalid)
		}
		target, err = v.linkTarget(&e)
		return err
	})
	if err != nil {
		return "", pathErr("readlink", name, err)
	}
	return target, nil
}

// Sub implements fs.SubFS: the FS rooted at directory dir, reading and
// writing below it.
func (f *FS) Sub(dir string) (fs.FS, error) {
	full, ok := f.full(dir)
	if !ok {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: fs.ErrInvalid}
	}
	g := *f
	g.dir = full
	return &g, nil
}

// Glob implements fs.GlobFS, with path.Match's patterns.
func (f *FS) Glob(pattern string) ([]string, error) {
	return fs.Glob(globber{f}, pattern)
}

// globber hides FS's Glob, so that fs.Glob walks the directories.
type globber struct{ f *FS }

func (g globber) Open(name string) (fs.File, error)          { return g.f.Open(name) }
func (g globber) ReadDir(name string) ([]fs.DirEntry, error) { return g.f.ReadDir(name) }
func (g globber) Stat(name string) (fs.FileInfo, error)      { return g.f.Stat(name) }

// Open implements fs.FS, following symbolic links. A regular file of an FS
// that is not In a transaction keeps a read transaction, its snapshot,
// until Close: close every file, since DB.Close waits for them.
func (f *FS) Open(name string) (fs.File, error) {
	full, ok := f.full(name)
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	v, err := f.acquire()
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	file := &File{fsys: f, name: name}
	file.e, err = v.resolve(full)
	if err == nil && !file.e.isDir() {
		file.size = max(file.e.sz, 0)
		var b *pagoda.Blob
		switch b, err = v.blob(&file.e); {
		case err != nil:
		case b == nil:
			file.data = []byte{}
		default:
			// Read in place, or inflated as it is read (inflate.go): the
			// file keeps the view's own snapshot.
			if b.Len() == file.e.sz {
				file.blob = b
			} else {
				file.z = &stream{blob: b, e: &file.e}
			}
			if v.own {
				file.tx, v.own, v.spare = v.tx, false, nil
			}
		}
	}
	err = f.release(v, err)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	return file, nil
}

// File is an open file or directory of an FS. A regular file implements
// io.ReaderAt, io.Seeker and io.WriterTo; a directory, fs.ReadDirFile.
// ReadAt may be called concurrently; the other methods may not.
type File struct {
	fsys *FS
	name string
	e    entry
	mu   sync.Mutex // guards blob, z and tx for ReadAt
	tx   *pagoda.Tx // the snapshot an open file owns, ended by Close
	blob *pagoda.Blob
	z    *stream // compressed data, instead of blob
	data []byte  // the content when it is neither: empty
	size int64
	pos  int64
	done bool
	// directories
	list   []fs.DirEntry
	listed bool
}

// Stat returns the file's FileInfo.
func (fl *File) Stat() (fs.FileInfo, error) {
	if fl.done {
		return nil, &fs.PathError{Op: "stat", Path: fl.name, Err: fs.ErrClosed}
	}
	return info(fl.name, &fl.e), nil
}

// ReadAt implements io.ReaderAt.
func (fl *File) ReadAt(p []byte, off int64) (int, error) {
	if err := fl.readable("read"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: fl.name, Err: errors.New("negative offset")}
	}
	if fl.z != nil {
		fl.mu.Lock()
		n, err := fl.z.readAt(p, off)
		fl.mu.Unlock()
		if err != nil && err != io.EOF {
			err = pathErr("read", fl.name, err)
		}
		return n, err
	}
	if off >= fl.size {
		return 0, io.EOF
	}
	if fl.blob == nil {
		n := copy(p, fl.data[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	fl.mu.Lock()
	n, err := fl.blob.ReadAt(p, off)
	fl.mu.Unlock()
	if err != nil && err != io.EOF {
		err = pathErr("read", fl.name, err)
	}
	return n, err
}

// Read implements io.Reader.
func (fl *File) Read(p []byte) (int, error) {
	if err := fl.readable("read"); err != nil {
		return 0, err
	}
	if fl.pos >= fl.size && fl.z == nil {
		return 0, io.EOF
	}
	n, err := fl.ReadAt(p, fl.pos)
	fl.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// WriteTo implements io.WriterTo: the rest of the file, written from the
// database pages with no copy of its own.
func (fl *File) WriteTo(w io.Writer) (int64, error) {
	if err := fl.readable("read"); err != nil {
		return 0, err
	}
	if fl.z != nil {
		fl.mu.Lock()
		defer fl.mu.Unlock()
		n, err := fl.z.writeTo(w, fl.pos)
		fl.pos += n
		if err != nil && fl.z.err == err {
			err = pathErr("read", fl.name, err)
		}
		return n, err
	}
	if fl.pos >= fl.size {
		return 0, nil
	}
	if fl.blob == nil {
		n, err := w.Write(fl.data[fl.pos:])
		fl.pos += int64(n)
		return int64(n), err
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if _, err := fl.blob.Seek(fl.pos, io.SeekStart); err != nil {
		return 0, err
	}
	n, err := fl.blob.WriteTo(w)
	fl.pos += n
	return n, err
}

// Seek implements io.Seeker.
func (fl *File) Seek(offset int64, whence int) (int64, error) {
	if err := fl.readable("seek"); err != nil {
		return 0, err
	}
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += fl.pos
	case io.SeekEnd:
		offset += fl.size
	default:
		return fl.pos, &fs.PathError{Op: "seek", Path: fl.name, Err: fs.ErrInvalid}
	}
	if offset < 0 {
		return fl.pos, &fs.PathError{Op: "seek", Path: fl.name, Err: fs.ErrInvalid}
	}
	fl.pos = offset
	return offset, nil
}

func (fl *File) readable(op string) error {
	switch {
	case fl.done:
		return &fs.PathError{Op: op, Path: fl.name, Err: fs.ErrClosed}
	case fl.e.isDir():
		return &fs.PathError{Op: op, Path: fl.name, Err: ErrIsDir}
	}
	return nil
}

// ReadDir implements fs.ReadDirFile: with n > 0, the next n entries at
// most (io.EOF at the end); with n <= 0, all the rest.
func (fl *File) ReadDir(n int) ([]fs.DirEntry, error) {
	if fl.done {
		return nil, &fs.PathError{Op: "readdir", Path: fl.name, Err: fs.ErrClosed}
	}
	if !fl.e.isDir() {
		return nil, &fs.PathError{Op: "readdir", Path: fl.name, Err: ErrNotDir}
	}
	if !fl.listed {
		err := fl.fsys.read(func(v *view) error {
			var err error
			fl.list, err = v.list(fl.e.name)
			return err
		})
		if err != nil {
			return nil, pathErr("readdir", fl.name, err)
		}
		fl.listed = true
	}
	if n <= 0 {
		out := fl.list
		fl.list = fl.list[len(fl.list):]
		return out, nil
	}
	if len(fl.list) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(fl.list))
	out := fl.list[:n:n]
	fl.list = fl.list[n:]
	return out, nil
}

// Close releases the file and its snapshot.
func (fl *File) Close() error {
	if fl.done {
		return &fs.PathError{Op: "close", Path: fl.name, Err: fs.ErrClosed}
	}
	fl.done = true
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.z != nil {
		fl.z.close()
	}
	fl.blob, fl.z, fl.data, fl.list = nil, nil, nil, nil
	if fl.tx != nil {
		tx := fl.tx
		fl.tx = nil
		return tx.Rollback()
	}
	return nil
}
