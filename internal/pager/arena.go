package pager

// pageArena carves a write transaction's page buffers out of large chunks
// of memory obtained from the operating system (allocChunk), instead of
// one heap allocation per page: the garbage collector never scans or frees
// them, and on Linux a chunk is backed by transparent huge pages, so
// filling a 64 MiB cache takes a few dozen page faults rather than sixteen
// thousand. (On a virtual machine a fault costs several microseconds: a
// bulk load that filled its cache from the heap spent a fifth of its time
// in them.)
//
// Buffers go back to writeState.bufs, never to the arena; trim returns
// whole chunks to the system once every buffer is back.
type pageArena struct {
	chunks [][]byte // the usable part of each chunk
	maps   [][]byte // the mapping of each chunk, for freeChunk
	cur    int      // the chunk being carved
	off    int      // the next free byte of chunks[cur]
}

// arenaChunk is the size of one chunk: four huge pages.
const arenaChunk = 8 << 20

// arenaKeep is the memory the arena keeps between transactions.
const arenaKeep = 2 * arenaChunk

// get returns a new buffer of n bytes, not necessarily zeroed.
func (a *pageArena) get(n int) []byte {
	for {
		if a.cur < len(a.chunks) {
			c := a.chunks[a.cur]
			if a.off+n <= len(c) {
				b := c[a.off : a.off+n : a.off+n]
				a.off += n
				return b
			}
			a.cur, a.off = a.cur+1, 0
			continue
		}
		c, m, err := allocChunk(arenaChunk)
		if err != nil {
			return make([]byte, n) // no mapping: the heap will do
		}
		a.chunks, a.maps = append(a.chunks, c), append(a.maps, m)
	}
}

// size returns the bytes the arena holds.
func (a *pageArena) size() int { return len(a.chunks) * arenaChunk }

// trim frees every chunk past the first keep bytes and makes the rest
// free again for carving. Every buffer handed out must be unused: the
// caller forgets them all.
func (a *pageArena) trim(keep int) {
	n := min(len(a.chunks), keep/arenaChunk)
	for _, m := range a.maps[n:] {
		freeChunk(m)
	}
	clear(a.chunks[n:])
	clear(a.maps[n:])
	a.chunks, a.maps, a.cur, a.off = a.chunks[:n], a.maps[:n], 0, 0
}
