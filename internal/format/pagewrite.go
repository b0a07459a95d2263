package format

import (
	"encoding/binary"
	"errors"
)

// Page edits: the write side of page.go. They keep every invariant that
// sqlite3's integrity_check verifies (sqlite-format.md §2.3, §11):
//
//   - the cell pointer array is in key order and ends at or before the
//     start of the content area;
//   - freeblocks form a chain in ascending order, each at least 4 bytes
//     (2 bytes offset of the next, 2 bytes size), never adjacent: a hole
//     of 1..3 bytes between two is merged into them, its bytes leaving the
//     fragment count;
//   - header byte 7 counts exactly the bytes of the content area covered by
//     neither a cell nor a freeblock, and stays at most 60;
//   - a cell owns CellSpace(len) bytes: at least 4.
//
// The content area after an edit, for orientation:
//
//	contentStart                                                   Usable
//	|cell|frag|cell|freeblock: next,size,....|cell|cell|freeblock|cell|
//	                ^ header bytes 1..2 point at the first freeblock
//
// Inserting takes the space from the gap before the content area when the
// page has no freeblocks (the common case: a bulk load never makes any),
// else first-fit from the freeblock chain, else defragments. Deleting turns
// the cell's bytes into a freeblock, or moves the content start when the
// cell was the first in the content area. BuildPage writes a page
// compactly: no freeblocks, no fragments.

// maxFragmentedBeforeDefrag is the fragment count above which an allocation
// may not leave a further 1..3-byte hole: SQLite's pageFindSlot refuses a
// slot when byte 7 is above 57, which keeps the count at most 60.
const maxFragmentedBeforeDefrag = 57

// errPageFull reports cells given to BuildPage that do not fit.
var errPageFull = errors.New("cells do not fit in the page")

// BuildPage writes an empty or full b-tree page of type t into data, laid
// out compactly: the header at HeaderOffset(pgno), the cell pointer array in
// the order of cells, the cells packed against the end of the usable area in
// ascending address order, no freeblocks and no fragments. rightChild is
// written on interior pages. data[:HeaderOffset(pgno)] (the database header
// on page 1) is left alone, as are the bytes of the gap. The cells must not
// alias data. It returns the view of the new page.
func BuildPage(data []byte, pgno uint32, usable int, t PageType, cells [][]byte, rightChild uint32) (Page, error) {
	hdr := HeaderOffset(pgno)
	ptrs := hdr + t.HeaderSize()
	if !t.Valid() || usable > len(data) || usable > MaxPageSize {
		return Page{}, errors.New("BuildPage: bad page type or usable size")
	}
	need := ptrs + 2*len(cells)
	for _, c := range cells {
		need += CellSpace(len(c))
	}
	if need > usable {
		return Page{}, errPageFull
	}
	top := usable
	for i := len(cells) - 1; i >= 0; i-- {
		c := cells[i]
		top -= CellSpace(len(c))
		copy(data[top:], c)
		binary.BigEndian.PutUint16(data[ptrs+2*i:], uint16(top))
	}
	h := data[hdr:]
	h[pageHdrType] = byte(t)
	binary.BigEndian.PutUint16(h[pageHdrFirstFreeblock:], 0)
	binary.BigEndian.PutUint16(h[PageHdrNumCells:], uint16(len(cells)))
	binary.BigEndian.PutUint16(h[pageHdrContentStart:], uint16(top)) // 65536 is stored as 0
	h[pageHdrFragmented] = 0
	if !t.IsLeaf() {
		binary.BigEndian.PutUint32(h[PageHdrRightChild:], rightChild)
	}
	return Page{Data: data, Pgno: pgno, Type: t, Hdr: hdr, NCells: len(cells), Usable: usable, cellPtrs: ptrs,
		maxLocal: MaxLocal(usable, t == PageTableLeaf)}, nil
}

// Capacity returns the bytes available for cells and their pointers on an
// empty page of type t: the usable size less the headers.
func Capacity(pgno uint32, usable int, t PageType) int {
	return usable - HeaderOffset(pgno) - t.HeaderSize()
}

// SetRightChild sets the right-most child of an interior page.
func (p *Page) SetRightChild(child uint32) {
	binary.BigEndian.PutUint32(p.Data[p.Hdr+PageHdrRightChild:], child)
}

