package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Entry is one row of sqlite_schema (sqlite-format.md §6).
type Entry struct {
	Type     string // "table", "index", "view" or "trigger": lower-cased, as SQLite compares it without case
	Name     string
	TblName  string
	RootPage uint32
	SQL      string
	HasSQL   bool // false when the sql column is NULL (automatic indexes)
}

// hasSQL reports whether e carries CREATE text. sqlite3 treats an empty
// string like NULL.
func (e Entry) hasSQL() bool { return e.HasSQL && e.SQL != "" }

// Catalog is the schema of a database: the rows of sqlite_schema with the
// tables and indexes they define.
type Catalog struct {
	Entries []Entry      // all rows, in schema order
	Tables  []*TableInfo // the "table" rows in schema order, sqlite_sequence and sqlite_stat* included
	Indexes []*IndexInfo // the "index" rows in schema order
	// Problems lists inconsistencies that belong to no single row: an
	// automatic index that a table's constraints call for but that has no
	// sqlite_schema row.
	Problems []error
	// TextEncoding is the text encoding of the database the catalog was
	// read from (header offset 56; set by the reader, 0 when unknown):
	// text in its rows and keys is stored so. The catalog's own strings
	// are UTF-8 (see DecodeEntryEnc).
	TextEncoding uint32

	tables  map[string]*TableInfo // by folded name
	indexes map[string]*IndexInfo
	schema  *TableInfo // sqlite_schema's own (SchemaInfo)
}

// TableInfo is a "table" row and what it defines. When Err is non-nil the
// table could not be understood and Table is nil; the engine must not write
// to it.
type TableInfo struct {
	Entry Entry
	Table *Table
	Err   error
	// Indexes are the table's index rows in schema order, including those
	// whose Err is set: an engine that writes the table must maintain every
	// one of them, so any Err among them makes the table read-only.
	Indexes []*IndexInfo
	// Triggers are the names of the triggers on the table, in schema
	// order: SQL that SQLite runs with every write to it.
	Triggers []string
	// ShadowOf names the virtual table whose shadow table this is: its
	// name is the virtual table's, an underscore, and one of the module's
	// shadow names (docs_content of an fts5 table docs), or anything for a
	// module pagoda does not know. The module keeps its shadow tables;
	// nothing else should write them.
	ShadowOf string
}

// IndexInfo is an "index" row and what it defines. When Err is non-nil the
// index could not be understood and Index is nil. Table is the indexed
// table's TableInfo when it could be found, even if Err is set.
type IndexInfo struct {
	Entry Entry
	Index *Index
	Err   error
	Table *TableInfo
}

// KeyOrder returns the fields of the index's records (see Index.KeyOrder),
// nil if the index or its table has an Err.
func (ii *IndexInfo) KeyOrder() []IndexedColumn {
	if ii.Err != nil || ii.Index == nil || ii.Table == nil || ii.Table.Table == nil {
		return nil
	}
	return ii.Index.KeyOrder(ii.Table.Table)
}

// AutoIndexName returns the name sqlite3 gives the automatic index of a
// table's n-th UNIQUE or PRIMARY KEY constraint (n counts from 1).
func AutoIndexName(table string, n int) string {
	return "sqlite_autoindex_" + table + "_" + strconv.Itoa(n)
}

// AutoIndexes returns the automatic indexes that need a sqlite_schema row,
// in the order sqlite3 writes those rows: one per entry of t.Constraints
// except the PRIMARY KEY of a WITHOUT ROWID table (which is the table's own
// b-tree).
func (t *Table) AutoIndexes() []*Index {
	var out []*Index
	for i, k := range t.Constraints {
		if k.PrimaryKey && t.WithoutRowID {
			continue
		}
		out = append(out, &Index{
			Name:       AutoIndexName(t.Name, i+1),
			Table:      t.Name,
			Unique:     true,
			Auto:       true,
			PrimaryKey: k.PrimaryKey,
			Columns:    append([]IndexedColumn(nil), k.Columns...),
		})
	}
	return out
}

// Build makes a Catalog from the rows of sqlite_schema. It never fails as a
// whole: a row that cannot be understood gets an Err (wrapping ErrSyntax,
// ErrUnsupported or ErrInvalid) and the rest of the catalog is still built.
// Views and triggers are kept in Entries, and each table lists the names
// of its triggers. An index whose table has an Err gets an Err wrapping the
// table's.
func Build(entries []Entry) *Catalog { return BuildFormat(entries, currentFormat) }

