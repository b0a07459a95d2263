package command

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

func TestInfo(t *testing.T) {
	path, sdb := fixture(t)
	out := mustRun(t, "info", path)
	field := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `: +(.*)$`).FindStringSubmatch(out)
		if m == nil {
			t.Errorf("no %q line in\n%s", name, out)
			return ""
		}
		return m[1]
	}
	pragma := func(name string) string {
		return strconv.FormatInt(sqliteRows(t, sdb, "PRAGMA "+name)[0][0].(int64), 10)
	}
	for name, want := range map[string]string{
		"page size":               pragma("page_size"),
		"page count":              pragma("page_count"),
		"database size in header": pragma("page_count") + " pages",
		"write format":            "1 (legacy)",
		"read format":             "1 (legacy)",
		"freelist pages":          pragma("freelist_count"),
		"schema cookie":           pragma("schema_version"),
		"text encoding":           "1 (utf8)",
		"user version":            "0",
		"application id":          "0",
		"wal frames":              "0",
		"auto-vacuum":             "none",
	} {
		if got := field(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	var version string
	if err := sdb.QueryRow("SELECT sqlite_version()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if got := field("sqlite version"); !strings.HasPrefix(got, version+" (") {
		t.Errorf("sqlite version %q, want %s", got, version)
	}

	// Each table's row count and each index's entry count, in schema order.
	counts := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 4 && strings.HasPrefix(line, "  ") && (f[2] == "rows" || f[2] == "entries") {
			counts[f[0]] = f[1] + " " + f[2] + " " + strings.Join(f[3:], " ")
		}
	}
	for _, row := range sqliteRows(t, sdb, "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'index')") {
		name, typ := row[0].(string), row[1].(string)
		var n int64
		q := `SELECT count(*) FROM "` + name + `"`
		if typ == "index" {
			tbl := sqliteRows(t, sdb, "SELECT tbl_name FROM sqlite_schema WHERE name = '"+name+"'")[0][0].(string)
			q = `SELECT count(*) FROM "` + tbl + `" INDEXED BY "` + name + `"`
			if strings.HasPrefix(name, "sqlite_autoindex") {
				q = `SELECT count(*) FROM "` + tbl + `"`
			}
		}
		if err := sdb.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		want := strconv.FormatInt(n, 10) + " rows table"
		switch {
		case typ == "index":
			want = strconv.FormatInt(n, 10) + " entries index"
		case name == "b":
			want = strconv.FormatInt(n, 10) + " rows bucket"
		case name == "wr" || name == "wi":
			want = strconv.FormatInt(n, 10) + " rows table, without rowid"
		}
		if counts[name] != want {
			t.Errorf("%s: %q, want %q", name, counts[name], want)
		}
	}
}

func TestSQLiteVersion(t *testing.T) {
	for n, want := range map[uint32]string{3040001: "3.40.1 (3040001)", 3046000: "3.46.0 (3046000)", 0: "0 (unset)"} {
		if got := sqliteVersion(n); got != want {
			t.Errorf("sqliteVersion(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestInfoEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "info", path)
	if !strings.Contains(out, "page count:") || !strings.Contains(out, "0 tables") {
		t.Errorf("info on an empty file:\n%s", out)
	}
	if out := mustRun(t, "tables", path); out != "" {
		t.Errorf("tables on an empty file: %q", out)
	}
}

// TestInfoAutoVacuum: info names an auto-vacuum file's mode.
func TestInfoAutoVacuum(t *testing.T) {
	for mode, want := range map[string]string{"FULL": "full (largest root page 3;", "INCREMENTAL": "incremental (largest root page 3;"} {
		path := filepath.Join(t.TempDir(), "av.db")
		sqltest.Exec(t, path, "PRAGMA auto_vacuum="+mode, "CREATE TABLE t(a)")
		out := mustRun(t, "info", path)
		if !strings.Contains(out, "auto-vacuum:") || !strings.Contains(out, want) {
			t.Errorf("%s: info says\n%s\nwant an auto-vacuum line with %q", mode, out, want)
		}
	}
}

// TestInfoVirtualTables: a virtual table has no b-tree to count. info shows
// it with its module, counts and marks its shadow tables, and exits 0;
// scan refuses it with ErrUnsupported's message.
func TestInfoVirtualTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vt.db")
	sqltest.Exec(t, path,
		"CREATE TABLE plain(a)",
		"INSERT INTO plain VALUES (1), (2)",
		"CREATE VIRTUAL TABLE docs USING fts5(title, body)",
		"INSERT INTO docs VALUES ('a', 'hello world'), ('b', 'more words')",
		"CREATE VIRTUAL TABLE boxes USING rtree(id, x0, x1)",
		"INSERT INTO boxes VALUES (1, 0, 1)",
		"CREATE TABLE docs_extra(a)", // not one of fts5's shadow names
	)
	out := mustRun(t, "info", path)
	lines := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(line, "  ") {
			lines[f[0]] = strings.Join(f[1:], " ")
		}
	}
	for name, want := range map[string]string{
		"plain":        "2 rows table",
		"docs":         "- virtual table (fts5)",
		"docs_content": "2 rows table, shadow of docs",
		"docs_docsize": "2 rows table, shadow of docs",
		"docs_config":  "1 rows table, without rowid, shadow of docs",
		"docs_extra":   "0 rows table",
		"boxes":        "- virtual table (rtree)",
		"boxes_node":   "1 rows table, shadow of boxes",
		"boxes_rowid":  "1 rows table, shadow of boxes",
	} {
		if lines[name] != want {
			t.Errorf("%s: %q, want %q\n%s", name, lines[name], want, out)
		}
	}
	_, _, err := run(t, "scan", path, "docs")
	if !errors.Is(err, pagoda.ErrUnsupported) || !strings.Contains(err.Error(), "virtual table using fts5") {
		t.Errorf("scan of a virtual table: %v, want ErrUnsupported naming the module", err)
	}
}
