package pager

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
	"github.com/pagodadb/pagoda/internal/wal"
)

// walToRollback converts the WAL-mode database the pager opens into a
// rollback-journal one (Options.JournalMode JournalDelete), as sqlite3's
// PRAGMA journal_mode=DELETE does (pager.c: sqlite3PagerCloseWal, then
// sqlite3BtreeSetVersion), rule 44:
//
//  1. It takes EXCLUSIVE on the database file, which no other connection
//     holding the file (every WAL-mode one holds SHARED while open) lets
//     it have: after Options.Timeout, an error wrapping ErrBusy.
//  2. It recovers the WAL's committed frames, syncs them, copies the
//     newest frame of each page into the database file, cuts the file to
//     the last commit's size and syncs it.
//  3. It removes the WAL and the -shm file, and syncs the directory: a
//     crash before this leaves a WAL-mode database that holds every
//     commit.
//  4. It writes the header with file format 1 (bytes 18 and 19), the
//     change counter and version-valid-for up by one, and syncs it.
//
// hdr holds the file's first bytes; the pager holds SHARED and, when it
// returns nil, EXCLUSIVE.
func (p *Pager) walToRollback(hdr []byte) error {
	if err := format.ValidateLayout(hdr); err != nil {
		return err
	}
	if err := p.lock(vfs.LockExclusive); err != nil {
		if errors.Is(err, ErrLocked) {
			return fmt.Errorf("%s is open in another connection: a WAL-mode database becomes a rollback-journal one only alone, as with sqlite3's PRAGMA journal_mode=DELETE: %w", p.path, ErrBusy)
		}
		return err
	}
	ps := format.Header(hdr).PageSize()
	w, err := wal.Open(p.fs, WALPath(p.path), wal.Options{PageSize: ps, NoSync: p.opts.Sync == SyncOff, Lock: &p.mu})
	if err != nil {
		return fmt.Errorf("convert %s to a rollback journal: %w", p.path, err)
	}
	if w != nil {
		err = p.copyWAL(w, ps)
		err = errors.Join(err, w.Close())
		if err != nil {
			return fmt.Errorf("convert %s to a rollback journal: %w", p.path, err)
		}
	}
	for _, name := range []string{WALPath(p.path), shmPath(p.path)} {
		if err := p.fs.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("convert %s to a rollback journal: %w", p.path, err)
		}
	}
	if err := p.syncDir(); err != nil {
		return err
	}
	var h [format.HeaderSize]byte
	if _, err := p.f.ReadAt(h[:], 0); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if err := format.ValidateLayout(h[:]); err != nil {
		return err
	}
	fh := format.Header(h[:])
	fh.SetFileFormat(format.FileFormatLegacy)
	c := fh.ChangeCounter() + 1
	fh.SetChangeCounter(c)
	fh.SetVersionValidFor(c)
	fh.SetSQLiteVersion(format.SQLiteVersionNumber)
	if _, err := p.f.WriteAt(h[:], 0); err != nil {
		return err
	}
	return p.syncDB()
}

// copyWAL copies the newest committed frame of every page of WAL w into
// the database file (page size ps), cuts the file to the last commit's
// size and syncs it; the WAL's frames are synced first, as a checkpoint
// syncs them (copyFrames). EXCLUSIVE is held.
func (p *Pager) copyWAL(w *wal.File, ps int) error {
	l := w.Log()
	if l.MaxFrame == 0 {
		return nil
	}
	if err := w.SyncCommitted(); err != nil {
		return err
	}
	data := w.Data()
	seen := make(map[uint32]bool)
	for f := l.MaxFrame; f > 0; f-- {
		pg := l.Index.PageOf(f)
		if seen[pg] || pg > l.DBSize {
			continue
		}
		seen[pg] = true
		if _, err := p.f.WriteAt(l.FrameData(data, f), int64(pg-1)*int64(ps)); err != nil {
			return err
		}
	}
	if err := p.f.Truncate(int64(l.DBSize) * int64(ps)); err != nil {
		return err
	}
	return p.syncDB()
}
