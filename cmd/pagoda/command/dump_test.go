package command

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// dumpSchema is a database whose every value sqlite3's .dump writes exactly
// as pagoda does (no REAL with a fraction, no NUL byte, valid UTF-8), so
// that the two dumps must be equal byte for byte.
var dumpSchema = []string{
	`CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b, c REAL, d TEXT)`,
	`INSERT INTO t(b, c, d) VALUES(1, 1.0, 'it''s'), (-9223372036854775808, -3.0, 'line
two'), (x'00ff', 1e18, 'cr' || char(13) || 'lf' || char(10) || 'both'), (NULL, 0.0, 'tab	x'),
	(9223372036854775807, 123456789012345678.0, 'marker \n and \012 ' || char(10)), ('', -1e15, 'ünïcödé 🙂'), (x'', NULL, NULL)`,
	`DELETE FROM t WHERE a = 4`,
	`CREATE TABLE "we ird ""q"""("x y" TEXT, "order" INT, z)`,
	`INSERT INTO "we ird ""q""" VALUES('a', 1, 'b'), ('c', 2, NULL)`,
	`CREATE TABLE "order"(k)`,
	`INSERT INTO "order" VALUES(1)`,
	`CREATE TABLE plain(k, v)`,
	`INSERT INTO plain VALUES(1, 'one'), (2, 'two'), (3, 'three')`,
	`DELETE FROM plain WHERE k = 2`,
	`CREATE TABLE g(a, b AS (a * 2), c AS (a + 1) STORED, d)`,
	`INSERT INTO g(a, d) VALUES(3, 'x'), (4, 'y')`,
	`CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID`,
	`INSERT INTO w VALUES('k2', 2), ('k1', 1)`,
	`CREATE TABLE empty(x)`,
	`CREATE INDEX i1 ON t(b)`,
	`CREATE UNIQUE INDEX i2 ON plain(v DESC)`,
	`CREATE VIEW v AS SELECT * FROM t`,
	`CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END`,
	`ANALYZE`,
	`CREATE TABLE t2(a INTEGER PRIMARY KEY AUTOINCREMENT, b)`,
	`INSERT INTO t2(b) VALUES('x')`,
}

// TestDumpLikeSQLite checks that pagoda dump prints what sqlite3's .dump
// prints (with and without --preserve-rowids) for a database whose values
// .dump writes exactly, and that the text loads back into an equal
// database.
func TestDumpLikeSQLite(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 CLI not installed: its .dump is the reference")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "a.db")
	// sqlite3 makes the file: the oracle's SQLite has STAT4, whose table
	// .dump cannot load into a build without it (see dump.go).
	if out, err := exec.Command(cli, src, strings.Join(dumpSchema, ";\n")).CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	for _, preserve := range []bool{false, true} {
		args, dotDump := []string{"dump", src}, ".dump"
		if preserve {
			args, dotDump = []string{"dump", "--preserve-rowids", src}, ".dump --preserve-rowids"
		}
		got := mustRun(t, args...)
		want, err := exec.Command(cli, src, dotDump).Output()
		if err != nil {
			t.Fatalf("sqlite3 %s: %v", dotDump, err)
		}
		if got != string(want) {
			t.Errorf("pagoda %s differs from sqlite3's %s:\n%s", strings.Join(args, " "), dotDump, lineDiff(string(want), got))
		}
		dst := filepath.Join(dir, "b.db")
		if preserve {
			dst = filepath.Join(dir, "c.db")
		}
		sqltest.LoadSQL(t, dst, got)
		sqltest.IntegrityCheck(t, dst)
		if n := sqltest.CompareDatabases(t, src, dst, preserve); n < 10 {
			t.Errorf("%d rows compared, want at least 10", n)
		}
	}
}

