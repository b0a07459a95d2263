package pager

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
	"github.com/pagodadb/pagoda/internal/wal"
)

// ErrReadOnly is returned by BeginWrite on a pager opened read-only.
var ErrReadOnly = errors.New("pager: opened read-only")

// writeState is what the writer keeps between transactions.
type writeState struct {
	pages   pageTable // the transaction's pages (WriteTx.pages)
	arena   pageArena // where page buffers come from
	bufs    [][]byte  // page buffers to reuse
	frames  []byte    // frame batch buffer
	walSync bool      // the WAL's directory entry has been synced
	// walDurable says that every committed frame of the WAL is known to
	// be on stable storage: synced by this pager. A WAL found at Open may
	// hold frames that its writer never synced.
	walDurable bool
	wrote      bool // a transaction committed: Close checkpoints
	// unspoiled is the first frame of a failed commit that spoil could
	// not make invalid (0: none): the WAL may hold that transaction whole
	// and valid past the last commit. The next commit overwrites it; until
	// then Close tries again.
	unspoiled uint32
}

// Stats counts what the pager has done since Open.
type Stats struct {
	Commits     uint64 // write transactions committed with changes
	Frames      uint64 // WAL frames written
	Syncs       uint64 // fsync calls, on any file
	Checkpoints uint64 // checkpoints that copied pages
	Spilled     uint64 // pages written before their commit (Settle)
}

// Stats returns the pager's counters.
func (p *Pager) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

func (p *Pager) count(f func(*Stats)) {
	p.mu.Lock()
	f(&p.stats)
	p.mu.Unlock()
}

// sync syncs f unless syncing is off, and counts it.
func (p *Pager) sync(f vfs.File) error {
	if p.opts.Sync == SyncOff {
		return nil
	}
	p.count(func(s *Stats) { s.Syncs++ })
	return f.Sync()
}

// syncWAL syncs the WAL unless syncing is off and, the first time, its
// directory entry too: a WAL whose creation is not durable could vanish
// in a crash, or one that Close removed could come back in its place.
// (sqlite3 syncs the directory at the first sync of a new WAL as well.)
func (p *Pager) syncWAL() error {
	if err := p.sync(p.walFile); err != nil {
		return err
	}
	if p.opts.Sync == SyncOff {
		return nil
	}
	p.wstate.walDurable = true
	if p.wstate.walSync {
		return nil
	}
	if err := p.syncDir(); err != nil {
		return err
	}
	p.wstate.walSync = true
	return nil
}

// DefaultCacheSize is the memory a write transaction's changed pages may
// hold before they are spilled to the WAL.
const DefaultCacheSize = 64 << 20

// spillPages is the number of changed pages a transaction keeps in memory.
func (p *Pager) spillPages() int {
	n := p.opts.CacheSize / p.pageSize
	return max(n, 16)
}

// frameBatch is how many frames a commit writes per system call.
const frameBatch = 64

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

// syncDir makes the creation or removal of the files beside the database
// durable, and counts it.
func (p *Pager) syncDir() error {
	p.count(func(s *Stats) { s.Syncs++ })
	return p.fs.SyncDir(filepath.Dir(p.path))
}

// WriteTx is the one write transaction of a pager. Pages it changes are
// private copies until Commit appends them to the WAL; the mappings are
// never written through. When the changed pages exceed the cache budget,
// Settle spills them to the WAL as frames that only a commit frame can
// validate, and reuses their memory. It implements the b-tree layer's
// Writable.
type WriteTx struct {
	p      *Pager
	base   Snapshot
	pages  *pageTable // the pager's, reset by finish
	nDirty int        // pages held in buffers
	frames []uint32   // page of each frame spilled so far, in frame order
	// direct is set once pages past the committed end of the database
	// have been written straight into the database file (see Settle).
	direct bool
	s0, s1 uint32 // running checksum after the spilled frames
	nPages uint32
	done   bool
}

// BeginWrite starts the write transaction, waiting for the previous one to
// end. Exactly one of Commit or Rollback must follow.
func (p *Pager) BeginWrite() (*WriteTx, error) {
	if p.readOnly {
		return nil, ErrReadOnly
	}
	p.writer.Lock()
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		p.writer.Unlock()
		return nil, fs.ErrClosed
	}
	w := &WriteTx{p: p, pages: &p.wstate.pages}
	p.InitSnapshot(&w.base)
	w.nPages = w.base.nPages
	if err := w.writable(); err != nil {
		w.finish()
		return nil, err
	}
	return w, nil
}

