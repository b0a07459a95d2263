package pager

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// Hot rollback journals. A database in rollback-journal mode that sqlite3
// was writing when it crashed may hold pages of the unfinished transaction,
// whose originals wait in <db>-journal (format.ParseJournal). sqlite3 rolls
// such a hot journal back before it reads anything, and so does Open:
//
//   - a writable pager (which holds EXCLUSIVE) plays it back as sqlite3
//     does: the original pages written into the file, the file truncated
//     to its size before the transaction and synced, the journal deleted
//     and the directory synced. A crash during that leaves the journal,
//     and playing it again gives the same file;
//   - a read-only pager cannot write, where sqlite3's read-only connection
//     refuses the file (SQLITE_READONLY_ROLLBACK). It reads the database
//     as the playback would leave it instead: the journal's pages over the
//     file's, and its size. The file and the journal stay as they are, and
//     the SHARED lock it holds keeps anyone from changing either.
//
// A journal is hot (pager.c: hasHotJournal) when it exists, its first
// byte is not zero (a journal_mode=PERSIST journal is zeroed at commit), no
// other connection holds the RESERVED lock (one that does is writing it
// now), and the database file is not empty (then the journal belongs to
// some earlier file and sqlite3 deletes it). A hot journal whose header is
// not valid is deleted unplayed, as is one whose transaction named a
// super-journal that no longer exists, or is empty, which sqlite3 takes
// for absent (that transaction committed). The rollback's size is the
// journal's, bounded by the original header's when valid; one that no
// database could have is corruption, and neither file is touched
// (rollbackSize).

// JournalPath returns the path of the rollback journal of the database at
// path.
func JournalPath(path string) string { return path + "-journal" }

// journalOverlay is what a read-only pager reads of a hot journal.
type journalOverlay struct {
	pages   map[uint32][]byte // the pages as they were, over the file's
	mapping []byte            // the journal, which pages alias; unmapped at Close
	nPages  uint32            // the database's size before the transaction
	records int               // records played back
}

// recoverJournal rolls back a hot journal (see above): in the file when the
// pager is writable, in p.journal when it is read-only.
func (p *Pager) recoverJournal() (err error) {
	jpath := JournalPath(p.path)
	jf, err := p.fs.OpenFile(jpath, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", jpath, err)
	}
	data, hot, err := p.readHotJournal(jf)
	if cerr := jf.Close(); err == nil {
		err = cerr
	}
	if err != nil || !hot {
		return errors.Join(err, p.fs.Unmap(data))
	}
	// The journal is mapped, not read: a legitimate one can hold as many
	// pages as the database. A read-only pager's overlay reads its pages
	// until Close; otherwise the mapping goes once the journal is done.
	keep := false
	defer func() {
		if !keep {
			if uerr := p.fs.Unmap(data); err == nil {
				err = uerr
			}
		}
	}()
	dbSize, err := p.f.Size()
	if err != nil {
		return err
	}
	if dbSize == 0 {
		// A journal beside an empty database is left from another file.
		return p.removeJournal()
	}
	var hdr [format.HeaderSize]byte
	dbPageSize := 0
	if n, _ := p.f.ReadAt(hdr[:], 0); n == len(hdr) {
		dbPageSize = format.Header(hdr[:]).PageSize()
	}
	j, ok := format.ParseJournal(data, dbPageSize)
	if ok && j.Super != "" {
		// sqlite3 takes an empty file for an absent one (unixAccess).
		if fi, err := p.fs.Stat(j.Super); errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			ok = false // the transaction committed in every database
		} else if err != nil {
			return fmt.Errorf("%s names super-journal %s: %w", jpath, j.Super, err)
		}
	}
	if !ok {
		return p.removeJournal()
	}
	if j.DBPages, err = rollbackSize(&j, hdr[:], dbSize); err != nil {
		return fmt.Errorf("%s: %w", jpath, err)
	}
	if p.readOnly {
		o := &journalOverlay{pages: make(map[uint32][]byte, len(j.Pages)), nPages: j.DBPages, records: len(j.Pages)}
		for _, pg := range j.Pages {
			o.pages[pg.Pgno] = pg.Data // in journal order, as playJournal writes them
		}
		if j.PageSize != dbPageSize {
			return fmt.Errorf("%w: %s rolls back a change of page size (%d to %d); open the database writable to roll it back", format.ErrUnsupported, jpath, dbPageSize, j.PageSize)
		}
		o.mapping = data
		p.journal = o
		keep = true
		return nil
	}
	return p.playJournal(&j)
}

