package schema

import (
	"fmt"
	"strings"
)

// Index is a parsed CREATE INDEX statement, or an automatic index built from
// a table's UNIQUE or PRIMARY KEY constraint.
type Index struct {
	Name    string
	Table   string
	SQL     string // "" for automatic indexes
	Unique  bool
	Auto    bool // sqlite_autoindex_*
	Partial bool // has a WHERE clause
	HasExpr bool // some term is an expression, not a plain column
	Columns []IndexedColumn
	// Where is the text of the WHERE clause of a partial index.
	Where string
	// PrimaryKey is true for the automatic index of a rowid table's
	// (non-alias) PRIMARY KEY.
	PrimaryKey bool
}

// ParseCreateIndex parses a CREATE INDEX statement. It cannot see the table,
// so every term has Column -1 and the collation given by its COLLATE clause
// (BINARY if none) until Resolve, or Build, fills them in from the table.
//
// A term naming a column is Expr == false with Name the name as written
// (dequoted); any other term is an expression (Expr == true, Name its source
// text). A collation other than BINARY, NOCASE and RTRIM is an
// application's own: CollOther, its name in CollName (OtherCollation says
// whether the index has one). Anything sqlite3 would reject gives an error
// wrapping ErrSyntax.
func ParseCreateIndex(sql string) (*Index, error) {
	p, err := newParser(sql)
	if err != nil {
		return nil, err
	}
	ix := &Index{SQL: sql}
	if err := p.expect("CREATE"); err != nil {
		return nil, err
	}
	ix.Unique = p.accept("UNIQUE")
	if err := p.expect("INDEX"); err != nil {
		return nil, err
	}
	if err := p.ifNotExists(); err != nil {
		return nil, err
	}
	if ix.Name, _, _, err = p.qualifiedName("index"); err != nil {
		return nil, err
	}
	p.what = "index " + quoteName(ix.Name)
	if err := p.expect("ON"); err != nil {
		return nil, err
	}
	if ix.Table, err = p.name("table"); err != nil {
		return nil, err
	}
	if _, err := p.expectOp("("); err != nil {
		return nil, err
	}
	for {
		tm, err := p.sortTerm(false)
		if err != nil {
			return nil, err
		}
		c := IndexedColumn{Column: -1, Name: tm.name, Desc: tm.desc, Expr: !tm.column, dquoted: tm.dquoted}
		if tm.collSet {
			c.Collation, c.CollName = collationOf(tm.coll)
			c.CollationSet = true
		}
		ix.HasExpr = ix.HasExpr || c.Expr
		ix.Columns = append(ix.Columns, c)
		if !p.acceptOp(",") {
			break
		}
	}
	if _, err := p.expectOp(")"); err != nil {
		return nil, err
	}
	if p.accept("WHERE") {
		if ix.Where, err = p.whereClause(); err != nil {
			return nil, err
		}
		ix.Partial = true
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	return ix, nil
}

// whereClause consumes the expression of a partial index's WHERE clause, up
// to ";" or the end, and returns its text.
func (p *parser) whereClause() (string, error) {
	first := p.peek()
	last := first
	depth := 0
	for {
		t := p.peek()
		if t.kind == tokEOF || t.isOp(";") {
			break
		}
		if t.isOp("(") {
			depth++
		} else if t.isOp(")") {
			if depth == 0 {
				return "", p.syntaxf("unbalanced parenthesis")
			}
			depth--
		}
		last = p.next()
	}
	if depth != 0 {
		return "", p.syntaxf("unterminated WHERE clause")
	}
	if last.kind == tokEOF || last.isOp(";") {
		return "", p.syntaxf("expected an expression after WHERE")
	}
	return strings.TrimSpace(p.src[first.pos:last.end]), nil
}

// Resolve binds the index's terms to the columns of t: it sets each plain
// term's Column, takes the table's spelling of the name, and gives terms
// without COLLATE the column's collation. As in sqlite3, a term written as a
// "double-quoted" name that is no column is a string literal, so it becomes
// an expression. Any other unknown name gives an error wrapping ErrInvalid.
// The rowid cannot be indexed by name (sqlite3 3.40 rejects it too).
func (ix *Index) Resolve(t *Table) error {
	for i := range ix.Columns {
		c := &ix.Columns[i]
		if c.Expr {
			continue
		}
		ci := t.ColumnIndex(c.Name)
		if ci < 0 {
			if c.dquoted {
				c.Expr, c.Name, c.dquoted = true, quoteName(c.Name), false
				ix.HasExpr = true
				continue
			}
			return fmt.Errorf("%w: index %s: no such column: %s.%s", ErrInvalid, quoteName(ix.Name), t.Name, c.Name)
		}
		c.Column, c.Name = ci, t.Columns[ci].Name
		if !c.CollationSet {
			c.Collation, c.CollName = t.Columns[ci].Collation, t.Columns[ci].CollName
		}
	}
	return nil
}

// KeyOrder returns the fields of the index's records on table t, in order
// (sqlite-format.md §6): the indexed terms, then for a rowid table the rowid
// (Column -1, Expr false, Name "rowid"), for a WITHOUT ROWID table the
// primary key columns that are not already a term with the same collation.
// ix must have been resolved against t.
//
// The appended primary key columns keep the key's collations. They keep its
// sort order in an index made by CREATE INDEX, but are always ascending in
// an automatic index, as sqlite3 builds them (its "bAscKeyBug", ticket
// bba7b69f9849b5bf).
func (ix *Index) KeyOrder(t *Table) []IndexedColumn {
	key := append(make([]IndexedColumn, 0, len(ix.Columns)+len(t.PrimaryKey)), ix.Columns...)
	if !t.WithoutRowID {
		return append(key, IndexedColumn{Column: -1, Name: "rowid"})
	}
	n := len(ix.Columns)
	for _, c := range t.PrimaryKey {
		if !hasKeyColumn(key[:n], c) {
			if ix.Auto {
				c.Desc = false
			}
			key = append(key, c)
		}
	}
	return key
}
