package pager

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
	"github.com/pagodadb/pagoda/internal/wal"
)

// Options configure Open.
type Options struct {
	// ReadOnly opens the files read-only; BeginWrite fails.
	ReadOnly bool
	// PageSize is the page size of a database created by Open (default
	// 4096). An existing file keeps its own.
	PageSize int
	// Sync says when commits reach stable storage.
	Sync SyncMode
	// CacheSize bounds the memory, in bytes, of a write transaction's
	// changed pages; past it they spill to the WAL, or in rollback-journal
	// mode into the database file, their originals journaled (default
	// DefaultCacheSize).
	CacheSize int
	// CheckpointPages is the WAL size, in frames, past which a commit
	// checkpoints (default: the database's size in pages, at least 1000
	// and at most DefaultCheckpointBytes of frames; negative: only at
	// Close and Checkpoint).
	CheckpointPages int
	// Timeout is how long Open keeps trying to lock the database file
	// while another process or handle holds it (see lock.go); 0 means one
	// try. Then Open fails with an error wrapping ErrLocked.
	Timeout time.Duration
	// FS is the file layer, for tests that inject faults; nil means
	// vfs.OS.
	FS vfs.FS
	// Exclusive keeps a WAL-mode database to this pager from Open to
	// Close, as sqlite3's locking_mode=EXCLUSIVE: no -shm wal-index, and
	// no other connection (lock.go). Without it a WAL-mode database is
	// shared (shared.go), where locks belong to the open file (Linux). A
	// rollback-journal database it holds EXCLUSIVE from Open to Close,
	// still writing through the journal (rollback.go).
	Exclusive bool
	// JournalMode says how the database is written: the default keeps an
	// existing file's mode and creates WAL-mode files (rollback.go).
	JournalMode JournalMode
}

// SyncMode says which writes are followed by fsync.
type SyncMode uint8

const (
	// SyncFull syncs the WAL at every commit (the commit point) and the
	// database file at every checkpoint: committed data survives a power
	// loss.
	SyncFull SyncMode = iota
	// SyncNormal syncs only at checkpoints: a process crash loses nothing,
	// a power loss may lose the last commits, never consistency.
	SyncNormal
	// SyncOff never syncs.
	SyncOff
)

// DefaultPageSize is the page size of new databases.
const DefaultPageSize = 4096

// DefaultCheckpointBytes caps the WAL size past which a commit
// checkpoints by default. The default threshold is the database's own size
// in pages, at least 1000 (sqlite3's wal_autocheckpoint) and at most
// DefaultCheckpointBytes of pages (8192 of 4 KiB). sqlite3 stays at 1000
// because every reader searches its shared-memory hash of the WAL;
// pagoda's frame index is in process memory and costs a reader the same
// whatever its size, so a larger WAL is cheap to read, and a page that
// several commits change is copied into the database file once instead of
// once per checkpoint (random inserts in transactions of 1,000 rows into a
// 16 MB table write about a third of the pages at 32 MiB that they write at
// 1000 frames). Tying it to the database's size keeps the WAL of a small
// database small: on disk, and in the page cache that maps it. The price
// is disk space and the time Open takes to read the WAL back after a
// crash.
const DefaultCheckpointBytes = 32 << 20

// minCheckpointPages is sqlite3's wal_autocheckpoint default, the floor of
// the default threshold for large pages.
const minCheckpointPages = 1000

