package pager

import (
	"fmt"

	"github.com/pagodadb/pagoda/internal/format"
)

// WalkFreelist calls fn for every page on the freelist of s: trunk pages
// with trunk true, then their leaves. It checks the list against the
// header's count and stops at a cycle, a bad page number or a bad count.
func WalkFreelist(s *Snapshot, fn func(pgno uint32, trunk bool) error) error {
	pg1, err := s.Page(1)
	if err != nil {
		return err
	}
	h := format.Header(pg1)
	want := h.FreelistCount()
	var seen uint32
	for trunk := h.FreelistTrunk(); trunk != 0; {
		if seen >= want || seen >= s.PageCount() {
			return format.Corruptf(trunk, "freelist longer than the %d pages the header counts", want)
		}
		data, err := s.Page(trunk)
		if err != nil {
			return err
		}
		seen++
		if err := fn(trunk, true); err != nil {
			return err
		}
		t, err := format.ParseFreelistTrunk(data, trunk, s.UsableSize())
		if err != nil {
			return err
		}
		for i := range t.Count() {
			leaf := t.Leaf(i)
			if leaf == 0 || leaf > s.PageCount() {
				return format.CorruptAt(trunk, format.TrunkOffLeaf(i), "freelist leaf page %d out of range 1..%d", leaf, s.PageCount())
			}
			seen++
			if err := fn(leaf, false); err != nil {
				return err
			}
		}
		trunk = t.Next()
	}
	if seen != want {
		return format.Corruptf(1, "freelist: size is %d but should be %d", seen, want)
	}
	return nil
}

// Allocate returns a zero-filled writable page: one from the freelist when
// it has any (as SQLite: a leaf of the first trunk, else the trunk itself),
// else a new page at the end of the file, never the lock-byte page.
func (w *WriteTx) Allocate() (uint32, []byte, error) {
	pg1, err := w.Page(1)
	if err != nil {
		return 0, nil, err
	}
	w.allocated++
	if trunk := format.Header(pg1).FreelistTrunk(); trunk != 0 {
		return w.allocFree(trunk)
	}
	n := w.nPages + 1
	if n == format.LockBytePage(w.p.pageSize) {
		n++
	}
	if n > maxPages {
		return 0, nil, fmt.Errorf("%w: database would exceed %d pages", format.ErrUnsupported, uint32(maxPages))
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
	w.freed++
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
