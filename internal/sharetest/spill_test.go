package sharetest

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
)

// TestSpillRolledBackThenSQLiteCommits: a pagoda write transaction larger
// than its cache writes pages past the database's end into the file
// (they are no commit's) and rolls back; then the sqlite3 shell commits,
// which after an empty WAL counts the file's pages in its commit frame, and
// pagoda commits. Page 1's size bounds the database's, as SQLite's b-tree
// layer takes it: the pages left past it are not the database's, and
// integrity_check and DB.Check pass at every step.
func TestSpillRolledBackThenSQLiteCommits(t *testing.T) {
	sqlite3Path(t)
	path := filepath.Join(t.TempDir(), "spill.db")
	sqlite3Run(t, path, "PRAGMA journal_mode=WAL; CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB); INSERT INTO t VALUES(1, x'01');")
	db, err := pagoda.Open(path, &pagoda.Options{CacheSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check := func(when string, rows string) {
		t.Helper()
		if got := sqlite3Run(t, path, "PRAGMA integrity_check; SELECT count(*) FROM t;"); strings.Join(got, " ") != "ok "+rows {
			t.Fatalf("%s: sqlite3 says %q, want ok and %s rows", when, got, rows)
		}
		if err := db.Check(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
	}
	abort := errors.New("abort")
	err = db.Update(func(tx *pagoda.Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for range 300 {
			if _, err := tb.Insert(nil, make([]byte, 800)); err != nil {
				return err
			}
		}
		return abort
	})
	if !errors.Is(err, abort) {
		t.Fatalf("Update: %v", err)
	}
	if st := db.Stats(); st.Spilled == 0 {
		t.Fatal("the transaction did not spill: the test tests nothing")
	}
	check("after the rollback", "1")
	sqlite3Run(t, path, "INSERT INTO t(b) VALUES(x'02');")
	check("after sqlite3's commit", "2")
	err = db.Update(func(tx *pagoda.Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		_, err = tb.Insert(nil, []byte{3})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	check("after pagoda's commit", "3")
	if _, err := db.Checkpoint(pagoda.CheckpointTruncate); err != nil {
		t.Fatal(err)
	}
	check("after a checkpoint", "3")
}