// Pager owns the database file, its mapping and the recovered WAL.
type Pager struct {
	path     string
	fs       vfs.FS
	f        vfs.File
	readOnly bool
	pageSize int
	usable   int

	opts Options

	sideOnce sync.Once
	side     sideAttrs // the database file's mode and owner (sidePerm)

	zeroOnce sync.Once
	zero     []byte // see zeroPage

	// writer is held by the write transaction, and by checkpoints.
	writer sync.Mutex
	wstate writeState // owned by the writer

	mu sync.Mutex
	// db maps the database file; dbPages*pageSize <= len(db.Bytes()).
	db      vfs.Mapping
	dbPages uint32 // whole pages present in the file
	// wal is the WAL beside the database, nil while there is none; once
	// set it stays until Close.
	wal     *wal.File
	shm     vfs.File // a read-only pager's -shm file (shm.go), nil without
	shmSlot int      // the read slot it holds there
	// sh is the pager's part in the wal-index protocol when it shares the
	// database (shared.go), nil otherwise.
	sh *shared
	// shareWAL says that the file is (or becomes, new) a WAL-mode
	// database that the pager shares (lockFile).
	shareWAL bool
	// lastConn is set by Close when the pager found itself the last
	// connection to a shared database: it removes the -shm file.
	lastConn bool
	// adopted counts the states the pager took from the wal-index: its
	// own commits and others'. With commits and restarts, it tells a
	// snapshot's identity.
	adopted uint64
	nPages  uint32 // committed database size
	// marks counts live snapshots by the frame they read up to (0 for
	// those that read the database file alone); walReaders counts those
	// that read frames from the WAL.
	marks      markCounts
	walReaders int
	// restarts counts the times the WAL started over from its first frame
	// (or was replaced), which overwrites frames without a commit.
	restarts uint64
	stats    Stats
	closed   bool
	// journal is a read-only pager's view of a hot rollback journal
	// (journal.go), nil without one.
	journal *journalOverlay
	// rb is the pager's state when it writes the database through a
	// rollback journal (rollback.go), nil otherwise.
	rb *rollback
}

// WALPath returns the path of the write-ahead log of the database at path.
func WALPath(path string) string { return wal.Path(path) }