// writable refuses to write a file whose header asks for what pagoda's
// writer does not do, before anything is written:
//
//   - auto-vacuum (header offset 52, the largest root page, non-zero):
//     such a file keeps a pointer map, pages that give every page's parent,
//     and SQLite moves pages by it. pagoda does not keep the map, so its
//     writes would leave one that sqlite3's integrity_check rejects.
//   - a write version (offset 18) above 2: SQLite treats the file as
//     read-only.
//   - UTF-16 text (offset 56 is 2 or 3): pagoda reads such files, but its
//     writer encodes text, schema rows included, as UTF-8 only.
func (w *WriteTx) writable() error {
	if w.base.nPages == 0 {
		return nil // a new file: pagoda writes its header
	}
	pg1, err := w.base.Page(1)
	if err != nil {
		return err
	}
	h := format.Header(pg1)
	if root := h.LargestRootPage(); root != 0 {
		mode := "full"
		if h.IncrementalVacuum() != 0 {
			mode = "incremental"
		}
		return fmt.Errorf("%w: writing an auto-vacuum database (auto_vacuum=%s): pagoda does not keep its pointer map; "+
			"read it, or convert it with sqlite3: PRAGMA auto_vacuum=NONE; VACUUM", format.ErrUnsupported, mode)
	}
	if v := h.WriteVersion(); v > format.FileFormatWAL {
		return fmt.Errorf("%w: writing a database of file format write version %d, which SQLite opens read-only", format.ErrUnsupported, v)
	}
	if enc := h.TextEncoding(); format.IsUTF16(enc) {
		name := "UTF-16le"
		if enc == format.TextEncodingUTF16BE {
			name = "UTF-16be"
		}
		return fmt.Errorf("%w: writing a %s database: pagoda writes only UTF-8 databases (read it, or convert it with sqlite3: .dump into a new database)", format.ErrUnsupported, name)
	}
	return nil
}

// PageSize returns the page size.
func (w *WriteTx) PageSize() int { return w.p.pageSize }

// UsableSize returns the usable bytes per page.
func (w *WriteTx) UsableSize() int { return w.p.usable }

// PageCount returns the database size in pages, as this transaction has it.
func (w *WriteTx) PageCount() uint32 { return w.nPages }

// Dirty returns the number of changed pages held in memory.
func (w *WriteTx) Dirty() int { return w.nDirty }

// Page returns the transaction's version of page pgno. It must not be
// written: use Write.
func (w *WriteTx) Page(pgno uint32) ([]byte, error) {
	if s := w.pages.get(pgno); s != nil {
		if s.buf != nil {
			return s.buf, nil
		}
		if s.frame != 0 {
			return w.p.log.FrameData(w.p.walMap.Bytes(), s.frame), nil
		}
		if s.inFile {
			off := int(pgno-1) * w.p.pageSize
			return w.p.db.Bytes()[off : off+w.p.pageSize : off+w.p.pageSize], nil
		}
	}
	if pgno > w.base.nPages && pgno <= w.nPages {
		return nil, format.Corruptf(pgno, "page %d was allocated but never written", pgno)
	}
	return w.base.Page(pgno)
}

// Write returns a writable copy of page pgno, the same one on every call
// within the transaction (until Settle spills it).
func (w *WriteTx) Write(pgno uint32) ([]byte, error) {
	if s := w.pages.get(pgno); s != nil && s.buf != nil {
		return s.buf, nil
	}
	src, err := w.Page(pgno)
	if err != nil {
		return nil, err
	}
	b, _ := w.buffer()
	copy(b, src)
	w.pages.slot(pgno).buf = b
	w.nDirty++
	return b, nil
}

// buffer returns a page buffer, reused when possible; zeroed reports that
// it is all zeros (a new one).
func (w *WriteTx) buffer() (b []byte, zeroed bool) {
	ws := &w.p.wstate
	if n := len(ws.bufs); n > 0 {
		b = ws.bufs[n-1]
		ws.bufs = ws.bufs[:n-1]
		return b, false
	}
	return ws.arena.get(w.p.pageSize), false
}

