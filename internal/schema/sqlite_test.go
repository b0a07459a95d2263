package schema

// Differential tests: the parser against SQLite itself (modernc.org/sqlite,
// pure Go). Each statement is run in a fresh in-memory database and what
// SQLite reports (PRAGMA table_xinfo, index_list, index_xinfo and the text
// it stored in sqlite_schema) is compared with what this package derives.

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

func openMemory(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// queryStrings runs q and renders each row as its columns joined by "|".
func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	return sqltest.Rows(t, db, q, args...)
}

// sqliteKey renders PRAGMA index_xinfo rows as keyFields does.
func sqliteKey(t *testing.T, db *sql.DB, index string) string {
	rows := queryStrings(t, db, `SELECT cid, "desc", upper(coll) FROM pragma_index_xinfo(?)`, index)
	return strings.Join(rows, " ")
}

// keyFields renders key terms as "cid|desc|COLL", expressions as cid -2.
func keyFields(cols []IndexedColumn) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		cid, desc := c.Column, 0
		if c.Expr {
			cid = -2
		}
		if c.Desc {
			desc = 1
		}
		parts[i] = fmt.Sprintf("%d|%d|%s", cid, desc, c.Collation)
	}
	return strings.Join(parts, " ")
}

// compareTable runs sql in a fresh database and compares.
func compareTable(t *testing.T, sqlText string) {
	t.Helper()
	db := openMemory(t)
	defer db.Close()
	tab, err := ParseCreateTable(sqlText)
	if _, serr := db.Exec(sqlText); serr != nil {
		if err == nil {
			t.Errorf("%s\n  SQLite rejects it (%v); we accept it", sqlText, serr)
		}
		return
	}
	if err != nil {
		if !strings.Contains(sqlText, "VIRTUAL") && !strings.Contains(sqlText, " AS SELECT") {
			t.Errorf("%s\n  SQLite accepts it; we: %v", sqlText, err)
		}
		return
	}
	stored := queryStrings(t, db, `SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?
		UNION ALL SELECT sql FROM sqlite_temp_schema WHERE type = 'table' AND name = ?`, tab.Name, tab.Name)
	if norm, err := NormalizeCreate(sqlText); len(stored) != 1 || err != nil || norm != stored[0] {
		t.Errorf("%s\n  NormalizeCreate = %q, %v; SQLite stored %q", sqlText, norm, err, stored)
	}

	// Columns: PRAGMA table_xinfo.
	pkPos := map[int]int{}
	for i, c := range tab.PrimaryKey {
		if _, ok := pkPos[c.Column]; !ok {
			pkPos[c.Column] = i + 1
		}
	}
	var got []string
	for i, c := range tab.Columns {
		dflt, nn, hidden := "NULL", 0, 0
		if c.HasDefault {
			dflt = c.Default
		}
		if c.NotNull {
			nn = 1
		}
		if c.Generated {
			hidden = 3
			if c.Hidden {
				hidden = 2
			}
		}
		got = append(got, fmt.Sprintf("%d|%s|%s|%d|%s|%d|%d", i, c.Name, strings.ToUpper(c.Type), nn, dflt, pkPos[i], hidden))
	}
	want := queryStrings(t, db, `SELECT cid, name, upper(type), "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?)`, tab.Name)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s\n  columns:\n  %s\n  SQLite:\n  %s", sqlText, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// Automatic indexes: names, origins and keys.
	var names []string
	for _, ix := range tab.AutoIndexes() {
		names = append(names, ix.Name)
		origin := queryStrings(t, db, `SELECT origin FROM pragma_index_list(?) WHERE name = ?`, tab.Name, ix.Name)
		if len(origin) != 1 || (origin[0] == "pk") != ix.PrimaryKey {
			t.Errorf("%s\n  %s: PrimaryKey %v, SQLite origin %v", sqlText, ix.Name, ix.PrimaryKey, origin)
		}
		if g, w := keyFields(ix.KeyOrder(tab)), sqliteKey(t, db, ix.Name); g != w {
			t.Errorf("%s\n  %s key %s\n  SQLite    %s", sqlText, ix.Name, g, w)
		}
	}
	rows := queryStrings(t, db, `SELECT name FROM sqlite_schema WHERE type = 'index'
		UNION ALL SELECT name FROM sqlite_temp_schema WHERE type = 'index'`)
	if strings.Join(names, " ") != strings.Join(rows, " ") {
		t.Errorf("%s\n  autoindex rows %v, SQLite %v", sqlText, names, rows)
	}

	// WITHOUT ROWID: the primary key index is the record layout.
	if tab.WithoutRowID {
		pk := queryStrings(t, db, `SELECT name FROM pragma_index_list(?) WHERE origin = 'pk'`, tab.Name)
		if len(pk) != 1 {
			t.Fatalf("%s: no pk index in SQLite", sqlText)
		}
		var fields []string
		for _, c := range tab.RecordOrder {
			fields = append(fields, fmt.Sprint(c))
		}
		want := queryStrings(t, db, `SELECT cid FROM pragma_index_xinfo(?)`, pk[0])
		if strings.Join(fields, " ") != strings.Join(want, " ") {
			t.Errorf("%s\n  RecordOrder %v, SQLite %v", sqlText, fields, want)
		}
		want = queryStrings(t, db, `SELECT cid, "desc", upper(coll) FROM pragma_index_xinfo(?) WHERE key`, pk[0])
		if g := keyFields(tab.PrimaryKey); g != strings.Join(want, " ") {
			t.Errorf("%s\n  PrimaryKey %s, SQLite %s", sqlText, g, strings.Join(want, " "))
		}
	}
}

