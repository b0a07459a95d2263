package btree

import "github.com/pagodadb/pagoda/internal/format"

// FindStatus is what FindRowid learned.
type FindStatus uint8

const (
	// FindUnsure: the short path cannot answer: a page is not as a
	// well-formed table b-tree has it. SeekRowid answers, and reports the
	// damage.
	FindUnsure FindStatus = iota
	// FindFound: the row is there and its payload lies whole on its leaf.
	FindFound
	// FindAbsent: there is no row with that rowid.
	FindAbsent
	// FindSpills: the row is there and its payload spills onto overflow
	// pages. The cursor is on it for Entry, Payload, PayloadRef and Page,
	// which read the chain; it holds the leaf alone, so it must be sought
	// again before it moves.
	FindSpills
)

// Table b-tree pages as FindRowid reads them (sqlite-format.md, 1.5/1.6;
// the offsets are format's):
//
//	page header (at 100 on page 1, else at 0)
//	  +0  type: 0x05 table interior, 0x0D table leaf
//	  +3  number of cells (u16)                  format.PageHdrNumCells
//	  +8  right-most child (u32, interior only)  format.PageHdrRightChild
//	  +8 / +12  cell pointer array: u16 offsets, in key order
//
//	interior cell: child (u32) | rowid (varint)  format.InteriorChildSize
//	leaf cell:     payload size (varint) | rowid (varint) | payload ...
//
// Every cell owns at least format.MinCellSize bytes.

// FindRowid looks rowid up in the cursor's table b-tree: the search
// SeekRowid makes (an interpolated probe per page, its neighbour, then
// bisection; the guessed cell's lines loaded with the leaf's header), in
// one loop over the page bytes, with no cursor stack and no error built.
// It is the point lookup's short path: anything it does not expect makes
// it answer FindUnsure, and the caller falls back to SeekRowid, which
// reports what is wrong. Found, it returns the row's payload and leaf;
// FindSpills leaves the cursor on the row (see there); otherwise the
// cursor is left invalid.
//
// The root's first and last keys are kept as a hint for the next call
// (Init keeps it): they place the first probe and bound nothing, so a root
// that changed since, or another tree's with the same page number and
// cell count, costs probes, never a wrong answer.
func (c *Cursor) FindRowid(rowid int64) (payload []byte, pgno uint32, st FindStatus) {
	c.depth, c.valid, c.err = 0, false, nil
	usable := c.usable
	if usable < format.MinUsableSize {
		return nil, 0, FindUnsure
	}
	pgno = c.root
	var lo, hi int64 // the page's keys lie in (lo, hi] when bounded
	bounded := false
	data, err := c.src.Page(pgno)
	for range MaxDepth {
		if err != nil || len(data) < usable {
			return nil, 0, FindUnsure
		}
		data = data[:usable]
		hdr := format.HeaderOffset(pgno)
		if hdr+format.PageHeaderSizeInterior > usable {
			return nil, 0, FindUnsure
		}
		typ := format.PageType(data[hdr])
		n := int(data[hdr+format.PageHdrNumCells])<<8 | int(data[hdr+format.PageHdrNumCells+1])
		leaf := typ == format.PageTableLeaf
		ptrs := hdr + format.PageHeaderSizeLeaf
		if !leaf {
			if typ != format.PageTableInterior {
				return nil, 0, FindUnsure
			}
			ptrs = hdr + format.PageHeaderSizeInterior
		}
		end := ptrs + 2*n // the smallest cell offset allowed
		if end > usable-format.MinCellSize {
			return nil, 0, FindUnsure
		}
		a, b := 0, n // the first key >= rowid is cell a, a in [a, b]
		loKey, hiKey := lo, hi
		loSeen, hiSeen := bounded, bounded
		ga, gn, glo, ghi := 0, n, lo, hi
		guess, hinted := bounded, false
		if !bounded && n >= unboundedGuessCells {
			if c.hintPgno == pgno && c.hintCells == n {
				// The root's first and last keys as the last lookup read
				// them: where to guess, never bounds, so that a root
				// changed since costs probes, not a wrong answer.
				ga, gn, glo, ghi, guess, hinted = 1, n-1, c.hintFirst, c.hintLast, true, true
			} else {
				// The root: its first and last keys bound the cells between.
				k0, ok := findKey(data, ptrs, end, leaf, 0)
				kl, ok2 := findKey(data, ptrs, end, leaf, n-1)
				if !ok || !ok2 {
					return nil, 0, FindUnsure
				}
				c.hintPgno, c.hintCells, c.hintFirst, c.hintLast = pgno, n, k0, kl
				switch {
				case rowid <= k0:
					b, hiKey = 0, k0
				case rowid > kl:
					a, loKey = n, kl
				default:
					a, loKey, b, hiKey = 1, k0, n-1, kl
					ga, gn, glo, ghi, guess = 1, n-1, k0, kl, true
				}
			}
		}
		if guess && gn > 2 && (hinted || rowid > glo && rowid <= ghi) {
			var g int
			switch {
			case rowid <= glo:
				g = 0
			case rowid > ghi:
				g = n - 1
			default:
				g = guessCell(rowid, glo, ghi, ga, gn)
			}
			g = min(max(g, a), b-1)
			k, ok := findKey(data, ptrs, end, leaf, g)
			if !ok {
				return nil, 0, FindUnsure
			}
			if k == rowid && leaf {
				// Keys are unique and ascending: the cell is the row.
				a, b, hiKey = g, g, k
			} else if k < rowid {
				a, loKey = g+1, k
				if a < b {
					if k, ok = findKey(data, ptrs, end, leaf, a); !ok {
						return nil, 0, FindUnsure
					}
					if k >= rowid {
						b, hiKey = a, k
					} else {
						a, loKey = a+1, k
					}
				}
			} else {
				b, hiKey = g, k
				if g > a {
					if k, ok = findKey(data, ptrs, end, leaf, g-1); !ok {
						return nil, 0, FindUnsure
					}
					if k < rowid {
						a, loKey = g, k
					} else {
						b, hiKey = g-1, k
					}
				}
			}
		}
		for a < b {
			m := int(uint(a+b) >> 1)
			k, ok := findKey(data, ptrs, end, leaf, m)
			if !ok {
				return nil, 0, FindUnsure
			}
			if k < rowid {
				a, loKey = m+1, k
			} else {
				b, hiKey = m, k
			}
		}
		if leaf {
			if a == n || hiKey != rowid {
				return nil, 0, FindAbsent
			}
			off := int(data[ptrs+2*a])<<8 | int(data[ptrs+2*a+1])
			// findKey(a) checked off and both varints; the payload size
			// is read again here, in full.
			size, m := format.Uvarint(data[off:])
			_, m2 := format.Uvarint(data[off+m:])
			if size > uint64(format.MaxLocal(usable, true)) {
				// Spills: the cursor on the row reads the chain.
				if c.pushData(pgno, data) != nil {
					return nil, 0, FindUnsure
				}
				c.cur.idx, c.valid = a, true
				return nil, pgno, FindSpills
			}
			start := off + m + m2
			if uint64(usable-start) < size {
				return nil, 0, FindUnsure
			}
			return data[start : start+int(size) : start+int(size)], pgno, FindFound
		}
		// Child a, whose keys lie between the separators around it.
		var child uint32
		if a < n {
			off := int(data[ptrs+2*a])<<8 | int(data[ptrs+2*a+1]) // checked by findKey(a)
			child = uint32(data[off])<<24 | uint32(data[off+1])<<16 | uint32(data[off+2])<<8 | uint32(data[off+3])
		} else {
			r := hdr + format.PageHdrRightChild
			child = uint32(data[r])<<24 | uint32(data[r+1])<<16 | uint32(data[r+2])<<8 | uint32(data[r+3])
		}
		lo, hi = loKey, hiKey
		bounded = (a > 0 || loSeen) && (a < n || hiSeen)
		pgno = child
		data, err = c.src.Page(pgno)
		// The child's keys are dense enough to be one leaf's cells: load
		// the guessed cell's lines with its header (see pushChildAhead).
		if err == nil && bounded && rowid > lo && rowid <= hi && uint64(hi)-uint64(lo) <= uint64(usable) {
			c.sink += loadGuessed(data, usable, rowid-lo-1, hi-lo)
		}
	}
	return nil, 0, FindUnsure // deeper than MaxDepth: a cycle
}

