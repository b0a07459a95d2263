package pager

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/wal"
)

// ErrReadOnly is returned by BeginWrite on a pager opened read-only.
var ErrReadOnly = errors.New("opened read-only")

// writeState is what the writer keeps between transactions.
type writeState struct {
	pages pageTable // the transaction's pages (WriteTx.pages)
	arena pageArena // where page buffers come from
	bufs  [][]byte  // page buffers to reuse
	io    []byte    // the I/O buffer (ioBuffer)
	wrote bool      // a transaction committed: Close checkpoints
	clean []uint32  // the pages whose slot held a clean copy (readClean)
	// nClean is the number of clean copies held: those of clean that
	// Write has not made the page's own buffer.
	nClean int
}

// DefaultCacheSize is the memory a write transaction's changed pages may
// hold before they are spilled to the WAL.
const DefaultCacheSize = 64 << 20

// dropFraction: a rollback-mode transaction that has spilled lets the
// database mapping's pages leave the resident set each time it has read a
// cache's worth over dropFraction through it (rule 45).
const dropFraction = 3

// cleanFraction: a WAL-mode transaction that has spilled keeps up to a
// cache's worth over cleanFraction of pages read back from the files as
// clean copies (rule 45).
const cleanFraction = 4

// spillPages is the number of changed pages a transaction keeps in memory.
func (p *Pager) spillPages() int {
	n := p.opts.CacheSize / p.pageSize
	return max(n, 16)
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
	// direct is set once pages past the committed end of the database
	// have been written straight into the database file (see Settle).
	direct bool
	nPages uint32
	done   bool
	// allocated and freed count the pages Allocate took and Free gave
	// back, for Stats when the transaction commits.
	allocated, freed uint64
	// fence is set while the transaction holds READ(0) of a shared
	// database, to write pages past the committed end straight into the
	// file (rule 27): no checkpoint copies meanwhile, so none cuts them.
	fence bool
	// Once a rollback-mode transaction has spilled, mapped counts its
	// reads of pages through the mapping since their pages last left the
	// resident set (rule 45), and dropEvery is how many it lets pass
	// before they leave again; 0 before the first spill.
	mapped, dropEvery int
	// bounded is set once a WAL-mode transaction has spilled: it reads
	// pages from the files into clean copies, not through the mappings
	// (readClean, rule 45).
	bounded bool
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
	if p.sh != nil {
		if err := p.takeWrite(); err != nil {
			p.writer.Unlock()
			return nil, err
		}
	}
	w := &WriteTx{p: p, pages: &p.wstate.pages}
	begin := w.InitSnapshot
	if p.rb != nil {
		begin = p.beginRollbackWrite
	}
	if err := begin(&w.base); err != nil {
		p.releaseWrite()
		p.writer.Unlock()
		return nil, err
	}
	w.nPages = w.base.nPages
	if err := w.writable(); err != nil {
		w.finish()
		return nil, err
	}
	return w, nil
}

// InitSnapshot initializes s as a snapshot of the last commit, the
// transaction's base, for use while the transaction lasts: with a shared
// database it holds no read slot (rule 27).
func (w *WriteTx) InitSnapshot(s *Snapshot) error {
	if w.p.sh != nil {
		return w.p.initShared(s, true)
	}
	if w.p.rb != nil {
		return w.p.ownRollbackSnapshot(w, s)
	}
	return w.p.InitSnapshot(s)
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
		if s.clean != nil {
			return s.clean, nil
		}
		if w.dropEvery > 0 {
			w.readMapped()
		}
		if s.frame != 0 {
			if w.bounded {
				return w.readClean(pgno, s.frame)
			}
			return w.p.wal.Frame(s.frame), nil
		}
		if s.inFile {
			if w.bounded {
				return w.readClean(pgno, 0)
			}
			off := int(pgno-1) * w.p.pageSize
			return w.p.db.Bytes()[off : off+w.p.pageSize : off+w.p.pageSize], nil
		}
	} else if w.dropEvery > 0 {
		w.readMapped()
	}
	if pgno > w.base.nPages && pgno <= w.nPages {
		return nil, format.Corruptf(pgno, "page %d was allocated but never written", pgno)
	}
	if w.bounded {
		if frame, ok := w.base.locate(pgno); ok {
			return w.readClean(pgno, frame)
		}
	}
	return w.base.Page(pgno)
}

