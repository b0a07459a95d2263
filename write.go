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

// btree returns the transaction's b-tree writer, which keeps its scratch
// space from one change to the next.
func (tx *Tx) btree() *btree.Writer {
	if tx.bw == nil {
		if db := tx.db; db.bw == nil {
			db.bw = btree.NewWriter(tx.w)
		} else {
			db.bw.Reset(tx.w)
		}
		tx.bw = tx.db.bw
	}
	return tx.bw
}

// writeCheck returns why the transaction cannot write, if it cannot.
func (tx *Tx) writeCheck() error {
	if tx.closed {
		return ErrTxClosed
	}
	if !tx.writable {
		return ErrTxNotWritable
	}
	if tx.werr != nil {
		return fmt.Errorf("pagoda: an earlier change of this transaction failed, roll it back: %w", tx.werr)
	}
	return nil
}

// fail poisons the transaction with err, from a change that may have been
// applied in part: the transaction can then only roll back. Errors found
// before anything changed (constraints, bad arguments) must not come here.
func (tx *Tx) fail(err error) error {
	if tx.werr == nil {
		tx.werr = err
	}
	return err
}

// changed records a change of the trees (cursors of this transaction find
// their place again before they move) and lets the pager spill changed
// pages to the WAL when they exceed the cache budget.
func (tx *Tx) changed() error {
	tx.gen++
	if err := tx.w.Settle(); err != nil {
		return tx.fail(err)
	}
	return nil
}

// sqlite_schema's table tree: records (type, name, tbl_name, rootpage, sql).

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
	pg, err := tx.w.Write(1)
	if err != nil {
		return err
	}
	h := format.Header(pg)
	h.SetSchemaCookie(h.SchemaCookie() + 1)
	if !h.FormatFieldsSet() {
		h.SetSchemaFormat(4)
		if h.TextEncoding() == 0 {
			h.SetTextEncoding(format.TextEncodingUTF8)
		}
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

// isConstraint reports whether err is a constraint error that leaves the
// transaction usable.
func isConstraint(err error) bool { return errors.Is(err, ErrExists) || errors.Is(err, errConstraint) }

// errConstraint marks the constraint failures that have no sentinel of
// their own (NOT NULL, STRICT types, wrong value counts).
var errConstraint = expr.ErrConstraint
