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
// Pages come from the source's flat pages where it has them (FlatPages: a
// read snapshot with no WAL frames), without a call per level; the common
// keys (a rowid of up to three bytes) are decoded inline, findKey taking
// the rest.
//
// The root's first and last keys are kept as a hint for the next call
// (Init keeps it): they place the first probe and bound nothing, so a root
// that changed since, or another tree's with the same page number and
// cell count, costs probes, never a wrong answer.
func (c *Cursor) FindRowid(rowid int64) (payload []byte, pgno uint32, st FindStatus) {
	return c.findRowid(rowid, c.root, 0, 0, false)
}

// findRowid is FindRowid from page pgno, whose keys lie in (lo, hi] when
// bounded (the bounds place guesses only): the root, or a leaf that a
// LeafDir gave.
func (c *Cursor) findRowid(rowid int64, pgno uint32, lo, hi int64, bounded bool) (payload []byte, _ uint32, st FindStatus) {
	c.depth, c.valid, c.err, c.leaves = 0, false, nil, 0 // positioned anew: see arrive
	usable := c.usable
	if usable < format.MinUsableSize {
		return nil, 0, FindUnsure
	}
	flat, ps := c.flat, c.flatPS
	for range MaxDepth {
		var data []byte
		if off := int(pgno-1) * ps; off < len(flat) && pgno > 0 {
			data = flat[off : off+ps : off+ps] // no call: see FlatPages
		} else {
			data = c.srcPage(pgno)
		}
		// Load the lines the search will read with the header, not after
		// it: where the keys are dense enough to be one leaf's cells, the
		// guessed cell's (see pushChildAhead); on a page below the root
		// with more keys, an interior page, the guessed cell's pointer
		// and cell as if it held as many cells as the last one did.
		if bounded && rowid > lo && rowid <= hi {
			if uint64(hi)-uint64(lo) <= uint64(usable) {
				c.sink += loadGuessed(data, usable, rowid-lo-1, hi-lo)
			} else if n := c.innerCells; n > 0 && len(data) >= usable {
				g := min(guessCell(rowid, lo, hi, 0, n), n-1)
				c.sink += data[min(format.PageHeaderSizeInterior+2*g, usable-1)]
				c.sink += loadGuessed(data, usable, int64(g), int64(n))
			}
		}
		if len(data) < usable {
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
		skip := 1 // from a cell to its key: a payload size of one byte, or the child's page number
		if !leaf {
			skip = format.InteriorChildSize
			if typ != format.PageTableInterior {
				return nil, 0, FindUnsure
			}
			ptrs = hdr + format.PageHeaderSizeInterior
		}
		end := ptrs + 2*n // the smallest cell offset allowed
		if end > usable-format.MinCellSize {
			return nil, 0, FindUnsure
		}
		// The first key >= rowid is cell a, a in [a, b]; kLo is the key
		// of cell a-1 (the parent's lo for a = 0) and kHi that of cell b
		// (the parent's hi for b = n), known where a > 0 or bounded, and
		// where b < n or bounded.
		a, b := 0, n
		kLo, kHi := lo, hi
		m, steps := -1, 0 // the first probe when guessed, and the neighbour probes after it
		if bounded {
			if n > 2 && rowid > lo && rowid <= hi {
				m, steps = guessCell(rowid, lo, hi, 0, n), 1
			}
		} else if n >= unboundedGuessCells {
			if c.hintPgno == pgno && c.hintCells == n {
				// The root's first and last keys as the last lookup read
				// them: where to guess, never bounds, so that a root
				// changed since costs probes, not a wrong answer.
				switch first, last := c.hintFirst, c.hintLast; {
				case rowid <= first:
					m = 0
				case rowid > last:
					m = n - 1
				default:
					m = guessCell(rowid, first, last, 1, n-1)
				}
				steps = 1
			} else {
				// The root: its first and last keys bound the cells between.
				k0, ok := findKey(data, ptrs, end, leaf, 0)
				kl, ok2 := findKey(data, ptrs, end, leaf, n-1)
				if !ok || !ok2 {
					return nil, 0, FindUnsure
				}
				c.hintPgno, c.hintCells, c.hintFirst, c.hintLast = pgno, n, k0, kl
				var inside bool
				if a, b, kLo, kHi, inside = rootRange(rowid, k0, kl, n, kLo, kHi); inside {
					m, steps = guessCell(rowid, k0, kl, 1, n-1), 1
				}
			}
		}
		if m < 0 {
			m = int(uint(a+b) >> 1)
		}
		// A guessed probe and its neighbour towards rowid, then bisection.
		// A leaf's cell that holds rowid ends the search: keys are unique.
		for m = min(max(m, a), b-1); a < b; {
			// The key of cell m: findKey, with its common case inline (a
			// rowid of at most three bytes after, on a leaf, a payload
			// size of at most two).
			p := ptrs + 2*m
			off := int(data[p])<<8 | int(data[p+1])
			k, ok := int64(0), false
			if off >= end && off+format.InteriorChildSize+3 <= usable {
				key := off + skip
				if leaf && data[off] >= 0x80 {
					key++
				}
				// c[0] ends the payload size on a leaf; c[1:] starts the key.
				if c := (*[4]byte)(data[key-1 : key+3]); !leaf || c[0] < 0x80 {
					switch {
					case c[1] < 0x80:
						k, ok = int64(c[1]), true
					case c[2] < 0x80:
						k, ok = int64(c[1]&0x7f)<<7|int64(c[2]), true
					case c[3] < 0x80:
						k, ok = int64(c[1]&0x7f)<<14|int64(c[2]&0x7f)<<7|int64(c[3]), true
					}
				}
			}
			if !ok {
				if k, ok = findKey(data, ptrs, end, leaf, m); !ok {
					return nil, 0, FindUnsure
				}
			}
			if k < rowid {
				a, kLo = m+1, k
				m = a
			} else {
				b, kHi = m, k
				if k == rowid && leaf {
					a = m
					break
				}
				m = b - 1
			}
			if steps == 0 {
				m = int(uint(a+b) >> 1)
			}
			steps = 0
		}
		if leaf {
			if a == n || kHi != rowid {
				return nil, 0, FindAbsent
			}
			return c.leafFound(data, pgno, ptrs, a, usable)
		}
		if bounded {
			c.innerCells = n // for the next lookup's loads above
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
		bounded = (a > 0 || bounded) && (a < n || bounded)
		lo, hi = kLo, kHi
		pgno = child
	}
	return nil, 0, FindUnsure // deeper than MaxDepth: a cycle
}

// leafFound returns the payload of cell a of leaf data, page pgno, whose
// cell pointers start at ptrs: the row the search found. The search's
// probe of cell a checked its offset and both varints.
func (c *Cursor) leafFound(data []byte, pgno uint32, ptrs, a, usable int) ([]byte, uint32, FindStatus) {
	off := int(data[ptrs+2*a])<<8 | int(data[ptrs+2*a+1])
	// findKey(a) checked off and both varints; the payload size
	// is read again here, in full, and the rowid's length: inline
	// for a size under 2^14 and a rowid of at most three bytes.
	var size uint64
	m, m2 := 0, 0
	if off+5 <= len(data) {
		c := (*[5]byte)(data[off : off+5])
		if c[0] < 0x80 {
			size, m = uint64(c[0]), 1
		} else if c[1] < 0x80 {
			size, m = uint64(c[0]&0x7f)<<7|uint64(c[1]), 2
		}
		switch {
		case m == 0:
		case c[m] < 0x80:
			m2 = 1
		case c[m+1] < 0x80:
			m2 = 2
		case c[m+2] < 0x80:
			m2 = 3
		}
	}
	if m2 == 0 {
		size, m = format.Uvarint(data[off:])
		_, m2 = format.Uvarint(data[off+m:])
	}
	if size > uint64(c.maxLocal) {
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

// rootRange narrows the search of a root of n cells whose first and last
// keys are k0 and kl: the first key >= rowid is cell a, a in [a, b], and
// lo and hi become the keys of cells a-1 and b where k0 or kl is one of
// them. inside reports rowid in (k0, kl], where the cells between are worth
// a guess.
func rootRange(rowid, k0, kl int64, n int, lo, hi int64) (a, b int, kLo, kHi int64, inside bool) {
	switch {
	case rowid <= k0:
		return 0, 0, lo, k0, false
	case rowid > kl:
		return n, n, kl, hi, false
	}
	return 1, n - 1, k0, kl, true
}

// srcPage returns page pgno from the source, for FindRowid, where the flat
// pages do not hold it (a snapshot with WAL frames, a write transaction);
// nil when it cannot be read. It is kept out of line, so that FindRowid's
// loop holds no interface call.
//
//go:noinline
func (c *Cursor) srcPage(pgno uint32) []byte {
	data, err := c.src.Page(pgno)
	if err != nil {
		return nil
	}
	return data
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
