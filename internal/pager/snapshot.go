package pager

import (
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/wal"
)

// Snapshot is one consistent view of the database: the pages as of one
// commit. Page returns slices of the mappings; they stay valid until the
// pager is closed.
type Snapshot struct {
	p    *Pager
	mark uint32 // frames this snapshot sees, for checkpoints
	live bool
	// own marks a rollback-mode write transaction's snapshot, which its
	// commit does not wait for (rollback.go).
	own      bool
	data     []byte
	dbPages  uint32
	nPages   uint32
	pageSize int
	usable   int
	log      *wal.Log
	walData  []byte
	maxFrame uint32
	// journal holds the pages a hot rollback journal restores, for a
	// read-only pager that reads as if it had been played back
	// (journal.go); nil without one.
	journal map[uint32][]byte
	// The pager's commits and WAL restarts when the snapshot was taken:
	// its identity, for RenewSnapshot.
	commits, restarts, adopted uint64
	// slot is the wal-index read slot the snapshot holds, with a pager
	// that shares the database (rule 25).
	slot int
	// err is why the snapshot could not be taken (Pager.Snapshot): every
	// page fails with it.
	err error
}

// Version identifies the committed state a snapshot reads: snapshots of
// one Version read the same pages (the same bytes at the same page
// numbers), so what is learnt from one (a catalog, a table's leaves)
// holds for every other. A commit of any connection, a WAL restart and a
// state adopted from the wal-index or a rollback journal make another.
type Version struct {
	p                          *Pager
	commits, restarts, adopted uint64
}

// Version returns the snapshot's Version.
func (s *Snapshot) Version() Version {
	return Version{p: s.p, commits: s.commits, restarts: s.restarts, adopted: s.adopted}
}

// Release ends the snapshot: its pages may be reused by checkpoints. The
// slices it handed out stay mapped until the pager closes but may change.
// Releasing twice is harmless.
func (s *Snapshot) Release() {
	if s.live {
		s.live = false
		s.p.release(s)
	}
}

// PageCount returns the database size in pages in this snapshot.
func (s *Snapshot) PageCount() uint32 { return s.nPages }

// PageSize returns the page size.
func (s *Snapshot) PageSize() int { return s.pageSize }

// UsableSize returns the usable bytes per page.
func (s *Snapshot) UsableSize() int { return s.usable }

// Page returns page pgno as of the snapshot, without copying.
func (s *Snapshot) Page(pgno uint32) ([]byte, error) {
	if pgno == 0 || pgno > s.nPages {
		if s.err != nil {
			return nil, s.err
		}
		return nil, format.Corruptf(pgno, "page number %d out of range 1..%d", pgno, s.nPages)
	}
	if s.maxFrame != 0 {
		if f := s.log.Index.Find(pgno, s.maxFrame); f != 0 {
			return s.log.FrameData(s.walData, f), nil
		}
	}
	if s.journal != nil {
		if pg, ok := s.journal[pgno]; ok {
			return pg, nil
		}
	}
	if pgno > s.dbPages {
		// Within the committed size but past the end of the file: a page
		// whose content was never written, as a free page allocated
		// past the end and freed in the same transaction. sqlite3 reads
		// it as zeros (a short read); so does pagoda.
		return s.p.zeroPage(), nil
	}
	off := int(pgno-1) * s.pageSize
	return s.data[off : off+s.pageSize : off+s.pageSize], nil
}

// locate returns where page pgno of the snapshot lies: in WAL frame frame,
// or in the database file when frame is 0; ok is false for a page that
// Page must answer (out of range, past the file's end, or in a rollback
// journal).
func (s *Snapshot) locate(pgno uint32) (frame uint32, ok bool) {
	if pgno == 0 || pgno > s.nPages || s.journal != nil {
		return 0, false
	}
	if s.maxFrame != 0 {
		if f := s.log.Index.Find(pgno, s.maxFrame); f != 0 {
			return f, true
		}
	}
	return 0, pgno <= s.dbPages
}

// Flat returns the pages that lie whole in the mapping of the database
// file, when every page of the snapshot that exists there is read from it
// (no WAL frame and no rollback journal's page is part of the snapshot): page pgno, for pgno-1 <
// len(data)/pageSize, is data[(pgno-1)*pageSize:][:pageSize], exactly what
// Page returns. It returns nil otherwise. A point lookup reads its pages
// from it without a call per page.
func (s *Snapshot) Flat() (data []byte, pageSize int) {
	if s.maxFrame != 0 || s.pageSize == 0 || s.journal != nil {
		return nil, 0
	}
	n := min(s.nPages, s.dbPages)
	return s.data[:int(n)*s.pageSize], s.pageSize
}

// InWAL reports whether pgno is served from the WAL in this snapshot.
func (s *Snapshot) InWAL(pgno uint32) bool {
	return s.maxFrame != 0 && s.log.Index.Find(pgno, s.maxFrame) != 0
}
