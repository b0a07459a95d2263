package expr

import (
	"fmt"
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// VIRTUAL generated columns.
//
// A STORED generated column is in the record like any other column. A
// VIRTUAL one is not: SQLite computes it when it is read
// (sqlite3ExprCodeGeneratedColumn), and so does Table.Virtual: the
// column's expression over the row's columns as OP_Column reads them (the
// rowid alias as the rowid, a REAL column's integers as REALs, the
// defaults of columns added after the row, other generated columns,
// VIRTUAL ones computed in turn), then the column's declared affinity
// unless it is BLOB (OP_Affinity is coded only for TEXT and the numeric
// affinities; a REAL result keeps its value, -0.0 reading 0.0). In a
// STRICT table the value must then be of the column's type (TypeCheck).
//
// The expressions are compiled once per table (NewTable), by the compiler
// of CHECK constraints and its broader subset (see schema.Expr). One
// outside it is not guessed at: Virtual returns an error wrapping
// format.ErrUnsupported that names the table, the column and the
// construct. An expression that fails as SQLite's would (malformed JSON,
// an integer overflow in abs) returns its error without
// format.ErrUnsupported: SQLite fails the statement that reads it.

// genColumn is a VIRTUAL generated column compiled against its table.
type genColumn struct {
	node *cnode
	aff  schema.Affinity
	err  error // why it cannot be evaluated, if it cannot
	// strict is the declared type in upper case in a STRICT table, ""
	// elsewhere: a value it does not accept fails the read (typeCheck).
	strict string
}

// TypeCheck fails a STRICT table's VIRTUAL column i whose value v, after
// its affinity, is not of its declared type, as SQLite 3.54 fails the
// statement that reads it (OP_TypeCheck, SQLITE_CONSTRAINT_DATATYPE) and
// its integrity_check reports the row. SQLite refuses to write such a row
// since, but older versions wrote them.
func (t *Table) TypeCheck(i int, v format.Value) error {
	g := &t.virtual[i]
	if g.strict == "" || v.Kind == format.KindNull || schema.StrictAccepts(g.strict, v.Kind) {
		return nil
	}
	return fmt.Errorf("cannot store %s value in %s column %s.%s: %w", KindName(v.Kind), g.strict, t.Def.Name, t.Def.Columns[i].Name, ErrConstraint)
}

// Virtual computes VIRTUAL column i of row: its expression, then the
// column's affinity (and, in a UTF-16 database, the text as SQLite holds
// it). reads, when not nil, is told each stored column read, in order.
// The error says why the column cannot be computed; TypeCheck is left to
// the caller.
func (t *Table) Virtual(i int, row Row, reads func(col int)) (format.Value, error) {
	g := &t.virtual[i]
	if g.node == nil {
		return format.NullValue(), g.err
	}
	r := exprRow{t: t.Def, tab: t, row: row, enc: t.Enc, reads: reads}
	v := g.node.ev(&r).v
	if r.err != nil {
		return format.NullValue(), fmt.Errorf("column %s: %w", t.Def.Columns[i].Name, r.err)
	}
	return r.utf16Text(r.affinity(v, g.aff)), nil
}

// IsVirtual reports whether column i is a VIRTUAL generated column.
func (t *Table) IsVirtual(i int) bool {
	return t.virtual != nil && uint(i) < uint(len(t.virtual)) && t.Def.Columns[i].Hidden
}

// Compiled reports whether VIRTUAL column i has an expression pagoda
// evaluates; when it has not, Virtual's error names the column.
func (t *Table) Compiled(i int) bool { return t.virtual[i].node != nil }

// compileGenerated compiles the VIRTUAL columns of t: nil when it has
// none. A column that cannot be compiled keeps its error for its reads.
func compileGenerated(t *schema.Table, owner string, enc uint32) []genColumn {
	var out []genColumn
	for i, c := range t.Columns {
		if !c.Hidden {
			continue
		}
		if out == nil {
			out = make([]genColumn, len(t.Columns))
		}
		g := &out[i]
		g.aff = c.Affinity
		if t.Strict {
			g.strict = strings.ToUpper(c.Type)
		}
		e, err := schema.ParseExpr(c.Expr)
		if err == nil {
			err = encodingFree(e, enc)
		}
		if err == nil {
			g.node, err = compileNode(e, t, true)
		}
		if err != nil {
			g.err = fmt.Errorf("pagoda: %w: %s column %s AS (%s): %v", format.ErrUnsupported, owner, c.Name, c.Expr, err)
		}
	}
	// SQLite refuses a loop of generated columns when it creates the
	// table; a file that has one anyway is not evaluated.
	for i := range out {
		if out[i].node != nil && genLoop(out, i, i, 0) {
			out[i].node = nil
			out[i].err = fmt.Errorf("pagoda: %w: %s column %s: a loop of generated columns", format.ErrUnsupported, owner, t.Columns[i].Name)
		}
	}
	return out
}

// genLoop reports whether column from's expression reaches column to
// through VIRTUAL columns.
func genLoop(gen []genColumn, from, to, depth int) bool {
	if depth > len(gen) {
		return true
	}
	var walk func(n *cnode) bool
	walk = func(n *cnode) bool {
		if n.op == schema.OpColumn && gen[n.col].node != nil {
			if n.col == to || genLoop(gen, n.col, to, depth+1) {
				return true
			}
		}
		for _, a := range n.args {
			if walk(a) {
				return true
			}
		}
		return false
	}
	return walk(gen[from].node)
}

// genAffinity applies a generated column's affinity to its value.
func genAffinity(v format.Value, aff schema.Affinity) format.Value {
	switch aff {
	case schema.AffinityBlob:
		return v
	case schema.AffinityReal:
		if v.Kind == format.KindFloat && v.Float() == 0 {
			return format.FloatValue(0) // through an integer: -0.0 is 0.0
		}
	}
	return ApplyAffinity(v, aff)
}

// HasVirtual reports whether the table has VIRTUAL generated columns.
func (t *Table) HasVirtual() bool { return t.virtual != nil }
