package check

import "github.com/pagodadb/pagoda/internal/format"

// walkFreelist marks every trunk and leaf of the freelist used and checks
// the list against the header's count (format/freelist.go draws the list). It reports, and stops at, a trunk
// that is out of range, already used or with too many leaves; a leaf out
// of range or already used is reported and skipped.
func (c *checker) walkFreelist(hdr format.Header) {
	want := hdr.FreelistCount()
	maxLeaves := uint32(format.MaxTrunkLeavesRead(c.usable))
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
		t := format.FreelistTrunk(data)
		n := t.Count()
		if n > maxLeaves {
			c.reportf(trunk, "freelist leaf count too big: %d, at most %d", n, maxLeaves)
			break
		}
		count += n // as sqlite3 counts: entries, used or not
		for i := uint32(0); i < n && !c.stopped; i++ {
			c.use(t.Leaf(i), ref{kind: useFreeLeaf, by: trunk}, trunk)
		}
		prev, trunk = trunk, t.Next()
	}
	if count != want && !c.stopped {
		c.reportf(1, "the freelist has %d pages, but the header (offset 36) says %d", count, want)
	}
}
