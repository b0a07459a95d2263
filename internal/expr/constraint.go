package expr

import (
	"fmt"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// CHECK constraints and the WHERE clauses of partial indexes: the rows a
// write must refuse, the rows an index holds, and what integrity_check
// reports of both.

// Checks are a table's CHECK constraints, compiled against it.
type Checks struct {
	t    *schema.Table
	list []checkExpr
	enc  uint32 // the database's text encoding: UTF-16 rows holding a BLOB are not judged
}

// CompileChecks compiles the CHECK constraints of t in a database of text
// encoding enc: nil when t has none. An expression outside the subset
// pagoda evaluates (see compileExpr; in a UTF-16 database, encodingFree) is
// an error wrapping schema.ErrUnsupported.
func CompileChecks(t *schema.Table, enc uint32) (*Checks, error) {
	if len(t.Checks) == 0 {
		return nil, nil
	}
	list, err := compileChecks(t, enc)
	if err != nil {
		return nil, err
	}
	return &Checks{t: t, list: list, enc: enc}, nil
}

// Failed returns the text of the first CHECK constraint the row vals (by
// column, after affinity, the rowid alias holding the rowid) fails: one
// that is false (0); NULL passes. It is "" when the row passes them all,
// or is a row of a UTF-16 database holding a BLOB, which SQLite reads as
// UTF-16 text where an expression takes it for text: such a row is not
// judged.
func (c *Checks) Failed(vals []format.Value) string {
	if format.IsUTF16(c.enc) && holdsBlob(vals) {
		return ""
	}
	for i := range c.list {
		if !c.list[i].passes(c.t, vals) {
			return c.list[i].src
		}
	}
	return ""
}

// Where is a partial index's WHERE clause, compiled against its table.
type Where struct {
	t    *schema.Table
	root *cnode
	enc  uint32
}

// CompileWhere compiles the WHERE clause of index ix on table t, in a
// database of text encoding enc: nil for an index that is not partial.
// One outside the subset pagoda evaluates is an error.
func CompileWhere(ix *schema.Index, t *schema.Table, enc uint32) (*Where, error) {
	if !ix.Partial {
		return nil, nil
	}
	e, err := schema.ParseExpr(ix.Where)
	if err == nil {
		err = encodingFree(e, enc)
	}
	var n *cnode
	if err == nil {
		n, err = compileExpr(e, t)
	}
	if err != nil {
		return nil, fmt.Errorf("index %q: WHERE %s: %v", ix.Name, ix.Where, err)
	}
	return &Where{t: t, root: n, enc: enc}, nil
}

// Takes reports whether the index holds an entry for the row vals (by
// column, after affinity, the rowid alias holding the rowid): whether its
// WHERE clause is true (not NULL). A nil Where (a full index) takes every
// row. known is false for a row of a UTF-16 database holding a BLOB (see
// Checks.Failed), which is not judged.
func (w *Where) Takes(vals []format.Value) (in, known bool) {
	if w == nil {
		return true, true
	}
	if format.IsUTF16(w.enc) && holdsBlob(vals) {
		return false, false
	}
	return truth(w.root.eval(w.t, vals).v) == triTrue, true
}

// holdsBlob reports whether a row holds a BLOB.
func holdsBlob(vals []format.Value) bool {
	for _, v := range vals {
		if v.Kind == format.KindBlob {
			return true
		}
	}
	return false
}

// checkExpr is one CHECK constraint compiled against its table.
type checkExpr struct {
	src  string
	root *cnode
}

// compileChecks compiles a table's CHECK constraints; an expression
// outside the subset, or naming no column of the table, is an error
// wrapping schema.ErrUnsupported.
func compileChecks(t *schema.Table, enc uint32) ([]checkExpr, error) {
	var out []checkExpr
	for _, src := range t.Checks {
		e, err := schema.ParseExpr(src)
		if err == nil {
			err = encodingFree(e, enc)
		}
		if err != nil {
			return nil, err
		}
		n, err := compileExpr(e, t)
		if err != nil {
			return nil, err
		}
		out = append(out, checkExpr{src: src, root: n})
	}
	return out, nil
}

// passes reports whether the row vals (after affinity, the rowid alias
// holding the rowid) satisfies the constraint: true or NULL.
func (c *checkExpr) passes(t *schema.Table, vals []format.Value) bool {
	return truth(c.root.eval(t, vals).v) != triFalse
}
