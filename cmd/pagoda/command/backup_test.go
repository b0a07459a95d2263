package command

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestBackupAndCompact(t *testing.T) {
	path, sdb := fixture(t)
	sdb.Close()
	dir := t.TempDir()
	bk, cp := filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")
	if out := mustRun(t, "backup", path, bk); !strings.Contains(out, "backed up to") {
		t.Errorf("backup printed %q", out)
	}
	if out := mustRun(t, "compact", path, cp); !strings.Contains(out, "compacted to") {
		t.Errorf("compact printed %q", out)
	}
	for _, p := range []string{bk, cp} {
		if out := mustRun(t, "check", p); out != "ok\n" {
			t.Errorf("check %s: %q", p, out)
		}
		for _, table := range []string{"all_types", "ipk", "wr", "wi", "b"} {
			if a, b := mustRun(t, "scan", path, table, "--json"), mustRun(t, "scan", p, table, "--json"); a != b {
				t.Errorf("%s: scan of %s differs from the source", p, table)
			}
		}
	}
	if _, _, err := run(t, "backup", path, bk); err == nil {
		t.Error("backup over an existing file succeeded")
	}
}
