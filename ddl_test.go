package pagoda

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestDDL covers creating and dropping buckets, tables and indexes, the
// schema cookie and the freelist they leave.
func TestDDL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.db")
	db := openChecked(t, path, nil)
	mustUpdate(t, db, func(tx *Tx) error {
		if _, err := tx.CreateTable("create table if not exists  Items ( id integer primary key, sku text unique, price real ) ;"); err != nil {
			return err
		}
		if _, err := tx.CreateTable("CREATE TABLE IF NOT EXISTS items(x)"); err != nil {
			return fmt.Errorf("IF NOT EXISTS on an existing table: %v", err)
		}
		if _, err := tx.CreateTable("CREATE TABLE items(x)"); !errors.Is(err, ErrExists) {
			return fmt.Errorf("existing table: %v", err)
		}
		if _, err := tx.CreateTable("CREATE TABLE sqlite_x(a)"); !errors.Is(err, ErrUnsupported) {
			return fmt.Errorf("reserved name: %v", err)
		}
		if _, err := tx.CreateTable("CREATE TABLE v USING fts5(a)"); err == nil {
			return errors.New("bad SQL accepted")
		}
		tb, _ := tx.Table("items")
		for i := range 500 {
			if _, err := tb.Insert(nil, fmt.Sprintf("sku%d", i), float64(i)/2); err != nil {
				return err
			}
		}
		if _, err := tx.CreateIndex("CREATE INDEX items_price ON items(price DESC)"); err != nil {
			return err
		}
		if _, err := tx.CreateIndex("CREATE UNIQUE INDEX bad ON items(price > 3)"); !errors.Is(err, ErrUnsupported) {
			return fmt.Errorf("expression index: %v", err)
		}
		if _, err := tx.CreateIndex("CREATE UNIQUE INDEX dup ON items(id, sku)"); err != nil {
			return err
		}
		for _, n := range []string{"a", "b", "c"} {
			if _, err := tx.CreateBucket(n); err != nil {
				return err
			}
		}
		b, _ := tx.Bucket("b")
		for i := range 1000 {
			b.Put([]byte(fmt.Sprint(i)), make([]byte, 200))
		}
		return nil
	})
	if got := sqlOne(t, snapshotFiles(t, path), "SELECT sql FROM sqlite_schema WHERE name = 'Items'"); got != "CREATE TABLE Items ( id integer primary key, sku text unique, price real )" {
		t.Errorf("stored SQL %q", got)
	}
	if got := sqlOne(t, snapshotFiles(t, path), "SELECT group_concat(name) FROM sqlite_schema"); got != "Items,sqlite_autoindex_Items_1,items_price,dup,a,b,c" {
		t.Errorf("schema %s", got)
	}
	cookie := sqlOne(t, snapshotFiles(t, path), "PRAGMA schema_version")
	mustUpdate(t, db, func(tx *Tx) error {
		if _, err := tx.CreateIndex("CREATE UNIQUE INDEX p ON items(price > 1)"); !errors.Is(err, ErrUnsupported) {
			return err
		}
		if err := tx.DeleteBucket("b"); err != nil {
			return err
		}
		if err := tx.DeleteBucket("b"); !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("second DeleteBucket: %v", err)
		}
		if err := tx.DropIndex("sqlite_autoindex_Items_1"); !errors.Is(err, ErrUnsupported) {
			return fmt.Errorf("drop autoindex: %v", err)
		}
		if err := tx.DropIndex("dup"); err != nil {
			return err
		}
		if err := tx.DeleteBucket("items"); !errors.Is(err, ErrUnsupported) {
			return fmt.Errorf("DeleteBucket of a table: %v", err)
		}
		return tx.DropTable("items")
	})
	if got := sqlOne(t, snapshotFiles(t, path), "PRAGMA schema_version"); got == cookie {
		t.Error("schema cookie did not move")
	}
	if got := sqlOne(t, snapshotFiles(t, path), "SELECT group_concat(name) FROM sqlite_schema"); got != "a,c" {
		t.Errorf("schema after drops: %s", got)
	}
	if got := sqlOne(t, snapshotFiles(t, path), "PRAGMA freelist_count"); got == "0" {
		t.Error("dropped trees left no free pages")
	}
	if got := sqlOne(t, snapshotFiles(t, path), "PRAGMA integrity_check"); got != "ok" {
		t.Fatal(got)
	}
	// Free pages are reused before the file grows.
	pages := sqlOne(t, snapshotFiles(t, path), "PRAGMA page_count")
	mustUpdate(t, db, func(tx *Tx) error {
		b, _ := tx.Bucket("a")
		for i := range 300 {
			b.Put([]byte(fmt.Sprint(i)), make([]byte, 200))
		}
		return nil
	})
	if got := sqlOne(t, snapshotFiles(t, path), "PRAGMA page_count"); got != pages {
		t.Errorf("file grew from %s to %s pages with free pages available", pages, got)
	}
	db.Close()
	if got := sqlOne(t, path, "PRAGMA integrity_check"); got != "ok" {
		t.Fatal(got)
	}
}

