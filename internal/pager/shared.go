package pager

import (
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"
	"time"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
	"github.com/pagodadb/pagoda/internal/wal"
)

// Sharing a WAL-mode database with other connections: sqlite3 processes,
// other pagoda processes, other pagers of this one. The rules are in
// doc.go (23 to 31); this file keeps them.

// ErrBusy is the error, wrapped, of a write transaction or checkpoint that
// could not take the locks it needs in time.
var ErrBusy = format.ErrBusy

// writeGrace is the least a write transaction waits for WRITE, even with
// a Timeout of 0: a sqlite3 reader that meets a header being written takes
// WRITE for a moment to read it again (walIndexReadHdr), and a writer
// should not fail for that.
const writeGrace = 10 * time.Millisecond

// busyRetryMax is the longest pause between two attempts at a lock held
// elsewhere.
const busyRetryMax = 20 * time.Millisecond

// errRetry says that the shared state changed under an attempt, which
// starts over (wal.c's WAL_RETRY).
var errRetry = errors.New("the wal-index changed: retry")

// readSlot is one READ(i) lock byte as this pager holds it.
type readSlot struct {
	held bool // READ(i) is held shared
	refs int  // live snapshots reading by it
	// used is set when a snapshot stops reading by it while the pager is
	// alone; releaseIdle clears it, and releases the slot that stayed
	// unused since.
	used bool
}

// idleSlotHold is how long a read slot no snapshot uses stays held while
// the pager is alone on the database (rule 25): back-to-back read
// transactions take it up again without a system call. aloneProbe is how
// often at most the pager asks again whether it is alone, and aloneDrops
// how many read transactions end between two looks at the clock for it
// (a look costs as much as a short read transaction).
const (
	idleSlotHold = 20 * time.Millisecond
	aloneProbe   = time.Millisecond
	aloneDrops   = 64
)

// shared is a pager's part in the wal-index protocol. Its fields are
// guarded by the pager's mu, but for write, which belongs to the writer.
type shared struct {
	x     *walIndex
	info  walCkptInfo
	hdr   walIndexHdr      // the header as this pager last read or wrote it
	raw   [hdrWords]uint32 // hdr's words (hdrWordsEqual)
	fresh bool             // hdr has been read or written since Open
	// sizeCheck: the size adopted is a commit frame's, which page 1 may
	// bound (boundSize).
	sizeCheck bool
	// backfill is nBackfill as this pager last saw it: when it moves,
	// another connection's checkpoint may have grown or cut the file.
	backfill uint32
	slots    [shmReaders]readSlot
	idle     *time.Timer // releases idle slots (releaseIdle)
	armed    bool        // idle is set to fire
	// alone is whether no other connection held DMS (rule 23) when the
	// pager last asked, at aloneAt.
	alone   bool
	aloneAt time.Time
	drops   int    // slots dropped since the last look at the clock (dropSlot)
	took    uint64 // READ locks taken (tryShared)
	// restarting keeps this pager's snapshots off READ(1..4) while it
	// restarts or empties the WAL (holdRestart).
	restarting bool
	write      atomic.Bool // WRITE is held (set and cleared by the writer)
}

// sharing reports whether the pager takes part in the wal-index protocol
// for the file: a WAL-mode database, where locks belong to the open file
// (Linux), unless Options.Exclusive asks for the file to itself.
func (p *Pager) sharing(walMode bool) bool {
	return walMode && vfs.FileLocks && !p.opts.Exclusive
}

// openShared opens the -shm file and takes the state it publishes (rules
// 23, 24). It runs from load, before anything else uses the pager.
func (p *Pager) openShared() error {
	deadline := time.Now().Add(max(p.opts.Timeout, shmPatience))
	pause := time.Millisecond
	var x *walIndex
	for {
		var err error
		x, _, err = openWalIndex(p.fs, p.path, p.sidePerm())
		if err == nil {
			break
		}
		if !errors.Is(err, ErrLocked) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, busyRetryMax)
	}
	p.ownSide(x.path)
	p.sh = &shared{x: x}
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		h, err := p.sharedHeader(time.Until(deadline))
		if err != nil {
			return err
		}
		if err := p.adopt(h); !errors.Is(err, errRetry) {
			return err
		}
	}
}

// closeShared lets go of the -shm file; remove as the last connection.
// p.mu is held (Close).
func (p *Pager) closeShared(remove bool) error {
	sh := p.sh
	if sh == nil {
		return nil
	}
	if sh.idle != nil {
		sh.idle.Stop()
	}
	var errs []error
	for i := range sh.slots {
		if sh.slots[i].held {
			errs = append(errs, sh.x.unlock(walLockRead(i), 1))
			sh.slots[i] = readSlot{}
		}
	}
	errs = append(errs, sh.x.close(remove))
	return errors.Join(errs...)
}

