package check

import (
	"encoding/binary"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
)

// The freelist (sqlite-format.md §5): header[32] is the first trunk page,
// header[36] the number of pages on the list, trunks and leaves. A trunk:
//
//	OFF  SIZE  FIELD
//	  0     4  next trunk page, 0 on the last
//	  4     4  number n of leaf page numbers that follow, <= U/4 - 2
//	  8    4n  leaf page numbers
//
// A leaf's content is meaningless.
const (
	trunkNext   = 0
	trunkCount  = 4
	trunkLeaves = 8
	pageNumSize = 4
)

// walkFreelist marks every trunk and leaf of the freelist used and checks
// the list against the header's count. It reports, and stops at, a trunk
// that is out of range, already used or with too many leaves; a leaf out
// of range or already used is reported and skipped.
func (c *checker) walkFreelist(hdr format.Header) {
	want := hdr.FreelistCount()
	maxLeaves := uint32(pager.MaxTrunkLeavesRead(c.usable))
	var count uint32
	prev := uint32(0) // the header
	for trunk := hdr.FreelistTrunk(); trunk != 0 && !c.stopped; {
		from := prev
		if from == 0 {
			from = 1
		}
		if !c.use(trunk, ref{kind: useTrunk, by: prev}, from) {
			break
		}
		count++
		data, err := c.src.Page(trunk)
		if err != nil {
			c.reportf(trunk, "freelist trunk: cannot read the page: %s", errMsg(err, trunk))
			break
		}
		n := binary.BigEndian.Uint32(data[trunkCount:])
		if n > maxLeaves {
			c.reportf(trunk, "freelist leaf count too big: %d, at most %d", n, maxLeaves)
			break
		}
		count += n // as sqlite3 counts: entries, used or not
		for i := uint32(0); i < n && !c.stopped; i++ {
			leaf := binary.BigEndian.Uint32(data[trunkLeaves+pageNumSize*i:])
			c.use(leaf, ref{kind: useFreeLeaf, by: trunk}, trunk)
		}
		prev, trunk = trunk, binary.BigEndian.Uint32(data[trunkNext:])
	}
	if count != want && !c.stopped {
		c.reportf(1, "the freelist has %d pages, but the header (offset 36) says %d", count, want)
	}
}
