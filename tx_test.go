package pagoda

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestUnsupportedWrites checks that files pagoda can read but must not
// write refuse a write transaction with ErrUnsupported, stay readable, and
// are left byte for byte as they were.
func TestUnsupportedWrites(t *testing.T) {
	fill := []string{
		"CREATE TABLE t(a INTEGER PRIMARY KEY, b)",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<500) INSERT INTO t SELECT x, randomblob(300) FROM c",
	}
	for _, tc := range []struct {
		name  string
		setup []string
		patch func(hdr []byte) // applied to the file's first page after SQLite wrote it
	}{
		{"auto_vacuum full", []string{"PRAGMA auto_vacuum=FULL"}, nil},
		{"auto_vacuum incremental", []string{"PRAGMA auto_vacuum=INCREMENTAL"}, nil},
		{"write version 3", nil, func(hdr []byte) { hdr[18] = 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			sqltest.Exec(t, path, append(append([]string{}, tc.setup...), fill...)...)
			if tc.patch != nil {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				tc.patch(data)
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			db := openChecked(t, path, nil)
			if _, err := db.Begin(true); !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Begin(true) = %v, want ErrUnsupported", err)
			}
			err = db.Update(func(tx *Tx) error {
				_, err := tx.CreateBucket("b")
				return err
			})
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Update = %v, want ErrUnsupported", err)
			}
			// Reads go on, and a write transaction can be tried again.
			n := 0
			err = db.View(func(tx *Tx) error {
				tbl, err := tx.Table("t")
				if err != nil {
					return err
				}
				for _, rec := range tbl.All() {
					if len(rec.Column(1).Blob()) != 300 {
						t.Fatalf("row %d: %d bytes", rec.Rowid(), len(rec.Column(1).Blob()))
					}
					n++
				}
				return nil
			})
			if err != nil || n != 500 {
				t.Fatalf("View read %d rows: %v", n, err)
			}
			if _, err := db.Begin(true); !errors.Is(err, ErrUnsupported) {
				t.Fatalf("second Begin(true) = %v, want ErrUnsupported", err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Fatal("the file changed")
			}
			if _, err := os.Stat(path + "-wal"); err == nil {
				t.Fatal("a WAL was left beside the file")
			}
		})
	}
}

// TestUnsupportedTables checks that a table whose writes need SQL that
// pagoda does not evaluate refuses every write with ErrUnsupported, changes
// nothing, and leaves the transaction usable: another table of the file is
// written in the same transaction, and sqlite3 finds the file sound.
func TestUnsupportedTables(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup []string // creates table x(id INTEGER PRIMARY KEY, a, ...) or its like
	}{
		{"check", []string{"CREATE TABLE x(id INTEGER PRIMARY KEY, a CHECK (CAST(a AS INT) > 0))"}},
		{"check glob", []string{"CREATE TABLE x(id INTEGER PRIMARY KEY, a CHECK (a NOT GLOB '*x'))"}},
		{"generated column", []string{"CREATE TABLE x(id INTEGER PRIMARY KEY, a, g AS (a * 2))"}},
		{"expression index", []string{"CREATE TABLE x(id INTEGER PRIMARY KEY, a)", "CREATE INDEX xe ON x(a + 1)"}},
		{"partial index", []string{"CREATE TABLE x(id INTEGER PRIMARY KEY, a)", "CREATE INDEX xp ON x(a) WHERE a GLOB '1*'"}},
		{"trigger", []string{"CREATE TABLE x(id INTEGER PRIMARY KEY, a)", "CREATE TABLE log(n)",
			"CREATE TRIGGER xt AFTER INSERT ON x BEGIN INSERT INTO log VALUES (new.a); END"}},
		{"delete trigger", []string{"CREATE TABLE x(id INTEGER PRIMARY KEY, a)",
			"CREATE TRIGGER xd BEFORE DELETE ON x BEGIN SELECT RAISE(ABORT, 'kept'); END"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.db")
			stmts := append(append([]string{"CREATE TABLE ok(id INTEGER PRIMARY KEY, a)"}, tc.setup...),
				"INSERT INTO x(id, a) VALUES (1, 10), (2, 20)")
			sqltest.Exec(t, path, stmts...)
			before := sqlOne(t, path, "SELECT group_concat(id || ':' || a) FROM x")
			db := openChecked(t, path, nil)
			mustUpdate(t, db, func(tx *Tx) error {
				x, err := tx.Table("x")
				if err != nil {
					return err
				}
				for what, err := range map[string]error{
					"Insert": func() error { _, err := x.Insert(nil, 30); return err }(),
					"Put":    x.Put(1, nil, 11),
					"Delete": x.Delete(2),
				} {
					if !errors.Is(err, ErrUnsupported) {
						t.Errorf("%s = %v, want ErrUnsupported", what, err)
					}
				}
				ok, err := tx.Table("ok")
				if err != nil {
					return err
				}
				_, err = ok.Insert(nil, "written")
				return err
			})
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if got := sqlOne(t, path, "SELECT group_concat(id || ':' || a) FROM x"); got != before {
				t.Errorf("x holds %s, want %s", got, before)
			}
			if got := sqlOne(t, path, "SELECT a FROM ok"); got != "written" {
				t.Errorf("ok holds %q", got)
			}
			if ic := sqlOne(t, path, "PRAGMA integrity_check"); ic != "ok" {
				t.Errorf("integrity_check: %s", ic)
			}
		})
	}
}

