package dbtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/pagodadb/pagoda"
)

// recorder is a testing.TB that records Errorf instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCheck: a sound file passes; a file with a damaged page fails both
// pagoda's check and SQLite's.
func TestCheck(t *testing.T) {
	path := Path(t)
	db, err := pagoda.Open(path, nil) // not Open: its cleanup would check the file damaged below
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *pagoda.Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
		if err != nil {
			return err
		}
		for i := range 200 {
			if _, err := tb.Insert(nil, fmt.Sprintf("row %d", i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Check(r, path)
	if len(r.errs) != 0 {
		t.Fatalf("a sound file: %q", r.errs)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[4096+3] ^= 0xff // page 2's cell count
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r = &recorder{TB: t}
	Check(r, path)
	if len(r.errs) != 2 {
		t.Fatalf("a damaged file: %q, want pagoda's and SQLite's problems", r.errs)
	}
}
