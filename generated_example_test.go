package pagoda_test

import (
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/pagodadb/pagoda"
)

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