// sharedHeader returns the wal-index header (rule 24): it reads it, again
// while the two copies differ (a writer between them), and once they have
// differed past a moment, or say nothing was ever written, rebuilds the
// index from the WAL (recoverShared). p.mu is held.
func (p *Pager) sharedHeader(wait time.Duration) (walIndexHdr, error) {
	if p.sh.fresh && p.sh.x.hdrWordsEqual(&p.sh.raw) {
		return p.sh.hdr, nil
	}
	var deadline time.Time // from the first wait: no clock read otherwise
	pause := time.Duration(0)
	for tries := 0; ; tries++ {
		h, ok, err := p.sh.x.readHdr()
		if err != nil {
			return h, err
		}
		if ok {
			if p.sh.info.blk == nil {
				if p.sh.info, err = p.sh.x.ckptInfo(); err != nil {
					return h, err
				}
			}
			return h, nil
		}
		// Copies that differ are a writer between them: a moment. A header
		// never written (a first connection emptied the file, or none yet)
		// or whose checksum fails is rebuilt at once.
		if tries >= 8 || !p.sh.x.torn() {
			switch err := p.recoverShared(); {
			case err == nil:
				continue
			case !errors.Is(err, errRetry):
				return h, err
			}
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(wait)
		} else if time.Now().After(deadline) {
			return h, fmt.Errorf("%s: the wal-index stays torn or unwritten, and another connection holds what rebuilding it needs: %w", p.sh.x.path, ErrBusy)
		}
		p.mu.Unlock()
		if pause == 0 {
			time.Sleep(time.Microsecond)
			pause = time.Millisecond
		} else {
			time.Sleep(pause)
			pause = min(2*pause, busyRetryMax)
		}
		p.mu.Lock()
	}
}

// recoverShared rebuilds the wal-index from the WAL file (rule 26), taking
// WRITE (unless the writer holds it), CKPT and RECOVER; errRetry when
// another connection holds one of them. p.mu is held.
func (p *Pager) recoverShared() error {
	sh, x := p.sh, p.sh.x
	var took []walLock
	defer func() {
		for _, l := range took {
			_ = x.unlock(l, 1)
		}
	}()
	for _, l := range []walLock{walLockWrite, walLockCkpt, walLockRecover} {
		if l == walLockWrite && sh.write.Load() {
			continue
		}
		if err := x.lock(l, 1, true); err != nil {
			if errors.Is(err, ErrLocked) {
				return errRetry
			}
			return err
		}
		took = append(took, l)
	}
	// Another connection may have rebuilt it meanwhile.
	if _, ok, err := x.readHdr(); err != nil || ok {
		return err
	}
	log, err := p.walOnDisk()
	if err != nil {
		return err
	}
	_, err = x.recover(log, func(i int) bool { return sh.slots[i].held })
	if err == nil {
		sh.info, err = x.ckptInfo()
	}
	return err
}

// walOnDisk returns the committed log of the WAL file as it is now, read as
// recovery reads it (an empty log without a WAL).
func (p *Pager) walOnDisk() (*wal.Log, error) {
	f, err := wal.Open(p.fs, WALPath(p.path), wal.Options{ReadOnly: true, PageSize: p.pageSize, Lock: nopLock{}})
	if err != nil || f == nil {
		return &wal.Log{}, err
	}
	defer f.Close()
	return f.Log(), nil
}

// nopLock is a lock for a File no other goroutine sees.
type nopLock struct{}

func (nopLock) Lock()   {}
func (nopLock) Unlock() {}

