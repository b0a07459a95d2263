package format

import "encoding/binary"

// The freelist (sqlite-format.md §5). Header offset 32 (OffFreelistTrunk)
// holds the first trunk page, 0 when the list is empty, and offset 36
// (OffFreelistCount) the number of pages on the list, trunks and leaves. A
// trunk page:
//
//	OFF SIZE FIELD
//	  0    4 next trunk page, 0 on the last
//	  4    4 number n of leaf page numbers that follow
//	  8   4n leaf page numbers
//
// A leaf's content is meaningless. Readers accept n <= U/4 - 2, which ends
// the leaves at the usable size U; writers keep n <= U/4 - 8, as SQLite
// does for old readers.
const (
	TrunkOffNext   = 0
	TrunkOffCount  = 4
	trunkOffLeaves = 8
	trunkLeafSize  = 4
)

// MaxTrunkLeavesRead is the largest leaf count a reader accepts on a trunk.
func MaxTrunkLeavesRead(usable int) int { return usable/4 - 2 }

// MaxTrunkLeavesWrite is the largest leaf count pagoda writes on a trunk.
func MaxTrunkLeavesWrite(usable int) int { return usable/4 - 8 }

// TrunkOffLeaf returns the offset of leaf i on a trunk page.
func TrunkOffLeaf(i uint32) int { return trunkOffLeaves + trunkLeafSize*int(i) }

// FreelistTrunk is a view of a freelist trunk page: the whole page, at least
// its usable size. Leaf reads leaves below Count, which must have been
// checked against MaxTrunkLeavesRead (ParseFreelistTrunk does).
type FreelistTrunk []byte

// ParseFreelistTrunk returns the view of trunk page pgno, checking that its
// leaf count fits the usable size: a trunk counting more leaves than
// MaxTrunkLeavesRead is corrupt.
func ParseFreelistTrunk(data []byte, pgno uint32, usable int) (FreelistTrunk, error) {
	if usable < MinUsableSize || len(data) < usable {
		return nil, Corruptf(pgno, "freelist trunk page of %d bytes, usable size %d", len(data), usable)
	}
	t := FreelistTrunk(data)
	if n := t.Count(); n > uint32(MaxTrunkLeavesRead(usable)) {
		return nil, CorruptAt(pgno, TrunkOffCount, "freelist leaf count too big on page %d (%d)", pgno, n)
	}
	return t, nil
}

// Next returns the next trunk page, 0 on the last.
func (t FreelistTrunk) Next() uint32 { return binary.BigEndian.Uint32(t[TrunkOffNext:]) }

// Count returns the number of leaves the trunk lists, as stored.
func (t FreelistTrunk) Count() uint32 { return binary.BigEndian.Uint32(t[TrunkOffCount:]) }

// Leaf returns leaf i (i < Count).
func (t FreelistTrunk) Leaf(i uint32) uint32 { return binary.BigEndian.Uint32(t[TrunkOffLeaf(i):]) }

// SetNext sets the next trunk page.
func (t FreelistTrunk) SetNext(pgno uint32) { binary.BigEndian.PutUint32(t[TrunkOffNext:], pgno) }

// SetCount sets the number of leaves.
func (t FreelistTrunk) SetCount(n uint32) { binary.BigEndian.PutUint32(t[TrunkOffCount:], n) }

// SetLeaf sets leaf i (i < MaxTrunkLeavesWrite).
func (t FreelistTrunk) SetLeaf(i, pgno uint32) { binary.BigEndian.PutUint32(t[TrunkOffLeaf(i):], pgno) }
