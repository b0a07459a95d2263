package pagoda

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pagodadb/pagoda/internal/btree"

	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

func sqlOne(t *testing.T, path, q string, args ...any) string {
	t.Helper()
	db := sqltest.Open(t, path)
	defer db.Close()
	var s string
	if err := db.QueryRow(q, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

func mustUpdate(t *testing.T, db *DB, fn func(*Tx) error) {
	t.Helper()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// TestSQLiteThenPagodaThenSQLite: a file SQLite wrote (rollback journal
// mode, with indexes and a freelist), changed by pagoda, read by SQLite.
func TestSQLiteThenPagodaThenSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	sqltest.Exec(t, path,
		"CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL, n INT, UNIQUE(name))",
		"CREATE INDEX t_n ON t(n DESC)",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<3000) INSERT INTO t SELECT x, 'name'||x, x%10 FROM c",
		"DELETE FROM t WHERE id % 3 = 0", // leaves free pages
	)
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for i := 3001; i <= 4000; i++ {
			if _, err := tb.Insert(nil, fmt.Sprintf("name%d", i), i%10); err != nil {
				return err
			}
		}
		for i := int64(1); i <= 500; i++ {
			if i%3 != 0 {
				if err := tb.Delete(i); err != nil {
					return err
				}
			}
		}
		if _, err := tb.Insert(nil, "name1000", 1); !errors.Is(err, ErrExists) {
			return fmt.Errorf("duplicate name: %v", err)
		}
		if _, err := tb.Insert(nil, nil, 1); err == nil {
			return errors.New("NULL into a NOT NULL column was accepted")
		}
		return nil
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := sqlOne(t, path, "PRAGMA integrity_check"); got != "ok" {
		t.Fatal(got)
	}
	want := fmt.Sprint(2000 - 334 + 1000) // (3000 - 1000 deleted by SQLite) - 334 deleted here + 1000
	if got := sqlOne(t, path, "SELECT count(*) FROM t"); got != want {
		t.Fatalf("count %s, want %s", got, want)
	}
	if got := sqlOne(t, path, "SELECT id FROM t INDEXED BY sqlite_autoindex_t_1 WHERE name = 'name3999'"); got != "3998" { // rowid 3000 was deleted: new rowids start at 3000
		t.Fatalf("autoindex lookup: %s", got)
	}
	if got := sqlOne(t, path, "SELECT count(*) FROM t INDEXED BY t_n WHERE n = 7"); got == "0" {
		t.Fatal("index t_n is empty")
	}
}

// TestPagodaThenSQLiteThenPagoda: a file pagoda created, changed by SQLite,
// read and changed again by pagoda.
func TestPagodaThenSQLiteThenPagoda(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucket("kv")
		if err != nil {
			return err
		}
		for i := range 1000 {
			if err := b.Put([]byte(fmt.Sprintf("k%04d", i)), bytes.Repeat([]byte{byte(i)}, i)); err != nil {
				return err
			}
		}
		tb, err := tx.CreateTable("CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE UNIQUE, age INT)")
		if err != nil {
			return err
		}
		_, err = tb.Insert(nil, "Ada", 36)
		return err
	})
	db.Close()
	sqltest.Exec(t, path,
		"INSERT INTO people(name, age) VALUES ('Grace', 85), ('Linus', 54)",
		"DELETE FROM kv WHERE key < CAST('k0500' AS BLOB)",
		"INSERT INTO kv VALUES (CAST('zz' AS BLOB), x'00ff')",
		"CREATE INDEX people_age ON people(age)",
	)
	db, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.Bucket("kv")
		if err != nil {
			return err
		}
		if v, err := b.Get([]byte("zz")); err != nil || !bytes.Equal(v, []byte{0, 0xff}) {
			return fmt.Errorf("zz = %x, %v", v, err)
		}
		if _, err := b.Get([]byte("k0100")); !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("deleted key: %v", err)
		}
		tb, err := tx.Table("people")
		if err != nil {
			return err
		}
		if _, err := tb.Insert(nil, "ADA", 1); !errors.Is(err, ErrExists) {
			return fmt.Errorf("NOCASE unique: %v", err)
		}
		_, err = tb.Insert(nil, "Barbara", 80) // maintains people_age, made by SQLite
		return err
	})
	db.Close()
	if got := sqlOne(t, path, "PRAGMA integrity_check"); got != "ok" {
		t.Fatal(got)
	}
	if got := sqlOne(t, path, "SELECT group_concat(name) FROM (SELECT name FROM people INDEXED BY people_age ORDER BY age)"); got != "Ada,Linus,Barbara,Grace" {
		t.Fatalf("people by age: %s", got)
	}
}

