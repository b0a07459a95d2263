package pager

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
	"github.com/pagodadb/pagoda/internal/wal"
)

// CheckpointMode is how far a checkpoint goes, as sqlite3_wal_checkpoint_v2's
// modes: all of them copy what no reader needs from the WAL into the
// database file.
type CheckpointMode uint8

const (
	// CheckpointPassive copies what it can without waiting for anyone.
	CheckpointPassive CheckpointMode = iota
	// CheckpointFull waits (up to Options.Timeout) for writers to finish
	// and for readers of older commits to move on, then copies every frame.
	CheckpointFull
	// CheckpointRestart is Full, and then waits for every reader of the
	// WAL to finish, so that the next commit starts the WAL over.
	CheckpointRestart
	// CheckpointTruncate is Restart, and then cuts the WAL file to 0 bytes.
	CheckpointTruncate
)

// CheckpointResult is what a checkpoint leaves: the frames the WAL holds
// and how many of them are in the database file.
type CheckpointResult struct {
	Frames, Copied uint32
}

// Checkpoint copies committed WAL frames into the database file, never past
// the oldest live snapshot, in any connection (whose pages must not change
// under it), and syncs the file; mode says how long it waits for others
// (CheckpointMode). A mode other than CheckpointPassive that cannot do all
// it asks within Options.Timeout returns what it did and an error wrapping
// ErrBusy. It waits for this pager's write transaction to end.
func (p *Pager) Checkpoint(mode CheckpointMode) (CheckpointResult, error) {
	if p.readOnly {
		return CheckpointResult{}, ErrReadOnly
	}
	if p.rb != nil {
		return CheckpointResult{}, nil // no WAL (rule 40)
	}
	p.writer.Lock()
	defer p.writer.Unlock()
	if p.sh != nil {
		return p.checkpointShared(mode)
	}
	err := p.checkpoint()
	if err == nil && mode == CheckpointTruncate {
		err = p.truncateWAL()
	}
	return p.checkpointResult(), err
}

// checkpointResult reports the WAL's frames and those copied.
func (p *Pager) checkpointResult() CheckpointResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wal == nil {
		return CheckpointResult{}
	}
	return CheckpointResult{Frames: p.wal.Log().MaxFrame, Copied: p.wal.Backfilled()}
}

// truncateWAL cuts the WAL file to 0 bytes when the database file holds
// all of it and no snapshot reads it: the next commit writes a new header.
func (p *Pager) truncateWAL() error {
	p.mu.Lock()
	ok := p.wal != nil && p.wal.Backfilled() == p.wal.Log().MaxFrame && p.walReaders == 0
	if ok {
		p.restarts++
	}
	p.mu.Unlock()
	if !ok {
		return nil
	}
	return p.wal.Truncate()
}

func (p *Pager) checkpoint() error {
	p.mu.Lock()
	if p.closed || p.wal == nil {
		p.mu.Unlock()
		return nil
	}
	l := p.wal.Log()
	safe := min(l.MaxFrame, p.oldestMark())
	from := p.wal.Backfilled()
	walData := p.wal.Data()
	nPages := p.nPages
	p.mu.Unlock()
	if safe <= from {
		return nil
	}
	if err := p.copyFrames(l, walData, from, safe, nPages, safe == l.MaxFrame); err != nil {
		return err
	}
	p.wal.SetBackfilled(safe)
	p.count(func(s *Stats) { s.Checkpoints++ })
	return nil
}

// copyFrames copies into the database file, for every page changed by the
// frames in (from, safe] of log l (mapped as walData), its newest frame at
// or before safe, then syncs the file; all says that safe is the last
// commit, whose size (nPages) the file then takes.
func (p *Pager) copyFrames(l *wal.Log, walData []byte, from, safe, nPages uint32, all bool) error {
	// The frames must be durable before the database file changes:
	// were they lost in a crash afterwards, an older prefix of them would
	// be replayed over newer pages. A WAL this pager synced at every
	// commit is; one that SyncNormal wrote, or that Open found (its writer
	// may have crashed before syncing), is synced now, as sqlite3 does
	// before every checkpoint.
	if err := p.wal.SyncCommitted(); err != nil {
		return err
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
	if !all {
		size = 0 // the file only grows to cover what is copied
	}
	runs := p.runs()
	runs.writeback = true
	for _, op := range ops {
		if err := runs.add(op.pgno, l.FrameData(walData, op.frame)); err != nil {
			return err
		}
		size = max(size, op.pgno)
	}
	if err := runs.flush(); err != nil {
		return err
	}
	p.count(func(s *Stats) { s.Copied += uint64(len(ops)) })
	if all {
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
	if err := p.syncDB(); err != nil {
		return err
	}
	if size > p.dbPagesNow() || vfs.MapCopies {
		if err := p.growDBMap(size); err != nil {
			return err
		}
	}
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

// closeWAL checkpoints everything and, when the WAL is then entirely in the
// database file, removes it, as sqlite3 does when its last connection
// closes. Called by Close with no snapshot alive.
func (p *Pager) closeWAL() error {
	if p.sh != nil {
		return p.closeSharedWAL()
	}
	if p.readOnly || p.wal == nil {
		return nil
	}
	p.writer.Lock()
	defer p.writer.Unlock()
	// A failed commit may still be valid in the WAL: try again to make it
	// invalid.
	if err := p.wal.RetrySpoil(); err != nil {
		return fmt.Errorf("close: the WAL may still hold a transaction whose commit failed: %w", err)
	}
	if !p.wstate.wrote {
		// A WAL this process did not write stays as it was found.
		return nil
	}
	if err := p.checkpoint(); err != nil {
		return closeCheckpointError(err)
	}
	p.mu.Lock()
	done := p.wal.Backfilled() == p.wal.Log().MaxFrame
	p.mu.Unlock()
	if !done {
		return nil
	}
	if err := p.fs.Remove(WALPath(p.path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return closeCheckpointError(err)
	}
	// A -shm file (left by sqlite3, or by a read-only pager, shm.go) goes
	// with the WAL, as sqlite3's last connection removes it: the pager's
	// EXCLUSIVE lock means that no sqlite3 connection is reading the file.
	if err := p.fs.Remove(shmPath(p.path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// closeCheckpointError is the error of a checkpoint at Close that failed
// after the commits were durable: it says they stand (ErrCheckpoint).
func closeCheckpointError(err error) error {
	return fmt.Errorf("close: %w: %w", format.ErrCheckpoint, err)
}
