// Package btree reads and writes SQLite b-trees over pages handed out by the
// pager as []byte: cursors over table b-trees (rowid keys, rows only in
// leaves) and index b-trees (record keys, entries in interior cells too),
// seeks, overflow chains and page walks; and, through a Writable (a write
// transaction's pages), inserts, deletes, balancing and tree creation and
// removal.
//
// Nothing is decoded into structures: a cursor keeps, per level, a checked
// view of the page (format.Page) and a cell index, in a fixed-size stack, so
// moving a cursor allocates nothing. Payloads that fit on their page are
// returned as slices of it; a payload that spills onto overflow pages is
// assembled into a new slice.
//
// Point lookups by rowid (find.go, leafdir.go): FindRowid searches from the
// root with interpolated probes; FindRowidIn finds the leaf in a LeafDir,
// the bottom of the tree's interior flattened into an array once for a
// snapshot whose pages cannot change, so that the leaf's trip to memory
// starts at once.
//
// Scans (scan.go): a Scan reads a leaf's cells in batches, and a read
// cursor (UseRuns) in runs of a few cells; both ask the CPU for the next
// leaf's cache lines as they go, so that it has arrived when the scan gets
// there. The request is a prefetch instruction (prefetch_amd64.s,
// prefetch_arm64.s: this package's only assembly, a hint that reads
// nothing and cannot fault); elsewhere, or built with the purego tag,
// plain loads stand in for it (prefetch_other.go).
//
// Writing (writer.go, balance.go, overflow.go): a Writer descends with the
// same searches as the cursor, encodes a new cell straight into the page
// when it fits (O(cell + pointer shift), no page rebuild), and otherwise
// balances: pages split, merge and redistribute with a sibling so that
// every page stays within capacity, no page but a root leaf is empty, all
// leaves stay at one depth and the root keeps its page number. Payloads
// larger than a page's local maximum spill onto overflow chains exactly as
// SQLite lays them out, and deleting or replacing an entry frees its chain.
// The files it leaves pass sqlite3's PRAGMA integrity_check. The entry
// points:
//
//	CreateTree(w, table)                      new empty tree, returns its root
//	TableInsert(w, root, rowid, record)       insert or overwrite a row
//	TableDelete(w, root, rowid)               delete a row
//	TableMaxRowid(src, root)                  the largest rowid, for the next one
//	IndexInsert(w, root, k, nKey, key)        insert, or replace the entry equal on nKey fields
//	IndexDelete(w, root, k, nKey, key)        delete the entry equal on nKey fields
//	ClearTree(w, root, freeRoot)              free every page (DROP, DELETE without WHERE)
//
// each also a method of Writer, which holds the scratch space; after warming
// up, inserts and deletes allocate nothing.
//
// Malformed trees are reported, never followed forever: a descent deeper
// than MaxDepth (a cycle), a child of the wrong tree kind, a page number
// outside the database, or an overflow chain shorter than its payload says
// are errors wrapping format.ErrCorrupt that name the page. A write that
// fails may leave the tree half changed: the transaction must be rolled
// back.
package btree
