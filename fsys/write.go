package fsys

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/pagodadb/pagoda"
)

// write runs fn in a write view: in the FS's transaction, or in a write
// transaction of its own that commits when fn succeeds. Errors come back
// as *fs.PathError for op on name.
func (f *FS) write(op, name string, fn func(v *view) error) error {
	run := func(tx *pagoda.Tx) error {
		v := f.get()
		err := v.open(tx)
		if err == nil {
			err = fn(v)
		}
		v.tx, v.ix, v.tab, v.warm = nil, nil, nil, false
		v.c.Reset(nil)
		v.forget()
		f.put(v)
		return err
	}
	var err error
	if f.tx != nil {
		if !f.tx.Writable() {
			err = pagoda.ErrTxNotWritable
		} else {
			err = run(f.tx)
		}
	} else {
		err = f.db.Update(run)
	}
	if err != nil {
		return pathErr(op, name, err)
	}
	return nil
}

// ensure creates the archive's table and listing index if they are
// missing.
func (v *view) ensure() error {
	if v.present {
		return nil
	}
	if _, err := v.tx.CreateTable(createTableSQL); err != nil {
		return err
	}
	if _, err := v.tx.CreateIndex(createListingSQL); err != nil {
		return err
	}
	return v.open(v.tx)
}

// parent returns the name of the directory holding full ("" for the root).
func parent(full string) string {
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[:i]
	}
	return ""
}

// checkParent checks that the directory that would hold full exists.
func (v *view) checkParent(full string) error {
	e, found, err := v.lookup(parent(full))
	switch {
	case err != nil:
		return err
	case !found:
		return v.missing(full)
	case !e.isDir():
		return ErrNotDir
	}
	return nil
}

// put stores a row for full, replacing the row of old when old has one.
// data is nil (NULL), a []byte (BLOB) or a string (TEXT).
func (v *view) put(full string, st, mtime, sz int64, data any, old *entry) error {
	t, err := v.table()
	if err != nil {
		return err
	}
	vals := make([]any, v.ncols)
	vals[v.col.name], vals[v.col.mode], vals[v.col.mtime], vals[v.col.sz], vals[v.col.data] = v.pfx+full, st, mtime, sz, data
	if old != nil && old.rowid != 0 {
		return t.Put(old.rowid, vals...)
	}
	_, err = t.Insert(vals...)
	return err
}

// update rewrites row e with a new name, mode and mtime, keeping its size
// and data.
func (v *view) update(e *entry, name string, st, mtime int64) error {
	t, err := v.table()
	if err != nil {
		return err
	}
	r, err := t.Get(e.rowid)
	if err != nil {
		return err
	}
	data := r.Column(v.col.data).Any()
	if b, ok := data.([]byte); ok {
		data = bytes.Clone(b) // the row's pages change under it
	}
	return v.put(name, st, mtime, r.Column(v.col.sz).Int(), data, e)
}

// under returns the rows whose names lie below full (full+"/..."), in name
// order.
func (v *view) under(full string) ([]entry, error) {
	var out []entry
	if !v.present {
		return nil, nil
	}
	c := v.cursor()
	v.key = append(v.key[:0], v.pfx...)
	if full != "" {
		v.key = append(append(v.key, full...), '/')
	}
	for ok := v.seek(c, v.key); ok; ok = c.Next() {
		n, isText := keyName(c)
		if !isText {
			if c.Key().Column(0).Type() == pagoda.TypeBlob {
				break
			}
			continue
		}
		if !bytes.HasPrefix(n, v.key) {
			break
		}
		out = append(out, entry{name: string(n[len(v.pfx):]), rowid: c.Rowid()})
	}
	return out, c.Err()
}

// hasChildren reports whether some row lies below full.
func (v *view) hasChildren(full string) (bool, error) {
	if !v.present {
		return false, nil
	}
	c := v.cursor()
	v.key = append(append(append(v.key[:0], v.pfx...), full...), '/')
	if v.seek(c, v.key) {
		if n, ok := keyName(c); ok && bytes.HasPrefix(n, v.key) {
			return true, nil
		}
	}
	return false, c.Err()
}

// encode returns what the data column stores for a file's content: a zlib
// stream when compression is on and makes it smaller, else the bytes as
// they are (never NULL: an empty file is an empty blob).
func (f *FS) encode(data []byte) []byte {
	if data == nil {
		data = []byte{}
	}
	if !f.opts.Compress || len(data) == 0 {
		return data
	}
	var buf bytes.Buffer
	buf.Grow(len(data) / 2)
	zw := zlib.NewWriter(&buf)
	zw.Write(data) // a bytes.Buffer does not fail
	zw.Close()
	if buf.Len() < len(data) {
		return buf.Bytes()
	}
	return data
}