// TestRollbackLeavesNoTrace: a rolled-back transaction writes nothing to
// either file.
func TestRollbackLeavesNoTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	db, err := Open(path, &Options{CheckpointPages: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustUpdate(t, db, func(tx *Tx) error {
		_, err := tx.CreateBucket("b")
		return err
	})
	read := func() ([]byte, []byte) {
		a, _ := os.ReadFile(path)
		b, _ := os.ReadFile(pager.WALPath(path))
		return a, b
	}
	db0, wal0 := read()
	err = db.Update(func(tx *Tx) error {
		b, _ := tx.Bucket("b")
		for i := range 2000 {
			b.Put([]byte(fmt.Sprint(i)), make([]byte, 100))
		}
		tx.CreateTable("CREATE TABLE x(a)")
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	db1, wal1 := read()
	if !bytes.Equal(db0, db1) || !bytes.Equal(wal0, wal1) {
		t.Fatal("a rolled-back transaction changed the files")
	}
	db.View(func(tx *Tx) error {
		if _, err := tx.Table("x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("table of a rolled-back transaction: %v", err)
		}
		return nil
	})
}

// TestConstraintErrorKeepsTxUsable: a UNIQUE violation is reported with
// ErrExists and the transaction goes on.
func TestConstraintErrorKeepsTxUsable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustUpdate(t, db, func(tx *Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE u(a TEXT UNIQUE, b INTEGER PRIMARY KEY)")
		if err != nil {
			return err
		}
		if _, err := tb.Insert("x", nil); err != nil {
			return err
		}
		if _, err := tb.Insert("x", nil); !errors.Is(err, ErrExists) {
			return fmt.Errorf("duplicate: %v", err)
		}
		if _, err := tb.Insert("y", 1); !errors.Is(err, ErrExists) {
			return fmt.Errorf("duplicate rowid: %v", err)
		}
		if _, err := tb.Insert(nil, nil); err != nil { // NULLs are distinct
			return err
		}
		if _, err := tb.Insert(nil, nil); err != nil {
			return err
		}
		_, err = tb.Insert("y", "7") // the text becomes the integer rowid 7
		return err
	})
	// SQLite reads a copy: on closing, it would checkpoint and delete the
	// WAL of a database pagoda has open.
	if got := sqlOne(t, snapshotFiles(t, path), "SELECT group_concat(ifnull(a,'-')||b) FROM u"); got != "x1,-2,-3,y7" {
		t.Fatalf("rows: %s", got)
	}
}

// TestDDL covers creating and dropping buckets, tables and indexes, the
// schema cookie and the freelist they leave.
func TestDDL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
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

// TestAffinityOnWrite: values are converted as SQLite converts them, so
// that integrity_check (which checks stored types) and typeof agree.
func TestAffinityOnWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx *Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE a(i INTEGER, r REAL, t TEXT, n NUMERIC, b BLOB, x)")
		if err != nil {
			return err
		}
		rows := [][]any{
			{"12", "1.5", 42, "3.0", "blob?", "7"},
			{1.0, 2, 2.5, "abc", []byte{1}, 1.5},
			{true, int8(-3), []byte("raw"), " 12 ", nil, false},
		}
		for _, r := range rows {
			if _, err := tb.Insert(r...); err != nil {
				return err
			}
		}
		st, err := tx.CreateTable("CREATE TABLE s(i INT, t TEXT) STRICT")
		if err != nil {
			return err
		}
		if _, err := st.Insert("x", "y"); err == nil {
			return errors.New("STRICT accepted text in an INT column")
		}
		_, err = st.Insert("5", 5)
		return err
	})
	db.Close()
	want := "integer,real,text,integer,text,text|integer,real,text,text,blob,real|integer,real,blob,integer,null,integer"
	if got := sqlOne(t, path, "SELECT group_concat(x, '|') FROM (SELECT concat_ws(',', typeof(i), typeof(r), typeof(t), typeof(n), typeof(b), typeof(x)) AS x FROM a)"); got != want {
		t.Errorf("types\n got %s\nwant %s", got, want)
	}
	if got := sqlOne(t, path, "SELECT i||','||typeof(i)||','||t||','||typeof(t) FROM s"); got != "5,integer,5,text" {
		t.Errorf("STRICT row: %s", got)
	}
	if got := sqlOne(t, path, "PRAGMA integrity_check"); got != "ok" {
		t.Fatal(got)
	}
}

