// Package schema knows pagoda's catalog: the rows of sqlite_schema and the
// CREATE TABLE / CREATE INDEX text stored in them.
//
// A pagoda file is a SQLite 3 database, and sqlite3 re-parses every
// sqlite_schema.sql text each time it opens the file. This package parses
// that text well enough to know what the storage layer must know to read and
// write records that sqlite3 accepts:
//
//   - the columns of a table, their declared types and type affinities
//     (sqlite-format.md §4.2), collations (§7.1), NOT NULL, DEFAULT text,
//     generated columns;
//   - the INTEGER PRIMARY KEY rowid alias (§4.1), WITHOUT ROWID primary keys
//     and the order of the fields in each tree's records (§6);
//   - the UNIQUE and PRIMARY KEY constraints in the order that numbers the
//     sqlite_autoindex_<table>_<N> rows (§6);
//   - the terms of each index: column or expression, collation, ASC/DESC.
//
// It does not evaluate expressions (CHECK, DEFAULT (expr), generated columns,
// partial-index WHERE clauses, expression indexes): it only skips them and
// keeps their text.
//
// # What the package accepts
//
// The parsers follow the grammar of SQLite 3.40 (src/parse.y) for CREATE
// TABLE and CREATE INDEX. Facts checked against sqlite3 3.40.1:
//
//   - Names may be bare, "double-quoted", [bracketed], `backticked` or
//     'single-quoted'; bare keywords that SQLite lets fall back to an
//     identifier (KEY, DESC, REPLACE, ...) are names too.
//   - The declared type is the source text of the type words and their
//     optional "(n)" or "(n, m)", with a trailing "GENERATED ALWAYS" removed
//     and quotes removed exactly as sqlite3 removes them (`x [a]b` has type
//     "a]").
//   - A column is the rowid alias when it is the only PRIMARY KEY column, its
//     declared type is INTEGER (any case, also quoted: `"INTEGER"`, but not
//     "INTEGER(5)"), the table has a rowid, and the key is not a column
//     constraint written "PRIMARY KEY DESC". A table constraint
//     "PRIMARY KEY(x DESC)" still makes x the alias.
//   - Two UNIQUE/PRIMARY KEY constraints on the same columns with the same
//     collations (sort order does not matter) make one index: the second gets
//     no sqlite_autoindex number. In a WITHOUT ROWID table an INTEGER PRIMARY
//     KEY is numbered after every other constraint.
//
// Every error wraps ErrSyntax (sqlite3 would reject the text), ErrUnsupported
// (valid SQL this package cannot represent, such as a virtual table) or
// ErrInvalid (the rows of sqlite_schema do
// not fit together), and says which object and which byte offset.
package schema
