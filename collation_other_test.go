package pagoda

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestOtherCollation: a file whose schema names collations of its
// application (Android's LOCALIZED and UNICODE) reads as sqlite3 reads it:
// rows by rowid and in order, index entries in order; what needs the
// collation's order (seeking a key, writing, a CHECK on the column) is
// refused with ErrUnsupported naming it, as sqlite3 says "no such collation
// sequence"; Check checks all the rest.
func TestOtherCollation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "android.db")
	// sqlite3 refuses to create them without the application: the file is
	// made with NOCASE and RTRIM, renamed in the schema.
	sqltest.Exec(t, path,
		"CREATE TABLE contacts(id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, phone TEXT COLLATE RTRIM)",
		"INSERT INTO contacts VALUES (1, 'Zoe', '555'), (2, 'adam', '556'), (3, 'Émile', NULL)",
		"CREATE INDEX contacts_name ON contacts(name)",
		"CREATE TABLE tags(tag TEXT PRIMARY KEY COLLATE NOCASE, n INT) WITHOUT ROWID",
		"INSERT INTO tags VALUES ('b', 2), ('A', 1), ('c', 3)",
		"CREATE TABLE plain(a INTEGER PRIMARY KEY, b)",
		"INSERT INTO plain VALUES (1, 'x')",
		"PRAGMA writable_schema = ON",
		"UPDATE sqlite_schema SET sql = replace(replace(sql, 'NOCASE', 'LOCALIZED'), 'RTRIM', 'UNICODE') WHERE name IN ('contacts', 'tags')",
	)
	if got := sqlOne(t, path, "SELECT group_concat(name, ',') FROM contacts NOT INDEXED"); got != "Zoe,adam,Émile" {
		t.Fatalf("sqlite3 reads %q", got)
	}
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	unsupported := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "no such collation sequence: LOCALIZED") {
			t.Errorf("%s: %v, want ErrUnsupported naming LOCALIZED", what, err)
		}
	}
	err = db.View(func(tx *Tx) error {
		contacts, err := tx.Table("contacts")
		if err != nil {
			return err
		}
		var names []string
		for _, rec := range contacts.All() {
			names = append(names, rec.Column(1).Text())
		}
		if got := strings.Join(names, ","); got != "Zoe,adam,Émile" {
			t.Errorf("contacts: %q", got)
		}
		if rec, err := contacts.Get(3); err != nil || rec.Column(1).Text() != "Émile" || rec.Column(2).Type() != TypeNull {
			t.Errorf("Get(3): %v, %v", rec, err)
		}
		// The index's entries, in the order the application's collation
		// gave them (here NOCASE's): read as they are.
		ix, err := tx.Index("contacts_name")
		if err != nil {
			return err
		}
		var keys []string
		c := ix.Cursor()
		for ok := c.First(); ok; ok = c.Next() {
			keys = append(keys, c.Key().Column(0).Text())
		}
		if got := strings.Join(keys, ","); got != "adam,Zoe,Émile" || c.Err() != nil {
			t.Errorf("index entries: %q, %v", got, c.Err())
		}
		if c.Seek("zoe") {
			t.Errorf("Seek found a key by an unknown collation")
		}
		unsupported("index Seek", c.Err())

		tags, err := tx.Table("tags")
		if err != nil {
			return err
		}
		var tagList []string
		for _, rec := range tags.All() {
			tagList = append(tagList, rec.Column(0).Text())
		}
		if got := strings.Join(tagList, ","); got != "A,b,c" {
			t.Errorf("tags: %q", got)
		}
		_, err = tags.GetKey("b")
		unsupported("GetKey", err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *Tx) error {
		contacts, err := tx.Table("contacts")
		if err != nil {
			return err
		}
		_, err = contacts.Insert(nil, "x", "1")
		unsupported("Insert", err)
		tags, err := tx.Table("tags")
		if err != nil {
			return err
		}
		_, err = tags.Insert("d", 4)
		unsupported("Insert WITHOUT ROWID", err)
		_, err = tx.CreateTable("CREATE TABLE t2(a TEXT COLLATE LOCALIZED)")
		unsupported("CreateTable", err)
		plain, err := tx.Table("plain")
		if err != nil {
			return err
		}
		_, err = plain.Insert(nil, "y") // other tables are written as usual
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Everything but the order of the keys under LOCALIZED is checked.
	if err := db.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
}