var differentialTables = []string{
	"CREATE TABLE x(a UNIQUE, b PRIMARY KEY, c UNIQUE)",
	"CREATE TABLE w(a, b UNIQUE, c, PRIMARY KEY(a), UNIQUE(c)) WITHOUT ROWID",
	"CREATE TABLE w(a,b,c,d, PRIMARY KEY(c,a)) WITHOUT ROWID",
	"create table if not exists   Foo ( x int , y )",
	"CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE, UNIQUE(a)) WITHOUT ROWID",
	"CREATE TABLE t(a INTEGER PRIMARY KEY DESC, b UNIQUE) WITHOUT ROWID",
	"CREATE TABLE t(a, b, c, PRIMARY KEY(a, b, a COLLATE nocase)) WITHOUT ROWID",
	"CREATE TABLE t(a TEXT UNIQUE, UNIQUE(a COLLATE nocase), UNIQUE(a DESC))",
	"CREATE TABLE t(a, b, UNIQUE((a)), UNIQUE('b'), UNIQUE(\"b\" COLLATE nocase), UNIQUE((a COLLATE rtrim)))",
	"CREATE TABLE t(x INTEGER, y INTEGER, PRIMARY KEY(y COLLATE nocase))",
	"CREATE TABLE t(x \"INTEGER\" PRIMARY KEY, y 'integer', z [INT]) STRICT",
	"CREATE TABLE t(f UNSIGNED  /*c*/ BIG INT, g DECIMAL( 10 , 2 ), h \"my type\", i 'x''y', j \"\", k [a]b, l [a b] [c])",
	"CREATE TABLE t(a, h GENERATED ALWAYS AS (1), i INT GENERATED ALWAYS AS (2) STORED, j ALWAYS AS (3), k TEXT NOT NULL GENERATED ALWAYS AS (4))",
	"CREATE TABLE t(k DEFAULT (  1 + 2  ), l DEFAULT -1, m DEFAULT - 1.5, n DEFAULT 'x''y', o DEFAULT CURRENT_TIMESTAMP, p DEFAULT abc, q DEFAULT x'00', r DEFAULT NULL, s DEFAULT true, u DEFAULT +5, v DEFAULT ((3)))",
	"CREATE TABLE t(a INTEGER CONSTRAINT pk PRIMARY KEY ON CONFLICT REPLACE AUTOINCREMENT, b TEXT CONSTRAINT nn NOT NULL ON CONFLICT FAIL COLLATE nocase CONSTRAINT u UNIQUE ON CONFLICT IGNORE, c NULL CHECK (c > 0) DEFAULT 7 COLLATE \"RTRIM\" CONSTRAINT x, d REFERENCES other(x, y) ON DELETE CASCADE MATCH full DEFERRABLE INITIALLY DEFERRED, CONSTRAINT fk FOREIGN KEY (d) REFERENCES other (x) NOT DEFERRABLE)",
	"CREATE TABLE t(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID, STRICT",
	"CREATE TABLE t(a PRIMARY KEY) WITHOUT ROWID /*c*/ ;",
	"CREATE TEMP TABLE t(a UNIQUE);",
	"CREATE TABLE main.t(desc, asc, replace, UNIQUE(desc DESC, asc))",
	"CREATE TABLE t(a, b, c AS (a) VIRTUAL UNIQUE, d AS (b) STORED, PRIMARY KEY(d, b)) WITHOUT ROWID",
	"CREATE TABLE t(a UNIQUE ON CONFLICT REPLACE, UNIQUE(a) ON CONFLICT IGNORE)",
	"CREATE TABLE t(a) WITHOUT ROWID",
	"CREATE TABLE t(a INT PRIMARY KEY AUTOINCREMENT)",
	"CREATE TABLE t(a, UNIQUE(\"zz\"))",
	"CREATE VIRTUAL TABLE t USING fts5(a)",
	"CREATE TABLE t(a, FOREIGN KEY(zz) REFERENCES u)",
	"CREATE TABLE t(a, b, FOREIGN KEY(a, b) REFERENCES u(x))",
	"CREATE TABLE t(a, b, FOREIGN KEY(\"a\", B) REFERENCES u(x, y) ON UPDATE SET DEFAULT)",
	"CREATE TABLE t(a REFERENCES u(x, y))",
	"CREATE TABLE t(a, FOREIGN KEY(a COLLATE nocase) REFERENCES u(x))",
	"CREATE TABLE t(a, FOREIGN KEY() REFERENCES u(x))",
}