// readClean reads page pgno from WAL frame frame, or from the database
// file when frame is 0, into a clean copy that Page returns until Settle
// drops it (rule 45): a transaction that has spilled reads the pages it
// does not hold from the files, so that they take memory within its cache
// budget and not in the process's resident set through the mappings.
func (w *WriteTx) readClean(pgno, frame uint32) ([]byte, error) {
	b, _ := w.buffer()
	var err error
	if frame != 0 {
		err = w.p.wal.ReadFrame(frame, b)
	} else {
		_, err = w.p.f.ReadAt(b[:w.p.pageSize], int64(pgno-1)*int64(w.p.pageSize))
	}
	if err != nil {
		w.recycle(b)
		return nil, fmt.Errorf("read page %d back: %w", pgno, err)
	}
	w.pages.slot(pgno).clean = b
	ws := &w.p.wstate
	ws.clean = append(ws.clean, pgno)
	ws.nClean++
	return b, nil
}

// dropClean recycles the clean copies (readClean).
func (w *WriteTx) dropClean() {
	ws := &w.p.wstate
	for _, pgno := range ws.clean {
		if s := w.pages.get(pgno); s != nil && s.clean != nil {
			w.recycle(s.clean)
			s.clean = nil
		}
	}
	ws.clean, ws.nClean = ws.clean[:0], 0
}

// trimClean recycles clean copies, oldest first and interior pages last
// (every descent reads them), until at most target are left (rule 45).
func (w *WriteTx) trimClean(target int) {
	ws := &w.p.wstate
	for _, interiorToo := range [2]bool{false, true} {
		kept := ws.clean[:0]
		for _, pgno := range ws.clean {
			s := w.pages.get(pgno)
			if s == nil || s.clean == nil {
				continue // made the changed page by Write
			}
			if ws.nClean > target && (interiorToo || !interior(pgno, s.clean)) {
				w.recycle(s.clean)
				s.clean = nil
				ws.nClean--
				continue
			}
			kept = append(kept, pgno)
		}
		ws.clean = kept
		if ws.nClean <= target {
			return
		}
	}
}

// readMapped counts a read through the mapping of a rollback-mode
// transaction that has spilled, and every dropEvery reads lets the
// mapping's pages go from the process's resident set (rule 45).
func (w *WriteTx) readMapped() {
	if w.mapped++; w.mapped < w.dropEvery {
		return
	}
	w.mapped = 0
	w.p.db.DropResident()
}

