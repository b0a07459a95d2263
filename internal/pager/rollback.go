package pager

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// Rollback-journal mode: a database whose header says so (bytes 18 and 19
// are 1, sqlite3's default) is written as sqlite3 writes it, through a
// <db>-journal of the pages' originals, and keeps its mode. The rules are
// doc.go's 32 to 40; this file keeps them.

// JournalMode is how a pager writes the database (Options.JournalMode).
type JournalMode uint8

const (
	// JournalDefault keeps an existing file's mode; a new file is a
	// WAL-mode database.
	JournalDefault JournalMode = iota
	// JournalWAL writes a WAL: a rollback-journal file becomes a WAL-mode
	// database at its first commit (and the pager holds it EXCLUSIVE from
	// Open to Close).
	JournalWAL
	// JournalDelete writes a rollback journal, deleted at each commit
	// (sqlite3's journal_mode=DELETE): a new file is a rollback-journal
	// database, and a WAL-mode one becomes one at Open, when no other
	// connection has it (convert.go; else ErrBusy).
	JournalDelete
)

func (m JournalMode) String() string {
	switch m {
	case JournalDefault:
		return "default"
	case JournalWAL:
		return "wal"
	case JournalDelete:
		return "delete"
	}
	return "invalid"
}

// rollbackReadPatience is the least time a read transaction waits for a
// writer's PENDING or EXCLUSIVE lock to go (rule 33): sqlite3 holds them
// for the moments its commit writes the file.
const rollbackReadPatience = time.Second

// rollback is a pager's state in rollback-journal mode. Its fields are
// guarded by the pager's mu.
type rollback struct {
	// perTx: locks are taken per transaction (rules 32 to 34); else the
	// pager holds its Open lock until Close (Options.Exclusive, or where
	// locks belong to the process).
	perTx   bool
	readers int  // live snapshots: they share one SHARED lock (rule 33)
	own     int  // those of them that are the write transaction's
	writing bool // a write transaction holds RESERVED (rule 35)
	// jw is the write transaction's journal once it spilled or commits
	// (rollbackspill.go).
	jw *journalWriter
	// pending: a commit waits for EXCLUSIVE or writes the file; no
	// snapshot begins meanwhile (rule 36).
	pending bool
	// recover: a failed commit may have left pages of its transaction in
	// the file; the next snapshot that begins with no other alive rolls
	// the journal back first (rule 39).
	recover bool
	// joining: a snapshot takes SHARED and learns the file, without mu;
	// others wait for it.
	joining bool
	// vers is what the pager last learnt of the file (rule 34), valid
	// when known.
	vers  fileVers
	known bool
	// overlay is a read-only pager's hot journal, read through while its
	// SHARED lock is held; mappings keeps the journals overlays mapped,
	// unmapped at Close (their pages may be in released snapshots' hands).
	overlay  *journalOverlay
	mappings [][]byte
}

// fileVers is what tells another connection's commit: the header's bytes
// 24..40 (change counter, page count, freelist head and count: pager.c's
// dbFileVers) and the file's size.
type fileVers struct {
	hdr  [16]byte
	size int64
}

// errOwnReaders says that snapshots of this pager keep a commit from
// taking EXCLUSIVE.
var errOwnReaders = errors.New("this pager's read transactions hold the database")

// rollbackFile reports whether the pager writes the file, whose first bytes
// are hdr (n of them), through a rollback journal; the caller holds SHARED.
// A WAL-mode file asked to be written in rollback mode is an error.
func (p *Pager) rollbackFile(hdr []byte, n int) (bool, error) {
	mode := p.opts.JournalMode
	if n == 0 {
		return !p.readOnly && mode == JournalDelete, nil
	}
	if n < format.HeaderSize {
		return false, nil // load reports what is wrong
	}
	switch format.Header(hdr).ReadVersion() {
	case format.FileFormatWAL:
		return false, nil // lockFile converted it first if asked (rule 44)
	case format.FileFormatLegacy:
		if mode == JournalWAL && !p.readOnly {
			return false, nil
		}
		// A WAL left beside a rollback-mode header is a database in WAL
		// mode all the same (sqlite3 opens it): the pager reads it so.
		if fi, err := p.fs.Stat(WALPath(p.path)); err == nil && fi.Size() > 0 {
			return false, nil
		}
		return true, nil
	}
	return false, nil
}

