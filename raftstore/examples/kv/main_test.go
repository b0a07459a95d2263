package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/dbtest"
)

// TestRun runs the example: three nodes over loopback TCP, a failover and
// a restart; every node ends with every key, and its files are sound.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(dir, 100, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got := strings.Count(out.String(), ": 200 keys"); got != 3 {
		t.Errorf("%d nodes report 200 keys:\n%s", got, out.String())
	}
	for _, id := range []string{"n1", "n2", "n3"} {
		dbtest.Check(t, filepath.Join(dir, id, "fsm.db"))
		dbtest.Check(t, filepath.Join(dir, id, "raft.db"))
	}
}
