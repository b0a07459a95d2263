package check

import "github.com/pagodadb/pagoda/internal/format"

// checkPtrMap compares each used page's pointer-map entry (format/ptrmap.go
// draws the map) with the use the walk found, as sqlite3's integrity_check
// does, and the header's largest
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
			typ, maxRoot = format.PtrMapRoot, max(maxRoot, p)
		case useChild:
			typ, parent = format.PtrMapBtree, r.by
		case useOverflow:
			typ, parent = format.PtrMapOverflow2, r.by
			if k := c.refs[r.by].kind; k == useRoot || k == useChild {
				typ = format.PtrMapOverflow1
			}
		case useTrunk, useFreeLeaf:
			typ = format.PtrMapFree
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
	return format.PtrMapEntry(data, c.usable, mp, p)
}

// ptrMapKind names a pointer-map type for messages.
func ptrMapKind(t byte) string {
	switch t {
	case format.PtrMapRoot:
		return "a b-tree root"
	case format.PtrMapFree:
		return "a free page"
	case format.PtrMapOverflow1:
		return "a first overflow page"
	case format.PtrMapOverflow2:
		return "a later overflow page"
	case format.PtrMapBtree:
		return "a b-tree page below the root"
	}
	return "unknown"
}