// adopt makes the pager's view the state header h publishes (rule 24): the
// WAL's frames up to mxFrame (opening the WAL when the pager has none),
// the database size, and the database file's size when another
// connection's checkpoint may have changed it. p.mu is held.
func (p *Pager) adopt(h walIndexHdr) error {
	sh := p.sh
	// The WAL is read without a read slot here: another connection may
	// start it over or cut it after h was read, and the index then says
	// so (it is written first): the attempt starts over (errRetry).
	changed := func(err error) error {
		if raw := h.words(); !sh.x.hdrWordsEqual(&raw) {
			return errRetry
		}
		return err
	}
	if h.mxFrame > 0 && p.wal == nil {
		opts := p.walOptions()
		opts.Adopted = true
		w, err := wal.Open(p.fs, WALPath(p.path), opts)
		if err != nil {
			return err
		}
		if w == nil {
			return changed(format.Corruptf(0, "%s publishes %d WAL frames, and there is no WAL", sh.x.path, h.mxFrame))
		}
		p.wal = w
	}
	if p.wal != nil {
		if h.mxFrame > 0 && h.pageSize() != p.pageSize {
			return format.Corruptf(0, "%s: WAL page size %d, the database's is %d", sh.x.path, h.pageSize(), p.pageSize)
		}
		replaced, err := p.wal.Adopt(wal.Published{
			Salt1: h.salt[0], Salt2: h.salt[1],
			MaxFrame: h.mxFrame, DBSize: h.nPage,
			Cksum1: h.frameCksum[0], Cksum2: h.frameCksum[1],
			PageOf: sh.x.framePage,
		})
		if err != nil {
			return changed(err)
		}
		if replaced {
			p.restarts++
		}
	}
	backfill := uint32(0)
	if sh.info.blk != nil {
		backfill = min(sh.info.nBackfill(), h.mxFrame)
	}
	if p.wal != nil {
		p.wal.SetBackfilledLocked(backfill)
	}
	// Another connection's checkpoint may have grown the database file,
	// or cut it to the last commit: an fstat for each state taken up.
	if err := p.refreshDBFile(); err != nil {
		return err
	}
	if h.mxFrame > 0 {
		p.nPages = h.nPage
		sh.sizeCheck = true // tryShared, once it holds a slot
	} else if pg1 := p.db.Bytes(); len(pg1) >= format.HeaderSize && format.Header(pg1).SizeIsValid() {
		p.nPages = min(format.Header(pg1).DatabaseSize(), p.dbPages)
	} else {
		p.nPages = p.dbPages
	}
	sh.hdr, sh.raw, sh.fresh, sh.backfill = h, h.words(), true, backfill
	p.adopted++
	return nil
}

// refreshDBFile makes the mapping of the database file cover what the file
// holds now: another connection's checkpoint grows it, and cuts it to the
// last commit's size. No snapshot of this pager reads past the new end (a
// checkpoint cuts the file only up to the newest commit, which every reader
// then reads: rule 28). p.mu is held.
func (p *Pager) refreshDBFile() error {
	size, err := p.f.Size()
	if err != nil {
		return err
	}
	pages := uint32(size / int64(p.pageSize))
	if pages > p.dbPages || vfs.MapCopies {
		if err := p.db.Grow(p.f, int(pages)*p.pageSize, nopLock{}); err != nil {
			return fmt.Errorf("map %s: %w", p.path, err)
		}
	} else if pages < p.dbPages {
		p.db.Truncate(int(pages)*p.pageSize, nopLock{})
	}
	p.dbPages = pages
	return nil
}

// initShared is InitSnapshot for a shared pager (rule 25, walTryBeginRead):
// the latest header, adopted; a read slot whose mark no checkpoint passes;
// the header checked again once the slot is held.
func (p *Pager) initShared(s *Snapshot, writer bool) error {
	wait := max(p.opts.Timeout, time.Second)
	var deadline time.Time // from the first retry: no clock read otherwise
	pause := time.Duration(0)
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return fmt.Errorf("%s is closed", p.path)
		}
		err := p.tryShared(s, wait, writer)
		p.mu.Unlock()
		if !errors.Is(err, errRetry) {
			return err
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(wait)
		} else if time.Now().After(deadline) {
			return fmt.Errorf("%s: no read slot of the wal-index came free: %w", p.path, ErrBusy)
		}
		if pause == 0 {
			pause = 50 * time.Microsecond
		} else {
			time.Sleep(pause)
			pause = min(2*pause, busyRetryMax)
		}
	}
}

// tryShared is one attempt of initShared; writer says s is the snapshot of
// the write transaction, begun with WRITE held. p.mu is held.
func (p *Pager) tryShared(s *Snapshot, wait time.Duration, writer bool) error {
	sh := p.sh
	h, err := p.sharedHeader(wait)
	if err != nil {
		return err
	}
	if h != sh.hdr || !sh.fresh {
		if err := p.adopt(h); err != nil {
			return err
		}
	}
	slot := writerSlot
	if !writer {
		took := sh.took
		if slot, err = p.takeSlot(h); err != nil {
			return err
		}
		// A slot taken now: read the header again, as a writer may have
		// restarted the WAL or a checkpoint passed the mark before it was
		// held. A slot held all along has kept both out since h was read.
		if sh.took != took && !sh.x.hdrWordsEqual(&sh.raw) {
			p.dropSlot(slot)
			return errRetry
		}
	} else if h.mxFrame != sh.info.nBackfill() {
		slot = writerSlotWAL
	} else if err := p.takeBackfill(); err != nil {
		return err
	}
	*s = Snapshot{
		p:        p,
		data:     p.db.Bytes(),
		dbPages:  p.dbPages,
		nPages:   p.nPages,
		pageSize: p.pageSize,
		usable:   p.usable,
		slot:     slot,
	}
	s.commits, s.restarts, s.adopted = p.stats.Commits, p.restarts, p.adopted
	if slot > 0 || slot == writerSlotWAL {
		w := p.wal
		s.log, s.walData, s.maxFrame = w.Log(), w.Data(), h.mxFrame
		s.mark = h.mxFrame
		p.walReaders++
	}
	if sh.sizeCheck {
		p.boundSize(s)
		sh.sizeCheck = false
	}
	p.marks.add(s.mark)
	s.live = true
	return nil
}

