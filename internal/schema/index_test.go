package schema

import (
	"errors"
	"testing"
)

func TestParseCreateIndex(t *testing.T) {
	tests := []struct {
		sql                   string
		name, table           string
		unique, partial, expr bool
		where                 string
		cols                  string // keyString of Columns before Resolve
	}{
		{sql: "CREATE INDEX i ON t(a)", name: "i", table: "t", cols: "(a)"},
		{sql: "create unique index if not exists main.\"I x\" on [t y] ( a collate NOCASE desc , b asc );",
			name: "I x", table: "t y", unique: true, cols: "(a nocase desc,b)"},
		{sql: "CREATE INDEX i ON t(a) WHERE b IS NOT NULL AND (c > 0)", name: "i", table: "t", partial: true,
			where: "b IS NOT NULL AND (c > 0)", cols: "(a)"},
		{sql: "CREATE INDEX i ON t((a), 'b', `c`, [d] COLLATE rtrim)", name: "i", table: "t", cols: "(a,b,c,d rtrim)"},
		{sql: "CREATE INDEX i ON t(a + b, lower(c) COLLATE nocase DESC, -d COLLATE rtrim)", name: "i", table: "t", expr: true,
			cols: "(expr[a + b],expr[lower(c)] nocase desc,expr[-d] rtrim)"},
		{sql: "CREATE INDEX i ON t(a || b COLLATE nocase, (a COLLATE nocase) COLLATE rtrim, a COLLATE nocase COLLATE binary)",
			name: "i", table: "t", expr: true, cols: "(expr[a || b COLLATE nocase],a rtrim,a)"},
		{sql: "CREATE INDEX i ON t(desc desc, asc, key)", name: "i", table: "t", cols: "(desc desc,asc,key)"},
		{sql: "CREATE INDEX i ON t(CASE WHEN a THEN b END COLLATE nocase, NOT a COLLATE nocase)", name: "i", table: "t", expr: true,
			cols: "(expr[CASE WHEN a THEN b END] nocase,expr[NOT a COLLATE nocase])"},
	}
	for _, tt := range tests {
		ix, err := ParseCreateIndex(tt.sql)
		if err != nil {
			t.Errorf("ParseCreateIndex(%q): %v", tt.sql, err)
			continue
		}
		if ix.Name != tt.name || ix.Table != tt.table || ix.Unique != tt.unique || ix.Partial != tt.partial ||
			ix.HasExpr != tt.expr || ix.Where != tt.where || ix.SQL != tt.sql || ix.Auto {
			t.Errorf("ParseCreateIndex(%q) = %+v", tt.sql, ix)
		}
		if got := keyString(ix.Columns); got != tt.cols {
			t.Errorf("ParseCreateIndex(%q) columns %s, want %s", tt.sql, got, tt.cols)
		}
		for _, c := range ix.Columns {
			if c.Column != -1 {
				t.Errorf("ParseCreateIndex(%q): unresolved term has Column %d", tt.sql, c.Column)
			}
		}
	}
}

func TestParseCreateIndexErrors(t *testing.T) {
	tests := []struct {
		sql  string
		want error
	}{
		{"CREATE INDEX i ON t()", ErrSyntax},
		{"CREATE INDEX i ON t(a", ErrSyntax},
		{"CREATE INDEX i ON t(a,)", ErrSyntax},
		{"CREATE INDEX i ON t", ErrSyntax},
		{"CREATE INDEX i t(a)", ErrSyntax},
		{"CREATE INDEX ON t(a)", ErrSyntax},
		{"CREATE INDEX i ON main.t(a)", ErrSyntax},
		{"CREATE INDEX i ON t(t.a)", ErrSyntax},
		{"CREATE INDEX i ON t(a NULLS LAST)", ErrSyntax},
		{"CREATE INDEX i ON t(a) WHERE", ErrSyntax},
		{"CREATE INDEX i ON t(a) WHERE (a", ErrSyntax},
		{"CREATE INDEX i ON t(a) WHERE a)", ErrSyntax},
		{"CREATE INDEX i ON t(a) WHERE a = ?", ErrSyntax},
		{"CREATE INDEX i ON t(a) extra", ErrSyntax},
		{"CREATE TEMP INDEX i ON t(a)", ErrSyntax},
		{"CREATE UNIQUE TABLE t(a)", ErrSyntax},
		{"CREATE INDEX i ON t(a COLLATE)", ErrSyntax},
	}
	for _, tt := range tests {
		ix, err := ParseCreateIndex(tt.sql)
		if !errors.Is(err, tt.want) {
			t.Errorf("ParseCreateIndex(%q) = %+v, %v; want an error wrapping %v", tt.sql, ix, err, tt.want)
		}
	}
}

