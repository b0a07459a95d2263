package pager

import "github.com/pagodadb/pagoda/internal/format"

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
