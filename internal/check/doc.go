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
//	                 types valid (format.CheckRecord: 10 and 11, which
//	                 sqlite3 reads as NULL, too), and the fields' bodies
//	                 exactly filling the payload.
//	row values       NOT NULL columns hold no NULL; in STRICT tables each
//	  (row.go)       column holds NULL or a value of its type (REAL:
//	                 integers too; ANY: anything), "non-INTEGER value in
//	                 t.a" as sqlite3 says it; a row stored before ALTER
//	                 TABLE ADD COLUMN taking the column's DEFAULT
//	                 (Options.Default). CHECK constraints (Options.Check)
//	                 with the index entries.
//	key order        rowids strictly increasing over a whole table tree and
//	  (walk.go)      within the bounds of the separators above them; index
//	                 entries (interior cells included) strictly increasing by
//	                 format.CompareRecords under the index's KeyInfo, the
//	                 rowid or primary-key tail included; WITHOUT ROWID rows
//	                 in primary-key order; no duplicate non-NULL key in a
//	                 UNIQUE index.
//	freelist         trunk chain and leaves in range, at most
//	  (freelist.go)  pager.MaxTrunkLeavesRead leaves a trunk, and as many
//	                 pages as header[36] says.
//	index entries    every row of a table has exactly its entry in each of
//	  (index.go)     the table's indexes (automatic ones and those of WITHOUT
//	                 ROWID tables included), and no index has other entries.
//	schema           rows that do not fit together (an orphan automatic
//	  (catalog.go)   index, an index on a missing table, a root page out of
//	                 range).
//
// Things pagoda cannot evaluate are skipped by the index-entry check, not
// reported: expression and partial indexes, indexes on VIRTUAL generated
// columns, virtual tables, tables whose SQL pagoda does not parse, and
// every index of a UTF-16 database (whose text order pagoda does not
// implement; key order inside such indexes is not checked either). Their
// pages are still walked and accounted for.
//
// In an auto-vacuum file, every used page's pointer-map entry must give
// the use and the parent the walk found (b-tree root, page below a root,
// first or later overflow page, free page), and the header's largest root
// page (offset 52) must be the largest root, as sqlite3's integrity_check
// has them.
//
// Not checked: the storage classes of the columns of tables that are not
// STRICT against their affinities (sqlite3 3.40 reports "NUMERIC value in
// t.x" for a number in a TEXT column, "TEXT value in t.n" for a numeric
// text in an INT one), VIRTUAL generated columns (pagoda does not compute
// them), and a column's type in the rows that lack it when its DEFAULT is
// unknown (Options.Default nil).
//
// Unlike sqlite3 3.40, whose integrity_check skips the freelist and the
// unused-page check in a database that has a view, Run always checks them.
package check
