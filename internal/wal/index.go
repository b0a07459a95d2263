package wal

// Index maps a page number to the frames that hold versions of it. Each
// frame links to the previous frame of the same page, so a reader whose
// snapshot ends at frame m finds its version by walking back from the
// newest frame to the first one at or before m. Memory is one map entry per
// distinct page and 4 bytes per frame.
type Index struct {
	last map[uint32]uint32 // page -> newest frame
	prev []uint32          // prev[f-1]: earlier frame of the same page, 0 if none
}

// Add records that frame f (1-based, frames added in increasing order)
// holds page pgno.
func (ix *Index) Add(pgno, f uint32) {
	if ix.last == nil {
		ix.last = make(map[uint32]uint32)
	}
	for uint32(len(ix.prev)) < f-1 {
		ix.prev = append(ix.prev, 0)
	}
	ix.prev = append(ix.prev[:f-1], ix.last[pgno])
	ix.last[pgno] = f
}

// Find returns the newest frame at or before maxFrame holding pgno, or 0.
func (ix *Index) Find(pgno, maxFrame uint32) uint32 {
	if maxFrame == 0 {
		return 0
	}
	f := ix.last[pgno]
	for f > maxFrame {
		f = ix.prev[f-1]
	}
	return f
}

// Len returns the number of frames indexed.
func (ix *Index) Len() int { return len(ix.prev) }

// Pages calls fn for every page with a frame at or before maxFrame, with its
// newest such frame, in no particular order.
func (ix *Index) Pages(maxFrame uint32, fn func(pgno, frame uint32)) {
	for p := range ix.last {
		if f := ix.Find(p, maxFrame); f != 0 {
			fn(p, f)
		}
	}
}

// Reset forgets every frame.
func (ix *Index) Reset() {
	clear(ix.last)
	ix.prev = ix.prev[:0]
}