// TestReadersBesideWriter: read transactions keep their snapshot while a
// writer commits, and see every commit made before they began.
func TestReadersBesideWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rw.db")
	db, err := Open(path, &Options{CheckpointPages: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustUpdate(t, db, func(tx *Tx) error {
		_, err := tx.CreateBucket("n")
		return err
	})
	const commits = 200
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= commits; i++ {
			err := db.Update(func(tx *Tx) error {
				b, _ := tx.Bucket("n")
				// Every commit keeps sum(values) == 0 and adds one key.
				if err := b.Put([]byte(fmt.Sprintf("k%05d", i)), []byte(fmt.Sprint(i))); err != nil {
					return err
				}
				return b.Put([]byte("neg"), []byte(fmt.Sprint(-i*(i+1)/2)))
			})
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := 0
			for last < commits {
				err := db.View(func(tx *Tx) error {
					b, err := tx.Bucket("n")
					if err != nil {
						return err
					}
					sum, keys := 0, 0
					for k, v := range b.All() {
						var n int
						fmt.Sscan(string(v), &n)
						sum += n
						if k[0] == 'k' {
							keys++
						}
					}
					if sum != 0 {
						return fmt.Errorf("snapshot with %d keys sums to %d", keys, sum)
					}
					if keys < last {
						return fmt.Errorf("went back from %d to %d keys", last, keys)
					}
					last = keys
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestCursorSurvivesChanges: deleting through a cursor, and writing while
// iterating, neither skips nor repeats keys.
func TestCursorSurvivesChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cur.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		for i := range 3000 {
			b.Put([]byte(fmt.Sprintf("%05d", i)), make([]byte, 50))
		}
		c := b.Cursor()
		seen := 0
		for ok := c.First(); ok; ok = c.Next() {
			seen++
			if c.Key()[4]%2 == 0 { // delete the even ones
				if err := c.Delete(); err != nil {
					return err
				}
			}
		}
		if seen != 3000 {
			return fmt.Errorf("cursor saw %d keys while deleting, want 3000", seen)
		}
		n := 0
		for k := range b.All() {
			if k[4]%2 == 0 {
				return fmt.Errorf("key %s survived", k)
			}
			// Writing while iterating: the new keys sort before every
			// old one, so the iteration does not meet them.
			b.Put(append([]byte("!"), k...), nil)
			n++
			if n > 1500 {
				return errors.New("iteration does not end")
			}
		}
		if n != 1500 {
			return fmt.Errorf("%d keys after deleting half of 3000", n)
		}
		return c.Err()
	})
	if got := sqlOne(t, snapshotFiles(t, path), "SELECT count(*) FROM b"); got != "3000" {
		t.Fatalf("count %s", got)
	}
}

// TestSQLite3CLIReadsPagodaFile has the sqlite3 shell, where installed,
// check and read a file pagoda wrote, with its WAL as a crash leaves it and
// after a clean Close.
func TestSQLite3CLIReadsPagodaFile(t *testing.T) {
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 CLI not installed; the in-process SQLite checks the same files in other tests")
	}
	path := filepath.Join(t.TempDir(), "cli.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx *Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT UNIQUE, b BLOB)")
		if err != nil {
			return err
		}
		for i := range 2000 {
			if _, err := tb.Insert(nil, fmt.Sprintf("row %d", i), bytes.Repeat([]byte{byte(i)}, i%5000)); err != nil {
				return err
			}
		}
		b, err := tx.CreateBucket("kv")
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	})
	run := func(file, q string) string {
		out, err := exec.Command(sqlite3, file, q).CombinedOutput()
		if err != nil {
			t.Fatalf("sqlite3 %s: %v\n%s", q, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	crash := snapshotFiles(t, path)
	for _, f := range []string{crash} {
		if got := run(f, "PRAGMA integrity_check"); got != "ok" {
			t.Fatalf("integrity_check with the WAL: %s", got)
		}
		if got := run(f, "SELECT count(*), sum(length(b)) FROM t; SELECT value FROM kv"); got != "2000|1999000\nv" {
			t.Fatalf("rows: %q", got)
		}
	}
	db.Close()
	if got := run(path, "PRAGMA integrity_check; PRAGMA journal_mode"); got != "ok\nwal" {
		t.Fatalf("after Close: %s", got)
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
	db, err := Open(ppath, nil)
	if err != nil {
		t.Fatal(err)
	}
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

// TestRealStoredLikeSQLite: whole REALs are stored as integers, as SQLite
// stores them, so both engines read -0.0 back as 0.0.
func TestRealStoredLikeSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "real.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx *Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE r(x REAL)")
		if err != nil {
			return err
		}
		for _, v := range []any{math.Copysign(0, -1), 3.0, 2.5, float64(1 << 52), -7} {
			if _, err := tb.Insert(v); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	ref := filepath.Join(t.TempDir(), "ref.db")
	sqltest.Exec(t, ref, "CREATE TABLE r(x REAL)", "INSERT INTO r VALUES (-0.0), (3.0), (2.5), (4503599627370496.0), (-7)")
	const q = "SELECT group_concat(quote(x)||':'||typeof(x)) FROM r"
	if got, want := sqlOne(t, path, q), sqlOne(t, ref, q); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if got := sqlOne(t, path, "PRAGMA integrity_check"); got != "ok" {
		t.Fatal(got)
	}
}

// TestNewRowidLikeSQLite: Insert without a rowid picks the one sqlite3
// picks: 1 in an empty table, else one more than the largest, negative
// ones included.
func TestNewRowidLikeSQLite(t *testing.T) {
	for _, existing := range [][]int64{nil, {-5}, {-1}, {-9, -3}, {0}, {7, -2}, {1 << 40}} {
		t.Run(fmt.Sprint(existing), func(t *testing.T) {
			dir := t.TempDir()
			stmts := []string{"CREATE TABLE t(a)"}
			for _, r := range existing {
				stmts = append(stmts, fmt.Sprintf("INSERT INTO t(rowid, a) VALUES (%d, 'old')", r))
			}
			ours, theirs := filepath.Join(dir, "pagoda.db"), filepath.Join(dir, "sqlite.db")
			sqltest.Exec(t, ours, stmts...)
			sqltest.Exec(t, theirs, append(stmts, "INSERT INTO t(a) VALUES ('new')")...)
			db, err := Open(ours, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got int64
			mustUpdate(t, db, func(tx *Tx) error {
				tb, err := tx.Table("t")
				if err != nil {
					return err
				}
				got, err = tb.Insert("new")
				return err
			})
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			want := sqlOne(t, theirs, "SELECT rowid FROM t WHERE a = 'new'")
			if fmt.Sprint(got) != want {
				t.Errorf("Insert chose rowid %d, sqlite3 %s", got, want)
			}
			if stored := sqlOne(t, ours, "SELECT rowid FROM t WHERE a = 'new'"); stored != want {
				t.Errorf("stored rowid %s, want %s", stored, want)
			}
		})
	}
}

// TestAffinityLikeSQLite stores the same values through pagoda and through
// SQLite (bound as parameters) into columns of every affinity, and compares
// what each stored: type and value, as SQLite's typeof and quote show them.
func TestAffinityLikeSQLite(t *testing.T) {
	values := []any{
		"12", " 12", "12 ", " 12 ", "+12", "-0", "0x10", "1e3", "1E3", "1.5e2", "1.0", "1.", ".5", "5.",
		"-.5", "1e400", "-1e400", "1e-400", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "00012", "1_000", "inf", "NaN", "", " ",
		"12abc", "\t12\n", "0.1", "123456789012345678901234567890", "1.0e15", "1.0e16", "9007199254740993",
		"3.0e0", "-0.0", "0e0", "1e2.5", "1.5 ", "0.0000001", "100000000000000000000.0", "1e19",
		"  -12  ", "1e", "e5", "-", ".", "1.5e+", "0x", "١٢", "１２", "12\x00", "9223372036854775807.0",
		"-9223372036854775808.0", "1e18", "4.5e15", "0.5e1", "12.50", "-12.0e-1", "+.5e1",
		1.0, 2.5, math.Copysign(0, -1), 1e20, 9.223372036854775807e18, -9.223372036854775808e18,
		math.Inf(1), math.Inf(-1), 1e-300, 123456789.0, -3.0, 0.1, math.NaN(), 4.5e15, 1e15 + 0.5,
		int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), int64(1 << 53),
		[]byte("12"), []byte{},
	}
	dir := t.TempDir()
	create := "CREATE TABLE t(n INTEGER PRIMARY KEY, i INTEGER, r REAL, num NUMERIC, s TEXT, b BLOB, x)"
	ours, theirs := filepath.Join(dir, "pagoda.db"), filepath.Join(dir, "sqlite.db")
	sqltest.Exec(t, ours, create)
	sdb := sqltest.Open(t, theirs)
	if _, err := sdb.Exec(create); err != nil {
		t.Fatal(err)
	}
	for n, v := range values {
		if _, err := sdb.Exec("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)", n, v, v, v, v, v, v); err != nil {
			t.Fatalf("sqlite: %v: %v", v, err)
		}
	}
	sdb.Close()
	db, err := Open(ours, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for n, v := range values {
			if _, err := tb.Insert(n, v, v, v, v, v, v); err != nil {
				return fmt.Errorf("%v: %w", v, err)
			}
		}
		return nil
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	q := "SELECT group_concat(n || ': ' || concat_ws(' | ', typeof(i) || ' ' || quote(i), typeof(r) || ' ' || quote(r), " +
		"typeof(num) || ' ' || quote(num), typeof(s) || ' ' || quote(s), typeof(b) || ' ' || quote(b), typeof(x) || ' ' || quote(x)), char(30)) FROM t"
	got, want := strings.Split(sqlOne(t, ours, q), "\x1e"), strings.Split(sqlOne(t, theirs, q), "\x1e")
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := strings.Split(got[i], " | "), strings.Split(want[i], " | ")
		if f, ok := values[i].(float64); ok && math.Abs(f) >= 1e15 && len(g) == len(w) {
			// SQLite renders some large reals as TEXT with up to 17
			// digits since 3.43 (9.2233720368547758e+18 for 2^63), with
			// 15 before; pagoda follows sqlite3 3.40.1, which CI runs.
			// The TEXT column is left out for them.
			g[3], w[3] = "", ""
		}
		if !slices.Equal(g, w) {
			t.Errorf("value %#v:\n got %s\nwant %s", values[i], got[i], want[i])
		}
	}
	if ic := sqlOne(t, ours, "PRAGMA integrity_check"); ic != "ok" {
		t.Fatal(ic)
	}
}

// TestGetInWriteTxSeesItsWrites checks that Get in a write transaction
// reads the transaction's own pages, on a file whose every page is in its
// mapping (no WAL frame: the read snapshot's flat pages, which a write
// transaction must never hand a lookup).
func TestGetInWriteTxSeesItsWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	sqltest.Exec(t, path,
		"CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<2000) INSERT INTO t SELECT x, 'old'||x FROM c",
	)
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustUpdate(t, db, func(tx *Tx) error {
		if _, ok := tx.pages().(btree.FlatPages); ok {
			t.Error("a write transaction's pages offer flat pages")
		}
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for _, id := range []int64{1, 777, 2000} {
			if err := tb.Put(id, nil, fmt.Sprintf("new%d", id)); err != nil {
				return err
			}
			rec, err := tb.Get(id)
			if err != nil {
				return err
			}
			if got, want := rec.Column(1).Text(), fmt.Sprintf("new%d", id); got != want {
				t.Errorf("Get(%d) in the write transaction = %q, want %q", id, got, want)
			}
		}
		return nil
	})
}
