package command

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"
	"github.com/pagodadb/pagoda/internal/sqltest"
	_ "github.com/pagodadb/pagoda/internal/sqltest" // the "sqlite" driver: SQLite itself, the oracle

	"github.com/pagodadb/pagoda"
)

// fixtureSQL builds a database with every storage class, an INTEGER
// PRIMARY KEY table with an index, WITHOUT ROWID tables, a bucket, a view,
// a trigger and an automatic index.
var fixtureSQL = []string{
	`CREATE TABLE all_types(a, b INTEGER, c REAL, d TEXT, e BLOB)`,
	`INSERT INTO all_types VALUES (NULL, NULL, NULL, NULL, NULL)`,
	`INSERT INTO all_types VALUES (-9223372036854775808, 9223372036854775807, 3.0,
		'héllo "quoted" \ back' || char(10) || 'line 2 ☃ 𝄞', x'00ff10')`,
	`INSERT INTO all_types VALUES (0.1, 1e300, 0.1, '', x'')`,
	`INSERT INTO all_types VALUES ('text in a', -1, -2.5e-300, 'ctl' || char(1, 9, 13, 127), zeroblob(3))`,
	`INSERT INTO all_types VALUES (x'0102', 1.5, 1e300, CAST(x'ff41' AS TEXT), 7)`,
	`INSERT INTO all_types VALUES (printf('%.6000c', 'z'), 0, 12, 'big blob next', randomblob(9000))`,
	`CREATE TABLE ipk(id INTEGER PRIMARY KEY, name TEXT UNIQUE)`,
	`INSERT INTO ipk VALUES (1, 'one'), (5, 'five'), (-3, 'minus three'), (9223372036854775807, 'max')`,
	`CREATE INDEX ipk_name ON ipk(name DESC)`,
	`CREATE TABLE wr(k TEXT PRIMARY KEY, n INTEGER, r REAL) WITHOUT ROWID`,
	`INSERT INTO wr VALUES ('b', 2, 2.5), ('a', 1, 1), ('c', NULL, NULL)`,
	`CREATE TABLE wi(k INTEGER PRIMARY KEY, v) WITHOUT ROWID`,
	`INSERT INTO wi VALUES (7, 'seven'), (-1, x'ff')`,
	`CREATE TABLE "b"(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`,
	`INSERT INTO b VALUES (CAST('alpha' AS BLOB), CAST('first value' AS BLOB)),
		(CAST('beta' AS BLOB), x'00010203'), (x'00', CAST('zero' AS BLOB)), (x'', x'')`,
	`CREATE TABLE 'sq'(x)`,
	"CREATE TABLE cmt(x /* block */, y -- line\n)",
	`CREATE VIEW v AS SELECT id, name FROM ipk`,
	`CREATE TRIGGER trg AFTER INSERT ON cmt BEGIN SELECT 1; END`,
}

// fixture builds the fixture database in a temporary directory and
// returns its path and a SQLite handle on it.
func fixture(t *testing.T) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.db")
	sdb := sqliteDB(t, path)
	for _, s := range fixtureSQL {
		if _, err := sdb.Exec(s); err != nil {
			t.Fatalf("sqlite: %s: %v", s, err)
		}
	}
	return path, sdb
}

// sqliteDB opens path with SQLite, one connection, closed at cleanup.
func sqliteDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	sdb, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	sdb.SetMaxOpenConns(1)
	t.Cleanup(func() { sdb.Close() })
	return sdb
}

// run runs the pagoda command line args in-process.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := NewRoot()
	var o, e bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&o)
	root.SetErr(&e)
	err = root.Execute()
	return o.String(), e.String(), err
}

// mustRun runs args and fails the test on error.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, _, err := run(t, args...)
	if err != nil {
		t.Fatalf("pagoda %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func TestExecuteReportsErrors(t *testing.T) {
	path, _ := fixture(t)
	root := NewRoot()
	var o, e bytes.Buffer
	root.SetArgs([]string{"get", path, "ipk", "2"})
	root.SetOut(&o)
	root.SetErr(&e)
	if code := execute(root); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if o.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", o.String())
	}
	if got, want := e.String(), "pagoda: ipk: key \"2\" not found\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}

	root = NewRoot()
	root.SetArgs([]string{"tables", path})
	root.SetOut(&o)
	root.SetErr(&e)
	o.Reset()
	e.Reset()
	if code := execute(root); code != 0 || e.Len() != 0 {
		t.Errorf("exit code %d, stderr %q; want 0 and nothing", code, e.String())
	}
}

func TestExtraCommands(t *testing.T) {
	old := extraCommands
	defer func() { extraCommands = old }()
	extraCommands = append(extraCommands, func() *cli.Command {
		return &cli.Command{Use: "hello", RunE: func(cmd *cli.Command, args []string) error {
			cmd.OutOrStdout().Write([]byte("hi\n"))
			return nil
		}}
	})
	if out := mustRun(t, "hello"); out != "hi\n" {
		t.Errorf("hello printed %q", out)
	}
}

