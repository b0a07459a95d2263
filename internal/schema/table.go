package schema

import (
	"fmt"
	"strings"

	"github.com/pagodadb/pagoda/internal/format"
)

// Column is one column of a table, as declared.
type Column struct {
	Name string
	// Type is the declared type as written: the source text of the type
	// words and their optional "(n)" or "(n, m)" ("VARCHAR(10)",
	// "UNSIGNED BIG INT"), dequoted the way sqlite3 does it (see typeName),
	// "" if none. PRAGMA table_info shows the same text, except that it
	// upper-cases the STRICT type names (INT, INTEGER, REAL, TEXT, BLOB, ANY).
	Type      string
	Affinity  Affinity
	Collation Collation // from a COLLATE clause on the column, default CollBinary
	CollName  string    // the name of an application-defined collation (Collation CollOther)
	// NotNull is true when the column rejects NULL: declared NOT NULL, or a
	// PRIMARY KEY column of a WITHOUT ROWID or STRICT table (but never the
	// rowid alias), as sqlite3 enforces.
	NotNull bool
	// NotNullConflict is the ON CONFLICT resolution of the column's NOT
	// NULL constraint in upper case, "" if not given.
	NotNullConflict string
	PrimaryKey      bool // column is (part of) the primary key
	Hidden          bool // VIRTUAL generated column: NOT stored in the record
	Generated       bool // generated column (stored or virtual)
	// Expr is a generated column's expression: the source text inside
	// AS (...), without the parentheses.
	Expr string
	// Default is the text of the DEFAULT clause as PRAGMA table_info shows
	// it: a literal as written ("'abc'", "-1", "CURRENT_TIMESTAMP", "NULL"),
	// or the expression inside DEFAULT (...) without the parentheses.
	Default    string
	HasDefault bool
}

// IndexedColumn is one term of a key: a PRIMARY KEY or UNIQUE constraint, or
// an index.
type IndexedColumn struct {
	// Column is the index into Table.Columns; -1 when the term is an
	// expression, or the rowid (in Index.KeyOrder). ParseCreateIndex cannot
	// know the table and leaves it at -1; Index.Resolve and Build fill it.
	Column int
	// Name is the column's name as declared in the table (as written in the
	// CREATE INDEX text before resolution); the expression's source text for
	// expressions; "rowid" for the rowid term of Index.KeyOrder.
	Name string
	// Collation is the explicit COLLATE of the term, else the table column's
	// collation (BINARY for expressions).
	Collation    Collation
	CollName     string // the name of an application-defined collation (Collation CollOther)
	CollationSet bool   // an explicit COLLATE was written on this term
	Desc         bool
	Expr         bool // the term is an expression, not a plain column

	dquoted bool // Name was a "double-quoted" identifier (see Index.Resolve)
}

// Constraint is a UNIQUE or PRIMARY KEY constraint: the key of an automatic
// index (or, for the PRIMARY KEY of a WITHOUT ROWID table, of the table's
// own b-tree).
type Constraint struct {
	PrimaryKey bool
	Columns    []IndexedColumn
	// OnConflict is the constraint's ON CONFLICT resolution in upper case
	// ("ROLLBACK", "ABORT", "FAIL", "IGNORE", "REPLACE"), "" if not given.
	OnConflict string
}

// Table is a parsed CREATE TABLE statement.
type Table struct {
	Name          string // dequoted, without a schema prefix
	SQL           string // the text that was parsed
	Columns       []Column
	WithoutRowID  bool
	Strict        bool
	AutoIncrement bool
	RowidAlias    int // index of the INTEGER PRIMARY KEY alias column, -1 if none
	// AliasConflict is the ON CONFLICT resolution of the rowid alias's
	// PRIMARY KEY in upper case, "" if not given (the alias has no
	// Constraint).
	AliasConflict string
	PrimaryKey    []IndexedColumn // PK columns in PK order (empty if none)
	// Constraints lists the UNIQUE and PRIMARY KEY constraints in the order
	// that numbers sqlite_autoindex_<table>_<N> (N = position+1): column and
	// table constraints interleaved by their position in the text. A
	// rowid-alias PK is not in the list (it gets no number); a constraint
	// with the same columns and collations as an earlier one is merged into
	// it (sqlite3 makes one index and gives no number); the INTEGER PRIMARY
	// KEY of a WITHOUT ROWID table comes last. The WITHOUT ROWID primary key
	// has a number but no sqlite_schema row.
	Constraints []Constraint
	// RecordOrder lists the Columns index stored in each field of the
	// table's records: for a rowid table the non-virtual columns in
	// declaration order (the rowid alias included, stored as NULL); for a
	// WITHOUT ROWID table the PK columns in PK order, then the remaining
	// non-virtual columns in declaration order (sqlite-format.md §6).
	RecordOrder []int
	// Checks holds the text of each CHECK constraint's expression.
	Checks []string
}

// maxColumns is SQLITE_MAX_COLUMN's default.
const maxColumns = 2000

