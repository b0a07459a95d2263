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
// # The -shm wal-index
//
// To share a live WAL-mode file with sqlite3 processes, a connection takes
// part in the protocol of SQLite's wal-index, the -shm file (walindex.go
// draws it and implements its operations after wal.c's functions, named
// in parentheses; nothing calls them yet but tests and the read-only
// pager's read slot, shm.go). The rules each operation's caller keeps:
//
//  14. A connection holds SHARED on the database file while the -shm file
//     is open, so that no last connection removes it underneath. Opening
//     it (openWalIndex, os_unix.c's unixLockSharedMemory) takes the
//     dead-man switch DMS (byte 128) exclusively if it can: that
//     connection is the first, empties the file, and runs recovery
//     (rule 18) before any header is trusted; every connection then holds
//     DMS shared until it closes, so that none arriving later empties the
//     file it uses.
//  15. The header is read with no lock (readHdr, walIndexTryHdr): copy 0,
//     then copy 1, and only copies that agree, with isInit set and their
//     checksum, are used; else the reader reads again, and a header still
//     invalid while it holds WRITE is rebuilt by recovery
//     (walIndexReadHdr).
//  16. WRITE (byte 120), held exclusively, makes its holder the one writer:
//     only it appends entries (appendFrame, walIndexAppend), removes them
//     (truncateFrames, walCleanupHash), extends the file to a new region,
//     and writes the header (writeHdr, walIndexWriteHdr). Entries are
//     appended in frame order from the header's mxFrame on.
//  17. A commit indexes its frames first, then writes the header with the
//     new mxFrame, nPage and aFrameCksum and iChange changed (wal.c adds 1,
//     sqlite3WalFrames): copy 1, then copy 0. Readers look at entries up
//     to their snapshot's mxFrame only, so entries past the header's are
//     invisible until it is written; a rollback removes them
//     (truncateFrames back to the header's mxFrame), and a writer's first
//     append removes any that a writer who died left (walIndexAppend).
//  18. Recovery (recover, walIndexRecover) rebuilds the index and header
//     from the WAL's committed prefix, when the file is new (rule 14) or
//     the header is invalid under WRITE (rule 15). Its caller holds WRITE,
//     CKPT and RECOVER exclusively and no READ lock; it takes each READ(i)
//     of 1..4 exclusively for a moment to set that mark, and leaves alone a
//     mark whose lock another connection holds. Other connections that
//     find RECOVER locked wait for it (walTryBeginRead).
//  19. aReadMark[i] changes only while its changer holds READ(i)
//     exclusively (walTryBeginRead, walCheckpoint, walRestartHdr,
//     recovery); a reader holds READ(i) shared for its whole read
//     transaction, so the mark it reads by never changes under it.
//     nBackfill and nBackfillAttempted change only under CKPT (a
//     checkpoint, which never copies a frame past a mark in use) or under
//     WRITE with READ(1..4) exclusive (a restart, walRestartHdr); recovery
//     holds both. nBackfill never exceeds mxFrame.
//  20. findFrame (walFindFrame) reads the entries of frames in [minFrame,
//     maxFrame] only: maxFrame is the reader's header's mxFrame, minFrame
//     nBackfill+1 as the reader read it after taking its READ lock; the
//     reader holds READ(i) shared, i > 0, with aReadMark[i] <= maxFrame, so
//     no restart clears the blocks it reads. A reader holding READ(0) reads
//     the database file alone, and no frame.
//  21. Locks are tried, never waited for: one held elsewhere is ErrLocked
//     (SQLITE_BUSY), and waiting is the protocol's. A connection goes from
//     shared to exclusive, or back, through unlocked (unixShmLock), and
//     takes shared locks one byte at a time. With Linux's OFD locks each
//     open walIndex is a connection of its own, in one process too; where
//     locks belong to the process (vfs.FileLocks false) two in one process
//     do not exclude each other, and a process must keep one per database.
//  22. Closing (close) releases every lock with the file. The connection
//     that can lock the database file exclusively as it closes is the last
//     (sqlite3WalClose): it checkpoints, then removes the WAL and the -shm
//     file (close with remove).
//
// # Sharing a WAL-mode database (shared.go)
//
// A pager shares a WAL-mode database with other connections (sqlite3
// processes, other pagers) unless Options.Exclusive asks otherwise or
// locks belong to the process (vfs.FileLocks false); then rules 8 to 13
// hold as written, under EXCLUSIVE from Open to Close. Shared:
//
//  23. Open holds SHARED on the database file until Close, EXCLUSIVE only
//     while it rolls back a hot journal or writes a new file's first page
//     (lockFile, then Downgrade). It opens the -shm file (rule 14) before
//     it reads the WAL's state.
//  24. The pager's view of the WAL (its frame index, the last commit, the
//     database size) is the wal-index header's: a header that differs from
//     the one it last read or wrote is adopted (wal.File.Adopt): frames
//     after its own are added from the index's page array; a log that
//     started over elsewhere (other salts) is taken up afresh; the
//     database file's size is taken again, since another connection's
//     checkpoint grows the file and cuts it to the last commit. A header
//     whose copies differ is read again; one never written or not valid is
//     rebuilt from the WAL (rule 26). The WAL file itself is not scanned
//     (another connection may cut it meanwhile): only its header is read,
//     and a header that does not match, with the index changed since,
//     starts the attempt over. The database size adopted is the last
//     commit frame's, bounded by page 1's when that is valid, as SQLite's
//     b-tree layer takes it (lockBtree): pages past it, which a spill
//     rolled back leaves in the file and which sqlite3's commit frame
//     counts after an empty WAL, are not the database's. Page 1 is read
//     once the snapshot holds its slot (boundSize).
//  25. Every read snapshot holds a read slot for its life (walTryBeginRead):
//     READ(0) when nBackfill equals mxFrame (it reads the database file
//     alone, and no checkpoint runs meanwhile), else a READ(i) whose mark
//     is at most mxFrame, set to mxFrame when a slot can be had
//     exclusively; the header is read again once the slot is held, and a
//     change starts over. Snapshots of one pager share a slot, which goes
//     when its last reader ends, as sqlite3's does: held between read
//     transactions, it would keep another connection's FULL, RESTART and
//     TRUNCATE checkpoints waiting for as long as the pager reads. A pager
//     alone on the database (no other open file holds DMS, asked at most
//     every aloneProbe, and once in aloneDrops read transactions or by the
//     idle timer) keeps it idleSlotHold, to take it up again with no
//     system call; one that arrives meanwhile waits at most twice that.
//     A snapshot renewed with nothing committed keeps its slot, unless it
//     reads by a mark past READ(0) and a checkpoint has copied every
//     frame since: it then starts over on READ(0), as a new one would,
//     for a reader that kept its mark would keep every writer from
//     starting the WAL over (RenewSnapshot).
//  26. Recovery holds WRITE (unless this pager's writer does), CKPT and
//     RECOVER, reads the WAL file as it is, and leaves the marks of the
//     pager's own slots alone.
//  27. A write transaction holds WRITE from BeginWrite to Commit or
//     Rollback, waiting up to Options.Timeout (ErrBusy), so its snapshot
//     is the last commit of any connection. That snapshot holds no read
//     slot (rule 25 asks none of it): while WRITE is held no connection
//     commits, restarts or truncates the WAL, and no checkpoint copies a
//     frame past the last commit, which the snapshot reads from the WAL.
//     Its first frame restarts the WAL (new salts, header synced first,
//     rule 11) when nothing is committed, or when every frame was in the
//     database file as the transaction began (so it reads none from the
//     WAL) and READ(1..4) can all be had exclusively (no reader of the
//     WAL, in any connection); the index says the WAL is empty before its
//     header is rewritten, as walRestartHdr does. Its own pager's readers
//     keep off READ(1..4) meanwhile (holdRestart): their locks belong to
//     the same open file and would not stop it. Pages past the committed
//     end go straight into the database file (rule 11's direct writes)
//     only while it holds READ(0) shared, from the first such page to its
//     end: every checkpoint that copies, and so may cut the file to the
//     last commit's size, must have READ(0) exclusively. Its commit maps
//     the index regions it needs before the commit point, then indexes its
//     frames and writes the header before WRITE goes.
//  28. A checkpoint holds CKPT; it moves every free read mark behind the
//     last commit up to it (READ(i) exclusive for the moment), stops at
//     the marks it cannot, copies frames up to that point with READ(0)
//     held exclusively, and then sets nBackfill. Modes past passive wait
//     up to Options.Timeout and hold WRITE; Restart and Truncate then wait
//     for READ(1..4), and Truncate starts the WAL over (mxFrame 0,
//     salt-1 + 1) and cuts its file to 0 bytes.
//  29. The pager's own locks never stop it (the -shm file's locks are one
//     connection's): before it takes READ(i) exclusively, or restarts, it
//     checks that none of its own snapshots reads by slot i.
//  30. Close: the pager that can lock the database file exclusively is
//     the last connection (rule 22); a writable one checkpoints, removes
//     the WAL and, once its locks go, the -shm file. Any other leaves both.
//  31. A failed commit is spoiled as under rule 9; its frames lie past
//     mxFrame, where no connection reads and the next writer writes over
//     them. Only the last connection retries a spoil at Close.
//
// # Rollback-journal mode (rollback.go)
//
// A database whose header says rollback journal (bytes 18 and 19 are 1)
// is written as sqlite3 writes it in journal_mode=DELETE, and keeps its
// mode, unless Options.JournalMode asks for WAL; a new file is one with
// JournalDelete (pager.c and os_unix.c are the reference):
//
//  32. Open takes SHARED, and EXCLUSIVE for the moment it rolls back a hot
//     journal or writes a new file's first page; then it lets go. Where
//     locks belong to the process, or with Options.Exclusive, the pager
//     holds its Open lock (EXCLUSIVE, or SHARED read-only) until Close
//     instead, and rules 33 to 35 take no lock.
//  33. A snapshot holds SHARED for its life; the pager's snapshots share
//     one (a count), taken by the first and let go by the last. A
//     snapshot waits while this pager's commit holds PENDING or more, and
//     for another connection's, up to Options.Timeout (at least a
//     second): then ErrBusy. RenewSnapshot lets SHARED go and takes it
//     again, and is the same snapshot when nothing was committed.
//  34. The first snapshot, with SHARED, rolls back a hot journal (one
//     that exists, whose first byte is not zero, while nobody holds
//     RESERVED: hasHotJournal): writable, under EXCLUSIVE taken from
//     SHARED without RESERVED (so that no reader takes the journal for a
//     writer's meanwhile); read-only, it reads through it (rule 7). Then
//     it compares the header's bytes 24..40 and the file's size with what
//     it last learnt (pager.c's dbFileVers): when another connection
//     committed, the mapping covers the file again and the page count is
//     taken again, and the root reads the catalog again by the schema
//     cookie.
//  35. A write transaction holds RESERVED from BeginWrite to Commit or
//     Rollback beside its snapshot's SHARED; while another connection
//     holds RESERVED it lets its SHARED go between tries (btree.c's busy
//     loop), up to Options.Timeout: then ErrBusy. Past the cache budget
//     its pages spill into the database file (rule 41).
//  36. Commit writes the journal: a header with a random nonce, the
//     database's size at the start, sector size 512 and the page size,
//     its magic and record count zero (writeJournalHdr), then a record of
//     every page the transaction changes that existed at its start, as it
//     was (after a spill, those it has not journaled yet, rule 43). Then
//     it takes PENDING (no reader begins, in any connection, this pager's
//     included) and EXCLUSIVE once the readers there have gone, the
//     transaction's own snapshots aside, waiting up to Options.Timeout:
//     then ErrBusy, nothing is written and the journal goes.
//  37. It syncs the journal as syncJournal does: SyncFull syncs the
//     records, writes the magic and the count, syncs again; SyncNormal
//     writes them and syncs once; both sync the directory once (the new
//     journal's name, os_unix.c's DIRSYNC). SyncOff wrote a final header
//     at once (count 0xFFFFFFFF) and syncs nothing.
//  38. It writes the pages into the database file in page order, page 1
//     with the change counter and version-valid-for up by one, the page
//     count, and file format 1; makes the file the transaction's size;
//     syncs it; and deletes the journal: the commit point. SyncFull then
//     syncs the directory (as synchronous=EXTRA), so that a power loss
//     does not bring the journal back. Then the locks go to SHARED (while
//     snapshots live) or none.
//  39. A commit that fails after it may have written the database file
//     plays its journal back at once, under its EXCLUSIVE; if that fails
//     too, the journal stays, hot once the locks go, and the pager's next
//     snapshot (with none alive) rolls it back before it reads.
//  40. Checkpoint does nothing (there is no WAL) and reports no frames.
//
// Spilling in rollback-journal mode (rollbackspill.go), as pager.c's
// pagerStress and syncJournal do:
//
//  41. A write transaction whose changed pages exceed the cache budget
//     spills them (Settle): it appends to the journal a record of each
//     that existed at its start and has none yet, takes EXCLUSIVE as a
//     commit does (rule 36: ErrBusy after Options.Timeout, the database
//     file untouched), and syncs the journal as rule 37 does (the first
//     spill even with no record, so that the size to truncate to is
//     durable before the file grows). Then it starts a new segment: a
//     header at the next multiple of the 512-byte sector, with a new
//     nonce and the magic and count zero (none under SyncOff, whose one
//     segment runs to the end). Then it writes the pages into the
//     database file in page order and reads them back from there.
//     EXCLUSIVE is held to the transaction's end: the pager's snapshots,
//     and other connections' readers, wait meanwhile.
//  42. A page goes into the database file only once its record is in a
//     synced segment, and is journaled once per transaction: its record
//     is the base snapshot's page, which the file holds until then (a
//     second record, read from the file, would hold the spilled
//     version). So a crash at any point leaves a journal whose synced
//     segments restore every page the file holds changed, and truncate
//     it to its size at the start; the records after the last synced
//     header (whose zero magic ends the playback) are of pages in memory
//     only. sqlite3 rolls it back as pagoda does (TestRollbackSpill).
//  43. Commit after spills journals the pages left in memory into the
//     last segment, syncs it, and goes on as rule 38. A transaction that
//     spilled and rolls back, or whose commit fails, plays its journal
//     back at once, under its EXCLUSIVE lock (rule 39 when that fails);
//     the database mapping then ends where the file does, and the next
//     snapshot learns the file again (rule 34).
//  44. JournalDelete converts a WAL-mode database at Open, as sqlite3's
//     PRAGMA journal_mode=DELETE does (convert.go): under EXCLUSIVE,
//     which no other connection holding the file lets it have (then
//     ErrBusy after Options.Timeout), the WAL's committed frames are
//     synced and copied into the file, which is cut to the last commit's
//     size and synced; the WAL and -shm go (the directory synced); then
//     the header gets file format 1 and its counters up by one, synced.
//     A crash before the header leaves a WAL-mode database that holds
//     every commit.
//  45. A write transaction that has spilled (its changed pages outgrew
//     Options.CacheSize) keeps the pages it reads back out of the
//     process's resident set. In WAL mode it reads each page it does not
//     hold from the files (pread) into a clean copy, which Page returns
//     until Settle drops it, and which Write makes the changed page
//     without copying it. Settle drops them all before a spill (copies
//     read before it may be stale), then keeps pages the spill wrote as
//     clean copies, interior pages first, up to half the copies' limit
//     of a quarter of the cache; past that limit it drops the oldest,
//     interior pages last, down to half of it (trimClean). Settle is
//     the one place copies go: no page slice Page returned is in use
//     then. Reads through the mappings would leave
//     every page read mapped, up to the whole file, beside the cache (a
//     fault maps the page's neighbours too). In rollback-journal mode it
//     reads through the mapping and lets the mapping's pages go from the
//     resident set (madvise MADV_DONTNEED) each time it has read a third
//     of a cache's worth through it; they stay in the OS page cache, and
//     every reader of the mapping, zero-copy slices included, maps them
//     again as it touches them.
//
// The pager is the one package that uses unsafe: to align its huge-page
// arenas (arena_linux.go), to view a page's bytes as a string and back
// (view.go), which lets a Record fit the four words Go keeps in registers,
// and to view the -shm file's mapped regions as words (walindex.go), which
// its readers and writers in other processes load and store atomically.
package pager
