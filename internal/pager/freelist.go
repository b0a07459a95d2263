package pager

import (
	"encoding/binary"

	"github.com/pagodadb/pagoda/internal/format"
)

// The freelist. Header[32] is the first trunk page, header[36] the number of
// pages on the list (trunks and leaves). A trunk page:
//
//	OFF SIZE FIELD
//	  0    4 next trunk page, 0 on the last
//	  4    4 number of leaf page numbers n that follow
//	  8   4n leaf page numbers
//
// Leaf pages' content is meaningless. Readers accept n <= U/4 - 2; writers
// keep n <= U/4 - 8, as SQLite does for old readers.
const (
	trunkOffNext   = 0
	trunkOffCount  = 4
	trunkOffLeaves = 8
)

// MaxTrunkLeavesRead is the largest leaf count a reader accepts on a trunk.
func MaxTrunkLeavesRead(usable int) int { return usable/4 - 2 }

// MaxTrunkLeavesWrite is the largest leaf count pagoda writes on a trunk.
func MaxTrunkLeavesWrite(usable int) int { return usable/4 - 8 }

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
		n := binary.BigEndian.Uint32(data[trunkOffCount:])
		if n > uint32(MaxTrunkLeavesRead(s.UsableSize())) {
			return format.CorruptAt(trunk, trunkOffCount, "freelist leaf count too big on page %d (%d)", trunk, n)
		}
		for i := uint32(0); i < n; i++ {
			leaf := binary.BigEndian.Uint32(data[trunkOffLeaves+4*i:])
			if leaf == 0 || leaf > s.PageCount() {
				return format.CorruptAt(trunk, int(trunkOffLeaves+4*i), "freelist leaf page %d out of range 1..%d", leaf, s.PageCount())
			}
			seen++
			if err := fn(leaf, false); err != nil {
				return err
			}
		}
		trunk = binary.BigEndian.Uint32(data[trunkOffNext:])
	}
	if seen != want {
		return format.Corruptf(1, "freelist: size is %d but should be %d", seen, want)
	}
	return nil
}