// fresh makes pgno a dirty page of zeros, ignoring its old content.
func (w *WriteTx) fresh(pgno uint32) []byte {
	s := w.pages.slot(pgno)
	if s.buf == nil {
		var zeroed bool
		s.buf, zeroed = w.buffer()
		w.nDirty++
		if zeroed {
			return s.buf
		}
	}
	clear(s.buf)
	return s.buf
}

// header returns page 1 for writing.
func (w *WriteTx) header() (format.Header, error) {
	pg, err := w.Write(1)
	if err != nil {
		return nil, err
	}
	return format.Header(pg), nil
}

// Allocate returns a zero-filled writable page: one from the freelist when
// it has any (as SQLite: a leaf of the first trunk, else the trunk itself),
// else a new page at the end of the file, never the lock-byte page.
func (w *WriteTx) Allocate() (uint32, []byte, error) {
	pg1, err := w.Page(1)
	if err != nil {
		return 0, nil, err
	}
	if trunk := format.Header(pg1).FreelistTrunk(); trunk != 0 {
		return w.allocFree(trunk)
	}
	n := w.nPages + 1
	if n == format.LockBytePage(w.p.pageSize) {
		n++
	}
	if n > maxPages {
		return 0, nil, fmt.Errorf("%w: database would exceed %d pages", format.ErrUnsupported, maxPages)
	}
	w.nPages = n
	return n, w.fresh(n), nil
}

// maxPages is the largest page count: SQLite's default max_page_count.
const maxPages = 0xfffffffe

func (w *WriteTx) allocFree(trunk uint32) (uint32, []byte, error) {
	if trunk > w.nPages {
		return 0, nil, format.CorruptAt(1, format.OffFreelistTrunk, "freelist trunk page %d out of range 1..%d", trunk, w.nPages)
	}
	h, err := w.header()
	if err != nil {
		return 0, nil, err
	}
	if h.FreelistCount() == 0 {
		return 0, nil, format.CorruptAt(1, format.OffFreelistCount, "freelist trunk %d but a free page count of 0", trunk)
	}
	t, err := w.Write(trunk)
	if err != nil {
		return 0, nil, err
	}
	tr, err := format.ParseFreelistTrunk(t, trunk, w.p.usable)
	if err != nil {
		return 0, nil, err
	}
	n := tr.Count()
	h.SetFreelistCount(h.FreelistCount() - 1)
	if n == 0 {
		// The trunk itself is the page; its successor becomes first.
		next := tr.Next()
		if next > w.nPages {
			return 0, nil, format.CorruptAt(trunk, format.TrunkOffNext, "freelist trunk page %d out of range 1..%d", next, w.nPages)
		}
		h.SetFreelistTrunk(next)
		clear(t)
		return trunk, t, nil
	}
	leaf := tr.Leaf(n - 1)
	if leaf < 2 || leaf > w.nPages || leaf == trunk {
		return 0, nil, format.CorruptAt(trunk, format.TrunkOffLeaf(n-1), "freelist leaf page %d out of range 2..%d", leaf, w.nPages)
	}
	tr.SetLeaf(n-1, 0)
	tr.SetCount(n - 1)
	return leaf, w.fresh(leaf), nil
}

// Free puts page pgno on the freelist: as a leaf of the first trunk while
// it has room for one (U/4-8 leaves), else as the new first trunk.
func (w *WriteTx) Free(pgno uint32) error {
	if pgno < 2 || pgno > w.nPages {
		return format.Corruptf(pgno, "cannot free page %d: outside 2..%d", pgno, w.nPages)
	}
	h, err := w.header()
	if err != nil {
		return err
	}
	trunk := h.FreelistTrunk()
	if trunk != 0 {
		t, err := w.Write(trunk)
		if err != nil {
			return err
		}
		tr := format.FreelistTrunk(t)
		n := tr.Count()
		if n < uint32(format.MaxTrunkLeavesWrite(w.p.usable)) {
			tr.SetLeaf(n, pgno)
			tr.SetCount(n + 1)
			h.SetFreelistCount(h.FreelistCount() + 1)
			// A free leaf's content is meaningless: do not write it.
			if s := w.pages.get(pgno); s != nil && s.buf != nil {
				w.recycle(s.buf)
				s.buf = nil
				w.nDirty--
			}
			return nil
		}
	}
	format.FreelistTrunk(w.fresh(pgno)).SetNext(trunk)
	h.SetFreelistTrunk(pgno)
	h.SetFreelistCount(h.FreelistCount() + 1)
	return nil
}