// openRollback is Open's part in rollback mode, once load has read the file
// (rule 32): a pager that locks per transaction lets its lock go, and a
// read-only one's hot journal is read again by each read transaction.
func (p *Pager) openRollback() error {
	rb := p.rb
	// A read-only pager's hot journal is read through until the next
	// snapshot looks again (hotJournalRollback).
	rb.overlay, p.journal = p.journal, nil
	if !rb.perTx {
		return nil
	}
	return p.f.Unlock()
}

// renewRollback is RenewSnapshot in rollback mode (rule 33): s lets its
// SHARED lock go (if it was the last snapshot) and takes it again, and is
// the same snapshot when neither this pager nor another connection
// committed meanwhile.
func (p *Pager) renewRollback(s *Snapshot) (same bool, err error) {
	was := *s
	s.Release()
	if err := p.InitSnapshot(s); err != nil {
		return false, err
	}
	return was.p == p && was.commits == s.commits && was.restarts == s.restarts && was.adopted == s.adopted, nil
}

// closeRollback unmaps the journals read-only snapshots read through.
// p.mu is held.
func (p *Pager) closeRollback() error {
	var errs []error
	for _, m := range p.rb.mappings {
		errs = append(errs, p.fs.Unmap(m))
	}
	if o := p.rb.overlay; o != nil {
		errs = append(errs, p.fs.Unmap(o.mapping))
	}
	p.rb.mappings, p.rb.overlay = nil, nil
	return errors.Join(errs...)
}

// snapshotRollback is InitSnapshot in rollback mode (rule 33): the first
// snapshot takes SHARED, rolls back a hot journal and learns what other
// connections committed; the others share its lock. It waits while this
// pager's commit holds the file (or a failed one left it to roll back),
// and for another connection's PENDING or EXCLUSIVE, up to Options.Timeout
// (at least rollbackReadPatience): then ErrBusy.
func (p *Pager) snapshotRollback(s *Snapshot) error {
	rb := p.rb
	deadline := time.Now().Add(max(p.opts.Timeout, rollbackReadPatience))
	pause := 50 * time.Microsecond
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return fmt.Errorf("%s is closed", p.path)
		}
		err := errRetry
		if !rb.pending && !(rb.recover && rb.readers > 0) {
			err = p.joinRollback()
		}
		if err == nil {
			*s = Snapshot{
				p:        p,
				data:     p.db.Bytes(),
				dbPages:  p.dbPages,
				nPages:   p.nPages,
				pageSize: p.pageSize,
				usable:   p.usable,
			}
			if rb.overlay != nil {
				s.journal = rb.overlay.pages
			}
			s.commits, s.restarts, s.adopted = p.stats.Commits, p.restarts, p.adopted
			p.marks.add(0)
			s.live = true
		}
		p.mu.Unlock()
		if err == nil || !errors.Is(err, errRetry) && !errors.Is(err, ErrLocked) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: a writer holds it, in this or another connection: %w", p.path, ErrBusy)
		}
		time.Sleep(pause)
		pause = min(2*pause, busyRetryMax)
	}
}

// joinRollback counts a snapshot in: with a SHARED lock of its own when
// none is alive, after a hot journal's rollback and what other connections
// committed taken up (freshRollback, without p.mu, while other snapshots
// wait). p.mu is held.
func (p *Pager) joinRollback() error {
	rb := p.rb
	if rb.readers > 0 {
		rb.readers++
		return nil
	}
	if rb.joining || rb.writing {
		return errRetry // another snapshot is joining, or the writer ends
	}
	if !rb.perTx && !rb.recover {
		rb.readers++ // nobody else writes the file
		return nil
	}
	rb.joining = true
	p.mu.Unlock()
	err := p.freshRollback()
	p.mu.Lock()
	rb.joining = false
	if err != nil {
		return err
	}
	rb.recover = false
	rb.readers++
	return nil
}

// freshRollback takes SHARED (unless held from Open to Close), rolls back
// a hot journal, and learns the file (rule 34). No snapshot is alive and
// none joins meanwhile; p.mu is not held.
func (p *Pager) freshRollback() error {
	rb := p.rb
	var err error
	if rb.perTx {
		if err = p.f.Lock(vfs.LockShared); err != nil {
			return err
		}
		err = p.hotJournalRollback()
	} else {
		// EXCLUSIVE is held since Open: roll a failed commit back.
		err = p.recoverJournal()
	}
	if err == nil {
		p.mu.Lock()
		err = p.learnRollback()
		p.mu.Unlock()
	}
	if err != nil && rb.perTx {
		_ = p.f.Unlock()
	}
	return err
}

