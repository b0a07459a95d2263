// Package vfs is the file layer under the pager: the few operations it
// performs on the database file, its WAL and their directory, behind the
// interfaces FS and File, so that tests can put a fault-injecting layer
// (Fault) where the operating system (OS, the default) normally is.
//
// The operations are those of the pager and no more: open or create,
// ReadAt, WriteAt, Sync (data and size: fdatasync(2) on Linux), a hint to
// start writing back (StartWriteback: sync_file_range(2) on Linux), Truncate,
// Size, Close, Remove, SyncDir (fsync of a directory, which makes file
// creation and removal durable), Map and Unmap (a read-only shared mapping
// of a file: mmap(2) on unix, a copy elsewhere, see MapCopies), MapShared (a
// writable one, the shared memory of sqlite3's -shm file: unix only), Lock
// and Unlock, and LockRange and UnlockRange (the -shm file's lock bytes). A
// Mapping (mapping.go) keeps the mapping of a file that grows, retiring,
// never unmapping, what readers may still hold.
//
// # Locks
//
// File.Lock takes SQLite's own locks, on the bytes sqlite3's unix VFS uses,
// so that pagoda and sqlite3 exclude each other exactly as two sqlite3
// processes do. The lock bytes lie in the page that holds file offset
// 0x40000000 (1 GiB), which SQLite never uses for data:
//
//	OFFSET              SIZE  NAME           HELD AS
//	0x40000000 (1 GiB)     1  PENDING_BYTE   read while taking SHARED; write from PENDING on
//	0x40000001             1  RESERVED_BYTE  write from RESERVED on (one writer)
//	0x40000002           510  SHARED range   read for SHARED, write for EXCLUSIVE
//
// The levels are sqlite3's, taken as its unixLock takes them (os_unix.c):
//
//   - LockShared (SHARED): a read lock on PENDING_BYTE (which fails while a
//     writer holds or waits for EXCLUSIVE), a read lock on the SHARED
//     range, then the PENDING_BYTE lock is dropped, so that no reader slips
//     in while a writer waits on PENDING.
//   - LockReserved (RESERVED), from SHARED: a write lock on RESERVED_BYTE.
//     One connection at a time intends to write; readers go on.
//   - LockPending (PENDING), from SHARED or RESERVED: a write lock on
//     PENDING_BYTE. No new reader; the holder waits for the readers to go.
//   - LockExclusive (EXCLUSIVE): PENDING, then a write lock on the whole
//     SHARED range. From SHARED it is taken without RESERVED, as sqlite3
//     takes it to roll back a hot journal: a reader that finds RESERVED
//     held takes the journal for a writer's, not for one to roll back.
//
// While one handle holds EXCLUSIVE, sqlite3 can neither read (its SHARED
// needs a read lock on PENDING_BYTE) nor write, and fails with
// SQLITE_BUSY, "database is locked"; this is what sqlite3 itself holds in
// PRAGMA locking_mode=EXCLUSIVE. A lock held elsewhere makes Lock fail at
// once with an error wrapping ErrLocked, leaving the level the handle had
// (a failed EXCLUSIVE from PENDING keeps PENDING); waiting is the caller's
// business.
//
// On Linux the locks are open-file-description locks (F_OFD_SETLK): they
// belong to the open file, not to the process, so two handles of one
// process exclude each other, and closing some other descriptor of the file
// does not drop them. They conflict with the classic POSIX fcntl locks that
// sqlite3 (and modernc.org/sqlite) take. On other unix systems the locks
// are classic POSIX fcntl locks (F_SETLK), with POSIX's caveats: they
// belong to the process, so two handles in one process do not exclude each
// other, and closing any descriptor of the file releases them all. On
// systems that are not unix, Lock does nothing.
//
// # Faults and crashes
//
// Fault wraps an FS, counts every operation, and can make operation k fail:
// as a crash (k and everything after fail with ErrCrashed), once (k fails
// with ErrInjected, the rest work), or forever (every write, sync, truncate,
// creation, removal and directory sync from k on fails with ErrInjected).
// It models what stable storage holds; Crash then rewrites the real files
// to a state that a power loss could have left. The model:
//
//   - File contents. Each file has a durable image, its bytes as of its
//     last successful Sync, and the writes and truncations made since, in
//     order. A file that existed before the Fault first saw it is durable
//     as it was found. A Sync that fails makes nothing durable.
//   - Names. Creating or removing a file changes the directory; the change
//     is durable once SyncDir of that directory succeeds. Until then a
//     crash may undo it: a new file disappears, a removed one comes back
//     with its durable content.
//   - At a crash (CrashMode): CrashDrop loses every change not made
//     durable; CrashPrefix keeps, per file, a random prefix of the pending
//     writes; CrashTorn keeps a random prefix and then a random subset of
//     the 512-byte sectors of the next write (a torn write); CrashReorder
//     keeps a random subset of the sectors of every pending write, in any
//     combination, as a disk cache that reorders writes may. In every mode
//     but CrashDrop each pending directory change is kept or undone at
//     random. The choices come from a seed: a crash is replayed exactly.
//   - Crash may be called again, with another mode or seed, for another
//     state the same power loss could have left; Revive instead ends a
//     crash of the process alone (the files stay as they are, what was not
//     durable stays so) so that another "process" can go on. SkipSync
//     keeps syncs from reaching the real disk: the model alone decides
//     what is durable, and tests run faster.
//
// Reads through a mapping are not operations (they are memory accesses);
// Close, Unmap and Unlock always release the real resources and are not
// counted, so that a test can close a crashed handle.
package vfs