func (w *WriteTx) recycle(b []byte) {
	ws := &w.p.wstate
	ws.bufs = append(ws.bufs, b)
}

// Settle spills the changed pages when they hold more memory than the
// cache budget, and reuses their buffers. Slices obtained from Page and
// Write before it are invalid after it: call it between whole b-tree
// operations.
//
// Pages past the committed end of the database (new pages of a growing
// file) go straight into the database file: no reader can see them, and
// sqlite3 ignores pages past the size a commit records, so until the
// commit they are garbage at the end of the file; the commit syncs the file
// before its commit frame. This halves the writes of a bulk load (no copy
// at checkpoint). It needs a database file whose own header records its
// size, and SyncFull or SyncOff: SyncNormal does not sync at commit. Other
// pages become WAL frames that only the commit frame will validate.
func (w *WriteTx) Settle() error {
	if w.done || w.nDirty <= w.p.spillPages() {
		return nil
	}
	if err := w.spillDirect(); err != nil {
		return err
	}
	p := w.p
	if w.nDirty > 0 {
		if len(w.frames) == 0 {
			if err := p.prepareWAL(); err != nil {
				return err
			}
			w.s0, w.s1 = p.log.Cksum1, p.log.Cksum2
		}
		first := p.log.MaxFrame + 1 + uint32(len(w.frames))
		var err error
		w.s0, w.s1, err = p.writeFrames(w.pages, first, 0, w.s0, w.s1, func(pgno uint32, s *pageSlot) {
			w.frames = append(w.frames, pgno)
			s.frame = p.log.MaxFrame + uint32(len(w.frames))
		})
		if err != nil {
			return err
		}
		if err := p.growWALMap(int(wal.FrameOffset(p.log.MaxFrame+uint32(len(w.frames))+1, p.pageSize))); err != nil {
			return err
		}
	}
	// The pages are written: they are read back from the files now.
	n := w.nDirty
	p.count(func(s *Stats) { s.Spilled += uint64(n) })
	w.pages.each(func(pgno uint32, s *pageSlot) {
		w.recycle(s.buf)
		s.buf = nil
	})
	w.nDirty = 0
	return nil
}

// directOK reports whether pages past the committed end may be written
// straight into the database file (see Settle).
func (w *WriteTx) directOK() bool {
	p := w.p
	data := p.db.Bytes()
	if p.opts.Sync == SyncNormal || len(data) < format.HeaderSize {
		return false
	}
	h := format.Header(data)
	return h.SizeIsValid() && h.DatabaseSize() <= w.base.nPages
}

// spillDirect writes the buffered pages past the committed end of the
// database into the database file, in runs of consecutive pages.
func (w *WriteTx) spillDirect() error {
	if !w.directOK() {
		return nil
	}
	p := w.p
	ws := &p.wstate
	if cap(ws.frames) < frameBatch*(wal.FrameHeaderSize+p.pageSize) {
		ws.frames = make([]byte, frameBatch*(wal.FrameHeaderSize+p.pageSize))
	}
	run := ws.frames[:0]
	var runStart, prev, maxPg uint32
	var werr error
	direct := 0
	flush := func() {
		if len(run) > 0 && werr == nil {
			_, werr = p.f.WriteAt(run, int64(runStart-1)*int64(p.pageSize))
		}
		run = run[:0]
	}
	w.pages.each(func(pgno uint32, s *pageSlot) {
		if pgno <= w.base.nPages || werr != nil {
			return
		}
		if len(run) > 0 && (pgno != prev+1 || len(run)+p.pageSize > cap(run)) {
			flush()
		}
		if len(run) == 0 {
			runStart = pgno
		}
		run = append(run, s.buf...)
		prev, maxPg = pgno, pgno
		w.recycle(s.buf)
		s.buf, s.inFile = nil, true
		w.nDirty--
		w.direct = true
		direct++
	})
	flush()
	if werr != nil {
		return werr
	}
	p.count(func(s *Stats) { s.Spilled += uint64(direct) })
	if maxPg > 0 {
		return p.growDBMap(maxPg)
	}
	return nil
}

// Rollback forgets the transaction's changes.
func (w *WriteTx) Rollback() {
	if w.done {
		return
	}
	w.finish()
}

