package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// sqlite3Schema is sqlite_schema as sqlite3 3.40.1 wrote it for:
//
//	CREATE TABLE x(a UNIQUE, b PRIMARY KEY, c UNIQUE);
//	CREATE TABLE w(a, b UNIQUE, c, PRIMARY KEY(a), UNIQUE(c)) WITHOUT ROWID;
//	CREATE TABLE items(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT COLLATE nocase NOT NULL, price REAL, sku TEXT UNIQUE);
//	CREATE INDEX items_name ON items(name, price DESC);
//	CREATE UNIQUE INDEX items_lower ON items(lower(name)) WHERE price > 0;
//	CREATE TABLE "Bucket"(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID;
//	CREATE VIEW v AS SELECT * FROM items;
//	CREATE TRIGGER tr AFTER INSERT ON items BEGIN SELECT 1; END;
//	CREATE INDEX w_d ON w(c COLLATE nocase);
//	INSERT INTO items(name) VALUES('a'); ANALYZE;
var sqlite3Schema = []Entry{
	{Type: "table", Name: "x", TblName: "x", RootPage: 2, SQL: "CREATE TABLE x(a UNIQUE, b PRIMARY KEY, c UNIQUE)", HasSQL: true},
	{Type: "index", Name: "sqlite_autoindex_x_1", TblName: "x", RootPage: 3},
	{Type: "index", Name: "sqlite_autoindex_x_2", TblName: "x", RootPage: 4},
	{Type: "index", Name: "sqlite_autoindex_x_3", TblName: "x", RootPage: 5},
	{Type: "table", Name: "w", TblName: "w", RootPage: 6, SQL: "CREATE TABLE w(a, b UNIQUE, c, PRIMARY KEY(a), UNIQUE(c)) WITHOUT ROWID", HasSQL: true},
	{Type: "index", Name: "sqlite_autoindex_w_1", TblName: "w", RootPage: 7},
	{Type: "index", Name: "sqlite_autoindex_w_3", TblName: "w", RootPage: 8},
	{Type: "table", Name: "items", TblName: "items", RootPage: 9, SQL: "CREATE TABLE items(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT COLLATE nocase NOT NULL, price REAL, sku TEXT UNIQUE)", HasSQL: true},
	{Type: "index", Name: "sqlite_autoindex_items_1", TblName: "items", RootPage: 10},
	{Type: "table", Name: "sqlite_sequence", TblName: "sqlite_sequence", RootPage: 11, SQL: "CREATE TABLE sqlite_sequence(name,seq)", HasSQL: true},
	{Type: "index", Name: "items_name", TblName: "items", RootPage: 12, SQL: "CREATE INDEX items_name ON items(name, price DESC)", HasSQL: true},
	{Type: "index", Name: "items_lower", TblName: "items", RootPage: 13, SQL: "CREATE UNIQUE INDEX items_lower ON items(lower(name)) WHERE price > 0", HasSQL: true},
	{Type: "table", Name: "Bucket", TblName: "Bucket", RootPage: 14, SQL: "CREATE TABLE \"Bucket\"(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID", HasSQL: true},
	{Type: "view", Name: "v", TblName: "v", RootPage: 0, SQL: "CREATE VIEW v AS SELECT * FROM items", HasSQL: true},
	{Type: "trigger", Name: "tr", TblName: "items", RootPage: 0, SQL: "CREATE TRIGGER tr AFTER INSERT ON items BEGIN SELECT 1; END", HasSQL: true},
	{Type: "index", Name: "w_d", TblName: "w", RootPage: 15, SQL: "CREATE INDEX w_d ON w(c COLLATE nocase)", HasSQL: true},
	{Type: "table", Name: "sqlite_stat1", TblName: "sqlite_stat1", RootPage: 16, SQL: "CREATE TABLE sqlite_stat1(tbl,idx,stat)", HasSQL: true},
}

// describeIndex renders an index and its record layout on one line.
func describeIndex(ii *IndexInfo) string {
	if ii.Err != nil {
		return ii.Entry.Name + " ERR"
	}
	ix := ii.Index
	var flags []string
	for _, f := range []struct {
		on   bool
		name string
	}{{ix.Unique, "unique"}, {ix.Auto, "auto"}, {ix.PrimaryKey, "pk"}, {ix.Partial, "partial"}, {ix.HasExpr, "expr"}} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	return fmt.Sprintf("%s on %s [%s] key=%s", ix.Name, ii.Table.Table.Name, strings.Join(flags, ","), keyString(ii.KeyOrder()))
}

