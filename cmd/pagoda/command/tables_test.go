package command

import (
	"strings"
	"testing"
)

func TestTables(t *testing.T) {
	path, sdb := fixture(t)
	var want strings.Builder
	for _, row := range sqliteRows(t, sdb, "SELECT name FROM sqlite_schema WHERE type='table' ORDER BY rowid") {
		want.WriteString(row[0].(string) + "\n")
	}
	if got := mustRun(t, "tables", path); got != want.String() {
		t.Errorf("tables:\n%s\nwant\n%s", got, want.String())
	}
}
