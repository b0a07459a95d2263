package schema

import (
	"errors"
	"strings"
	"testing"
)

// Key structure of tables. Every case was checked against sqlite3 3.40.1
// (PRAGMA table_xinfo / index_list / index_xinfo and the sqlite_schema rows).
func TestParseCreateTableKeys(t *testing.T) {
	tests := []struct {
		sql  string
		want string
	}{
		// sqlite-format.md §6, autoindex numbering.
		{"CREATE TABLE x(a UNIQUE, b PRIMARY KEY, c UNIQUE)",
			"alias=- pk=(b) cons=1:U(a) 2:PK(b) 3:U(c) rec=a,b,c"},
		{"CREATE TABLE w(a, b UNIQUE, c, PRIMARY KEY(a), UNIQUE(c)) WITHOUT ROWID",
			"alias=- pk=(a) cons=1:U(b) 2:PK(a) 3:U(c) rec=a,b,c"},
		// §6, record order of a WITHOUT ROWID table.
		{"CREATE TABLE w(a,b,c,d, PRIMARY KEY(c,a)) WITHOUT ROWID",
			"alias=- pk=(c,a) cons=1:PK(c,a) rec=c,a,b,d"},

		// The rowid alias (§4.1).
		{"CREATE TABLE t(id INTEGER PRIMARY KEY, b)", "alias=id pk=(id) cons= rec=id,b"},
		{"CREATE TABLE t(id integer primary key asc, b)", "alias=id pk=(id) cons= rec=id,b"},
		{"CREATE TABLE t(id 'integer' PRIMARY KEY)", "alias=id pk=(id) cons= rec=id"},
		{"CREATE TABLE t(id [INTEGER] PRIMARY KEY)", "alias=id pk=(id) cons= rec=id"},
		{"CREATE TABLE t(x INTEGER, y, PRIMARY KEY(x DESC))", "alias=x pk=(x) cons= rec=x,y"},
		{"CREATE TABLE t(x INTEGER, y INTEGER, PRIMARY KEY(y COLLATE nocase))", "alias=y pk=(y) cons= rec=x,y"},
		{"CREATE TABLE t(x INTEGER PRIMARY KEY DESC, y)", "alias=- pk=(x desc) cons=1:PK(x desc) rec=x,y"},
		{"CREATE TABLE t(x INT PRIMARY KEY, y)", "alias=- pk=(x) cons=1:PK(x) rec=x,y"},
		{"CREATE TABLE t(x INTEGER(5) PRIMARY KEY)", "alias=- pk=(x) cons=1:PK(x) rec=x"},
		{"CREATE TABLE t(x UNSIGNED INTEGER PRIMARY KEY)", "alias=- pk=(x) cons=1:PK(x) rec=x"},
		{"CREATE TABLE t(x INTEGER, y, PRIMARY KEY(x, y))", "alias=- pk=(x,y) cons=1:PK(x,y) rec=x,y"},
		{"CREATE TABLE t(id INTEGER PRIMARY KEY, b UNIQUE, UNIQUE(id))",
			"alias=id pk=(id) cons=1:U(b) 2:U(id) rec=id,b"},
		{"CREATE TABLE t(id INTEGER UNIQUE PRIMARY KEY)", "alias=id pk=(id) cons=1:U(id) rec=id"},

		// WITHOUT ROWID: an INTEGER PRIMARY KEY is numbered last.
		{"CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE) WITHOUT ROWID",
			"alias=- pk=(a) cons=1:U(b) 2:PK(a) rec=a,b"},
		// ... and merges into an equal UNIQUE, which becomes the PK.
		{"CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE, UNIQUE(a)) WITHOUT ROWID",
			"alias=- pk=(a) cons=1:U(b) 2:PK(a) rec=a,b"},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY DESC, b UNIQUE) WITHOUT ROWID",
			"alias=- pk=(a desc) cons=1:PK(a desc) 2:U(b) rec=a,b"},
		{"CREATE TABLE t(a UNIQUE, b, PRIMARY KEY(a)) WITHOUT ROWID",
			"alias=- pk=(a) cons=1:PK(a) rec=a,b"},
		// WITHOUT ROWID drops repeated PK columns, unless the collation differs.
		{"CREATE TABLE t(a, b, c, PRIMARY KEY(a, b, a)) WITHOUT ROWID",
			"alias=- pk=(a,b) cons=1:PK(a,b) rec=a,b,c"},
		{"CREATE TABLE t(a, b, c, PRIMARY KEY(a, b, a COLLATE nocase)) WITHOUT ROWID",
			"alias=- pk=(a,b,a nocase) cons=1:PK(a,b,a nocase) rec=a,b,a,c"},
		{"CREATE TABLE t(a, b, c NOT NULL, PRIMARY KEY(a DESC, b)) WITHOUT ROWID",
			"alias=- pk=(a desc,b) cons=1:PK(a desc,b) rec=a,b,c"},

		// Duplicate constraints share one index and one number.
		{"CREATE TABLE t(a UNIQUE, b, UNIQUE(a), UNIQUE(b), UNIQUE(a DESC))",
			"alias=- pk=() cons=1:U(a) 2:U(b) rec=a,b"},
		{"CREATE TABLE t(a UNIQUE, PRIMARY KEY(a))", "alias=- pk=(a) cons=1:PK(a) rec=a"},
		{"CREATE TABLE t(a, UNIQUE(a) PRIMARY KEY(a) CHECK(a>0))", "alias=- pk=(a) cons=1:PK(a) rec=a"},
		{"CREATE TABLE t(a TEXT UNIQUE, UNIQUE(a COLLATE nocase), UNIQUE(a DESC))",
			"alias=- pk=() cons=1:U(a) 2:U(a nocase) rec=a"},
		{"CREATE TABLE t(a UNIQUE UNIQUE, b)", "alias=- pk=() cons=1:U(a) rec=a,b"},
		// A column's COLLATE applies to its constraints wherever it is written.
		{"CREATE TABLE t(a UNIQUE COLLATE nocase, UNIQUE(a COLLATE nocase), UNIQUE(a))",
			"alias=- pk=() cons=1:U(a nocase) rec=a"},
		{"CREATE TABLE t(a, b, UNIQUE((a)), UNIQUE('b'), UNIQUE(\"b\" COLLATE nocase), UNIQUE((a COLLATE rtrim)))",
			"alias=- pk=() cons=1:U(a) 2:U(b) 3:U(b nocase) 4:U(a rtrim) rec=a,b"},
		{"CREATE TABLE t(a, b, UNIQUE(a COLLATE nocase COLLATE rtrim), UNIQUE((a COLLATE nocase) COLLATE binary))",
			"alias=- pk=() cons=1:U(a rtrim) 2:U(a) rec=a,b"},

		// Generated columns: VIRTUAL ones are not stored.
		{"CREATE TABLE t(a, b AS (a) VIRTUAL, c AS (a) STORED, d)", "alias=- pk=() cons= rec=a,c,d"},
		{"CREATE TABLE t(a PRIMARY KEY, b AS (a+1), c) WITHOUT ROWID", "alias=- pk=(a) cons=1:PK(a) rec=a,c"},
		{"CREATE TABLE t(a, b, c GENERATED ALWAYS AS (a) VIRTUAL, PRIMARY KEY(b)) WITHOUT ROWID",
			"alias=- pk=(b) cons=1:PK(b) rec=b,a"},

		// Keywords that fall back to names.
		{"CREATE TABLE t(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID, STRICT",
			"alias=- pk=(key) cons=1:PK(key) rec=key,value"},
		{"CREATE TABLE t(desc, asc, replace, UNIQUE(desc DESC, asc))",
			"alias=- pk=() cons=1:U(desc desc,asc) rec=desc,asc,replace"},
		{"CREATE TABLE \"a b\"([c d] UNIQUE, `e``f` UNIQUE, 'g' UNIQUE, left, indexed)",
			"alias=- pk=() cons=1:U(c d) 2:U(e`f) 3:U(g) rec=c d,e`f,g,left,indexed"},
		{"CREATE TABLE t(x INTEGER, PRIMARY KEY(x AUTOINCREMENT))", "alias=x pk=(x) cons= rec=x"},
	}
	for _, tt := range tests {
		tab, err := ParseCreateTable(tt.sql)
		if err != nil {
			t.Errorf("ParseCreateTable(%q): %v", tt.sql, err)
			continue
		}
		if got := describeKeys(tab); got != tt.want {
			t.Errorf("ParseCreateTable(%q):\n got %s\nwant %s", tt.sql, got, tt.want)
		}
	}
}