func TestBuildSQLite3Schema(t *testing.T) {
	c := Build(sqlite3Schema)
	if len(c.Problems) != 0 {
		t.Errorf("Problems: %v", c.Problems)
	}
	var tables []string
	for _, ti := range c.Tables {
		if ti.Err != nil {
			t.Errorf("table %s: %v", ti.Entry.Name, ti.Err)
			continue
		}
		tables = append(tables, ti.Table.Name)
	}
	if got := strings.Join(tables, " "); got != "x w items sqlite_sequence Bucket sqlite_stat1" {
		t.Errorf("tables = %s", got)
	}
	var got []string
	for _, ii := range c.Indexes {
		got = append(got, describeIndex(ii))
	}
	want := []string{
		"sqlite_autoindex_x_1 on x [unique,auto] key=(a,rowid)",
		"sqlite_autoindex_x_2 on x [unique,auto,pk] key=(b,rowid)",
		"sqlite_autoindex_x_3 on x [unique,auto] key=(c,rowid)",
		"sqlite_autoindex_w_1 on w [unique,auto] key=(b,a)",
		"sqlite_autoindex_w_3 on w [unique,auto] key=(c,a)",
		"sqlite_autoindex_items_1 on items [unique,auto] key=(sku,rowid)",
		"items_name on items [] key=(name nocase,price desc,rowid)",
		"items_lower on items [unique,partial,expr] key=(expr[lower(name)],rowid)",
		"w_d on w [] key=(c nocase,a)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("indexes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	items := c.Table("ITEMS")
	if items == nil || items.Table.RowidAlias != 0 || !items.Table.AutoIncrement || len(items.Indexes) != 3 {
		t.Fatalf("Table(ITEMS) = %+v", items)
	}
	if !slices.Equal(items.Triggers, []string{"tr"}) {
		t.Errorf("items' triggers: %q, want [tr]", items.Triggers)
	}
	if b := c.Table("bucket"); b != nil && len(b.Triggers) != 0 {
		t.Errorf("bucket's triggers: %q, want none", b.Triggers)
	}
	if c.Table("bucket") == nil || !c.Table("bucket").Table.IsBucket() {
		t.Errorf("Bucket is not a bucket")
	}
	if ii := c.Index("Items_Lower"); ii == nil || ii.Index.Where != "price > 0" || ii.Table != items {
		t.Errorf("Index(Items_Lower) = %+v", ii)
	}
	if c.Table("v") != nil || c.Index("tr") != nil || c.Table("sqlite_schema") != nil {
		t.Errorf("views, triggers or sqlite_schema in the catalog")
	}
	if len(c.Entries) != len(sqlite3Schema) {
		t.Errorf("Entries has %d rows", len(c.Entries))
	}
}

func TestBuildErrors(t *testing.T) {
	entries := []Entry{
		{Type: "table", Name: "t", TblName: "t", RootPage: 2, SQL: "CREATE TABLE t(a UNIQUE, b COLLATE nocase)", HasSQL: true},
		{Type: "index", Name: "sqlite_autoindex_t_1", TblName: "t", RootPage: 3},
		{Type: "index", Name: "sqlite_autoindex_t_2", TblName: "t", RootPage: 4},                                                    // orphan
		{Type: "index", Name: "t_b", TblName: "t", RootPage: 5, SQL: "CREATE INDEX t_b ON t(b)", HasSQL: true},                      // fine
		{Type: "index", Name: "t_c", TblName: "t", RootPage: 6, SQL: "CREATE INDEX t_c ON t(c)", HasSQL: true},                      // no column c
		{Type: "index", Name: "t_x", TblName: "t", RootPage: 7, SQL: "CREATE INDEX t_x ON t(a COLLATE klingon)", HasSQL: true},      // collation
		{Type: "index", Name: "t_y", TblName: "t", RootPage: 8, SQL: "CREATE INDEX t_y ON t(a", HasSQL: true},                       // syntax
		{Type: "index", Name: "u_a", TblName: "u", RootPage: 9, SQL: "CREATE INDEX u_a ON u(a)", HasSQL: true},                      // no table u
		{Type: "table", Name: "vt", TblName: "vt", RootPage: 0, SQL: "CREATE VIRTUAL TABLE vt USING fts5(a)", HasSQL: true},         // virtual
		{Type: "table", Name: "bad", TblName: "bad", RootPage: 10, SQL: "CREATE TABLE bad(a COLLATE klingon)", HasSQL: true},        // collation
		{Type: "index", Name: "bad_a", TblName: "bad", RootPage: 11, SQL: "CREATE INDEX bad_a ON bad(a)", HasSQL: true},             // table failed
		{Type: "index", Name: "sqlite_autoindex_bad_1", TblName: "bad", RootPage: 18},                                               // table failed
		{Type: "table", Name: "T", TblName: "T", RootPage: 12, SQL: "CREATE TABLE T(z)", HasSQL: true},                              // duplicate
		{Type: "index", Name: "t_b", TblName: "t", RootPage: 13, SQL: "CREATE INDEX t_b ON t(a)", HasSQL: true},                     // duplicate
		{Type: "table", Name: "m", TblName: "m", RootPage: 14, SQL: "CREATE TABLE other(z)", HasSQL: true},                          // name mismatch
		{Type: "table", Name: "q", TblName: "q", RootPage: 15, SQL: "CREATE TABLE q(a PRIMARY KEY, b UNIQUE)", HasSQL: true},        // missing autoindex rows
		{Type: "table", Name: "n", TblName: "n", RootPage: 16},                                                                      // no SQL
		{Type: "index", Name: "q_t", TblName: "q", RootPage: 17, SQL: "CREATE INDEX q_t ON q(\"zz\" COLLATE nocase)", HasSQL: true}, // string, not column
	}
	c := Build(entries)
	want := map[string]error{
		"sqlite_autoindex_t_1":   nil,
		"sqlite_autoindex_t_2":   ErrInvalid,
		"t_b":                    nil,
		"t_c":                    ErrInvalid,
		"t_x":                    nil, // an application-defined collation: read, not ordered
		"t_y":                    ErrSyntax,
		"u_a":                    ErrInvalid,
		"bad_a":                  nil,
		"sqlite_autoindex_bad_1": ErrInvalid, // an orphan: bad has no UNIQUE constraint
		"q_t":                    nil,
	}
	for i, ii := range c.Indexes {
		name := ii.Entry.Name
		if name == "t_b" && i > 3 {
			if !errors.Is(ii.Err, ErrInvalid) {
				t.Errorf("second t_b: Err = %v, want duplicate", ii.Err)
			}
			continue
		}
		if w := want[name]; !errors.Is(ii.Err, w) || (w == nil) != (ii.Err == nil) {
			t.Errorf("index %s: Err = %v, want %v", name, ii.Err, w)
		}
		if (ii.Err == nil) != (ii.Index != nil) {
			t.Errorf("index %s: Err %v with Index %v", name, ii.Err, ii.Index)
		}
	}
	if ii := c.Index("t_b"); ii.Index.Columns[0].Collation != CollNoCase {
		t.Errorf("t_b did not take the column's collation: %+v", ii.Index.Columns)
	}
	if ii := c.Index("bad_a"); ii.Index.Columns[0].Collation != CollOther || ii.Index.Columns[0].CollName != "klingon" ||
		ii.Index.OtherCollation() != "klingon" || c.Table("bad").Table.OtherCollation() != "klingon" || c.Table("t").Table.OtherCollation() != "" {
		t.Errorf("bad_a did not take the column's application-defined collation: %+v", ii.Index.Columns)
	}
	if ii := c.Index("q_t"); !ii.Index.HasExpr || !ii.Index.Columns[0].Expr || ii.Index.Columns[0].Name != `"zz"` {
		t.Errorf("q_t: %+v", ii.Index)
	}
	if n := len(c.Table("t").Indexes); n != 7 {
		t.Errorf("t has %d indexes, want 7 (failed ones and the orphan included)", n)
	}
	wantTables := map[string]error{"t": nil, "vt": ErrUnsupported, "bad": nil, "T": ErrInvalid, "m": ErrInvalid, "q": nil, "n": ErrInvalid}
	for _, ti := range c.Tables {
		w := wantTables[ti.Entry.Name]
		if !errors.Is(ti.Err, w) || (w == nil) != (ti.Err == nil) || (ti.Err == nil) != (ti.Table != nil) {
			t.Errorf("table %s: Err = %v, Table %v; want %v", ti.Entry.Name, ti.Err, ti.Table != nil, w)
		}
	}
	if c.Table("t").Entry.RootPage != 2 {
		t.Errorf("Table(t) is not the first t")
	}
	if len(c.Problems) != 2 {
		t.Errorf("Problems = %v, want the two autoindexes of q", c.Problems)
	}
	for _, p := range c.Problems {
		if !errors.Is(p, ErrInvalid) || !strings.Contains(p.Error(), "sqlite_autoindex_q_") {
			t.Errorf("problem %v", p)
		}
	}
}

// An autoindex row cannot stand for the PRIMARY KEY of a WITHOUT ROWID
// table: that key is the table's own b-tree.
func TestBuildWithoutRowIDPrimaryKeyRow(t *testing.T) {
	c := Build([]Entry{
		{Type: "table", Name: "w", TblName: "w", RootPage: 2, SQL: "CREATE TABLE w(a PRIMARY KEY, b) WITHOUT ROWID", HasSQL: true},
		{Type: "index", Name: "sqlite_autoindex_w_1", TblName: "w", RootPage: 3},
	})
	if ii := c.Index("sqlite_autoindex_w_1"); !errors.Is(ii.Err, ErrInvalid) {
		t.Errorf("Err = %v", ii.Err)
	}
}

// TestBuildFormatLegacy checks that a file of schema format below 4 has
// every index key ascending, as SQLite reads it, and that format 4 keeps
// DESC.
func TestBuildFormatLegacy(t *testing.T) {
	entries := []Entry{
		{Type: "table", Name: "t", TblName: "t", RootPage: 2, SQL: "CREATE TABLE t(a, b UNIQUE, id INTEGER PRIMARY KEY DESC)", HasSQL: true},
		{Type: "index", Name: "sqlite_autoindex_t_1", TblName: "t", RootPage: 3},
		{Type: "index", Name: "ta", TblName: "t", RootPage: 4, SQL: "CREATE INDEX ta ON t(a DESC, b)", HasSQL: true},
		{Type: "table", Name: "w", TblName: "w", RootPage: 5, SQL: "CREATE TABLE w(k, v, PRIMARY KEY(k DESC)) WITHOUT ROWID", HasSQL: true},
	}
	for _, sf := range []uint32{0, 1, 3, 4} {
		c := BuildFormat(entries, sf)
		for _, ii := range c.Indexes {
			if ii.Err != nil {
				t.Fatalf("format %d: index %s: %v", sf, ii.Entry.Name, ii.Err)
			}
		}
		want := sf == 4
		if got := c.Index("ta").Index.Columns[0].Desc; got != want {
			t.Errorf("format %d: ta's first column DESC = %v, want %v", sf, got, want)
		}
		if got := c.Table("w").Table.PrimaryKey[0].Desc; got != want {
			t.Errorf("format %d: w's primary key DESC = %v, want %v", sf, got, want)
		}
		// INTEGER PRIMARY KEY DESC is never the rowid alias, whatever the
		// format: the quirk is the parser's.
		if got := c.Table("t").Table.RowidAlias; got != -1 {
			t.Errorf("format %d: t's rowid alias = %d, want -1", sf, got)
		}
	}
}

// TestShadowOf: the shadow tables of fts5 and rtree tables are known by
// their modules' names; another module's may have any name after the
// virtual table's and an underscore.
func TestShadowOf(t *testing.T) {
	c := Build([]Entry{
		{Type: "table", Name: "docs", TblName: "docs", SQL: "CREATE VIRTUAL TABLE docs USING fts5(body)", HasSQL: true},
		{Type: "table", Name: "docs_content", TblName: "docs_content", RootPage: 2, SQL: "CREATE TABLE 'docs_content'(id INTEGER PRIMARY KEY, c0)", HasSQL: true},
		{Type: "table", Name: "Docs_Idx", TblName: "Docs_Idx", RootPage: 3, SQL: "CREATE TABLE 'Docs_Idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID", HasSQL: true},
		{Type: "table", Name: "docs_archive", TblName: "docs_archive", RootPage: 4, SQL: "CREATE TABLE docs_archive(a)", HasSQL: true},
		{Type: "table", Name: "geo", TblName: "geo", SQL: `CREATE VIRTUAL TABLE "geo" USING "rtree"(id, x0, x1)`, HasSQL: true},
		{Type: "table", Name: "geo_node", TblName: "geo_node", RootPage: 5, SQL: "CREATE TABLE \"geo_node\"(nodeno INTEGER PRIMARY KEY, data)", HasSQL: true},
		{Type: "table", Name: "v", TblName: "v", SQL: "CREATE VIRTUAL TABLE v USING mymodule(x)", HasSQL: true},
		{Type: "table", Name: "v_anything", TblName: "v_anything", RootPage: 6, SQL: "CREATE TABLE v_anything(a)", HasSQL: true},
		{Type: "table", Name: "vx", TblName: "vx", RootPage: 7, SQL: "CREATE TABLE vx(a)", HasSQL: true},
	})
	for name, want := range map[string]string{
		"docs_content": "docs", "Docs_Idx": "docs", "docs_archive": "",
		"geo_node": "geo", "v_anything": "v", "vx": "",
	} {
		ti := c.Table(name)
		if ti == nil {
			t.Fatalf("no table %s", name)
		}
		if ti.ShadowOf != want {
			t.Errorf("%s: ShadowOf %q, want %q", name, ti.ShadowOf, want)
		}
	}
}

// TestCheckEntry: a sqlite_schema row agrees with its SQL, as SQLite's
// schema loading requires (sqlite3CheckObjectName), or is refused.
func TestCheckEntry(t *testing.T) {
	for _, c := range []struct {
		e  Entry
		ok bool
	}{
		{Entry{Type: "table", Name: "t", TblName: "t", SQL: "CREATE TABLE t(a)", HasSQL: true}, true},
		{Entry{Type: "table", Name: "T", TblName: "t", SQL: "create table [t](a)", HasSQL: true}, true},
		{Entry{Type: "table", Name: "f", TblName: "f", SQL: "CREATE VIRTUAL TABLE f USING fts5(c)", HasSQL: true}, true},
		{Entry{Type: "table", Name: "w w", TblName: "w w", SQL: `CREATE TABLE IF NOT EXISTS main."w w"(k PRIMARY KEY) WITHOUT ROWID`, HasSQL: true}, true},
		{Entry{Type: "index", Name: "i", TblName: "t", SQL: "CREATE UNIQUE INDEX i ON t(a) WHERE a ON 1", HasSQL: true}, true},
		{Entry{Type: "view", Name: "v", TblName: "v", SQL: "CREATE TEMP VIEW v AS SELECT 1 FROM t", HasSQL: true}, true},
		{Entry{Type: "trigger", Name: "tr", TblName: "t", SQL: "CREATE TRIGGER tr INSTEAD OF UPDATE OF a ON t BEGIN SELECT (1); END", HasSQL: true}, true},
		{Entry{Type: "index", Name: "sqlite_autoindex_t_1", TblName: "t"}, true}, // no SQL
		{Entry{Type: "tablx", Name: "t", TblName: "t", SQL: "CREATE TABLE t(a)", HasSQL: true}, false},
		{Entry{Type: "", Name: "t", TblName: "t", SQL: "CREATE TABLE t(a)", HasSQL: true}, false},
		{Entry{Type: "table", Name: "u", TblName: "u", SQL: "CREATE TABLE t(a)", HasSQL: true}, false},
		{Entry{Type: "index", Name: "i", TblName: "u", SQL: "CREATE INDEX i ON t(a)", HasSQL: true}, false},
		{Entry{Type: "table", Name: "t", TblName: "t", SQL: "DROP TABLE t", HasSQL: true}, false},
		{Entry{Type: "index", TblName: "t"}, false}, // no SQL, no name
	} {
		if err := CheckEntry(c.e); (err == nil) != c.ok || err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckEntry(%+v) = %v, want ok %v", c.e, err, c.ok)
		}
	}
}
