package wal

import "sync/atomic"

// Index maps a page number to the frames that hold versions of it, in the
// manner of SQLite's wal-index: frames are grouped in segments of
// segmentFrames; each segment records the page of each of its frames and an
// open-addressing hash table from page number to frame. Entries are written
// once and never moved, with atomic stores, so readers look up pages while
// the writer appends frames, without a lock: a reader whose snapshot ends at
// frame m ignores every frame after m, which is all the writer can be
// touching.
//
// Beside the hash of every frame, a segment keeps each page's newest frame
// in a table of its own (newest): a page that many commits change (a
// tree's root, the leaf appends go to) has as many frames in a segment,
// all in one probe chain, and a snapshot at the segment's last frames
// (nearly every one) finds its frame there in a probe or two rather than
// walking that chain. An older snapshot walks the chain as before.
//
// Memory is 112 KiB per segment (4096 frames), allocated as frames arrive.
type Index struct {
	segs atomic.Pointer[[]*segment]
	n    uint32 // frames added; written by the single writer only
}

const (
	segmentFrames = 4096
	hashSlots     = 2 * segmentFrames // load factor at most 1/2
	hashMask      = hashSlots - 1
	hashPrime     = 383 // SQLite's HASHTABLE_HASH_1
)

type segment struct {
	pgno [segmentFrames]atomic.Uint32 // page held by frame base+i+1
	slot [hashSlots]atomic.Uint32     // i+1 of a frame of this segment, 0 = empty
	// newest maps a page to i+1 of its newest frame in the segment, by
	// the same hash: page stored once, after its first i (so a reader that
	// finds the page finds a frame), i+1 stored again by each newer frame.
	newest [hashSlots]struct{ pg, i atomic.Uint32 }
}

func hashPage(pgno uint32) uint32 { return (pgno * hashPrime) & hashMask }

// Add records that frame f holds page pgno. Frames must be added in order,
// starting at 1 (or at Len()+1 after earlier frames).
func (ix *Index) Add(pgno, f uint32) {
	if f != ix.n+1 {
		panic("wal: Index.Add out of order")
	}
	var segs []*segment
	if p := ix.segs.Load(); p != nil {
		segs = *p
	}
	k := int((f - 1) / segmentFrames)
	if k == len(segs) {
		grown := make([]*segment, k+1)
		copy(grown, segs)
		grown[k] = new(segment)
		segs = grown
		ix.segs.Store(&grown)
	}
	s := segs[k]
	i := (f - 1) % segmentFrames
	s.pgno[i].Store(pgno)
	h := hashPage(pgno)
	for s.slot[h].Load() != 0 {
		h = (h + 1) & hashMask
	}
	s.slot[h].Store(i + 1)
	for h = hashPage(pgno); ; h = (h + 1) & hashMask {
		e := &s.newest[h]
		if p := e.pg.Load(); p == pgno {
			e.i.Store(i + 1)
			break
		} else if p == 0 {
			e.i.Store(i + 1)
			e.pg.Store(pgno)
			break
		}
	}
	ix.n = f
}

// Find returns the newest frame at or before maxFrame holding pgno, or 0.
func (ix *Index) Find(pgno, maxFrame uint32) uint32 {
	if maxFrame == 0 {
		return 0
	}
	p := ix.segs.Load()
	if p == nil {
		return 0
	}
	segs := *p
	for k := int((maxFrame - 1) / segmentFrames); k >= 0; k-- {
		if k >= len(segs) {
			continue
		}
		s := segs[k]
		base := uint32(k) * segmentFrames
		i := s.newestOf(pgno)
		if i == 0 {
			continue // no frame of pgno in the segment
		}
		if f := base + i; f <= maxFrame {
			return f
		}
		// A frame newer than the snapshot: an older one, if any.
		if i = s.newestBefore(pgno, maxFrame-base); i != 0 {
			return base + i
		}
	}
	return 0
}

// newestOf returns i+1 of pgno's newest frame in the segment, 0 if it has
// none.
func (s *segment) newestOf(pgno uint32) uint32 {
	for h := hashPage(pgno); ; h = (h + 1) & hashMask {
		e := &s.newest[h]
		switch e.pg.Load() {
		case pgno:
			return e.i.Load()
		case 0:
			return 0
		}
	}
}

// newestBefore returns i+1 of pgno's newest frame in the segment with
// i+1 <= max, 0 if none, walking pgno's chain of frames.
func (s *segment) newestBefore(pgno, max uint32) uint32 {
	var best uint32
	for h := hashPage(pgno); ; h = (h + 1) & hashMask {
		i := s.slot[h].Load()
		if i == 0 {
			return best
		}
		if i <= max && i > best && s.pgno[i-1].Load() == pgno {
			best = i
		}
	}
}

// Len returns the number of frames indexed.
func (ix *Index) Len() int { return int(ix.n) }

// PageOf returns the page held by frame f (1..Len()).
func (ix *Index) PageOf(f uint32) uint32 {
	segs := *ix.segs.Load()
	return segs[(f-1)/segmentFrames].pgno[(f-1)%segmentFrames].Load()
}

// Pages calls fn for every page with a frame at or before maxFrame, with its
// newest such frame, in no particular order.
func (ix *Index) Pages(maxFrame uint32, fn func(pgno, frame uint32)) {
	if maxFrame > ix.n {
		maxFrame = ix.n
	}
	seen := make(map[uint32]struct{})
	for f := maxFrame; f >= 1; f-- {
		p := ix.PageOf(f)
		if _, ok := seen[p]; ok {
			continue
		}
		seen[p] = struct{}{}
		fn(p, f)
	}
}

// Reset forgets every frame. The caller guarantees that no reader uses the
// index any more.
func (ix *Index) Reset() {
	ix.segs.Store(nil)
	ix.n = 0
}
