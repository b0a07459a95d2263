// Package fsys is a filesystem in one file: an io/fs view, with writes, of
// the SQLite Archive table ("sqlar") of a pagoda database, the format that
// `sqlite3 -A` reads and writes.
//
//	CREATE TABLE sqlar(
//	  name TEXT PRIMARY KEY,  -- path relative to the root, '/'-separated
//	  mode INT,               -- st_mode: type bits and permissions
//	  mtime INT,              -- seconds since 1970 UTC
//	  sz INT,                 -- original size; -1 for symbolic links
//	  data BLOB               -- zlib stream, or raw when sz == length(data)
//	)
//
// An [FS] implements fs.FS, fs.ReadDirFS, fs.ReadFileFS, fs.StatFS,
// fs.SubFS, fs.GlobFS and fs.ReadLinkFS. Each read sees the latest commit,
// in a read transaction of its own, or in the caller's transaction for an
// FS returned by [FS.In]. The FS keeps its read transactions between calls
// and renews them ([pagoda.Tx.Renew]): while nothing is committed a call
// costs what it would in one long transaction, and a walk's next listing
// seeks from where the last one left off. A directory listing is one
// ordered range of the name index, skipping each subdirectory's subtree
// with one seek; it never scans the table. When a listing follows its
// parent's in the same snapshot, as in fs.WalkDir, it reads its
// subdirectories' subtrees instead of skipping them and keeps their
// listings (a few thousand entries at most) for the walk's next calls, so
// a walk reads each name once. Archives that pagoda creates carry a second index,
// sqlar_listing(name, mode, mtime, sz), that lists and stats without touching
// the table; sqlite3 maintains it like any index, and archives without it
// (those made by sqlite3) are read through the primary key's index, each
// entry's mode, mtime and sz from the head of its row (pagoda.Table.Head:
// the leaf, and at most the overflow page or two a long name spills
// onto), never from its data or the data's overflow pages.
// An archive in a UTF-16 database (PRAGMA encoding) is refused, reads and
// writes alike, with an error wrapping pagoda.ErrUnsupported.
//
// Names are io/fs names, which never start with "./"; an archive that
// `sqlite3 -Ac .` made, whose rows are ".", "./index.html", "./sub", ...,
// reads as index.html and sub, and what is written into it is stored as
// "./"+name, so that sqlite3 -t and -x keep seeing one tree. names.go has
// the rules, a mixed archive's included. [New]'s FS reads a database
// without a sqlar table as an empty directory and creates the table at
// its first write; [Open] and [FS.Exists] report it as [ErrNoArchive].
//
// An open regular file keeps its snapshot until Close and reads its data in
// place from the database pages: an uncompressed file is never copied
// except into the caller's buffer. Close every file: DB.Close waits for
// the snapshots they hold. A compressed file of up to 1 MiB is inflated
// once, at its first read, into a pooled buffer that Close gives back, in
// one pass over its stored bytes (internal/inflate, which takes about
// 0.6x compress/zlib's time); ReadFile inflates the same way straight into
// the slice it returns. A larger file is inflated as it is read, through
// a pooled inflater of
// about 50 KiB: reading a 1 GiB file stored in 1 MB costs that much
// memory, not a GiB, and reading it before the place reached inflates
// again from the start.
//
// sz is a claim that the data must bear out (inflate.go has the rules). A
// file whose compressed data inflates to more or fewer bytes than its sz,
// or is damaged, or whose sz is negative, is an error wrapping
// pagoda.ErrCorrupt, from Open or from the read that meets the damage:
// reads never yield a byte past sz, nor the last byte of a damaged file,
// and every read after the error fails the same way. ReadFile allocates sz
// at once only when the stored bytes make it plausible (up to 1 MiB, or up
// to 4 times the stored length), and otherwise grows as the data inflates.
// Stat reports sz as it is stored (a negative one as 0); a directory's sz
// is ignored, and a symbolic link's must be -1 (as sqlite3 stores it) or
// its target's length.
//
// Symbolic links are stored as sqlite3 stores them (mode 0120777, sz -1,
// the target as TEXT) and followed by Open, Stat, ReadFile and ReadDir,
// within the archive only: a link that leaves it, dangles or loops does
// not exist. sqlite3 3.40's -x cannot extract link rows.
//
// Errors are *fs.PathError values wrapping io/fs's errors (fs.ErrNotExist,
// fs.ErrExist, fs.ErrInvalid, fs.ErrClosed), this package's ErrIsDir,
// ErrNotDir and ErrNotEmpty, or pagoda's (ErrCorrupt for a damaged
// compressed entry, ErrReadOnly, ...). A failed write changes nothing.
//
// Writes (WriteFile, Create, Mkdir, MkdirAll, Remove, RemoveAll, Rename,
// Chmod, Chtimes, Symlink, CopyFS) are each one atomic transaction, or part
// of the caller's write transaction under [FS.In]. Modes, mtimes and
// directory rows follow sqlite3's conventions: directories have rows of
// their own (sz 0, data NULL), file modes carry the type bits (0100644),
// mtimes are whole seconds.
package fsys