// boundSize makes the size page 1 gives, when valid, bound the size of
// the commit just adopted, as SQLite's b-tree layer takes it (lockBtree;
// Open does the same): pages past it in the file, which a transaction
// that spilled (spillDirect) and then rolled back or crashed leaves, are
// not the database's, though sqlite3's commit frames count them when they
// follow an empty WAL (it then takes the file's size). s holds its slot,
// so page 1 reads safely; p.mu is held.
func (p *Pager) boundSize(s *Snapshot) {
	pg1, err := s.Page(1)
	if err != nil || len(pg1) < format.HeaderSize || !format.Header(pg1).SizeIsValid() {
		return
	}
	if n := format.Header(pg1).DatabaseSize(); n < s.nPages {
		s.nPages, p.nPages = n, n
	}
}

// The slot of a write transaction's snapshot, taken while its pager holds
// WRITE: none (rule 27). No other connection can commit, restart the WAL
// or truncate it meanwhile, and a checkpoint can copy no frame past the
// last commit, which the snapshot reads from the WAL: a read mark would
// protect nothing, and setting one costs two lock calls a commit.
// writerSlot reads the database file alone (every frame is in it),
// writerSlotWAL reads the WAL as well.
const (
	writerSlot    = -1
	writerSlotWAL = -2
)

// takeSlot takes a read slot for a snapshot of header h (rule 25) and
// returns it: READ(0) when the database file holds every frame, else a
// READ(i) whose mark is at most mxFrame, set to mxFrame where a slot can be
// had. A slot this pager already holds at the right mark is taken up with
// no system call. errRetry when none can be had now. p.mu is held.
func (p *Pager) takeSlot(h walIndexHdr) (int, error) {
	sh := p.sh
	info, x := sh.info, sh.x
	if h.mxFrame == info.nBackfill() {
		if err := p.holdSlot(0); err != nil {
			return 0, err
		}
		// READ(0), held, keeps copies out now.
		if err := p.takeBackfill(); err != nil {
			p.dropSlot(0)
			return 0, err
		}
		return 0, nil
	}
	if sh.restarting {
		return 0, errRetry // see holdRestart
	}
	for i := 1; i < shmReaders; i++ {
		if sh.slots[i].held && info.readMark(i) == h.mxFrame {
			sh.slots[i].refs++
			return i, nil
		}
	}
	best, mark := 0, uint32(0)
	for i := 1; i < shmReaders; i++ {
		if m := info.readMark(i); m != readMarkNotUsed && mark <= m && m <= h.mxFrame {
			best, mark = i, m
		}
	}
	if best == 0 || mark < h.mxFrame {
		// Set a slot to mxFrame: one no snapshot of ours reads by.
		for i := 1; i < shmReaders; i++ {
			if sh.slots[i].refs > 0 {
				continue
			}
			sh.took++
			if err := x.lock(walLockRead(i), 1, true); err != nil {
				if errors.Is(err, ErrLocked) {
					continue
				}
				return 0, err
			}
			info.setReadMark(i, h.mxFrame)
			if err := x.lock(walLockRead(i), 1, false); err != nil {
				sh.slots[i].held = false
				_ = x.unlock(walLockRead(i), 1)
				return 0, err
			}
			sh.slots[i].held = true
			best, mark = i, h.mxFrame
			break
		}
	}
	if best == 0 {
		return 0, errRetry
	}
	if err := p.holdSlot(best); err != nil {
		return 0, err
	}
	if info.readMark(best) != mark {
		p.dropSlot(best)
		return 0, errRetry
	}
	return best, nil
}

// takeBackfill takes up the checkpoints of other connections since this
// pager last looked, which copied frames into the file and may have grown
// it: nBackfill says so, the header does not. A snapshot that reads the
// file alone calls it once no copy can run (READ(0) held, or WRITE with
// every frame copied). p.mu is held.
func (p *Pager) takeBackfill() error {
	sh := p.sh
	b := sh.info.nBackfill()
	if b == sh.backfill {
		return nil
	}
	if err := p.refreshDBFile(); err != nil {
		return err
	}
	if p.wal != nil {
		p.wal.SetBackfilledLocked(b)
	}
	sh.backfill = b
	return nil
}

