// Package wal reads and (later) writes SQLite's write-ahead log, the
// `<db>-wal` file beside a database, in exactly the format sqlite3 uses, so
// that either program recovers what the other committed.
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
package wal
