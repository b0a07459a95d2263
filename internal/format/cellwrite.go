package format

import "encoding/binary"

// Cell encoders: the write side of cell.go. Each Put function writes one
// cell at the start of b and returns its length; the matching Len function
// says how long it will be, so that the caller can reserve the space first
// (Page.AllocCell) and encode straight into the page.
//
//	table leaf (13):     varint payloadLen | varint rowid | local payload | [u32 overflow]
//	table interior (5):  u32 left child    | varint rowid
//	index leaf (10):     varint payloadLen | local payload | [u32 overflow]
//	index interior (2):  u32 left child    | varint payloadLen | local payload | [u32 overflow]
//
// "local payload" is the first LocalSize(payloadLen) bytes of the payload
// (payload.go); the 4-byte number of the first overflow page follows it
// exactly when the payload is longer than that. An index interior cell is an
// index leaf cell behind a 4-byte child pointer: both kinds keep the same
// local size, so an entry moves between leaf and interior pages by adding or
// removing the first 4 bytes.
//
// A cell shorter than 4 bytes still owns 4 bytes of content area (see
// CellSpace).

// ChildPtrSize is the 4-byte left-child page number that starts every
// interior cell.
const ChildPtrSize = 4

// overflowPtrSize is the 4-byte first-overflow page number that ends a cell
// whose payload spills.
const overflowPtrSize = 4

// CellChild returns the left child page that interior cell cell opens
// with.
func CellChild(cell []byte) uint32 { return binary.BigEndian.Uint32(cell) }

// SetCellChild sets the left child page that interior cell cell opens with.
func SetCellChild(cell []byte, child uint32) { binary.BigEndian.PutUint32(cell, child) }

// CellSpace returns the content-area bytes a cell of n encoded bytes owns:
// never less than 4, as SQLite counts it.
func CellSpace(n int) int { return max(n, MinCellSize) }

// TableLeafCellLen returns the encoded length of the table leaf cell for a
// row of payloadLen bytes, and how many of those bytes are stored locally.
func TableLeafCellLen(rowid, payloadLen int64, usable int) (cellLen, local int) {
	local = LocalSize(payloadLen, usable, true)
	cellLen = VarintLen(uint64(payloadLen)) + VarintLen(uint64(rowid)) + local
	if int64(local) < payloadLen {
		cellLen += overflowPtrSize
	}
	return cellLen, local
}

// PutTableLeafCell writes a table leaf cell: local is the locally stored
// prefix of the payload and overflow the first overflow page (written only
// when local is shorter than payloadLen).
func PutTableLeafCell(b []byte, rowid, payloadLen int64, local []byte, overflow uint32) int {
	n := putVarintFast(b, uint64(payloadLen))
	n += putVarintFast(b[n:], uint64(rowid))
	n += copy(b[n:], local)
	if int64(len(local)) < payloadLen {
		binary.BigEndian.PutUint32(b[n:], overflow)
		n += overflowPtrSize
	}
	return n
}

// TableInteriorCellLen returns the encoded length of a table interior cell.
func TableInteriorCellLen(rowid int64) int { return ChildPtrSize + VarintLen(uint64(rowid)) }

// PutTableInteriorCell writes a table interior cell: left child, rowid key.
func PutTableInteriorCell(b []byte, child uint32, rowid int64) int {
	binary.BigEndian.PutUint32(b, child)
	return ChildPtrSize + putVarintFast(b[ChildPtrSize:], uint64(rowid))
}

// IndexCellLen returns the encoded length of the index leaf cell (interior
// false) or index interior cell (interior true) for a key of payloadLen
// bytes, and how many of those bytes are stored locally.
func IndexCellLen(payloadLen int64, usable int, interior bool) (cellLen, local int) {
	local = LocalSize(payloadLen, usable, false)
	cellLen = VarintLen(uint64(payloadLen)) + local
	if int64(local) < payloadLen {
		cellLen += overflowPtrSize
	}
	if interior {
		cellLen += ChildPtrSize
	}
	return cellLen, local
}

// PutIndexLeafCell writes an index leaf cell.
func PutIndexLeafCell(b []byte, payloadLen int64, local []byte, overflow uint32) int {
	n := putVarintFast(b, uint64(payloadLen))
	n += copy(b[n:], local)
	if int64(len(local)) < payloadLen {
		binary.BigEndian.PutUint32(b[n:], overflow)
		n += overflowPtrSize
	}
	return n
}

// PutIndexInteriorCell writes an index interior cell.
func PutIndexInteriorCell(b []byte, child uint32, payloadLen int64, local []byte, overflow uint32) int {
	binary.BigEndian.PutUint32(b, child)
	return ChildPtrSize + PutIndexLeafCell(b[ChildPtrSize:], payloadLen, local, overflow)
}

// putVarintFast is PutUvarint with the one- and two-byte forms (payload
// lengths below 16384, rowids below 16384) inline.
func putVarintFast(b []byte, v uint64) int {
	if v < 0x80 {
		b[0] = byte(v)
		return 1
	}
	if v < 0x4000 {
		b[0] = byte(v>>7) | 0x80
		b[1] = byte(v & 0x7f)
		return 2
	}
	return PutUvarint(b, v)
}
