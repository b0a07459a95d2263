package fsys

import (
	"bytes"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/format"
)

// Names in the archive.
//
// sqlite3 stores the names it is given: `sqlite3 x.db -Ac .` stores rows
// ".", "./index.html", "./sub", "./sub/a.txt", and `-Ac ./dir` stores
// "./dir", "./dir/...". io/fs names never start with "./" (fs.ValidPath),
// so a view decides the archive's form once per snapshot and translates
// at the index:
//
//  1. The archive is in the "./" form when it has a row named ".", which
//     only -Ac . (or -Ac with "." among its arguments) stores, or when
//     all its names start with "./" (-Ac ./dir). Otherwise it is in the
//     plain form.
//  2. In the "./" form, the FS's name N is the archive's "./"+N, and the
//     root is "." (its row, when there is one, is not an entry of any
//     listing: the root is a directory whatever it says). In the plain
//     form N is N and the root has no row.
//  3. A mixed archive, with "./" names and others, is read in the form
//     rule 1 gives: the "./" form when it has the "." row (sqlite3 -Au
//     of a plain name into an archive made with -Ac . gives that), else
//     the plain form (a stray "./x" row in a plain archive). The names of
//     the other form are not seen, as a name that is not a valid path (one
//     with a "..", say) is not seen in either form.
//  4. Writes store names in the archive's form, so that `sqlite3 -At`
//     and -x keep seeing one tree: a file added to an archive made by
//     -Ac . is "./"+N. A new archive, or one in the plain form, gets
//     plain names.
//
// The form costs two seeks when a view opens a new snapshot, four on an
// archive with "./" names and no "." row.

// dotPrefix is the prefix of the "./" form's names.
const dotPrefix = "./"

// detectForm sets v.pfx by rule 1.
func (v *view) detectForm() error {
	v.pfx = ""
	c := &v.c
	c.Reset(v.ix)
	v.warm = false // the cursor is placed here, not where cursor expects
	v.key = append(v.key[:0], '.')
	if c.SeekText(v.key) {
		if n, ok := keyName(c); ok && bytes.Equal(n, v.key) {
			v.pfx = dotPrefix // the "." row
			return nil
		}
	}
	// Names sort as bytes, so the "./" names are one range: the form is
	// "./" when that range is not empty and holds the first and the last
	// text names.
	v.key = append(v.key[:0], dotPrefix...)
	if !c.SeekText(v.key) {
		return c.Err()
	}
	if n, ok := keyName(c); !ok || !bytes.HasPrefix(n, v.key) {
		return c.Err() // no "./" name
	}
	if c.SeekText(v.key[:0]) { // the first text name
		if n, ok := keyName(c); ok && !bytes.HasPrefix(n, v.key) {
			return c.Err() // a plain name before them
		}
	}
	v.key[1] = '/' + 1 // ".0": the first name after the "./" range
	if c.SeekText(v.key) {
		if _, ok := keyName(c); ok {
			return c.Err() // a plain name after them
		}
	}
	if err := c.Err(); err != nil {
		return err
	}
	v.pfx = dotPrefix
	return nil
}

// ErrNoArchive: the database has no SQLite Archive (no sqlar table). It
// wraps pagoda.ErrNotFound.
var ErrNoArchive error = &format.Wrapped{Msg: "no SQLite Archive: " + pagoda.ErrNotFound.Error(), Err: pagoda.ErrNotFound}

// Open returns an FS over db's SQLite Archive, as New does, but fails with
// an error wrapping ErrNoArchive when db has no sqlar table: for readers,
// to which a database without one is a mistake (a wrong file), where New's
// FS reads it as an empty directory and creates the table at the first
// write.
func Open(db *pagoda.DB, opts *Options) (*FS, error) {
	f := New(db, opts)
	if err := f.Exists(); err != nil {
		return nil, err
	}
	return f, nil
}

// Exists returns nil when the database has a SQLite Archive, an error
// wrapping ErrNoArchive when it has no sqlar table, or the error met
// finding out (a table named sqlar without an index on its names, say,
// which is pagoda.ErrUnsupported).
func (f *FS) Exists() error {
	return f.read(func(v *view) error {
		if !v.present {
			return ErrNoArchive
		}
		return nil
	})
}