// findKey returns the rowid of cell i of a table page whose cell pointers
// start at ptrs and end at end (also the least cell offset allowed); data
// is cut at the usable size. ok is false for an offset out of range or a
// varint that runs off the page.
func findKey(data []byte, ptrs, end int, leaf bool, i int) (int64, bool) {
	p := ptrs + 2*i
	off := int(data[p])<<8 | int(data[p+1])
	if off < end || off > len(data)-format.MinCellSize {
		return 0, false
	}
	if !leaf {
		off += format.InteriorChildSize
	} else if data[off] < 0x80 {
		off++ // a payload size of one byte: nearly every row under 128 bytes
	} else {
		_, m := format.Uvarint(data[off:])
		if m == 0 {
			return 0, false
		}
		off += m
	}
	if v, ok := format.ShortVarint(data, off); ok {
		return int64(v), true
	}
	v, m := format.Uvarint(data[min(off, len(data)):])
	return int64(v), m != 0
}

// guessCell returns where rowid, in (glo, ghi], sits among the gn cells
// from ga whose keys lie in that range if the keys are evenly spread. One
// key per cell (a dense page) needs no division.
func guessCell(rowid, glo, ghi int64, ga, gn int) int {
	span := uint64(ghi) - uint64(glo)
	if span == uint64(gn) {
		return ga + int(uint64(rowid)-uint64(glo)-1)
	}
	return ga + int(float64(uint64(rowid)-uint64(glo)-1)/float64(span)*float64(gn))
}