// TestErrors runs every command on bad input: each must fail without
// printing anything on stdout.
func TestErrors(t *testing.T) {
	path, _ := fixture(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	notDB := filepath.Join(dir, "not.db")
	if err := os.WriteFile(notDB, bytes.Repeat([]byte("this is not a SQLite database\n"), 200), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		is   error // nil: any error
	}{
		{[]string{"info", missing}, nil},
		{[]string{"tables", missing}, nil},
		{[]string{"schema", missing}, nil},
		{[]string{"pages", missing}, nil},
		{[]string{"scan", missing, "ipk"}, nil},
		{[]string{"get", missing, "ipk", "1"}, nil},
		{[]string{"info", notDB}, nil},
		{[]string{"tables", notDB}, nil},
		{[]string{"schema", notDB}, nil},
		{[]string{"pages", notDB}, nil},
		{[]string{"scan", notDB, "ipk"}, nil},
		{[]string{"get", notDB, "ipk", "1"}, nil},
		{[]string{"scan", path, "nosuch"}, pagoda.ErrNotFound},
		{[]string{"get", path, "nosuch", "1"}, pagoda.ErrNotFound},
		{[]string{"get", path, "ipk", "2"}, pagoda.ErrNotFound},
		{[]string{"get", path, "b", "gamma"}, pagoda.ErrNotFound},
		{[]string{"get", path, "wr", "zz"}, pagoda.ErrNotFound},
		{[]string{"get", path, "ipk", "one"}, nil},
		{[]string{"get", path, "b", "zz", "--hex"}, nil},
		{[]string{"scan", path, "ipk", "--from", "x"}, nil},
		{[]string{"scan", path, "ipk", "--limit", "-1"}, nil},
		{[]string{"get", path, "ipk"}, nil},
		{[]string{"tables"}, nil},
		{[]string{"nosuchcommand"}, nil},
	}
	for _, tt := range tests {
		out, _, err := run(t, tt.args...)
		if err == nil {
			t.Errorf("pagoda %s: no error", strings.Join(tt.args, " "))
			continue
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("pagoda %s: error %v, want %v", strings.Join(tt.args, " "), err, tt.is)
		}
		if out != "" {
			t.Errorf("pagoda %s: printed %q on stdout", strings.Join(tt.args, " "), out)
		}
	}
}

// TestCorruptFile damages a copy of the fixture in several ways and runs
// every command on it: errors are fine, panics are not.
func TestCorruptFile(t *testing.T) {
	path, sdb := fixture(t)
	sdb.Close()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096
	damages := map[string]func(b []byte){
		"page 2 type":       func(b []byte) { b[pageSize] = 0xff },
		"page 2 cell count": func(b []byte) { b[pageSize+3], b[pageSize+4] = 0xff, 0xff },
		"page 2 zeroed":     func(b []byte) { clear(b[pageSize : 2*pageSize]) },
		"schema cell ptrs":  func(b []byte) { clear(b[108:140]) },
		"truncated":         func(b []byte) { clear(b[len(b)-pageSize:]) },
		"freelist trunk":    func(b []byte) { b[32], b[33], b[34], b[35] = 0, 0, 0, 3 },
	}
	for name, damage := range damages {
		b := bytes.Clone(orig)
		damage(b)
		p := filepath.Join(t.TempDir(), "corrupt.db")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		// pages walks every page: it must see each damage, and still
		// print a line per page before the error (when the schema is
		// readable).
		out, _, err := run(t, "pages", p)
		if err == nil {
			t.Errorf("%s: pagoda pages: no error", name)
		} else if name != "schema cell ptrs" && strings.Count(out, "\n") != len(b)/pageSize+1 {
			t.Errorf("%s: pagoda pages printed %d lines before %v:\n%s", name, strings.Count(out, "\n"), err, out)
		}
		for _, args := range [][]string{
			{"info", p}, {"tables", p}, {"schema", p},
			{"scan", p, "all_types"}, {"scan", p, "ipk", "--json"}, {"scan", p, "b"},
			{"get", p, "all_types", "2"}, {"get", p, "b", "alpha"},
		} {
			_, _, err := run(t, args...)
			t.Logf("%s: pagoda %s: %v", name, args[0], err)
		}
	}
}

// TestJournalModeFlag: --journal-mode delete makes put create a
// rollback-journal file; without the flag a rollback-journal file that put
// writes stays one and a new file is WAL; wal converts one, delete
// converts it back; a bad mode is an error. SQLite reads every file, integrity_check ok.
func TestJournalModeFlag(t *testing.T) {
	dir := t.TempDir()
	mode := func(path string) string {
		t.Helper()
		rows := sqliteQuery(t, path, "PRAGMA journal_mode")
		integrityCheck(t, path)
		return rows[0][0].(string)
	}
	del := filepath.Join(dir, "del.db")
	mustRun(t, "--journal-mode", "delete", "put", del, "b", "k", "v1")
	if m := mode(del); m != "delete" {
		t.Fatalf("--journal-mode delete: new file in mode %s", m)
	}
	mustRun(t, "put", del, "b", "k", "v2")
	if m := mode(del); m != "delete" {
		t.Fatalf("default: a rollback-journal file went to mode %s", m)
	}
	if got := mustRun(t, "get", del, "b", "k"); got != "v2\n" {
		t.Fatalf("get: %q", got)
	}
	if _, err := os.Stat(del + "-wal"); err == nil {
		t.Fatal("a -wal beside a rollback-journal file")
	}
	wal := filepath.Join(dir, "wal.db")
	mustRun(t, "put", wal, "b", "k", "v")
	if m := mode(wal); m != "wal" {
		t.Fatalf("default: new file in mode %s", m)
	}
	mustRun(t, "--journal-mode", "WAL", "put", del, "b", "k", "v3")
	if m := mode(del); m != "wal" {
		t.Fatalf("--journal-mode WAL: mode %s", m)
	}
	if _, _, err := run(t, "--journal-mode", "truncate", "put", del, "b", "k", "v"); err == nil || !strings.Contains(err.Error(), "want default, wal or delete") {
		t.Fatalf("--journal-mode truncate: %v", err)
	}
	mustRun(t, "--journal-mode", "delete", "put", wal, "b", "k2", "v")
	if m := mode(wal); m != "delete" {
		t.Fatalf("--journal-mode delete on a WAL-mode file: mode %s", m)
	}
	if _, err := os.Stat(wal + "-wal"); err == nil {
		t.Fatal("a -wal beside the converted file")
	}
	if got := mustRun(t, "get", wal, "b", "k"); got != "v\n" {
		t.Fatalf("get after the conversion: %q", got)
	}
}

// runExit runs args as Execute does (negative keys included) and returns
// the exit status and the output.
func runExit(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	root := NewRoot()
	var o, e bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&o)
	root.SetErr(&e)
	return execute(root), o.String(), e.String()
}