func (w *WriteTx) finish() {
	w.done = true
	w.pages.each(func(pgno uint32, s *pageSlot) { w.recycle(s.buf) })
	w.pages.reset()
	if ws := &w.p.wstate; ws.arena.size() > arenaKeep {
		// Every buffer is back in the pool: forget them all, and give
		// the memory past arenaKeep back.
		clear(ws.bufs)
		ws.bufs = ws.bufs[:0]
		ws.arena.trim(arenaKeep)
	}
	w.base.Release()
	w.p.writer.Unlock()
}

// Commit makes the transaction durable: its pages are appended to the WAL
// as frames, the last one a commit frame carrying the new page count, and
// the WAL is synced once (SyncFull). Only then do new snapshots see the
// changes. If Commit fails, nothing of the transaction is visible, now or
// after a reopen, and the database is as it was. The transaction is over
// either way.
func (w *WriteTx) Commit() error {
	if w.done {
		return fs.ErrClosed
	}
	defer func() {
		if !w.done {
			w.finish()
		}
	}()
	if w.nDirty == 0 && len(w.frames) == 0 && !w.direct {
		return nil
	}
	p := w.p
	// Page 1 carries the page count and, when it changes, the counters.
	// The commit frame needs a page: page 1 serves when all were spilled.
	pg1, err := w.Page(1)
	if err != nil {
		return err
	}
	s1 := w.pages.get(1)
	if (s1 != nil && (s1.buf != nil || s1.frame != 0)) || w.nDirty == 0 ||
		format.Header(pg1).DatabaseSize() != w.nPages || format.Header(pg1).WriteVersion() != format.FileFormatWAL {
		h, err := w.header()
		if err != nil {
			return err
		}
		h.SetDatabaseSize(w.nPages)
		h.SetFileFormat(format.FileFormatWAL)
		c := h.ChangeCounter() + 1
		h.SetChangeCounter(c)
		h.SetVersionValidFor(c)
		h.SetSQLiteVersion(format.SQLiteVersionNumber)
	}
	if w.direct {
		// The rest of the new pages join the spilled ones in the file,
		// which must be durable before the commit frame is.
		if err := w.spillDirect(); err != nil {
			return fmt.Errorf("pager: commit: %w", err)
		}
		if err := p.sync(p.f); err != nil {
			return fmt.Errorf("pager: commit: %w", err)
		}
	}
	if err := p.appendCommit(w); err != nil {
		return fmt.Errorf("pager: commit: %w", err)
	}
	p.wstate.wrote = true
	w.finish()
	if limit := p.checkpointPages(); limit > 0 && p.WALFrames() >= uint32(limit) {
		// The commit is durable; a failed checkpoint only delays the copy.
		_ = p.Checkpoint()
	}
	return nil
}

// appendCommit writes the transaction's remaining pages to the WAL after
// any it spilled, the last as the commit frame, syncs the WAL and publishes
// the transaction. The caller holds the writer lock.
func (p *Pager) appendCommit(w *WriteTx) error {
	s0, s1 := w.s0, w.s1
	if len(w.frames) == 0 {
		if err := p.prepareWAL(); err != nil {
			return err
		}
		s0, s1 = p.log.Cksum1, p.log.Cksum2
	}
	l := p.log
	first := l.MaxFrame + 1
	next := first + uint32(len(w.frames))
	var final []uint32
	s0, s1, err := p.writeFrames(w.pages, next, w.nPages, s0, s1, func(pgno uint32, _ *pageSlot) {
		final = append(final, pgno)
	})
	if err != nil {
		return p.spoil(first, err)
	}
	// Map the frames before the commit point: nothing may fail after it,
	// or a Commit that returned an error would be durable.
	last := next + uint32(len(final)) - 1
	if err := p.growWALMap(int(wal.FrameOffset(last+1, p.pageSize))); err != nil {
		return p.spoil(first, err)
	}
	if p.opts.Sync == SyncFull {
		if err := p.syncWAL(); err != nil {
			return p.spoil(first, err)
		}
	}
	// The commit point is passed: the failed commit these frames
	// overwrote can never come back.
	p.wstate.unspoiled = 0
	if p.opts.Sync != SyncFull {
		p.wstate.walDurable = false
	}
	// Publish: index the frames, then let new snapshots see them.
	f := first
	for _, pg := range w.frames {
		l.Index.Add(pg, f)
		f++
	}
	for _, pg := range final {
		l.Index.Add(pg, f)
		f++
	}
	p.mu.Lock()
	l.MaxFrame = last
	l.DBSize, l.Cksum1, l.Cksum2 = w.nPages, s0, s1
	p.nPages = w.nPages
	p.stats.Commits++
	p.stats.Frames += uint64(last - first + 1)
	p.mu.Unlock()
	return nil
}