// Open opens and validates the database at path and recovers its WAL.
//
// Unless opts.ReadOnly is set the files are opened for writing and a
// missing or empty file becomes a new, empty WAL-mode database: page 1 is
// written to the main file and synced before anything else, so that sqlite3
// never sees a WAL beside an empty file (which it would delete).
//
// First of all Open locks the database file (lock.go): SQLite's EXCLUSIVE
// lock to write, SHARED to read only, held until Close. While another
// process or pager holds a lock that excludes it, Open tries again until
// opts.Timeout has passed and then fails with an error wrapping ErrLocked.
func Open(path string, opts Options) (*Pager, error) {
	flag := os.O_RDONLY
	if !opts.ReadOnly {
		flag = os.O_RDWR | os.O_CREATE
	}
	if opts.PageSize == 0 {
		opts.PageSize = DefaultPageSize
	}
	if !format.ValidPageSize(opts.PageSize) {
		return nil, fmt.Errorf("invalid page size %d: %w", opts.PageSize, format.ErrUnsupported)
	}
	if opts.CacheSize == 0 {
		opts.CacheSize = DefaultCacheSize
	}
	fsys := opts.FS
	if fsys == nil {
		fsys = vfs.OS
	}
	f, err := fsys.OpenFile(path, flag, 0o644)
	if err != nil && !opts.ReadOnly && vfs.WriteDenied(err) {
		// As sqlite3 does, a file that may be read but not written (its
		// permissions, a read-only filesystem) opens read-only.
		if g, rerr := fsys.OpenFile(path, os.O_RDONLY, 0); rerr == nil {
			f, err, opts.ReadOnly = g, nil, true
		}
	}
	if err != nil {
		return nil, err
	}
	p := &Pager{path: path, fs: fsys, f: f, readOnly: opts.ReadOnly, opts: opts}
	if err := p.lockFile(); err != nil {
		p.Close()
		return nil, err
	}
	if err := p.recoverJournal(); err != nil {
		p.Close()
		return nil, err
	}
	if !opts.ReadOnly {
		if err := p.initNew(); err != nil {
			p.Close()
			return nil, err
		}
	}
	if p.shareWAL || p.rb != nil && p.rb.perTx {
		// EXCLUSIVE was only for the journal or the new file (lockFile).
		if err := p.f.Downgrade(); err != nil {
			p.Close()
			return nil, err
		}
	}
	if err := p.load(); err != nil {
		p.Close()
		return nil, err
	}
	if p.rb != nil {
		if err := p.openRollback(); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// ReadOnly reports whether the pager was opened read-only: asked to, or
// because the file could not be opened for writing.
func (p *Pager) ReadOnly() bool { return p.readOnly }

func (p *Pager) load() error {
	if p.readOnly && vfs.FileLocks && !p.shareWAL {
		// A WAL-mode file may have sqlite3 writers beside the pager: hold
		// a read slot before reading anything (shm.go).
		var hdr [format.HeaderSize]byte
		if n, _ := p.f.ReadAt(hdr[:], 0); n == len(hdr) && format.Header(hdr[:]).ReadVersion() == format.FileFormatWAL {
			if err := p.joinShm(); err != nil {
				return err
			}
		}
	}
	size, err := p.f.Size()
	if err != nil {
		return err
	}
	if size == 0 || (p.journal != nil && p.journal.nPages == 0) {
		// An empty file is an empty database to sqlite3, as is one that
		// a hot journal empties (the first transaction of a new file).
		p.pageSize, p.usable = DefaultPageSize, DefaultPageSize
		return nil
	}
	var hdr [format.HeaderSize]byte
	var hdrErr error // what is wrong with the file's own page 1
	if pg1 := p.journalPage(1); pg1 != nil {
		copy(hdr[:], pg1) // the header as the rollback leaves it
	} else if _, err := p.f.ReadAt(hdr[:], 0); err != nil {
		if !errors.Is(err, io.EOF) {
			return err
		}
		hdrErr = format.Corruptf(1, "file of %d bytes is shorter than the database header", size)
	}
	// The file's header says how to read the pages; the database's own
	// header is page 1 as the WAL may hold it, validated whole below.
	if hdrErr == nil {
		hdrErr = format.ValidateLayout(hdr[:])
	}
	h := format.Header(hdr[:])
	if hdrErr == nil {
		p.pageSize, p.usable = h.PageSize(), h.UsableSize()
		if size < int64(p.pageSize) && p.journal == nil {
			hdrErr = format.Corruptf(1, "file of %d bytes is shorter than one %d-byte page", size, p.pageSize)
		}
	}
	// SQLite reads page 1 through the WAL, by the WAL header's page size:
	// a file whose own page 1 is damaged or cut short reads when the WAL
	// holds page 1 (checked once the WAL is recovered).
	walPage1 := false
	if hdrErr != nil {
		if p.journal != nil {
			return hdrErr
		}
		ps := wal.ReadPageSize(p.fs, WALPath(p.path))
		if ps == 0 {
			return hdrErr
		}
		p.pageSize, p.usable, walPage1 = ps, ps, true
		clear(hdr[:]) // no size to trust in it
	}
	if size/int64(p.pageSize) > int64(^uint32(0)>>1) {
		return fmt.Errorf("%w: file of %d bytes has too many pages", format.ErrUnsupported, size)
	}
	p.dbPages = uint32(size / int64(p.pageSize))
	if err := p.db.Map(p.f, int(p.dbPages)*p.pageSize, !p.readOnly); err != nil {
		return fmt.Errorf("map %s: %w", p.path, err)
	}
	walOpts := p.walOptions()
	walOpts.Adopted = p.shareWAL // the log comes from the wal-index (rule 24)
	if p.wal, err = wal.Open(p.fs, WALPath(p.path), walOpts); err != nil {
		return err
	}
	if p.shareWAL {
		if err := p.openShared(); err != nil {
			return err
		}
	}
	frames := p.WALFrames()
	if walPage1 && (frames == 0 || p.wal.Log().Index.Find(1, frames) == 0) {
		return hdrErr // page 1 is the file's
	}
	// The size comes from the last commit frame when the WAL has one, else
	// from the header (page 1 of the file) if valid, else the file size.
	if p.journal != nil && frames > 0 {
		return fmt.Errorf("%w: %s has both a hot rollback journal and a WAL; open it writable to recover", format.ErrUnsupported, p.path)
	}
	switch {
	case p.sh != nil:
		// Shared: openShared took the size from the wal-index's last
		// commit (adopt), or from page 1 as the file held it then. The
		// header read above may be older: another connection's
		// checkpoint may have written the file since (rule 24).
	case p.journal != nil:
		p.nPages = p.journal.nPages // pages past the file's end read as zeros
	case frames > 0:
		p.nPages = p.wal.Log().DBSize
	case h.SizeIsValid():
		p.nPages = h.DatabaseSize()
	default:
		p.nPages = p.dbPages
	}
	if p.nPages > p.dbPages && frames == 0 && p.journal == nil {
		return format.Corruptf(1, "header says %d pages, the file holds %d", p.nPages, p.dbPages)
	}
	// Check the header as the snapshot sees it (page 1 may be in the WAL).
	s := p.Snapshot()
	defer s.Release()
	pg1, err := s.Page(1)
	if err != nil {
		return err
	}
	if err := format.ValidateHeader(pg1); err != nil {
		return err
	}
	if walPage1 {
		p.usable = format.Header(pg1).UsableSize()
	}
	if format.Header(pg1).PageSize() != p.pageSize || format.Header(pg1).UsableSize() != p.usable {
		return format.Corruptf(1, "page size in the WAL's page 1 differs from the file's")
	}
	// With a WAL or a hot journal, the size they give bounds the header's,
	// which is the database's size when valid: SQLite's b-tree layer reads
	// that many pages (lockBtree), and pages past it, which no tree can
	// reach, are not the database's.
	if h1 := format.Header(pg1); (p.journal != nil || frames > 0) && h1.SizeIsValid() {
		if h1.DatabaseSize() > p.nPages {
			return format.Corruptf(1, "header says %d pages, the last commit has %d", h1.DatabaseSize(), p.nPages)
		}
		p.nPages = h1.DatabaseSize()
	}
	// A size past both the file and the WAL, which a valid header vouches
	// for, is not damage: pages a transaction took past the end and freed
	// again were never written, and read as zeros (Snapshot.Page), as
	// SQLite reads them. Without a valid header (a damaged commit frame)
	// such a size names pages that exist nowhere.
	if frames > 0 && !format.Header(pg1).SizeIsValid() && uint64(p.nPages) > uint64(p.dbPages)+uint64(frames) {
		return format.Corruptf(1, "the last commit has %d pages; the file and the WAL hold at most %d", p.nPages, uint64(p.dbPages)+uint64(frames))
	}
	return nil
}

// walOptions are the options of the pager's WAL.
func (p *Pager) walOptions() wal.Options {
	return wal.Options{ReadOnly: p.readOnly, PageSize: p.pageSize, NoSync: p.opts.Sync == SyncOff, Lock: &p.mu}
}

// sideAttrs are what the files the pager creates beside the database
// (-wal, -journal, -shm) take from it, as sqlite3's do: its permissions,
// since they hold copies of its pages or say which pages changed, and,
// for a process running as root, its owner (ownSide).
type sideAttrs struct {
	perm     fs.FileMode
	uid, gid int
	owned    bool // uid and gid are known
}

// sidePerm returns the database file's permissions, read at the first
// call (a read-only pager of a rollback-journal file creates nothing),
// 0o644 when the file cannot be read.
func (p *Pager) sidePerm() fs.FileMode { return p.sideAttrs().perm }

func (p *Pager) sideAttrs() *sideAttrs {
	p.sideOnce.Do(func() {
		p.side.perm = 0o644
		if st, err := p.fs.Stat(p.path); err == nil {
			if perm := st.Mode().Perm(); perm != 0 {
				p.side.perm = perm
			}
			p.side.uid, p.side.gid, p.side.owned = fileOwner(st)
		}
	})
	return &p.side
}

// openSide opens (creating) path, a file beside the database, with the
// database file's permissions and, for a process running as root, its
// owner (ownSide).
func (p *Pager) openSide(path string, flag int) (vfs.File, error) {
	f, err := p.fs.OpenFile(path, flag|os.O_CREATE, p.sidePerm())
	if err == nil {
		p.ownSide(path)
	}
	return f, err
}

// ownSide gives path, a file the pager just made beside the database, the
// database file's owner when the process runs as root and the file
// belongs to another user, as sqlite3 does (robustFchown): root reading
// or writing a user's database then leaves no file the user cannot open.
// A failure is ignored, as sqlite3 ignores it: the file serves this
// process either way.
func (p *Pager) ownSide(path string) {
	if !runsAsRoot {
		return
	}
	if a := p.sideAttrs(); a.owned && a.uid != 0 {
		_ = chown(path, a.uid, a.gid)
	}
}

// PageSize returns the database page size.
func (p *Pager) PageSize() int { return p.pageSize }

// UsableSize returns the page size less the reserved bytes.
func (p *Pager) UsableSize() int { return p.usable }

// Path returns the database file's path.
func (p *Pager) Path() string { return p.path }

// WALFrames returns the number of committed frames in the WAL.
func (p *Pager) WALFrames() uint32 {
	p.mu.Lock() // a commit moves MaxFrame, a restart sets it to 0
	defer p.mu.Unlock()
	if p.wal == nil {
		return 0
	}
	return p.wal.Log().MaxFrame
}

// zeroPage returns a page of zeros, shared: it must not be written.
func (p *Pager) zeroPage() []byte {
	p.zeroOnce.Do(func() { p.zero = make([]byte, p.pageSize) })
	return p.zero
}

// Snapshot returns a read view of the last committed state. Where
// InitSnapshot fails, every page of it fails with that error.
func (p *Pager) Snapshot() *Snapshot {
	s := &Snapshot{}
	if err := p.InitSnapshot(s); err != nil {
		*s = Snapshot{err: err}
	}
	return s
}

// InitSnapshot fills s with a read view of the last committed state, so that
// callers can embed a Snapshot without an allocation. The snapshot pins the
// pages it sees: checkpoints do not overwrite them in the database file and
// the WAL does not restart under it until s.Release is called. A pager that
// shares the database takes a read slot of the wal-index for it (rule 25),
// which fails with ErrBusy when none comes free in time.
func (p *Pager) InitSnapshot(s *Snapshot) error {
	if p.sh != nil {
		return p.initShared(s, false)
	}
	if p.rb != nil {
		return p.snapshotRollback(s)
	}
	p.mu.Lock()
	*s = Snapshot{
		p:        p,
		data:     p.db.Bytes(),
		dbPages:  p.dbPages,
		nPages:   p.nPages,
		pageSize: p.pageSize,
		usable:   p.usable,
	}
	if p.journal != nil {
		s.journal = p.journal.pages
	}
	s.commits, s.restarts, s.adopted = p.stats.Commits, p.restarts, p.adopted
	if w := p.wal; w != nil && w.Log().MaxFrame > w.Backfilled() {
		s.log, s.walData, s.maxFrame = w.Log(), w.Data(), w.Log().MaxFrame
		s.mark = s.maxFrame
		p.walReaders++
	} else if w != nil {
		// The database file holds every commit: read it alone, so the
		// WAL may restart beneath this snapshot. Its mark is 0, not the
		// frames it has seen: every one of those is in the file already,
		// so no checkpoint has anything to copy for it either way, but
		// after a restart the new frames are numbered from 1 again, and
		// a mark from the old numbering would let checkpoints copy newer
		// pages over the ones it reads (TestSnapshotAcrossWALRestart).
		s.mark = 0
	}
	p.marks.add(s.mark)
	s.live = true
	p.mu.Unlock()
	return nil
}

// RenewSnapshot moves s, live or released, to the latest commit, as
// Release and then InitSnapshot would, and reports whether s is the same
// snapshot it was: nothing committed since it was taken, and the WAL not
// started over. Then s is left as it was (registered again if it had been
// released), and every slice it handed out still holds the page it held,
// which is the latest commit's page:
//
//   - a checkpoint copies only committed frames, so it writes no page that
//     s read from the database file, and the frames s read stay in the WAL
//     until it starts over;
//   - the WAL starts over only with no snapshot reading it, and s, if it
//     reads frames, counts as one again from here on;
//   - mappings that growth retired stay mapped until Close.
//
// That lets a reader in short transactions keep its place from one to the
// next while nobody writes.
func (p *Pager) RenewSnapshot(s *Snapshot) (same bool, err error) {
	if p.rb != nil {
		return p.renewRollback(s)
	}
	p.mu.Lock()
	if s.p == p && p.sh != nil && !p.closed {
		// Another connection's commit shows in the wal-index's header.
		// A snapshot on a read mark starts over, on READ(0), once a
		// checkpoint has copied every frame, as a new one would: it
		// would otherwise keep a writer from starting the WAL over
		// (rule 25).
		h, ok, _ := p.sh.x.readHdr()
		if !ok || h != p.sh.hdr || (s.slot > 0 && h.mxFrame > 0 && p.sh.info.blk != nil && p.sh.info.nBackfill() == h.mxFrame) {
			p.mu.Unlock()
			s.Release()
			return false, p.InitSnapshot(s)
		}
	}
	if s.p == p && !p.closed && s.commits == p.stats.Commits && s.restarts == p.restarts && s.adopted == p.adopted {
		if !s.live && p.sh != nil {
			err := errRetry // a write transaction's snapshot holds no slot
			if s.slot >= 0 {
				err = p.holdSlot(s.slot)
			}
			if err == nil && s.slot > 0 && p.sh.info.readMark(s.slot) != s.mark {
				p.dropSlot(s.slot) // a checkpoint moved the mark meanwhile
				err = errRetry
			}
			if err != nil {
				p.mu.Unlock()
				s.Release()
				return false, p.InitSnapshot(s)
			}
			p.marks.add(s.mark)
			if s.maxFrame != 0 {
				p.walReaders++
			}
			s.live = true
		}
		if !s.live {
			p.marks.add(s.mark)
			if s.maxFrame != 0 {
				p.walReaders++
			}
			s.live = true
		}
		p.mu.Unlock()
		return true, nil
	}
	p.mu.Unlock()
	s.Release()
	return false, p.InitSnapshot(s)
}

// release unregisters snapshot s.
func (p *Pager) release(s *Snapshot) {
	p.mu.Lock()
	p.marks.remove(s.mark)
	if s.maxFrame != 0 {
		p.walReaders--
	}
	if p.sh != nil && s.slot >= 0 {
		p.dropSlot(s.slot)
	}
	if p.rb != nil {
		p.releaseRollback(s)
	}
	p.mu.Unlock()
}

// markCounts counts live snapshots by mark: a few marks at a time, so a
// slice that a read transaction's start and end search without hashing.
type markCounts []markCount

type markCount struct {
	mark uint32
	n    int
}

func (m *markCounts) add(mark uint32) {
	for i := range *m {
		if (*m)[i].mark == mark {
			(*m)[i].n++
			return
		}
	}
	*m = append(*m, markCount{mark, 1})
}

func (m *markCounts) remove(mark uint32) {
	s := *m
	for i := range s {
		if s[i].mark == mark {
			if s[i].n--; s[i].n <= 0 {
				s[i] = s[len(s)-1]
				*m = s[:len(s)-1]
			}
			return
		}
	}
}

// oldestMark returns the smallest frame mark of live snapshots, or
// ^uint32(0) when there are none. p.mu is held.
func (p *Pager) oldestMark() uint32 {
	m := ^uint32(0)
	for _, c := range p.marks {
		m = min(m, c.mark)
	}
	return m
}

// Close checkpoints the WAL into the database file (and removes it when it
// is entirely copied, as sqlite3 does), then unmaps and closes the files.
// Slices handed out become invalid. No snapshot may be alive.
func (p *Pager) Close() error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil
	}
	var errs []error
	if p.wal != nil || p.sh != nil {
		errs = append(errs, p.closeWAL())
	}
	p.writer.Lock()
	defer p.writer.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	errs = append(errs, p.db.Unmap(p.fs))
	if p.wal != nil {
		errs = append(errs, p.wal.Close())
	}
	if p.journal != nil {
		errs = append(errs, p.fs.Unmap(p.journal.mapping))
		p.journal.mapping = nil
	}
	if p.rb != nil {
		errs = append(errs, p.closeRollback())
	}
	// No write transaction runs (the writer lock is held): no page buffer
	// is in use.
	p.wstate.bufs = nil
	p.wstate.arena.trim(0)
	// The locks go last, once the final checkpoint is durable and the
	// WAL gone: until then another process must not touch the files.
	errs = append(errs, p.closeShared(p.lastConn), p.leaveShm(), p.f.Unlock(), p.f.Close())
	if p.readOnly && p.sh != nil {
		p.purgeShm()
	}
	return errors.Join(errs...)
}

