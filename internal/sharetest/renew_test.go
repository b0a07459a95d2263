package sharetest

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
)

// TestRenewLetsWALRestart: a pagoda reader that renews its transaction
// (Tx.Renew) after a checkpoint copied every frame reads on READ(0), as a
// new read transaction would, so that a sqlite3 writer beside it starts
// the WAL over instead of appending to it behind the reader's read mark.
func TestRenewLetsWALRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "renew.db")
	sqlite3Run(t, path, "PRAGMA journal_mode=WAL; CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB);")
	sh := sqliteShell(t, "sqlite3 writer", path, 2*time.Second)
	defer sh.stop(5 * time.Second)
	query := func(sql string) []string {
		t.Helper()
		out, err := sh.query(sql, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	query("PRAGMA wal_autocheckpoint=0;")
	for range 10 {
		query("INSERT INTO t(b) VALUES(randomblob(100));")
	}
	db, err := pagoda.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	count := func() int64 {
		t.Helper()
		tb, err := tx.Table("t")
		if err != nil {
			t.Fatal(err)
		}
		n, err := tb.Count()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 10 {
		t.Fatalf("%d rows, want 10", n)
	}
	// busy|frames|copied: every frame copied, the reader's mark being the
	// last commit's.
	if got := query("PRAGMA wal_checkpoint(PASSIVE);"); len(got) != 1 || !strings.HasPrefix(got[0], "0|") {
		t.Fatalf("checkpoint: %q", got)
	}
	if _, err := tx.Renew(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 10 {
		t.Fatalf("%d rows after Renew, want 10", n)
	}
	// The writer starts the WAL over: it then holds this commit's frames
	// alone, not the ten commits' before them as well.
	got := query("INSERT INTO t(b) VALUES(x'01'); PRAGMA wal_checkpoint(PASSIVE);")
	f := strings.Split(got[len(got)-1], "|")
	if len(f) != 3 {
		t.Fatalf("checkpoint: %q", got)
	}
	if frames, err := strconv.Atoi(f[1]); err != nil || frames > 3 {
		t.Fatalf("the WAL after the insert: %q (busy|frames|copied), want the insert's frames alone", got)
	}
	if _, err := tx.Renew(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 11 {
		t.Fatalf("%d rows after the insert, want 11", n)
	}
}
