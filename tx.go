package pagoda

import (
	"errors"
	"fmt"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/schema"
)

// Tx is a transaction: a consistent snapshot of the database. A Tx is not
// safe for concurrent use; open one per goroutine. Slices and Records it
// returns are valid until it ends.
type Tx struct {
	db       *DB
	snap     pager.Snapshot
	cat      *schema.Catalog
	writable bool
	closed   bool
	err      error // first error that stopped an iterator

}

// DB returns the database the transaction belongs to.
func (tx *Tx) DB() *DB { return tx.db }

// Writable reports whether this is a write transaction.
func (tx *Tx) Writable() bool { return tx.writable }

// Rollback ends the transaction. For a read transaction this is the normal
// way to end it. Rolling back a closed transaction returns ErrTxClosed.
func (tx *Tx) Rollback() error {
	if tx.closed {
		return ErrTxClosed
	}
	tx.closed = true
	tx.db.txs.RUnlock()
	return nil
}

// Commit ends a write transaction durably. A read transaction cannot be
// committed (ErrTxNotWritable); end it with Rollback.
func (tx *Tx) Commit() error {
	if tx.closed {
		return ErrTxClosed
	}
	return ErrTxNotWritable
}

// Err returns the first error that stopped one of this transaction's
// iterators (View returns it too).
func (tx *Tx) Err() error { return tx.err }

func (tx *Tx) setErr(err error) {
	if tx.err == nil {
		tx.err = err
	}
}

func (tx *Tx) check() error {
	if tx.closed {
		return ErrTxClosed
	}
	return nil
}

// Object is one row of sqlite_schema.
type Object struct {
	Type     string // "table", "index", "view" or "trigger"
	Name     string
	Table    string // the table it belongs to
	RootPage uint32 // 0 for views and triggers
	SQL      string // "" for automatic indexes
}

// Objects lists the schema in sqlite_schema order.
func (tx *Tx) Objects() []Object {
	out := make([]Object, 0, len(tx.cat.Entries))
	for _, e := range tx.cat.Entries {
		out = append(out, Object{Type: e.Type, Name: e.Name, Table: e.TblName, RootPage: e.RootPage, SQL: e.SQL})
	}
	return out
}

// TableNames returns the names of all tables, in schema order.
func (tx *Tx) TableNames() []string {
	var out []string
	for _, e := range tx.cat.Entries {
		if e.Type == "table" {
			out = append(out, e.Name)
		}
	}
	return out
}

// PageCount returns the database size in pages in this snapshot.
func (tx *Tx) PageCount() uint32 { return tx.snap.PageCount() }

// schemaErr translates a schema package error into the contract's errors.
func schemaErr(what, name string, err error) error {
	if errors.Is(err, schema.ErrUnsupported) {
		return fmt.Errorf("pagoda: %s %q: %w: %v", what, name, ErrUnsupported, err)
	}
	return fmt.Errorf("pagoda: %s %q: %w: %v", what, name, ErrCorrupt, err)
}

// rootOK checks a root page number from the schema.
func (tx *Tx) rootOK(what, name string, root uint32) error {
	if root < 1 || root > tx.snap.PageCount() {
		return format.Corruptf(root, "%s %q has root page %d outside 1..%d", what, name, root, tx.snap.PageCount())
	}
	return nil
}