// CellBytes returns the encoding of cell i: exactly its bytes, without the
// padding of a cell shorter than 4 bytes. It aliases the page.
func (p *Page) CellBytes(i int) ([]byte, error) {
	off, err := p.CellOffset(i)
	if err != nil {
		return nil, err
	}
	n, err := p.cellLen(p.Data, off)
	if err != nil {
		return nil, err
	}
	return p.Data[off : off+n : off+n], nil
}

// cellLen returns the encoded length of the cell at off in b, a page laid
// out like p (b is p.Data, or a copy of it while p.Data is rewritten).
func (p *Page) cellLen(b []byte, off int) (int, error) {
	u := p.Usable
	pos := off
	switch p.Type {
	case PageTableInterior:
		_, n := Uvarint(b[min(pos+ChildPtrSize, u):u])
		if n == 0 {
			return 0, CorruptAt(p.Pgno, off, "cell extends off the end of the page")
		}
		return ChildPtrSize + n, nil
	case PageIndexInterior:
		pos += ChildPtrSize
	}
	if pos >= u {
		return 0, CorruptAt(p.Pgno, off, "cell extends off the end of the page")
	}
	var plen uint64
	if c := b[pos]; c < 0x80 {
		plen = uint64(c)
		pos++
	} else {
		v, n := Uvarint(b[pos:u])
		if n == 0 || v > MaxPayload {
			return 0, CorruptAt(p.Pgno, off, "cell payload length malformed or too large")
		}
		plen = v
		pos += n
	}
	if p.Type == PageTableLeaf {
		_, n := Uvarint(b[min(pos, u):u])
		if n == 0 {
			return 0, CorruptAt(p.Pgno, off, "cell extends off the end of the page")
		}
		pos += n
	}
	if plen <= uint64(p.maxLocal) {
		pos += int(plen)
	} else {
		pos += LocalSize(int64(plen), u, p.Type == PageTableLeaf) + overflowPtrSize
	}
	if pos > u {
		return 0, CorruptAt(p.Pgno, off, "cell of %d bytes extends off the end of the page", pos-off)
	}
	return pos - off, nil
}

// setContentStart writes header bytes 5..6; 65536 is stored as 0.
func (p *Page) setContentStart(v int) {
	binary.BigEndian.PutUint16(p.Data[p.Hdr+pageHdrContentStart:], uint16(v))
}

func (p *Page) setNumCells(n int) {
	p.NCells = n
	binary.BigEndian.PutUint16(p.Data[p.Hdr+PageHdrNumCells:], uint16(n))
}

// AllocCell reserves CellSpace(n) bytes for a new cell and inserts its
// pointer at index i (0 <= i <= NCells), shifting the pointers after it.
// It returns the offset where the caller writes the n cell bytes. When the
// page's free space is too small it returns ok false and leaves the page
// unchanged. scratch, of at least Usable bytes, is used to defragment.
//
// The space comes from the gap when the page has no freeblocks, else from
// the first freeblock large enough (leaving a fragment of 1..3 bytes only
// while byte 7 stays at most 60), else from the gap, defragmenting first
// when the gap is too small but the page's total free space suffices.
func (p *Page) AllocCell(i, n int, scratch []byte) (off int, ok bool, err error) {
	if i < 0 || i > p.NCells {
		return 0, false, CorruptAt(p.Pgno, -1, "cell index %d outside 0..%d", i, p.NCells)
	}
	size := CellSpace(n)
	ptrEnd := p.CellPointerEnd()
	top := p.ContentStart()
	if top < ptrEnd || top > p.Usable {
		return 0, false, CorruptAt(p.Pgno, p.Hdr+pageHdrContentStart, "content area starts at %d, outside %d..%d", top, ptrEnd, p.Usable)
	}
	if p.FirstFreeblock() == 0 && ptrEnd+2+size <= top {
		top -= size // the common case: carve from the gap
		off = top
		p.setContentStart(top)
	} else {
		free, err := p.FreeSpace()
		if err != nil {
			return 0, false, err
		}
		if free < size+2 {
			return 0, false, nil
		}
		if p.FirstFreeblock() != 0 && ptrEnd+2 <= top {
			if off, err = p.findSlot(size); err != nil {
				return 0, false, err
			}
		}
		if off == 0 {
			if ptrEnd+2+size > top {
				if err := p.Defragment(scratch); err != nil {
					return 0, false, err
				}
				if top = p.ContentStart(); ptrEnd+2+size > top {
					// Only a fragment count that lies gets here.
					return 0, false, CorruptAt(p.Pgno, p.Hdr+pageHdrFragmented, "free space accounting is wrong: %d bytes free after defragmenting, %d counted", top-ptrEnd, free)
				}
			}
			top -= size
			off = top
			p.setContentStart(top)
		}
	}
	ptr := p.cellPtrs + 2*i
	copy(p.Data[ptr+2:ptrEnd+2], p.Data[ptr:ptrEnd])
	binary.BigEndian.PutUint16(p.Data[ptr:], uint16(off))
	p.setNumCells(p.NCells + 1)
	return off, true, nil
}