// currentFormat is the schema format number (database header offset 44) of
// every file SQLite has written since 3.3.0, unless asked for the legacy
// format.
const currentFormat = 4

// BuildFormat is Build for a file whose header gives schema format number
// schemaFormat. Below 4 SQLite ignores DESC in index definitions, the
// primary keys of WITHOUT ROWID tables included: their keys are stored in
// ascending order, and the catalog describes them so (0 counts as 1, as it
// does for SQLite).
func BuildFormat(entries []Entry, schemaFormat uint32) *Catalog {
	legacy := schemaFormat < currentFormat
	c := &Catalog{
		Entries: entries,
		tables:  make(map[string]*TableInfo),
		indexes: make(map[string]*IndexInfo),
		schema: &TableInfo{Entry: Entry{Type: "table", Name: "sqlite_schema", TblName: "sqlite_schema", RootPage: 1, SQL: schemaSQL, HasSQL: true},
			Table: SchemaTable()},
	}
	type autoRef struct {
		table *TableInfo
		n     int // index into Table.Constraints
	}
	auto := make(map[string]autoRef)
	for _, e := range entries {
		if e.Type != "table" {
			continue
		}
		ti := &TableInfo{Entry: e}
		ti.Table, ti.Err = tableOf(e)
		if ti.Err == nil && legacy {
			ascending(ti.Table.PrimaryKey)
			for _, k := range ti.Table.Constraints {
				ascending(k.Columns)
			}
		}
		key := foldKey(e.Name)
		if ti.Err == nil && c.tables[key] != nil {
			ti.Err = fmt.Errorf("%w: duplicate table name %s", ErrInvalid, quoteName(e.Name))
		}
		if ti.Err != nil {
			ti.Table = nil
		}
		if c.tables[key] == nil {
			c.tables[key] = ti
		}
		c.Tables = append(c.Tables, ti)
		if t := ti.Table; t != nil {
			for i, k := range t.Constraints {
				if !(k.PrimaryKey && t.WithoutRowID) {
					auto[foldKey(AutoIndexName(t.Name, i+1))] = autoRef{ti, i}
				}
			}
		}
	}
	used := make(map[string]bool)
	for _, e := range entries {
		if e.Type != "index" {
			continue
		}
		ii := &IndexInfo{Entry: e}
		key := foldKey(e.Name)
		if ref, ok := auto[key]; ok && !e.hasSQL() {
			used[key] = true
			ii.Table = ref.table
			ii.Index = autoIndex(e, ref.table.Table, ref.n)
			if !eqFold(e.TblName, ref.table.Table.Name) {
				ii.Err = fmt.Errorf("%w: index %s: tbl_name %s is not %s", ErrInvalid, quoteName(e.Name), quoteName(e.TblName), quoteName(ref.table.Table.Name))
			}
		} else {
			ii.Index, ii.Table, ii.Err = c.indexOf(e)
		}
		if ii.Err == nil && (c.indexes[key] != nil || c.tables[key] != nil) {
			ii.Err = fmt.Errorf("%w: duplicate name %s", ErrInvalid, quoteName(e.Name))
		}
		if ii.Err != nil {
			ii.Index = nil
		}
		if ii.Index != nil && legacy {
			ascending(ii.Index.Columns)
		}
		if c.indexes[key] == nil {
			c.indexes[key] = ii
		}
		c.Indexes = append(c.Indexes, ii)
		if ii.Table != nil {
			ii.Table.Indexes = append(ii.Table.Indexes, ii)
		}
	}
	for _, e := range entries {
		if ti := c.tables[foldKey(e.TblName)]; e.Type == "trigger" && ti != nil {
			ti.Triggers = append(ti.Triggers, e.Name)
		}
		// A virtual table is a "table" row with no b-tree: root page 0.
		if e.Type == "table" && e.RootPage == 0 && e.Name != "" {
			prefix := foldKey(e.Name) + "_"
			suffixes := shadowSuffixes[foldKey(VirtualModule(e.SQL))]
			for _, ti := range c.Tables {
				name := foldKey(ti.Entry.Name)
				if ti.ShadowOf != "" || ti.Entry.RootPage == 0 || !strings.HasPrefix(name, prefix) {
					continue
				}
				if suffixes == nil || slices.Contains(suffixes, name[len(prefix):]) {
					ti.ShadowOf = e.Name
				}
			}
		}
	}
	for _, ti := range c.Tables {
		if ti.Table == nil {
			continue
		}
		for _, ix := range ti.Table.AutoIndexes() {
			if !used[foldKey(ix.Name)] {
				c.Problems = append(c.Problems, fmt.Errorf("%w: table %s: automatic index %s has no sqlite_schema row",
					ErrInvalid, quoteName(ti.Table.Name), ix.Name))
			}
		}
	}
	return c
}

