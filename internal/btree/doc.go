// Package btree reads (and, later, writes) SQLite b-trees over pages handed
// out by the pager as []byte: cursors over table b-trees (rowid keys, rows
// only in leaves) and index b-trees (record keys, entries in interior cells
// too), seeks, overflow chains and page walks.
//
// Nothing is decoded into structures: a cursor keeps, per level, a checked
// view of the page (format.Page) and a cell index, in a fixed-size stack, so
// moving a cursor allocates nothing. Payloads that fit on their page are
// returned as slices of it; a payload that spills onto overflow pages is
// assembled into a new slice.
//
// Malformed trees are reported, never followed forever: a descent deeper
// than MaxDepth (a cycle), a child of the wrong tree kind, a page number
// outside the database, or an overflow chain shorter than its payload says
// are errors wrapping format.ErrCorrupt that name the page.
package btree