// InsertCell copies cell into the page at index i; see AllocCell. cell must
// not alias the page.
func (p *Page) InsertCell(i int, cell []byte, scratch []byte) (bool, error) {
	off, ok, err := p.AllocCell(i, len(cell), scratch)
	if ok {
		copy(p.Data[off:], cell)
	}
	return ok, err
}

// findSlot takes size bytes from the first freeblock that has them and
// returns their offset, or 0 when no freeblock will do. A freeblock larger
// by 4 bytes or more shrinks and gives its tail; one larger by 1..3 bytes
// leaves the chain and the rest becomes a fragment, unless the fragment
// count is already above maxFragmentedBeforeDefrag.
//
//	before: |next|size|.......... freeblock of s bytes ..........|
//	after:  |next|s-n |...|  cell of n bytes (returned offset)   |
func (p *Page) findSlot(size int) (int, error) {
	d := p.Data
	prev := p.Hdr + pageHdrFirstFreeblock // where the pointer to fb is stored
	fb := int(binary.BigEndian.Uint16(d[prev:]))
	for fb != 0 {
		if fb > p.Usable-FreeblockHeaderSize || (prev != p.Hdr+pageHdrFirstFreeblock && fb <= prev) {
			return 0, CorruptAt(p.Pgno, fb, "free space corruption: freeblock at %d", fb)
		}
		fbSize := int(binary.BigEndian.Uint16(d[fb+2:]))
		if fb+fbSize > p.Usable {
			return 0, CorruptAt(p.Pgno, fb, "free space corruption: freeblock of %d bytes at %d", fbSize, fb)
		}
		if x := fbSize - size; x >= 0 {
			if x < FreeblockHeaderSize {
				frag := int(d[p.Hdr+pageHdrFragmented])
				if frag > maxFragmentedBeforeDefrag {
					return 0, nil
				}
				copy(d[prev:prev+2], d[fb:fb+2]) // unlink fb
				d[p.Hdr+pageHdrFragmented] = byte(frag + x)
				return fb, nil
			}
			binary.BigEndian.PutUint16(d[fb+2:], uint16(x))
			return fb + x, nil
		}
		prev = fb
		fb = int(binary.BigEndian.Uint16(d[fb:]))
	}
	return 0, nil
}

// DropCell removes cell i: its pointer leaves the array and its bytes
// become free space (see releaseSpace). A page left without cells is reset
// to an empty content area with no freeblocks or fragments. Overflow pages
// of the cell are the caller's business.
func (p *Page) DropCell(i int) error {
	off, err := p.CellOffset(i)
	if err != nil {
		return err
	}
	n, err := p.cellLen(p.Data, off)
	if err != nil {
		return err
	}
	ptr := p.cellPtrs + 2*i
	end := p.CellPointerEnd()
	copy(p.Data[ptr:end-2], p.Data[ptr+2:end])
	p.setNumCells(p.NCells - 1)
	if p.NCells == 0 {
		binary.BigEndian.PutUint16(p.Data[p.Hdr+pageHdrFirstFreeblock:], 0)
		p.Data[p.Hdr+pageHdrFragmented] = 0
		p.setContentStart(p.Usable)
		return nil
	}
	return p.releaseSpace(off, CellSpace(n))
}