// tableOf parses the CREATE TABLE text of a "table" row.
func tableOf(e Entry) (*Table, error) {
	if !e.hasSQL() {
		return nil, fmt.Errorf("%w: table %s has no SQL", ErrInvalid, quoteName(e.Name))
	}
	t, err := ParseCreateTable(e.SQL)
	if err != nil {
		return nil, err
	}
	if !eqFold(t.Name, e.Name) || !eqFold(t.Name, e.TblName) {
		return nil, fmt.Errorf("%w: table row %s (tbl_name %s) holds CREATE TABLE %s",
			ErrInvalid, quoteName(e.Name), quoteName(e.TblName), quoteName(t.Name))
	}
	return t, nil
}

// shadowSuffixes are the names of the shadow tables of SQLite's own
// virtual table modules, after the virtual table's name and an underscore
// (their xShadowName). For another module, any such table may be one.
var shadowSuffixes = map[string][]string{
	"fts3":    {"content", "segments", "segdir", "docsize", "stat"},
	"fts4":    {"content", "segments", "segdir", "docsize", "stat"},
	"fts5":    {"content", "docsize", "config", "data", "idx"},
	"rtree":   {"node", "parent", "rowid"},
	"geopoly": {"node", "parent", "rowid"},
}

// VirtualModule returns the module name of a CREATE VIRTUAL TABLE
// statement: the name after USING, as written ("fts5", "rtree"); "" if sql
// is not such a statement.
func VirtualModule(sql string) string {
	toks, err := tokenize(sql)
	if err != nil || len(toks) < 3 || !toks[0].is("CREATE") || !toks[1].is("VIRTUAL") || !toks[2].is("TABLE") {
		return ""
	}
	for i, t := range toks {
		if t.is("USING") && i+1 < len(toks) {
			return dequote(toks[i+1])
		}
	}
	return ""
}

// ascending makes every column of a key ascending.
func ascending(cols []IndexedColumn) {
	for i := range cols {
		cols[i].Desc = false
	}
}

// autoIndex builds the Index of the automatic index row e for constraint n
// of t.
func autoIndex(e Entry, t *Table, n int) *Index {
	k := t.Constraints[n]
	return &Index{
		Name:       e.Name,
		Table:      t.Name,
		Unique:     true,
		Auto:       true,
		PrimaryKey: k.PrimaryKey,
		Columns:    append([]IndexedColumn(nil), k.Columns...),
	}
}

// indexOf parses and resolves an "index" row with CREATE INDEX text. Rows
// without text that match no constraint are orphans.
func (c *Catalog) indexOf(e Entry) (*Index, *TableInfo, error) {
	ti := c.tables[foldKey(e.TblName)]
	if !e.hasSQL() {
		if ti != nil && ti.Err != nil {
			return nil, ti, fmt.Errorf("index %s: table %s: %w", quoteName(e.Name), quoteName(e.TblName), ti.Err)
		}
		return nil, ti, fmt.Errorf("%w: orphan index %s: no UNIQUE or PRIMARY KEY constraint of a table has this name",
			ErrInvalid, quoteName(e.Name))
	}
	ix, err := ParseCreateIndex(e.SQL)
	if err != nil {
		return nil, ti, err
	}
	if ti = c.tables[foldKey(ix.Table)]; ti == nil {
		return nil, nil, fmt.Errorf("%w: index %s: no such table: %s", ErrInvalid, quoteName(ix.Name), ix.Table)
	}
	if !eqFold(ix.Name, e.Name) || !eqFold(ix.Table, e.TblName) {
		return nil, ti, fmt.Errorf("%w: index row %s (tbl_name %s) holds CREATE INDEX %s ON %s",
			ErrInvalid, quoteName(e.Name), quoteName(e.TblName), quoteName(ix.Name), quoteName(ix.Table))
	}
	if ti.Err != nil {
		return nil, ti, fmt.Errorf("index %s: table %s: %w", quoteName(ix.Name), quoteName(ix.Table), ti.Err)
	}
	if err := ix.Resolve(ti.Table); err != nil {
		return nil, ti, err
	}
	return ix, ti, nil
}

// Table returns the table called name (ASCII case ignored, as in SQLite), or
// nil. sqlite_schema itself has no row and is not in the catalog; see
// SchemaTable.
func (c *Catalog) Table(name string) *TableInfo { return c.tables[foldKey(name)] }

