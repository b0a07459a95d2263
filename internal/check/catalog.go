package check

import (
	"errors"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// readCatalog reads the rows of sqlite_schema, whose tree t has been
// walked, and builds the catalog. complete is false when some row could not
// be read: the catalog may then miss trees, and unused pages are not
// reported.
func (c *checker) readCatalog(t *tree) (cat *schema.Catalog, complete bool) {
	if !t.ok {
		// A damaged tree may be cyclic or shared, which a cursor would
		// follow for a very long time: read only the rows of page 1 itself.
		c.reportf(0, "sqlite_schema cannot be read whole: the trees it names are checked as far as it can be read, and unused pages are not reported")
		return schema.BuildFormat(c.rootLeafEntries(), c.sf), false
	}
	complete = true
	var entries []schema.Entry
	var cur btree.Cursor
	cur.Init(c.src, 1, true, nil)
	for ok := cur.First(); ok; ok = cur.Next() {
		rowid, payload, pgno, err := cur.Entry()
		if err != nil {
			c.reportf(pgno, "sqlite_schema: %s", errMsg(err, pgno))
			return schema.BuildFormat(entries, c.sf), false
		}
		if _, err := format.CheckRecord(payload); err != nil {
			complete = false // the walk reported it (rowRecord)
			continue
		}
		e, err := schema.DecodeEntryEnc(payload, c.enc)
		if err != nil {
			c.reportf(pgno, "sqlite_schema row %d: malformed record: %s", rowid, errMsg(err, pgno))
			complete = false
			continue
		}
		entries = append(entries, e)
	}
	if err := cur.Err(); err != nil {
		c.reportf(0, "sqlite_schema: %s", errMsg(err, 0))
		complete = false
	}
	return schema.BuildFormat(entries, c.sf), complete
}

// rootLeafEntries returns the schema rows stored whole on page 1 when it is
// a leaf, nil otherwise.
func (c *checker) rootLeafEntries() []schema.Entry {
	data, err := c.src.Page(1)
	if err != nil {
		return nil
	}
	pg, err := format.ParsePage(data, 1, c.usable)
	if err != nil || pg.Type != format.PageTableLeaf {
		return nil
	}
	var entries []schema.Entry
	for i := 0; i < pg.NCells; i++ {
		cell, err := pg.Cell(i)
		if err != nil || cell.Overflow != 0 {
			continue
		}
		if e, err := schemaEntry(cell.Local, c.enc); err == nil {
			entries = append(entries, e)
		}
	}
	return entries
}

// schemaEntry decodes a sqlite_schema record of a database of text
// encoding enc, checked whole first.
func schemaEntry(rec []byte, enc uint32) (schema.Entry, error) {
	if _, err := format.CheckRecord(rec); err != nil {
		return schema.Entry{}, err
	}
	return schema.DecodeEntryEnc(rec, enc)
}

// checkSchema reports the rows of sqlite_schema that sqlite3 reports as
// a malformed schema: those that do not fit together (errors wrapping
// schema.ErrInvalid) and a table's or index's SQL that is not a statement
// sqlite3 accepts (schema.ErrSyntax; a row cut short, say). SQL that is
// valid but that pagoda does not support (a virtual table, a collation
// the application registers) is not a problem: those objects are only
// skipped by the checks that need them.
func (c *checker) checkSchema(cat *schema.Catalog) {
	for _, err := range cat.Problems {
		c.reportf(0, "%v", err)
	}
	// A row that disagrees with itself (its type, name or table not its
	// SQL's) makes SQLite refuse the schema: "malformed database schema".
	for _, e := range cat.Entries {
		if err := schema.CheckEntry(e); err != nil {
			c.reportf(0, "sqlite_schema: malformed database schema (%s): %v", e.Name, err)
		}
	}
	malformed := func(err error) bool { return errors.Is(err, schema.ErrInvalid) || errors.Is(err, schema.ErrSyntax) }
	for _, ti := range cat.Tables {
		if malformed(ti.Err) {
			c.reportf(0, "table %s: %v", ti.Entry.Name, ti.Err)
		}
	}
	for _, ii := range cat.Indexes {
		tableErr := ii.Table != nil && ii.Table.Err != nil // already reported with its table
		if malformed(ii.Err) && !tableErr {
			c.reportf(0, "index %s: %v", ii.Entry.Name, ii.Err)
		}
	}
}

// walkCatalog walks the tree of every table, then of every index, of cat,
// in schema order. A root page already used (by another object, say) is
// reported and its tree not walked.
func (c *checker) walkCatalog(cat *schema.Catalog) {
	c.tables = make(map[*schema.TableInfo]*tree, len(cat.Tables))
	c.indexes = make(map[*schema.IndexInfo]*tree, len(cat.Indexes))
	for _, ti := range cat.Tables {
		if c.stopped {
			return
		}
		if ti.Entry.RootPage == 0 {
			continue // a virtual table: no b-tree
		}
		t := &tree{name: "table " + ti.Entry.Name, root: ti.Entry.RootPage, rows: true}
		switch tb := ti.Table; {
		case tb == nil:
			t.table = c.looksLikeTable(t.root)
		case tb.WithoutRowID:
			t.kinfo, t.nKey = primaryKeyInfo(tb, c.enc), len(tb.PrimaryKey)
		default:
			t.table = true
			t.parseSet, t.parse = true, rowParse(tb)
		}
		t.rules = c.rowRules(ti)
		if c.walkRoot(t) {
			c.tables[ti] = t
		}
	}
	for _, ii := range cat.Indexes {
		if c.stopped {
			return
		}
		if ii.Entry.RootPage == 0 {
			c.reportf(0, "index %s: root page 0", ii.Entry.Name)
			continue
		}
		t := &tree{name: "index " + ii.Entry.Name, root: ii.Entry.RootPage, kinfo: indexKeyInfo(ii, c.enc)}
		if t.kinfo != nil && ii.Index.Unique {
			t.unique = len(ii.Index.Columns)
		}
		if c.walkRoot(t) {
			c.indexes[ii] = t
		}
	}
}

// walkRoot marks t's root page used by the schema and walks the tree. It
// returns false when the root is out of range or already used.
func (c *checker) walkRoot(t *tree) bool {
	c.roots = append(c.roots, t.name)
	if !c.use(t.root, ref{kind: useRoot, by: uint32(len(c.roots) - 1)}, 0) {
		return false
	}
	c.walkTree(t)
	return true
}

// looksLikeTable guesses the kind of a tree whose CREATE TABLE pagoda could
// not parse from its root page's type: table unless it is an index page.
func (c *checker) looksLikeTable(root uint32) bool {
	if root == 0 || root > c.n {
		return true
	}
	data, err := c.src.Page(root)
	if err != nil {
		return true
	}
	t := format.PageType(data[format.HeaderOffset(root)])
	return !t.Valid() || t.IsTable()
}

// primaryKeyInfo is the order of a WITHOUT ROWID table's b-tree: its
// primary key columns' collations (as they compare the text of encoding
// enc) and directions.
func primaryKeyInfo(t *schema.Table, enc uint32) *format.KeyInfo {
	if schema.OtherCollation(t.PrimaryKey) != "" {
		return nil // an application-defined collation: the order is the application's
	}
	k := &format.KeyInfo{}
	for _, pk := range t.PrimaryKey {
		k.Colls = append(k.Colls, format.Collation(pk.Collation).ForEncoding(enc))
		k.Desc = append(k.Desc, pk.Desc)
	}
	return k
}

// indexKeyInfo is the order of an index's entries, every field included
// (the rowid or primary key tail too), or nil when pagoda cannot tell it:
// the index or its table could not be understood, or an expression term
// has no COLLATE clause (its collation would come from the expression,
// which pagoda does not evaluate). Collations compare the text of
// encoding enc.
func indexKeyInfo(ii *schema.IndexInfo, enc uint32) *format.KeyInfo {
	key := ii.KeyOrder()
	if key == nil {
		return nil
	}
	k := &format.KeyInfo{}
	for _, f := range key {
		if f.Expr && !f.CollationSet || f.Collation == schema.CollOther {
			return nil
		}
		k.Colls = append(k.Colls, format.Collation(f.Collation).ForEncoding(enc))
		k.Desc = append(k.Desc, f.Desc)
	}
	return k
}
