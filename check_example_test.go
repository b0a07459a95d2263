package pagoda_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/pagodadb/pagoda"
)

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
