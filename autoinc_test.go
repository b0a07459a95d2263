package pagoda

import (
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

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
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
