package command

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// The commands that read work on UTF-16 databases as on UTF-8 ones, text
// printed as UTF-8; the commands that write refuse them, and the file is
// left as it was.
func TestUTF16Commands(t *testing.T) {
	for _, enc := range []string{"UTF-16le", "UTF-16be"} {
		t.Run(enc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "u16.db")
			sqltest.Exec(t, path, "PRAGMA encoding='"+enc+"'",
				"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c)",
				"INSERT INTO t VALUES (1, 'héllo 😀', 'x'), (2, NULL, x'00ff'), (3, '"+strings.Repeat("long ü ", 2000)+"', 3)",
				"CREATE INDEX tb ON t(b)",
				"CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID",
				"INSERT INTO w VALUES ('clé', 'vàl'), ('😀', 2)")
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if out := mustRun(t, "info", path); !strings.Contains(out, "utf16") || !strings.Contains(out, "tb") {
				t.Errorf("info:\n%s", out)
			}
			if out := mustRun(t, "tables", path); !strings.Contains(out, "t") || !strings.Contains(out, "w") {
				t.Errorf("tables:\n%s", out)
			}
			if out := mustRun(t, "schema", path); !strings.Contains(out, "CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID") {
				t.Errorf("schema:\n%s", out)
			}
			out := mustRun(t, "scan", path, "t", "--json")
			if lines := strings.Split(out, "\n"); len(lines) != 4 || lines[0] != `[1,"héllo 😀","x"]` || lines[1] != `[2,null,{"blob":"00ff"}]` {
				t.Errorf("scan --json:\n%.300s", out)
			}
			if out := mustRun(t, "get", path, "t", "1"); strings.TrimSpace(out) != `[1,"héllo 😀","x"]` {
				t.Errorf("get t 1: %s", out)
			}
			if out := mustRun(t, "get", path, "w", "clé"); strings.TrimSpace(out) != `["clé","vàl"]` {
				t.Errorf("get w clé: %s", out)
			}
			if out := mustRun(t, "get", path, "w", "😀"); strings.TrimSpace(out) != `["😀",2]` {
				t.Errorf("get w 😀: %s", out)
			}
			if out := mustRun(t, "pages", path); !strings.Contains(out, "overflow") {
				t.Errorf("pages:\n%s", out)
			}
			if out := mustRun(t, "check", path); strings.TrimSpace(out) != "ok" {
				t.Errorf("check: %s", out)
			}
			_, _, err = run(t, "put", path, "w", "new", "value")
			if !errors.Is(err, pagoda.ErrUnsupported) || !strings.Contains(err.Error(), "UTF-8") {
				t.Errorf("put: %v, want ErrUnsupported", err)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the file changed")
			}
		})
	}
}
