package check_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// TestDBCheckStrict runs the row checks through DB.Check, which gives the
// checker the catalog; the columns' defaults are those reading a table
// gives (expr.Table): the rows stored before ALTER TABLE ADD COLUMN
// take a DEFAULT that is not of the STRICT column's type. Each problem
// must be one sqlite3's integrity_check reports.
func TestDBCheckStrict(t *testing.T) {
	cases := []struct {
		name  string
		stmts []string
		want  []string // each the tail of one problem, after "table t: "
		// cli: the oracle is the sqlite3 CLI (3.40), SQLite 3.54 failing
		// integrity_check on the file as it fails any read of it.
		cli bool
	}{
		{name: "ALTER TABLE ADD COLUMN", stmts: []string{
			// SQLite 3.54 refuses such an ALTER TABLE on a STRICT table
			// ("type mismatch on DEFAULT"); sqlite3 3.40 makes it.
			"CREATE TABLE s(id INTEGER PRIMARY KEY, v)",
			"INSERT INTO s VALUES (1, 1)",
			"ALTER TABLE s ADD COLUMN c INTEGER DEFAULT 'abc'",
			"ALTER TABLE s ADD COLUMN d INTEGER DEFAULT '5'",
			"ALTER TABLE s ADD COLUMN e REAL DEFAULT 3",
			"ALTER TABLE s ADD COLUMN f TEXT DEFAULT x'00'",
			"INSERT INTO s VALUES (2, 2, 2, 2, 2, 'two')",
			"PRAGMA writable_schema=ON",
			"UPDATE sqlite_schema SET sql = replace(sql, 'PRIMARY KEY, v,', 'PRIMARY KEY, v ANY,') || ' STRICT' WHERE name = 's'",
		}, want: []string{
			"row 1: non-INTEGER value in s.c (TEXT)",
			"row 1: non-TEXT value in s.f (BLOB)",
		}},
		{name: "VIRTUAL NOT NULL", stmts: []string{
			// Each computed column reads the fields it uses: a problem
			// before it hides none after it.
			"CREATE TABLE v(a INTEGER PRIMARY KEY, x, y)",
			"INSERT INTO v VALUES (1, NULL, NULL), (2, 1, NULL), (3, NULL, 1), (4, 2, 2)",
			"PRAGMA writable_schema=ON",
			"UPDATE sqlite_schema SET sql = 'CREATE TABLE v(a INTEGER PRIMARY KEY, x, g NOT NULL AS (x), y NOT NULL, h NOT NULL AS (y), k INTEGER NOT NULL AS (nullif(x, 2)), c NOT NULL AS (a))' WHERE name = 'v'",
		}, want: []string{
			"row 1: NULL value in v.g", "row 1: NULL value in v.y", "row 1: NULL value in v.h", "row 1: NULL value in v.k",
			"row 2: NULL value in v.y", "row 2: NULL value in v.h",
			"row 3: NULL value in v.g", "row 3: NULL value in v.k",
			"row 4: NULL value in v.k",
		}},
		{name: "VIRTUAL columns of STRICT types", cli: true, stmts: []string{
			// SQLite 3.54 refuses such rows; older versions wrote them.
			"CREATE TABLE v(a INTEGER PRIMARY KEY, x)",
			"INSERT INTO v VALUES (1, 1.5), (2, 'x'), (3, NULL), (4, x'01'), (5, 7)",
			"PRAGMA writable_schema=ON",
			"UPDATE sqlite_schema SET sql = 'CREATE TABLE v(a INTEGER PRIMARY KEY, x ANY, g BLOB AS (x), n INT NOT NULL AS (x), r REAL AS (x + 1)) STRICT' WHERE name = 'v'",
		}, want: []string{
			"row 1: non-BLOB value in v.g (REAL)", "row 1: non-INT value in v.n (REAL)",
			"row 2: non-BLOB value in v.g (TEXT)", "row 2: non-INT value in v.n (TEXT)",
			"row 3: NULL value in v.n",
			"row 4: non-INT value in v.n (BLOB)",
			"row 5: non-BLOB value in v.g (INTEGER)",
		}},
	}
	if _, err := exec.LookPath("sqlite3"); err == nil {
		// The repro: sqlite3 3.40 adds the column to the STRICT table.
		cases = append(cases, struct {
			name  string
			stmts []string
			want  []string
			cli   bool
		}{name: "ALTER TABLE ADD COLUMN by sqlite3", want: []string{"row 1: non-INTEGER value in s.c (TEXT)"}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			if tc.stmts == nil {
				out, err := exec.Command("sqlite3", path, "CREATE TABLE s(id INTEGER PRIMARY KEY, v ANY) STRICT; INSERT INTO s VALUES(1,1);"+
					"ALTER TABLE s ADD COLUMN c INTEGER DEFAULT 'abc'").CombinedOutput()
				if err != nil {
					t.Skipf("this sqlite3 does not make the file: %v: %s", err, out)
				}
			} else {
				sqltest.Exec(t, path, tc.stmts...)
			}
			db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var got []string
			var ce *pagoda.CheckError
			if err := db.Check(); errors.As(err, &ce) {
				for _, p := range ce.Problems {
					got = append(got, p.Msg)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, "table "+strings.SplitN(strings.SplitN(w, " in ", 2)[1], ".", 2)[0]+": "+w)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("Check:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// integrity_check agrees, line for line ("non-INTEGER value
			// in s.c" for "row 1: non-INTEGER value in s.c (TEXT)").
			var ic []string
			for _, w := range tc.want {
				m := strings.SplitN(w, ": ", 2)[1]
				ic = append(ic, strings.SplitN(m, " (", 2)[0])
			}
			var lines []string
			if tc.cli {
				sdb := sqltest.Open(t, path)
				rows, err := sdb.Query("PRAGMA integrity_check")
				if err == nil {
					for rows.Next() {
					}
					err = rows.Err()
					rows.Close()
				}
				if err == nil {
					t.Error("SQLite 3.54's integrity_check does not fail")
				}
				sdb.Close()
				if _, err := exec.LookPath("sqlite3"); err != nil {
					t.Skip("sqlite3 CLI not installed: the problems are not compared with its integrity_check")
				}
				out, err := exec.Command("sqlite3", "-readonly", path, "PRAGMA integrity_check").CombinedOutput()
				if err != nil {
					t.Fatalf("sqlite3: %v: %s", err, out)
				}
				lines = strings.Split(strings.TrimSpace(string(out)), "\n")
			} else {
				sdb := sqltest.Open(t, path)
				lines = sqltest.Rows(t, sdb, "PRAGMA integrity_check")
				sdb.Close()
			}
			slices.Sort(lines)
			slices.Sort(ic)
			if !slices.Equal(lines, ic) {
				t.Errorf("integrity_check:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(ic, "\n"))
			}
		})
	}
}

// TestDBCheckAffinity runs the affinity checks of tables that are not
// STRICT through DB.Check, which gives the rows older than ALTER TABLE
// ADD COLUMN their DEFAULTs: the lines of its problems must be
// SQLite's integrity_check lines, those that a DEFAULT's type decides
// included (a field the header was not parsed up to takes its DEFAULT's
// type).
func TestDBCheckAffinity(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	sqltest.Exec(t, path,
		"CREATE TABLE t(id INTEGER PRIMARY KEY, a, b)",
		"INSERT INTO t VALUES (1, 'x', 'y')",
		"ALTER TABLE t ADD COLUMN c DEFAULT 'abc'",
		"ALTER TABLE t ADD COLUMN d DEFAULT '5'",
		"ALTER TABLE t ADD COLUMN e DEFAULT 5",
		"INSERT INTO t VALUES (2, '12', '13', 7, 'q', 'r')",
		"INSERT INTO t VALUES (3, '12', 'x', 7, 8, 9)",
		"INSERT INTO t VALUES (4, 'x', 'y', 'z', ' 6', 9)",
		"PRAGMA writable_schema=ON",
		"UPDATE sqlite_schema SET sql = 'CREATE TABLE t(id INTEGER PRIMARY KEY, a INT, b INT, c INT DEFAULT ''abc'', d INT DEFAULT ''5'', e TEXT DEFAULT 5)' WHERE name = 't'",
	)
	// Row 1 lacks c, d, e: 'abc' stays TEXT under INT affinity, '5' is
	// 5, 5 is '5': no problem. Row 2: a; b reread (parsed up to b); c
	// not parsed, so TEXT by its DEFAULT, reread: 7, "TEXT value"; d and
	// e not parsed. Row 3: a; b reread; c as in row 2. Row 4: d, read
	// before its problem (nothing stale yet), then e, still parsed.
	want := []string{
		"TEXT value in t.a", "TEXT value in t.b", "TEXT value in t.c",
		"TEXT value in t.a", "TEXT value in t.c",
		"TEXT value in t.d", "NUMERIC value in t.e",
	}
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got []string
	var ce *pagoda.CheckError
	if err := db.Check(); errors.As(err, &ce) {
		for _, p := range ce.Problems {
			// "table t: row 2: TEXT value in t.c (7)": the line is
			// between the row's name and the value.
			m := p.Msg
			if i := strings.LastIndex(m, " value in "); i >= 0 {
				m = m[strings.LastIndex(m[:i], ": ")+2:]
				m = strings.SplitN(m, " (", 2)[0]
			}
			got = append(got, m)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Check:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sdb := sqltest.Open(t, path)
	lines := sqltest.Rows(t, sdb, "PRAGMA integrity_check")
	slices.Sort(lines)
	if !slices.Equal(lines, want) {
		t.Errorf("integrity_check:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestDBCheckUTF16Messages: the values a problem quotes from a UTF-16
// database read as text, not as the UTF-16 bytes.
func TestDBCheckUTF16Messages(t *testing.T) {
	for _, enc := range []string{"UTF-16le", "UTF-16be"} {
		path := filepath.Join(t.TempDir(), "u.db")
		sqltest.Exec(t, path,
			"PRAGMA encoding = '"+enc+"'",
			"CREATE TABLE t(k TEXT PRIMARY KEY, v) WITHOUT ROWID",
			"INSERT INTO t VALUES ('clé', ' 7')",
			"PRAGMA writable_schema = ON",
			"UPDATE sqlite_schema SET sql = 'CREATE TABLE t(k TEXT PRIMARY KEY, v INT) WITHOUT ROWID' WHERE name = 't'",
		)
		db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		err = db.Check()
		db.Close()
		var ce *pagoda.CheckError
		if !errors.As(err, &ce) || len(ce.Problems) != 1 {
			t.Fatalf("%s: Check: %v, want one problem", enc, err)
		}
		if m := ce.Problems[0].Msg; !strings.Contains(m, `row ("clé", " 7"): TEXT value in t.v (" 7")`) {
			t.Errorf("%s: %q", enc, m)
		}
	}
}

// TestDBCheckSchemaSyntax damages sqlite_schema the way a buggy tool
// would: a table's SQL and an index's SQL cut short. sqlite3 then refuses
// the whole schema ("malformed database schema"), and Check reports each
// object; its pages are still checked as far as they can be. A table of
// SQL that is valid but that pagoda does not support (a collation only
// an application registers) is no problem.
func TestDBCheckSchemaSyntax(t *testing.T) {
	cases := []struct {
		name, sql string
		want      string // the problem's start; "" for none
	}{
		{"table cut short", "UPDATE sqlite_schema SET sql = substr(sql, 1, length(sql) - 1) WHERE name = 't'", "table t: syntax error"},
		{"index cut short", "UPDATE sqlite_schema SET sql = substr(sql, 1, length(sql) - 1) WHERE name = 'tb'", "index tb: syntax error"},
		{"an application's collation", "UPDATE sqlite_schema SET sql = 'CREATE TABLE u(x COLLATE appcoll)' WHERE name = 'u'", ""},
		// A row's type, name and tbl_name must be its SQL's
		// (sqlite3CheckObjectName), in any case.
		{"type not the SQL's", "UPDATE sqlite_schema SET type = 'tablx' WHERE name = 'u'", "sqlite_schema: malformed database schema (u)"},
		{"type NULL", "UPDATE sqlite_schema SET type = NULL WHERE name = 'u'", "sqlite_schema: malformed database schema (u)"},
		{"name not the SQL's", "UPDATE sqlite_schema SET name = 'v' WHERE name = 'u'", "sqlite_schema: malformed database schema (v)"},
		{"tbl_name not the SQL's", "UPDATE sqlite_schema SET tbl_name = 'u' WHERE name = 'tb'", "sqlite_schema: malformed database schema (tb)"},
		{"names in another case", "UPDATE sqlite_schema SET type = 'TABLE', name = 'U', tbl_name = 'U' WHERE name = 'u'", ""},
		{"not CREATE text", "UPDATE sqlite_schema SET sql = 'DROP TABLE u' WHERE name = 'u'", "sqlite_schema: malformed database schema (u)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			sqltest.Exec(t, path,
				"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)",
				"CREATE INDEX tb ON t(b)",
				"CREATE TABLE u(x)",
				"INSERT INTO t VALUES (1, 'one'), (2, 'two')",
				"PRAGMA writable_schema=ON",
				tc.sql,
			)
			if tc.want != "" {
				// sqlite3 refuses the schema.
				sdb := sqltest.Open(t, path)
				if _, err := sdb.Exec("PRAGMA integrity_check"); err == nil || !strings.Contains(err.Error(), "malformed database schema") {
					t.Fatalf("SQLite: integrity_check gave %v, want a malformed schema", err)
				}
				sdb.Close()
			}
			db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.Check()
			var ce *pagoda.CheckError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Check: %v, want no problem", err)
			case tc.want == "":
			case !errors.As(err, &ce) || len(ce.Problems) == 0 || !strings.HasPrefix(ce.Problems[0].Msg, tc.want):
				t.Fatalf("Check: %v, want a first problem starting %q", err, tc.want)
			}
		})
	}
}