// TestBucketWithIndex checks a bucket whose table sqlite3 gave an index and
// then a trigger: pagoda's writes keep the index, as sqlite3's
// integrity_check and a query through the index show, and a trigger stops
// them with ErrUnsupported.
func TestBucketWithIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.db")
	db := openChecked(t, path, nil)
	var err error
	mustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		for i := range 300 {
			if err := b.Put(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%d", i%7)); err != nil {
				return err
			}
		}
		return nil
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	sqltest.Exec(t, path, "CREATE INDEX bv ON b(value)")

	db, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]string{}
	for i := range 300 {
		model[fmt.Sprintf("k%03d", i)] = fmt.Sprintf("v%d", i%7)
	}
	mustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.Bucket("b")
		if err != nil {
			return err
		}
		for i := 0; i < 300; i += 3 {
			k := fmt.Sprintf("k%03d", i)
			if err := b.Put([]byte(k), []byte("changed")); err != nil {
				return err
			}
			model[k] = "changed"
		}
		for i := 1; i < 300; i += 5 {
			k := fmt.Sprintf("k%03d", i)
			if err := b.Delete([]byte(k)); err != nil {
				return err
			}
			delete(model, k)
		}
		if err := b.Delete([]byte("absent")); err != nil {
			return fmt.Errorf("deleting a missing key: %w", err)
		}
		if err := b.Put([]byte("new"), nil); err != nil {
			return err
		}
		model["new"] = ""
		c := b.Cursor()
		if !c.Seek([]byte("k299")) {
			return fmt.Errorf("no k299")
		}
		if err := c.Delete(); err != nil {
			return err
		}
		delete(model, "k299")
		// Reads in the transaction see the writes.
		n := 0
		for k, v := range b.All() {
			if want, ok := model[string(k)]; !ok || want != string(v) {
				t.Errorf("in the transaction: %s = %q, want %q (%v)", k, v, want, ok)
			}
			n++
		}
		if n != len(model) {
			t.Errorf("in the transaction: %d keys, want %d", n, len(model))
		}
		return nil
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if ic := sqlOne(t, path, "PRAGMA integrity_check"); ic != "ok" {
		t.Fatalf("integrity_check: %s", ic)
	}
	want := 0
	for _, v := range model {
		if v == "changed" {
			want++
		}
	}
	if got := sqlOne(t, path, "SELECT count(*) FROM b INDEXED BY bv WHERE value = CAST('changed' AS BLOB)"); got != fmt.Sprint(want) {
		t.Errorf("the index finds %s changed values, want %d", got, want)
	}
	if got := sqlOne(t, path, "SELECT count(*) FROM b"); got != fmt.Sprint(len(model)) {
		t.Errorf("%s keys, want %d", got, len(model))
	}

	sqltest.Exec(t, path, "CREATE TABLE log(k)", "CREATE TRIGGER bt AFTER INSERT ON b BEGIN INSERT INTO log VALUES (new.key); END")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *Tx) error {
		b, err := tx.Bucket("b")
		if err != nil {
			return err
		}
		return b.Put([]byte("k000"), []byte("again"))
	})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Put into a bucket with a trigger: %v, want ErrUnsupported", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the refused write changed the file (%v)", err)
	}
}

