package check

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/pagodadb/pagoda/internal/format"
)

// The space of a b-tree page (format/page.go draws it, sqlite-format.md
// §2.2, §2.3): every byte of the content area belongs to exactly one cell,
// one freeblock, or is a fragmented byte (a hole of 1..3 bytes). Each
// freeblock starts more than 3 bytes past the end of the one before it,
// and a cell owns at least format.MinCellSize bytes (format.Cell.Size
// counts them), so the highest offset a cell may start at is U-4.

// span is a region [from, to) of the content area used by a cell (what >= 0
// is the cell's index) or a freeblock (what = -1-k for the k-th freeblock).
type span struct {
	from, to int
	what     int
}

func (s span) String() string {
	if s.what >= 0 {
		return fmt.Sprintf("cell %d (bytes %d..%d)", s.what, s.from, s.to-1)
	}
	return fmt.Sprintf("freeblock %d (bytes %d..%d)", -1-s.what, s.from, s.to-1)
}

// layout checks the space accounting of b-tree page pg of tree t: cell
// pointers in [contentStart, U-4], cells inside the page, the freeblock
// chain, no byte used twice, and header byte 7 equal to the bytes of the
// content area in no cell and no freeblock. It appends every cell, parsed,
// to cells and returns it; a cell that cannot be parsed is reported and
// appended with ok false.
func (c *checker) layout(t *tree, pg *format.Page, cells []cellInfo) []cellInfo {
	usable := pg.Usable
	start := pg.ContentStart()
	lo := start // the lowest offset a cell or freeblock may start at
	sound := true
	if start < pg.CellPointerEnd() || start > usable {
		c.reportf(pg.Pgno, "%s: content area starts at %d, outside %d..%d", t.name, start, pg.CellPointerEnd(), usable)
		lo, sound = pg.CellPointerEnd(), false
	}
	spans := c.spans[:0]
	for i := 0; i < pg.NCells; i++ {
		off := pg.CellPointer(i)
		if off < lo || off > usable-format.MinCellSize {
			c.reportf(pg.Pgno, "%s: cell %d: offset %d out of range %d..%d", t.name, i, off, lo, usable-format.MinCellSize)
			cells = append(cells, cellInfo{})
			t.ok, sound = false, false
			continue
		}
		cell, err := pg.CellAt(off)
		if err != nil {
			c.reportf(pg.Pgno, "%s: cell %d: %s", t.name, i, errMsg(err, pg.Pgno))
			cells = append(cells, cellInfo{})
			t.ok, sound = false, false
			continue
		}
		spans = append(spans, span{from: off, to: off + cell.Size, what: i})
		cells = append(cells, cellInfo{cell: cell, ok: true})
	}
	// The freeblock chain. Requiring each block to start past the end of
	// the one before bounds the walk.
	for fb, k := pg.FirstFreeblock(), 0; fb != 0; k++ {
		if fb < lo || fb > usable-format.FreeblockHeaderSize {
			c.reportf(pg.Pgno, "%s: free space corruption: freeblock %d at %d, outside the content area %d..%d", t.name, k, fb, lo, usable)
			sound = false
			break
		}
		next, size := pg.Freeblock(fb)
		if size < format.FreeblockHeaderSize || fb+size > usable {
			c.reportf(pg.Pgno, "%s: free space corruption: freeblock %d at %d of %d bytes does not fit in %d..%d", t.name, k, fb, size, fb+format.FreeblockHeaderSize, usable)
			sound = false
			break
		}
		spans = append(spans, span{from: fb, to: fb + size, what: -1 - k})
		if next != 0 && next <= fb+size+format.FreeblockHeaderSize-1 {
			if next <= fb {
				c.reportf(pg.Pgno, "%s: free space corruption: freeblock %d at %d points back to %d", t.name, k, fb, next)
			} else {
				c.reportf(pg.Pgno, "%s: free space corruption: freeblock %d (bytes %d..%d) is adjacent to or overlaps the next at %d", t.name, k, fb, fb+size-1, next)
			}
			sound = false
			break
		}
		fb = next
	}
	// No byte in two regions.
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	overlaps := 0
	for j := 1; j < len(spans); j++ {
		last := spans[j-1]
		if spans[j].from < last.to {
			if overlaps == 0 {
				c.reportf(pg.Pgno, "%s: %s overlaps %s", t.name, spans[j], last)
			}
			overlaps++
			// Keep the region reaching furthest as the one to compare with.
			if spans[j].to < last.to {
				spans[j] = last
			}
		}
	}
	if overlaps > 1 {
		c.reportf(pg.Pgno, "%s: %d more overlapping cells or freeblocks", t.name, overlaps-1)
	}
	if overlaps > 0 {
		t.ok, sound = false, false
	}
	if sound {
		free := usable - start
		for _, s := range spans {
			free -= s.to - s.from
		}
		if free != pg.FragmentedBytes() {
			c.reportf(pg.Pgno, "%s: header byte 7 counts %d fragmented bytes, but %d bytes of the content area are in no cell or freeblock",
				t.name, pg.FragmentedBytes(), free)
		}
	}
	c.spans = spans
	return cells
}