// TestDumpExactValues checks the values .dump would lose or round: text
// with NUL bytes or invalid UTF-8, REALs that need 17 digits, the
// infinities and the extremes. Their dump loads back equal, bit for bit.
func TestDumpExactValues(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.db")
	sqltest.Exec(t, src,
		`CREATE TABLE v(id INTEGER PRIMARY KEY, x, r REAL, s TEXT)`,
		`INSERT INTO v VALUES(1, CAST(x'6e756c00696e' AS TEXT), 0.1, CAST(x'ff41' AS TEXT))`,
		`INSERT INTO v VALUES(2, 0.30000000000000004, 1e999, CAST(x'c328' AS TEXT))`,
		`INSERT INTO v VALUES(3, 4.9406564584124654e-324, -1e999, char(0))`,
		`INSERT INTO v VALUES(4, 1.7976931348623157e308, 1.5e-7, 'ok' || char(1, 2, 3))`,
		`INSERT INTO v VALUES(5, -2.2250738585072014e-308, 1e20, '')`,
		`INSERT INTO v VALUES(6, 123456.78901234567, 0.0001, x'')`,
		`INSERT INTO v VALUES(7, 1.0/3, -1e-5, x'000102')`,
		`INSERT INTO v VALUES(8, 9.223372036854775807e18, -9.223372036854775808e18, NULL)`,
	)
	out := mustRun(t, "dump", src)
	for _, lit := range []string{
		"CAST(X'6e756c00696e' AS TEXT)", "CAST(X'ff41' AS TEXT)", "CAST(X'00' AS TEXT)", ",0.1,",
		"0.30000000000000004", ",1e999,", ",-1e999,", "5.0e-324", "1.7976931348623157e+308",
		"1.5e-07", ",1.0e+20,", "9223372036854776000.0", "0.0001", "-1.0e-05", "0.3333333333333333",
		"-9223372036854775808.0", "X'000102'",
	} {
		if !strings.Contains(out, lit) {
			t.Errorf("dump lacks %s:\n%s", lit, out)
		}
	}
	dst := filepath.Join(dir, "b.db")
	by := sqltest.LoadSQL(t, dst, out)
	sqltest.IntegrityCheck(t, dst)
	if n := sqltest.CompareDatabases(t, src, dst, true); n != 8 {
		t.Errorf("%d rows compared, want 8", n)
	}
	// Bits, not ==: the same REAL, not a neighbour.
	q := `SELECT id, quote(x), printf('%!.17g|%!.17g', x, r), hex(s), typeof(s) FROM v ORDER BY id`
	if a, b := sqltest.Rows(t, sqltest.Open(t, src), q), sqltest.Rows(t, sqltest.Open(t, dst), q); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("loaded by %s:\n%s\nwant\n%s", by, strings.Join(b, "\n"), strings.Join(a, "\n"))
	}
}

// TestDumpVirtualTable checks an fts5 table: written into sqlite_schema
// under writable_schema, as .dump does, its shadow tables as tables.
func TestDumpVirtualTable(t *testing.T) {
	cli, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 CLI not installed: its .dump is the reference")
	}
	src := filepath.Join(t.TempDir(), "fts.db")
	if out, err := exec.Command(cli, src, `CREATE VIRTUAL TABLE docs USING fts5(body); INSERT INTO docs VALUES('hello world');`).CombinedOutput(); err != nil {
		t.Skipf("sqlite3 without fts5: %v %s", err, out)
	}
	got := mustRun(t, "dump", src)
	want, err := exec.Command(cli, src, ".dump").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("pagoda dump differs from sqlite3's .dump:\n%s", lineDiff(string(want), got))
	}
	if !strings.Contains(got, "PRAGMA writable_schema=ON;") {
		t.Errorf("no writable_schema in\n%s", got)
	}
	dst := filepath.Join(t.TempDir(), "b.db")
	sqltest.LoadSQL(t, dst, got)
	if out, err := exec.Command(cli, dst, "SELECT rowid, body FROM docs WHERE docs MATCH 'world'").Output(); err != nil || string(out) != "1|hello world\n" {
		t.Errorf("the loaded fts5 table finds %q, %v", out, err)
	}
}

func TestDumpErrors(t *testing.T) {
	if _, _, err := run(t, "dump", filepath.Join(t.TempDir(), "missing.db")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("dump of a missing file: %v", err)
	}
	if _, _, err := run(t, "dump"); err == nil {
		t.Errorf("dump without a file: no error")
	}
}

// lineDiff shows the first lines where want and got differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 8; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want " + wl + "\n  got  " + gl + "\n")
			shown++
		}
	}
	return b.String()
}
