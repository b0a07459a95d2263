package schema

import (
	"testing"
)

// maxFuzzLen bounds the input so that every run takes bounded time.
const maxFuzzLen = 4096

var tableSeeds = []string{
	"CREATE TABLE x(a UNIQUE, b PRIMARY KEY, c UNIQUE)",
	"CREATE TABLE w(a, b UNIQUE, c, PRIMARY KEY(a), UNIQUE(c)) WITHOUT ROWID",
	"CREATE TABLE w(a,b,c,d, PRIMARY KEY(c,a)) WITHOUT ROWID",
	"CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, b TEXT COLLATE nocase NOT NULL DEFAULT 'x', c AS (b) STORED) STRICT",
	"create temp table if not exists main.\"t\"([a b] VARCHAR(10) CHECK(a > (1)), `c` DOUBLE PRECISION REFERENCES u(x) ON DELETE CASCADE, FOREIGN KEY(c) REFERENCES u)",
	"CREATE TABLE t(a INTEGER PRIMARY KEY DESC, b UNIQUE ON CONFLICT REPLACE, UNIQUE(b COLLATE rtrim, a DESC)) WITHOUT ROWID, STRICT;",
	"CREATE TABLE t(x DECIMAL(10, -2) DEFAULT -1.5e3, y GENERATED ALWAYS AS (x*2) VIRTUAL, z x'00' /* c */ -- d\n)",
	"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID",
}

// checkTable verifies the invariants every parsed table must satisfy.
func checkTable(t *testing.T, sql string, tab *Table) {
	n := len(tab.Columns)
	if n == 0 {
		t.Fatalf("%q: no columns", sql)
	}
	if tab.RowidAlias < -1 || tab.RowidAlias >= n || tab.RowidAlias >= 0 && tab.WithoutRowID {
		t.Fatalf("%q: bad RowidAlias %d", sql, tab.RowidAlias)
	}
	if tab.WithoutRowID && len(tab.PrimaryKey) == 0 {
		t.Fatalf("%q: WITHOUT ROWID without a key", sql)
	}
	for _, k := range append([]Constraint{{Columns: tab.PrimaryKey}}, tab.Constraints...) {
		for _, c := range k.Columns {
			if c.Column < 0 || c.Column >= n || c.Expr {
				t.Fatalf("%q: bad key column %+v", sql, c)
			}
		}
	}
	for _, i := range tab.RecordOrder {
		if i < 0 || i >= n || tab.Columns[i].Hidden {
			t.Fatalf("%q: bad RecordOrder %v", sql, tab.RecordOrder)
		}
	}
	tab.IsBucket()
	tab.AutoIndexes()
}

func FuzzParseCreateTable(f *testing.F) {
	for _, s := range tableSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if len(sql) > maxFuzzLen {
			return
		}
		tab, err := ParseCreateTable(sql)
		norm, nerr := NormalizeCreate(sql)
		Build([]Entry{{Type: "table", Name: "t", TblName: "t", SQL: sql, HasSQL: true}})
		if err != nil {
			return
		}
		checkTable(t, sql, tab)
		if nerr != nil {
			t.Fatalf("%q parses but NormalizeCreate fails: %v", sql, nerr)
		}
		// The stored text must parse to the same table.
		tab2, err := ParseCreateTable(norm)
		if err != nil {
			t.Fatalf("NormalizeCreate(%q) = %q, which does not parse: %v", sql, norm, err)
		}
		if a, b := describeKeys(tab), describeKeys(tab2); a != b {
			t.Fatalf("%q and its normal form %q differ:\n%s\n%s", sql, norm, a, b)
		}
	})
}

func FuzzParseCreateIndex(f *testing.F) {
	for _, s := range []string{
		"CREATE INDEX i ON t(a)",
		"CREATE UNIQUE INDEX IF NOT EXISTS main.i ON t(a COLLATE nocase DESC, b ASC) WHERE a > 0;",
		"CREATE INDEX i ON t((a), 'b', \"zz\", lower(c) COLLATE rtrim, a || b COLLATE nocase, CASE WHEN a THEN 1 END)",
	} {
		f.Add(s)
	}
	tab, err := ParseCreateTable("CREATE TABLE t(a TEXT COLLATE nocase, b, c, d, PRIMARY KEY(c DESC, a)) WITHOUT ROWID")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if len(sql) > maxFuzzLen {
			return
		}
		ix, err := ParseCreateIndex(sql)
		norm, nerr := NormalizeCreate(sql)
		if err != nil {
			return
		}
		if nerr != nil {
			t.Fatalf("%q parses but NormalizeCreate fails: %v", sql, nerr)
		}
		if _, err := ParseCreateIndex(norm); err != nil {
			t.Fatalf("NormalizeCreate(%q) = %q, which does not parse: %v", sql, norm, err)
		}
		if len(ix.Columns) == 0 {
			t.Fatalf("%q: no terms", sql)
		}
		if ix.Resolve(tab) != nil {
			return
		}
		for _, c := range ix.KeyOrder(tab) {
			if c.Expr != (c.Column < 0) || c.Column >= len(tab.Columns) {
				t.Fatalf("%q: bad key term %+v", sql, c)
			}
		}
	})
}