// fileBits keeps the permission bits of perm (and setuid, setgid, sticky)
// for a new entry of type typ.
func fileBits(typ int64, perm fs.FileMode) int64 {
	return typ | stMode(perm)&0o7777
}

// WriteFile writes data to file name, creating it with perm if it does not
// exist and replacing its content (keeping its mode) if it does. The
// directory that holds it must exist. Writing over a directory fails with
// ErrIsDir.
func (f *FS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	full, ok := f.full(name)
	if !ok || full == "" {
		return &fs.PathError{Op: "write", Path: name, Err: fs.ErrInvalid}
	}
	stored := f.encode(data)
	return f.write("write", name, func(v *view) error {
		return v.writeFile(full, stored, int64(len(data)), fileBits(sIFREG, perm), now())
	})
}

// writeFile stores a regular file, or replaces one (or a symbolic link).
func (v *view) writeFile(full string, stored []byte, sz, st, mtime int64) error {
	if err := v.checkParent(full); err != nil {
		return err
	}
	e, found, err := v.lookup(full)
	if err != nil {
		return err
	}
	if found {
		if e.isDir() {
			return ErrIsDir
		}
		if e.st&sIFMT == sIFREG {
			st = e.st
		}
	}
	if err := v.ensure(); err != nil {
		return err
	}
	return v.put(full, st, mtime, sz, stored, &e)
}

// Create returns a Writer for file name, which appears, with perm if it is
// new, when the Writer is closed. The data is kept in memory until then.
func (f *FS) Create(name string, perm fs.FileMode) (*Writer, error) {
	full, ok := f.full(name)
	if !ok || full == "" {
		return nil, &fs.PathError{Op: "create", Path: name, Err: fs.ErrInvalid}
	}
	// Fail early where Close would.
	err := f.read(func(v *view) error {
		if err := v.checkParent(full); err != nil {
			return err
		}
		e, found, err := v.lookup(full)
		if err == nil && found && e.isDir() {
			err = ErrIsDir
		}
		return err
	})
	if err != nil {
		return nil, pathErr("create", name, err)
	}
	return &Writer{fsys: f, name: name, perm: perm}, nil
}

// Writer streams a new file's content; the file appears, atomically, when
// Close succeeds. A Writer is not safe for concurrent use.
type Writer struct {
	fsys *FS
	name string
	perm fs.FileMode
	buf  bytes.Buffer
	done bool
}

// Write appends p to the file's content.
func (w *Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, &fs.PathError{Op: "write", Path: w.name, Err: fs.ErrClosed}
	}
	return w.buf.Write(p)
}

// Close stores the file.
func (w *Writer) Close() error {
	if w.done {
		return &fs.PathError{Op: "close", Path: w.name, Err: fs.ErrClosed}
	}
	w.done = true
	err := w.fsys.WriteFile(w.name, w.buf.Bytes(), w.perm)
	w.buf = bytes.Buffer{}
	return err
}

// Mkdir creates directory name with perm. Its parent must exist; name must
// not.
func (f *FS) Mkdir(name string, perm fs.FileMode) error {
	full, ok := f.full(name)
	if !ok {
		return &fs.PathError{Op: "mkdir", Path: name, Err: fs.ErrInvalid}
	}
	return f.write("mkdir", name, func(v *view) error {
		if full == "" {
			return fs.ErrExist
		}
		if err := v.checkParent(full); err != nil {
			return err
		}
		_, found, err := v.lookup(full)
		if err != nil {
			return err
		}
		if found {
			return fs.ErrExist
		}
		if err := v.ensure(); err != nil {
			return err
		}
		return v.put(full, fileBits(sIFDIR, perm), now(), 0, nil, nil)
	})
}

// MkdirAll creates directory name and any missing parents, with perm. It
// does nothing if name is already a directory; a file in the way is
// ErrNotDir.
func (f *FS) MkdirAll(name string, perm fs.FileMode) error {
	full, ok := f.full(name)
	if !ok {
		return &fs.PathError{Op: "mkdir", Path: name, Err: fs.ErrInvalid}
	}
	return f.write("mkdir", name, func(v *view) error { return v.mkdirAll(full, fileBits(sIFDIR, perm), now()) })
}

func (v *view) mkdirAll(full string, st, mtime int64) error {
	if full == "" {
		return nil
	}
	if e, found, err := v.lookup(full); err != nil || found {
		if err == nil && !e.isDir() {
			err = ErrNotDir
		}
		return err
	}
	if err := v.mkdirAll(parent(full), st, mtime); err != nil {
		return err
	}
	if err := v.ensure(); err != nil {
		return err
	}
	return v.put(full, st, mtime, 0, nil, nil)
}