func TestSQLiteTables(t *testing.T) {
	for _, s := range differentialTables {
		compareTable(t, s)
	}
}

// randomTable builds a random CREATE TABLE statement; most are valid, many
// are not (several primary keys, generated key columns, ...).
func randomTable(r *rand.Rand) string {
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	names := []string{"a", "b", "c", "d", `"key"`, "[x y]", "'q'", "desc", "value", "Key"}
	types := []string{"", "INT", "INTEGER", "integer", "TEXT", "VARCHAR(10)", "BLOB", "REAL", "ANY",
		`"INTEGER"`, "DOUBLE PRECISION", "[int]", "NUMERIC(5, 2)", "UNSIGNED BIG INT"}
	ccons := []string{"PRIMARY KEY", "PRIMARY KEY DESC", "PRIMARY KEY ASC", "PRIMARY KEY AUTOINCREMENT",
		"UNIQUE", "NOT NULL", "NULL", "COLLATE nocase", "COLLATE rtrim", "COLLATE binary", "DEFAULT 1",
		"DEFAULT -2.5", "DEFAULT 'x'", "DEFAULT (1+1)", "CHECK(1)", "AS (1)", "AS (1) STORED",
		"GENERATED ALWAYS AS (2) VIRTUAL", "REFERENCES t2(x)", "UNIQUE ON CONFLICT REPLACE",
		"PRIMARY KEY ON CONFLICT IGNORE", "CONSTRAINT k", "NOT NULL ON CONFLICT FAIL"}
	opts := []string{"", "", "", " WITHOUT ROWID", " STRICT", " WITHOUT ROWID, STRICT", " STRICT, WITHOUT ROWID"}
	n := 1 + r.IntN(4)
	perm := r.Perm(len(names))[:n]
	var cols []string
	for _, i := range perm {
		cols = append(cols, names[i])
	}
	var defs []string
	for _, c := range cols {
		d := c + " " + pick(types)
		for range []int{0, 0, 1, 1, 2, 3}[r.IntN(6)] {
			d += " " + pick(ccons)
		}
		defs = append(defs, d)
	}
	term := func() string {
		s := pick(cols)
		if r.IntN(3) == 0 {
			s += " COLLATE " + pick([]string{"nocase", "rtrim", "binary"})
		}
		if r.IntN(3) == 0 {
			s += " " + pick([]string{"ASC", "DESC"})
		}
		return s
	}
	for range []int{0, 0, 1, 2, 3}[r.IntN(5)] {
		var terms []string
		for range 1 + r.IntN(3) {
			terms = append(terms, term())
		}
		switch k := r.IntN(10); {
		case k < 4:
			defs = append(defs, "PRIMARY KEY("+strings.Join(terms, ", ")+")")
		case k < 9:
			defs = append(defs, "UNIQUE("+strings.Join(terms, ", ")+")"+pick([]string{"", " ON CONFLICT ABORT"}))
		default:
			defs = append(defs, "CHECK(1)")
		}
	}
	return "CREATE TABLE t(" + strings.Join(defs, ", ") + ")" + pick(opts)
}

