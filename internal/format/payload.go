package format

import "encoding/binary"

// Payload size limits (integer arithmetic, / truncates; U = usable size):
//
//	X_table_leaf = U - 35                    max payload kept whole on a table leaf
//	X_index      = (U - 12) * 64 / 255 - 23  index leaf and index interior
//	M            = (U - 12) * 32 / 255 - 23  min local payload, all kinds
//	K            = M + (P - M) % (U - 4)
//	P <= X: L = P;  else K <= X: L = K;  else L = M
//
// The L bytes stored on the page are followed, when P > L, by the 4-byte
// number of the first overflow page. An overflow page holds a 4-byte next
// page number (0 on the last) and U-4 payload bytes.

// OverflowPageHeaderSize is the next-page pointer at the start of an
// overflow page.
const OverflowPageHeaderSize = 4

// OverflowNext returns the page after overflow page data in its chain, 0
// on the last.
func OverflowNext(data []byte) uint32 { return binary.BigEndian.Uint32(data[:OverflowPageHeaderSize]) }

// SetOverflowNext sets the next page of the chain that overflow page data
// continues, 0 on the last.
func SetOverflowNext(data []byte, next uint32) {
	binary.BigEndian.PutUint32(data[:OverflowPageHeaderSize], next)
}

// MaxLocal returns X, the largest payload stored entirely on a page.
func MaxLocal(usable int, tableLeaf bool) int {
	if tableLeaf {
		return usable - 35
	}
	return (usable-12)*64/255 - 23
}

// MinLocal returns M, the least payload stored on the page when it overflows.
func MinLocal(usable int) int { return (usable-12)*32/255 - 23 }

// LocalSize returns L, the number of payload bytes stored on the page for a
// payload of n bytes.
func LocalSize(n int64, usable int, tableLeaf bool) int {
	x := MaxLocal(usable, tableLeaf)
	if n <= int64(x) {
		return int(n)
	}
	m := MinLocal(usable)
	k := int64(m) + (n-int64(m))%int64(usable-OverflowPageHeaderSize)
	if k <= int64(x) {
		return int(k)
	}
	return m
}

// OverflowPages returns how many overflow pages a payload of n bytes needs.
func OverflowPages(n int64, usable int, tableLeaf bool) int64 {
	rest := n - int64(LocalSize(n, usable, tableLeaf))
	per := int64(usable - OverflowPageHeaderSize)
	return (rest + per - 1) / per
}
