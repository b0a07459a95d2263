package format

import (
	"encoding/binary"
	"math"
)

// Cell layouts by page type:
//
//	table leaf (13):     varint payloadLen, varint rowid, local payload, [u32 first overflow]
//	table interior (5):  u32 left child, varint rowid
//	index leaf (10):     varint payloadLen, local payload, [u32 first overflow]
//	index interior (2):  u32 left child, varint payloadLen, local payload, [u32 first overflow]
//
// The overflow page number is present only when payloadLen exceeds the
// local size (payload.go).

// MaxPayload bounds a payload length; SQLite's own limit is about 1e9 bytes.
const MaxPayload = math.MaxInt32

// Cell is one parsed cell. Local aliases the page.
type Cell struct {
	Child      uint32 // left child (interior pages)
	Rowid      int64  // table pages
	PayloadLen int64  // total payload length (leaf and index pages)
	Local      []byte // the payload bytes stored on the page
	Overflow   uint32 // first overflow page, 0 if the payload is all local
	Size       int    // bytes the cell occupies in the content area (at least 4)
}

// Cell parses cell i of the page.
func (p *Page) Cell(i int) (Cell, error) {
	off, err := p.CellOffset(i)
	if err != nil {
		return Cell{}, err
	}
	return p.CellAt(off)
}

// CellAt parses the cell that starts at offset off.
func (p *Page) CellAt(off int) (Cell, error) {
	var c Cell
	b := p.Data[:p.Usable]
	if off < 0 || off > len(b)-MinCellSize {
		return c, CorruptAt(p.Pgno, off, "cell offset out of range 0..%d", len(b)-MinCellSize)
	}
	pos := off
	if !p.Type.IsLeaf() {
		if pos+4 > len(b) {
			return c, CorruptAt(p.Pgno, off, "cell extends off the end of the page")
		}
		c.Child = binary.BigEndian.Uint32(b[pos:])
		pos += 4
		if p.Type == PageTableInterior {
			v, n := Uvarint(b[pos:])
			if n == 0 {
				return c, CorruptAt(p.Pgno, off, "cell extends off the end of the page")
			}
			c.Rowid = int64(v)
			c.Size = max(pos+n-off, MinCellSize)
			return c, nil
		}
	}
	v, n := Uvarint(b[pos:])
	if n == 0 {
		return c, CorruptAt(p.Pgno, off, "cell extends off the end of the page")
	}
	if v > MaxPayload {
		return c, CorruptAt(p.Pgno, off, "payload length %d too large", v)
	}
	c.PayloadLen = int64(v)
	pos += n
	if p.Type == PageTableLeaf {
		r, m := Uvarint(b[pos:])
		if m == 0 {
			return c, CorruptAt(p.Pgno, off, "cell extends off the end of the page")
		}
		c.Rowid = int64(r)
		pos += m
	}
	local := LocalSize(c.PayloadLen, p.Usable, p.Type == PageTableLeaf)
	end := pos + local
	if local < int(c.PayloadLen) {
		end += 4
	}
	if end > len(b) {
		return c, CorruptAt(p.Pgno, off, "cell of %d bytes extends off the end of the page", end-off)
	}
	c.Local = b[pos : pos+local : pos+local]
	if local < int(c.PayloadLen) {
		c.Overflow = binary.BigEndian.Uint32(b[pos+local:])
		if c.Overflow == 0 {
			return c, CorruptAt(p.Pgno, off, "overflowing cell has no overflow page")
		}
	}
	c.Size = max(end-off, MinCellSize)
	return c, nil
}

// LeafEntry is the fast path of Cell for leaf pages: the rowid (table
// leaves), and the payload when it is all local. overflow reports a payload
// that spills onto overflow pages; callers then use Cell. It is a scan's
// per-row work: payload lengths below 2^14 and rowids below 2^21, the
// common cases, decode inline.
func (p *Page) LeafEntry(i int) (rowid int64, local []byte, overflow bool, err error) {
	ptr := p.cellPtrs + 2*i
	if ptr < p.cellPtrs || ptr+2 > p.cellPtrs+2*p.NCells {
		return 0, nil, false, CorruptAt(p.Pgno, ptr, "cell %d is beyond the cell pointer array", i)
	}
	// cellOffset's check, on the pointer already bounded above: calling it
	// instead made BenchmarkAll about 3% slower.
	off := int(p.Data[ptr])<<8 | int(p.Data[ptr+1])
	if off < p.cellPtrs+2*p.NCells || off > p.Usable-MinCellSize {
		_, err := p.CellOffset(i)
		return 0, nil, false, err
	}
	b := p.Data[off:p.Usable] // at least MinCellSize bytes
	var n uint64
	pos := 1
	switch {
	case b[0] < 0x80:
		n = uint64(b[0])
	case b[1] < 0x80:
		n, pos = uint64(b[0]&0x7f)<<7|uint64(b[1]), 2
	default:
		if n, pos = Uvarint(b); pos == 0 {
			return 0, nil, false, CorruptAt(p.Pgno, off, "cell extends off the end of the page")
		}
	}
	if p.Type == PageTableLeaf {
		switch {
		case pos < len(b) && b[pos] < 0x80:
			rowid = int64(b[pos])
			pos++
		case pos+1 < len(b) && b[pos+1] < 0x80:
			rowid = int64(b[pos]&0x7f)<<7 | int64(b[pos+1])
			pos += 2
		case pos+2 < len(b) && b[pos+2] < 0x80:
			rowid = int64(b[pos]&0x7f)<<14 | int64(b[pos+1]&0x7f)<<7 | int64(b[pos+2])
			pos += 3
		default:
			r, m := Uvarint(b[min(pos, len(b)):])
			if m == 0 {
				return 0, nil, false, CorruptAt(p.Pgno, off, "cell extends off the end of the page")
			}
			rowid = int64(r)
			pos += m
		}
	}
	if n > uint64(p.maxLocal) {
		return rowid, nil, true, nil
	}
	end := pos + int(n)
	if end > len(b) {
		return 0, nil, false, CorruptAt(p.Pgno, off, "cell of %d bytes extends off the end of the page", end)
	}
	return rowid, b[pos:end:end], false, nil
}

