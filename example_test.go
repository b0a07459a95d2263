package pagoda_test

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pagodadb/pagoda"
	_ "github.com/pagodadb/pagoda/internal/sqltest" // the "sqlite" driver: SQLite itself, the oracle
)

// exampleDB makes a small database with SQLite itself, as an application
// (or the sqlite3 shell) would have.
func exampleDB() (path string, cleanup func()) {
	dir, err := os.MkdirTemp("", "pagoda-example")
	if err != nil {
		log.Fatal(err)
	}
	path = filepath.Join(dir, "app.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		`CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT, score REAL)`,
		`CREATE INDEX users_name ON users(name COLLATE NOCASE)`,
		`INSERT INTO users VALUES (1, 'alice', 31), (2, 'Bob', 27.5), (3, 'carol', NULL), (4, 'bob', 12)`,
		`CREATE TABLE "config"(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`,
		`INSERT INTO config VALUES (x'636f6c6f72', x'626c7565'), (x'73697a65', x'4c')`,
	} {
		if _, err := db.Exec(s); err != nil {
			log.Fatal(err)
		}
	}
	return path, func() { os.RemoveAll(dir) }
}

func ExampleOpen() {
	path, cleanup := exampleDB()
	defer cleanup()

	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *pagoda.Tx) error {
		fmt.Println(tx.TableNames())
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: [users config]
}

func ExampleTable_Get() {
	path, cleanup := exampleDB()
	defer cleanup()
	db, _ := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	defer db.Close()

	db.View(func(tx *pagoda.Tx) error {
		users, err := tx.Table("users")
		if err != nil {
			return err
		}
		rec, err := users.Get(1)
		if err != nil {
			return err
		}
		// Column 0 is the INTEGER PRIMARY KEY: the rowid. The REAL column
		// reads back as a float though SQLite stored 31 as an integer.
		fmt.Println(rec.Column(0).Int(), rec.Column(1).Text(), rec.Column(2).Type(), rec.Column(2).Float())

		_, err = users.Get(99)
		fmt.Println(errors.Is(err, pagoda.ErrNotFound))
		return nil
	})
	// Output:
	// 1 alice real 31
	// true
}