// Remove removes file, symbolic link or empty directory name. A directory
// with entries is ErrNotEmpty.
func (f *FS) Remove(name string) error {
	full, ok := f.full(name)
	if !ok || full == "" {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrInvalid}
	}
	return f.write("remove", name, func(v *view) error {
		e, found, err := v.lookup(full)
		switch {
		case err != nil:
			return err
		case !found:
			return v.missing(full)
		case e.isDir():
			if has, err := v.hasChildren(full); err != nil || has {
				if err == nil {
					err = ErrNotEmpty
				}
				return err
			}
		}
		t, err := v.table()
		if err != nil {
			return err
		}
		return t.Delete(e.rowid)
	})
}

// RemoveAll removes name and everything below it. A name that does not
// exist is not an error. The root cannot be removed.
func (f *FS) RemoveAll(name string) error {
	full, ok := f.full(name)
	if !ok || full == "" {
		return &fs.PathError{Op: "removeall", Path: name, Err: fs.ErrInvalid}
	}
	return f.write("removeall", name, func(v *view) error {
		rows, err := v.under(full)
		if err != nil {
			return err
		}
		if e, found, err := v.lookup(full); err != nil {
			return err
		} else if found && e.rowid != 0 {
			rows = append(rows, e)
		}
		if len(rows) == 0 {
			return nil
		}
		t, err := v.table()
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := t.Delete(r.rowid); err != nil {
				return err
			}
		}
		return nil
	})
}

// Rename moves oldname to newname; a directory moves with everything
// below it. An existing newname is replaced when both are files (or
// symbolic links), or both directories and newname's is empty; otherwise it
// is an error. newname's parent must exist, and a directory cannot move
// below itself.
func (f *FS) Rename(oldname, newname string) error {
	from, ok1 := f.full(oldname)
	to, ok2 := f.full(newname)
	if !ok1 || !ok2 || from == "" || to == "" {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrInvalid}
	}
	if from == to {
		return f.write("rename", oldname, func(v *view) error {
			_, found, err := v.lookup(from)
			if err == nil && !found {
				err = v.missing(from)
			}
			return err
		})
	}
	if len(to) > len(from) && to[:len(from)] == from && to[len(from)] == '/' {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fmt.Errorf("cannot move %q below itself: %w", oldname, fs.ErrInvalid)}
	}
	return f.write("rename", oldname, func(v *view) error {
		src, found, err := v.lookup(from)
		if err != nil {
			return err
		}
		if !found {
			return v.missing(from)
		}
		if err := v.checkParent(to); err != nil {
			return err
		}
		dst, exists, err := v.lookup(to)
		if err != nil {
			return err
		}
		t, err := v.table()
		if err != nil {
			return err
		}
		if exists {
			switch {
			case src.isDir() && !dst.isDir():
				return ErrNotDir
			case !src.isDir() && dst.isDir():
				return ErrIsDir
			case dst.isDir():
				if has, err := v.hasChildren(to); err != nil || has {
					if err == nil {
						err = ErrNotEmpty
					}
					return err
				}
			}
			if dst.rowid != 0 {
				if err := t.Delete(dst.rowid); err != nil {
					return err
				}
			}
		}
		rows := []entry{}
		if src.isDir() {
			if rows, err = v.under(from); err != nil {
				return err
			}
		}
		if src.rowid != 0 {
			rows = append(rows, src)
		}
		for i := range rows {
			r := &rows[i]
			if err := v.fillRow(r, r.rowid); err != nil {
				return err
			}
			name := to + r.name[len(from):]
			if r.name == from {
				name = to
			}
			if err := v.update(r, name, r.st, r.mtime); err != nil {
				return err
			}
		}
		return nil
	})
}

// Chmod sets the permission bits (and setuid, setgid, sticky) of name,
// following symbolic links.
func (f *FS) Chmod(name string, mode fs.FileMode) error {
	return f.change("chmod", name, func(e *entry) { e.st = e.st&sIFMT | stMode(mode)&0o7777 })
}

// Chtimes sets the modification time of name (whole seconds, as sqlar
// keeps them), following symbolic links; sqlar has no access time, so
// atime is ignored. A zero mtime leaves it unchanged.
func (f *FS) Chtimes(name string, atime, mtime time.Time) error {
	return f.change("chtimes", name, func(e *entry) {
		if !mtime.IsZero() {
			e.mtime = mtime.Unix()
		}
	})
}