// TestSchemaRowsLikeSQLite: the same CREATE statements give the same
// sqlite_schema rows (type, name, tbl_name, sql, and the root page kinds)
// in pagoda as in SQLite.
func TestSchemaRowsLikeSQLite(t *testing.T) {
	stmts := []string{
		"CREATE TABLE a(x)",
		"create table if not exists B ( id integer primary key , v text unique , w unique ) ;",
		"CREATE TABLE c(p INT, q TEXT COLLATE NOCASE, PRIMARY KEY(p, q), UNIQUE(q)) WITHOUT ROWID",
		"CREATE TABLE \"odd \"\"name\"\"\"(k BLOB PRIMARY KEY, v BLOB) STRICT, WITHOUT ROWID",
		"CREATE TABLE d(x INTEGER PRIMARY KEY DESC, y UNIQUE, z, UNIQUE(y), UNIQUE(z, y))",
		"CREATE TABLE e(a, b, c, PRIMARY KEY(b DESC)) -- trailing comment",
		"CREATE INDEX a_x ON a(x)",
		"create unique index if not exists  d_zy on d ( z desc , y collate rtrim )",
		"CREATE INDEX e_ab ON e(a, b COLLATE NOCASE DESC);",
	}
	spath := filepath.Join(t.TempDir(), "sqlite.db")
	sqltest.Exec(t, spath, stmts...)
	ppath := filepath.Join(t.TempDir(), "pagoda.db")
	db := openChecked(t, ppath, nil)
	mustUpdate(t, db, func(tx *Tx) error {
		for _, s := range stmts {
			var err error
			if strings.Contains(strings.ToUpper(s[:14]), "TABLE") {
				_, err = tx.CreateTable(s)
			} else {
				_, err = tx.CreateIndex(s)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	})
	db.Close()
	const q = "SELECT group_concat(type||'|'||name||'|'||tbl_name||'|'||ifnull(sql, 'NULL'), char(10)) FROM sqlite_schema"
	if got, want := sqlOne(t, ppath, q), sqlOne(t, spath, q); got != want {
		t.Errorf("sqlite_schema\n got:\n%s\nwant:\n%s", got, want)
	}
	if got := sqlOne(t, ppath, "PRAGMA integrity_check"); got != "ok" {
		t.Fatal(got)
	}
	const kinds = "SELECT group_concat(name||'='||(SELECT count(*) FROM pragma_index_list(name)), ',') FROM sqlite_schema WHERE type = 'table'"
	if got, want := sqlOne(t, ppath, kinds), sqlOne(t, spath, kinds); got != want {
		t.Errorf("indexes per table: %s, want %s", got, want)
	}
}

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

// TestHandlesAfterDrop checks that a table, bucket or index taken before
// its transaction dropped it reads nothing afterwards, even once a new
// tree has taken its root page: every read says it is gone (ErrNotFound),
// and iterators and cursors stop with that error.
func TestHandlesAfterDrop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.db")
	db := openChecked(t, path, nil)
	mustUpdate(t, db, func(tx *Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE t(a TEXT, b TEXT)")
		if err != nil {
			return err
		}
		if _, err := tx.CreateIndex("CREATE INDEX tb ON t(b)"); err != nil {
			return err
		}
		if _, err := tb.Insert("row of t", "b of t"); err != nil {
			return err
		}
		bk, err := tx.CreateBucket("k")
		if err != nil {
			return err
		}
		return bk.Put([]byte("key"), []byte("value of k"))
	})
	gone := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s after the drop: %v, want ErrNotFound", what, err)
		}
	}
	err := db.Update(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		ix, err := tx.Index("tb")
		if err != nil {
			return err
		}
		bk, err := tx.Bucket("k")
		if err != nil {
			return err
		}
		if err := tx.DropTable("t"); err != nil {
			return err
		}
		if err := tx.DeleteBucket("k"); err != nil {
			return err
		}
		// New trees take the freed root pages.
		u, err := tx.CreateTable("CREATE TABLE u(a TEXT, b TEXT)")
		if err != nil {
			return err
		}
		if _, err := tx.CreateIndex("CREATE INDEX ub ON u(b)"); err != nil {
			return err
		}
		if _, err := u.Insert("row of u", "b of u"); err != nil {
			return err
		}
		v, err := tx.CreateBucket("v")
		if err != nil {
			return err
		}
		if err := v.Put([]byte("key"), []byte("value of v")); err != nil {
			return err
		}

		_, err = tb.Get(1)
		gone("Table.Get", err)
		_, err = tb.Count()
		gone("Table.Count", err)
		c := tb.Cursor()
		if c.First() {
			t.Errorf("Table.Cursor after the drop reads %q", c.Record().Column(0).Text())
		}
		gone("Table.Cursor", c.Err())
		for _, r := range tb.All() {
			t.Errorf("Table.All after the drop reads %q", r.Column(0).Text())
		}
		gone("Table.All", tx.Err())

		ic := ix.Cursor()
		if ic.First() {
			t.Errorf("Index.Cursor after the drop reads % x", ic.Raw())
		}
		gone("Index.Cursor", ic.Err())

		_, err = bk.Get([]byte("key"))
		gone("Bucket.Get", err)
		bc := bk.Cursor()
		if bc.First() {
			t.Errorf("Bucket.Cursor after the drop reads %q", bc.Value())
		}
		gone("Bucket.Cursor", bc.Err())
		return errors.New("roll back")
	})
	if err == nil || err.Error() != "roll back" {
		t.Fatalf("Update: %v", err)
	}
}

