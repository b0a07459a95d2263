package pagoda_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// checkSQL builds a database with what DB.Check must find sound: indexes
// of every kind (NOCASE, DESC, multi-column, automatic, on a WITHOUT ROWID
// table, expression and partial ones, which it skips), rows and keys that
// overflow, an index on a column added by ALTER TABLE with a DEFAULT (old
// rows take the default in the index), a view, a trigger and a freelist.
func checkSQL(pageSize int) []string {
	return []string{
		"PRAGMA page_size=" + strconv.Itoa(pageSize),
		"CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, body BLOB, r REAL)",
		"CREATE INDEX t_name ON t(name COLLATE NOCASE DESC, r)",
		"CREATE INDEX t_expr ON t(lower(name))",
		"CREATE INDEX t_part ON t(r) WHERE r > 3",
		"CREATE TABLE w(k TEXT, n INT, v, PRIMARY KEY(n, k DESC)) WITHOUT ROWID",
		"CREATE INDEX w_v ON w(v)",
		"CREATE TABLE u(a INT PRIMARY KEY, b TEXT UNIQUE COLLATE NOCASE)",
		"CREATE TABLE junk(x)",
		"CREATE VIEW v AS SELECT id, name FROM t",
		"CREATE TRIGGER trg AFTER INSERT ON u BEGIN SELECT 1; END",
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 150)
			INSERT INTO t(name, body, r) SELECT printf('%s%d', CASE i % 2 WHEN 0 THEN 'Ab' ELSE 'aB' END, i % 40),
				CASE WHEN i % 15 = 0 THEN zeroblob(` + strconv.Itoa(3*pageSize) + `) ELSE x'01' END,
				CASE WHEN i % 9 = 0 THEN NULL ELSE (i % 8) * 1.0 END FROM c`,
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 100)
			INSERT INTO w SELECT printf('k%d', i), i % 6, CASE WHEN i % 10 = 0 THEN printf('%.2000c', 'v') ELSE i END FROM c`,
		`INSERT INTO u VALUES (1, 'x'), (2, 'Y'), (3, NULL)`,
		`INSERT INTO junk SELECT zeroblob(300) FROM t`,
		"DELETE FROM junk",
		"DELETE FROM t WHERE id % 4 = 0",
		"ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'dflt'",
		"ALTER TABLE t ADD COLUMN num INT DEFAULT -7",
		"CREATE INDEX t_extra ON t(extra, num)",
		"INSERT INTO t(name, extra) VALUES ('late', 'set')",
	}
}