// change applies fn to the row of name; a directory without a row gets one.
func (f *FS) change(op, name string, fn func(e *entry)) error {
	full, ok := f.full(name)
	if !ok {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return f.write(op, name, func(v *view) error {
		e, err := v.resolve(full)
		if err != nil {
			return err
		}
		if e.name == "" {
			return fmt.Errorf("the archive's root has no row to change: %w", fs.ErrInvalid)
		}
		fn(&e)
		if e.rowid == 0 {
			return v.put(e.name, e.st, e.mtime, 0, nil, nil)
		}
		return v.update(&e, e.name, e.st, e.mtime)
	})
}

// Symlink creates newname as a symbolic link to oldname, stored as sqlite3
// stores one (mode 0120777, sz -1, the target as TEXT). sqlite3 3.40's -x
// cannot extract such rows.
func (f *FS) Symlink(oldname, newname string) error {
	full, ok := f.full(newname)
	if !ok || full == "" || oldname == "" {
		return &fs.PathError{Op: "symlink", Path: newname, Err: fs.ErrInvalid}
	}
	return f.write("symlink", newname, func(v *view) error {
		if err := v.checkParent(full); err != nil {
			return err
		}
		if _, found, err := v.lookup(full); err != nil || found {
			if err == nil {
				err = fs.ErrExist
			}
			return err
		}
		if err := v.ensure(); err != nil {
			return err
		}
		return v.put(full, sIFLNK|0o777, now(), -1, oldname, nil)
	})
}

// CopyFS copies the tree of dir into the FS, in one transaction: each
// directory, file and (when dir implements fs.ReadLinkFS) symbolic link,
// with its mode and modification time, as `sqlite3 -Ac` stores them.
// Existing files are replaced and existing directories take the source's
// mode and time; a file where dir has a directory, or the reverse, is an
// error, and so is an entry of another type (a device, a pipe). Nothing is
// stored unless everything is.
func (f *FS) CopyFS(dir fs.FS) error {
	var stored int64
	return f.write("copyfs", ".", func(v *view) error {
		if err := v.ensure(); err != nil {
			return err
		}
		return fs.WalkDir(dir, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == "." {
				return nil
			}
			full, _ := f.full(p)
			fi, err := d.Info()
			if err != nil {
				return err
			}
			mtime := fi.ModTime().Unix()
			e, found, err := v.lookup(full)
			if err != nil {
				return err
			}
			switch mode := fi.Mode(); {
			case mode.IsDir():
				if found && !e.isDir() {
					return &fs.PathError{Op: "copyfs", Path: p, Err: ErrNotDir}
				}
				err = v.put(full, stMode(mode), mtime, 0, nil, &e)
			case mode&fs.ModeSymlink != 0 && isReadLinkFS(dir):
				if found && e.isDir() {
					return &fs.PathError{Op: "copyfs", Path: p, Err: ErrIsDir}
				}
				var target string
				if target, err = fs.ReadLink(dir, p); err == nil {
					err = v.put(full, sIFLNK|int64(mode.Perm()), mtime, -1, target, &e)
				}
			case mode.IsRegular() || mode&fs.ModeSymlink != 0:
				if found && e.isDir() {
					return &fs.PathError{Op: "copyfs", Path: p, Err: ErrIsDir}
				}
				if mode&fs.ModeSymlink != 0 {
					// A link dir cannot report as one: store what it points at.
					var ti fs.FileInfo
					if ti, err = fs.Stat(dir, p); err != nil {
						return err
					}
					if mode = ti.Mode(); mode.IsDir() {
						if found && !e.isDir() {
							return &fs.PathError{Op: "copyfs", Path: p, Err: ErrNotDir}
						}
						err = v.put(full, stMode(mode), ti.ModTime().Unix(), 0, nil, &e)
						break
					}
					if !mode.IsRegular() {
						return &fs.PathError{Op: "copyfs", Path: p, Err: fmt.Errorf("cannot store a file of type %v: %w", mode.Type(), fs.ErrInvalid)}
					}
					mtime = ti.ModTime().Unix()
				}
				var data []byte
				if data, err = fs.ReadFile(dir, p); err == nil {
					err = v.put(full, stMode(mode), mtime, int64(len(data)), f.encode(data), &e)
					stored += int64(len(data))
				}
			default:
				return &fs.PathError{Op: "copyfs", Path: p, Err: fmt.Errorf("cannot store a file of type %v: %w", mode.Type(), fs.ErrInvalid)}
			}
			if err != nil {
				return err
			}
			if f.opts.Progress != nil {
				f.opts.Progress(p, stored)
			}
			return nil
		})
	})
}

func isReadLinkFS(dir fs.FS) bool {
	_, ok := dir.(fs.ReadLinkFS)
	return ok
}
