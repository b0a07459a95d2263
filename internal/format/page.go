package format

import "encoding/binary"

// A b-tree page. The header starts at offset 100 on page 1, at 0 elsewhere;
// every offset stored in the page is measured from byte 0 of the page.
//
//	[hdr .. hdr+7 or +11]   page header (8 bytes on leaves, 12 on interior pages)
//	[.. + 2*nCells]         cell pointer array, 2-byte offsets in key order
//	[.. contentStart-1]     unallocated gap
//	[contentStart .. U-1]   cells, freeblocks and fragments, any physical order
//	[U .. P-1]              reserved bytes
//
// Page header:
//
//	OFF SIZE FIELD
//	  0    1 page type (2, 5, 10, 13)
//	  1    2 offset of the first freeblock, 0 if none
//	  3    2 number of cells
//	  5    2 start of the cell content area (0 means 65536)
//	  7    1 fragmented free bytes in the content area
//	  8    4 right-most child page (interior pages only)
//
// A freeblock:
//
//	OFF SIZE FIELD
//	  0    2 offset of the next freeblock, 0 on the last
//	  2    2 size of this freeblock, these 4 bytes included

// PageType is the first byte of a b-tree page header.
type PageType byte

const (
	PageIndexInterior PageType = 2
	PageTableInterior PageType = 5
	PageIndexLeaf     PageType = 10
	PageTableLeaf     PageType = 13
)

// Valid reports whether t is one of the four b-tree page types.
func (t PageType) Valid() bool {
	return t == PageIndexInterior || t == PageTableInterior || t == PageIndexLeaf || t == PageTableLeaf
}

// IsLeaf reports whether pages of type t have no children.
func (t PageType) IsLeaf() bool { return t == PageIndexLeaf || t == PageTableLeaf }

// IsTable reports whether t belongs to a table (rowid) b-tree.
func (t PageType) IsTable() bool { return t == PageTableInterior || t == PageTableLeaf }

// HeaderSize returns the size of the page header for pages of type t.
func (t PageType) HeaderSize() int {
	if t.IsLeaf() {
		return PageHeaderSizeLeaf
	}
	return PageHeaderSizeInterior
}

func (t PageType) String() string {
	switch t {
	case PageIndexInterior:
		return "index interior"
	case PageTableInterior:
		return "table interior"
	case PageIndexLeaf:
		return "index leaf"
	case PageTableLeaf:
		return "table leaf"
	}
	return "invalid"
}

const (
	PageHeaderSizeLeaf     = 8
	PageHeaderSizeInterior = 12

	pageHdrType           = 0
	pageHdrFirstFreeblock = 1
	PageHdrNumCells       = 3
	pageHdrContentStart   = 5
	pageHdrFragmented     = 7
	PageHdrRightChild     = 8

	freeblockOffNext    = 0
	freeblockOffSize    = 2
	FreeblockHeaderSize = 4
	// MinCellSize is the least content area a cell owns, whatever its encoding.
	MinCellSize = 4
)

// HeaderOffset returns where the b-tree header of page pgno starts.
func HeaderOffset(pgno uint32) int {
	if pgno == 1 {
		return HeaderSize
	}
	return 0
}

// Page is a checked view of one b-tree page. It holds no copy: Data is the
// page as the pager handed it out.
type Page struct {
	Data     []byte // the whole page; only Data[:Usable] is b-tree content
	Pgno     uint32
	Type     PageType
	Hdr      int // offset of the page header
	NCells   int
	Usable   int
	cellPtrs int // offset of the cell pointer array
	maxLocal int // largest payload stored whole on this page
}

// ParsePage checks the page header of page pgno (cheap checks only: the type,
// and that the cell pointer array fits) and returns a view of it.
func ParsePage(data []byte, pgno uint32, usable int) (Page, error) {
	var p Page
	err := p.Load(data, pgno, usable)
	return p, err
}

