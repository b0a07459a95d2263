package pagoda

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// DDL: tables and indexes created and dropped, as sqlite3's CREATE and DROP
// statements change sqlite_schema (type, name, tbl_name, rootpage, sql) and
// the schema cookie.

// CreateTable creates a table from a SQLite CREATE TABLE statement, stored
// in sqlite_schema as sqlite3 stores it, with the automatic indexes its
// UNIQUE and PRIMARY KEY constraints imply. With IF NOT EXISTS an existing
// table is returned; otherwise a name in use is an error wrapping
// ErrExists. Statements pagoda cannot parse fail with ErrUnsupported or a
// syntax error, and change nothing.
func (tx *Tx) CreateTable(sql string) (*Table, error) {
	if err := tx.writeCheck(); err != nil {
		return nil, err
	}
	t, err := schema.ParseCreateTable(sql)
	if err != nil {
		return nil, ddlErr(err)
	}
	stored, err := normalizeCreate(sql) // before the names: temp.t is not t
	if err != nil {
		return nil, err
	}
	if name := t.OtherCollation(); name != "" { // sqlite3 refuses it too
		return nil, fmt.Errorf("pagoda: table %q: no such collation sequence: %s: %w", t.Name, name, ErrUnsupported)
	}
	if schema.IfNotExists(sql) && tx.cat.Table(t.Name) != nil {
		return tx.Table(t.Name)
	}
	if err := tx.checkNewName("table", t.Name); err != nil {
		return nil, err
	}
	root, err := tx.btree().CreateTree(!t.WithoutRowID)
	if err != nil {
		return nil, tx.fail(err)
	}
	if err := tx.schemaInsert("table", t.Name, t.Name, root, &stored); err != nil {
		return nil, tx.fail(err)
	}
	for _, ai := range t.AutoIndexes() {
		r, err := tx.btree().CreateTree(false)
		if err != nil {
			return nil, tx.fail(err)
		}
		if err := tx.schemaInsert("index", ai.Name, t.Name, r, nil); err != nil {
			return nil, tx.fail(err)
		}
	}
	if t.AutoIncrement {
		if err := tx.createSequence(); err != nil {
			return nil, tx.fail(err)
		}
	}
	if err := tx.schemaChanged(); err != nil {
		return nil, tx.fail(err)
	}
	return tx.Table(t.Name)
}

// normalizeCreate returns the text sqlite3 stores for a CREATE statement
// of the main schema, the one the file holds: a temporary object lives in
// a sqlite3 connection (ErrUnsupported), and no other schema is attached.
func normalizeCreate(sql string) (string, error) {
	switch s, err := schema.CreateSchema(sql); {
	case err != nil:
		return "", ddlErr(err)
	case strings.EqualFold(s, "temp") || strings.EqualFold(s, "temporary"):
		return "", fmt.Errorf("pagoda: a temporary table or index lives in a sqlite3 connection, not in the file: %w", ErrUnsupported)
	case s != "" && !strings.EqualFold(s, "main"):
		return "", fmt.Errorf("pagoda: unknown database %s: %w", s, ErrNotFound)
	}
	stored, err := schema.NormalizeCreate(sql)
	if err != nil {
		return "", ddlErr(err)
	}
	return stored, nil
}

// ddlErr wraps a schema parsing error in the contract's terms.
func ddlErr(err error) error {
	if errors.Is(err, schema.ErrUnsupported) {
		// err's text starts with "unsupported", ErrUnsupported's.
		return &format.Wrapped{Msg: "pagoda: " + err.Error(), Err: ErrUnsupported}
	}
	return fmt.Errorf("pagoda: %v", err)
}