// TableCell is one cell of a table leaf page as TableLeafCells decodes it:
// the rowid and the payload, all of it local (aliasing the page).
type TableCell struct {
	Rowid   int64
	Payload []byte
}

// IndexLeafCells is TableLeafCells for an index leaf page: it decodes
// cells i, i+1, ... into out (Rowid 0), as many as fit, and stops early
// before a cell that is not plain (a payload that spills, an empty one,
// a length of 2^14 or more, a cell too near the page's end) or is
// malformed, which LeafEntry then reads. It decodes nothing on other page
// types.
//
//	index leaf cell: payload length n (1 or 2 bytes here) | payload
func (p *Page) IndexLeafCells(i int, out []TableCell) int {
	if p.Type != PageIndexLeaf || i < 0 || i >= p.NCells {
		return 0
	}
	out = out[:min(len(out), p.NCells-i)]
	data := p.Data[:p.Usable:p.Usable]
	ptrs, lo, maxLocal := p.cellPtrs+2*i, p.cellPtrs+2*p.NCells, p.maxLocal
	for k := range out {
		ptr := data[ptrs+2*k : ptrs+2*k+2 : ptrs+2*k+2]
		off := int(ptr[0])<<8 | int(ptr[1])
		if off < lo || off+2 > len(data) {
			return k
		}
		c := (*[2]byte)(data[off : off+2 : off+2])
		n, pos := int(c[0]), 1
		if n >= 0x80 {
			if c[1] >= 0x80 {
				return k
			}
			n, pos = (n&0x7f)<<7|int(c[1]), 2
		}
		if n == 0 || n > maxLocal {
			return k
		}
		start := off + pos
		end := start + n
		if end > len(data) {
			return k
		}
		out[k] = TableCell{Payload: data[start:end:end]}
	}
	return len(out)
}

// tableCellMaxHeader bounds the varints that open a table leaf cell on
// TableLeafCells' fast path: a payload length of at most 2 bytes and a
// rowid of at most 9.
const tableCellMaxHeader = 2 + MaxVarintLen

// TableLeafCells decodes cells i, i+1, ... of a table leaf page into out,
// as many as fit, and returns how many it decoded: a scan's per-row work,
// in one loop that calls nothing, so that what it keeps (the page, where
// the pointers are, the bounds) stays in registers. It stops early, before
// a cell that is not plain (a payload that spills onto overflow pages, an
// empty payload, a payload length of 2^14 or more, a cell that starts too
// near the end of the page) or is malformed: LeafEntry and Cell read that
// one, and report what is wrong with it. It decodes nothing on other page
// types.
func (p *Page) TableLeafCells(i int, out []TableCell) int {
	if p.Type != PageTableLeaf || i < 0 || i >= p.NCells {
		return 0
	}
	out = out[:min(len(out), p.NCells-i)]
	// The pointer array and the cells are both read from data, and its
	// length is its capacity: fewer values for the loop to keep.
	data := p.Data[:p.Usable:p.Usable]
	ptrs, lo, maxLocal := p.cellPtrs+2*i, p.cellPtrs+2*p.NCells, p.maxLocal
	for k := range out {
		// Load checked that the pointer array fits the usable size.
		ptr := data[ptrs+2*k : ptrs+2*k+2 : ptrs+2*k+2]
		off := int(ptr[0])<<8 | int(ptr[1])
		if off < lo || off+tableCellMaxHeader > len(data) {
			return k
		}
		//	c[0:1] or c[0:2]   payload length n, under 2^14
		//	r = c[1:] or c[2:] rowid, 1 to 9 bytes
		//	then               the payload, n bytes
		c := (*[tableCellMaxHeader]byte)(data[off : off+tableCellMaxHeader : off+tableCellMaxHeader])
		n, pos := int(c[0]), 1
		if n >= 0x80 {
			if c[1] >= 0x80 {
				return k
			}
			n, pos = (n&0x7f)<<7|int(c[1]), 2
		}
		if n == 0 || n > maxLocal { // empty (malformed: a record has a header), or it spills
			return k
		}
		var rowid int64
		r := (*[MaxVarintLen]byte)(c[pos:])
		switch {
		case r[0] < 0x80:
			rowid, pos = int64(r[0]), pos+1
		case r[1] < 0x80:
			rowid, pos = int64(r[0]&0x7f)<<7|int64(r[1]), pos+2
		case r[2] < 0x80:
			rowid, pos = int64(r[0]&0x7f)<<14|int64(r[1]&0x7f)<<7|int64(r[2]), pos+3
		default:
			// Four bytes or more, without a call (which would spill
			// everything the loop keeps in registers): seven bits a
			// byte, the ninth byte eight.
			v, m := uint64(0), 0
			for ; m < MaxVarintLen-1; m++ {
				v = v<<7 | uint64(r[m]&0x7f)
				if r[m] < 0x80 {
					break
				}
			}
			if m == MaxVarintLen-1 {
				v = v<<8 | uint64(r[m])
			}
			rowid, pos = int64(v), pos+m+1
		}
		start := off + pos
		end := start + n
		if end > len(data) {
			return k
		}
		out[k] = TableCell{Rowid: rowid, Payload: data[start:end:end]}
	}
	return len(out)
}

