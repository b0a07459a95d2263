package pagoda

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// sqliteDump returns every row of every table of the file at path, read by
// SQLite, one line per row, tables in name order, rows in key order; and
// checks that PRAGMA integrity_check says ok.
func sqliteDump(t *testing.T, path string) string {
	t.Helper()
	db := sqltest.Open(t, path)
	defer db.Close()
	var ic string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
		t.Fatalf("%s: integrity_check: %q %v", path, ic, err)
	}
	rows, err := db.Query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	var b strings.Builder
	for _, n := range names {
		rs, err := db.Query(fmt.Sprintf(`SELECT * FROM "%s" ORDER BY 1`, n))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rs.Next() {
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s: %v\n", n, vals)
		}
		rs.Close()
	}
	var schemaRows []string
	rs, err := db.Query("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var a, c, d, e string
		if err := rs.Scan(&a, &c, &d, &e); err != nil {
			t.Fatal(err)
		}
		schemaRows = append(schemaRows, strings.Join([]string{a, c, d, e}, "|"))
	}
	rs.Close()
	return strings.Join(schemaRows, "\n") + "\n" + b.String()
}

// backupSource makes a file with SQLite: tables pagoda can write and
// tables it cannot (AUTOINCREMENT, CHECK), indexes with collations and
// DESC, a WITHOUT ROWID table, values overflowing several pages, and a
// freelist left by deletes.
func backupSource(t *testing.T, pageSize int) string {
	path := filepath.Join(t.TempDir(), "src.db")
	stmts := []string{
		fmt.Sprintf("PRAGMA page_size=%d", pageSize),
		"PRAGMA user_version=42",
		"PRAGMA application_id=7",
		"CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v BLOB, score REAL)",
		"CREATE INDEX t_name ON t(name COLLATE NOCASE DESC, score)",
		"CREATE TABLE seq(id INTEGER PRIMARY KEY AUTOINCREMENT, x TEXT CHECK (length(x) < 100))",
		"CREATE TABLE w(a TEXT, b INT, c BLOB, PRIMARY KEY (b DESC, a)) WITHOUT ROWID",
		"CREATE INDEX w_c ON w(c)",
		"CREATE VIEW tv AS SELECT id, name FROM t",
		"CREATE TRIGGER tr AFTER INSERT ON seq BEGIN SELECT 1; END",
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 600)
		 INSERT INTO t SELECT i, 'name' || (i % 37), randomblob(CASE WHEN i % 50 = 0 THEN 3 * ` + fmt.Sprint(pageSize) + ` ELSE i % 300 END), i * 0.5 FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200)
		 INSERT INTO seq(x) SELECT 'x' || i FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 400)
		 INSERT INTO w SELECT 'a' || (i % 7), i, randomblob(i % 90) FROM n`,
		"DELETE FROM t WHERE id % 3 = 0",
		"DELETE FROM seq WHERE id > 150",
	}
	sqltest.Exec(t, path, stmts...)
	return path
}

func fileHeader(t *testing.T, path string) format.Header {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return format.Header(b[:format.HeaderSize])
}

// TestBackupAndCompact copies a SQLite-written file with Backup and
// Compact and checks that SQLite reads the copies with the same rows, and
// that the compacted copy has no free pages and is no larger.
func TestBackupAndCompact(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			src := backupSource(t, ps)
			want := sqliteDump(t, src)
			db := openChecked(t, src, nil)
			// A commit that stays in the WAL: the copies must include it.
			mustUpdate(t, db, func(tx *Tx) error {
				tb, err := tx.Table("t")
				if err != nil {
					return err
				}
				_, err = tb.Insert(int64(10_000), "wal row", []byte("v"), 1.5)
				return err
			})
			dir := t.TempDir()
			bk, cp := filepath.Join(dir, "backup.db"), filepath.Join(dir, "compact.db")
			if err := db.Backup(bk); err != nil {
				t.Fatal(err)
			}
			if err := db.Compact(cp); err != nil {
				t.Fatal(err)
			}
			got := sqliteDump(t, bk)
			if !strings.Contains(got, "wal row") {
				t.Fatal("the backup lacks the commit that was in the WAL")
			}
			if c := sqliteDump(t, cp); c != got {
				t.Fatalf("compacted copy differs from the backup:\n%s\nvs\n%s", c, got)
			}
			if strings.Replace(got, "t: [10000 wal row [118] 1.5]\n", "", 1) != want {
				t.Errorf("backup differs from the source")
			}
			bh, ch := fileHeader(t, bk), fileHeader(t, cp)
			if ch.FreelistCount() != 0 {
				t.Errorf("compacted copy has %d free pages", ch.FreelistCount())
			}
			if ch.DatabaseSize() > bh.DatabaseSize()-bh.FreelistCount() {
				t.Errorf("compacted copy has %d pages, the source %d of which %d free", ch.DatabaseSize(), bh.DatabaseSize(), bh.FreelistCount())
			}
			if ch.UserVersion() != 42 || ch.ApplicationID() != 7 || ch.PageSize() != ps {
				t.Errorf("compacted header: user_version %d, application_id %d, page size %d", ch.UserVersion(), ch.ApplicationID(), ch.PageSize())
			}
			for _, p := range []string{bk, cp} {
				c, err := Open(p, &Options{ReadOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Check(); err != nil {
					t.Errorf("%s: %v", p, err)
				}
				c.Close()
			}
			if err := db.Backup(bk); !errors.Is(err, ErrExists) {
				t.Errorf("Backup over an existing file: %v, want ErrExists", err)
			}
			if err := db.Compact(bk); !errors.Is(err, ErrExists) {
				t.Errorf("Compact over an existing file: %v, want ErrExists", err)
			}
			if n, _ := filepath.Glob(filepath.Join(dir, ".*")); len(n) != 0 {
				t.Errorf("temporary files left behind: %v", n)
			}
		})
	}
}

// TestBackupWhileWriting takes backups while a writer commits transfers
// between accounts: every copy must hold the total, and a whole number of
// transactions.
func TestBackupWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bank.db")
	db := openChecked(t, path, &Options{CheckpointPages: 64})
	const accounts, total = 50, 50 * 1000
	mustUpdate(t, db, func(tx *Tx) error {
		tb, err := tx.CreateTable("CREATE TABLE acct(id INTEGER PRIMARY KEY, bal INT, pad BLOB)")
		if err != nil {
			return err
		}
		for i := range accounts {
			if _, err := tb.Insert(int64(i+1), 1000, bytes.Repeat([]byte{byte(i)}, 700)); err != nil {
				return err
			}
		}
		return nil
	})
	stop := make(chan struct{})
	var commits atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := db.Update(func(tx *Tx) error {
				tb, err := tx.Table("acct")
				if err != nil {
					return err
				}
				from, to := int64(i%accounts+1), int64((i*7+1)%accounts+1)
				if from == to {
					return nil
				}
				a, err := tb.Get(from)
				if err != nil {
					return err
				}
				b, err := tb.Get(to)
				if err != nil {
					return err
				}
				av, bv := a.Column(1).Int()-3, b.Column(1).Int()+3
				pad := bytes.Repeat([]byte{byte(i)}, 700+i%500)
				if err := tb.Put(from, nil, av, pad); err != nil {
					return err
				}
				return tb.Put(to, nil, bv, pad)
			})
			if err != nil {
				t.Error(err)
				return
			}
			commits.Add(1)
		}
	}()
	dir := t.TempDir()
	for i := range 8 {
		for n := commits.Load(); commits.Load() < n+20; {
			time.Sleep(time.Millisecond) // let the writer move on
		}
		p := filepath.Join(dir, fmt.Sprintf("b%d.db", i))
		var err error
		if i%2 == 0 {
			err = db.Backup(p)
		} else {
			err = db.Compact(p)
		}
		if err != nil {
			t.Fatal(err)
		}
		sum := sqlOne(t, p, "SELECT sum(bal) FROM acct")
		if sum != fmt.Sprint(total) {
			t.Errorf("copy %d: balances sum to %s, want %d", i, sum, total)
		}
		if ic := sqlOne(t, p, "PRAGMA integrity_check"); ic != "ok" {
			t.Errorf("copy %d: %s", i, ic)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d commits beside 8 copies", commits.Load())
}

func TestWriteToInWriteTx(t *testing.T) {
	db := openBatchDB(t)
	err := db.Update(func(tx *Tx) error {
		_, err := tx.WriteTo(&bytes.Buffer{})
		return err
	})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("WriteTo in a write transaction: %v, want ErrUnsupported", err)
	}
}

// TestCompactDamagedRecord: a malformed record, a row's or an index
// entry's, stops Compact with an error wrapping ErrCorrupt that names its
// page, and no file is made. The row was copied as it was, into a file
// that SQLite finds malformed; the entry failed with an error naming no
// page.
func TestCompactDamagedRecord(t *testing.T) {
	for _, c := range []struct {
		name string
		cell []byte // the damaged record's start: its header length is made 0x7f
		page uint32
	}{
		{"row", []byte{3, 0, 21, 'r', 'o', 'w', '5'}, 2},
		{"index entry", []byte{3, 21, 1, 'r', 'o', 'w', '5'}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.db")
			stmts := []string{"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)", "CREATE INDEX tb ON t(b)"}
			for i := 1; i <= 9; i++ {
				stmts = append(stmts, fmt.Sprintf("INSERT INTO t VALUES (%d, 'row%d')", i, i))
			}
			sqltest.Exec(t, path, stmts...)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			i := bytes.Index(data, c.cell)
			if i < 0 {
				t.Fatal("the record is not in the file")
			}
			data[i] = 0x7f
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			db, err := Open(path, &Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dst := filepath.Join(t.TempDir(), "c.db")
			var ce *format.CorruptError
			if err := db.Compact(dst); !errors.As(err, &ce) || ce.Page != c.page {
				t.Errorf("Compact: %v, want a corruption error naming page %d", err, c.page)
			}
			if _, err := os.Stat(dst); err == nil {
				t.Error("Compact made the file")
			}
		})
	}
}

// TestCopiesFileMode: Backup and Compact create their files as Open
// creates a database, 0644 less the umask (not CreateTemp's 0600).
func TestCopiesFileMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "src.db")
	db := openChecked(t, path, nil)
	mustUpdate(t, db, func(tx *Tx) error {
		_, err := tx.CreateBucket("b")
		return err
	})
	if err := db.Backup(filepath.Join(dir, "backup.db")); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(filepath.Join(dir, "compact.db")); err != nil {
		t.Fatal(err)
	}
	want, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"backup.db", "compact.db"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != want.Mode() {
			t.Errorf("%s: mode %v, want %v as Open makes", name, st.Mode(), want.Mode())
		}
	}
}