// releaseRollback counts snapshot s out: the last lets SHARED go, unless
// the writer holds its lock. p.mu is held.
func (p *Pager) releaseRollback(s *Snapshot) {
	rb := p.rb
	rb.readers--
	if s.own {
		rb.own--
	}
	if rb.readers == 0 && rb.perTx && !rb.writing {
		_ = p.f.Unlock()
	}
}

// hotJournalRollback rolls back a hot journal (rule 34, pager.c's
// hasHotJournal and pagerSharedLock): one that exists, whose first byte is
// not zero, while no connection holds RESERVED. A writable pager plays it
// back under EXCLUSIVE, taken from SHARED without RESERVED so that no
// reader takes the journal for a writer's meanwhile; a read-only one reads
// through it. SHARED is held, no snapshot is alive or joins; p.mu is not
// held.
func (p *Pager) hotJournalRollback() error {
	rb := p.rb
	p.mu.Lock()
	if o := rb.overlay; o != nil {
		rb.mappings = append(rb.mappings, o.mapping)
		rb.overlay = nil
		rb.known = false
	}
	p.mu.Unlock()
	hot, err := p.journalLooksHot()
	if err != nil || !hot {
		return err
	}
	p.mu.Lock()
	rb.known = false
	p.mu.Unlock()
	if p.readOnly {
		if err := p.recoverJournal(); err != nil {
			return err
		}
		p.mu.Lock()
		rb.overlay, p.journal = p.journal, nil
		p.mu.Unlock()
		return nil
	}
	if err := p.f.Lock(vfs.LockExclusive); err != nil {
		return err // back at SHARED: another connection reads
	}
	err = p.recoverJournal()
	return errors.Join(err, p.f.Downgrade())
}

// journalLooksHot reports whether the journal exists, has a first byte
// that is not zero, and no connection holds RESERVED (which this pager's
// writer does not: no snapshot of it is alive).
func (p *Pager) journalLooksHot() (bool, error) {
	jf, err := p.fs.OpenFile(JournalPath(p.path), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("open %s: %w", JournalPath(p.path), err)
	}
	defer jf.Close()
	var first [1]byte
	if n, err := jf.ReadAt(first[:], 0); n == 0 || first[0] == 0 {
		if err == io.EOF {
			err = nil
		}
		return false, err
	}
	if err := p.f.LockRange(vfs.ReservedByte, 1, false); err != nil {
		if errors.Is(err, ErrLocked) {
			return false, nil // a writer's journal
		}
		return false, err
	}
	return true, p.f.UnlockRange(vfs.ReservedByte, 1)
}