// TestErrorMessages: what the CLI prints for the errors users meet: one
// "pagoda: " prefix, no internal package names, the file or key it is
// about, sqlite3's wording where it has one, and the usage line after an
// argument or flag error.
func TestErrorMessages(t *testing.T) {
	path, _ := fixture(t)
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("text, not a database\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	bk := filepath.Join(dir, "bk.db")
	mustRun(t, "backup", path, bk)
	for _, tc := range []struct {
		args []string
		want []string // lines of stderr, each a prefix
	}{
		{[]string{"info", notDB}, []string{"pagoda: " + notDB + ": database is corrupt: page 1: file is not a database"}},
		{[]string{"scan", path, "nope"}, []string{"pagoda: no such table: nope"}},
		{[]string{"get", path, "ipk", "2"}, []string{`pagoda: ipk: key "2" not found`}},
		{[]string{"backup", path, bk}, []string{"pagoda: " + bk + ": already exists"}},
		{[]string{"get", path, "ipk"}, []string{"pagoda: accepts 3 arg(s), received 2", "Usage: pagoda get FILE TABLE", "Run 'pagoda get --help'"}},
		{[]string{"scan", path, "ipk", "--bogus"}, []string{"pagoda: unknown flag: --bogus", "Usage: pagoda scan", "Run 'pagoda scan --help'"}},
		{[]string{"get", path, "ipk", "-33333"}, []string{`pagoda: ipk: key "-33333" not found`}},                       // a key, not a flag
		{[]string{"get", path, "ipk", "-33333", "--limit"}, []string{"pagoda: unknown flag: --limit", "Usage:", "Run"}}, // flags after it still parse
	} {
		code, _, stderr := runExit(t, tc.args...)
		if code != 1 {
			t.Errorf("%v: exit status %d, want 1", tc.args, code)
		}
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if len(lines) != len(tc.want) {
			t.Errorf("%v: stderr %q, want %d lines", tc.args, stderr, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%v: line %d %q, want %q...", tc.args, i+1, lines[i], w)
			}
		}
		if strings.Count(lines[0], "pagoda:") != 1 || regexp.MustCompile(`\b(pager|wal|btree|schema|format|vfs):`).MatchString(stderr) {
			t.Errorf("%v: %q", tc.args, stderr)
		}
	}
	// A negative rowid that exists reads as the row.
	neg := filepath.Join(dir, "neg.db")
	sqltest.Exec(t, neg, "CREATE TABLE t(id INTEGER PRIMARY KEY, v)", "INSERT INTO t VALUES (-3, 'minus three')")
	for _, args := range [][]string{{"get", neg, "t", "-3"}, {"get", neg, "t", "--", "-3"}} {
		if code, out, stderr := runExit(t, args...); code != 0 || out != "[-3,\"minus three\"]\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, stderr)
		}
	}
}

// TestCommandsWaitForLocks: a command started while another connection
// holds the file exclusively waits for it (lockWait), as sqlite3 with a
// .timeout does, rather than failing at once.
func TestCommandsWaitForLocks(t *testing.T) {
	path, _ := fixture(t)
	held, err := pagoda.Open(path, &pagoda.Options{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		held.Close()
	}()
	start := time.Now()
	out, _, err := run(t, "tables", path)
	if err != nil || !strings.Contains(out, "ipk") {
		t.Fatalf("tables beside an exclusive DB that lets go after 300 ms: %q, %v", out, err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("tables returned after %v, before the lock was let go", d)
	}
}