// TestCreateOtherSchemas: the file holds the main schema. CREATE TEMP
// TABLE (or INDEX) and temp.name are refused with ErrUnsupported (sqlite3
// keeps such an object in its connection, never in the file), another
// schema's name is unknown, and main.name creates name.
func TestCreateOtherSchemas(t *testing.T) {
	db := openChecked(t, filepath.Join(t.TempDir(), "s.db"), nil)
	mustUpdate(t, db, func(tx *Tx) error {
		for _, sql := range []string{
			"CREATE TEMP TABLE a(x)", "CREATE TEMPORARY TABLE a(x)", "CREATE TABLE temp.a(x)", "CREATE TABLE TEMP.a(x)",
		} {
			if _, err := tx.CreateTable(sql); !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: %v, want ErrUnsupported", sql, err)
			}
		}
		if _, err := tx.CreateTable("CREATE TABLE foo.a(x)"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "unknown database foo") {
			t.Errorf("CREATE TABLE foo.a: %v, want unknown database foo (ErrNotFound)", err)
		}
		m, err := tx.CreateTable("CREATE TABLE main.m(x)")
		if err != nil {
			return err
		}
		if m.Name() != "m" {
			t.Errorf("CREATE TABLE main.m made %q", m.Name())
		}
		for _, sql := range []string{"CREATE INDEX temp.i ON m(x)"} {
			if _, err := tx.CreateIndex(sql); !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: %v, want ErrUnsupported", sql, err)
			}
		}
		if _, err := tx.CreateIndex("CREATE INDEX main.i ON m(x)"); err != nil {
			return err
		}
		// Names in use in main are no answer for another schema.
		for _, sql := range []string{"CREATE TEMP TABLE m(x)", "CREATE TEMP TABLE IF NOT EXISTS m(x)"} {
			if _, err := tx.CreateTable(sql); !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s, with main.m: %v, want ErrUnsupported", sql, err)
			}
		}
		if _, err := tx.CreateTable("CREATE TABLE IF NOT EXISTS aux.m(x)"); !errors.Is(err, ErrNotFound) {
			t.Errorf("CREATE TABLE IF NOT EXISTS aux.m, with main.m: %v, want unknown database", err)
		}
		for _, sql := range []string{"CREATE INDEX temp.i ON m(x)", "CREATE INDEX IF NOT EXISTS temp.i ON m(x)"} {
			if _, err := tx.CreateIndex(sql); !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s, with main.i: %v, want ErrUnsupported", sql, err)
			}
		}
		if _, err := tx.Table("a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("table a: %v, want ErrNotFound", err)
		}
		return nil
	})
}
