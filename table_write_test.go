package pagoda

import (
	"bytes"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/format"
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
	db := openChecked(t, path, nil)
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
	db := openChecked(t, path, nil)
	var err error
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
	db := openChecked(t, path, &Options{CheckpointPages: -1})
	var err error
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
	db := openChecked(t, path, nil)
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

// TestAffinityOnWrite: values are converted as SQLite converts them, so
// that integrity_check (which checks stored types) and typeof agree.
func TestAffinityOnWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	db := openChecked(t, path, nil)
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
	db := openChecked(t, path, &Options{CheckpointPages: 50})
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
	db := openChecked(t, path, nil)
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
	db := openChecked(t, path, nil)
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

// TestRealStoredLikeSQLite: whole REALs are stored as integers, as SQLite
// stores them, so both engines read -0.0 back as 0.0.
func TestRealStoredLikeSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "real.db")
	db := openChecked(t, path, nil)
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
			db := openChecked(t, ours, nil)
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

// storeBoth makes table t (create: n INTEGER PRIMARY KEY, then cols
// columns) in two files, one written by pagoda and one by SQLite (values
// bound as parameters), with row n holding values[n] in every column, and
// returns their paths, each closed.
func storeBoth(t *testing.T, create string, cols int, values []any) (ours, theirs string) {
	t.Helper()
	dir := t.TempDir()
	ours, theirs = filepath.Join(dir, "pagoda.db"), filepath.Join(dir, "sqlite.db")
	row := func(n int, v any) []any {
		r := []any{n}
		for range cols {
			r = append(r, v)
		}
		return r
	}
	sqltest.Exec(t, ours, create)
	sdb := sqltest.Open(t, theirs)
	if _, err := sdb.Exec(create); err != nil {
		t.Fatal(err)
	}
	insert := "INSERT INTO t VALUES (?" + strings.Repeat(", ?", cols) + ")"
	for n, v := range values {
		if _, err := sdb.Exec(insert, row(n, v)...); err != nil {
			t.Fatalf("sqlite: %v: %v", v, err)
		}
	}
	sdb.Close()
	db := openChecked(t, ours, nil)
	mustUpdate(t, db, func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for n, v := range values {
			if _, err := tb.Insert(row(n, v)...); err != nil {
				return fmt.Errorf("%v: %w", v, err)
			}
		}
		return nil
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return ours, theirs
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
	ours, theirs := storeBoth(t, "CREATE TABLE t(n INTEGER PRIMARY KEY, i INTEGER, r REAL, num NUMERIC, s TEXT, b BLOB, x)", 6, values)
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

// TestRealRecordBytesLikeSQLite compares the records pagoda and SQLite
// store for whole numbers in a REAL column around the bounds of the
// integer encoding (an integer within [-2^47, 2^47), a float past it):
// byte for byte, not only as typeof and quote show them.
func TestRealRecordBytesLikeSQLite(t *testing.T) {
	values := []any{0.0, math.Copysign(0, -1), 1.0, -1.0, 0.5, float64(1<<47 - 1), float64(1 << 47), -float64(1 << 47),
		-float64(1<<47) - 1, float64(1 << 48), float64(1<<51 - 1), float64(1 << 51), float64(1 << 53),
		int64(1<<47 - 1), int64(1 << 47), int64(-1 << 47), int64(1 << 48), int64(math.MaxInt64),
		"140737488355328", "140737488355327", "2251799813685247.0"}
	ours, theirs := storeBoth(t, "CREATE TABLE t(n INTEGER PRIMARY KEY, r REAL)", 1, values)
	records := func(path string) [][]byte {
		db := openChecked(t, path, &Options{ReadOnly: true})
		defer db.Close()
		var out [][]byte
		err := db.View(func(tx *Tx) error {
			tb, err := tx.Table("t")
			if err != nil {
				return err
			}
			for _, r := range tb.All() {
				out = append(out, slices.Clone(r.Raw()))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	got, want := records(ours), records(theirs)
	if len(got) != len(values) || len(want) != len(values) {
		t.Fatalf("%d and %d rows, want %d", len(got), len(want), len(values))
	}
	for i, v := range values {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("%T %v: pagoda stored % x, SQLite % x", v, v, got[i], want[i])
		}
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
	db := openChecked(t, path, nil)
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

// The AUTOINCREMENT tables of TestAutoincrementLikeSQLite: one plain, one
// with a UNIQUE column (inserts that fail must not raise seq) and a name
// in capitals (sqlite_sequence holds it as declared).
var autoincSchemas = map[string]string{
	"a": "CREATE TABLE a(id INTEGER PRIMARY KEY AUTOINCREMENT, v)",
	"B": "CREATE TABLE B(id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT UNIQUE)",
}

// TestAutoincrementLikeSQLite applies the same random operations to two
// AUTOINCREMENT tables in a file pagoda writes and in one SQLite writes:
// inserts with and without rowids (up to the largest int64), replaces,
// deletes, rolled-back inserts, drops, and direct edits of
// sqlite_sequence (other types of seq, a second row for a table, rows
// deleted). Every insert must return SQLite's rowid or fail as SQLite
// fails, and sqlite_sequence must read the same after every operation.
// At the end SQLite checks pagoda's file and inserts into it the rowid it
// inserts into its own.
func TestAutoincrementLikeSQLite(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { runAutoinc(t, seed, 200) })
	}
}

func runAutoinc(t *testing.T, seed uint64, ops int) {
	dir := t.TempDir()
	litePath, path := filepath.Join(dir, "sqlite.db"), filepath.Join(dir, "pagoda.db")
	lite := sqltest.Open(t, litePath)
	sqltest.Run(t, lite, autoincSchemas["a"], autoincSchemas["B"])
	db := openChecked(t, path, nil)
	mustUpdate(t, db, func(tx *Tx) error {
		for _, name := range []string{"a", "B"} {
			if _, err := tx.CreateTable(autoincSchemas[name]); err != nil {
				return err
			}
		}
		return nil
	})
	if got, want := pagodaObjects(t, db), liteObjects(t, lite); got != want {
		t.Fatalf("schema:\n%s\nSQLite's:\n%s", got, want)
	}

	r := rand.New(rand.NewPCG(seed, 11))
	ids := []int64{-5, -1, 0, 1, 2, 3, 7, 10, 100, 1000, 1 << 40}
	id := func() int64 {
		if r.IntN(40) == 0 {
			return []int64{math.MaxInt64 - 1, math.MaxInt64}[r.IntN(2)]
		}
		return ids[r.IntN(len(ids))]
	}
	value := func(tbl string) any {
		if tbl == "B" {
			return []string{"w", "x", "y", "z"}[r.IntN(4)] // UNIQUE: some inserts fail
		}
		return int64(r.IntN(100))
	}
	seqValues := []any{int64(5), int64(50), int64(-3), int64(0), int64(math.MaxInt64), "abc", "12abc", " 30", 3.5, -2.5, nil, []byte("42")}
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		from := max(0, len(log)-12)
		t.Fatalf("seed %d: %s\nlast operations:\n\t%s", seed, fmt.Sprintf(format, args...), strings.Join(log[from:], "\n\t"))
	}
	for range ops {
		tbl := []string{"a", "B"}[r.IntN(2)]
		var what string
		var got, want string // "rowid" or the error's class
		switch x := r.IntN(100); {
		case x < 30: // insert without a rowid
			v := value(tbl)
			what = fmt.Sprintf("INSERT INTO %s(v) VALUES(%v)", tbl, v)
			got = pagodaInsert(db, tbl, nil, v, false)
			want = liteInserted(lite.Exec(fmt.Sprintf("INSERT INTO %s(v) VALUES(?)", tbl), v))
		case x < 50: // insert with one
			k, v := id(), value(tbl)
			what = fmt.Sprintf("INSERT INTO %s VALUES(%d, %v)", tbl, k, v)
			got = pagodaInsert(db, tbl, k, v, false)
			want = liteInserted(lite.Exec(fmt.Sprintf("INSERT INTO %s VALUES(?, ?)", tbl), k, v))
		case x < 58: // replace (table a: B's UNIQUE column would make REPLACE delete other rows)
			k, v := id(), value("a")
			what = fmt.Sprintf("INSERT OR REPLACE INTO a VALUES(%d, %v)", k, v)
			got = pagodaInsert(db, "a", k, v, true)
			want = liteInserted(lite.Exec("INSERT OR REPLACE INTO a VALUES(?, ?)", k, v))
		case x < 70: // delete
			k := id()
			what = fmt.Sprintf("DELETE FROM %s WHERE id = %d", tbl, k)
			err := db.Update(func(tx *Tx) error {
				tab, err := tx.Table(tbl)
				if err != nil {
					return err
				}
				if err := tab.Delete(k); err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				return nil
			})
			got, want = errResult(0, err), liteResult(lite.Exec(fmt.Sprintf("DELETE FROM %s WHERE id = ?", tbl), k))
		case x < 75: // an insert rolled back
			v := value(tbl)
			what = fmt.Sprintf("BEGIN; INSERT INTO %s(v) VALUES(%v); ROLLBACK", tbl, v)
			err := db.Update(func(tx *Tx) error {
				tab, err := tx.Table(tbl)
				if err == nil {
					_, err = tab.Insert(nil, v)
				}
				if err != nil {
					return err
				}
				return errRollback
			})
			if !errors.Is(err, errRollback) {
				got = errResult(0, err)
			}
			ltx, err := lite.Begin()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ltx.Exec(fmt.Sprintf("INSERT INTO %s(v) VALUES(?)", tbl), v); err != nil {
				want = liteResult(nil, err)
			}
			ltx.Rollback()
		case x < 85: // seq of the table's first row set to a value of any type
			v := seqValues[r.IntN(len(seqValues))]
			what = fmt.Sprintf("UPDATE sqlite_sequence SET seq = %#v WHERE rowid = (its first row for %s)", v, tbl)
			rowid, ok := firstSeqRow(t, lite, tbl)
			if !ok {
				continue
			}
			err := db.Update(func(tx *Tx) error {
				st, err := tx.Table(sequenceTable)
				if err != nil {
					return err
				}
				return st.Put(rowid, tbl, v)
			})
			got, want = errResult(0, err), liteResult(lite.Exec("UPDATE sqlite_sequence SET seq = ? WHERE rowid = ?", v, rowid))
		case x < 90: // a second row for the table, or a row deleted
			if r.IntN(2) == 0 {
				v := seqValues[r.IntN(len(seqValues))]
				what = fmt.Sprintf("INSERT INTO sqlite_sequence VALUES('%s', %#v)", tbl, v)
				err := db.Update(func(tx *Tx) error {
					st, err := tx.Table(sequenceTable)
					if err == nil {
						_, err = st.Insert(tbl, v)
					}
					return err
				})
				got, want = errResult(0, err), liteResult(lite.Exec("INSERT INTO sqlite_sequence VALUES(?, ?)", tbl, v))
				break
			}
			rowid, ok := firstSeqRow(t, lite, tbl)
			if !ok {
				continue
			}
			what = fmt.Sprintf("DELETE FROM sqlite_sequence WHERE rowid = %d", rowid)
			err := db.Update(func(tx *Tx) error {
				st, err := tx.Table(sequenceTable)
				if err == nil {
					err = st.Delete(rowid)
				}
				return err
			})
			got, want = errResult(0, err), liteResult(lite.Exec("DELETE FROM sqlite_sequence WHERE rowid = ?", rowid))
		case x < 93: // the table dropped and created again
			what = fmt.Sprintf("DROP TABLE %s; %s", tbl, autoincSchemas[tbl])
			err := db.Update(func(tx *Tx) error {
				if err := tx.DropTable(tbl); err != nil {
					return err
				}
				_, err := tx.CreateTable(autoincSchemas[tbl])
				return err
			})
			got = errResult(0, err)
			want = liteResult(lite.Exec("DROP TABLE " + tbl))
			if want == "ok" {
				want = liteResult(lite.Exec(autoincSchemas[tbl]))
			}
		default:
			continue
		}
		log = append(log, what)
		if got != want {
			fail("%s: pagoda %s, SQLite %s", what, got, want)
		}
		if got, want := pagodaSequence(t, db), liteSequence(t, lite); got != want {
			fail("after %s, sqlite_sequence is\n%s\nSQLite's:\n%s", what, got, want)
		}
	}
	for _, tbl := range []string{"a", "B"} {
		q := fmt.Sprintf("SELECT id, quote(v) FROM %s ORDER BY id", tbl)
		if got, want := pagodaRows(t, db, tbl), liteRows(t, lite, q); got != want {
			fail("table %s holds\n%s\nSQLite's:\n%s", tbl, got, want)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// SQLite finds pagoda's file sound and picks the same next rowids.
	if ic := sqlOne(t, path, "PRAGMA integrity_check"); ic != "ok" {
		t.Fatalf("integrity_check: %s", ic)
	}
	other := sqltest.Open(t, path)
	for _, tbl := range []string{"a", "B"} {
		q := fmt.Sprintf("INSERT INTO %s(v) VALUES('next')", tbl)
		if got, want := liteInserted(other.Exec(q)), liteInserted(lite.Exec(q)); got != want {
			t.Errorf("seed %d: %s: %s in pagoda's file, %s in SQLite's", seed, q, got, want)
		}
	}
	if got, want := liteSequence(t, other), liteSequence(t, lite); got != want {
		t.Errorf("seed %d: SQLite's inserts into pagoda's file leave sqlite_sequence\n%s\nwant\n%s", seed, got, want)
	}
}

// pagodaInsert inserts (or with replace, puts) a row into tbl in a
// transaction of its own, and returns the rowid or the error's class.
func pagodaInsert(db *DB, tbl string, id any, v any, replace bool) string {
	var rowid int64
	err := db.Update(func(tx *Tx) error {
		tab, err := tx.Table(tbl)
		if err != nil {
			return err
		}
		if replace {
			rowid = id.(int64)
			return tab.Put(rowid, id, v)
		}
		rowid, err = tab.Insert(id, v)
		return err
	})
	return errResult(rowid, err)
}

// errResult is "ok", the rowid, or the class of err.
func errResult(rowid int64, err error) string {
	switch {
	case err == nil && rowid != 0:
		return strconv.FormatInt(rowid, 10)
	case err == nil:
		return "ok"
	case errors.Is(err, ErrExists):
		return "exists"
	case strings.Contains(err.Error(), "database or disk is full"):
		return "full"
	}
	return "error: " + err.Error()
}

// liteResult is errResult for SQLite, for a statement that inserts
// nothing pagoda reports.
func liteResult(_ sql.Result, err error) string {
	switch {
	case err == nil:
		return "ok"
	case strings.Contains(err.Error(), "UNIQUE constraint failed"):
		return "exists"
	case strings.Contains(err.Error(), "database or disk is full"):
		return "full"
	}
	return "error: " + err.Error()
}

// liteInserted is liteResult for an INSERT: the row's rowid.
func liteInserted(res sql.Result, err error) string {
	if err != nil {
		return liteResult(res, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return "error: " + err.Error()
	}
	return errResult(id, nil)
}

// firstSeqRow returns the rowid of tbl's first row of sqlite_sequence.
func firstSeqRow(t *testing.T, lite *sql.DB, tbl string) (int64, bool) {
	var rowid int64
	err := lite.QueryRow("SELECT rowid FROM sqlite_sequence WHERE name = ? ORDER BY rowid LIMIT 1", tbl).Scan(&rowid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return rowid, true
}

// quoteValue renders v as SQLite's quote() does (for the REALs the tests
// store, which print exactly): text up to a NUL, where quote() stops.
func quoteValue(v Value) string {
	switch v.Type() {
	case TypeNull:
		return "NULL"
	case TypeInteger:
		return strconv.FormatInt(v.Int(), 10)
	case TypeFloat:
		return FormatFloat(v.Float())
	case TypeText:
		return "'" + strings.ReplaceAll(strings.Split(v.Text(), "\x00")[0], "'", "''") + "'"
	}
	return "X'" + strings.ToUpper(hex.EncodeToString(v.Blob())) + "'"
}

// pagodaSequence lists sqlite_sequence as "rowid|quote(name)|quote(seq)".
func pagodaSequence(t *testing.T, db *DB) string {
	t.Helper()
	var lines []string
	err := db.View(func(tx *Tx) error {
		st, err := tx.Table(sequenceTable)
		if err != nil {
			return err
		}
		c := st.Cursor()
		for ok := c.First(); ok; ok = c.Next() {
			rec := c.Record()
			lines = append(lines, fmt.Sprintf("%d|%s|%s", c.Rowid(), quoteValue(rec.Column(0)), quoteValue(rec.Column(1))))
		}
		return c.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

func liteSequence(t *testing.T, lite *sql.DB) string {
	t.Helper()
	return liteRows(t, lite, "SELECT rowid, quote(name), quote(seq) FROM sqlite_sequence ORDER BY rowid")
}

// liteRows runs q and joins its rows' columns with "|".
func liteRows(t *testing.T, lite *sql.DB, q string) string {
	t.Helper()
	return strings.Join(sqltest.Rows(t, lite, q), "\n")
}

// pagodaRows lists tbl as "id|quote(v)".
func pagodaRows(t *testing.T, db *DB, tbl string) string {
	t.Helper()
	var lines []string
	err := db.View(func(tx *Tx) error {
		tab, err := tx.Table(tbl)
		if err != nil {
			return err
		}
		c := tab.Cursor()
		for ok := c.First(); ok; ok = c.Next() {
			lines = append(lines, fmt.Sprintf("%d|%s", c.Rowid(), quoteValue(c.Record().Column(1))))
		}
		return c.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// pagodaObjects and liteObjects list the schema as
// "type|name|tbl_name|rootpage|sql".
func pagodaObjects(t *testing.T, db *DB) string {
	t.Helper()
	var lines []string
	db.View(func(tx *Tx) error {
		for _, o := range tx.Objects() {
			lines = append(lines, fmt.Sprintf("%s|%s|%s|%d|%s", o.Type, o.Name, o.Table, o.RootPage, o.SQL))
		}
		return nil
	})
	return strings.Join(lines, "\n")
}

func liteObjects(t *testing.T, lite *sql.DB) string {
	t.Helper()
	return liteRows(t, lite, "SELECT type, name, tbl_name, rootpage, coalesce(sql, '') FROM sqlite_schema ORDER BY rowid")
}

// BenchmarkCommitOne is a durable one-row commit (SyncFull), shared (the
// default: the WAL's write lock and the wal-index) and exclusive.
func BenchmarkCommitOne(b *testing.B) {
	for _, exclusive := range []bool{false, true} {
		name := "shared"
		if exclusive {
			name = "exclusive"
		}
		b.Run(name, func(b *testing.B) {
			db, err := Open(filepath.Join(b.TempDir(), "c.db"), &Options{Exclusive: exclusive})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if err := db.Update(func(tx *Tx) error {
				_, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
				return err
			}); err != nil {
				b.Fatal(err)
			}
			v := make([]byte, 100)
			b.ReportAllocs()
			for b.Loop() {
				if err := db.Update(func(tx *Tx) error {
					t, err := tx.Table("t")
					if err != nil {
						return err
					}
					_, err = t.Insert(nil, v)
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWriteTooBig: a row, an index key or a bucket record longer than
// SQLite's limit (1,000,000,000 bytes, which sqlite3 refuses to read) is
// refused with ErrTooBig before anything is written; the transaction goes
// on, and what it commits is all sqlite3 reads. (The values are never
// touched: a large make costs no memory until written.)
func TestWriteTooBig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.db")
	db := openChecked(t, path, nil)
	big := make([]byte, format.MaxLength+1)
	// A row of t: a 7-byte header (its length, the alias's NULL, the
	// blob's 5-byte serial type) and the blob.
	const rowHeader = 1 + 1 + 5
	err := db.Update(func(tx *Tx) error {
		if _, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, a BLOB)"); err != nil {
			return err
		}
		if _, err := tx.CreateTable("CREATE TABLE u(id INTEGER PRIMARY KEY, a BLOB, b TEXT)"); err != nil {
			return err
		}
		if _, err := tx.CreateTable("CREATE TABLE w(a BLOB PRIMARY KEY, b) WITHOUT ROWID"); err != nil {
			return err
		}
		if _, err := tx.CreateIndex("CREATE INDEX ta ON t(a)"); err != nil {
			return err
		}
		b, err := tx.CreateBucket("kv")
		if err != nil {
			return err
		}
		tb, _ := tx.Table("t")
		u, _ := tx.Table("u")
		w, _ := tx.Table("w")
		for _, tc := range []struct {
			what string
			err  error
			want string
		}{
			{"a value past the limit", ins(tb, nil, big), "row of t"},
			{"two values under it, a row over it", ins(u, nil, big[:format.MaxLength/2], big[:format.MaxLength/2]), "row of u"},
			// The key (a, rowid): rowid 5 takes a byte, the alias's NULL none.
			{"a row at the limit whose index key is past it", ins(tb, 5, big[:format.MaxLength-rowHeader]), "key of index ta"},
			{"a WITHOUT ROWID row", ins(w, big, 1), "row of w"},
			{"a bucket value", b.Put([]byte("k"), big), `bucket "kv"`},
			{"a bucket key", b.Put(big[:format.MaxLength-3], []byte("v")), `bucket "kv"`},
		} {
			if !errors.Is(tc.err, ErrTooBig) || !strings.Contains(tc.err.Error(), tc.want) || !strings.Contains(tc.err.Error(), "string or blob too big") {
				t.Errorf("%s: %v, want ErrTooBig naming %s", tc.what, tc.err, tc.want)
			}
		}
		// The transaction goes on.
		if _, err := tb.Insert(nil, []byte("small")); err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := sqlOne(t, path, "SELECT (SELECT count(*) FROM t) || ',' || (SELECT count(*) FROM u) || ',' || (SELECT count(*) FROM w) || ',' || (SELECT count(*) FROM kv)"); got != "1,0,0,1" {
		t.Errorf("rows t,u,w,kv: %s, want 1,0,0,1", got)
	}
}

func ins(t *Table, vals ...any) error {
	_, err := t.Insert(vals...)
	return err
}

// TestRandomInsertsFillLikeSQLite: rows inserted in random order leave
// the file about as small as SQLite leaves it (pages about as full: an
// overflowing page shares its cells with a neighbour before it splits),
// for a rowid table and for a bucket's keys.
func TestRandomInsertsFillLikeSQLite(t *testing.T) {
	const rows = 40000
	dir := t.TempDir()
	perm := rand.New(rand.NewPCG(7, 8)).Perm(rows)
	sqlitePath := filepath.Join(dir, "sqlite.db")
	var stmts []string
	stmts = append(stmts, "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)",
		"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID", "BEGIN")
	for _, k := range perm {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO t VALUES (%d, zeroblob(100))", k+1),
			fmt.Sprintf("INSERT INTO b VALUES (CAST(printf('%%016x', %d) AS BLOB), zeroblob(100))", k))
	}
	stmts = append(stmts, "COMMIT")
	sqltest.Exec(t, sqlitePath, stmts...)
	path := filepath.Join(dir, "pagoda.db")
	db := openChecked(t, path, nil)
	err := db.Update(func(tx *Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
		if err != nil {
			return err
		}
		b, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		for _, k := range perm {
			if err := tb.Put(int64(k+1), nil, make([]byte, 100)); err != nil {
				return err
			}
			if err := b.Put(fmt.Appendf(nil, "%016x", k), make([]byte, 100)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pages := func(table string, sdb *sql.DB) int {
		var n int
		if err := sdb.QueryRow("SELECT count(*) FROM dbstat WHERE name = ?", table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := db.Checkpoint(CheckpointTruncate); err != nil {
		t.Fatal(err)
	}
	ours, theirs := sqltest.Open(t, path), sqltest.Open(t, sqlitePath)
	for _, table := range []string{"t", "b"} {
		p, s := pages(table, ours), pages(table, theirs)
		t.Logf("%s: %d pages, SQLite's %d", table, p, s)
		if float64(p) > 1.05*float64(s) {
			t.Errorf("%s: %d pages after random inserts, SQLite's %d", table, p, s)
		}
	}
}

// BenchmarkRandomWrites is the bench's insert and delete workloads the way
// an application makes them: transactions of 1,000 random inserts into a
// table of b.N rows, durable (SyncFull), then deletes of a tenth of them;
// ns/op is per row.
func BenchmarkRandomWrites(b *testing.B) {
	for _, op := range []string{"insert", "delete"} {
		b.Run(op, func(b *testing.B) {
			db, err := Open(filepath.Join(b.TempDir(), "w.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			n := b.N
			if op == "delete" {
				n *= 10
			}
			keys := rand.New(rand.NewPCG(1, 2)).Perm(n)
			v := make([]byte, 100)
			if err := db.Update(func(tx *Tx) error {
				_, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")
				return err
			}); err != nil {
				b.Fatal(err)
			}
			write := func(keys []int, del bool) {
				for len(keys) > 0 {
					batch := keys[:min(1000, len(keys))]
					keys = keys[len(batch):]
					if err := db.Update(func(tx *Tx) error {
						t, err := tx.Table("t")
						if err != nil {
							return err
						}
						for _, k := range batch {
							if del {
								err = t.Delete(int64(k) + 1)
							} else {
								err = t.Put(int64(k)+1, nil, v)
							}
							if err != nil {
								return err
							}
						}
						return nil
					}); err != nil {
						b.Fatal(err)
					}
				}
			}
			if op == "insert" {
				b.ResetTimer()
				write(keys, false)
				return
			}
			write(keys, false)
			b.ResetTimer()
			write(keys[:b.N], true)
		})
	}
}

// TestSpillWritesFramesOnce: a transaction that changes more pages than
// its cache holds, over and over, spills each page to the WAL once and
// writes it over there when it spills it again (as SQLite does), so the
// WAL holds about as many frames as the pages it changed; their checksums,
// computed again at commit, are ones SQLite's recovery accepts (a copy of
// the files before any checkpoint, as after a crash, reads the commit).
func TestSpillWritesFramesOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "spill.db")
	const rows = 3000
	sqltest.Exec(t, path, "PRAGMA journal_mode=WAL", "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)",
		fmt.Sprintf("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<%d) INSERT INTO t SELECT x, randomblob(200) FROM c", rows))
	db, err := Open(path, &Options{CacheSize: 64 * 4096, CheckpointPages: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pages := 0
	if err := db.View(func(tx *Tx) error { pages = int(tx.PageCount()); return nil }); err != nil {
		t.Fatal(err)
	}
	want := map[int64]byte{}
	err = db.Update(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for round := range 4 {
			for k := int64(1); k <= rows; k++ {
				b := byte(round*31 + int(k))
				if err := tb.Put(k, nil, bytes.Repeat([]byte{b}, 200)); err != nil {
					return err
				}
				want[k] = b
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st := db.Stats()
	if st.Spilled == 0 {
		t.Fatal("the transaction spilled nothing")
	}
	if frames := int(st.WALFrames); frames > pages+64+8 {
		t.Errorf("%d frames in the WAL for a database of %d pages (cache of 64 pages): pages spilled again were appended", frames, pages)
	}
	cp := filepath.Join(dir, "copy.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cp+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lite := sqltest.Open(t, cp)
	rowsRead, bad := 0, 0
	r, err := lite.Query("SELECT id, v FROM t")
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var id int64
		var v []byte
		if err := r.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		rowsRead++
		if len(v) != 200 || v[0] != want[id] || v[199] != want[id] {
			bad++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if rowsRead != rows || bad != 0 {
		t.Fatalf("SQLite read %d rows of the copy (%d wrong); want %d, all of the last round", rowsRead, bad, rows)
	}
	lite.Close()
	openChecked(t, cp, nil) // DB.Check and SQLite's integrity_check at cleanup
}

// TestOnConflictClauses: constraints whose ON CONFLICT clause makes
// sqlite3 replace, ignore or roll back refuse pagoda's writes
// (ErrUnsupported), whose violated constraints fail as ABORT; ABORT and
// FAIL, which fail the one row the same way, leave the table writable.
func TestOnConflictClauses(t *testing.T) {
	for i, tc := range []struct {
		create   string
		writable bool
	}{
		{"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE ON CONFLICT REPLACE)", false},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY ON CONFLICT REPLACE, b TEXT)", false},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, UNIQUE(b) ON CONFLICT IGNORE)", false},
		{"CREATE TABLE t(a TEXT PRIMARY KEY ON CONFLICT ROLLBACK, b) WITHOUT ROWID", false},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT NOT NULL ON CONFLICT REPLACE DEFAULT 'x')", false},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT NOT NULL ON CONFLICT IGNORE)", false},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE ON CONFLICT ABORT NOT NULL ON CONFLICT FAIL)", true},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, UNIQUE(b) ON CONFLICT FAIL)", true},
	} {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("c%d.db", i))
		sqltest.Exec(t, path, tc.create)
		db := openChecked(t, path, nil)
		err := db.Update(func(tx *Tx) error {
			tb, err := tx.Table("t")
			if err != nil {
				return err
			}
			if _, err := tb.Insert(1, "v"); err != nil {
				return err
			}
			if _, err := tb.Insert(2, "v"); !errors.Is(err, ErrExists) {
				return fmt.Errorf("a duplicate of UNIQUE b: %v, want ErrExists", err)
			}
			return nil
		})
		switch {
		case tc.writable && err != nil:
			t.Errorf("%s: %v", tc.create, err)
		case !tc.writable && !errors.Is(err, ErrUnsupported):
			t.Errorf("%s: %v, want ErrUnsupported", tc.create, err)
		}
	}
}