// ParseCreateTable parses a CREATE TABLE statement, as stored in
// sqlite_schema.sql or as a user would write it (TEMP, IF NOT EXISTS, a
// schema prefix and a trailing ";" are accepted and ignored).
//
// CREATE VIRTUAL TABLE and CREATE TABLE ... AS SELECT give an error wrapping
// ErrUnsupported. A collation other than BINARY, NOCASE and RTRIM is an
// application's own (CollOther; see Table.OtherCollation): sqlite3 refuses
// to create such a table without the application, but reads one that the
// application made, and so must pagoda. Anything sqlite3 would reject gives
// an error wrapping ErrSyntax.
func ParseCreateTable(sql string) (*Table, error) {
	p, err := newParser(sql)
	if err != nil {
		return nil, err
	}
	b := &tableBuilder{p: p, t: &Table{SQL: sql, RowidAlias: -1}}
	if err := b.parse(); err != nil {
		return nil, err
	}
	if err := b.finish(); err != nil {
		return nil, err
	}
	return b.t, nil
}

// pendingKey is a PRIMARY KEY or UNIQUE constraint as written, before the
// column collations are known and duplicates merged.
type pendingKey struct {
	at       token
	pk       bool
	colLevel bool // a column constraint ("x PRIMARY KEY"), not PRIMARY KEY(x)
	cols     []IndexedColumn
	conflict string
	autoinc  bool
}

type tableBuilder struct {
	p    *parser
	t    *Table
	keys []pendingKey
	// per column: the type was written (even if it dequotes to "")
	typed []bool
	// per column: the standard type name (stdTypes) the type matches, or ""
	std []string
}

func (b *tableBuilder) parse() error {
	p := b.p
	if err := p.expect("CREATE"); err != nil {
		return err
	}
	temp := p.accept("TEMP") || p.accept("TEMPORARY")
	if p.peek().is("VIRTUAL") {
		module := VirtualModule(p.src)
		if module == "" {
			module = "?"
		}
		return fmt.Errorf("%w: virtual table using %s: its rows are made by the module, which pagoda does not run; its shadow tables read as tables",
			ErrUnsupported, module)
	}
	if err := p.expect("TABLE"); err != nil {
		return err
	}
	if err := p.ifNotExists(); err != nil {
		return err
	}
	name, at, schema, err := p.qualifiedName("table")
	if err != nil {
		return err
	}
	if temp && schema != "" && !eqFold(schema, "temp") {
		return p.errAt(ErrSyntax, at, "temporary table name must be unqualified")
	}
	b.t.Name = name
	p.what = "table " + quoteName(name)
	if p.peek().is("AS") {
		return p.errAt(ErrUnsupported, p.peek(), "CREATE TABLE ... AS SELECT")
	}
	if _, err := p.expectOp("("); err != nil {
		return err
	}
	// Columns first, then table constraints; at least one column.
	for {
		if err := b.column(); err != nil {
			return err
		}
		if p.acceptOp(")") {
			return b.options()
		}
		if _, err := p.expectOp(","); err != nil {
			return err
		}
		if isTableConstraintStart(p.peek()) {
			break
		}
	}
	for {
		if err := b.tableConstraint(); err != nil {
			return err
		}
		if p.acceptOp(")") {
			return b.options()
		}
		p.acceptOp(",") // the comma between table constraints is optional
	}
}

func isTableConstraintStart(t token) bool {
	return t.is("CONSTRAINT") || t.is("PRIMARY") || t.is("UNIQUE") || t.is("CHECK") || t.is("FOREIGN")
}

// options parses the table options after the closing parenthesis:
// WITHOUT ROWID and STRICT, comma separated.
func (b *tableBuilder) options() error {
	p := b.p
	if p.peek().kind == tokEOF || p.peek().isOp(";") {
		return p.end()
	}
	for {
		t := p.peek()
		switch {
		case t.is("WITHOUT") && p.peekAt(1).is("ROWID"):
			p.i += 2
			b.t.WithoutRowID = true
		case t.is("STRICT"):
			p.i++
			b.t.Strict = true
		default:
			return p.syntaxf("unknown table option")
		}
		if !p.acceptOp(",") {
			return p.end()
		}
	}
}

// ColumnIndex returns the index of the column called name (ASCII case
// ignored, as SQLite does), or -1.
func (t *Table) ColumnIndex(name string) int {
	for i := range t.Columns {
		if eqFold(t.Columns[i].Name, name) {
			return i
		}
	}
	return -1
}

// quoteName renders a name for error messages.
func quoteName(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// StrictAccepts reports whether a STRICT column of declared type typ (in
// upper case) accepts a non-NULL value of storage class k, as SQLite's
// inserts and integrity_check do (OP_TypeCheck, OP_IsType): exactly its
// type, but integers in a REAL column too (a record stores a whole REAL as
// an integer); ANY accepts every class.
func StrictAccepts(typ string, k format.Kind) bool {
	switch typ {
	case "INT", "INTEGER":
		return k == format.KindInt
	case "REAL":
		return k == format.KindFloat || k == format.KindInt
	case "TEXT":
		return k == format.KindText
	case "BLOB":
		return k == format.KindBlob
	}
	return true // ANY
}