func TestParseCreateTableColumns(t *testing.T) {
	tests := []struct {
		sql  string
		want []string // describeColumn of each column
	}{
		{"CREATE TABLE t(a, b INT, c VARCHAR(10), d DOUBLE PRECISION, e DECIMAL(10, 2), f UNSIGNED BIG INT, g BOOLEAN, h DATETIME, i FLOATING POINT, j CLOB, k NVARCHAR(-1), l DECIMAL(+5,-2))", []string{
			"a||BLOB|", "b|INT|INTEGER|", "c|VARCHAR(10)|TEXT|", "d|DOUBLE PRECISION|REAL|",
			"e|DECIMAL(10, 2)|NUMERIC|", "f|UNSIGNED BIG INT|INTEGER|", "g|BOOLEAN|NUMERIC|",
			"h|DATETIME|NUMERIC|", "i|FLOATING POINT|INTEGER|", "j|CLOB|TEXT|", "k|NVARCHAR(-1)|TEXT|",
			"l|DECIMAL(+5,-2)|NUMERIC|",
		}},
		// The type is the source text, comments and spacing included, as sqlite3 keeps it.
		{"CREATE TABLE t(f UNSIGNED  /*c*/ BIG INT, g DECIMAL( 10 , 2 ), h \"my type\", i 'x''y', j \"\")", []string{
			"f|UNSIGNED  /*c*/ BIG INT|INTEGER|", "g|DECIMAL( 10 , 2 )|NUMERIC|", "h|my type|NUMERIC|",
			"i|x'y|NUMERIC|", "j||NUMERIC|",
		}},
		// GENERATED ALWAYS is not part of the type.
		{"CREATE TABLE t(a, h GENERATED ALWAYS AS (1), i INT GENERATED ALWAYS AS (2) STORED, j ALWAYS AS (3), k TEXT NOT NULL GENERATED ALWAYS AS (4), l AS (5) virtual)", []string{
			"a||BLOB|", "h||BLOB|virtual", "i|INT|INTEGER|stored", "j|ALWAYS|NUMERIC|virtual",
			"k|TEXT|TEXT|nn,virtual", "l||BLOB|virtual",
		}},
		// DEFAULT, as PRAGMA table_info shows it.
		{"CREATE TABLE t(k DEFAULT (  1 + 2  ), l DEFAULT -1, m DEFAULT - 1.5, n DEFAULT 'x''y', o DEFAULT CURRENT_TIMESTAMP, p DEFAULT abc, q DEFAULT x'00', r DEFAULT NULL, s DEFAULT true, u DEFAULT +5, v DEFAULT ((3)), w DEFAULT \"q\", x DEFAULT 0x1F, y DEFAULT 1e3)", []string{
			"k||BLOB|default=1 + 2", "l||BLOB|default=-1", "m||BLOB|default=- 1.5", "n||BLOB|default='x''y'",
			"o||BLOB|default=CURRENT_TIMESTAMP", "p||BLOB|default=abc", "q||BLOB|default=x'00'",
			"r||BLOB|default=NULL", "s||BLOB|default=true", "u||BLOB|default=+5", "v||BLOB|default=(3)",
			"w||BLOB|default=\"q\"", "x||BLOB|default=0x1F", "y||BLOB|default=1e3",
		}},
		// Constraints of every kind, each with an optional CONSTRAINT name.
		{`CREATE TABLE t(
			a INTEGER CONSTRAINT pk PRIMARY KEY ON CONFLICT REPLACE AUTOINCREMENT,
			b TEXT CONSTRAINT nn NOT NULL ON CONFLICT FAIL COLLATE nocase CONSTRAINT u UNIQUE ON CONFLICT IGNORE,
			c NULL CHECK (c > 0 AND (c < 10)) DEFAULT 7 COLLATE "RTRIM" CONSTRAINT x,
			d REFERENCES other(x) ON DELETE CASCADE ON UPDATE SET NULL MATCH full DEFERRABLE INITIALLY DEFERRED,
			e REFERENCES other NOT DEFERRABLE INITIALLY IMMEDIATE,
			f REFERENCES other ON DELETE SET DEFAULT ON UPDATE NO ACTION ON INSERT RESTRICT,
			CONSTRAINT c1 CHECK (a <> b) ON CONFLICT ABORT,
			CONSTRAINT fk FOREIGN KEY (d, e) REFERENCES other (x, y) ON DELETE RESTRICT NOT DEFERRABLE,
			FOREIGN KEY (f) REFERENCES other DEFERRABLE INITIALLY DEFERRED
		)`, []string{
			"a|INTEGER|INTEGER|pk", "b|TEXT|TEXT|nocase,nn", "c||BLOB|rtrim,default=7",
			"d||BLOB|", "e||BLOB|", "f||BLOB|",
		}},
		// NOT NULL is implied for the PK of WITHOUT ROWID and STRICT tables (not the alias).
		{"CREATE TABLE t(a, b, c, PRIMARY KEY(a,b)) WITHOUT ROWID", []string{"a||BLOB|nn,pk", "b||BLOB|nn,pk", "c||BLOB|"}},
		{"CREATE TABLE t(a INT, b TEXT, PRIMARY KEY(a)) STRICT", []string{"a|INT|INTEGER|nn,pk", "b|TEXT|TEXT|"}},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY, b ANY, c any, d \"INTEGER\") STRICT", []string{"a|INTEGER|INTEGER|pk", "b|ANY|BLOB|", "c|any|BLOB|", "d|INTEGER|INTEGER|"}},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY, b ANY)", []string{"a|INTEGER|INTEGER|pk", "b|ANY|NUMERIC|"}},
	}
	for _, tt := range tests {
		tab, err := ParseCreateTable(tt.sql)
		if err != nil {
			t.Errorf("ParseCreateTable(%q): %v", tt.sql, err)
			continue
		}
		var got []string
		for _, c := range tab.Columns {
			got = append(got, describeColumn(c))
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("ParseCreateTable(%q) columns:\n got %q\nwant %q", tt.sql, got, tt.want)
		}
	}
}

