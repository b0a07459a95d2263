package pagoda

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestHotJournalRowsLikeSQLite: a database that sqlite3 left mid-transaction
// in rollback-journal mode reads as its last commit, read-only (the
// journal's pages over the file's, nothing written) and writable (rolled
// back in the file, the journal deleted), and sqlite3 finds the result
// sound.
func TestHotJournalRowsLikeSQLite(t *testing.T) {
	crashed, committed := sqltest.WithHotJournal(t, 1024,
		[]string{
			"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)",
			"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<2000) INSERT INTO t SELECT i, 'committed-' || i FROM c",
		},
		[]string{
			"UPDATE t SET b = 'UNCOMMITTED-' || a",
			"DELETE FROM t WHERE a > 1500",
			"CREATE TABLE u(x)",
		})
	if a, b := readBytes(t, crashed), readBytes(t, committed); string(a[:min(len(a), len(b))]) == string(b[:min(len(a), len(b))]) {
		t.Fatal("fixture: SQLite wrote no uncommitted page into the file; the test would prove nothing")
	}
	lite := sqltest.Open(t, committed)
	want := sqltest.Rows(t, lite, "SELECT a, b FROM t ORDER BY a")
	lite.Close()

	read := func(path string, opts *Options) (rows, tables []string) {
		t.Helper()
		db, err := Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.View(func(tx *Tx) error {
			tb, err := tx.Table("t")
			if err != nil {
				return err
			}
			for rowid, rec := range tb.All() {
				rows = append(rows, fmt.Sprintf("%d|%s", rowid, rec.Column(1).Text()))
			}
			tables = tx.TableNames()
			return tx.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		return rows, tables
	}
	for _, ro := range []bool{true, false} {
		t.Run(fmt.Sprintf("read-only %v", ro), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			sqltest.CopyFile(t, crashed, path, false)
			sqltest.CopyFile(t, crashed+"-journal", path+"-journal", false)
			rows, tables := read(path, &Options{ReadOnly: ro})
			if !slices.Equal(rows, want) {
				t.Errorf("%d rows, want %d (first %q, want %q)", len(rows), len(want), rows[:min(1, len(rows))], want[0])
			}
			if slices.Contains(tables, "u") {
				t.Error("the uncommitted table u is read")
			}
			_, err := os.Stat(path + "-journal")
			if journal := err == nil; journal != ro {
				t.Errorf("journal left: %v", journal)
			}
			if !ro {
				got := sqltest.Rows(t, sqltest.Open(t, path), "PRAGMA integrity_check")
				if len(got) != 1 || got[0] != "ok" {
					t.Errorf("integrity_check after the rollback: %v", got)
				}
			}
		})
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
