package pager

// pageTable holds a write transaction's pages: for each page number either
// its private buffer (changed, in memory) or the WAL frame it was spilled
// to. Page numbers are dense, so it is a two-level array rather than a map:
// a lookup is two index operations, and walking it visits pages in order.
type pageTable struct {
	chunks []*pageChunk
}

const (
	chunkShift = 10
	chunkPages = 1 << chunkShift
	chunkMask  = chunkPages - 1
)

type pageChunk [chunkPages]pageSlot

// pageSlot is one page of the transaction. buf != nil: changed in memory.
// frame != 0: its latest version is in that WAL frame (written by this
// transaction, not committed yet). inFile: a page past the committed end of
// the database, written straight into the database file.
type pageSlot struct {
	buf    []byte
	frame  uint32
	inFile bool
}

// get returns the slot of pgno, or nil if the transaction has none.
func (t *pageTable) get(pgno uint32) *pageSlot {
	c := int(pgno >> chunkShift)
	if c >= len(t.chunks) || t.chunks[c] == nil {
		return nil
	}
	return &t.chunks[c][pgno&chunkMask]
}

// slot returns the slot of pgno, creating it.
func (t *pageTable) slot(pgno uint32) *pageSlot {
	c := int(pgno >> chunkShift)
	for c >= len(t.chunks) {
		t.chunks = append(t.chunks, nil)
	}
	if t.chunks[c] == nil {
		t.chunks[c] = new(pageChunk)
	}
	return &t.chunks[c][pgno&chunkMask]
}

// each calls fn for every slot holding a buffer, in page order.
func (t *pageTable) each(fn func(pgno uint32, s *pageSlot)) {
	for c, ch := range t.chunks {
		if ch == nil {
			continue
		}
		for i := range ch {
			if ch[i].buf != nil {
				fn(uint32(c)<<chunkShift|uint32(i), &ch[i])
			}
		}
	}
}