func TestParseCreateTableFields(t *testing.T) {
	sql := "create temp table if not exists temp.\"My Table\"(id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT, CHECK(v <> ''), CHECK (length(v) < 10)) STRICT;"
	tab, err := ParseCreateTable(sql)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Name != "My Table" || tab.SQL != sql || !tab.Strict || tab.WithoutRowID || !tab.AutoIncrement {
		t.Errorf("got name %q strict %v withoutRowID %v autoincrement %v", tab.Name, tab.Strict, tab.WithoutRowID, tab.AutoIncrement)
	}
	if got := strings.Join(tab.Checks, "|"); got != "v <> ''|length(v) < 10" {
		t.Errorf("Checks = %q", got)
	}
	if tab.ColumnIndex("V") != 1 || tab.ColumnIndex("w") != -1 {
		t.Errorf("ColumnIndex is wrong")
	}
	tab, err = ParseCreateTable("CREATE TABLE t(a UNIQUE ON CONFLICT REPLACE, UNIQUE(a), b PRIMARY KEY ON CONFLICT ROLLBACK)")
	if err == nil {
		t.Fatal("columns after table constraints were accepted")
	}
	tab, err = ParseCreateTable("CREATE TABLE t(a UNIQUE, b PRIMARY KEY ON CONFLICT ROLLBACK, UNIQUE(a) ON CONFLICT REPLACE)")
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Constraints) != 2 || tab.Constraints[0].OnConflict != "REPLACE" || tab.Constraints[1].OnConflict != "ROLLBACK" {
		t.Errorf("Constraints = %+v", tab.Constraints)
	}
}

