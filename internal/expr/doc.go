// Package expr evaluates SQL expressions as SQLite 3.54 evaluates them,
// where a storage engine meets them without running SQL: CHECK
// constraints and the WHERE clauses of partial indexes (which writes must
// respect and DB.Check verifies), the DEFAULTs that rows older than ALTER
// TABLE ADD COLUMN read, VIRTUAL generated columns (which SQLite computes
// on every read), and the affinity and comparison rules under them.
//
// It evaluates the trees schema.ParseExpr builds, in two subsets:
//
//   - CHECK constraints and partial indexes (Checks, Where): comparisons,
//     IS, IN, BETWEEN, LIKE, AND, OR, NOT, + - * / % ||, COLLATE,
//     literals, stored columns, and length, typeof, lower, upper,
//     coalesce, ifnull and json_valid. A row for which a CHECK constraint
//     is false (0) fails it, NULL passes; a partial index holds the rows
//     for which its clause is true (not NULL). A table with any other
//     CHECK or partial index is refused by writes (the error wraps
//     schema.ErrUnsupported).
//   - VIRTUAL generated columns (Table.Virtual): the above, and CAST,
//     CASE, iif, GLOB, TRUE/FALSE, bit operators, -> and ->>, other
//     VIRTUAL columns, and the functions of func.go, json.go, date.go and
//     printf.go.
//
// Values are format.Value; a row's values are those OP_Column gives
// (Layout.Column): the rowid alias holds the rowid, REAL columns read
// integers as REALs, UTF-16 text reads as UTF-8.
//
// The files, by concept:
//
//	compile.go     schema.Expr to a tree of cnodes: columns resolved, literals decoded, collations chosen
//	eval.go        the evaluator: operands with affinity, three-valued logic, arithmetic, comparison
//	row.go         the row an evaluation reads: values to be written, or a stored Row
//	constraint.go  CHECK constraints (Checks) and partial indexes (Where)
//	table.go       a table's rows as SQLite reads them: Layout, DEFAULTs, Table
//	generated.go   VIRTUAL generated columns
//	affinity.go    column affinity, comparison affinity, numeric text
//	default.go     DEFAULT clauses as valueFromExpr reads them
//	func.go        the scalar functions (abs, round, substr, trim, hex, ...)
//	like.go        LIKE and GLOB
//	json.go        json_valid, json_extract, json_type, json_array_length, -> and ->>
//	date.go        date, time, datetime, julianday, unixepoch, timediff: parsing and modifiers
//	strftime.go    the date functions' output: strftime and the fixed formats
//	printf.go      printf, format and quote
//	realtext.go    REAL to TEXT, as sqlite3FpDecode renders it
//
// The oracle of every rule is SQLite itself (modernc.org/sqlite in the
// tests): where SQLite versions differ, expr follows 3.54.
package expr
