package schema_test

import (
	"fmt"

	"github.com/pagodadb/pagoda/internal/schema"
)

func ExampleAffinityOf() {
	for _, typ := range []string{"VARCHAR(10)", "BIGINT", "DOUBLE PRECISION", "", "DECIMAL(10,2)"} {
		fmt.Printf("%q: %v\n", typ, schema.AffinityOf(typ))
	}
	// Output:
	// "VARCHAR(10)": TEXT
	// "BIGINT": INTEGER
	// "DOUBLE PRECISION": REAL
	// "": BLOB
	// "DECIMAL(10,2)": NUMERIC
}

func ExampleParseCollation() {
	c, err := schema.ParseCollation("nocase")
	fmt.Println(c, err)
	_, err = schema.ParseCollation("klingon")
	fmt.Println(err)
	// Output:
	// NOCASE <nil>
	// unsupported: collation "klingon"
}

func ExampleParseCreateTable() {
	t, err := schema.ParseCreateTable(`CREATE TABLE x(id INTEGER PRIMARY KEY, a TEXT UNIQUE COLLATE nocase, b REAL, UNIQUE(b, a))`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range t.Columns {
		fmt.Printf("%s %q %v %v\n", c.Name, c.Type, c.Affinity, c.Collation)
	}
	fmt.Println("rowid alias:", t.Columns[t.RowidAlias].Name)
	for i, k := range t.Constraints {
		fmt.Print(schema.AutoIndexName(t.Name, i+1), ":")
		for _, c := range k.Columns {
			fmt.Print(" ", c.Name, "/", c.Collation)
		}
		fmt.Println()
	}
	// Output:
	// id "INTEGER" INTEGER BINARY
	// a "TEXT" TEXT NOCASE
	// b "REAL" REAL BINARY
	// rowid alias: id
	// sqlite_autoindex_x_1: a/NOCASE
	// sqlite_autoindex_x_2: b/BINARY a/NOCASE
}

// The records of a WITHOUT ROWID table hold the primary key first.
func ExampleTable_RecordOrder() {
	t, _ := schema.ParseCreateTable(`CREATE TABLE w(a, b, c, d, PRIMARY KEY(c, a)) WITHOUT ROWID`)
	for _, i := range t.RecordOrder {
		fmt.Print(t.Columns[i].Name, " ")
	}
	fmt.Println()
	// Output: c a b d
}

func ExampleTable_IsBucket() {
	for _, sql := range []string{
		`CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID`,
		`CREATE TABLE b(key BLOB PRIMARY KEY, value BLOB)`,
	} {
		t, _ := schema.ParseCreateTable(sql)
		fmt.Println(t.IsBucket())
	}
	// Output:
	// true
	// false
}

func ExampleTable_AutoIndexes() {
	t, _ := schema.ParseCreateTable(`CREATE TABLE w(a, b UNIQUE, c, PRIMARY KEY(a), UNIQUE(c)) WITHOUT ROWID`)
	for _, ix := range t.AutoIndexes() {
		fmt.Println(ix.Name, ix.Columns[0].Name)
	}
	// Output:
	// sqlite_autoindex_w_1 b
	// sqlite_autoindex_w_3 c
}

func ExampleParseCreateIndex() {
	ix, _ := schema.ParseCreateIndex(`CREATE UNIQUE INDEX IF NOT EXISTS i ON t(a COLLATE nocase DESC, lower(b)) WHERE a > 0`)
	fmt.Println(ix.Name, ix.Table, ix.Unique, ix.Partial, ix.HasExpr, ix.Where)
	for _, c := range ix.Columns {
		fmt.Printf("%q expr=%v %v desc=%v\n", c.Name, c.Expr, c.Collation, c.Desc)
	}
	// Output:
	// i t true true true a > 0
	// "a" expr=false NOCASE desc=true
	// "lower(b)" expr=true BINARY desc=false
}

func ExampleIndex_KeyOrder() {
	t, _ := schema.ParseCreateTable(`CREATE TABLE w(a, b, c, d, PRIMARY KEY(c, a)) WITHOUT ROWID`)
	ix, _ := schema.ParseCreateIndex(`CREATE INDEX w_d ON w(d)`)
	if err := ix.Resolve(t); err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range ix.KeyOrder(t) {
		fmt.Print(c.Name, " ")
	}
	fmt.Println()
	// Output: d c a
}

func ExampleNormalizeCreate() {
	s, _ := schema.NormalizeCreate(`create table if not exists   Foo ( x int , y );`)
	fmt.Println(s)
	s, _ = schema.NormalizeCreate(`create unique index main.i on Foo(x);`)
	fmt.Println(s)
	// Output:
	// CREATE TABLE Foo ( x int , y )
	// CREATE UNIQUE INDEX i on Foo(x)
}

func ExampleBuild() {
	c := schema.Build([]schema.Entry{
		{Type: "table", Name: "x", TblName: "x", RootPage: 2, SQL: "CREATE TABLE x(a UNIQUE, b)", HasSQL: true},
		{Type: "index", Name: "sqlite_autoindex_x_1", TblName: "x", RootPage: 3},
		{Type: "index", Name: "x_b", TblName: "x", RootPage: 4, SQL: "CREATE INDEX x_b ON x(b DESC)", HasSQL: true},
	})
	for _, ii := range c.Table("X").Indexes {
		fmt.Print(ii.Index.Name, ":")
		for _, k := range ii.KeyOrder() {
			fmt.Print(" ", k.Name)
		}
		fmt.Println()
	}
	// Output:
	// sqlite_autoindex_x_1: a rowid
	// x_b: b rowid
}