// holdRestart keeps this pager's snapshots off READ(1..4) while it starts
// the WAL over or empties it (restartShared, waitReaders): the locks it
// takes for that belong to the same open file as its readers' and do not
// stop them, and its unlock would drop theirs. Readers retry meanwhile
// (holdSlot, takeSlot), or read the file alone by READ(0). p.mu is held.
func (p *Pager) holdRestart() { p.sh.restarting = true }

// endRestart lets this pager's snapshots take READ(1..4) again.
func (p *Pager) endRestart() {
	p.mu.Lock()
	p.sh.restarting = false
	p.mu.Unlock()
}

// holdSlot takes READ(i) shared, unless held already, and counts a
// snapshot on it: not READ(1..4) while this pager restarts the WAL
// (holdRestart). p.mu is held.
func (p *Pager) holdSlot(i int) error {
	if i > 0 && p.sh.restarting {
		return errRetry
	}
	sl := &p.sh.slots[i]
	if !sl.held {
		p.sh.took++
		if err := p.sh.x.lock(walLockRead(i), 1, false); err != nil {
			if errors.Is(err, ErrLocked) {
				return errRetry
			}
			return err
		}
		sl.held = true
	}
	sl.refs++
	return nil
}

// dropSlot counts a snapshot off slot i. Once no snapshot reads by it,
// READ(i) goes at once, as sqlite3 ends a read transaction, when another
// connection has the database open: held between read transactions it
// would keep that connection's checkpoints waiting (FULL for a mark
// behind, RESTART and TRUNCATE for any) as long as this pager reads. A
// pager alone keeps it idleSlotHold (releaseIdle), so that the next read
// transaction takes it up with no system call. p.mu is held.
func (p *Pager) dropSlot(i int) {
	sh := p.sh
	sl := &sh.slots[i]
	sl.refs--
	if sl.refs > 0 {
		return
	}
	alone := sh.alone
	if sh.drops++; sh.drops >= aloneDrops || !alone {
		sh.drops = 0
		alone = p.alone()
	}
	if !alone {
		_ = p.releaseSlot(i)
		return
	}
	sl.used = true
	if !sh.armed {
		sh.armed = true
		if sh.idle == nil {
			sh.idle = time.AfterFunc(idleSlotHold, p.releaseIdle)
		} else {
			sh.idle.Reset(idleSlotHold)
		}
	}
}

// alone reports whether the pager is the only connection to the
// database: whether no other open file holds the -shm file's DMS byte,
// which every connection holds shared (rule 23), as of a look at most
// aloneProbe old. p.mu is held.
func (p *Pager) alone() bool {
	sh := p.sh
	if now := time.Now(); now.Sub(sh.aloneAt) >= aloneProbe {
		held, err := sh.x.f.HeldElsewhere(shmOffDMS, 1)
		sh.alone, sh.aloneAt = err == nil && !held, now
	}
	return sh.alone
}

// releaseIdle releases the slots no snapshot has read by since its last
// run: a slot is released between idleSlotHold and twice that after its
// last reader ended.
func (p *Pager) releaseIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	sh := p.sh
	sh.armed = false
	if p.closed {
		return
	}
	again := false
	for i := range sh.slots {
		sl := &sh.slots[i]
		switch {
		case !sl.held || sl.refs > 0:
		case sl.used && p.alone():
			sl.used, again = false, true
		default:
			_ = p.releaseSlot(i)
		}
	}
	if again {
		sh.armed = true
		sh.idle.Reset(idleSlotHold)
	}
}

// releaseSlot lets READ(i) go, now; no snapshot may read by it. p.mu is
// held.
func (p *Pager) releaseSlot(i int) error {
	sl := &p.sh.slots[i]
	if !sl.held {
		return nil
	}
	sl.held = false
	return p.sh.x.unlock(walLockRead(i), 1)
}

// waitLock takes lock l (n bytes, shared or exclusive), trying again while
// another connection holds it until the pager's Timeout has passed: then
// an error wrapping ErrBusy. p.mu is not held.
func (p *Pager) waitLock(l walLock, n int, exclusive bool, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pause := 100 * time.Microsecond
	for {
		err := p.sh.x.lock(l, n, exclusive)
		if err == nil || !errors.Is(err, ErrLocked) {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%s: another connection holds the %s lock: %w", p.path, l, ErrBusy)
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, busyRetryMax)
	}
}