// Load makes p a view of page pgno, with ParsePage's checks. It fills p in
// place: a cursor descending a tree loads each page into its stack, and a
// writer's descent into the one view it reuses from level to level,
// without copying the view (a hundred bytes) through the call's results.
// On error p is unchanged.
func (p *Page) Load(data []byte, pgno uint32, usable int) error {
	hdr := HeaderOffset(pgno)
	if usable < MinUsableSize || usable > len(data) || hdr+PageHeaderSizeLeaf > usable {
		return Corruptf(pgno, "page of %d bytes shorter than usable size %d", len(data), usable)
	}
	t := PageType(data[hdr+pageHdrType])
	if !t.Valid() {
		return CorruptAt(pgno, hdr, "invalid b-tree page type %d", byte(t))
	}
	n := int(binary.BigEndian.Uint16(data[hdr+PageHdrNumCells:]))
	ptrs := hdr + t.HeaderSize()
	if ptrs+2*n > usable {
		return CorruptAt(pgno, hdr+PageHdrNumCells, "%d cells do not fit in the page", n)
	}
	p.Data, p.Pgno, p.Type, p.Hdr, p.NCells, p.Usable = data, pgno, t, hdr, n, usable
	p.cellPtrs, p.maxLocal = ptrs, MaxLocal(usable, t == PageTableLeaf)
	return nil
}

// RightChild returns the right-most child of an interior page.
func (p *Page) RightChild() uint32 {
	return binary.BigEndian.Uint32(p.Data[p.Hdr+PageHdrRightChild:])
}

// FirstFreeblock returns the offset of the first freeblock, 0 if none.
func (p *Page) FirstFreeblock() int {
	return int(binary.BigEndian.Uint16(p.Data[p.Hdr+pageHdrFirstFreeblock:]))
}

// ContentStart returns the start of the cell content area.
func (p *Page) ContentStart() int {
	v := int(binary.BigEndian.Uint16(p.Data[p.Hdr+pageHdrContentStart:]))
	if v == 0 {
		return MaxPageSize
	}
	return v
}

// FragmentedBytes returns header byte 7.
func (p *Page) FragmentedBytes() int { return int(p.Data[p.Hdr+pageHdrFragmented]) }

// CellPointerEnd returns the offset just past the cell pointer array.
func (p *Page) CellPointerEnd() int { return p.cellPtrs + 2*p.NCells }

// CellPointer returns the offset that cell pointer i holds, unchecked:
// CellOffset checks it. A checker that reports its own errors reads it so.
func (p *Page) CellPointer(i int) int {
	return int(binary.BigEndian.Uint16(p.Data[p.cellPtrs+2*i:]))
}

// Freeblock returns the header of the freeblock at off, which must end
// within the page (off+FreeblockHeaderSize <= len(Data)): the offset of
// the next freeblock, 0 on the last, and the block's size.
func (p *Page) Freeblock(off int) (next, size int) {
	return int(binary.BigEndian.Uint16(p.Data[off+freeblockOffNext:])), int(binary.BigEndian.Uint16(p.Data[off+freeblockOffSize:]))
}

// CellOffset returns the offset of cell i, checked to lie in the content area
// with room for the 4 bytes every cell owns (SQLite's range is up to U-4).
func (p *Page) CellOffset(i int) (int, error) {
	off, ok := p.cellOffset(i)
	if !ok {
		return 0, p.cellOffsetError(i, off)
	}
	return off, nil
}

// cellOffset is CellOffset without the error, small enough to inline into
// the searches, which call it once per probe: ok is false when the offset
// is out of range, for cellOffsetError to describe.
func (p *Page) cellOffset(i int) (off int, ok bool) {
	off = int(binary.BigEndian.Uint16(p.Data[p.cellPtrs+2*i:]))
	return off, off >= p.cellPtrs+2*p.NCells && off <= p.Usable-MinCellSize
}

// cellOffsetError is the error for cell i's offset off, out of range.
func (p *Page) cellOffsetError(i, off int) error {
	return CorruptAt(p.Pgno, p.cellPtrs+2*i, "cell %d offset %d out of range %d..%d",
		i, off, p.cellPtrs+2*p.NCells, p.Usable-MinCellSize)
}

// Child returns the child page left of cell i of an interior page; i ==
// NCells returns the right-most child.
func (p *Page) Child(i int) (uint32, error) {
	if i == p.NCells {
		return p.RightChild(), nil
	}
	off, ok := p.cellOffset(i)
	if !ok {
		return 0, p.cellOffsetError(i, off)
	}
	if off+4 > p.Usable {
		return 0, CorruptAt(p.Pgno, off, "cell %d extends off the end of the page", i)
	}
	return binary.BigEndian.Uint32(p.Data[off:]), nil
}

