package pager

import "slices"

// pageTable holds a write transaction's pages: for each page number either
// its private buffer (changed, in memory) or the WAL frame it was spilled
// to. Page numbers are dense, so it is a two-level array rather than a map:
// a directory indexed by pgno>>chunkShift points at chunks of chunkPages
// slots, so a lookup is two index operations. A chunk is 2 KiB, so a
// transaction that changes a thousand pages scattered over a large file
// holds a few MiB of slots, not one chunk per thousand pages of the file.
// The table lives as long as the pager: reset clears the chunks used and
// keeps them for the next transaction, which then allocates nothing.
type pageTable struct {
	dir    []*pageChunk // by pgno >> chunkShift; nil: no slot in that range
	used   []uint32     // the indexes of dir's chunks, in no order unless sorted
	sorted bool
	spare  []*pageChunk // cleared chunks, for reuse
}

const (
	chunkShift = 6
	chunkPages = 1 << chunkShift
	chunkMask  = chunkPages - 1
	// maxSpareChunks bounds the chunks kept between transactions (enough
	// for 64 Ki pages; more come from the heap).
	maxSpareChunks = 1024
)

type pageChunk [chunkPages]pageSlot

// pageSlot is one page of the transaction. buf != nil: changed in memory.
// frame != 0: its latest version is in that WAL frame (written by this
// transaction, not committed yet). inFile: its latest version is in the
// database file: a page past the committed end written straight there, or
// a rollback-mode spill's. journaled: the rollback journal holds the page
// as it was (rollbackspill.go). clean != nil: a copy of the page as the
// transaction has it, read from the files (WriteTx.readClean); buf, when
// set, is newer.
type pageSlot struct {
	buf       []byte
	clean     []byte
	frame     uint32
	inFile    bool
	journaled bool
}

// get returns the slot of pgno, or nil if the transaction has none.
func (t *pageTable) get(pgno uint32) *pageSlot {
	c := int(pgno >> chunkShift)
	if c >= len(t.dir) || t.dir[c] == nil {
		return nil
	}
	return &t.dir[c][pgno&chunkMask]
}

// slot returns the slot of pgno, creating it.
func (t *pageTable) slot(pgno uint32) *pageSlot {
	c := int(pgno >> chunkShift)
	if c >= len(t.dir) {
		t.dir = slices.Grow(t.dir, c+1-len(t.dir))[:c+1]
	}
	ch := t.dir[c]
	if ch == nil {
		if n := len(t.spare); n > 0 {
			ch, t.spare = t.spare[n-1], t.spare[:n-1]
		} else {
			ch = new(pageChunk)
		}
		t.dir[c] = ch
		t.used = append(t.used, uint32(c))
		t.sorted = len(t.used) == 1 || (t.sorted && t.used[len(t.used)-2] < uint32(c))
	}
	return &ch[pgno&chunkMask]
}

// each calls fn for every slot holding a buffer, in page order. fn must
// not create slots.
func (t *pageTable) each(fn func(pgno uint32, s *pageSlot)) {
	if !t.sorted {
		slices.Sort(t.used)
		t.sorted = true
	}
	for _, c := range t.used {
		ch := t.dir[c]
		for i := range ch {
			if ch[i].buf != nil {
				fn(c<<chunkShift|uint32(i), &ch[i])
			}
		}
	}
}

// reset empties the table, keeping its memory for the next transaction.
func (t *pageTable) reset() {
	for _, c := range t.used {
		ch := t.dir[c]
		t.dir[c] = nil
		if len(t.spare) < maxSpareChunks {
			*ch = pageChunk{}
			t.spare = append(t.spare, ch)
		}
	}
	t.used, t.sorted = t.used[:0], true
}