// purgeShm removes the -shm file that a read-only pager shared the
// database through, when it was the last connection and there is no WAL
// to read (or only an empty one): it leaves what sqlite3's last connection
// leaves, nothing. Being last is holding EXCLUSIVE on the database file,
// which every connection of a WAL-mode database holds SHARED while it is
// open (rule 22), taken through a descriptor of its own that can write;
// without one (the file's permissions), or with a WAL left to read, the
// -shm file stays, as sqlite3 -readonly leaves it.
func (p *Pager) purgeShm() {
	f, err := p.fs.OpenFile(p.path, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if f.Lock(vfs.LockExclusive) != nil {
		return
	}
	defer f.Unlock()
	if st, err := p.fs.Stat(WALPath(p.path)); err == nil && st.Size() > 0 {
		return
	}
	_ = p.fs.Remove(shmPath(p.path))
}

// initNew writes page 1 of a new database when the file is empty.
func (p *Pager) initNew() error {
	size, err := p.f.Size()
	if err != nil {
		return err
	}
	if size != 0 {
		return nil
	}
	// sqlite3 deletes a WAL that sits beside an empty database; so do we,
	// rather than replay pages of some other database.
	if err := p.fs.Remove(WALPath(p.path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	ps := p.opts.PageSize
	pg := make([]byte, ps)
	format.InitHeader(format.Header(pg), ps)
	if p.rb != nil {
		format.Header(pg).SetFileFormat(format.FileFormatLegacy)
	}
	// sqlite_schema's root: an empty table leaf after the header.
	if _, err := format.BuildPage(pg, 1, ps, format.PageTableLeaf, nil, 0); err != nil {
		return err
	}
	if _, err := p.f.WriteAt(pg, 0); err != nil {
		return err
	}
	if p.opts.Sync != SyncOff {
		if err := p.f.Sync(); err != nil {
			return err
		}
		return p.syncDir()
	}
	return nil
}

// growDBMap makes the database mapping cover nPages pages.
func (p *Pager) growDBMap(nPages uint32) error {
	nPages = max(nPages, p.dbPagesNow())
	if err := p.db.Grow(p.f, int(nPages)*p.pageSize, &p.mu); err != nil {
		return fmt.Errorf("map %s: %w", p.path, err)
	}
	p.mu.Lock()
	p.dbPages = nPages
	p.mu.Unlock()
	return nil
}

func (p *Pager) dbPagesNow() uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dbPages
}
