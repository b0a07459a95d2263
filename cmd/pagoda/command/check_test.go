package command

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	path, sdb := fixture(t)
	sdb.Close()
	if out := mustRun(t, "check", path); out != "ok\n" {
		t.Errorf("check of a sound file printed %q, want ok", out)
	}

	// Two problems: the header counts a freelist page that does not exist,
	// and page 2's fragment count is wrong.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	binary.BigEndian.PutUint32(data[36:], binary.BigEndian.Uint32(data[36:])+1)
	data[pageSize+7] += 2
	bad := filepath.Join(t.TempDir(), "bad.db")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	root := NewRoot()
	var o, e bytes.Buffer
	root.SetArgs([]string{"check", bad})
	root.SetOut(&o)
	root.SetErr(&e)
	if code := execute(root); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	lines := strings.Split(strings.TrimSuffix(o.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "page 2: ") || !strings.HasPrefix(lines[1], "page 1: the freelist has") {
		t.Errorf("stdout:\n%s\nwant a line for page 2 then one for page 1", o.String())
	}
	if got, want := e.String(), "pagoda: "+bad+": 2 problems found\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}

	out, _, err := run(t, "check", filepath.Join(t.TempDir(), "missing.db"))
	if err == nil || out != "" {
		t.Errorf("check of a missing file: err %v, stdout %q", err, out)
	}
}
