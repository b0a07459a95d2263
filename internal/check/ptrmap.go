package check

import (
	"github.com/pagodadb/pagoda/internal/format"
)

// The pointer map of an auto-vacuum file (header offset 52 non-zero) gives
// the use and parent of every page after page 2, so that SQLite can move
// pages: when it moves one it rewrites the pointer to it, which it finds
// through the map. A map page holds usable/5 entries, for the pages that
// follow it:
//
//	offset  size  field
//	0       1     type: 1 b-tree root, 2 free page (trunk or leaf),
//	              3 first overflow page, 4 later overflow page,
//	              5 b-tree page below the root
//	1       4     parent: the page holding the pointer to this one (the
//	              b-tree page of the cell for a first overflow page, the
//	              previous overflow page for a later one); 0 for types 1, 2
const (
	ptrMapRoot      = 1
	ptrMapFree      = 2
	ptrMapOverflow1 = 3
	ptrMapOverflow2 = 4
	ptrMapBtree     = 5
)

// checkPtrMap compares each used page's pointer-map entry with the use the
// walk found, as sqlite3's integrity_check does, and the header's largest
// root page with the largest root. It runs once every tree and the
// freelist are walked, in an auto-vacuum file.
func (c *checker) checkPtrMap(hdr format.Header) {
	maxRoot := uint32(1) // sqlite_schema's root, which SQLite counts too
	for p := uint32(2); p <= c.n && !c.stopped; p++ {
		r := c.refs[p]
		var typ byte
		var parent uint32
		switch r.kind {
		case useRoot:
			typ, maxRoot = ptrMapRoot, max(maxRoot, p)
		case useChild:
			typ, parent = ptrMapBtree, r.by
		case useOverflow:
			typ, parent = ptrMapOverflow2, r.by
			if k := c.refs[r.by].kind; k == useRoot || k == useChild {
				typ = ptrMapOverflow1
			}
		case useTrunk, useFreeLeaf:
			typ = ptrMapFree
		default:
			continue // the map's own pages, the lock-byte page, unused pages
		}
		gotType, gotParent, ok := c.ptrMapEntry(p)
		if !ok {
			continue
		}
		if gotType != typ || gotParent != parent {
			c.reportf(p, "pointer map says type %d, parent %d; the page is %s: type %d, parent %d",
				gotType, gotParent, ptrMapKind(typ), typ, parent)
		}
	}
	if h := hdr.LargestRootPage(); !c.stopped && h != maxRoot {
		c.reportf(1, "the header's largest root page (offset 52) is %d, the largest root is page %d", h, maxRoot)
	}
}

// ptrMapEntry reads the pointer-map entry of page p; ok is false (and the
// problem reported) when its map page cannot be read.
func (c *checker) ptrMapEntry(p uint32) (typ byte, parent uint32, ok bool) {
	mp := format.PtrMapPageOf(p, c.usable, c.lockByte)
	data, err := c.src.Page(mp)
	if err != nil {
		c.reportf(mp, "pointer-map page: %s", errMsg(err, mp))
		return 0, 0, false
	}
	// Not ok: p is before its map page (the page before a shifted one).
	return format.PtrMapEntry(data, p, mp, c.usable)
}

// ptrMapKind names a pointer-map type for messages.
func ptrMapKind(t byte) string {
	switch t {
	case ptrMapRoot:
		return "a b-tree root"
	case ptrMapFree:
		return "a free page"
	case ptrMapOverflow1:
		return "a first overflow page"
	case ptrMapOverflow2:
		return "a later overflow page"
	case ptrMapBtree:
		return "a b-tree page below the root"
	}
	return "unknown"
}