// SchemaInfo returns sqlite_schema's own table, rooted at page 1, which
// no row of the schema describes, when name is one of the names SQLite
// reads it by (sqlite_schema, sqlite_master; ASCII case ignored); else
// nil.
func (c *Catalog) SchemaInfo(name string) *TableInfo {
	switch foldKey(name) {
	case "sqlite_schema", "sqlite_master":
		return c.schema
	}
	return nil
}

// Index returns the index called name (ASCII case ignored), or nil.
func (c *Catalog) Index(name string) *IndexInfo { return c.indexes[foldKey(name)] }

// schemaSQL is the implicit definition of the schema table (§6).
const schemaSQL = "CREATE TABLE sqlite_schema(type text, name text, tbl_name text, rootpage integer, sql text)"

// SchemaTable returns the implicit definition of sqlite_schema, the table
// rooted at page 1, so its records can be decoded like any table's.
func SchemaTable() *Table {
	t, err := ParseCreateTable(schemaSQL)
	if err != nil {
		panic("schema: cannot parse the sqlite_schema definition: " + err.Error())
	}
	return t
}

// CheckEntry reports whether row e of sqlite_schema agrees with itself as
// SQLite's schema loading requires (sqlite3InitCallback,
// sqlite3CheckObjectName): CREATE text (its first two letters "cr") whose
// object kind, name and table are the row's type, name and tbl_name (in
// ASCII case-insensitive comparison), or no text at all (an automatic
// index's) with a name. SQLite reports any other row as a malformed
// schema and reads nothing of the database. CREATE text that does not
// parse is not judged here: the object's own parse reports it.
func CheckEntry(e Entry) error {
	if !e.hasSQL() {
		if e.Name == "" {
			return fmt.Errorf("%w: a row without SQL has no name", ErrInvalid)
		}
		return nil
	}
	if len(e.SQL) < 2 || lowerASCII(e.SQL[0]) != 'c' || lowerASCII(e.SQL[1]) != 'r' {
		return fmt.Errorf("%w: %q is not CREATE text", ErrInvalid, clip(e.SQL))
	}
	kind, name, tbl, ok := objectOf(e.SQL)
	if !ok {
		return nil
	}
	switch {
	case foldKey(kind) != foldKey(e.Type):
		return fmt.Errorf("%w: type %q, but the SQL creates a %s", ErrInvalid, e.Type, kind)
	case foldKey(name) != foldKey(e.Name):
		return fmt.Errorf("%w: name %q, but the SQL creates %q", ErrInvalid, e.Name, name)
	case foldKey(tbl) != foldKey(e.TblName):
		return fmt.Errorf("%w: tbl_name %q, but the SQL's table is %q", ErrInvalid, e.TblName, tbl)
	}
	return nil
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// objectOf reads the head of CREATE text sql: the kind of object it
// creates (table, index, view, trigger), its name, and the table it
// belongs to (its own name for a table or view). ok is false when the
// head does not parse.
func objectOf(sql string) (kind, name, tbl string, ok bool) {
	toks, err := tokenize(sql)
	if err != nil {
		return "", "", "", false
	}
	p := &parser{src: sql, toks: toks}
	if !p.accept("CREATE") {
		return "", "", "", false
	}
	if !p.accept("TEMP") {
		p.accept("TEMPORARY")
	}
	p.accept("UNIQUE")
	p.accept("VIRTUAL")
	for _, k := range []string{"TABLE", "INDEX", "VIEW", "TRIGGER"} {
		if p.accept(k) {
			kind = strings.ToLower(k)
		}
	}
	if kind == "" {
		return "", "", "", false
	}
	if p.accept("IF") && !(p.accept("NOT") && p.accept("EXISTS")) {
		return "", "", "", false
	}
	if name, _, _, err = p.qualifiedName(kind); err != nil {
		return "", "", "", false
	}
	tbl = name
	if kind == "index" || kind == "trigger" {
		// The table follows the first ON at the top level.
		depth := 0
		for t := p.peek(); t.kind != tokEOF; t = p.peek() {
			switch {
			case t.isOp("("):
				depth++
			case t.isOp(")"):
				depth--
			case depth == 0 && t.is("ON"):
				p.i++
				if tbl, _, _, err = p.qualifiedName("table"); err != nil {
					return "", "", "", false
				}
				return kind, name, tbl, true
			}
			p.i++
		}
		return "", "", "", false
	}
	return kind, name, tbl, true
}
