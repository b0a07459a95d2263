package schema

import "errors"

// Sentinel errors. Every error returned by this package wraps exactly one of
// them; callers translate them into the engine's own errors.
var (
	// ErrSyntax: the text is not a statement sqlite3 3.40 would accept.
	ErrSyntax = errors.New("syntax error")
	// ErrUnsupported: valid SQL that this package cannot represent (virtual
	// tables, CREATE TABLE ... AS SELECT, unknown collations, ...).
	ErrUnsupported = errors.New("unsupported")
	// ErrInvalid: the rows of sqlite_schema do not fit together (an index on
	// an unknown table or column, an orphan autoindex, duplicate names).
	ErrInvalid = errors.New("invalid schema")
)
