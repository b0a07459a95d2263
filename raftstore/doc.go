// Package raftstore keeps hashicorp/raft's log and stable store in a
// pagoda database: one SQLite file that sqlite3 opens.
//
//	store, err := raftstore.Open("raft.db", nil)
//	...
//	r, err := raft.NewRaft(conf, fsm, store, store, snaps, transport)
//
// *Store is a raft.LogStore, a raft.StableStore and a
// raft.MonotonicLogStore. The file holds two tables:
//
//	CREATE TABLE raft_log(idx INTEGER PRIMARY KEY, term INTEGER NOT NULL,
//	  type INTEGER NOT NULL, data BLOB, extensions BLOB, appended_at INTEGER)
//	CREATE TABLE "raft_stable"(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID
//
// raft_stable is a pagoda bucket. So sqlite3 shows the log and the votes:
//
//	sqlite3 raft.db 'SELECT idx, term, type, length(data) FROM raft_log'
//	sqlite3 raft.db 'SELECT CAST(key AS TEXT), hex(value) FROM raft_stable'
//
// # Encoding
//
//  1. A log entry is one row of raft_log, its rowid the entry's index
//     (at most 1<<63-1). Term is stored as int64(Term); Type as an integer.
//  2. Data and Extensions are BLOBs; nil is NULL, so that nil and an
//     empty slice both come back as they went in.
//  3. AppendedAt is NULL for the zero time, else its Unix time in
//     nanoseconds; a time outside the range of int64 nanoseconds (the
//     years 1678 to 2262) is TEXT in RFC 3339 with nanoseconds.
//  4. A stable value is the bucket's value; SetUint64 stores 8 bytes,
//     big-endian, as raft-boltdb does.
//
// # Durability and space
//
//  1. StoreLogs, DeleteRange, Set and SetUint64 are one pagoda write
//     transaction each: one commit, one sync of the WAL (SyncFull, unless
//     Options.DB says otherwise). A batch is all there or absent after a
//     crash.
//  2. Rows deleted by DeleteRange free their pages to the file's freelist,
//     and the next appends reuse them. Deleting every entry drops and
//     creates raft_log again (raft does that after restoring a snapshot).
//  3. The file gives the space back by compaction: when, after a
//     DeleteRange, the file is at least Options.CompactMinSize and more
//     than half its pages are free, the store writes a dense copy beside
//     the file (DB.Compact), closes the database (which checkpoints and
//     removes the WAL), renames the copy over the file, syncs the
//     directory and opens it again. Its cost is that of copying the live
//     log; it happens only after at least as many pages were freed as are
//     live, so it is amortized over the deletions. Every other call waits
//     while it runs.
//  4. A crash at any point of rule 3 leaves the old file (with its WAL) or
//     the new one: the rename is the switch, and it is made only when no
//     WAL and no -shm is left beside the file (another connection, such as
//     a sqlite3 shell, still has it open: the compaction is then given up
//     until the next DeleteRange). Open removes a copy a crash left.
//
// Other connections may read the file while the store has it open (sqlite3
// reads beside it, see pagoda.Open), but must not write it.
package raftstore
