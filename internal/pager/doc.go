// Package pager gives the b-tree layer the pages of one consistent snapshot
// of a database: the main file mapped read-only (MAP_SHARED, never written
// through) and, for pages whose latest committed version is in the
// write-ahead log, that log's frames, mapped as well. A page is a sub-slice
// of a mapping: reading copies nothing and allocates nothing.
//
// Rules the read side keeps:
//
//  1. Opening validates the database header as sqlite3 does (magic, page
//     size, payload fractions, usable size, read version, text encoding) and
//     returns errors wrapping ErrCorrupt or ErrUnsupported.
//  2. A non-empty `-wal` beside the file is recovered as sqlite3 recovers
//     it: the valid prefix up to the last commit frame. The database size is
//     that commit frame's size; otherwise the header's size when valid, else
//     the file size divided by the page size.
//  3. A header size larger than the pages that exist is corruption, as it
//     is for sqlite3; pages beyond the header's size are ignored.
//  4. A snapshot sees the pages as of the commit it started at, whatever is
//     appended to the log later. Mappings are retired only at Close.
//  5. Reading never writes to the database or the log.
//  6. Page numbers outside 1..size are corruption errors naming the page.
package pager
