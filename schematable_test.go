package pagoda

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestSchemaTable: sqlite_schema (and sqlite_master) reads as a table, row
// for row as SQLite reads it, and refuses writes.
func TestSchemaTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	sqltest.Exec(t, path,
		"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE)",
		"CREATE INDEX tb ON t(b DESC)",
		"CREATE VIEW v AS SELECT a FROM t",
		"CREATE TABLE w(k, v, PRIMARY KEY(k)) WITHOUT ROWID")
	lite := sqltest.Open(t, path)
	want := sqltest.Rows(t, lite, "SELECT rowid, type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY rowid")
	lite.Close()
	db, tx, tb := readTable(t, path, nil, "sqlite_master")
	var got []string
	for rowid, rec := range tb.All() {
		row := fmt.Sprint(rowid)
		for i := range 5 {
			if v := rec.Column(i); v.IsNull() {
				row += "|NULL"
			} else if v.Type() == TypeInteger {
				row += fmt.Sprintf("|%d", v.Int())
			} else {
				row += "|" + v.Text()
			}
		}
		got = append(got, row)
	}
	if err := tx.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sqlite_master reads\n%q\nSQLite\n%q", got, want)
	}
	if rec, err := tb.Get(2); err != nil || rec.Column(1).Text() != "sqlite_autoindex_t_1" {
		t.Errorf("Get(2): %v, %v", rec.Column(1), err)
	}
	tx.Rollback()
	err := db.Update(func(tx *Tx) error {
		s, err := tx.Table("SQLITE_SCHEMA")
		if err != nil {
			return err
		}
		_, err = s.Insert("table", "x", "x", 9, "CREATE TABLE x(a)")
		return err
	})
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("Insert into sqlite_schema: %v, want ErrUnsupported", err)
	}
	db.Close()
	if ic := sqlOne(t, path, "PRAGMA integrity_check"); ic != "ok" {
		t.Errorf("integrity_check: %s", ic)
	}
}