// TestLegacySchemaFormat reads and writes a file of schema format 1, in
// which SQLite ignores DESC: its DESC index and WITHOUT ROWID primary key
// hold their keys in ascending order.
func TestLegacySchemaFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "legacy.db")
	sqltest.Exec(t, path,
		"CREATE TABLE t(a, b)",
		"CREATE INDEX ta ON t(a DESC)",
		"CREATE TABLE w(k, v, PRIMARY KEY(k DESC)) WITHOUT ROWID")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[47] = 1 // schema format 1, big-endian at offset 44
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sqltest.Exec(t, path,
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<400) INSERT INTO t SELECT x, 'v' || x FROM c",
		"INSERT INTO w SELECT a, b FROM t")
	if ic := sqlOne(t, path, "PRAGMA integrity_check"); ic != "ok" {
		t.Fatalf("the fixture: integrity_check: %s", ic)
	}

	db := openChecked(t, path, nil)
	if err := db.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	read := func(tx *Tx, k int64) {
		t.Helper()
		w, err := tx.Table("w")
		if err != nil {
			t.Fatal(err)
		}
		rec, err := w.GetKey(k)
		if err != nil || rec.Column(1).Text() != fmt.Sprint("v", k) {
			t.Fatalf("w key %d: %v %v", k, rec.Column(1).Text(), err)
		}
		ix, err := tx.Index("ta")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rowid := range ix.Prefix(k) {
			if rowid != k {
				t.Fatalf("index ta at %d: rowid %d", k, rowid)
			}
			n++
		}
		if n != 1 {
			t.Fatalf("index ta at %d: %d entries", k, n)
		}
	}
	if err := db.View(func(tx *Tx) error {
		for _, k := range []int64{1, 2, 200, 399, 400} {
			read(tx, k)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx *Tx) error {
		tt, err := tx.Table("t")
		if err != nil {
			return err
		}
		w, err := tx.Table("w")
		if err != nil {
			return err
		}
		for k := int64(401); k <= 450; k++ {
			if err := tt.Put(k, k, fmt.Sprint("v", k)); err != nil {
				return err
			}
			if err := w.Put(0, k, fmt.Sprint("v", k)); err != nil {
				return err
			}
		}
		return nil
	})
	if err := db.View(func(tx *Tx) error {
		read(tx, 425)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if ic := sqlOne(t, path, "PRAGMA integrity_check"); ic != "ok" {
		t.Fatalf("after pagoda's writes: integrity_check: %s", ic)
	}
	if got := sqlOne(t, path, "SELECT group_concat(a) FROM (SELECT a FROM t INDEXED BY ta WHERE a > 447 ORDER BY a)"); got != "448,449,450" {
		t.Errorf("sqlite3 through the index: %s", got)
	}
}

// TestOpenReadOnlyFile opens, without Options.ReadOnly, a file its owner
// may not write: it opens read-only, as sqlite3 opens it.
func TestOpenReadOnlyFile(t *testing.T) {
	if os.Geteuid() == 0 {
		// root writes whatever the permissions say; the pager's
		// TestOpenWriteDenied covers the same path with a file system
		// that refuses writes.
		t.Skip("running as root: file permissions do not refuse writes")
	}
	path := filepath.Join(t.TempDir(), "ro.db")
	sqltest.Exec(t, path, "CREATE TABLE t(a)", "INSERT INTO t VALUES (42)")
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	db := openChecked(t, path, nil)
	if !db.ReadOnly() {
		t.Error("DB.ReadOnly is false")
	}
	if err := db.View(func(tx *Tx) error {
		tbl, err := tx.Table("t")
		if err != nil {
			return err
		}
		rec, err := tbl.Get(1)
		if err == nil && rec.Column(0).Int() != 42 {
			err = fmt.Errorf("row 1 holds %v", rec.Column(0).Any())
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Begin(true); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Begin(true) = %v, want ErrReadOnly", err)
	}
}

// TestShadowTables: the shadow tables of a virtual table (fts5 here) refuse
// writes, which would put them out of step with the module's index;
// sqlite3's integrity_check, which asks fts5 to check itself, stays ok.
func TestShadowTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fts.db")
	sqltest.Exec(t, path,
		"CREATE VIRTUAL TABLE docs USING fts5(body)",
		"INSERT INTO docs VALUES ('the quick brown fox'), ('jumps over the lazy dog')",
		"CREATE TABLE docsx(a)")
	db := openChecked(t, path, nil)
	mustUpdate(t, db, func(tx *Tx) error {
		content, err := tx.Table("docs_content")
		if err != nil {
			return err
		}
		if _, err := content.Insert(nil, "smuggled in"); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Insert into docs_content: %v, want ErrUnsupported", err)
		}
		if err := content.Delete(1); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Delete from docs_content: %v, want ErrUnsupported", err)
		}
		if _, err := tx.Table("docs"); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Table(docs), a virtual table: %v, want ErrUnsupported", err)
		}
		// Objects says which table is virtual, with its module, and which
		// are its shadow tables.
		for _, o := range tx.Objects() {
			module, shadowOf := "", ""
			switch {
			case o.Name == "docs":
				module = "fts5"
			case o.Type == "table" && strings.HasPrefix(o.Name, "docs_"):
				shadowOf = "docs"
			}
			if o.Module != module || o.ShadowOf != shadowOf {
				t.Errorf("Objects(): %s has Module %q, ShadowOf %q; want %q, %q", o.Name, o.Module, o.ShadowOf, module, shadowOf)
			}
		}
		other, err := tx.Table("docsx") // no underscore: not a shadow table
		if err != nil {
			return err
		}
		_, err = other.Insert("written")
		return err
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if ic := sqlOne(t, path, "PRAGMA integrity_check"); ic != "ok" {
		t.Fatalf("integrity_check: %s", ic)
	}
	if got := sqlOne(t, path, "SELECT count(*) FROM docs WHERE docs MATCH 'lazy'"); got != "1" {
		t.Errorf("fts5 finds %s rows for 'lazy'", got)
	}
}

// Many goroutines read at once, each in its own transaction; run with -race.
// The engine shares the catalog and table metadata between transactions.
func TestConcurrentReaders(t *testing.T) {
	db := benchDB(t)
	const readers = 8
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for g := 0; g < readers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			errs <- db.View(func(tx *Tx) error {
				tbl, err := tx.Table("t")
				if err != nil {
					return err
				}
				n := 0
				for rowid, rec := range tbl.All() {
					if len(rec.Column(1).Blob()) != 100 {
						t.Errorf("reader %d: row %d has a short value", g, rowid)
					}
					n++
				}
				if n != benchRows {
					t.Errorf("reader %d: %d rows, want %d", g, n, benchRows)
				}
				b, err := tx.Bucket("b")
				if err != nil {
					return err
				}
				for i := 1; i <= 1000; i++ {
					v, err := b.Get(fmt.Appendf(nil, "k%08d", i*37))
					if err != nil || len(v) != 100 {
						t.Errorf("reader %d: key %d: %d bytes, %v", g, i*37, len(v), err)
					}
				}
				ix, err := tx.Index("tv")
				if err != nil {
					return err
				}
				cnt, err := ix.Count()
				if err != nil || cnt != benchRows {
					t.Errorf("reader %d: index count %d, %v", g, cnt, err)
				}
				return nil
			})
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// renewDB makes a database with a table t(id, v), rows 1..n, an index on v,
// and a bucket b with keys k1..kn.
func renewDB(t *testing.T, n int, opts *Options) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "renew.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	err = db.Update(func(tx *Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
		if err != nil {
			return err
		}
		if _, err := tx.CreateIndex("CREATE INDEX tv ON t(v)"); err != nil {
			return err
		}
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		for i := 1; i <= n; i++ {
			if err := tb.Put(int64(i), nil, fmt.Sprintf("v%05d", i)); err != nil {
				return err
			}
			if err := b.Put(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "%d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestRenew: with nothing committed, a renewed transaction is the same
// snapshot, and what was taken from it works on, cursors in place; after a
// commit it sees the commit, and what was taken before fails with
// ErrTxClosed until taken again.
func TestRenew(t *testing.T) {
	db := renewDB(t, 500, nil)
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := tx.Table("t")
	ix, _ := tx.Index("tv")
	bk, _ := tx.Bucket("b")
	tc := tb.Cursor()
	if !tc.SeekRowid(200) {
		t.Fatal("row 200 missing")
	}
	ic := ix.Cursor()
	if !ic.Seek("v00300") {
		t.Fatal("index entry v00300 missing")
	}
	bc := bk.Cursor()
	if !bc.Seek([]byte("k00400")) {
		t.Fatal("key k00400 missing")
	}
	rec, _ := tb.Get(7)
	held, keep := rec.Column(1).Text(), bytes.Clone(rec.Column(1).Blob())

	for _, rollback := range []bool{false, true} {
		if rollback {
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if _, err := tb.Get(1); !errors.Is(err, ErrTxClosed) {
				t.Fatalf("Get after Rollback: %v", err)
			}
		}
		same, err := tx.Renew()
		if err != nil || !same {
			t.Fatalf("Renew (after Rollback %v) with nothing committed = %v, %v", rollback, same, err)
		}
		if held != string(keep) {
			t.Fatal("a slice of the same snapshot changed")
		}
	}
	// Cursors are where they were.
	if !tc.Next() || tc.Rowid() != 201 {
		t.Fatalf("table cursor after Renew: %v at %d (%v)", tc.Err(), tc.Rowid(), tc.Err())
	}
	if !ic.Next() || ic.Key().Column(0).Text() != "v00301" {
		t.Fatalf("index cursor after Renew: %v", ic.Err())
	}
	if !bc.Next() || string(bc.Key()) != "k00401" {
		t.Fatalf("bucket cursor after Renew: %v", bc.Err())
	}
	if _, err := bk.Get([]byte("k00001")); err != nil {
		t.Fatal(err)
	}

	// An open read transaction does not see a commit until it is renewed.
	err = db.Update(func(w *Tx) error {
		wt, err := w.Table("t")
		if err != nil {
			return err
		}
		return wt.Put(1000, nil, "new")
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Get(1000); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an open snapshot saw a later commit: %v", err)
	}
	same, err := tx.Renew()
	if err != nil || same {
		t.Fatalf("Renew after a commit = %v, %v; want a new snapshot", same, err)
	}
	_, getErr := tb.Get(1)
	_, countErr := ix.Count()
	_, bucketErr := bk.Get([]byte("k00001"))
	tc.Next()
	ic.Next()
	bc.Next()
	for what, err := range map[string]error{
		"Table.Get": getErr, "Index.Count": countErr, "Bucket.Get": bucketErr,
		"TableCursor": tc.Err(), "IndexCursor": ic.Err(), "Cursor": bc.Err(),
	} {
		if !errors.Is(err, ErrTxClosed) {
			t.Errorf("%s taken before a Renew onto a later commit: %v, want ErrTxClosed", what, err)
		}
	}
	n := 0
	for range tb.All() {
		n++
	}
	if n != 0 || !errors.Is(tx.Err(), ErrTxClosed) {
		t.Errorf("All of a stale table: %d rows, Tx.Err %v", n, tx.Err())
	}
	tb2, err := tx.Table("t")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := tb2.Get(1000); err != nil || r.Column(1).Text() != "new" {
		t.Fatalf("renewed transaction: Get(1000) = %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("second Rollback: %v", err)
	}

	// Write transactions cannot be renewed; nothing can after Close.
	w, err := db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Renew(); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Renew of a write transaction: %v", err)
	}
	w.Rollback()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Renew(); !errors.Is(err, ErrTxClosed) {
		t.Fatalf("Renew after Close: %v", err)
	}
}

// TestRenewConcurrent renews read transactions in a loop beside a writer
// that moves money between accounts, with checkpoints after every few
// commits so that the WAL is copied and starts over all along. Every
// snapshot must hold the invariant total; a slice read before a Renew that
// reports the same snapshot must still hold its bytes after it.
func TestRenewConcurrent(t *testing.T) {
	const accounts, total = 50, 50 * 1000
	db, err := Open(filepath.Join(t.TempDir(), "bank.db"), &Options{CheckpointPages: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(b *Bucket, i int, v uint64) error {
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], v)
		return b.Put(fmt.Appendf(nil, "acct%03d", i), buf[:])
	}
	err = db.Update(func(tx *Tx) error {
		b, err := tx.CreateBucket("bank")
		if err != nil {
			return err
		}
		for i := range accounts {
			if err := put(b, i, total/accounts); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var writer, readers sync.WaitGroup
	stop := make(chan struct{})
	writer.Add(1)
	go func() {
		defer writer.Done()
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			default:
			}
			err := db.Update(func(tx *Tx) error {
				b, err := tx.Bucket("bank")
				if err != nil {
					return err
				}
				from, to := k%accounts, (k*7+3)%accounts
				fv, err := b.Get(fmt.Appendf(nil, "acct%03d", from))
				if err != nil {
					return err
				}
				f := binary.BigEndian.Uint64(fv)
				tv, err := b.Get(fmt.Appendf(nil, "acct%03d", to))
				if err != nil {
					return err
				}
				v := binary.BigEndian.Uint64(tv)
				amt := uint64(k%7 + 1)
				if from == to || f < amt {
					return nil
				}
				if err := put(b, from, f-amt); err != nil {
					return err
				}
				return put(b, to, v+amt)
			})
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	sum := func(tx *Tx, b *Bucket) (uint64, []byte) {
		var n uint64
		var first []byte
		for k, v := range b.All() {
			n += binary.BigEndian.Uint64(v)
			if string(k) == "acct000" {
				first = v
			}
		}
		if err := tx.Err(); err != nil {
			t.Error(err)
		}
		return n, first
	}
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			tx, err := db.Begin(false)
			if err != nil {
				t.Error(err)
				return
			}
			defer tx.Rollback()
			b, _ := tx.Bucket("bank")
			sames, news := 0, 0
			// Until the writer has committed 60 times, and at least 1000
			// times round.
			for i := 0; i < 1000 || db.Stats().Commits < 60; i++ {
				if (i+r)%2 == 0 {
					tx.Rollback() // sometimes ended between reads, sometimes not
				}
				for range 2 { // the second Renew often finds nothing committed
					same, err := tx.Renew()
					if err != nil {
						t.Error(err)
						return
					}
					if !same {
						news++
						if b, err = tx.Bucket("bank"); err != nil {
							t.Error(err)
							return
						}
					}
					n, first := sum(tx, b)
					if n != total {
						t.Errorf("reader %d, renewal %d (same %v): total %d, want %d", r, i, same, n, total)
						return
					}
					held := bytes.Clone(first)
					if same, err = tx.Renew(); err != nil {
						t.Error(err)
						return
					}
					if same {
						sames++
						if !bytes.Equal(first, held) {
							t.Errorf("reader %d, renewal %d: a slice of the same snapshot changed: % x, was % x", r, i, first, held)
							return
						}
					} else {
						news++
						if b, err = tx.Bucket("bank"); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}
			if sames == 0 || news == 0 {
				t.Errorf("reader %d: %d renewals kept the snapshot, %d took a new one: the test needs both", r, sames, news)
			}
			t.Logf("reader %d: %d renewals kept the snapshot, %d took a new one", r, sames, news)
		}()
	}
	readers.Wait()
	close(stop)
	writer.Wait()
	stats := db.Stats()
	t.Logf("checkpoints %d, commits %d", stats.Checkpoints, stats.Commits)
}

// TestOnCommit: a write transaction calls its OnCommit functions in order
// once its commit has succeeded and the transaction has ended; a rollback
// or a failed commit calls none.
func TestOnCommit(t *testing.T) {
	db := openChecked(t, filepath.Join(t.TempDir(), "oncommit.db"), nil)
	var calls []string
	err := db.Update(func(tx *Tx) error {
		tx.OnCommit(func() { calls = append(calls, "first") })
		tx.OnCommit(func() {
			calls = append(calls, "second")
			// The transaction has ended: another may begin.
			if err := db.View(func(tx *Tx) error {
				_, err := tx.Bucket("b")
				return err
			}); err != nil {
				t.Errorf("View from OnCommit: %v", err)
			}
		})
		_, err := tx.CreateBucket("b")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(calls, ",") != "first,second" {
		t.Errorf("calls %v", calls)
	}
	calls = nil
	_ = db.Update(func(tx *Tx) error {
		tx.OnCommit(func() { calls = append(calls, "rolled back") })
		return errors.New("no")
	})
	tx, err := db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	tx.OnCommit(func() { calls = append(calls, "explicit rollback") })
	tx.Rollback()
	if len(calls) != 0 {
		t.Errorf("called after rollbacks: %v", calls)
	}
}

// TestStats: the transaction counters, and the pages a commit allocates
// and frees and a checkpoint copies.
func TestStats(t *testing.T) {
	db := openChecked(t, filepath.Join(t.TempDir(), "stats.db"), &Options{CheckpointPages: -1})
	s0 := db.Stats()
	mustUpdate(t, db, func(tx *Tx) error {
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		for i := range 200 {
			if err := b.Put([]byte(strconv.Itoa(i)), make([]byte, 500)); err != nil {
				return err
			}
		}
		return nil
	})
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	if s := db.Stats(); s.OpenTxN != 1 || s.TxN != s0.TxN+2 || s.WriteTxN != s0.WriteTxN+1 {
		t.Errorf("with a read transaction open: %+v", s)
	}
	tx.Rollback()
	s1 := db.Stats()
	if s1.OpenTxN != 0 || s1.Commits != s0.Commits+1 || s1.Allocated < 25 || s1.Freed != s0.Freed || s1.WALFrames < s1.Allocated {
		t.Errorf("after a load: %+v", s1)
	}
	mustUpdate(t, db, func(tx *Tx) error { return tx.DeleteBucket("b") })
	s2 := db.Stats()
	if s2.Freed < s1.Allocated-s0.Allocated-1 {
		t.Errorf("after DeleteBucket: %d pages freed, want about the %d allocated", s2.Freed, s1.Allocated-s0.Allocated)
	}
	if _, err := db.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	if s3 := db.Stats(); s3.Checkpoints != s2.Checkpoints+1 || s3.Copied < 25 || s3.WALRestarts < 1 {
		t.Errorf("after a checkpoint: %+v", s3)
	}
}

// TestHandlesAcrossSchemaChanges: a Tx keeps the table handles it gave,
// so that taking a table again (a pooled Tx's next View) allocates
// nothing, also after more schema changes than it keeps handles for: the
// handles of older catalogs give way.
func TestHandlesAcrossSchemaChanges(t *testing.T) {
	db := openChecked(t, filepath.Join(t.TempDir(), "h.db"), nil)
	if err := db.Update(func(tx *Tx) error {
		_, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	take := func() {
		if _, err := tx.Table("t"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 * txHandles {
		if err := db.Update(func(w *Tx) error {
			_, err := w.CreateTable(fmt.Sprintf("CREATE TABLE u%d(a)", i))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if same, err := tx.Renew(); err != nil || same {
			t.Fatalf("Renew = %v, %v: want a later commit", same, err)
		}
		take() // a handle on the new catalog
		if a := testing.AllocsPerRun(10, take); a != 0 {
			t.Fatalf("after %d schema changes: Table allocates %v times a call", i+1, a)
		}
	}
	if len(tx.tabs) > txHandles {
		t.Fatalf("the Tx keeps %d handles, at most %d", len(tx.tabs), txHandles)
	}
}

// TestManagedCommit: Commit and Rollback inside Update and View fail with
// ErrUnsupported and change nothing: Update then commits what fn did if
// fn returns nil, so that its result tells the truth about the commit.
func TestManagedCommit(t *testing.T) {
	db := openChecked(t, filepath.Join(t.TempDir(), "m.db"), nil)
	mustUpdate(t, db, func(tx *Tx) error {
		_, err := tx.CreateTable("CREATE TABLE t(a)")
		return err
	})
	count := func() int64 {
		var n int64
		if err := db.View(func(tx *Tx) error {
			tb, err := tx.Table("t")
			if err != nil {
				return err
			}
			n, err = tb.Count()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	err := db.Update(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		if _, err := tb.Insert(1); err != nil {
			return err
		}
		if err := tx.Commit(); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Commit inside Update: %v, want ErrUnsupported", err)
		}
		if err := tx.Rollback(); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Rollback inside Update: %v, want ErrUnsupported", err)
		}
		_, err = tb.Insert(2) // the transaction goes on
		return err
	})
	if err != nil || count() != 2 {
		t.Fatalf("Update: %v, %d rows; want nil and 2", err, count())
	}
	err = db.Update(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		if _, err := tb.Insert(3); err != nil {
			return err
		}
		_ = tx.Commit()
		return errors.New("changed my mind")
	})
	if err == nil || count() != 2 {
		t.Fatalf("Update that failed: %v, %d rows; want its error and 2", err, count())
	}
	if err := db.View(func(tx *Tx) error { return tx.Rollback() }); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Rollback inside View: %v, want ErrUnsupported", err)
	}
	tx, err := db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatalf("Rollback of a Begin's transaction: %v", err)
	}
}

// TestCheckpointAfterClose: DB.Checkpoint after Close says the database
// is closed, as Begin does.
func TestCheckpointAfterClose(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "c.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = db.Checkpoint(CheckpointTruncate)
	_, berr := db.Begin(false)
	if err == nil || berr == nil || err.Error() != berr.Error() {
		t.Fatalf("Checkpoint after Close: %v; Begin: %v", err, berr)
	}
}

// TestCheckpointWhileClosing: a goroutine that holds a transaction and
// calls DB.Checkpoint while Close waits for that transaction gets the
// closed database's error at once, instead of waiting behind Close, which
// waits for it.
func TestCheckpointWhileClosing(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "c.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error)
	go func() { closed <- db.Close() }()
	for !db.closed.Load() {
		runtime.Gosched()
	}
	done := make(chan error)
	go func() {
		_, err := db.Checkpoint(CheckpointPassive)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrTxClosed) {
			t.Errorf("Checkpoint while closing: %v, want ErrTxClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Checkpoint waits behind Close, which waits for the transaction")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}