// writeFrames appends the buffered pages of t to the WAL as frames from
// frame number first on, in page order, the last one a commit frame with
// commit as the database size when commit is not 0. It calls done for each
// page written, and returns the running checksum after the last frame.
func (p *Pager) writeFrames(t *pageTable, first, commit uint32, s0, s1 uint32, done func(uint32, *pageSlot)) (uint32, uint32, error) {
	l := p.log
	frameSize := wal.FrameHeaderSize + p.pageSize
	ws := &p.wstate
	if cap(ws.frames) < frameBatch*frameSize {
		ws.frames = make([]byte, frameBatch*frameSize)
	}
	// The last page written is the commit frame: find it first.
	var lastPg uint32
	t.each(func(pgno uint32, _ *pageSlot) { lastPg = pgno })
	buf := ws.frames[:0]
	off := wal.FrameOffset(first, p.pageSize)
	var werr error
	t.each(func(pgno uint32, s *pageSlot) {
		if werr != nil {
			return
		}
		var c uint32
		if pgno == lastPg {
			c = commit
		}
		n := len(buf)
		buf = buf[:n+frameSize]
		copy(buf[n+wal.FrameHeaderSize:], s.buf)
		s0, s1 = wal.EncodeFrame(buf[n:n+wal.FrameHeaderSize], &l.Header, pgno, c, buf[n+wal.FrameHeaderSize:], s0, s1)
		done(pgno, s)
		if len(buf) == cap(buf) || pgno == lastPg {
			if _, err := p.walFile.WriteAt(buf, off); err != nil {
				werr = err
				return
			}
			off += int64(len(buf))
			buf = buf[:0]
		}
	})
	return s0, s1, werr
}

// spoil makes frames from first on invalid after a commit failed with
// cause, and returns cause: a frame with page number 0 ends recovery, so a
// transaction whose commit failed cannot reappear after a reopen or a
// crash. The zeroed header is synced (unless syncing is off): the frames
// may have reached the disk even though their sync failed.
//
// When spoil itself fails, the transaction may sit whole and valid in the
// WAL past the last commit. In this process nothing reads it: the next
// commit writes its own frames over it, from the same frame on, with a
// checksum chain that leaves any stale frame after them invalid; Close
// tries spoil again (closeWAL). A crash before either may bring it back:
// a commit that reports an error because the disk fails is, as a commit
// interrupted by a crash, in doubt.
func (p *Pager) spoil(first uint32, cause error) error {
	_ = p.erase(first)
	return cause
}

// erase zeroes the header of frame first and syncs it, recording in
// wstate.unspoiled whether that failed.
func (p *Pager) erase(first uint32) error {
	var zero [wal.FrameHeaderSize]byte
	_, err := p.walFile.WriteAt(zero[:], wal.FrameOffset(first, p.pageSize))
	if err == nil && p.opts.Sync != SyncOff {
		err = p.sync(p.walFile)
	}
	if err != nil {
		p.wstate.unspoiled = first
	} else if p.wstate.unspoiled == first {
		p.wstate.unspoiled = 0
	}
	return err
}