// checkOpen opens path read-only, closed at cleanup.
func checkOpen(t *testing.T, path string) *pagoda.DB {
	t.Helper()
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestCheckSoundFiles(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		t.Run("sqlite-"+strconv.Itoa(ps), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sound.db")
			sqltest.Exec(t, path, checkSQL(ps)...)
			if err := checkOpen(t, path).Check(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("wal", func(t *testing.T) {
		stmts := checkSQL(4096)[1:]
		path := sqltest.WithWAL(t, stmts[:len(stmts)-4], stmts[len(stmts)-4:])
		if err := checkOpen(t, path).Check(); err != nil {
			t.Error(err)
		}
	})
	t.Run("pagoda", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "pagoda.db")
		db, err := pagoda.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.Update(func(tx *pagoda.Tx) error {
			b, err := tx.CreateBucketIfNotExists("b")
			if err != nil {
				return err
			}
			for i := range 300 {
				if err := b.Put([]byte(fmt.Sprintf("key%04d", i)), make([]byte, i*20)); err != nil {
					return err
				}
			}
			for i := 0; i < 300; i += 3 {
				if err := b.Delete([]byte(fmt.Sprintf("key%04d", i))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Check(); err != nil {
			t.Error(err)
		}
	})
}

// checkDamaged returns the problems Check finds in a copy of the database
// built by stmts, damaged by damage.
func checkDamaged(t *testing.T, stmts []string, damage func(data []byte)) *pagoda.CheckError {
	t.Helper()
	path := filepath.Join(t.TempDir(), "damaged.db")
	sqltest.Exec(t, path, stmts...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damage(data)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	err = checkOpen(t, path).Check()
	var ce *pagoda.CheckError
	if !errors.As(err, &ce) || !errors.Is(err, pagoda.ErrCorrupt) {
		t.Fatalf("Check = %v, want a *CheckError wrapping ErrCorrupt", err)
	}
	if got, want := strings.Count(err.Error(), "\n"), len(ce.Problems); got != want {
		t.Errorf("Error() has %d lines after the first, want one per problem (%d):\n%s", got, want, err)
	}
	return ce
}

func TestCheckReportsDamage(t *testing.T) {
	const pageSize = 4096
	stmts := checkSQL(pageSize)
	t.Run("freelist count", func(t *testing.T) {
		ce := checkDamaged(t, stmts, func(d []byte) {
			binary.BigEndian.PutUint32(d[36:], binary.BigEndian.Uint32(d[36:])+1)
		})
		if p := ce.Problems[0]; p.Page != 1 || !strings.Contains(p.Msg, "freelist") {
			t.Errorf("problems: %v", ce.Problems)
		}
	})
	t.Run("unreadable schema", func(t *testing.T) {
		// The first cell pointer of sqlite_schema's page 1 (after the 100-byte
		// header and the 8-byte leaf header) leaves the page: Begin cannot
		// read the catalog, Check still reports what is wrong.
		ce := checkDamaged(t, stmts, func(d []byte) {
			binary.BigEndian.PutUint16(d[108:], 0xfff0)
		})
		if p := ce.Problems[0]; p.Page != 1 || !strings.Contains(p.Msg, "out of range") {
			t.Errorf("problems: %v", ce.Problems)
		}
	})
}

func TestCheckErrorText(t *testing.T) {
	err := &pagoda.CheckError{Problems: []pagoda.Problem{{Page: 3, Msg: "never used"}, {Msg: "index i: root page 0"}}}
	want := "pagoda: check found 2 problems:\npage 3: never used\nindex i: root page 0"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if !errors.Is(err, pagoda.ErrCorrupt) {
		t.Error("CheckError does not unwrap to ErrCorrupt")
	}
}

func TestCheckClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "closed.db")
	sqltest.Exec(t, path, "CREATE TABLE t(x)")
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := db.Check(); !errors.Is(err, pagoda.ErrTxClosed) {
		t.Errorf("Check on a closed DB = %v, want ErrTxClosed", err)
	}
}

// TestCheckUTF16BlobInPartialIndex: in a UTF-16 database SQLite reads a
// BLOB that a partial index's WHERE takes for text as UTF-16; pagoda does
// not judge such a row, as for CHECKs. It reported a sound file's rows as
// missing from the index, or entries as matching no row.
func TestCheckUTF16BlobInPartialIndex(t *testing.T) {
	for _, enc := range []string{"UTF-16le", "UTF-16be"} {
		path := filepath.Join(t.TempDir(), "p.db")
		sqltest.Exec(t, path, "PRAGMA encoding='"+enc+"'",
			"CREATE TABLE t(a INTEGER PRIMARY KEY, tc TEXT, u)",
			"CREATE INDEX ix ON t(u) WHERE (tc || a)",
			"CREATE TABLE d(a INTEGER PRIMARY KEY)",
			"INSERT INTO d VALUES (1)",
			"INSERT INTO t VALUES (1, x'313233', 'p'), (2, '123', 'q'), (3, x'0031', 'r'), (4, '0', 's')",
			// A DEFAULT that is a CAST to BLOB reads as the text's bytes
			// in the database's encoding in the row older than it.
			"ALTER TABLE d ADD COLUMN b NOT NULL DEFAULT (CAST('xy' AS BLOB))")
		db := sqltest.Open(t, path)
		var ic string
		if err := db.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
			t.Fatalf("%s: fixture: integrity_check %q, %v", enc, ic, err)
		}
		db.Close()
		pdb, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := pdb.Check(); err != nil {
			t.Errorf("%s: %v", enc, err)
		}
		pdb.Close()
	}
}