// Write returns a writable copy of page pgno, the same one on every call
// within the transaction (until Settle spills it).
func (w *WriteTx) Write(pgno uint32) ([]byte, error) {
	if s := w.pages.get(pgno); s != nil {
		if s.buf != nil {
			return s.buf, nil
		}
		if s.clean != nil {
			// A clean copy (rule 45) holds the page as the files do: it
			// becomes the changed page, with no copy of it.
			s.buf, s.clean = s.clean, nil
			w.p.wstate.nClean--
			w.nDirty++
			return s.buf, nil
		}
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
	if w.done {
		return nil
	}
	if limit := w.p.spillPages() / cleanFraction; w.p.wstate.nClean > limit {
		w.trimClean(limit / 2)
	}
	if w.nDirty <= w.p.spillPages() {
		return nil
	}
	// The pages spilled are read back from the files: copies read before
	// would be stale.
	w.dropClean()
	if w.p.rb != nil {
		return w.spillRollback() // through the journal (rule 41)
	}
	if err := w.spillDirect(); err != nil {
		return err
	}
	p := w.p
	if w.nDirty > 0 {
		if err := w.prepareWAL(); err != nil {
			return err
		}
		var err error
		last := p.wal.Log().MaxFrame // frames past it are this transaction's
		w.pages.each(func(pgno uint32, s *pageSlot) {
			switch {
			case err != nil:
			case s.frame > last:
				// Spilled before: its frame is written over, as SQLite
				// does, so that the WAL holds a page once however often
				// the transaction spills it.
				err = p.wal.Overwrite(s.frame, pgno, s.buf)
			default:
				s.frame, err = p.wal.Append(pgno, s.buf, 0)
			}
		})
		if err == nil {
			err = p.wal.Flush()
		}
		if err != nil {
			return err
		}
	}
	// The pages are written: they are read back from the files now, but
	// for those kept as clean copies.
	n := w.nDirty
	p.count(func(s *Stats) { s.Spilled += uint64(n) })
	w.keepSpilled(func(pgno uint32, s *pageSlot) bool { return true })
	w.nDirty = 0
	w.bounded = true
	return nil
}

// keepSpilled turns the buffers of the pages just spilled (those spilled
// picks among the slots holding one) into clean copies, up to half the
// copies' limit (a cache's worth over cleanFraction), interior pages
// first (every descent reads them), and recycles the rest (rule 45): a
// copy holds the page as the files now do.
func (w *WriteTx) keepSpilled(spilled func(pgno uint32, s *pageSlot) bool) {
	ws := &w.p.wstate
	budget := w.p.spillPages()/cleanFraction/2 - ws.nClean
	keep := func(pgno uint32, s *pageSlot) {
		s.clean, s.buf = s.buf, nil
		ws.clean = append(ws.clean, pgno)
		ws.nClean++
		budget--
	}
	w.pages.each(func(pgno uint32, s *pageSlot) {
		if budget > 0 && spilled(pgno, s) && interior(pgno, s.buf) {
			keep(pgno, s)
		}
	})
	w.pages.each(func(pgno uint32, s *pageSlot) {
		if !spilled(pgno, s) {
			return
		}
		if budget > 0 {
			keep(pgno, s)
			return
		}
		w.recycle(s.buf)
		s.buf = nil
	})
}

// interior reports whether page pgno's bytes b are a b-tree interior
// page's (page 1's header comes first).
func interior(pgno uint32, b []byte) bool {
	at := 0
	if pgno == 1 {
		at = format.HeaderSize
	}
	t := format.PageType(b[at])
	return t == format.PageTableInterior || t == format.PageIndexInterior
}

// armDrop starts counting the reads through the database mapping
// (readMapped), as the rollback-mode transaction has spilled.
func (w *WriteTx) armDrop() {
	w.dropEvery = max(w.p.spillPages()/dropFraction, 16)
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
	if !h.SizeIsValid() || h.DatabaseSize() > w.base.nPages {
		return false
	}
	// Shared, another connection's checkpoint cuts the file to the last
	// commit's size once it has copied every frame, pages written past it
	// included: the transaction holds READ(0) from its first such page to
	// its end, which every checkpoint that copies must have exclusively.
	// When a checkpoint has it now, the pages go to the WAL this time.
	if p.sh != nil && !w.fence {
		p.mu.Lock()
		err := p.holdSlot(0)
		p.mu.Unlock()
		if err != nil {
			return false
		}
		w.fence = true
	}
	return true
}

// spillDirect writes the buffered pages past the committed end of the
// database into the database file, in runs of consecutive pages.
func (w *WriteTx) spillDirect() error {
	if !w.directOK() {
		return nil
	}
	p := w.p
	runs := p.runs()
	var maxPg uint32
	var werr error
	direct := 0
	w.pages.each(func(pgno uint32, s *pageSlot) {
		if pgno <= w.base.nPages || werr != nil {
			return
		}
		werr = runs.add(pgno, s.buf) // a copy: the buffer may be recycled
		maxPg = pgno
		s.inFile = true
		w.nDirty--
		w.direct = true
		direct++
	})
	if err := runs.flush(); err != nil {
		return err
	}
	if werr == nil {
		w.keepSpilled(func(pgno uint32, s *pageSlot) bool { return pgno > w.base.nPages && s.inFile })
	}
	p.count(func(s *Stats) { s.Spilled += uint64(direct) })
	if direct > 0 {
		w.bounded = true
	}
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
	if w.p.wal != nil {
		w.p.wal.Rollback() // the frames it spilled, if it did not commit
	}
	w.dropClean()
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
	if w.fence {
		w.p.mu.Lock()
		w.p.sh.drops = aloneDrops // ask now whether alone: a commit can afford the clock
		w.p.dropSlot(0)
		w.p.mu.Unlock()
		w.fence = false
	}
	w.p.releaseWrite()
	if w.p.rb != nil {
		w.p.endRollbackWrite()
	}
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
	if w.nDirty == 0 && !w.spilled() && !w.direct {
		return nil
	}
	if w.p.rb != nil {
		return w.commitRollback()
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
			return fmt.Errorf("commit: %w", err)
		}
		if err := p.syncDB(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	if err := p.appendCommit(w); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	p.wstate.wrote = true
	w.finish()
	if limit := p.checkpointPages(); limit > 0 && p.WALFrames() >= uint32(limit) {
		// The commit is durable; a failed checkpoint only delays the copy.
		_, _ = p.Checkpoint(CheckpointPassive)
	}
	return nil
}

// appendCommit writes the transaction's remaining pages to the WAL after
// any it spilled, the last as the commit frame, commits them (wal.File.Commit:
// the WAL synced under SyncFull) and publishes the transaction; a commit
// that fails is spoiled. The caller holds the writer lock.
func (p *Pager) appendCommit(w *WriteTx) error {
	if err := w.prepareWAL(); err != nil {
		return err
	}
	var last uint32 // the commit frame's page
	w.pages.each(func(pgno uint32, _ *pageSlot) { last = pgno })
	first := p.wal.Log().MaxFrame + 1
	var err error
	p.wal.WriteBack(true) // the commit's sync follows its frames
	defer p.wal.WriteBack(false)
	w.pages.each(func(pgno uint32, s *pageSlot) {
		if err != nil {
			return
		}
		var commit uint32
		if pgno == last {
			commit = w.nPages
		}
		_, err = p.wal.Append(pgno, s.buf, commit)
	})
	if err == nil && p.sh != nil {
		// The index's regions for the frames, before the commit point.
		err = p.reserveShared(first + uint32(p.wal.Pending()) - 1)
	}
	if err == nil {
		err = p.wal.Commit(p.opts.Sync == SyncFull)
	}
	if err != nil {
		return p.wal.Spoil(err)
	}
	// Publish: new snapshots see the frames and the new size together.
	p.mu.Lock()
	frames := p.wal.Publish()
	if p.sh != nil {
		// In the wal-index too, for every connection. The commit is
		// durable: a failure here (a damaged -shm) is the next
		// reader's to repair, by recovery.
		if perr := p.publishShared(first, first+frames-1, w.nPages); perr != nil {
			p.sh.fresh = false
		}
	}
	p.nPages = w.nPages
	p.stats.Commits++
	p.stats.Frames += uint64(frames)
	p.stats.Allocated += w.allocated
	p.stats.Freed += w.freed
	p.mu.Unlock()
	return nil
}

// spilled reports whether the transaction has spilled pages to the WAL.
func (w *WriteTx) spilled() bool { return w.p.wal != nil && w.p.wal.Pending() > 0 }

// prepareWAL readies the WAL for the transaction's first frame: it makes
// sure the WAL exists with a valid header, restarting it (new salts, frames
// from the start) when every frame is in the database file and no snapshot
// reads from it. Once the transaction has spilled frames it does nothing.
func (w *WriteTx) prepareWAL() error {
	if w.spilled() {
		return nil
	}
	p := w.p
	if p.wal == nil {
		opts := p.walOptions()
		opts.Perm = p.sidePerm()
		f, err := wal.Create(p.fs, WALPath(p.path), opts)
		if err != nil {
			return err
		}
		p.ownSide(WALPath(p.path))
		p.mu.Lock()
		p.wal = f
		p.restarts++
		p.mu.Unlock()
	}
	p.wal.SetBuffer(p.ioBuffer())
	if p.sh != nil {
		if w.base.slot == writerSlotWAL {
			// The transaction reads frames: the WAL goes on (rule 27).
			return nil
		}
		_, err := p.restartShared()
		return err
	}
	l := p.wal.Log()
	p.mu.Lock()
	restart := !l.Valid || (l.MaxFrame > 0 && p.wal.Backfilled() == l.MaxFrame && p.walReaders == 0)
	if restart {
		// From here the frames may be overwritten: a released snapshot
		// that read them must not be taken up again (RenewSnapshot).
		p.restarts++
	}
	p.mu.Unlock()
	if !restart {
		return nil
	}
	return p.wal.Restart()
}

// SchemaChanged records a change of the schema in page 1, as every DDL
// statement of sqlite3's does: the schema cookie goes up by one (readers
// and other connections read the schema again), and a database whose
// schema format and text encoding fields are still 0 (no table yet) gets
// schema format 4 and UTF-8, as sqlite3StartTable gives the first table.
func (w *WriteTx) SchemaChanged() error {
	h, err := w.header()
	if err != nil {
		return err
	}
	h.SetSchemaCookie(h.SchemaCookie() + 1)
	if !h.FormatFieldsSet() {
		h.SetSchemaFormat(4)
		if h.TextEncoding() == 0 {
			h.SetTextEncoding(format.TextEncodingUTF8)
		}
	}
	return nil
}

// SetApplicationFields sets the header's user version (offset 60) and
// application ID (offset 68), the two fields that belong to the
// application, as a copy of a database keeps them.
func (w *WriteTx) SetApplicationFields(userVersion, applicationID uint32) error {
	h, err := w.header()
	if err != nil {
		return err
	}
	h.SetUserVersion(userVersion)
	h.SetApplicationID(applicationID)
	return nil
}
