// Package pager gives the b-tree layer the pages of one consistent snapshot
// of a database: the main file mapped read-only (MAP_SHARED, never written
// through) and, for pages whose latest committed version is in the
// write-ahead log, that log's frames, mapped as well. A page is a sub-slice
// of a mapping: reading copies nothing and allocates nothing.
//
// Every file operation goes through package vfs (Options.FS, the operating
// system's by default), which tests replace with a fault-injecting layer;
// and the pager holds SQLite's file lock on the database from Open to
// Close: EXCLUSIVE to write, SHARED to read only (lock.go). The WAL file is
// package wal's (wal.File: appending, syncing, spoiling, restarting,
// mapping and indexing its frames, after its rules 5 to 12); the pager
// decides when to commit, checkpoint and restart it.
//
// Rules the read side keeps:
//
//  1. Opening validates the database header as sqlite3 does (magic, page
//     size, payload fractions, usable size, read version, text encoding) and
//     returns errors wrapping ErrCorrupt or ErrUnsupported.
//  2. A non-empty `-wal` beside the file is recovered as sqlite3 recovers
//     it: the valid prefix up to the last commit frame. The database size is
//     the header's (page 1 as of that commit) when valid, as SQLite's b-tree
//     layer reads it, which may not exceed the commit frame's size; with no
//     valid header it is the commit frame's size, which may not exceed the
//     pages the file and the WAL hold. Without a WAL it is the header's
//     size when valid, else the file size divided by the page size.
//  3. A header size larger than the pages that exist is corruption, as it
//     is for sqlite3; pages beyond the header's size are ignored.
//  4. A snapshot sees the pages as of the commit it started at, whatever is
//     appended to the log later. Mappings are retired only at Close.
//  5. Reading never writes to the database or the log.
//  6. Page numbers outside 1..size are corruption errors naming the page.
//  7. A hot rollback journal (a `-journal` that sqlite3 left mid-transaction)
//     is rolled back before anything is read, as sqlite3 does: in the file
//     by a writable pager; by a read-only one, in what it reads only, the
//     journal's pages standing over the file's (journal.go).
//
// Rules the write side keeps (writetx.go, freelist.go, checkpoint.go):
//
//  8. One write transaction at a time (BeginWrite waits). It copies a page
//     into a private buffer the first time it changes it; mappings are
//     never written through.
//  9. A new database is created in WAL mode: page 1 is written to the main
//     file and synced before any WAL exists (sqlite3 deletes a WAL beside
//     an empty file).
//  10. Commit appends the changed pages to the WAL in page order, the last
//     one a commit frame carrying the page count, then syncs the WAL once
//     (SyncFull): that sync is the commit point, and nothing after it can
//     fail (wal rules 5 and 7). Only after it are the frames indexed and
//     visible to new snapshots, together with the new size (wal.File's
//     Publish, under the pager's mu). A failed commit is spoiled (wal rule
//     9): recovery never replays it even if its frames reached the disk;
//     if spoiling fails too, the next commit writes over them and Close
//     tries again.
//  11. A transaction whose changed pages exceed the cache budget spills them
//     (Settle, between b-tree operations) as non-commit frames after the
//     last commit, and reads them back from the WAL (wal rule 6); rollback
//     abandons them and the next commit overwrites them (wal rule 8). New
//     pages past the committed end go straight into the database file
//     instead (garbage past the recorded size until the commit, which syncs
//     the file before the WAL), when the file's header records its size and
//     the sync mode is Full or Off.
//  12. Allocation takes a freelist leaf of the first trunk, else the trunk,
//     else appends a page, skipping the lock-byte page. Freeing appends a
//     leaf to the first trunk while it holds fewer than U/4-8, else makes
//     the page the new first trunk (format/freelist.go draws the list). Page 1 keeps the freelist head and
//     count, the page count, and change counter == version-valid-for.
//  13. A checkpoint first makes the WAL's committed frames durable (wal
//     rule 10), then copies, for each page, its newest frame at or before
//     the oldest live snapshot's mark into the database file, then syncs
//     it. Snapshots taken once every frame is copied read the file alone,
//     and the WAL restarts (wal rule 11: new salts, frames from the start)
//     only when no snapshot reads it. Close checkpoints and removes the
//     WAL when this process wrote to the database.
//
// The pager is the one package that uses unsafe: to align its huge-page
// arenas (arena_linux.go), and to view a page's bytes as a string and back
// (view.go), which lets a Record fit the four words Go keeps in registers.
package pager