func TestParseCreateTableErrors(t *testing.T) {
	tests := []struct {
		sql  string
		want error
	}{
		{"", ErrSyntax},
		{"CREATE", ErrSyntax},
		{"CREATE TABLE", ErrSyntax},
		{"CREATE TABLE t", ErrSyntax},
		{"CREATE TABLE t()", ErrSyntax},
		{"CREATE TABLE t(a", ErrSyntax},
		{"CREATE TABLE t(a,)", ErrSyntax},
		{"CREATE TABLE t(a, UNIQUE(a),)", ErrSyntax},
		{"CREATE TABLE t(a, UNIQUE(a), b)", ErrSyntax},
		{"CREATE TABLE t(a) garbage", ErrSyntax},
		{"CREATE TABLE t(a); CREATE TABLE u(b)", ErrSyntax},
		{"CREATE TABLE t(a) WITHOUT ROWID", ErrSyntax}, // PRIMARY KEY missing
		{"CREATE TABLE t(a PRIMARY KEY) WITHOUT \"rowid\"", ErrSyntax},
		{"CREATE TABLE t(a PRIMARY KEY) STRICT,", ErrSyntax},
		{"CREATE TABLE t(a PRIMARY KEY) FAST", ErrSyntax},
		{"CREATE TABLE t(a) STRICT", ErrSyntax},
		{"CREATE TABLE t(a FOO) STRICT", ErrSyntax},
		{"CREATE TABLE t(a PRIMARY KEY, b PRIMARY KEY)", ErrSyntax},
		{"CREATE TABLE t(a, b, PRIMARY KEY(a), PRIMARY KEY(b))", ErrSyntax},
		{"CREATE TABLE t(a, b, PRIMARY KEY(a+b))", ErrSyntax},
		{"CREATE TABLE t(a, UNIQUE(\"zz\"))", ErrSyntax},
		{"CREATE TABLE t(a, UNIQUE(t.a))", ErrSyntax},
		{"CREATE TABLE t(a, UNIQUE(a NULLS FIRST))", ErrSyntax},
		{"CREATE TABLE t(a, UNIQUE(rowid))", ErrSyntax},
		{"CREATE TABLE t(a, UNIQUE(c))", ErrSyntax},
		{"CREATE TABLE t(a, A)", ErrSyntax},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT) WITHOUT ROWID", ErrSyntax},
		{"CREATE TABLE t(a INT PRIMARY KEY AUTOINCREMENT)", ErrSyntax},
		{"CREATE TABLE t(a INTEGER PRIMARY KEY DESC AUTOINCREMENT)", ErrSyntax},
		{"CREATE TABLE t(a, b AS (a) PRIMARY KEY)", ErrSyntax},
		{"CREATE TABLE t(a, b AS (a) DEFAULT 3)", ErrSyntax},
		{"CREATE TABLE t(a, b DEFAULT 3 AS (a))", ErrSyntax},
		{"CREATE TABLE t(a, b AS (a) foo)", ErrSyntax},
		{"CREATE TABLE t(a AS (1))", ErrSyntax}, // no stored column
		{"CREATE TABLE t(a UNIQUE ON CONFLICT REPLACE, UNIQUE(a) ON CONFLICT IGNORE)", ErrSyntax},
		{"CREATE TABLE t(a CHECK)", ErrSyntax},
		{"CREATE TABLE t(a CHECK())", ErrSyntax},
		{"CREATE TABLE t(a CHECK((a))", ErrSyntax},
		{"CREATE TABLE t(a DEFAULT)", ErrSyntax},
		{"CREATE TABLE t(a DEFAULT -abc)", ErrSyntax},
		{"CREATE TABLE t(a DEFAULT left)", ErrSyntax},
		{"CREATE TABLE t(a NOT)", ErrSyntax},
		{"CREATE TABLE t(a PRIMARY)", ErrSyntax},
		{"CREATE TABLE t(a UNIQUE ON DELETE)", ErrSyntax},
		{"CREATE TABLE t(a REFERENCES)", ErrSyntax},
		{"CREATE TABLE t(a REFERENCES u ON DELETE)", ErrSyntax},
		{"CREATE TABLE t(a INT(10)(20))", ErrSyntax},
		{"CREATE TABLE t(a INT(x))", ErrSyntax},
		{"CREATE TABLE t(a (10))", ErrSyntax},
		{"CREATE TABLE t(a INT LEFT)", ErrSyntax},
		{"CREATE TABLE t(primary)", ErrSyntax},
		{"CREATE TABLE t(a 'unterminated)", ErrSyntax},
		{"CREATE TABLE t(a) -- ok\n garbage", ErrSyntax},
		{"CREATE TABLE if(a)", ErrSyntax},
		{"CREATE TABLE t(a COLLATE)", ErrSyntax},
		{"CREATE VIRTUAL TABLE t USING fts5(a)", ErrUnsupported},
		{"CREATE TABLE t AS SELECT 1", ErrUnsupported},
		{"CREATE INDEX i ON t(a)", ErrSyntax},
	}
	for _, tt := range tests {
		tab, err := ParseCreateTable(tt.sql)
		if !errors.Is(err, tt.want) {
			t.Errorf("ParseCreateTable(%q) = %v, %v; want an error wrapping %v", tt.sql, tab, err, tt.want)
		}
	}
}

