package command

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func TestSchema(t *testing.T) {
	path, sdb := fixture(t)
	var want strings.Builder
	for _, row := range sqliteRows(t, sdb, "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY rowid") {
		want.WriteString(schemaLine(row[0].(string)))
	}
	got := mustRun(t, "schema", path)
	if got != want.String() {
		t.Errorf("schema:\n%s\nwant\n%s", got, want.String())
	}
	for _, s := range []string{
		"CREATE TABLE IF NOT EXISTS \"b\"(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID;\n",
		"CREATE TABLE IF NOT EXISTS 'sq'(x);\n",
		"CREATE TRIGGER trg AFTER INSERT ON cmt BEGIN SELECT 1; END;\n",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("schema has no %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "autoindex") {
		t.Errorf("schema lists an automatic index:\n%s", got)
	}

	// The real thing, where installed. sqlite3 also prints a comment with
	// each view's columns, which pagoda does not.
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("no sqlite3 on PATH")
	}
	out, err := exec.Command(sqlite3, path, ".schema").Output()
	if err != nil {
		t.Fatalf("sqlite3 .schema: %v", err)
	}
	viewComment := regexp.MustCompile(`\n/\* [^\n]* \*/;\n`)
	if sq := viewComment.ReplaceAllString(string(out), ";\n"); got != sq {
		t.Errorf("schema:\n%s\nsqlite3 .schema (view comments removed):\n%s", got, sq)
	}
}

func TestSchemaLine(t *testing.T) {
	for sql, want := range map[string]string{
		`CREATE TABLE t(x)`:               "CREATE TABLE t(x);\n",
		`CREATE TABLE "t"(x)`:             "CREATE TABLE IF NOT EXISTS \"t\"(x);\n",
		`CREATE TABLE 't'(x)`:             "CREATE TABLE IF NOT EXISTS 't'(x);\n",
		`CREATE TABLE [t](x)`:             "CREATE TABLE [t](x);\n",
		`create table "t"(x)`:             "create table \"t\"(x);\n",
		"CREATE TABLE t(x) -- note":       "CREATE TABLE t(x) -- note\n;\n",
		"CREATE TABLE t(x) /* note":       "CREATE TABLE t(x) /* note*/;\n",
		"CREATE TABLE t(x) /* a */":       "CREATE TABLE t(x) /* a */;\n",
		"CREATE TABLE t(x, '--', \"/*\")": "CREATE TABLE t(x, '--', \"/*\");\n",
		"CREATE TABLE t(x -- a\n)":        "CREATE TABLE t(x -- a\n);\n",
		"CREATE TABLE t(x 'unterminated":  "CREATE TABLE t(x 'unterminated;\n",
	} {
		if got := schemaLine(sql); got != want {
			t.Errorf("schemaLine(%q) = %q, want %q", sql, got, want)
		}
	}
}