// releaseSpace returns bytes [start, start+size) of the content area to the
// free space, as SQLite's freeSpace does: the block joins the freeblock
// chain in address order, merging with the freeblock after it and the one
// before it when the hole between is under 4 bytes (those bytes leave the
// fragment count); a block at the start of the content area moves the start
// instead of becoming a freeblock.
func (p *Page) releaseSpace(start, size int) error {
	d := p.Data
	hdr := p.Hdr
	end := start + size
	cs := p.ContentStart()
	if start < cs || end > p.Usable {
		return CorruptAt(p.Pgno, start, "cell of %d bytes at %d outside the content area %d..%d", size, start, cs, p.Usable)
	}
	head := hdr + pageHdrFirstFreeblock
	ptr := head // where the pointer to fb is stored: the header, or a freeblock before start
	fb := int(binary.BigEndian.Uint16(d[ptr:]))
	for fb != 0 && fb < start {
		if fb <= ptr && ptr != head {
			return CorruptAt(p.Pgno, fb, "free space corruption: freeblock chain goes backwards at %d", fb)
		}
		if fb > p.Usable-FreeblockHeaderSize {
			return CorruptAt(p.Pgno, fb, "free space corruption: freeblock at %d", fb)
		}
		ptr = fb
		fb = int(binary.BigEndian.Uint16(d[fb:]))
	}
	if fb > p.Usable-FreeblockHeaderSize {
		return CorruptAt(p.Pgno, fb, "free space corruption: freeblock at %d", fb)
	}
	fragFreed := 0
	if fb != 0 && end+3 >= fb { // absorb the next freeblock and the hole before it
		if end > fb {
			return CorruptAt(p.Pgno, fb, "free space corruption: freeblock at %d overlaps a cell", fb)
		}
		fragFreed = fb - end
		end = fb + int(binary.BigEndian.Uint16(d[fb+2:]))
		if end > p.Usable {
			return CorruptAt(p.Pgno, fb, "free space corruption: freeblock at %d runs past the page", fb)
		}
		fb = int(binary.BigEndian.Uint16(d[fb:]))
	}
	if ptr != head { // join the freeblock before, across a hole under 4 bytes
		ptrEnd := ptr + int(binary.BigEndian.Uint16(d[ptr+2:]))
		if ptrEnd+3 >= start {
			if ptrEnd > start {
				return CorruptAt(p.Pgno, ptr, "free space corruption: freeblock at %d overlaps a cell", ptr)
			}
			fragFreed += start - ptrEnd
			start = ptr
		}
	}
	frag := int(d[hdr+pageHdrFragmented])
	if fragFreed > frag {
		return CorruptAt(p.Pgno, hdr+pageHdrFragmented, "fragment count %d is less than the %d fragmented bytes found", frag, fragFreed)
	}
	d[hdr+pageHdrFragmented] = byte(frag - fragFreed)
	if start == cs {
		// The block begins the content area: move the start past it. A
		// freeblock before it would lie outside the content area.
		if ptr != head && ptr != start {
			return CorruptAt(p.Pgno, ptr, "free space corruption: freeblock at %d before the content area", ptr)
		}
		binary.BigEndian.PutUint16(d[head:], uint16(fb))
		p.setContentStart(end)
		return nil
	}
	binary.BigEndian.PutUint16(d[ptr:], uint16(start)) // when ptr == start, overwritten next
	binary.BigEndian.PutUint16(d[start:], uint16(fb))
	binary.BigEndian.PutUint16(d[start+2:], uint16(end-start))
	return nil
}

// Defragment packs the cells against the end of the usable area, in
// ascending address order of their pointers, leaving no freeblocks and no
// fragments. scratch must hold at least Usable bytes.
func (p *Page) Defragment(scratch []byte) error {
	d := p.Data
	u := p.Usable
	cs := p.ContentStart()
	ptrEnd := p.CellPointerEnd()
	if cs < ptrEnd || cs > u || len(scratch) < u {
		return CorruptAt(p.Pgno, p.Hdr+pageHdrContentStart, "content area starts at %d, outside %d..%d", cs, ptrEnd, u)
	}
	copy(scratch[cs:u], d[cs:u])
	top := u
	for i := p.NCells - 1; i >= 0; i-- {
		ptr := p.cellPtrs + 2*i
		off := int(binary.BigEndian.Uint16(d[ptr:]))
		if off < cs || off > u-MinCellSize {
			return CorruptAt(p.Pgno, ptr, "cell %d offset %d out of range %d..%d", i, off, cs, u-MinCellSize)
		}
		n, err := p.cellLen(scratch, off)
		if err != nil {
			return err
		}
		size := CellSpace(n)
		top -= size
		if top < ptrEnd {
			return CorruptAt(p.Pgno, off, "cells overlap: they fill more than the page")
		}
		copy(d[top:top+size], scratch[off:off+size])
		binary.BigEndian.PutUint16(d[ptr:], uint16(top))
	}
	binary.BigEndian.PutUint16(d[p.Hdr+pageHdrFirstFreeblock:], 0)
	d[p.Hdr+pageHdrFragmented] = 0
	p.setContentStart(top)
	return nil
}