// Errors name the object and the offset.
func TestParseCreateTableErrorText(t *testing.T) {
	_, err := ParseCreateTable("CREATE TABLE tab(a INT, b FOO BAR (1,2,3))")
	if err == nil {
		t.Fatal("no error")
	}
	if msg := err.Error(); !strings.Contains(msg, `table "tab"`) || !strings.Contains(msg, "offset 38") {
		t.Errorf("error %q does not say where", msg)
	}
}

func TestIsBucket(t *testing.T) {
	tests := []struct {
		sql  string
		want bool
	}{
		{"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID", true},
		{"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID, STRICT", true},
		{"CREATE TABLE b(KEY blob, Value Blob, PRIMARY KEY(key)) STRICT, WITHOUT ROWID", true},
		{"CREATE TABLE b(\"key\" BLOB PRIMARY KEY ASC, [value] BLOB) WITHOUT ROWID", true},
		{"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB)", false},
		{"CREATE TABLE b(key BLOB PRIMARY KEY DESC, value BLOB) WITHOUT ROWID", false},
		{"CREATE TABLE b(key BLOB, value BLOB, PRIMARY KEY(key, value)) WITHOUT ROWID", false},
		{"CREATE TABLE b(value BLOB, key BLOB PRIMARY KEY) WITHOUT ROWID", false},
		{"CREATE TABLE b(key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID", false},
		{"CREATE TABLE b(key BLOB PRIMARY KEY, value) WITHOUT ROWID", false},
		{"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB UNIQUE) WITHOUT ROWID", false},
		{"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID", false},
		{"CREATE TABLE b(key BLOB PRIMARY KEY COLLATE nocase, value BLOB) WITHOUT ROWID", false},
		{"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB CHECK(length(value) < 9)) WITHOUT ROWID", false},
		{"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB, extra) WITHOUT ROWID", false},
		{"CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB AS (key)) WITHOUT ROWID", false},
	}
	for _, tt := range tests {
		tab, err := ParseCreateTable(tt.sql)
		if err != nil {
			t.Errorf("ParseCreateTable(%q): %v", tt.sql, err)
			continue
		}
		if got := tab.IsBucket(); got != tt.want {
			t.Errorf("IsBucket(%q) = %v, want %v", tt.sql, got, tt.want)
		}
	}
}

func TestAutoIndexes(t *testing.T) {
	tab, err := ParseCreateTable("CREATE TABLE w(a, b UNIQUE, c, PRIMARY KEY(a), UNIQUE(c)) WITHOUT ROWID")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ix := range tab.AutoIndexes() {
		names = append(names, ix.Name+keyString(ix.Columns))
	}
	if got := strings.Join(names, " "); got != "sqlite_autoindex_w_1(b) sqlite_autoindex_w_3(c)" {
		t.Errorf("AutoIndexes = %s", got)
	}
}

func TestSchemaTable(t *testing.T) {
	s := SchemaTable()
	if s.Name != "sqlite_schema" || len(s.Columns) != 5 || s.RowidAlias != -1 ||
		s.Columns[3].Affinity != AffinityInteger || s.Columns[4].Affinity != AffinityText {
		t.Errorf("SchemaTable = %+v", s)
	}
}