// learnRollback takes up the database as the file holds it now (rule 34):
// when its change counter, page count, freelist fields (bytes 24..40, as
// pager.c's dbFileVers) or size changed since the pager last looked, or a
// hot journal is read through, the mapping is made to cover the file and
// the page count is taken again, and snapshots from here on are new ones
// (Pager.adopted). p.mu is held, and SHARED (or more).
func (p *Pager) learnRollback() error {
	rb := p.rb
	var hdr [format.HeaderSize]byte
	size, err := p.f.Size()
	if err != nil {
		return err
	}
	n, err := p.f.ReadAt(hdr[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	o := rb.overlay
	if o != nil {
		if pg1 := o.pages[1]; pg1 != nil {
			n = copy(hdr[:], pg1)
		}
	}
	vers := fileVers{hdr: [16]byte(hdr[24:40]), size: size}
	if rb.known && vers == rb.vers && o == nil {
		return nil
	}
	if size == 0 || o != nil && o.nPages == 0 {
		p.db.Truncate(0, nopLock{})
		p.dbPages, p.nPages = 0, 0
	} else {
		if n < format.HeaderSize {
			return format.Corruptf(1, "file of %d bytes is shorter than the database header", size)
		}
		if err := format.ValidateLayout(hdr[:]); err != nil {
			return err
		}
		h := format.Header(hdr[:])
		if h.ReadVersion() != format.FileFormatLegacy {
			return fmt.Errorf("%s: another connection made it a WAL-mode database: open it again: %w", p.path, format.ErrUnsupported)
		}
		if h.PageSize() != p.pageSize || h.UsableSize() != p.usable {
			if p.nPages != 0 || p.dbPages != 0 {
				return fmt.Errorf("%s: another connection changed its page size to %d: open it again: %w", p.path, h.PageSize(), format.ErrUnsupported)
			}
			p.pageSize, p.usable = h.PageSize(), h.UsableSize()
		}
		if err := p.refreshDBFile(); err != nil {
			return err
		}
		switch {
		case o != nil:
			p.nPages = o.nPages
		case h.SizeIsValid():
			p.nPages = h.DatabaseSize()
		default:
			p.nPages = p.dbPages
		}
		if o != nil && h.SizeIsValid() {
			p.nPages = min(p.nPages, h.DatabaseSize())
		}
		if o == nil && p.nPages > p.dbPages {
			return format.Corruptf(1, "header says %d pages, the file holds %d", p.nPages, p.dbPages)
		}
	}
	rb.vers, rb.known = vers, o == nil
	p.adopted++
	return nil
}

// beginRollbackWrite is BeginWrite's part in rollback mode (rule 35): base
// becomes a snapshot of the last commit, and RESERVED is taken beside its
// SHARED. While another connection holds RESERVED the attempt lets its
// snapshot go (so that the other's commit can take EXCLUSIVE, as btree.c's
// busy loop unlocks between tries) and tries again until Options.Timeout:
// then ErrBusy. The caller holds the writer lock.
func (p *Pager) beginRollbackWrite(base *Snapshot) error {
	rb := p.rb
	deadline := time.Now().Add(p.opts.Timeout)
	pause := 100 * time.Microsecond
	for {
		if err := p.InitSnapshot(base); err != nil {
			return err
		}
		p.mu.Lock()
		var err error
		if rb.perTx {
			err = p.f.Lock(vfs.LockReserved)
		}
		if err == nil {
			rb.writing = true
			base.own = true
			rb.own++
		}
		p.mu.Unlock()
		if err == nil {
			return nil
		}
		base.Release()
		if !errors.Is(err, ErrLocked) {
			return fmt.Errorf("lock %s: %w", p.path, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%s: another connection is writing it (it holds the RESERVED lock): %w", p.path, ErrBusy)
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, busyRetryMax)
	}
}

// ownRollbackSnapshot is WriteTx.InitSnapshot in rollback mode: a copy
// of the transaction's base, under its SHARED lock, that its commit does
// not wait for (rule 36).
func (p *Pager) ownRollbackSnapshot(w *WriteTx, s *Snapshot) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !w.base.live {
		return fmt.Errorf("%s: the write transaction is over", p.path)
	}
	*s = w.base
	p.marks.add(s.mark)
	p.rb.readers++
	p.rb.own++
	return nil
}

// endRollbackWrite lets the write transaction's locks go (rule 35): to
// SHARED while snapshots are alive, else to none, once a transaction that
// did not commit has played its journal back (abortRollback). Its
// snapshot is released.
func (p *Pager) endRollbackWrite() {
	p.abortRollback()
	p.mu.Lock()
	defer p.mu.Unlock()
	rb := p.rb
	rb.writing, rb.pending = false, false
	if !rb.perTx {
		return
	}
	if rb.readers > 0 {
		_ = p.f.Downgrade()
	} else {
		_ = p.f.Unlock()
	}
}

// commitRollback commits w through a rollback journal, in sqlite3's order
// (rules 36 to 39): the journal written, EXCLUSIVE, the journal synced and
// its header made valid, the pages written into the database file and
// synced, and the journal deleted, which is the commit point. The caller
// (Commit) ends the transaction after it.
func (w *WriteTx) commitRollback() error {
	p := w.p
	h, err := w.header()
	if err != nil {
		return err
	}
	h.SetDatabaseSize(w.nPages)
	h.SetFileFormat(format.FileFormatLegacy)
	c := h.ChangeCounter() + 1
	h.SetChangeCounter(c)
	h.SetVersionValidFor(c)
	h.SetSQLiteVersion(format.SQLiteVersionNumber)

	// The journal: the records a spill did not write yet, synced.
	jw := p.rb.jw
	dbmod := jw != nil && jw.dbmod // the file holds spilled pages
	if jw == nil {
		jw, err = w.openJournal()
	}
	if err == nil {
		err = w.journalPages(jw)
	}
	if err == nil {
		err = p.exclusiveRollback()
	}
	if err == nil && (!jw.synced || jw.nRec > 0) {
		err = p.syncJournal(jw, false)
	}
	err = errors.Join(err, p.closeJournal())
	if err != nil {
		if dbmod {
			return p.undoRollback(err)
		}
		// The database file is as it was: the journal goes.
		rerr := p.fs.Remove(JournalPath(p.path))
		if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("commit: %w; the transaction's changes are not committed", err)
	}
	if err := w.writeFile(); err != nil {
		return p.undoRollback(err)
	}
	if err := p.fs.Remove(JournalPath(p.path)); err != nil {
		return p.undoRollback(err)
	}
	// Committed: the file holds the transaction, and no journal.
	err = p.publishRollback(w)
	if p.opts.Sync == SyncFull {
		// The deletion made durable, as synchronous=EXTRA does: a power
		// loss must not bring the journal back, whose rollback would undo
		// the commit. Tried twice: the commit cannot be taken back now.
		if derr := p.syncDir(); derr != nil {
			if derr = p.syncDir(); derr != nil {
				err = errors.Join(err, fmt.Errorf("commit: the transaction is committed, but syncing the directory failed, so a power loss may undo it: %w", derr))
			}
		}
	}
	return err
}

// exclusiveRollback takes EXCLUSIVE for a commit (rule 36): PENDING first,
// so that no reader begins, in any connection (this pager's snapshots wait
// too), then the SHARED range once the readers there have gone, waiting up
// to Options.Timeout; then an error wrapping ErrBusy. The transaction's
// own snapshot is the one reader it does not wait for.
func (p *Pager) exclusiveRollback() error {
	rb := p.rb
	p.mu.Lock()
	rb.pending = true
	p.mu.Unlock()
	deadline := time.Now().Add(p.opts.Timeout)
	pause := 100 * time.Microsecond
	for {
		p.mu.Lock()
		var err error
		switch {
		case rb.readers > rb.own:
			err = errOwnReaders
		case rb.perTx:
			if err = p.f.Lock(vfs.LockPending); err == nil {
				err = p.f.Lock(vfs.LockExclusive)
			}
		}
		p.mu.Unlock()
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrLocked) && !errors.Is(err, errOwnReaders) {
			return fmt.Errorf("lock %s: %w", p.path, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			who := "read transactions of other connections hold it"
			if errors.Is(err, errOwnReaders) {
				who = "read transactions of this pager hold it"
			}
			return fmt.Errorf("%s: %s (waited %v): %w", p.path, who, p.opts.Timeout, ErrBusy)
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, busyRetryMax)
	}
}

// writeFile writes w's pages into the database file in page order, makes
// the file exactly the transaction's size (cut, or extended over pages
// never written), and syncs it (rule 38). EXCLUSIVE is held.
func (w *WriteTx) writeFile() error {
	p := w.p
	runs := p.runs()
	runs.writeback = true // the journal is synced; the file's sync follows
	var err error
	w.pages.each(func(pgno uint32, s *pageSlot) {
		if err == nil && pgno <= w.nPages {
			err = runs.add(pgno, s.buf)
		}
	})
	if ferr := runs.flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	want := int64(w.nPages) * int64(p.pageSize)
	size, err := p.f.Size()
	if err != nil {
		return err
	}
	if size != want {
		if err := p.f.Truncate(want); err != nil {
			return err
		}
	}
	return p.syncDB()
}

// publishRollback takes up the commit of w (the file holds it): the
// mapping covers the new size, snapshots from here on see it, and its
// header's bytes and the file's size are those learnt (rule 34).
func (p *Pager) publishRollback(w *WriteTx) error {
	n := w.nPages
	var err error
	if n < p.dbPagesNow() {
		p.mu.Lock()
		p.dbPages = n
		p.mu.Unlock()
		p.db.Truncate(int(n)*p.pageSize, &p.mu)
	}
	if n > p.dbPagesNow() || vfs.MapCopies {
		err = p.growDBMap(n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	rb := p.rb
	p.nPages = n
	p.stats.Commits++
	if s1 := w.pages.get(1); s1 != nil && s1.buf != nil && err == nil {
		rb.vers = fileVers{hdr: [16]byte(s1.buf[24:40]), size: int64(n) * int64(p.pageSize)}
		rb.known = true
	} else {
		rb.known = false
	}
	return err
}

// undoRollback rolls back a commit that failed after it may have written
// the database file (rule 39): the journal, synced and valid, is played
// back as a hot one is, under the EXCLUSIVE lock the commit holds. If that
// fails too, the journal stays, hot once the lock goes, and the pager's
// next snapshot rolls it back first.
func (p *Pager) undoRollback(err error) error {
	rerr := p.recoverJournal()
	p.afterPlayback(rerr)
	if rerr != nil {
		return fmt.Errorf("commit: %w; the transaction's changes are not committed, and rolling them back failed (%v): the journal rolls them back before the next read", err, rerr)
	}
	return fmt.Errorf("commit: %w; the transaction's changes are not committed (rolled back)", err)
}
