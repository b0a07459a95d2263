package pagoda_test

import (
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/pagodadb/pagoda"
	_ "modernc.org/sqlite"
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
