package wal

import (
	"fmt"

	"github.com/pagodadb/pagoda/internal/format"
)

// Published is the committed state of a WAL that several writers share, as
// the last of them published it (SQLite's wal-index header): the salts of
// the log's header, its last commit frame, the database size there, the
// running checksum after that frame, and which page each frame holds.
type Published struct {
	Salt1, Salt2     uint32
	MaxFrame, DBSize uint32
	Cksum1, Cksum2   uint32
	// PageOf returns the page that frame f (1..MaxFrame) holds.
	PageOf func(f uint32) (uint32, error)
}

// nopLocker is the owner's lock when the owner already holds it.
type nopLocker struct{}

func (nopLocker) Lock()   {}
func (nopLocker) Unlock() {}

// Adopt makes the log what another writer of the file published (rule 13):
// the frames it knows are kept when the salts are the same and pub only
// adds frames after them; otherwise (the log started over elsewhere, or
// pub is older than what this File recovered from the file, whose last
// commit another writer may not have published yet) the log is rebuilt
// from pub alone, its header read again from the file. The frames taken
// from pub count as not durable: this File did not sync them. It returns
// whether the log's frames changed beyond an append (readers of the old
// frames must not be taken for readers of the new). No frame may be
// pending, and the caller holds the owner's lock (Options.Lock), which
// Adopt does not take.
func (w *File) Adopt(pub Published) (replaced bool, err error) {
	l := w.log
	w.allocated = 0 // another connection may have cut the file: look again (preallocate)
	if len(w.pending) != 0 {
		return false, fmt.Errorf("adopt with %d frames pending", len(w.pending))
	}
	same := l.Valid && l.Header.Salt1 == pub.Salt1 && l.Header.Salt2 == pub.Salt2 && pub.MaxFrame >= l.MaxFrame
	if pub.MaxFrame == 0 {
		// Nothing is committed: whatever the file holds is no frame of
		// the log. The next writer starts it over.
		replaced = l.MaxFrame > 0
		l.Index.Reset()
		l.Valid = same && l.Valid
		l.MaxFrame, l.DBSize = 0, 0
		l.Cksum1, l.Cksum2 = pub.Cksum1, pub.Cksum2
		w.backfill = 0
		return replaced, nil
	}
	// The frames must be in the file and mapped.
	end := FrameOffset(pub.MaxFrame+1, w.pageSize)
	size, err := w.f.Size()
	if err != nil {
		return false, err
	}
	if size < end {
		return false, fmt.Errorf("%s: %d bytes, the log published has %d frames: %w", w.path, size, pub.MaxFrame, format.ErrCorrupt)
	}
	if err := w.m.Grow(w.f, int(end), nopLocker{}); err != nil {
		return false, fmt.Errorf("map %s: %w", w.path, err)
	}
	first := l.MaxFrame + 1
	if !same {
		// Read, not mapped: the file may be cut meanwhile.
		var b [HeaderSize]byte
		n, _ := w.f.ReadAt(b[:], 0)
		h, valid, err := parseHeader(b[:n])
		if err != nil {
			return false, err
		}
		if !valid || h.Salt1 != pub.Salt1 || h.Salt2 != pub.Salt2 || int(h.PageSize) != w.pageSize {
			return false, fmt.Errorf("%s: its header does not have the salts of the log published: %w", w.path, format.ErrCorrupt)
		}
		l.Index.Reset()
		l.Header, l.Valid, l.PageSize = h, true, w.pageSize
		first, replaced = 1, l.MaxFrame > 0
		w.backfill = 0
	}
	for f := first; f <= pub.MaxFrame; f++ {
		pgno, err := pub.PageOf(f)
		if err != nil {
			return replaced, err
		}
		l.Index.Add(pgno, f)
	}
	l.MaxFrame, l.DBSize = pub.MaxFrame, pub.DBSize
	l.Cksum1, l.Cksum2 = pub.Cksum1, pub.Cksum2
	if first <= pub.MaxFrame {
		w.durable = false
	}
	return replaced, nil
}

// SetBackfilledLocked is SetBackfilled for a caller holding the owner's
// lock.
func (w *File) SetBackfilledLocked(n uint32) { w.backfill = n }