// rollbackSize returns the size in pages of the database that rolling back
// hot journal j leaves, the file's first bytes being hdr and its size
// fileSize: the journal's original size, unless the original page 1 (the
// journal's, else the file's) has a valid size smaller than it, which is
// the database's as SQLite's b-tree layer reads it, pages past it reached
// by no tree. A size that no database could have is an error wrapping
// ErrCorrupt that names page 1: past the file's end, the pages the
// journal does not hold read as zeros, and the only pages whose content
// SQLite overwrites or truncates without journaling it are freelist leaves
// (pager.c's design notes: "overwriteable"), so the database holds at most
// the file's pages, the journal's and the freelist's. A damaged original
// size with a header that does not vouch for its size asked for 2^32-1
// pages (a playback would have grown the file to 16 TiB).
func rollbackSize(j *format.Journal, hdr []byte, fileSize int64) (uint32, error) {
	for _, pg := range j.Pages {
		if pg.Pgno == 1 {
			hdr = pg.Data // the last record wins, as in the playback
		}
	}
	size := j.DBPages
	if len(hdr) < format.HeaderSize {
		return size, nil
	}
	h := format.Header(hdr)
	if h.SizeIsValid() && h.DatabaseSize() < size {
		size = h.DatabaseSize()
	}
	most := uint64(fileSize)/uint64(j.PageSize) + uint64(len(j.Pages)) + uint64(h.FreelistCount())
	if uint64(size) > most {
		return 0, format.Corruptf(1, "the hot journal gives %d pages; the file, the journal and the freelist hold at most %d", size, most)
	}
	return size, nil
}

// readHotJournal reports whether the journal open in jf is hot, and maps it
// whole when it is (release the mapping with p.fs.Unmap).
func (p *Pager) readHotJournal(jf vfs.File) (data []byte, hot bool, err error) {
	size, err := jf.Size()
	if err != nil || size == 0 {
		return nil, false, err
	}
	var first [1]byte
	if _, err := jf.ReadAt(first[:], 0); err != nil {
		return nil, false, err
	}
	if first[0] == 0 {
		return nil, false, nil
	}
	if p.readOnly && vfs.FileLocks {
		// Is another connection writing the journal now? It holds
		// RESERVED (a writable pager holds EXCLUSIVE, so no one does).
		// Such a journal holds only pages as the file has them: until
		// that writer has EXCLUSIVE, which the pager's SHARED lock keeps
		// from it, it writes nothing into the file. So the test only
		// saves reading the journal, and it is made only where the
		// pager's locks are its own (on Linux): with POSIX locks, which
		// belong to the process, releasing the test's lock would release
		// another connection's RESERVED in this process.
		if err := p.f.LockRange(vfs.ReservedByte, 1, false); err != nil {
			if errors.Is(err, ErrLocked) {
				return nil, false, nil
			}
			return nil, false, err
		}
		if err := p.f.UnlockRange(vfs.ReservedByte, 1); err != nil {
			return nil, false, err
		}
	}
	if size > int64(^uint(0)>>1) {
		return nil, false, fmt.Errorf("%w: rollback journal of %d bytes", format.ErrUnsupported, size)
	}
	if data, err = jf.Map(int(size)); err != nil {
		return nil, false, fmt.Errorf("map %s: %w", jf.Name(), err)
	}
	return data, true, nil
}

// playJournal writes j's pages back into the database file, truncates it to
// j's size, syncs it and deletes the journal.
func (p *Pager) playJournal(j *format.Journal) error {
	ps := int64(j.PageSize)
	for _, pg := range j.Pages {
		if _, err := p.f.WriteAt(pg.Data, int64(pg.Pgno-1)*ps); err != nil {
			return fmt.Errorf("roll back %s: %w", JournalPath(p.path), err)
		}
	}
	if err := p.f.Truncate(int64(j.DBPages) * ps); err != nil {
		return fmt.Errorf("roll back %s: %w", JournalPath(p.path), err)
	}
	// Durable before the journal goes: until then a crash plays it again.
	if err := p.f.Sync(); err != nil {
		return err
	}
	p.count(func(s *Stats) { s.Syncs++ })
	return p.removeJournal()
}

// removeJournal deletes the journal, durably. A read-only pager leaves it
// to a writer.
func (p *Pager) removeJournal() error {
	if p.readOnly {
		return nil
	}
	if err := p.fs.Remove(JournalPath(p.path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return p.syncDir()
}

// JournalRecords reports, for a read-only pager, how many pages of a hot
// rollback journal it reads over the file's (0 without one).
func (p *Pager) JournalRecords() int {
	if p.rb != nil && p.rb.overlay != nil {
		return p.rb.overlay.records
	}
	if p.journal == nil {
		return 0
	}
	return p.journal.records
}

// journalPage returns page pgno as a read-only pager's hot journal restores
// it, or nil.
func (p *Pager) journalPage(pgno uint32) []byte {
	if p.journal == nil {
		return nil
	}
	return p.journal.pages[pgno]
}