// ShortVarint decodes the varint at b[i:] when it takes at most three bytes
// (values below 2^21, most rowids) and the three bytes lie in b; ok is false
// otherwise, for Uvarint to decode, and v is then meaningless. Searches call
// it once per probe: it is written to inline.
func ShortVarint(b []byte, i int) (v uint64, ok bool) {
	if i < 0 || i+2 >= len(b) {
		return 0, false
	}
	c0, c1, c2 := uint64(b[i]), uint64(b[i+1]), uint64(b[i+2])
	if c0 < 0x80 {
		return c0, true
	}
	if c1 < 0x80 {
		return (c0&0x7f)<<7 | c1, true
	}
	return (c0&0x7f)<<14 | (c1&0x7f)<<7 | c2, c2 < 0x80
}

// TableInteriorKey returns the rowid separator of cell i of a table interior page.
func (p *Page) TableInteriorKey(i int) (int64, error) {
	off, ok := p.cellOffset(i)
	if !ok {
		return 0, p.cellOffsetError(i, off)
	}
	if v, ok := ShortVarint(p.Data[:p.Usable], off+ChildPtrSize); ok {
		return int64(v), nil
	}
	v, n := Uvarint(p.Data[min(off+ChildPtrSize, p.Usable):p.Usable])
	if n == 0 {
		return 0, CorruptAt(p.Pgno, off, "cell %d extends off the end of the page", i)
	}
	return int64(v), nil
}

// TableLeafRowid returns the rowid of cell i of a table leaf page.
func (p *Page) TableLeafRowid(i int) (int64, error) {
	off, ok := p.cellOffset(i)
	if !ok {
		return 0, p.cellOffsetError(i, off)
	}
	b := p.Data[off:p.Usable]
	if len(b) > 5 && b[0] < 0x80 { // a payload under 128 bytes
		if v, ok := ShortVarint(b, 1); ok {
			return int64(v), nil
		}
	}
	_, n := Uvarint(b)
	if n == 0 {
		return 0, CorruptAt(p.Pgno, off, "cell %d extends off the end of the page", i)
	}
	v, m := Uvarint(b[n:])
	if m == 0 {
		return 0, CorruptAt(p.Pgno, off, "cell %d extends off the end of the page", i)
	}
	return int64(v), nil
}

// FreeSpace returns the page's free bytes: the gap between the cell pointer
// array and the content area, the freeblocks and the fragmented bytes. It
// checks the freeblock chain as sqlite3's integrity_check does.
func (p *Page) FreeSpace() (int, error) {
	start := p.ContentStart()
	end := p.CellPointerEnd()
	if start < end || start > p.Usable {
		return 0, CorruptAt(p.Pgno, p.Hdr+pageHdrContentStart, "content area starts at %d, outside %d..%d", start, end, p.Usable)
	}
	free := start - end + p.FragmentedBytes()
	prev := 0
	for fb := p.FirstFreeblock(); fb != 0; {
		if fb < start || fb+FreeblockHeaderSize > p.Usable || (prev != 0 && fb <= prev) {
			return 0, CorruptAt(p.Pgno, fb, "free space corruption: freeblock at %d", fb)
		}
		next, size := p.Freeblock(fb)
		if size < FreeblockHeaderSize || fb+size > p.Usable {
			return 0, CorruptAt(p.Pgno, fb, "free space corruption: freeblock of %d bytes at %d", size, fb)
		}
		if next != 0 && next <= fb+size+FreeblockHeaderSize-1 {
			return 0, CorruptAt(p.Pgno, fb, "free space corruption: freeblock at %d overlaps or touches the next at %d", fb, next)
		}
		free += size
		prev = fb
		fb = next
	}
	if free > p.Usable-end {
		return 0, CorruptAt(p.Pgno, p.Hdr+pageHdrFragmented, "free space %d exceeds the %d bytes after the cell pointers", free, p.Usable-end)
	}
	return free, nil
}