// KeyOrder against sqlite3 3.40.1's PRAGMA index_xinfo.
func TestKeyOrder(t *testing.T) {
	tests := []struct {
		table, index, want string
	}{
		{"CREATE TABLE t(id INTEGER PRIMARY KEY, b TEXT COLLATE nocase, c)", "CREATE INDEX i ON t(b, c DESC)", "(b nocase,c desc,rowid)"},
		{"CREATE TABLE t(id INTEGER PRIMARY KEY, b TEXT COLLATE nocase, c)", "CREATE INDEX i ON t(id, b COLLATE binary)", "(id,b,rowid)"},
		{"CREATE TABLE w(a, b, c, d, PRIMARY KEY(c, a)) WITHOUT ROWID", "CREATE INDEX i ON w(d)", "(d,c,a)"},
		{"CREATE TABLE w(a, b, c, d, PRIMARY KEY(c, a)) WITHOUT ROWID", "CREATE INDEX i ON w(c, b)", "(c,b,a)"},
		{"CREATE TABLE w(a, b, c, d, PRIMARY KEY(c, a)) WITHOUT ROWID", "CREATE INDEX i ON w(a COLLATE nocase, b)", "(a nocase,b,c,a)"},
		{"CREATE TABLE w(a, b, c, d, PRIMARY KEY(c DESC, a)) WITHOUT ROWID", "CREATE INDEX i ON w(d)", "(d,c desc,a)"},
		{"CREATE TABLE w(a, b, c, d, PRIMARY KEY(c DESC, a)) WITHOUT ROWID", "CREATE INDEX i ON w(d+1)", "(expr[d+1],c desc,a)"},
	}
	for _, tt := range tests {
		tab, err := ParseCreateTable(tt.table)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := ParseCreateIndex(tt.index)
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Resolve(tab); err != nil {
			t.Fatal(err)
		}
		if got := keyString(ix.KeyOrder(tab)); got != tt.want {
			t.Errorf("%s; %s: KeyOrder %s, want %s", tt.table, tt.index, got, tt.want)
		}
	}
	// The PK columns appended to an automatic index are ascending whatever
	// the key's order (sqlite3's bAscKeyBug).
	tab, err := ParseCreateTable("CREATE TABLE w(a, b UNIQUE, PRIMARY KEY(a DESC)) WITHOUT ROWID")
	if err != nil {
		t.Fatal(err)
	}
	if got := keyString(tab.AutoIndexes()[0].KeyOrder(tab)); got != "(b,a)" {
		t.Errorf("autoindex KeyOrder %s, want (b,a)", got)
	}
}

func TestResolveErrors(t *testing.T) {
	tab, _ := ParseCreateTable("CREATE TABLE t(a, b)")
	for _, sql := range []string{"CREATE INDEX i ON t(c)", "CREATE INDEX i ON t(rowid)", "CREATE INDEX i ON t('c')"} {
		ix, err := ParseCreateIndex(sql)
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Resolve(tab); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Resolve = %v", sql, err)
		}
	}
}
