package btree

import "github.com/pagodadb/pagoda/internal/format"

// FindStatus is what FindRowid learned.
type FindStatus uint8

const (
	// FindUnsure: the short path cannot answer: a page is not as a
	// well-formed table b-tree has it. SeekRowid answers, and reports the
	// damage. (A seek answers it where it failed: Err says why.)
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
//	interior cell: child (u32) | rowid (varint)  format.ChildPtrSize
//	leaf cell:     payload size (varint) | rowid (varint) | payload ...
//
// Every cell owns at least format.MinCellSize bytes.

// FindRowid looks rowid up in the cursor's table b-tree, with the rowid
// search (search) and no cursor stack or error built: the point lookup's
// short path. Anything it does not expect makes it answer FindUnsure, and
// the caller falls back to SeekRowid, which reports what is wrong. Found,
// it returns the row's payload and leaf; FindSpills leaves the cursor on
// the row (see there); otherwise the cursor is left invalid.
//
// After UseLeafDir it finds the leaf in the directory, instead of by a
// search from the root, and then makes the leaf search's first probe
// before anything else is read: on a leaf of the flat pages that holds
// one key a cell (keys lo+1 .. hi), the search guesses cell rowid-lo-1,
// and this short path reads that cell alone, where it is small enough to
// lie whole on the leaf, with its varints short (a payload size of one or
// two bytes, a rowid of one to four), and checks that it holds rowid. The
// lines where that cell should start are loaded with the leaf's header,
// from the cell size of the last leaf read. Anything else goes to the
// search from the leaf, which answers for every page.
func (c *Cursor) FindRowid(rowid int64) (payload []byte, pgno uint32, st FindStatus) {
	c.depth, c.valid = 0, false // positioned anew
	if c.err != nil {
		c.err = nil
	}
	d := c.dir
	if d == nil {
		c.leaves = 0 // see arrive
		return c.search(rowid, c.root, keyRange{}, false)
	}
	// The leaf: leaf's first guess, inline, or leaf. The guess's
	// arithmetic may wrap for keys far apart: any g is checked.
	var lo, hi int64
	e := d.ents
	if g := 1 + int(float64(rowid-d.k0-1)*d.scale); uint(g-1) < uint(len(e)-2) && e[g].key >= rowid && e[g-1].key < rowid {
		pgno, lo, hi = e[g].page, e[g-1].key, e[g].key
	} else {
		pgno, lo, hi = d.leaf(rowid)
	}
	// The short path, every check on its way out to one call of the loop,
	// and each read through one bounds check: what it keeps stays in
	// registers, and a lookup runs fewer instructions between its trip to
	// memory and the next lookup's.
	usable := c.usable
	var data []byte
	if pgno <= 1 || rowid <= lo || uint64(hi)-uint64(lo) >= uint64(usable) {
		goto loop
	}
	if o := uint64(pgno-1) * uint64(c.flatPS); o < uint64(len(c.flat)) { // pgno > 1; 64 bits: no overflow on 32
		off := int(o)
		data = c.flat[off : off+usable : off+usable]
	} else {
		data = c.pageData(pgno)
	}
	if len(data) == usable {
		n, m := int(hi-lo), int(rowid-lo-1) // cells, and the cell if dense: 0 <= m < n < usable
		g := usable - (m+1)*c.leafCell
		if uint(g) < uint(usable-format.CacheLine) {
			c.sink += data[g] + data[g+format.CacheLine]
		}
		//	header: type (+0), cells (+3); pointers from +8
		h := (*[format.PageHeaderSizeLeaf]byte)(data) // usable >= MinUsableSize
		if format.PageType(h[0]) != format.PageTableLeaf || int(h[format.PageHdrNumCells])<<8|int(h[format.PageHdrNumCells+1]) != n {
			goto loop
		}
		p := format.PageHeaderSizeLeaf + 2*m
		if p > usable-2 {
			goto loop
		}
		ptr := (*[2]byte)(data[p:])
		cell := int(ptr[0])<<8 | int(ptr[1])
		if cell < format.PageHeaderSizeLeaf+2*n || cell > usable-findCellView {
			goto loop
		}
		// cell: payload size (1-2 bytes) | rowid (1-4 bytes) | payload
		b := (*[findCellView]byte)(data[cell:])
		size, at := int(b[0]), 1
		if size >= 0x80 {
			if b[1] >= 0x80 {
				goto loop
			}
			size, at = int(b[0]&0x7f)<<7|int(b[1]), 2
		}
		r := (*[4]byte)(b[at:])
		var k int64
		switch {
		case r[0] < 0x80:
			k, at = int64(r[0]), at+1
		case r[1] < 0x80:
			k, at = int64(r[0]&0x7f)<<7|int64(r[1]), at+2
		case r[2] < 0x80:
			k, at = int64(r[0]&0x7f)<<14|int64(r[1]&0x7f)<<7|int64(r[2]), at+3
		case r[3] < 0x80:
			k, at = int64(r[0]&0x7f)<<21|int64(r[1]&0x7f)<<14|int64(r[2]&0x7f)<<7|int64(r[3]), at+4
		default:
			goto loop
		}
		start := cell + at
		if k != rowid || size > c.maxLocal || size > usable-start {
			goto loop
		}
		if uint(g)/format.CacheLine != uint(cell)/format.CacheLine {
			// Guessed wrong: the next leaf's cells are guessed this
			// one's size.
			c.leafCell = (usable - cell) / (m + 1)
		}
		return data[start : start+size : start+size], pgno, FindFound
	}
loop:
	return c.search(rowid, pgno, keyRange{lo: lo, hi: hi, loOK: true, hiOK: true}, false)
}

// pageData returns the usable bytes of page pgno, read through the source,
// for a short path (FindRowid, FindBlob) when the flat pages do not hold
// it, as when a snapshot's WAL holds frames; nil when it cannot be read.
func (c *Cursor) pageData(pgno uint32) []byte {
	data, err := c.src.Page(pgno)
	if err != nil || len(data) < c.usable {
		return nil
	}
	return data[:c.usable:c.usable]
}

// findCellView is how many bytes of a cell FindRowid's short path reads
// at once: a payload size of up to 2 bytes and a rowid of up to 4.
const findCellView = 6

// keyRange is what a search knows of the keys of a page from the
// separators around it in its parent: they lie in (lo, hi], each end
// where known (loOK, hiOK). The root's are unknown.
type keyRange struct {
	lo, hi     int64
	loOK, hiOK bool
}

// rootHint is FindRowid's hint: the cells and first and last keys of the
// root it last searched, page pgno. A cursor keeps it across Init (a
// Table's Get inits its cursor each call): it only places a first probe,
// so one from another tree or snapshot costs probes, never a wrong answer.
type rootHint struct {
	pgno        uint32
	cells       int
	first, last int64
}

// unboundedGuessCells is the fewest cells for which a search of a page
// without a lower bound from a parent (the root, the tree's left edge)
// reads its first key, with its last, to guess from: two probes that
// replace about log2(cells) - 2.
const unboundedGuessCells = 16

// search is the rowid search, FindRowid's, SeekRowid's and (through
// seekRowid) the writer's: from page pgno, whose keys lie in r, it
// descends to the leaf where rowid is or belongs.
//
// Each page is searched in the same way. Rowids are mostly dense, so the
// first probe is where rowid would sit if the page's keys were evenly
// spread between the separators around it in its parent (r), the second
// its neighbour towards rowid, and bisection follows: on a dense page
// that finds the cell in two probes instead of log2(cells), and each
// probe into a page not in the CPU cache is a miss, most of a random
// lookup's time. A page without both bounds (the root, a page on the
// tree's edge) is bisected, or, with many cells, bounded by its own first
// and last keys (which FindRowid keeps for its next call: rootHint); a
// writer (c.writing) reads the last key first where the upper bound is
// unknown, so that appends take one probe a level. On a leaf, the cell
// that holds rowid ends the search: keys are unique. The lines a search
// will read are loaded with the page's header, not after it: where the
// keys are dense enough to be one leaf's cells, the guessed cell's; on an
// interior page below the root, the guessed cell's pointer and cell as if
// it held as many cells as the last one did.
//
// Pages come from the source's flat pages where it has them (FlatPages: a
// read snapshot with no WAL frames), without a call a level; the common
// keys are decoded inline, findKey taking the rest. A lookup answers as
// FindRowid, FindUnsure for anything it does not expect.
//
// A seek (seekRowid) goes one level a call, over the page on top of the
// cursor's stack, which it loaded with its checks: search leaves in c.at
// the first cell whose key is >= rowid (the cell count for none), and on
// an interior page answers findDown with the child's range in c.next,
// once the child's lines are loaded (from the flat pages); on a leaf, FindFound when the cell
// holds rowid, else FindAbsent. FindUnsure: c.at is a cell whose key
// cannot be read, or -1.
func (c *Cursor) search(rowid int64, pgno uint32, r keyRange, seek bool) (payload []byte, _ uint32, st FindStatus) {
	usable := c.usable
	if usable < format.MinUsableSize {
		return nil, 0, FindUnsure
	}
	flat, ps := c.flat, c.flatPS
	for level := range MaxDepth {
		var data []byte
		if o := uint64(pgno-1) * uint64(ps); o < uint64(len(flat)) && pgno > 0 { // 64 bits: no overflow on 32
			off := int(o)
			data = flat[off : off+ps : off+ps] // no call: see FlatPages
		} else {
			data = c.srcPage(pgno)
		}
		bounded := r.loOK && r.hiOK
		if lo, hi := r.lo, r.hi; bounded && rowid > lo && rowid <= hi {
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
		if !leaf {
			if typ != format.PageTableInterior {
				return nil, 0, FindUnsure
			}
			ptrs = hdr + format.PageHeaderSizeInterior
		}
		end := ptrs + 2*n // the smallest cell offset allowed (each probe checks its cell's)
		if end > usable {
			return nil, 0, FindUnsure
		}

		// The first key >= rowid is cell a, a in [a, b]; kLo is the key
		// of cell a-1 (r.lo for a = 0) and kHi that of cell b (r.hi for
		// b = n), known where a > 0 or r.loOK, and where b < n or r.hiOK.
		a, b := 0, n
		kLo, kHi := r.lo, r.hi
		m, steps := -1, 0 // the first probe when guessed, and the neighbour probe after it
		switch {
		case bounded:
			if n > 2 && rowid > kLo && rowid <= kHi {
				m, steps = guessCell(rowid, kLo, kHi, 0, n), 1
			}
		case n == 0:
		case seek && c.writing && !r.hiOK:
			// A write on the right edge, where appends go: the last cell
			// first, then a guess up to its key.
			kl, ok := findKey(data, ptrs, end, leaf, n-1)
			switch {
			case !ok:
				c.at = n - 1
				return nil, 0, FindUnsure
			case kl < rowid:
				a, kLo = n, kl
			default:
				b, kHi = n-1, kl
				if r.loOK && n > 2 && rowid > kLo {
					m, steps = guessCell(rowid, kLo, kl, 0, n), 1
				}
			}
		case n < unboundedGuessCells:
		case !seek && c.hint.pgno == pgno && c.hint.cells == n:
			// The root's first and last keys as the last lookup read
			// them: where to guess, never bounds, so that a root changed
			// since costs probes, not a wrong answer.
			switch first, last := c.hint.first, c.hint.last; {
			case rowid <= first:
				m = 0
			case rowid > last:
				m = n - 1
			default:
				m = guessCell(rowid, first, last, 1, n-1)
			}
			steps = 1
		default:
			// The root, or a page on the tree's edge: its first and last
			// keys bound the cells between.
			k0, ok := findKey(data, ptrs, end, leaf, 0)
			if !ok {
				c.at = 0
				return nil, 0, FindUnsure
			}
			kl, ok := findKey(data, ptrs, end, leaf, n-1)
			if !ok {
				c.at = n - 1
				return nil, 0, FindUnsure
			}
			if !seek {
				c.hint = rootHint{pgno: pgno, cells: n, first: k0, last: kl}
			}
			switch {
			case rowid <= k0:
				b, kHi = 0, k0
			case rowid > kl:
				a, b, kLo = n, n, kl
			default:
				a, b, kLo, kHi = 1, n-1, k0, kl
				m, steps = guessCell(rowid, k0, kl, 1, n-1), 1
			}
		}
		if m < 0 {
			m = int(uint(a+b) >> 1)
		}
		// A guessed probe and its neighbour towards rowid, then bisection.
		skip := 1 // from a cell to its key: a payload size of one byte, or the child's page number
		if !leaf {
			skip = format.ChildPtrSize
		}
		for m = min(max(m, a), b-1); a < b; {
			// The key of cell m: findKey, with its common case inline (a
			// rowid of at most three bytes after, on a leaf, a payload
			// size of at most two).
			p := ptrs + 2*m
			off := int(data[p])<<8 | int(data[p+1])
			k, ok := int64(0), false
			if off >= end && off+format.ChildPtrSize+3 <= usable {
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
					c.at = m
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

		if seek {
			c.path[level], c.levels = uint16(a), level+1
		}
		if leaf {
			switch {
			case a == n || kHi != rowid:
				return nil, 0, FindAbsent
			case seek:
				return nil, pgno, FindFound
			}
			return c.leafFound(data, pgno, ptrs, a, usable)
		}
		if bounded {
			c.innerCells = n // for the next lookup's loads above
		}
		// Child a, whose keys lie between the separators around it.
		off := hdr + format.PageHdrRightChild
		if a < n {
			off = int(data[ptrs+2*a])<<8 | int(data[ptrs+2*a+1]) // checked by the search's probe of cell a
		}
		pgno = uint32(data[off])<<24 | uint32(data[off+1])<<16 | uint32(data[off+2])<<8 | uint32(data[off+3])
		r = keyRange{lo: kLo, hi: kHi, loOK: a > 0 || r.loOK, hiOK: a < n || r.hiOK}
	}
	return nil, 0, FindUnsure // deeper than MaxDepth: a cycle
}

// seekRowid moves the cursor, from the root, to the leaf where rowid is or
// belongs, at the first cell whose key is >= rowid (the cell count for
// none): it searches with search, then loads the pages on the path it took
// onto the stack with their checks, so that what is wrong is reported
// (Err). It answers FindFound, FindAbsent, or FindUnsure on an error.
func (c *Cursor) seekRowid(rowid int64) FindStatus {
	c.reset()
	c.levels, c.at = 0, -1
	_, _, st := c.search(rowid, c.root, keyRange{}, true)
	for d := 0; ; d++ {
		var err error
		if d == 0 {
			err = c.push(c.root)
		} else {
			err = c.pushChild()
		}
		if err != nil {
			c.fail(err)
			return FindUnsure
		}
		if d == c.levels {
			break // the page the search stopped on
		}
		c.cur.idx = int(c.path[d])
		if d == c.levels-1 && st != FindUnsure {
			return st // the leaf
		}
	}
	// The page loads with its checks: a key the search could not read.
	if c.at >= 0 {
		c.fail(keyErr(&c.cur.page, c.at))
	}
	return FindUnsure
}

// keyErr is the error of cell i of pg, whose key findKey could not read:
// format's reading of the key, which checks what findKey checks.
func keyErr(pg *format.Page, i int) error {
	var err error
	if pg.Type.IsLeaf() {
		_, err = pg.TableLeafRowid(i)
	} else {
		_, err = pg.TableInteriorKey(i)
	}
	if err == nil { // not reached: both read the same bytes
		err = format.Corruptf(pg.Pgno, "cell %d: rowid unreadable", i)
	}
	return err
}

// leafFound returns the payload of cell a of leaf data, page pgno, whose
// cell pointers start at ptrs: the row the search found. The search's
// probe of cell a checked its offset and both varints.
func (c *Cursor) leafFound(data []byte, pgno uint32, ptrs, a, usable int) ([]byte, uint32, FindStatus) {
	off := int(data[ptrs+2*a])<<8 | int(data[ptrs+2*a+1])
	// The search's probe of cell a checked off and both varints; the payload size
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
		off += format.ChildPtrSize
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
