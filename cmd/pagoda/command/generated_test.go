package command

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestScanGenerated: scan and get print VIRTUAL generated columns as
// sqlite3 computes them; a column pagoda does not compute stops them with
// ErrUnsupported before its row, which is never printed with a NULL that
// is not SQLite's.
func TestScanGenerated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.db")
	sqltest.Exec(t, path,
		"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c AS (b || 'x'), d AS (json_quote(b)))",
		"INSERT INTO t(a, b) VALUES (1, 'hi'), (2, NULL)",
		"CREATE TABLE ok(a INTEGER PRIMARY KEY, b TEXT, c AS (upper(b)) VIRTUAL, d AS (length(b)) STORED)",
		"INSERT INTO ok(a, b) VALUES (1, 'hé'), (2, NULL)",
	)
	if got, want := mustRun(t, "scan", path, "ok", "--json"), "[1,\"hé\",\"Hé\",2]\n[2,null,null,null]\n"; got != want {
		t.Errorf("scan ok: %q, want %q", got, want)
	}
	for _, args := range [][]string{{"scan", path, "t", "--json"}, {"scan", path, "t"}, {"get", path, "t", "1"}} {
		stdout, _, err := run(t, args...)
		if !errors.Is(err, pagoda.ErrUnsupported) || stdout != "" {
			t.Errorf("%v: printed %q, error %v; want nothing and ErrUnsupported", args, stdout, err)
		}
	}
}