// takeWrite takes WRITE for a write transaction (rule 27), waiting up to
// the pager's Timeout. The caller holds the pager's writer lock.
func (p *Pager) takeWrite() error {
	if err := p.waitLock(walLockWrite, 1, true, max(p.opts.Timeout, writeGrace)); err != nil {
		return err
	}
	p.sh.write.Store(true)
	return nil
}

// releaseWrite lets WRITE go.
func (p *Pager) releaseWrite() {
	if p.sh != nil && p.sh.write.Load() {
		p.sh.write.Store(false)
		_ = p.sh.x.unlock(walLockWrite, 1)
	}
}

// restartShared starts the WAL over for the next frames when its every
// frame is in the database file and no reader, in any connection, reads
// by a mark past READ(0) (rule 27, walRestartLog): READ(1..4) held
// exclusively for the moment, the wal-index's header and marks say the WAL
// is empty, its header is written with new salts, then the index's header
// with them. It reports whether it did. The
// writer holds WRITE; p.mu is not held.
func (p *Pager) restartShared() (bool, error) {
	sh, x := p.sh, p.sh.x
	p.mu.Lock()
	h := sh.hdr
	valid := p.wal.Log().Valid
	// With nothing committed the WAL's header is written again whatever
	// it holds, as sqlite3's first frame writes it (sqlite3WalFrames): the
	// chain of checksums starts from it, not from the index's, which
	// recovery leaves at 0 for an empty log.
	if valid && h.mxFrame > 0 && sh.info.nBackfill() != h.mxFrame {
		p.mu.Unlock()
		return false, nil
	}
	for i := 1; i < shmReaders; i++ {
		if sh.slots[i].refs > 0 {
			// A snapshot of this pager reads the WAL. (Its lock would not
			// stop the one below: the index's own locks never conflict.)
			p.mu.Unlock()
			return false, nil
		}
		_ = p.releaseSlot(i)
	}
	p.holdRestart()
	p.mu.Unlock()
	defer p.endRestart()
	if h.mxFrame > 0 {
		if err := x.lock(walLockRead(1), shmReaders-1, true); err != nil {
			if errors.Is(err, ErrLocked) {
				return false, nil
			}
			return false, err
		}
		defer x.unlock(walLockRead(1), shmReaders-1)
		// The wal-index says first that the WAL is empty, as sqlite3's
		// walRestartHdr does before the WAL's header is written: a
		// connection that reads it meanwhile reads the file alone, and
		// does not find a header without the index's salts.
		p.mu.Lock()
		err := p.emptyShared(h)
		p.mu.Unlock()
		if err != nil {
			return false, err
		}
	}
	if err := p.wal.Restart(); err != nil {
		return false, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.wal.Log()
	h.mxFrame = 0
	h.salt = [2]uint32{l.Header.Salt1, l.Header.Salt2}
	h.frameCksum = [2]uint32{l.Cksum1, l.Cksum2}
	h.szPage = walIndexSzPage(p.pageSize)
	h.bigEndCksum = 0
	if l.Header.BigEndian() {
		h.bigEndCksum = 1
	}
	if err := p.emptyShared(h); err != nil {
		return false, err
	}
	p.restarts++
	return true, nil
}

// emptyShared publishes h, a header of an empty WAL (mxFrame 0), with
// nBackfill and the read marks as walRestartHdr leaves them. p.mu is held,
// and WRITE, and READ(1..4) exclusively.
func (p *Pager) emptyShared(h walIndexHdr) error {
	sh := p.sh
	h.mxFrame = 0
	h, err := sh.x.writeHdr(h)
	if err != nil {
		return err
	}
	sh.info.setNBackfill(0)
	sh.info.setNBackfillAttempted(0)
	sh.info.setReadMark(1, 0)
	for i := 2; i < shmReaders; i++ {
		sh.info.setReadMark(i, readMarkNotUsed)
	}
	sh.hdr, sh.raw, sh.backfill = h, h.words(), 0
	return nil
}

// publishShared makes a commit visible to every connection (rule 27,
// walIndexAppend and walIndexWriteHdr): each of its frames in the hash
// index, then the header. The frames are committed (durable); the regions
// they need were mapped before the commit point (reserveShared). p.mu is
// held, and WRITE.
func (p *Pager) publishShared(first, last, nPages uint32) error {
	sh, x := p.sh, p.sh.x
	l := p.wal.Log()
	for f := first; f <= last; f++ {
		if err := x.appendFrame(f, l.Index.PageOf(f)); err != nil {
			return err
		}
	}
	h := sh.hdr
	h.change++
	h.mxFrame, h.nPage = last, nPages
	h.frameCksum = [2]uint32{l.Cksum1, l.Cksum2}
	h.salt = [2]uint32{l.Header.Salt1, l.Header.Salt2}
	h.szPage = walIndexSzPage(p.pageSize)
	h.bigEndCksum = 0
	if l.Header.BigEndian() {
		h.bigEndCksum = 1
	}
	h, err := x.writeHdr(h)
	if err != nil {
		return err
	}
	sh.hdr, sh.raw = h, h.words()
	p.adopted++
	return nil
}

// reserveShared maps the index regions that frames up to last need, before
// a commit point: publishing then does not fail for want of memory.
func (p *Pager) reserveShared(last uint32) error {
	_, err := p.sh.x.block(walFramePage(last), true)
	return err
}

// checkpointShared is Checkpoint for a shared database (rule 28,
// walCheckpoint): with CKPT held, it brings every read mark it can to the
// last commit, copies the frames up to the oldest mark that readers hold
// (READ(0) held exclusively while it does, so that no reader of the file
// alone starts meanwhile), and records them in nBackfill. Modes other than
// passive wait for locks up to the pager's Timeout, hold WRITE (no commit
// moves the target), and, for Restart and Truncate, wait for every reader
// of the WAL to finish; Truncate then starts the WAL over and cuts its
// file. The caller holds the pager's writer lock; p.mu is not held.
func (p *Pager) checkpointShared(mode CheckpointMode) (res CheckpointResult, err error) {
	sh, x := p.sh, p.sh.x
	var wait time.Duration
	if mode != CheckpointPassive {
		wait = p.opts.Timeout
	}
	if err := p.waitLock(walLockCkpt, 1, true, wait); err != nil {
		return p.checkpointResult(), err
	}
	defer x.unlock(walLockCkpt, 1)
	if mode != CheckpointPassive && !sh.write.Load() {
		if err := p.takeWrite(); err != nil {
			return p.checkpointResult(), err
		}
		defer p.releaseWrite()
	}
	p.mu.Lock()
	h, err := p.sharedHeader(max(wait, shmPatience))
	if err == nil && h != sh.hdr {
		err = p.adopt(h)
	}
	if errors.Is(err, errRetry) {
		// A writer started the WAL over meanwhile (only a passive
		// checkpoint runs beside one): every frame was in the file.
		p.mu.Unlock()
		return p.checkpointResult(), nil
	}
	if err != nil {
		p.mu.Unlock()
		return p.checkpointResult(), err
	}
	info := sh.info
	safe := h.mxFrame
	// The marks behind the last commit: each moved up to it where its
	// slot is free, else the copy stops at it. This pager's own live
	// readers are among those it stops at.
	type behind struct {
		i    int
		mark uint32
	}
	var marks []behind
	for i := 1; i < shmReaders; i++ {
		y := info.readMark(i)
		if y >= safe {
			continue
		}
		if sl := &sh.slots[i]; sl.held {
			if sl.refs > 0 {
				safe = y
				continue
			}
			_ = p.releaseSlot(i)
		}
		marks = append(marks, behind{i, y})
	}
	for i := range sh.slots {
		if i == 0 && sh.slots[0].held && sh.slots[0].refs == 0 {
			_ = p.releaseSlot(0)
		}
	}
	own0 := sh.slots[0].refs > 0
	p.mu.Unlock()
	for _, m := range marks {
		if m.mark >= safe {
			continue
		}
		took, err := p.waitMark(m.i, safe, wait)
		if err != nil {
			if !errors.Is(err, ErrBusy) {
				return p.checkpointResult(), err
			}
			safe = m.mark
			continue
		}
		if !took {
			continue
		}
		mark := uint32(readMarkNotUsed)
		if m.i == 1 {
			mark = safe
		}
		info.setReadMark(m.i, mark)
		_ = x.unlock(walLockRead(m.i), 1)
	}
	var busy error
	from := min(info.nBackfill(), safe)
	if from < safe {
		if own0 {
			busy = fmt.Errorf("%s: this pager reads the database file: %w", p.path, ErrBusy)
		} else if err := p.waitLock(walLockRead(0), 1, true, wait); err != nil {
			busy = err
		} else {
			p.mu.Lock()
			l, walData, nPages := p.wal.Log(), p.wal.Data(), p.nPages
			p.mu.Unlock()
			info.setNBackfillAttempted(safe)
			err := p.copyFrames(l, walData, from, safe, nPages, safe == h.mxFrame)
			if err == nil {
				info.setNBackfill(safe)
				p.mu.Lock()
				p.wal.SetBackfilledLocked(safe)
				sh.backfill = safe
				p.mu.Unlock()
				p.count(func(s *Stats) { s.Checkpoints++ })
			}
			_ = x.unlock(walLockRead(0), 1)
			if err != nil {
				return p.checkpointResult(), err
			}
		}
	}
	if busy == nil && safe < h.mxFrame {
		busy = fmt.Errorf("%s: readers of older commits hold the WAL's frames after %d: %w", p.path, safe, ErrBusy)
	}
	if busy == nil && mode >= CheckpointRestart {
		busy = p.waitReaders(mode, wait)
	}
	res = p.checkpointResult()
	if mode == CheckpointPassive && errors.Is(busy, ErrBusy) {
		busy = nil // a passive checkpoint does what it can
	}
	return res, busy
}

// waitMark takes READ(i) exclusively, to move its mark, which is behind
// safe, trying again while another connection holds it until wait has
// passed (ErrBusy). It reports false, taking nothing, once the mark is
// safe or past it: the slot's holder moved it up itself (a pagoda reader
// keeps its slot across read transactions, so the lock may never come
// free), and every snapshot that reads by the slot reads that far.
func (p *Pager) waitMark(i int, safe uint32, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	pause := 100 * time.Microsecond
	for {
		err := p.sh.x.lock(walLockRead(i), 1, true)
		if err == nil || !errors.Is(err, ErrLocked) {
			return err == nil, err
		}
		if p.sh.info.readMark(i) >= safe {
			return false, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, fmt.Errorf("pager: %s: another connection holds the %s lock: %w", p.path, walLockRead(i), ErrBusy)
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, busyRetryMax)
	}
}

// waitReaders waits until no reader holds a mark on the WAL (READ(1..4)
// free), so that the next commit starts it over; for Truncate it then
// starts it over itself and cuts the file to 0 bytes (rule 28). The caller
// holds CKPT and WRITE, and every frame is in the database file.
func (p *Pager) waitReaders(mode CheckpointMode, wait time.Duration) error {
	sh, x := p.sh, p.sh.x
	p.mu.Lock()
	for i := 1; i < shmReaders; i++ {
		if sh.slots[i].refs > 0 {
			p.mu.Unlock()
			return fmt.Errorf("%s: this pager reads the WAL: %w", p.path, ErrBusy)
		}
		_ = p.releaseSlot(i)
	}
	p.holdRestart()
	p.mu.Unlock()
	defer p.endRestart()
	if err := p.waitLock(walLockRead(1), shmReaders-1, true, wait); err != nil {
		return err
	}
	defer x.unlock(walLockRead(1), shmReaders-1)
	if mode != CheckpointTruncate || p.wal == nil {
		return nil
	}
	p.mu.Lock()
	h := sh.hdr
	h.mxFrame = 0
	h.salt[0]++
	h, err := x.writeHdr(h)
	if err == nil {
		sh.info.setNBackfill(0)
		sh.info.setNBackfillAttempted(0)
		sh.info.setReadMark(1, 0)
		for i := 2; i < shmReaders; i++ {
			sh.info.setReadMark(i, readMarkNotUsed)
		}
		sh.hdr, sh.raw, sh.backfill = h, h.words(), 0
		p.restarts++
	}
	p.mu.Unlock()
	if err != nil {
		return err
	}
	return p.wal.Truncate()
}

// closeSharedWAL is Close's part for a shared database (rule 29): the last
// connection, the one that can lock the database file exclusively (every
// other connection holds SHARED), checkpoints the WAL whole and removes it
// and, once Close is done, the -shm file, as sqlite3's last connection
// does; a read-only one leaves them. Any other lets its locks go.
func (p *Pager) closeSharedWAL() error {
	p.writer.Lock()
	defer p.writer.Unlock()
	p.mu.Lock()
	for i := range p.sh.slots {
		if p.sh.slots[i].refs == 0 {
			_ = p.releaseSlot(i)
		}
	}
	p.mu.Unlock()
	if p.readOnly || p.f.Lock(vfs.LockExclusive) != nil {
		return nil
	}
	p.lastConn = true
	if p.wal == nil {
		return nil
	}
	if err := p.takeWrite(); err != nil {
		return err
	}
	defer p.releaseWrite()
	// A failed commit of this pager's may still be valid past the last
	// commit: nobody has written over it since (no connection is left).
	if err := p.wal.RetrySpoil(); err != nil {
		p.lastConn = false
		return fmt.Errorf("close: the WAL may still hold a transaction whose commit failed: %w", err)
	}
	if _, err := p.checkpointShared(CheckpointPassive); err != nil {
		p.lastConn = false
		return closeCheckpointError(err)
	}
	p.mu.Lock()
	done := p.wal.Backfilled() == p.wal.Log().MaxFrame
	p.mu.Unlock()
	if !done {
		p.lastConn = false
		return nil
	}
	if err := p.fs.Remove(WALPath(p.path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		p.lastConn = false
		return closeCheckpointError(err)
	}
	return nil
}
