package pager

import (
	"math/rand/v2"
	"os"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// A rollback-mode write transaction's journal, as sqlite3's pager writes
// it (pager.c: writeJournalHdr, pagerAddPageToRollbackJournal, syncJournal,
// pagerStress), and the spill that bounds the transaction's memory (rules
// 36, 37 and 41 to 43). The journal is a run of segments, each a header
// at a multiple of the 512-byte sector and its records:
//
//	segment 1: header (magic, nRec, nonce, size, sector, page size) | records
//	segment 2: header at the next multiple of 512                    | records
//	...
//
// A segment's magic and nRec are written only once its records are
// synced; a header still zero there ends a rollback's playback, so the
// records after the last synced header are never played. A page goes into
// the database file only once its record is in a synced segment.

// journalWriter is the journal of the write transaction, from its first
// spill or its commit on. It belongs to the writer.
type journalWriter struct {
	f     vfs.File
	orig  uint32 // the database's size in pages at the transaction's start
	nonce uint32 // the segment's checksum initializer
	hdr   int64  // the offset of the segment's header
	off   int64  // the end of the journal
	nRec  uint32 // records in the segment
	// synced: a segment is synced, and the database file may be written
	// (sqlite3's PAGER_WRITER_DBMOD); dbmod: a spill wrote it.
	synced, dbmod bool
	dirSynced     bool // the journal's directory entry is durable
}

// journalHeaderAt writes a segment's header at off: a new nonce, the
// database's size at the start, the sector and page sizes; the magic and
// the record count stay zero until syncJournal writes them, except under
// SyncOff, whose one segment is final at once (nRec 0xFFFFFFFF: up to the
// end of the file).
func (p *Pager) journalHeaderAt(jw *journalWriter, off int64) error {
	var hdr [format.JournalSectorSize]byte
	jw.nonce = rand.Uint32()
	format.PutJournalHeader(hdr[:], jw.nonce, jw.orig, p.pageSize)
	if p.opts.Sync == SyncOff {
		format.PutJournalCount(hdr[:], format.JournalNRecToEnd)
	}
	if _, err := jw.f.WriteAt(hdr[:], off); err != nil {
		return err
	}
	jw.hdr, jw.off, jw.nRec = off, off+int64(len(hdr)), 0
	return nil
}

// openJournal creates the transaction's journal with its first header.
func (w *WriteTx) openJournal() (*journalWriter, error) {
	p := w.p
	f, err := p.openSide(JournalPath(p.path), os.O_RDWR|os.O_TRUNC)
	if err != nil {
		return nil, err
	}
	jw := &journalWriter{f: f, orig: w.base.nPages}
	p.rb.jw = jw
	return jw, p.journalHeaderAt(jw, 0)
}

// journalPages appends to the segment a record of every page the
// transaction holds changed in memory that existed at its start and has
// none yet, as it was: the base snapshot's page, which the database file
// still holds, since no page goes there before its record (rule 41).
func (w *WriteTx) journalPages(jw *journalWriter) error {
	p := w.p
	rec := format.JournalRecordSize(p.pageSize)
	lockPage := format.LockBytePage(p.pageSize)
	buf := p.ioBuffer()
	start := jw.off
	var err error
	w.pages.each(func(pgno uint32, s *pageSlot) {
		if err != nil || s.journaled || pgno > jw.orig || pgno == lockPage {
			return
		}
		if len(buf)+rec > cap(buf) {
			_, err = jw.f.WriteAt(buf, start)
			start += int64(len(buf))
			buf = buf[:0]
			if err != nil {
				return
			}
		}
		var old []byte
		if old, err = w.base.Page(pgno); err != nil {
			return
		}
		n := len(buf)
		buf = buf[:n+rec]
		format.PutJournalRecord(buf[n:], pgno, old, jw.nonce)
		s.journaled = true
		jw.nRec++
		jw.off += int64(rec)
	})
	if err == nil && len(buf) > 0 {
		_, err = jw.f.WriteAt(buf, start)
	}
	return err
}

// syncJournal makes the segment's records ones that a rollback plays
// (rule 37), in pager.c's syncJournal order: under SyncFull the records
// are synced, then the header's magic and record count written and
// synced; under SyncNormal those are written and synced once; the
// journal's creation is made durable with its first sync (os_unix.c's
// UNIXFILE_DIRSYNC). newHdr (a spill) then starts the next segment at the
// next sector boundary. Under SyncOff the one segment is final already and
// nothing is synced.
func (p *Pager) syncJournal(jw *journalWriter, newHdr bool) error {
	if p.opts.Sync == SyncOff {
		jw.synced = true
		return nil
	}
	sync := func() error {
		p.count(func(s *Stats) { s.Syncs++ })
		return jw.f.Sync()
	}
	if p.opts.Sync == SyncFull {
		if err := sync(); err != nil {
			return err
		}
	}
	var count [12]byte
	format.PutJournalCount(count[:], jw.nRec)
	if _, err := jw.f.WriteAt(count[:], jw.hdr); err != nil {
		return err
	}
	if err := sync(); err != nil {
		return err
	}
	if !jw.dirSynced {
		if err := p.syncDir(); err != nil {
			return err
		}
		jw.dirSynced = true
	}
	jw.synced = true
	if !newHdr {
		return nil
	}
	const sector = format.JournalSectorSize
	return p.journalHeaderAt(jw, (jw.off+sector-1)/sector*sector)
}

// spillRollback is Settle in rollback mode (rule 41, pager.c's
// pagerStress): the changed pages' originals go into the journal, which
// is synced, under EXCLUSIVE (waiting for readers up to Options.Timeout,
// else ErrBusy with the database file untouched); then the pages go into
// the database file, in page order, and are read back from it.
func (w *WriteTx) spillRollback() error {
	p := w.p
	jw := p.rb.jw
	if jw == nil {
		var err error
		if jw, err = w.openJournal(); err != nil {
			return err
		}
	}
	if err := w.journalPages(jw); err != nil {
		return err
	}
	if err := p.exclusiveRollback(); err != nil {
		return err
	}
	// The first spill syncs even with no record, so that the header
	// (the size to truncate to) is valid before the file grows.
	if !jw.synced || jw.nRec > 0 {
		if err := p.syncJournal(jw, true); err != nil {
			return err
		}
	}
	jw.dbmod = true
	w.direct = true // Commit has work even when nothing is left in memory
	runs := p.runs()
	var maxPg uint32
	var err error
	n := 0
	w.pages.each(func(pgno uint32, s *pageSlot) {
		if err == nil {
			err = runs.add(pgno, s.buf)
		}
		maxPg = max(maxPg, pgno)
		w.recycle(s.buf)
		s.buf, s.inFile = nil, true
		w.nDirty--
		n++
	})
	if ferr := runs.flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	p.count(func(s *Stats) { s.Spilled += uint64(n) })
	w.armDrop()
	if maxPg > p.dbPagesNow() || vfs.MapCopies {
		return p.growDBMap(maxPg)
	}
	return nil
}

// closeJournal closes the transaction's journal file, which stays on disk.
func (p *Pager) closeJournal() error {
	jw := p.rb.jw
	if jw == nil {
		return nil
	}
	p.rb.jw = nil
	return jw.f.Close()
}

// abortRollback ends a rollback-mode transaction that did not commit
// (rule 43): its journal goes, played back first when a spill wrote the
// database file, under the EXCLUSIVE lock the spill took. A failed
// playback leaves the journal, hot once the locks go, for the next
// snapshot to roll back (rule 39). The caller holds the writer lock.
func (p *Pager) abortRollback() {
	jw := p.rb.jw
	if jw == nil {
		return
	}
	err := p.closeJournal()
	if !jw.dbmod {
		// The database file is as it was. A journal that stays (the
		// removal failed) holds only pages as the file has them.
		_ = p.fs.Remove(JournalPath(p.path))
		return
	}
	if err == nil {
		err = p.recoverJournal()
	}
	p.afterPlayback(err)
}

// afterPlayback takes up the database file as a playback of the
// transaction's journal left it (err nil) or may have (err not nil: the
// journal stays, and the next snapshot rolls it back first): the mapping
// ends where the file does, and the next snapshot learns the file again.
func (p *Pager) afterPlayback(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rb.known = false
	if err != nil {
		p.rb.recover = true
	}
	if rerr := p.refreshDBFile(); rerr != nil {
		p.rb.recover = true
	}
}