// IndexInteriorPayload is LeafEntry for index interior pages, whose cells
// carry a key too: the payload of cell i when it is all local; overflow
// reports one that spills, for Cell. Index seeks compare keys in interior
// pages as often as in leaves.
func (p *Page) IndexInteriorPayload(i int) (local []byte, overflow bool, err error) {
	off, ok := p.cellOffset(i)
	if !ok {
		return nil, false, p.cellOffsetError(i, off)
	}
	// At least MinCellSize bytes: the child's page number, then the
	// payload's length.
	b := p.Data[off:p.Usable]
	n, m := headerVarint(b[ChildPtrSize:])
	if m == 0 {
		return nil, false, CorruptAt(p.Pgno, off, "cell extends off the end of the page")
	}
	pos := ChildPtrSize + m
	if n > uint64(p.maxLocal) {
		return nil, true, nil
	}
	end := pos + int(n)
	if end > len(b) {
		return nil, false, CorruptAt(p.Pgno, off, "cell of %d bytes extends off the end of the page", end)
	}
	return b[pos:end:end], false, nil
}

// CacheLine is the stride at which a scan loads a page ahead of reading it.
const CacheLine = 64

// LinesAhead is how many cache lines of the next leaf a scan loads with each
// cell it reads, so that the leaf arrives from memory while this one is
// read: two lines a cell cover a 4 KiB page by the 32nd cell, and leave the
// CPU the cells' own work to overlap with the loads. Loading the whole page
// at once instead stalls: more lines are in flight than the CPU can track.
const LinesAhead = 2

// IndexBlobKey reads, for a search by one BLOB key, field 0 of the record
// in cell i of an index page (leaf or interior) when that is cheap: the
// payload lies whole on the page, its size takes one or two bytes, and the
// record's header is under 128 bytes with field 0's serial type in one or
// two. kind 1: the field is a BLOB, and key holds its bytes; kind -1: it is
// NULL, a number or TEXT, which sort before every BLOB under any
// collation; kind 0: anything else (a payload that spills, a longer
// varint, a reserved type, bytes out of range), for CompareKey to answer
// and report. Searches call it once per probe.
//
//	leaf cell:     payload size (varint) | payload
//	interior cell: child (u32) | payload size (varint) | payload
//	payload:       header length h | serial type 0 | ... | field 0 at h
func (p *Page) IndexBlobKey(i int) (key []byte, kind int) {
	off, ok := p.cellOffset(i)
	if !ok {
		return nil, 0
	}
	switch p.Type {
	case PageIndexInterior:
		off += ChildPtrSize
	case PageIndexLeaf:
	default:
		return nil, 0
	}
	data := p.Data[:p.Usable]
	if off+2 > len(data) {
		return nil, 0
	}
	size := int(data[off])
	if off++; size >= 0x80 {
		if data[off] >= 0x80 {
			return nil, 0
		}
		size = (size&0x7f)<<7 | int(data[off])
		off++
	}
	if size > p.maxLocal || size > len(data)-off || size < 2 {
		return nil, 0
	}
	rec := data[off : off+size]
	h := int(rec[0])
	if h < 2 || h >= 0x80 || h > len(rec) {
		return nil, 0
	}
	t := int(rec[1])
	if t >= 0x80 {
		if t == 0x80 || h < 3 || rec[2] >= 0x80 {
			return nil, 0
		}
		t = (t&0x7f)<<7 | int(rec[2])
	}
	var n int
	switch {
	case t >= 12:
		n = (t - 12) >> 1
	case t < len(smallSerialSize):
		n = int(smallSerialSize[t]) // -1 for the reserved 10 and 11
	}
	if n < 0 || n > len(rec)-h {
		return nil, 0
	}
	if t >= 12 && t&1 == 0 {
		return rec[h : h+n : h+n], 1
	}
	return nil, -1
}