func ExampleTable_Range() {
	path, cleanup := exampleDB()
	defer cleanup()
	db, _ := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	defer db.Close()

	err := db.View(func(tx *pagoda.Tx) error {
		users, err := tx.Table("users")
		if err != nil {
			return err
		}
		for rowid, rec := range users.Range(2, 4) {
			fmt.Println(rowid, rec.Column(1).Text(), rec.Column(2).IsNull())
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// 2 Bob false
	// 3 carol true
}

func ExampleBucket_Get() {
	path, cleanup := exampleDB()
	defer cleanup()
	db, _ := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	defer db.Close()

	db.View(func(tx *pagoda.Tx) error {
		b, err := tx.Bucket("config")
		if err != nil {
			return err
		}
		v, err := b.Get([]byte("color"))
		fmt.Printf("%s %v\n", v, err)
		for k, v := range b.All() {
			fmt.Printf("%s=%s\n", k, v)
		}
		return nil
	})
	// Output:
	// blue <nil>
	// color=blue
	// size=L
}

func ExampleIndex_Prefix() {
	path, cleanup := exampleDB()
	defer cleanup()
	db, _ := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	defer db.Close()

	db.View(func(tx *pagoda.Tx) error {
		ix, err := tx.Index("users_name")
		if err != nil {
			return err
		}
		// The index compares names with NOCASE: "BOB" finds Bob and bob.
		for rowid, key := range ix.Prefix("BOB") {
			fmt.Println(rowid, key.Column(0).Text())
		}
		return nil
	})
	// Output:
	// 2 Bob
	// 4 bob
}

func ExampleIndexCursor_Raw() {
	path, cleanup := exampleDB()
	defer cleanup()
	db, _ := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	defer db.Close()

	db.View(func(tx *pagoda.Tx) error {
		ix, err := tx.Index("users_name")
		if err != nil {
			return err
		}
		// The first entry's record, in SQLite's record format: a header
		// (its length; TEXT of 5 bytes; the integer 1, which takes no
		// bytes), then "alice". The integer is the rowid.
		c := ix.Cursor()
		if c.First() {
			fmt.Printf("% x\n", c.Raw())
		}
		return c.Err()
	})
	// Output:
	// 03 17 09 61 6c 69 63 65
}

func ExampleTableCursor() {
	path, cleanup := exampleDB()
	defer cleanup()
	db, _ := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	defer db.Close()

	tx, err := db.Begin(false)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	users, _ := tx.Table("users")
	c := users.Cursor()
	for ok := c.Last(); ok; ok = c.Prev() {
		fmt.Println(c.Rowid(), c.Record().Column(1).Text())
	}
	if err := c.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 4 bob
	// 3 carol
	// 2 Bob
	// 1 alice
}

func ExampleDB_ReadOnly() {
	path, cleanup := exampleDB()
	defer cleanup()

	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	fmt.Println(db.ReadOnly())
	err = db.Update(func(tx *pagoda.Tx) error { return nil })
	fmt.Println(errors.Is(err, pagoda.ErrReadOnly))
	// Output:
	// true
	// true
}

func ExampleDB_Check() {
	path, cleanup := exampleDB() // made by SQLite
	defer cleanup()

	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(db.Check())
	db.Close()

	// Damage the file: the header (bytes 36..39) now counts a freelist
	// page that the list does not have.
	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	binary.BigEndian.PutUint32(data[36:], 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		log.Fatal(err)
	}

	db, err = pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	err = db.Check()
	var ce *pagoda.CheckError
	if errors.As(err, &ce) {
		for _, p := range ce.Problems {
			fmt.Println(p)
		}
	}
	fmt.Println(errors.Is(err, pagoda.ErrCorrupt))
	// Output:
	// <nil>
	// page 1: the freelist has 0 pages, but the header (offset 36) says 1
	// true
}

// A VIRTUAL generated column is computed when Record.Column reads it, as
// SQLite computes it: here c is b||'x', and an affinity applies (e is
// REAL, so a/2 reads as 0.5 and 1.0).
func ExampleRecord_Column_generated() {
	dir, err := os.MkdirTemp("", "pagoda-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "gen.db")
	sdb, err := sql.Open("sqlite", path)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c AS (b || 'x') VIRTUAL, d AS (a * 2) STORED, e REAL AS (a / 2) VIRTUAL)`,
		`INSERT INTO t(a, b) VALUES (1, 'hi'), (2, NULL)`,
	} {
		if _, err := sdb.Exec(s); err != nil {
			log.Fatal(err)
		}
	}
	sdb.Close()

	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *pagoda.Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for _, id := range []int64{1, 2} {
			r, err := tb.Get(id)
			if err != nil {
				return err
			}
			fmt.Println(r.Column(2).Any(), r.Column(3).Any(), r.Column(4).Any())
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// hix 2 0
	// <nil> 4 1
}

// newDB opens a new, empty database in a temporary directory.
func newDB() (*pagoda.DB, string, func()) {
	dir, err := os.MkdirTemp("", "pagoda-example")
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(dir, "new.db")
	db, err := pagoda.Open(path, nil) // creates the file
	if err != nil {
		log.Fatal(err)
	}
	return db, path, func() { db.Close(); os.RemoveAll(dir) }
}

func ExampleDB_Update() {
	db, _, cleanup := newDB()
	defer cleanup()

	// Everything in fn commits together, with one sync, or not at all.
	err := db.Update(func(tx *pagoda.Tx) error {
		b, err := tx.CreateBucketIfNotExists("settings")
		if err != nil {
			return err
		}
		if err := b.Put([]byte("theme"), []byte("dark")); err != nil {
			return err
		}
		return b.Put([]byte("lang"), []byte("en"))
	})
	if err != nil {
		log.Fatal(err)
	}
	err = db.View(func(tx *pagoda.Tx) error {
		b, err := tx.Bucket("settings")
		if err != nil {
			return err
		}
		for k, v := range b.All() {
			fmt.Printf("%s=%s\n", k, v)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// lang=en
	// theme=dark
}

func ExampleTx_CreateTable() {
	db, path, cleanup := newDB()
	defer cleanup()

	err := db.Update(func(tx *pagoda.Tx) error {
		users, err := tx.CreateTable(`CREATE TABLE users(id INTEGER PRIMARY KEY, email TEXT UNIQUE, age INT)`)
		if err != nil {
			return err
		}
		if _, err := tx.CreateIndex(`CREATE INDEX users_age ON users(age)`); err != nil {
			return err
		}
		for _, u := range []struct {
			email string
			age   int
		}{{"ada@example.com", 36}, {"alan@example.com", 41}} {
			id, err := users.Insert(nil, u.email, u.age) // nil: SQLite picks the rowid
			if err != nil {
				return err
			}
			fmt.Println("inserted", id)
		}
		_, err = users.Insert(nil, "ada@example.com", 99)
		fmt.Println("duplicate email:", errors.Is(err, pagoda.ErrExists))
		return nil // the transaction is still good: commit it
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(filepath.Base(path), "is a SQLite database: sqlite3", filepath.Base(path), `"SELECT * FROM users"`)
	// Output:
	// inserted 1
	// inserted 2
	// duplicate email: true
	// new.db is a SQLite database: sqlite3 new.db "SELECT * FROM users"
}

func ExampleTable_Put() {
	db, _, cleanup := newDB()
	defer cleanup()

	err := db.Update(func(tx *pagoda.Tx) error {
		t, err := tx.CreateTable(`CREATE TABLE counters(name TEXT, n INT)`)
		if err != nil {
			return err
		}
		if err := t.Put(7, "visits", 1); err != nil { // insert rowid 7
			return err
		}
		if err := t.Put(7, "visits", 2); err != nil { // replace it
			return err
		}
		r, err := t.Get(7)
		if err != nil {
			return err
		}
		fmt.Println(r.Column(0).Text(), r.Column(1).Int())
		return t.Delete(7)
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: visits 2
}

func ExampleCursor_Delete() {
	db, _, cleanup := newDB()
	defer cleanup()

	err := db.Update(func(tx *pagoda.Tx) error {
		b, err := tx.CreateBucket("jobs")
		if err != nil {
			return err
		}
		for _, k := range []string{"a-done", "b-todo", "c-done", "d-todo"} {
			b.Put([]byte(k), nil)
		}
		// Delete the finished jobs while walking the bucket.
		c := b.Cursor()
		for ok := c.First(); ok; ok = c.Next() {
			if string(c.Key()[2:]) == "done" {
				if err := c.Delete(); err != nil {
					return err
				}
			}
		}
		for k := range b.All() {
			fmt.Println(string(k))
		}
		return c.Err()
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// b-todo
	// d-todo
}

// Many goroutines writing small transactions share commits with Batch:
// the calls that arrive while one batch commits form the next, so a burst
// of concurrent writers costs a sync per batch, not one per call.
func ExampleDB_Batch() {
	dir, _ := os.MkdirTemp("", "pagoda-example")
	defer os.RemoveAll(dir)
	db, err := pagoda.Open(filepath.Join(dir, "batch.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *pagoda.Tx) error {
		_, err := tx.CreateBucket("hits")
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := db.Batch(func(tx *pagoda.Tx) error {
				b, err := tx.Bucket("hits")
				if err != nil {
					return err
				}
				return b.Put([]byte{byte('a' + i)}, []byte("1"))
			})
			if err != nil {
				log.Fatal(err)
			}
		}()
	}
	wg.Wait()
	_ = db.View(func(tx *pagoda.Tx) error {
		b, _ := tx.Bucket("hits")
		n := 0
		for range b.All() {
			n++
		}
		fmt.Println(n, "keys")
		return nil
	})
	// Output: 8 keys
}

// Backup copies a live database while writers go on; Compact writes a
// dense copy, without the free pages that deletes leave.
func ExampleDB_Backup() {
	dir, _ := os.MkdirTemp("", "pagoda-example")
	defer os.RemoveAll(dir)
	db, err := pagoda.Open(filepath.Join(dir, "live.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *pagoda.Tx) error {
		t, err := tx.CreateTable("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
		if err != nil {
			return err
		}
		for i := range 1000 {
			if _, err := t.Insert(nil, fmt.Sprintf("note %d %s", i, strings.Repeat("x", 200))); err != nil {
				return err
			}
		}
		for i := range 900 {
			if err := t.Delete(int64(i + 1)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	backup, compact := filepath.Join(dir, "backup.db"), filepath.Join(dir, "compact.db")
	if err := db.Backup(backup); err != nil {
		log.Fatal(err)
	}
	if err := db.Compact(compact); err != nil {
		log.Fatal(err)
	}
	b, _ := os.Stat(backup)
	c, _ := os.Stat(compact)
	fmt.Println("compact copy smaller:", c.Size() < b.Size()/4)
	// Output: compact copy smaller: true
}

func ExampleTable_OpenBlob() {
	db, _, cleanup := newDB()
	defer cleanup()

	photo := []byte(strings.Repeat("pixels", 10000)) // 60 KB: spills over many pages
	err := db.Update(func(tx *pagoda.Tx) error {
		t, err := tx.CreateTable("CREATE TABLE photos(id INTEGER PRIMARY KEY, jpeg BLOB)")
		if err != nil {
			return err
		}
		_, err = t.Insert(nil, photo)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}

	// Read a piece of the value from the database pages, without
	// assembling the rest of it.
	err = db.View(func(tx *pagoda.Tx) error {
		t, err := tx.Table("photos")
		if err != nil {
			return err
		}
		b, err := t.OpenBlob(1, 1)
		if err != nil {
			return err
		}
		piece := make([]byte, 12)
		if _, err := b.ReadAt(piece, 30000); err != nil {
			return err
		}
		fmt.Println(b.Len(), string(piece))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: 60000 pixelspixels
}

// A reader in many short transactions renews one Tx instead of beginning a
// new one each time: while nothing is committed it keeps its snapshot, so
// its tables and cursors stay valid and in place.
func ExampleTx_Renew() {
	db, _, cleanup := newDB()
	defer cleanup()
	err := db.Update(func(tx *pagoda.Tx) error {
		b, err := tx.CreateBucket("hits")
		if err != nil {
			return err
		}
		return b.Put([]byte("home"), []byte("1"))
	})
	if err != nil {
		log.Fatal(err)
	}

	tx, err := db.Begin(false)
	if err != nil {
		log.Fatal(err)
	}
	b, _ := tx.Bucket("hits")
	tx.Rollback()
	read := func() {
		same, err := tx.Renew()
		if err != nil {
			log.Fatal(err)
		}
		if !same { // something was committed: take the bucket again
			if b, err = tx.Bucket("hits"); err != nil {
				log.Fatal(err)
			}
		}
		v, _ := b.Get([]byte("home"))
		fmt.Printf("same snapshot %v: home %s\n", same, v)
		tx.Rollback() // end each read; Renew takes the transaction up again
	}
	read()
	read()
	err = db.Update(func(w *pagoda.Tx) error {
		wb, err := w.Bucket("hits")
		if err != nil {
			return err
		}
		return wb.Put([]byte("home"), []byte("2"))
	})
	if err != nil {
		log.Fatal(err)
	}
	read()
	// Output:
	// same snapshot true: home 1
	// same snapshot true: home 1
	// same snapshot false: home 2
}

func ExampleBucket_NextSequence() {
	dir, _ := os.MkdirTemp("", "pagoda-example")
	defer os.RemoveAll(dir)
	db, _ := pagoda.Open(filepath.Join(dir, "app.db"), nil)
	defer db.Close()

	db.Update(func(tx *pagoda.Tx) error {
		users, err := tx.CreateBucketIfNotExists("users")
		if err != nil {
			return err
		}
		for _, name := range []string{"ada", "grace"} {
			id, err := users.NextSequence() // 1, 2: kept in sqlite_sequence
			if err != nil {
				return err
			}
			if err := users.Put(binary.BigEndian.AppendUint64(nil, id), []byte(name)); err != nil {
				return err
			}
		}
		n, _ := users.Count()
		seq, _ := users.Sequence()
		fmt.Println(n, "users, sequence", seq)
		tx.OnCommit(func() { fmt.Println("committed") })
		return nil
	})
	// Output:
	// 2 users, sequence 2
	// committed
}