// prepareWAL makes sure the WAL exists with a valid header, restarting it
// (new salts, frames from the start) when every frame is in the database
// file and no snapshot reads from it.
func (p *Pager) prepareWAL() error {
	if p.walFile == nil {
		f, err := p.fs.OpenFile(WALPath(p.path), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		p.mu.Lock()
		p.walFile, p.log = f, &wal.Log{}
		p.restarts++
		p.mu.Unlock()
		p.wstate.walSync = false
	}
	l := p.log
	p.mu.Lock()
	restart := !l.Valid || (l.MaxFrame > 0 && p.backfill == l.MaxFrame && p.walReaders == 0)
	if restart {
		// From here the frames may be overwritten: a released snapshot
		// that read them must not be taken up again (RenewSnapshot).
		p.restarts++
	}
	p.mu.Unlock()
	if !restart {
		return nil
	}
	var salt [4]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return err
	}
	var prev *wal.Header
	if l.Valid {
		prev = &l.Header
	}
	h := wal.Restart(prev, p.pageSize, binary.LittleEndian.Uint32(salt[:]))
	var b [wal.HeaderSize]byte
	h.Encode(b[:])
	if _, err := p.walFile.WriteAt(b[:], 0); err != nil {
		return err
	}
	// Old frames may follow the header: it must be durable before any
	// new frame is written over them, or a crash that kept a new frame
	// but not the new header would let the old header validate old frames
	// (pages older than the database file) up to the first new one. This
	// is SQLite's fix for its ticket ff5be73dee. A new, empty WAL has no
	// old frames.
	p.mu.Lock()
	oldFrames := len(p.walMap.Bytes()) > wal.HeaderSize
	p.mu.Unlock()
	if oldFrames && p.opts.Sync != SyncOff {
		if err := p.sync(p.walFile); err != nil {
			return err
		}
	}
	p.wstate.unspoiled = 0 // stale frames have the old salts now
	// No snapshot reads the old frames: forget them.
	p.mu.Lock()
	l.Index.Reset()
	l.Header, l.Valid, l.PageSize = h, true, p.pageSize
	l.MaxFrame, l.DBSize = 0, 0
	l.Cksum1, l.Cksum2 = h.Cksum1, h.Cksum2
	p.backfill = 0
	p.mu.Unlock()
	return nil
}

// growWALMap makes the WAL mapping cover its first size bytes. An older
// mapping stays valid for the snapshots that use it until Close.
func (p *Pager) growWALMap(size int) error {
	if err := p.walMap.Grow(p.walFile, size, &p.mu); err != nil {
		return fmt.Errorf("pager: map %s: %w", WALPath(p.path), err)
	}
	return nil
}

// growDBMap makes the database mapping cover nPages pages.
func (p *Pager) growDBMap(nPages uint32) error {
	nPages = max(nPages, p.dbPagesNow())
	if err := p.db.Grow(p.f, int(nPages)*p.pageSize, &p.mu); err != nil {
		return fmt.Errorf("pager: map %s: %w", p.path, err)
	}
	p.mu.Lock()
	p.dbPages = nPages
	p.mu.Unlock()
	return nil
}

// Checkpoint copies committed WAL frames into the database file, never past
// the oldest live snapshot (whose pages must not change under it), and
// syncs the file. When every frame has been copied the WAL may restart at
// the next commit. It waits for the write transaction to end.
func (p *Pager) Checkpoint() error {
	if p.readOnly {
		return ErrReadOnly
	}
	p.writer.Lock()
	defer p.writer.Unlock()
	return p.checkpoint()
}

