package pagoda

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// reservedFile writes a database with SQLite, then turns fields of two
// records into the reserved serial types 10 and 11, which SQLite never
// writes and reads as NULL: in row 1 of rowid table t, a (10) and c (11),
// and in the row of WITHOUT ROWID table w, v (10).
func reservedFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reserved.db")
	sqltest.Exec(t, path,
		"CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, c REAL)",
		"CREATE INDEX ta ON t(a, c)",
		"INSERT INTO t VALUES (1, NULL, 'marker-one', NULL)",
		"INSERT INTO t VALUES (2, 7, 'two', 2.5)",
		"CREATE TABLE w(k PRIMARY KEY, v) WITHOUT ROWID",
		"INSERT INTO w VALUES ('marker-w', NULL)",
	)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	patch := func(rec, with []byte) {
		i := bytes.Index(data, rec)
		if i < 0 || bytes.Index(data[i+1:], rec) >= 0 {
			t.Fatalf("record % x is not in the file once", rec)
		}
		copy(data[i:], with)
	}
	// Row 1: header 5 bytes (id, a, b, c: NULL, NULL, TEXT of 10, NULL).
	patch(append([]byte{5, 0, 0, 33, 0}, "marker-one"...), []byte{5, 0, 10, 33, 11})
	// w's row: header 3 bytes (k: TEXT of 8, v: NULL).
	patch(append([]byte{3, 29, 0}, "marker-w"...), []byte{3, 29, 10})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// SQLite reads them as NULL and passes the file.
	if ic := sqlOne(t, path, "PRAGMA integrity_check"); ic != "ok" {
		t.Fatalf("integrity_check: %s", ic)
	}
	if got := sqlOne(t, path, "SELECT typeof(a) || ',' || b || ',' || typeof(c) FROM t WHERE id = 1"); got != "null,marker-one,null" {
		t.Fatalf("SQLite reads row 1 as %s", got)
	}
	return path
}

// TestReservedSerialTypes: the rows of a rowid table read the reserved
// serial types 10 and 11 as NULL, as SQLite does, through Get, cursors and
// iterators, and a change to such a row leaves a file SQLite passes.
// Elsewhere (here a WITHOUT ROWID row) pagoda reports them as corruption
// (format.CheckRow says why).
func TestReservedSerialTypes(t *testing.T) {
	path := reservedFile(t)
	db, tx, tb := readTable(t, path, nil, "t")
	row1 := func(t *testing.T, rec Record) {
		t.Helper()
		if rec.Rowid() != 1 || rec.Column(0).Int() != 1 || rec.Column(1).Type() != TypeNull ||
			string(rec.Column(2).Text()) != "marker-one" || rec.Column(3).Type() != TypeNull {
			t.Errorf("row 1 reads %v, %v, %q, %v", rec.Column(0), rec.Column(1), rec.Column(2).Text(), rec.Column(3))
		}
	}
	rec, err := tb.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	row1(t, rec)
	c := tb.Cursor()
	if !c.First() {
		t.Fatalf("cursor: %v", c.Err())
	}
	row1(t, c.Record())
	n := 0
	for rowid, rec := range tb.All() {
		if rowid == 1 {
			row1(t, rec)
		}
		n++
	}
	if n != 2 {
		t.Errorf("All gave %d rows", n)
	}
	if err := tx.Err(); err != nil {
		t.Errorf("Tx.Err after reading: %v", err)
	}
	w, err := tx.Table("w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.GetKey("marker-w"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("w's row with serial type 10: %v, want ErrCorrupt", err)
	}
	tx.Rollback()
	// Put replaces the row: its index entry (NULL, NULL, 1) is found and
	// replaced, and the row is written again with NULLs of type 0.
	err = db.Update(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		return tb.Put(1, nil, 5, "marker-one", nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if ic := sqlOne(t, path, "PRAGMA integrity_check"); ic != "ok" {
		t.Fatalf("integrity_check after the update: %s", ic)
	}
	if got := sqlOne(t, path, "SELECT a || ',' || typeof(c) FROM t WHERE id = 1"); got != "5,null" {
		t.Errorf("SQLite reads the updated row as %s", got)
	}
}
