package format

import "encoding/binary"

// The pointer map of an auto-vacuum database (header offset 52 not 0)
// gives the use and parent of every page after page 2, so that SQLite can
// move pages: when it moves one it rewrites the pointer to it, which it
// finds through the map. A map page holds usable/5 entries, for the pages
// that follow it (PtrMapPageOf):
//
//	OFF SIZE FIELD
//	  0    1 type: 1 b-tree root, 2 free page (trunk or leaf),
//	         3 first overflow page, 4 later overflow page,
//	         5 b-tree page below the root
//	  1    4 parent: the page holding the pointer to this one (the b-tree
//	         page of the cell for a first overflow page, the previous
//	         overflow page for a later one); 0 for types 1 and 2
const (
	// PtrMapEntrySize is the size of a pointer-map entry.
	PtrMapEntrySize = 5

	ptrMapOffType   = 0
	ptrMapOffParent = 1
)

// The pointer-map entry types.
const (
	PtrMapRoot      = 1
	PtrMapFree      = 2
	PtrMapOverflow1 = 3
	PtrMapOverflow2 = 4
	PtrMapBtree     = 5
)

// PtrMapPageOf returns the pointer-map page that holds the entry of page
// pgno (>= 2) in an auto-vacuum database (header offset 52 not 0) of the
// given usable size and lock-byte page (LockBytePage): page 2, then one
// every usable/5 + 1 pages, each holding the entries of the pages after
// it; one that would be the lock-byte page is the page after it (SQLite's
// ptrmapPageno). A page is a pointer-map page when it is its own.
func PtrMapPageOf(pgno uint32, usable int, lockByte uint32) uint32 {
	if pgno < 2 {
		return 0
	}
	per := uint32(usable/PtrMapEntrySize + 1)
	p := (pgno-2)/per*per + 2
	if p == lockByte {
		p++
	}
	return p
}

// PtrMapEntry returns the entry of page pgno on pointer-map page mapPage
// (PtrMapPageOf), whose bytes are data: the page's type and parent. ok is
// false when the map page holds no entry for pgno: pgno is not after it
// (the page before a map page that the lock-byte page shifted), or the
// entry would pass the usable size.
func PtrMapEntry(data []byte, usable int, mapPage, pgno uint32) (typ byte, parent uint32, ok bool) {
	if pgno <= mapPage {
		return 0, 0, false
	}
	off := uint64(PtrMapEntrySize) * uint64(pgno-mapPage-1)
	if off+PtrMapEntrySize > uint64(max(0, min(usable, len(data)))) {
		return 0, 0, false
	}
	e := data[off : off+PtrMapEntrySize]
	return e[ptrMapOffType], binary.BigEndian.Uint32(e[ptrMapOffParent:]), true
}