// CreateIndex creates an index from a SQLite CREATE [UNIQUE] INDEX
// statement on plain columns (BINARY, NOCASE or RTRIM, ASC or DESC) and
// fills it from the table's rows. A UNIQUE index over rows that are not
// unique fails with ErrExists and changes nothing. Expression indexes are
// refused with ErrUnsupported, and so are partial indexes whose WHERE is
// outside the subset of SQL pagoda evaluates (see the README).
func (tx *Tx) CreateIndex(sql string) (*Index, error) {
	if err := tx.writeCheck(); err != nil {
		return nil, err
	}
	ix, err := schema.ParseCreateIndex(sql)
	if err != nil {
		return nil, ddlErr(err)
	}
	stored, err := normalizeCreate(sql) // before the names: temp.i is not i
	if err != nil {
		return nil, err
	}
	if name := ix.OtherCollation(); name != "" { // sqlite3 refuses it too
		return nil, fmt.Errorf("pagoda: index %q: no such collation sequence: %s: %w", ix.Name, name, ErrUnsupported)
	}
	if schema.IfNotExists(sql) && tx.cat.Index(ix.Name) != nil {
		return tx.Index(ix.Name)
	}
	if err := tx.checkNewName("index", ix.Name); err != nil {
		return nil, err
	}
	if ix.HasExpr {
		return nil, fmt.Errorf("pagoda: index %q: expression indexes are not supported: %w", ix.Name, ErrUnsupported)
	}
	tbl, err := tx.Table(ix.Table)
	if err != nil {
		return nil, err
	}
	if err := ix.Resolve(tbl.info.Table); err != nil {
		return nil, ddlErr(err)
	}
	p, err := tbl.plan()
	if err != nil {
		return nil, err
	}
	where, err := expr.CompileWhere(ix, tbl.info.Table, format.TextEncodingUTF8)
	if err != nil {
		return nil, fmt.Errorf("pagoda: %v: %w", err, ErrUnsupported)
	}
	root, err := tx.btree().CreateTree(false)
	if err != nil {
		return nil, tx.fail(err)
	}
	ii := &schema.IndexInfo{Entry: schema.Entry{Type: "index", Name: ix.Name, TblName: tbl.Name(), RootPage: root}, Index: ix, Table: tbl.info}
	im := metaForIndex(ii, format.TextEncodingUTF8) // pagoda writes UTF-8 databases only
	ip := indexPlan{name: ix.Name, root: root, kinfo: &im.kinfo, nCols: len(ix.Columns), unique: ix.Unique, where: where}
	for _, k := range ii.KeyOrder() {
		ip.cols = append(ip.cols, k.Column)
	}
	if err := tbl.fill(p, &ip); err != nil {
		if errors.Is(err, ErrExists) {
			// Undo: nothing else has changed.
			if cerr := tx.btree().ClearTree(root, true); cerr != nil {
				return nil, tx.fail(cerr)
			}
			return nil, err
		}
		return nil, tx.fail(err)
	}
	if err := tx.schemaInsert("index", ix.Name, tbl.Name(), root, &stored); err != nil {
		return nil, tx.fail(err)
	}
	if err := tx.schemaChanged(); err != nil {
		return nil, tx.fail(err)
	}
	return tx.Index(ix.Name)
}

// fill inserts an entry for every row of the table into the new index ip.
func (t *Table) fill(p *writePlan, ip *indexPlan) error {
	var c btree.Cursor
	c.Init(t.tx.w, t.root, !p.wr, p.kinfo)
	var rows [][]format.Value
	var rowids []int64
	for ok := c.First(); ok; ok = c.Next() {
		rowid, rec, _, err := c.Entry()
		if err != nil {
			return err
		}
		vals, err := t.oldValues(p, rec, rowid)
		if err != nil {
			return err
		}
		// The values alias the page; copy them before the tree changes.
		for i, v := range vals {
			if v.Bytes != nil {
				vals[i].Bytes = append([]byte(nil), v.Bytes...)
			}
		}
		rows, rowids = append(rows, vals), append(rowids, rowid)
	}
	if err := c.Err(); err != nil {
		return err
	}
	var key []byte
	var fields []format.Value
	for i, vals := range rows {
		if !ip.includes(vals) {
			continue
		}
		fields = ip.fields(fields, vals, rowids[i], p.alias)
		if format.RecordTooBig(fields) {
			return tooBig(fields, "key of index "+ip.name)
		}
		if err := t.conflict(ip, fields); err != nil {
			return err
		}
		key = format.AppendRecord(key[:0], fields)
		if _, err := t.tx.btree().IndexInsert(ip.root, ip.kinfo, 0, key); err != nil {
			return err
		}
	}
	return nil
}

