// Package check verifies a database snapshot the way sqlite3's
// PRAGMA integrity_check does (sqlite-format.md §11), and a little more: it
// is the engine of DB.Check and of `pagoda check`.
//
// Run walks every page once and reports every broken invariant it finds,
// each as a Problem naming the page, up to a limit (Options.MaxProblems) so
// that a wrecked file gives a readable report rather than gigabytes. It
// never stops at the first problem, never panics and never follows a
// cycle: every page is entered at most once, and trees are cut at
// btree.MaxDepth levels.
//
// What it checks, in the order it checks it:
//
//	page accounting  every page 2..N is used exactly once: a b-tree page of
//	  (check.go,     sqlite_schema (root 1) or of a table or index root, an
//	  walk.go)       overflow page, a freelist trunk or leaf; the lock-byte
//	                 page excepted. Reports "never used" and "referenced twice
//	                 (by A and B)"; page numbers outside 1..N.
//	b-tree pages     type valid for the tree (table 5/13, index 2/10); cell
//	  (walk.go,      pointers inside [contentStart, U-4]; cells inside the
//	  layout.go)     page; no byte used by two cells or freeblocks; freeblock
//	                 chain ascending, inside the content area, never two
//	                 adjacent; header byte 7 equal to the uncovered bytes; no
//	                 empty page below the root, no interior page without
//	                 cells; all leaves of a tree at one depth.
//	overflow chains  exactly format.OverflowPages pages, ending with 0.
//	  (walk.go)
//	row records      every row of every table (sqlite_schema and WITHOUT
//	  (walk.go)      ROWID tables included): header length in range, serial
//	                 types valid, and the fields' bodies exactly filling the
//	                 payload. The reserved serial types 10 and 11 read as
//	                 NULL in the rows of rowid tables, as SQLite reads them
//	                 (its integrity_check accepts them); elsewhere they are
//	                 malformed (see below). In a rowid table of a known
//	                 schema, only the fields up to its last stored column,
//	                 as SQLite decodes them: a row with more fields has the
//	                 rest unread (the body past the last one read may be
//	                 shorter or longer), a table of the rowid alias alone
//	                 none.
//	row values       as integrity_check's "Verify datatypes" (row.go, with
//	  (row.go)       its wording): NOT NULL columns hold no NULL ("NULL
//	                 value in t.a"); in STRICT tables each column holds NULL
//	                 or a value of its type (REAL: integers too; ANY:
//	                 anything), "non-INTEGER value in t.a"; in other tables
//	                 a column of TEXT affinity holds no number ("NUMERIC
//	                 value in t.a") and one of NUMERIC, INTEGER or REAL
//	                 affinity no text that NUMERIC affinity would make a
//	                 number (" 7", "1e5": "TEXT value in t.a"). The types
//	                 are those of the serial types SQLite's cursor has
//	                 parsed, so that, as in SQLite, a problem can hide the
//	                 problems of later columns of its row (row.go says
//	                 how). A row stored before ALTER TABLE ADD COLUMN takes
//	                 the column's DEFAULT (expr.Table). CHECK
//	                 constraints (expr.Checks) with the index entries.
//	key order        rowids strictly increasing over a whole table tree and
//	  (walk.go)      within the bounds of the separators above them; index
//	                 entries (interior cells included) strictly increasing by
//	                 format.CompareRecords under the index's KeyInfo, the
//	                 rowid or primary-key tail included; WITHOUT ROWID rows
//	                 in primary-key order; no duplicate non-NULL key in a
//	                 UNIQUE index.
//	freelist         trunk chain and leaves in range, at most
//	  (freelist.go)  format.MaxTrunkLeavesRead leaves a trunk, and as many
//	                 pages as header[36] says.
//	index entries    every row of a table has exactly its entry in each of
//	  (index.go)     the table's indexes (automatic ones and those of WITHOUT
//	                 ROWID tables included), and no index has other entries.
//	schema           rows that do not fit together (an orphan automatic
//	  (catalog.go)   index, an index on a missing table, a root page out of
//	                 range), and a row whose type, name or tbl_name is not
//	                 its SQL's, or whose SQL is not CREATE text
//	                 (schema.CheckEntry): SQLite refuses such a schema.
//
// Things pagoda cannot evaluate are skipped by the index-entry check, not
// reported: expression and partial indexes, indexes on VIRTUAL generated
// columns, virtual tables, tables whose SQL pagoda does not parse, and
// the keys under a collation of the application's own (schema.CollOther:
// neither their order nor the index entries, which sqlite3's
// integrity_check refuses to check at all). Their pages are still walked
// and accounted for.
//
// In an auto-vacuum file, every used page's pointer-map entry must give
// the use and the parent the walk found (b-tree root, page below a root,
// first or later overflow page, free page), and the header's largest root
// page (offset 52) must be the largest root, as sqlite3's integrity_check
// has them. A file without auto-vacuum must not have incremental vacuum
// on (offset 64).
//
// Expressions are evaluated by internal/expr, as reading and writing
// evaluate them: the DEFAULTs of columns added after a row, CHECK
// constraints, the WHERE clauses of partial indexes, and VIRTUAL generated
// columns, which are checked (NOT NULL, type) when pagoda computes them.
// A CHECK constraint that names a generated column is not evaluated.
//
// Not checked: a VIRTUAL column pagoda cannot compute (after a problem in
// a row, the columns after it are not checked either, since SQLite's
// computing it reparses the row's header), CHECK constraints and partial
// indexes outside expr's subset. The reserved serial types 10 and 11 in index
// entries, WITHOUT ROWID rows and sqlite_schema rows are reported as
// malformed records, where SQLite reads them as NULL and orders them
// (10 as NULL, 11 after the numbers and before the text: an index entry
// with 11 is "missing from index" to it): format.CompareRecords does not
// order them. pagoda's reading does as the check: NULL in the rows of
// rowid tables (format.CheckRow, format.RowFieldAt), malformed elsewhere.
//
// Where SQLite versions differ, the check follows SQLite 3.54 (modernc's),
// not the sqlite3 3.40 CLI:
//
//   - a NOT NULL column whose field's serial type is REAL or NULL: 3.54
//     reads the value (a NaN is NULL: "NULL value in t.a"; 3.40 says
//     nothing), which, after a problem in the row, reparses the header up
//     to that field and hides the problems of the columns stored after it;
//   - a rowid table whose count of stored columns, less one, is the rowid
//     alias's column index, a VIRTUAL column coming before it, as in
//     t(a, v AS (1) VIRTUAL, id INTEGER PRIMARY KEY, c): 3.54 never parses
//     the last field (c's), whose column then takes its DEFAULT's type;
//     3.40 parses every field;
//   - WITHOUT ROWID rows: 3.54 parses every field; 3.40 only up to the
//     field of the last declared column;
//   - a text with a NUL byte: 3.54's NUMERIC affinity reads it up to the
//     NUL ("5\x00x" is numeric: "TEXT value" in a numeric column); 3.40
//     reads its whole length.
//
// Unlike sqlite3 3.40, whose integrity_check skips the freelist and the
// unused-page check in a database that has a view, Run always checks them.
package check
