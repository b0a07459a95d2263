package fsys_test

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
)

// newArchive opens a new database in a temporary directory.
func newArchive() (*pagoda.DB, func()) {
	dir, err := os.MkdirTemp("", "fsys-example")
	if err != nil {
		log.Fatal(err)
	}
	db, err := pagoda.Open(filepath.Join(dir, "site.sqlar"), nil)
	if err != nil {
		log.Fatal(err)
	}
	return db, func() { db.Close(); os.RemoveAll(dir) }
}

func ExampleNew() {
	db, cleanup := newArchive()
	defer cleanup()

	// Import a tree in one transaction: sqlite3 -Atv lists the result.
	f := fsys.New(db, &fsys.Options{Compress: true})
	src := fstest.MapFS{
		"index.html":      {Data: []byte("<h1>hello</h1>"), Mode: 0o644},
		"css/site.css":    {Data: []byte("h1 { color: teal }"), Mode: 0o644},
		"img/logo.svg":    {Data: []byte("<svg/>"), Mode: 0o644},
		"img/empty/.keep": {Mode: 0o644},
	}
	if err := f.CopyFS(src); err != nil {
		log.Fatal(err)
	}

	// f is an fs.FS: walk it, or serve it with http.FileServer(http.FS(f)).
	err := fs.WalkDir(f, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fmt.Println(name, d.IsDir())
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// . true
	// css true
	// css/site.css false
	// img true
	// img/empty true
	// img/empty/.keep false
	// img/logo.svg false
	// index.html false
}

func ExampleFS_WriteFile() {
	db, cleanup := newArchive()
	defer cleanup()

	f := fsys.New(db, nil)
	if err := f.MkdirAll("notes/2026", 0o755); err != nil {
		log.Fatal(err)
	}
	if err := f.WriteFile("notes/2026/todo.txt", []byte("ship fsys\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	data, err := f.ReadFile("notes/2026/todo.txt")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(data))

	// Removing a directory that has entries needs RemoveAll.
	err = f.Remove("notes")
	fmt.Println(err, errors.Is(err, fs.ErrExist))
	// Output:
	// ship fsys
	// remove notes: directory not empty: file already exists true
}

func ExampleFS_In() {
	db, cleanup := newArchive()
	defer cleanup()

	f := fsys.New(db, nil)
	// Several changes, and a table of the caller's, commit together.
	err := db.Update(func(tx *pagoda.Tx) error {
		in := f.In(tx)
		if err := in.WriteFile("a.txt", []byte("a"), 0o644); err != nil {
			return err
		}
		if err := in.Rename("a.txt", "b.txt"); err != nil {
			return err
		}
		b, err := tx.CreateBucket("meta")
		if err != nil {
			return err
		}
		return b.Put([]byte("version"), []byte("1"))
	})
	if err != nil {
		log.Fatal(err)
	}
	names, _ := fs.Glob(f, "*.txt")
	fmt.Println(names)
	// Output: [b.txt]
}

// A file whose data does not inflate to its stored size, as a damaged or
// hostile archive may hold: reading it fails with pagoda.ErrCorrupt, and
// nothing is allocated by the size it claims.
func ExampleFS_Open_damaged() {
	db, cleanup := newArchive()
	defer cleanup()
	f := fsys.New(db, nil)
	if err := f.WriteFile("ok.txt", []byte("fine"), 0o644); err != nil {
		log.Fatal(err)
	}
	// A row written by another tool: 21 bytes of zlib claiming 1 GB.
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("not a gigabyte"))
	zw.Close()
	err := db.Update(func(tx *pagoda.Tx) error {
		tab, err := tx.Table(fsys.TableName)
		if err == nil {
			_, err = tab.Insert("lie.txt", 0o100644, 0, 1032*z.Len(), z.Bytes())
		}
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	fl, err := f.Open("lie.txt")
	if err != nil {
		log.Fatal(err)
	}
	defer fl.Close()
	data, err := io.ReadAll(fl)
	fmt.Println(len(data), errors.Is(err, pagoda.ErrCorrupt))
	// Output: 0 true
}