// DropTable deletes a table with its rows and its indexes (and triggers);
// their pages go to the freelist. ErrNotFound if there is no such table.
func (tx *Tx) DropTable(name string) error {
	if err := tx.writeCheck(); err != nil {
		return err
	}
	ti := tx.cat.Table(name)
	if ti == nil {
		return noSuch("table", name)
	}
	if strings.HasPrefix(strings.ToLower(ti.Entry.Name), "sqlite_") {
		return fmt.Errorf("pagoda: table %q may not be dropped: %w", ti.Entry.Name, ErrUnsupported)
	}
	var names []string
	var roots []uint32
	for _, e := range tx.cat.Entries {
		if strings.EqualFold(e.TblName, ti.Entry.Name) || strings.EqualFold(e.Name, ti.Entry.Name) {
			if e.Type == "view" && !strings.EqualFold(e.Name, ti.Entry.Name) {
				continue // a view reading the table stays, as in sqlite3
			}
			names = append(names, e.Name)
			if e.RootPage != 0 && (e.Type == "table" || e.Type == "index") {
				roots = append(roots, e.RootPage)
			}
		}
	}
	for _, r := range roots {
		if err := tx.rootOK("table", name, r); err != nil {
			return err
		}
	}
	if ti.Table != nil && ti.Table.AutoIncrement {
		if err := tx.dropSequence(ti.Entry.Name); err != nil {
			return tx.fail(err)
		}
	}
	for _, r := range roots {
		if err := tx.btree().ClearTree(r, true); err != nil {
			return tx.fail(err)
		}
	}
	if err := tx.schemaDelete(names...); err != nil {
		return tx.fail(err)
	}
	if err := tx.schemaChanged(); err != nil {
		return tx.fail(err)
	}
	return nil
}

// DropIndex deletes an index created by CREATE INDEX; its pages go to the
// freelist. ErrNotFound if there is none; the automatic index of a UNIQUE or
// PRIMARY KEY constraint cannot be dropped (ErrUnsupported).
func (tx *Tx) DropIndex(name string) error {
	if err := tx.writeCheck(); err != nil {
		return err
	}
	ii := tx.cat.Index(name)
	if ii == nil {
		return noSuch("index", name)
	}
	if !ii.Entry.HasSQL {
		return fmt.Errorf("pagoda: index %q belongs to a UNIQUE or PRIMARY KEY constraint and cannot be dropped: %w", ii.Entry.Name, ErrUnsupported)
	}
	if err := tx.rootOK("index", name, ii.Entry.RootPage); err != nil {
		return err
	}
	if err := tx.btree().ClearTree(ii.Entry.RootPage, true); err != nil {
		return tx.fail(err)
	}
	if err := tx.schemaDelete(ii.Entry.Name); err != nil {
		return tx.fail(err)
	}
	if err := tx.schemaChanged(); err != nil {
		return tx.fail(err)
	}
	return nil
}

