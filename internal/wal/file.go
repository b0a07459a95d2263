package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// Path returns the path of the write-ahead log of the database at dbPath.
func Path(dbPath string) string { return dbPath + "-wal" }

// File is an open WAL: the file, its mapping, the committed log recovered
// from it (Log) and, for a writer, the frames it appends (writer.go).
//
// Readers (the owner's snapshots) read Log's MaxFrame, Data and Backfilled
// under a lock of the owner's, Options.Lock, which the File takes while it
// changes them, except in Publish, which the owner calls holding it.
// Everything else belongs to the owner's writer: one goroutine at a time.
// The frame index (Log.Index) needs no lock: entries past a reader's
// MaxFrame are never read.
type File struct {
	fsys     vfs.FS
	path     string
	f        vfs.File
	mu       sync.Locker
	pageSize int
	noSync   bool
	m        vfs.Mapping
	log      *Log
	// backfill is the number of frames copied into the database file:
	// when it equals the log's MaxFrame the database file holds every
	// commit.
	backfill uint32
	syncs    uint64 // syncs of the file and its directory

	// The writer's (writer.go).
	batch     []byte   // frames encoded and not yet written (SetBuffer)
	batchOff  int64    // the file offset of batch[0]
	pending   []uint32 // the page of each frame appended since the last commit
	s0, s1    uint32   // the running checksum after the last pending frame
	dbSize    uint32   // the database size that the pending commit frame gives
	recksum   uint32   // the first pending frame Overwrite wrote over (0: none)
	allocated int64    // the file is known to be at least this long (preallocate)
	dirSynced bool     // the WAL's directory entry is durable
	writeback bool     // Append starts each batch's writeback (WriteBack)
	// durable says that every committed frame is known to be on stable
	// storage: synced by this File. A WAL found at Open may hold frames
	// that its writer never synced.
	durable bool
	// unspoiled is the first frame of a failed commit that Spoil could not
	// make invalid (0: none): the WAL may hold that transaction whole and
	// valid past the last commit.
	unspoiled uint32
}

// Options configure Open and Create.
type Options struct {
	// ReadOnly opens the file read-only: nothing is written.
	ReadOnly bool
	// PageSize is the database's page size.
	PageSize int
	// NoSync keeps the File from syncing anything (the owner's SyncOff).
	NoSync bool
	// Lock is the owner's lock under which readers read the log (see
	// File).
	Lock sync.Locker
	// Adopted opens the WAL of a file shared through a wal-index, whose
	// owner takes the log from the index (Adopt): Open maps and reads
	// nothing, since another connection may cut the file meanwhile, and
	// the log starts empty.
	Adopted bool
	// Perm is the permissions Create gives a new WAL file (0: 0o644); the
	// owner passes the database file's, as sqlite3 does, so that the WAL's
	// copies of pages are as private as the database.
	Perm fs.FileMode
}

// Open opens the WAL at path, maps it and recovers its committed log
// (Recover). It returns nil and no error when there is no WAL: no file, or,
// read-only, an empty one.
func Open(fsys vfs.FS, path string, opts Options) (*File, error) {
	flag := os.O_RDONLY
	if !opts.ReadOnly {
		flag = os.O_RDWR
	}
	f, err := fsys.OpenFile(path, flag, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, err
	}
	if size == 0 && opts.ReadOnly {
		f.Close()
		return nil, nil
	}
	w := newFile(fsys, path, f, opts)
	if size > int64(^uint(0)>>1) {
		return nil, errors.Join(fmt.Errorf("%w: WAL of %d bytes", format.ErrUnsupported, size), w.Close())
	}
	if size == 0 || opts.Adopted {
		return w, nil
	}
	if err := w.m.Map(f, int(size), !opts.ReadOnly); err != nil {
		return nil, errors.Join(fmt.Errorf("map %s: %w", path, err), w.Close())
	}
	if w.log, err = Recover(w.m.Bytes(), opts.PageSize); err != nil {
		return nil, errors.Join(err, w.Close())
	}
	return w, nil
}

// Create opens the WAL at path for writing, creating it. What it holds is
// not read: the log is empty, and not valid, so the first commit starts it
// over (Restart).
func Create(fsys vfs.FS, path string, opts Options) (*File, error) {
	perm := opts.Perm
	if perm == 0 {
		perm = 0o644
	}
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return nil, err
	}
	return newFile(fsys, path, f, opts), nil
}

func newFile(fsys vfs.FS, path string, f vfs.File, opts Options) *File {
	return &File{fsys: fsys, path: path, f: f, mu: opts.Lock, pageSize: opts.PageSize, noSync: opts.NoSync, log: &Log{}}
}

// ReadPageSize returns the page size that the header of the WAL at path
// gives (PageSizeOf), 0 when there is no WAL or its header is not valid.
func ReadPageSize(fsys vfs.FS, path string) int {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	var b [HeaderSize]byte
	if n, _ := f.ReadAt(b[:], 0); n < len(b) {
		return 0
	}
	return PageSizeOf(b[:])
}

// Log returns the committed log. The pointer stays the same for the life of
// the File; read what changes under the owner's lock.
func (w *File) Log() *Log { return w.log }

// Data returns the mapped bytes of the file, which Log.FrameData reads
// frames from. Read it under the owner's lock.
func (w *File) Data() []byte { return w.m.Bytes() }

// Frame returns the page image of frame n, committed or appended and
// flushed: the writer's view.
func (w *File) Frame(n uint32) []byte { return w.log.FrameData(w.m.Bytes(), n) }

// ReadFrame reads the page image of frame n, written, into dst (a page
// long) from the file rather than through the mapping.
func (w *File) ReadFrame(n uint32, dst []byte) error {
	_, err := w.f.ReadAt(dst[:w.pageSize], FrameOffset(n, w.pageSize)+FrameHeaderSize)
	return err
}

// Backfilled returns the number of frames copied into the database file.
// Read it under the owner's lock.
func (w *File) Backfilled() uint32 { return w.backfill }

// SetBackfilled records that the first n frames are copied into the
// database file (a checkpoint's work).
func (w *File) SetBackfilled(n uint32) {
	w.mu.Lock()
	w.backfill = n
	w.mu.Unlock()
}

// Syncs returns the number of syncs of the file and of its directory. Read
// it under the owner's lock.
func (w *File) Syncs() uint64 { return w.syncs }

// Close unmaps and closes the file. No reader may use the log any more.
func (w *File) Close() error {
	return errors.Join(w.m.Unmap(w.fsys), w.f.Close())
}