func TestSQLiteRandomTables(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 200
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		compareTable(t, randomTable(r))
	}
}

func TestSQLiteIndexes(t *testing.T) {
	tables := []string{
		"CREATE TABLE t(id INTEGER PRIMARY KEY, b TEXT COLLATE nocase, c, \"desc\", e REAL, f AS (c+1))",
		"CREATE TABLE w(a, b, c TEXT COLLATE rtrim, d, PRIMARY KEY(c DESC, a)) WITHOUT ROWID",
		"CREATE TABLE u(a, b, c, PRIMARY KEY(a, b COLLATE nocase)) WITHOUT ROWID",
	}
	indexes := []string{
		"CREATE INDEX i1 ON t(b)",
		"CREATE UNIQUE INDEX i2 ON t(c COLLATE nocase DESC, b)",
		"create index if not exists main.i3 on t (id, \"desc\" desc)",
		"CREATE INDEX i4 ON t(c) WHERE c > 0  ",
		"CREATE INDEX i5 ON t((c), +c, c||b COLLATE binary, 'b', \"c\", (b COLLATE rtrim), -c COLLATE nocase)",
		"CREATE INDEX i6 ON t(desc desc, c collate nocase collate rtrim, (c collate nocase) collate rtrim)",
		"CREATE INDEX i7 ON t(CAST(c AS TEXT) COLLATE nocase, ~c COLLATE nocase, c COLLATE nocase || b, NOT c COLLATE nocase, \"zz\" COLLATE nocase)",
		"CREATE INDEX i8 ON t(f, e DESC) /* x */ ;",
		"CREATE INDEX [i 9] ON \"t\"(`c`);",
		"CREATE INDEX j1 ON w(d)",
		"CREATE INDEX j2 ON w(a COLLATE nocase, b)",
		"CREATE INDEX j3 ON w(c, b)",
		"CREATE INDEX j4 ON w(c COLLATE binary)",
		"CREATE UNIQUE INDEX j5 ON w(d, c)",
		"CREATE INDEX j6 ON w(d+1)",
		"CREATE INDEX l1 ON u(b)",
		"CREATE INDEX l2 ON u(b COLLATE nocase, c)",
		// Rejected by both.
		"CREATE INDEX e1 ON t(rowid)",
		"CREATE INDEX e2 ON t(t.c)",
		"CREATE INDEX e3 ON main.t(c)",
		"CREATE INDEX e4 ON t(c NULLS LAST)",
		"CREATE INDEX e5 ON t(nosuch)",
		"CREATE INDEX e6 ON t(c COLLATE nosuch)",
		"CREATE INDEX e7 ON t(c) WHERE",
		"CREATE INDEX e8 ON t()",
		"CREATE INDEX e9 ON t(?)",
	}
	db := openMemory(t)
	defer db.Close()
	parsed := map[string]*Table{}
	for _, s := range tables {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
		tab, err := ParseCreateTable(s)
		if err != nil {
			t.Fatal(err)
		}
		parsed[tab.Name] = tab
	}
	for _, s := range indexes {
		ix, err := ParseCreateIndex(s)
		if err == nil {
			if tab := parsed[ix.Table]; tab != nil {
				err = ix.Resolve(tab)
			}
		}
		if _, serr := db.Exec(s); serr != nil {
			if err == nil && strings.Contains(serr.Error(), "no such collation sequence") && ix.OtherCollation() != "" {
				// Refused by SQLite when created, read by both when stored.
				continue
			}
			if err == nil {
				t.Errorf("%s\n  SQLite rejects it (%v); we accept it", s, serr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s\n  SQLite accepts it; we: %v", s, err)
			continue
		}
		stored := queryStrings(t, db, `SELECT sql FROM sqlite_schema WHERE name = ?`, ix.Name)
		if norm, err := NormalizeCreate(s); len(stored) != 1 || err != nil || norm != stored[0] {
			t.Errorf("%s\n  NormalizeCreate = %q, %v; SQLite stored %q", s, norm, err, stored)
		}
		if g, w := keyFields(ix.KeyOrder(parsed[ix.Table])), sqliteKey(t, db, ix.Name); g != w {
			t.Errorf("%s\n  key    %s\n  SQLite %s", s, g, w)
		}
	}
}

// TestSQLiteCatalog builds a catalog from the sqlite_schema that SQLite
// wrote and checks that every row is understood.
func TestSQLiteCatalog(t *testing.T) {
	db := openMemory(t)
	defer db.Close()
	for _, s := range []string{
		"CREATE TABLE x(a UNIQUE, b PRIMARY KEY, c UNIQUE)",
		"CREATE TABLE w(a, b UNIQUE, c, PRIMARY KEY(a), UNIQUE(c)) WITHOUT ROWID",
		"CREATE TABLE items(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT COLLATE nocase NOT NULL, sku TEXT UNIQUE)",
		"CREATE INDEX items_name ON items(name DESC)",
		"CREATE TABLE \"odd \"\"name\"\"\"(\"key\" BLOB PRIMARY KEY, value BLOB UNIQUE) WITHOUT ROWID",
		"CREATE VIEW v AS SELECT * FROM items",
		"INSERT INTO items(name) VALUES ('a')",
		"ANALYZE",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.Query(`SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema`)
	if err != nil {
		t.Fatal(err)
	}
	var entries []Entry
	for rows.Next() {
		var e Entry
		var s sql.NullString
		if err := rows.Scan(&e.Type, &e.Name, &e.TblName, &e.RootPage, &s); err != nil {
			t.Fatal(err)
		}
		e.SQL, e.HasSQL = s.String, s.Valid
		entries = append(entries, e)
	}
	rows.Close()
	c := Build(entries)
	if len(c.Problems) != 0 {
		t.Errorf("Problems: %v", c.Problems)
	}
	for _, ti := range c.Tables {
		if ti.Err != nil {
			t.Errorf("table %s: %v", ti.Entry.Name, ti.Err)
		}
	}
	for _, ii := range c.Indexes {
		if ii.Err != nil {
			t.Errorf("index %s: %v", ii.Entry.Name, ii.Err)
			continue
		}
		if g, w := keyFields(ii.KeyOrder()), sqliteKey(t, db, ii.Index.Name); g != w {
			t.Errorf("index %s: key %s, SQLite %s", ii.Index.Name, g, w)
		}
	}
	var tables, indexes int
	for _, e := range entries {
		switch e.Type {
		case "table":
			tables++
		case "index":
			indexes++
		}
	}
	if len(c.Tables) != tables || len(c.Indexes) != indexes || indexes != 8 {
		t.Errorf("%d tables, %d indexes; want %d and %d (8)", len(c.Tables), len(c.Indexes), tables, indexes)
	}
}
