// Package wal reads and writes SQLite's write-ahead log, the `<db>-wal`
// file beside a database, in exactly the format sqlite3 uses, so that
// either program recovers what the other committed. It owns the file: the
// codec (wal.go), recovery (log.go), the frame index (index.go), and the
// open file (file.go) with its writer (writer.go), which appends, syncs,
// spoils and restarts it through package vfs. When to commit, checkpoint
// and restart is its owner's (the pager's) call.
//
// The file is a 32-byte header followed by frames, each a 24-byte frame
// header and one page image. All fields are big-endian uint32.
//
// WAL header:
//
//	OFF FIELD
//	  0 magic: 0x377f0682 (checksum words little-endian) or 0x377f0683 (big-endian)
//	  4 format version, 3007000
//	  8 page size
//	 12 checkpoint sequence number
//	 16 salt-1 (incremented on each restart)
//	 20 salt-2 (random on each restart)
//	 24 checksum-1 over bytes 0..23
//	 28 checksum-2
//
// Frame header:
//
//	OFF FIELD
//	  0 page number (0 is invalid)
//	  4 commit marker: database size in pages after the commit, 0 otherwise
//	  8 salt-1, copied from the WAL header
//	 12 salt-2
//	 16 checksum-1, cumulative over all frames before it
//	 20 checksum-2
//
// Validity rules, as sqlite3 applies them on recovery:
//
//  1. A WAL shorter than the header, with a bad magic, an invalid page size
//     or a header checksum that does not match is empty.
//  2. A format version other than 3007000 is an error, not an empty log.
//  3. Frames are read from offset 32 while a whole frame remains; the first
//     frame whose salts differ from the header's, whose page number is 0 or
//     whose checksum is not the running checksum ends the log.
//  4. The committed log ends at the last valid frame with a nonzero commit
//     marker; frames after it belong to an unfinished transaction.
//
// The checksum runs over pairs of 32-bit words (x0, x1), read in the byte
// order the magic names:  s0 += x0 + s1;  s1 += x1 + s0.  The header's runs
// over its first 24 bytes from (0, 0); each frame's continues from the
// previous frame's (the header's for the first) over the frame header's
// first 8 bytes and then the page.
//
// Rules the writer keeps (writer.go), so that recovery, pagoda's or
// sqlite3's, finds exactly the transactions whose commit succeeded:
//
//  5. One writer appends, the owner's. A transaction's frames follow the
//     last commit, from frame MaxFrame+1, each with the header's salts and
//     a checksum that continues the chain from the last commit's (the
//     header's after a restart) through the transaction's earlier frames
//     (Append). Its last frame is the commit frame, which carries the
//     database size in pages.
//  6. Frames are written frameBatch to a system call. A transaction may
//     write frames before its commit frame (Flush: the owner spills pages
//     it cannot keep in memory); they are mapped, so that the writer reads
//     them back (Frame), and no reader or recovery sees them before the
//     commit frame (rule 4). A page spilled again is written over its
//     frame (Overwrite), not appended, so a transaction writes a page's
//     frame once; the checksums from the first frame written over on are
//     computed again, from the mapped frames, before the commit point
//     (Commit), as SQLite's walRewriteChecksums does. Until then those
//     frames fail their checksums, as a transaction's frames may. While
//     the owner appends a commit's frames (WriteBack), each batch written
//     is handed to the system to write back (vfs.StartWriteback), so that
//     the device writes it while the next are encoded and the commit's
//     sync waits for less; spilled frames are not, as they may be written
//     again before the commit.
//  7. Commit writes the frames still batched and maps them, then, when the
//     owner asks (its SyncFull), syncs the WAL: that sync is the commit
//     point, and nothing after it fails. The first sync of a File syncs the
//     WAL's directory too. Only then are the frames indexed, and Publish,
//     under the owner's lock, moves MaxFrame to the commit frame, so that
//     readers see the commit whole together with the owner's own view of
//     it (the database size).
//  8. Rollback forgets the frames appended since the last commit; the next
//     transaction writes its own over them from the same frame, and its
//     checksum chain leaves any stale frame after its commit frame invalid.
//  9. A commit that fails is spoiled (Spoil): the header of its first frame
//     is zeroed and synced, and a frame with page number 0 ends recovery
//     (rule 3), so the transaction never reappears, even if its frames and
//     commit frame reached the disk before the sync failed. If spoiling
//     fails too, the transaction may be valid past the last commit: the
//     next commit writes over it (rule 8), and RetrySpoil, which the owner
//     calls at Close, tries again until then.
//  10. Before a checkpoint copies frames into the database file, they must
//     be durable (SyncCommitted): the WAL is synced unless every commit of
//     this File synced it; frames found at Open, or committed without a
//     sync, count as not durable.
//  11. A restart (Restart) starts the log over: the header of the next
//     generation (checkpoint sequence and salt-1 advanced, salt-2 random) is
//     written at offset 0 and, when old frames follow it, synced before any
//     frame is written over them; else a crash could keep a new frame and
//     the old header, which would validate old frames up to it (SQLite's
//     ticket ff5be73dee). The owner restarts only with no frame pending, and
//     only a log that is not valid or whose every frame is in the database
//     file (Backfilled) while no reader reads it.
//  12. Readers read MaxFrame, the mapping (Data) and Backfilled under the
//     owner's lock (Options.Lock), which the File takes while it changes
//     them (growing the mapping, restarting, SetBackfilled), and which the
//     owner holds for Publish. A growing mapping is never unmapped under a
//     reader (vfs.Mapping). The frame index needs no lock: a reader never
//     looks past its MaxFrame.
package wal