// schemaInsert appends a row to sqlite_schema; sql nil stores NULL (the
// automatic indexes).
func (tx *Tx) schemaInsert(typ, name, tblName string, root uint32, sql *string) error {
	last, ok, err := btree.TableMaxRowid(tx.w, schemaRoot)
	if err != nil {
		return err
	}
	rowid := int64(1)
	if ok {
		rowid = last + 1
	}
	vals := []format.Value{
		format.TextValue([]byte(typ)),
		format.TextValue([]byte(name)),
		format.TextValue([]byte(tblName)),
		format.IntValue(int64(root)),
		format.NullValue(),
	}
	if sql != nil {
		vals[schema.ColSQL] = format.TextValue([]byte(*sql))
	}
	if format.RecordTooBig(vals) {
		return tooBig(vals, "the schema row of "+name)
	}
	_, err = tx.btree().TableInsert(schemaRoot, rowid, format.AppendRecord(nil, vals))
	return err
}

// schemaDelete deletes the sqlite_schema rows whose name is one of names
// (ASCII case ignored).
func (tx *Tx) schemaDelete(names ...string) error {
	var rowids []int64
	var c btree.Cursor
	c.Init(tx.w, schemaRoot, true, nil)
	for ok := c.First(); ok; ok = c.Next() {
		rowid, payload, _, err := c.Entry()
		if err != nil {
			return err
		}
		v, ok := format.Field(payload, schema.ColName)
		if !ok {
			continue
		}
		for _, n := range names {
			if strings.EqualFold(string(v.Bytes), n) {
				rowids = append(rowids, rowid)
				break
			}
		}
	}
	if err := c.Err(); err != nil {
		return err
	}
	for _, r := range rowids {
		if _, err := tx.btree().TableDelete(schemaRoot, r); err != nil {
			return err
		}
	}
	return nil
}

// schemaChanged bumps the schema cookie, as every DDL statement does, and
// reads the catalog again.
func (tx *Tx) schemaChanged() error {
	if err := tx.w.SchemaChanged(); err != nil {
		return err
	}
	cat, err := readCatalog(tx.w)
	if err != nil {
		return err
	}
	tx.cat = cat
	return tx.changed()
}

// objectNamed returns the type of the schema object called name ("" if
// there is none): tables, indexes, views and triggers share one namespace.
func (tx *Tx) objectNamed(name string) string {
	for _, e := range tx.cat.Entries {
		if strings.EqualFold(e.Name, name) {
			return e.Type
		}
	}
	return ""
}

// checkNewName refuses names sqlite3 reserves and names in use.
func (tx *Tx) checkNewName(what, name string) error {
	if name == "" {
		return fmt.Errorf("pagoda: %s name is empty", what)
	}
	if len(name) >= 7 && strings.EqualFold(name[:7], "sqlite_") {
		return fmt.Errorf("pagoda: %s name %q is reserved for sqlite3's own objects: %w", what, name, ErrUnsupported)
	}
	if typ := tx.objectNamed(name); typ != "" {
		return fmt.Errorf("pagoda: there is already a %s named %q: %w", typ, name, ErrExists)
	}
	return nil
}

// quoteIdent quotes an identifier for SQL text.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// schemaRoot is the root page of sqlite_schema.
const schemaRoot = 1

// readCatalog reads every row of sqlite_schema and builds the catalog (its
// text converted to UTF-8 in a UTF-16 database).
func readCatalog(s btree.Pages) (*schema.Catalog, error) {
	pg1, err := s.Page(1)
	if err != nil {
		return nil, err
	}
	enc := format.Header(pg1).TextEncoding()
	var c btree.Cursor
	c.Init(s, schemaRoot, true, nil)
	var entries []schema.Entry
	for ok := c.First(); ok; ok = c.Next() {
		rowid, payload, pgno, err := c.Entry()
		if err != nil {
			return nil, err
		}
		e, err := schema.DecodeEntryEnc(payload, enc)
		if err != nil {
			return nil, format.Corruptf(pgno, "sqlite_schema row %d: %s", rowid, corruptMsg(err))
		}
		entries = append(entries, e)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	cat := schema.BuildFormat(entries, format.Header(pg1).SchemaFormat())
	cat.TextEncoding = enc
	return cat, nil
}