func (p *Pager) checkpoint() error {
	p.mu.Lock()
	if p.closed || p.log == nil {
		p.mu.Unlock()
		return nil
	}
	l := p.log
	safe := min(l.MaxFrame, p.oldestMark())
	from := p.backfill
	walData := p.walMap.Bytes()
	nPages := p.nPages
	p.mu.Unlock()
	if safe <= from {
		return nil
	}
	// The frames must be durable before the database file changes:
	// were they lost in a crash afterwards, an older prefix of them would
	// be replayed over newer pages. A WAL this pager synced at every
	// commit is; one that SyncNormal wrote, or that Open found (its writer
	// may have crashed before syncing), is synced now, as sqlite3 does
	// before every checkpoint.
	if !p.wstate.walDurable && p.opts.Sync != SyncOff {
		if err := p.syncWAL(); err != nil {
			return err
		}
	}
	// The newest frame at or before safe of every page changed since the
	// last checkpoint, written in page order. A page past the last
	// commit's size is not copied, as sqlite3's walCheckpoint skips it
	// (iDbpage > mxPage): no snapshot reads it from the file, and a frame
	// whose number a damaged WAL made huge would grow the file to it.
	type copyOp struct{ pgno, frame uint32 }
	var ops []copyOp
	seen := make(map[uint32]bool)
	for f := safe; f > from; f-- {
		pg := l.Index.PageOf(f)
		if !seen[pg] && pg <= nPages {
			seen[pg] = true
			ops = append(ops, copyOp{pg, f})
		}
	}
	slices.SortFunc(ops, func(a, b copyOp) int { return int(a.pgno) - int(b.pgno) })
	size := nPages
	if safe < l.MaxFrame {
		size = 0 // the file only grows to cover what is copied
	}
	// Runs of consecutive pages go out in one write each, through the
	// frame batch buffer.
	ws := &p.wstate
	if cap(ws.frames) < frameBatch*(wal.FrameHeaderSize+p.pageSize) {
		ws.frames = make([]byte, frameBatch*(wal.FrameHeaderSize+p.pageSize))
	}
	run := ws.frames[:0]
	var runStart uint32
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		_, err := p.f.WriteAt(run, int64(runStart-1)*int64(p.pageSize))
		run = run[:0]
		return err
	}
	for i, op := range ops {
		if len(run) > 0 && (op.pgno != ops[i-1].pgno+1 || len(run)+p.pageSize > cap(run)) {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(run) == 0 {
			runStart = op.pgno
		}
		run = append(run, l.FrameData(walData, op.frame)...)
		size = max(size, op.pgno)
	}
	if err := flush(); err != nil {
		return err
	}
	if safe == l.MaxFrame {
		// The whole WAL is in the file: the file is the last commit's
		// size, as sqlite3 truncates it, a commit that shrank the
		// database leaving no pages after it. Every live snapshot reads
		// that commit (a snapshot at an older mark would have kept safe
		// below MaxFrame), so none reads past the new end.
		want := int64(nPages) * int64(p.pageSize)
		if size, err := p.f.Size(); err == nil && size != want {
			if err := p.f.Truncate(want); err != nil {
				return err
			}
			// The mapping stays; its slice ends with the file, so that
			// growDBMap extends it again when the file grows. dbPages
			// shrinks first: no snapshot reads past the slice.
			p.mu.Lock()
			p.dbPages = min(p.dbPages, nPages)
			p.mu.Unlock()
			p.db.Truncate(int(nPages)*p.pageSize, &p.mu)
		}
	}
	if err := p.sync(p.f); err != nil {
		return err
	}
	if size > p.dbPagesNow() || vfs.MapCopies {
		if err := p.growDBMap(size); err != nil {
			return err
		}
	}
	p.mu.Lock()
	p.backfill = safe
	p.stats.Checkpoints++
	p.mu.Unlock()
	return nil
}

// walPerDBPage is the default WAL size, in frames, per page of the
// database (see DefaultCheckpointBytes): a checkpoint then copies at most
// one page for every two frames the commits wrote.
const walPerDBPage = 2

// checkpointPages is the WAL size, in frames, past which a commit
// checkpoints; 0 means never.
func (p *Pager) checkpointPages() int {
	switch n := p.opts.CheckpointPages; {
	case n < 0:
		return 0
	case n > 0:
		return n
	}
	p.mu.Lock()
	n := int(p.nPages)
	p.mu.Unlock()
	return max(minCheckpointPages, min(walPerDBPage*n, DefaultCheckpointBytes/p.pageSize))
}

func (p *Pager) dbPagesNow() uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dbPages
}

// closeWAL checkpoints everything and, when the WAL is then entirely in the
// database file, removes it, as sqlite3 does when its last connection
// closes. Called by Close with no snapshot alive.
func (p *Pager) closeWAL() error {
	if p.readOnly || p.walFile == nil {
		return nil
	}
	p.writer.Lock()
	defer p.writer.Unlock()
	if first := p.wstate.unspoiled; first != 0 {
		// A failed commit may still be valid in the WAL: try again to
		// make it invalid.
		if err := p.erase(first); err != nil {
			return fmt.Errorf("pager: close: the WAL may still hold a transaction whose commit failed: %w", err)
		}
	}
	if !p.wstate.wrote {
		// A WAL this process did not write stays as it was found.
		return nil
	}
	if err := p.checkpoint(); err != nil {
		return err
	}
	p.mu.Lock()
	done := p.log == nil || p.backfill == p.log.MaxFrame
	p.mu.Unlock()
	if !done {
		return nil
	}
	if err := p.fs.Remove(WALPath(p.path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// A -shm file (left by sqlite3, or by a read-only pager, shm.go) goes
	// with the WAL, as sqlite3's last connection removes it: the pager's
	// EXCLUSIVE lock means that no sqlite3 connection is reading the file.
	if err := p.fs.Remove(shmPath(p.path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
