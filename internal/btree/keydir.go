package btree

import (
	"bytes"

	"github.com/pagodadb/pagoda/internal/format"
)

// A KeyDir is LeafDir's counterpart for an index b-tree whose keys are one
// BLOB (a bucket's): its leaves in key order, each with the separator above
// it, so that a point lookup finds its leaf in one array (SeekBlobDir)
// instead of a search of the root and of each interior page below it. In
// an index b-tree the separators are entries themselves, kept in the
// interior pages: a key equal to one is found there.
//
//	the tree                                the directory, leaf by leaf
//	           [ "m" ]                      separator:  "f"  "m"  "t"  (none)
//	          /       \                     its cell:   7/0  2/0  9/0
//	    [ "f" ]        [ "t" ]              leaf:        4    5    6     8
//	    /     \        /     \
//	   4       5      6       8
//
// Leaf i holds the keys between separators i-1 and i, both excluded. It is
// the tree of one snapshot, as LeafDir's is. BuildKeyDir copies each
// separator's bytes into one arena.
type KeyDir struct {
	ents  []keyEntry
	arena []byte
	// leaves holds what find's probes and FindBlob read of each leaf, in
	// one small entry (ents has the rest); scale guesses the leaf of a
	// prefix between the first separator's and the last's, as LeafDir's
	// does.
	leaves []keyLeaf
	scale  float64
}

// keyLeaf is the part of a keyEntry that a lookup reads: the separator's
// prefix, the leaf and its number of cells, and whether the leaf is the
// last one (no separator, prefix 0).
type keyLeaf struct {
	prefix uint64
	leaf   uint32
	cells  uint16
	last   bool
}

// keyEntry is leaf i of a KeyDir and the separator above it.
type keyEntry struct {
	prefix  uint64 // format.KeyPrefix64 of the separator
	off, n  uint32 // the separator's bytes in the arena
	leaf    uint32 // the leaf's page number
	sepPage uint32 // the interior page holding the separator; 0: the last leaf, unbounded
	sepCell uint32 // and its cell there
	cells   uint32 // the leaf's number of cells
}

// KeyDirMaxArena bounds the separators' bytes a KeyDir keeps: a tree of
// longer keys gets none.
const KeyDirMaxArena = 16 << 20

// Leaves returns the number of leaves in d.
func (d *KeyDir) Leaves() int { return len(d.ents) }

// find returns the first leaf i whose separator is not below key, whose
// format.KeyPrefix64 is kp (the last leaf if none is), and whether that
// separator equals key.
func (d *KeyDir) find(key []byte, kp uint64) (int, bool) {
	pre := d.leaves[:len(d.leaves)-1] // the last leaf has no separator
	a, b := 0, len(pre)
	// A first guess from where the prefix falls between the first and
	// the last separator's: right when the key lies strictly between the
	// guessed separator's prefix and the one before (keys that are
	// big-endian integers or random bytes), else bisection.
	if n := len(pre); n >= 2 && kp > pre[0].prefix && kp < pre[n-1].prefix {
		g := 1 + int(float64(kp-pre[0].prefix-1)*d.scale)
		if g = min(g, n-1); pre[g-1].prefix < kp && kp < pre[g].prefix {
			return g, false
		}
	}
	for a < b {
		m := int(uint(a+b) >> 1)
		c := 0
		switch p := pre[m].prefix; {
		case p < kp:
			c = -1
		case p > kp:
			c = 1
		default:
			e := &d.ents[m]
			c = bytes.Compare(d.arena[e.off:e.off+e.n], key)
		}
		if c < 0 {
			a = m + 1
		} else {
			b = m
			if c == 0 {
				return m, true
			}
		}
	}
	return a, false
}

// SeekBlobDir positions c, set by Init on the index tree that d describes,
// at the entry whose key is the one BLOB key (its first field) and reports
// whether there is one, as SeekKey does, through d: the search reads one
// page, the leaf or the interior page holding the key. The cursor is then
// on that entry for Entry and Payload only; Init it before moving it.
func (c *Cursor) SeekBlobDir(d *KeyDir, key []byte) bool {
	c.reset()
	i, exact := d.find(key, format.KeyPrefix64(key))
	e := &d.ents[i]
	if exact {
		if err := c.push(e.sepPage); err != nil {
			return c.fail(err)
		}
		t := c.top()
		if t.page.Type != format.PageIndexInterior || int(e.sepCell) >= t.page.NCells {
			return c.fail(format.Corruptf(e.sepPage, "not the index interior page the directory read"))
		}
		t.idx = int(e.sepCell)
		c.valid = true
		return true
	}
	if err := c.push(e.leaf); err != nil {
		return c.fail(err)
	}
	t := c.top()
	if !t.page.Type.IsLeaf() {
		return c.fail(format.Corruptf(e.leaf, "not the index leaf the directory read"))
	}
	// The leaf's keys lie between the separators around it: where the
	// key's first bytes fall between theirs guesses its cell, when the
	// guesses pay (seekDown's rule).
	var bounds blobBounds
	if i > 0 && e.sepPage != 0 {
		bounds = blobBounds{lo: d.ents[i-1].prefix, hi: e.prefix, haveLo: true, haveHi: true}
	}
	k := [1]format.Value{format.BlobValue(key)}
	var idx int
	var err error
	if c.guessBlobs() {
		idx, exact, err = c.searchBlob(&t.page, 0, t.page.NCells, key, k[:], &bounds)
	} else {
		idx, exact, err = c.bisect(&t.page, 0, t.page.NCells, key, true, k[:])
	}
	if err != nil {
		return c.fail(err)
	}
	if !exact {
		return false
	}
	t.idx = idx
	c.valid = true
	return true
}

// FindBlob looks key up through d, as FindRowid looks a rowid up through
// a LeafDir: the short path of a bucket's point lookup, for a cursor set
// by Init on the snapshot of the tree d describes. It reads the cell of
// the leaf where the key would lie if the leaf's keys were spread evenly
// between the separators around it (as keys that are big-endian integers
// or random bytes are), and a cell on either side, and answers FindFound
// with the entry's payload (held whole on the leaf) when one of them holds
// key. The lines where that cell should start are loaded with the leaf's
// header, from where the last leaf read had it (guessBlobCell). Anything
// else, a key equal to a separator included, answers FindUnsure: the
// caller then seeks with SeekBlobDir, which answers for every tree. The
// cursor is left invalid.
//
//	index leaf cell: payload size (varint) | payload [| first overflow page]
//	payload:         header size | key type | value type | key | value
func (c *Cursor) FindBlob(d *KeyDir, key []byte) (payload []byte, pgno uint32, st FindStatus) {
	c.depth, c.valid = 0, false
	kp := format.KeyPrefix64(key)
	i, exact := d.find(key, kp)
	if exact || i == 0 {
		return nil, 0, FindUnsure
	}
	e, prev := &d.leaves[i], &d.leaves[i-1]
	n, usable := int(e.cells), c.usable
	lo, hi := prev.prefix, e.prefix
	if e.last || n < 1 || hi <= lo || kp < lo || kp > hi || e.leaf <= 1 || n > usable/format.MinCellSize {
		return nil, 0, FindUnsure
	}
	var data []byte
	if o := uint64(e.leaf-1) * uint64(c.flatPS); o < uint64(len(c.flat)) { // e.leaf > 1; 64 bits: no overflow on 32
		off := int(o)
		data = c.flat[off : off+usable : off+usable]
	} else {
		data = c.pageData(e.leaf)
	}
	if len(data) != usable {
		return nil, 0, FindUnsure
	}
	m := min(int(float64(kp-lo)/float64(hi-lo)*float64(n)), n-1)
	g := c.guessBlobCell(n, m)
	if uint(g) < uint(usable-format.CacheLine) {
		c.sink += data[g] + data[g+format.CacheLine]
	}
	//	header: type (+0), cells (+3); pointers from +8
	h := (*[format.PageHeaderSizeLeaf]byte)(data) // usable >= MinUsableSize
	if format.PageType(h[0]) != format.PageIndexLeaf || int(h[format.PageHdrNumCells])<<8|int(h[format.PageHdrNumCells+1]) != n {
		return nil, 0, FindUnsure
	}
	maxLocal := format.MaxLocal(usable, false)
	for try, at := 0, m; try < 2; try++ {
		p := format.PageHeaderSizeLeaf + 2*at
		ptr := (*[2]byte)(data[p:]) // at < n <= usable/MinCellSize
		cell := int(ptr[0])<<8 | int(ptr[1])
		if cell < format.PageHeaderSizeLeaf+2*n || cell > usable-findBlobView {
			return nil, 0, FindUnsure
		}
		// payload size (1-2 bytes) | header size (1 byte) | key type (1-2)
		b := (*[findBlobView]byte)(data[cell:])
		size, start := int(b[0]), 1
		if size >= 0x80 {
			if b[1] >= 0x80 {
				return nil, 0, FindUnsure
			}
			size, start = int(b[0]&0x7f)<<7|int(b[1]), 2
		}
		rec := data[cell+start:]
		if size > maxLocal || size > len(rec) || size < 3 {
			return nil, 0, FindUnsure
		}
		rec = rec[:size:size]
		hs, t := int(rec[0]), uint64(rec[1])
		if t >= 0x80 {
			if rec[2] >= 0x80 {
				return nil, 0, FindUnsure
			}
			t = uint64(rec[1]&0x7f)<<7 | uint64(rec[2])
		}
		kn := int(t-12) >> 1
		if t < 12 || t&1 != 0 || hs < 3 || hs+kn > size {
			return nil, 0, FindUnsure // not a BLOB key held in place
		}
		switch cmp := bytes.Compare(rec[hs:hs+kn], key); {
		case cmp == 0:
			if try == 0 && uint(g)/format.CacheLine != uint(cell)/format.CacheLine {
				c.learnBlobCells(data, n, m, cell)
			}
			return rec, e.leaf, FindFound
		case cmp < 0 && at+1 < n:
			at++
		case cmp > 0 && at > 0:
			at--
		default:
			return nil, 0, FindUnsure
		}
	}
	return nil, 0, FindUnsure
}

// guessBlobCell returns where FindBlob guesses cell m of a leaf of n cells
// starts, from the last leaf it learnt (learnBlobCells): where that leaf
// had cell m when it had n cells too (leaves of one load are laid out
// alike: SQLite's splits leave a bucket's leaves in a pattern that is no
// line), else from its cell size, with the first cell lowest (a page built
// in key order) or last (one filled by appends).
func (c *Cursor) guessBlobCell(n, m int) int {
	if n == int(c.blobN) {
		return int(c.blobPtrs[m])
	}
	if c.blobInOrder {
		return c.usable - (n-m)*c.blobCell
	}
	return c.usable - (m+1)*c.blobCell
}

// learnBlobCells has FindBlob guess where the next leaf's cells lie from
// this one's, data, of n cells, where cell m is at offset cell.
func (c *Cursor) learnBlobCells(data []byte, n, m, cell int) {
	ptrs := data[format.PageHeaderSizeLeaf : format.PageHeaderSizeLeaf+2*n] // n <= usable/MinCellSize
	c.blobN = 0
	if n <= len(c.blobPtrs) {
		for i := range n {
			c.blobPtrs[i] = uint16(ptrs[2*i])<<8 | uint16(ptrs[2*i+1])
		}
		c.blobN = uint16(n)
	}
	first, last := int(ptrs[0])<<8|int(ptrs[1]), int(ptrs[2*n-2])<<8|int(ptrs[2*n-1])
	c.blobInOrder = first < last
	if c.blobInOrder {
		c.blobCell = (c.usable - cell) / (n - m)
	} else {
		c.blobCell = (c.usable - cell) / (m + 1)
	}
}

// findBlobView is how many bytes of a cell FindBlob reads at once: a
// payload size of up to 2 bytes, the record's header size and a key type
// of up to 2.
const findBlobView = 5

// BuildKeyDir returns the directory of the index b-tree rooted at root in
// src, or nil where it has none to give: a root that is a leaf, more than
// maxLeaves leaves, a separator that is not a BLOB held whole on its page,
// separators out of order, or any page not as a well-formed index b-tree
// has it.
func BuildKeyDir(src Pages, root uint32, maxLeaves int) *KeyDir {
	b := keyDirBuilder{src: src, usable: src.UsableSize(), max: maxLeaves, pages: src.PageCount()}
	if !b.walk(root, 0, keyEntry{}, false) || len(b.ents) < 2 {
		return nil
	}
	d := &KeyDir{ents: make([]keyEntry, len(b.ents)), arena: make([]byte, len(b.arena)), leaves: make([]keyLeaf, len(b.ents))}
	copy(d.ents, b.ents)
	copy(d.arena, b.arena)
	for i, e := range d.ents {
		d.leaves[i] = keyLeaf{prefix: e.prefix, leaf: e.leaf, cells: uint16(e.cells), last: e.sepPage == 0}
	}
	if n := len(d.leaves) - 1; n >= 2 && d.leaves[n-1].prefix > d.leaves[0].prefix {
		d.scale = float64(n-1) / float64(d.leaves[n-1].prefix-d.leaves[0].prefix)
	}
	return d
}

// keyDirBuilder walks a tree for BuildKeyDir.
type keyDirBuilder struct {
	src      Pages
	usable   int
	max      int
	pages    uint32
	interior int
	open     bool // the last leaf appended had no upper bound: nothing may follow
	ents     []keyEntry
	arena    []byte
}

// walk appends the leaves of the subtree at pgno, whose keys the parents
// bound by hi (when bounded).
func (b *keyDirBuilder) walk(pgno uint32, depth int, hi keyEntry, bounded bool) bool {
	if depth >= MaxDepth || pgno < 1 || pgno > b.pages || b.open {
		return false
	}
	data, err := b.src.Page(pgno)
	if err != nil {
		return false
	}
	var p format.Page
	if p.Load(data, pgno, b.usable) != nil {
		return false
	}
	switch p.Type {
	case format.PageIndexLeaf:
		hi.cells = uint32(p.NCells)
		return depth > 0 && b.leaf(pgno, hi, bounded)
	case format.PageIndexInterior:
		if b.interior++; b.interior > b.max {
			return false
		}
		for i := range p.NCells {
			child, err := p.Child(i)
			if err != nil {
				return false
			}
			key, kind := p.IndexBlobKey(i)
			if kind != 1 || len(b.arena)+len(key) > KeyDirMaxArena {
				return false
			}
			sep := keyEntry{prefix: format.KeyPrefix64(key), off: uint32(len(b.arena)), n: uint32(len(key)), sepPage: pgno, sepCell: uint32(i)}
			if bounded && bytes.Compare(key, b.arena[hi.off:hi.off+hi.n]) >= 0 {
				return false
			}
			b.arena = append(b.arena, key...)
			if !b.walk(child, depth+1, sep, true) {
				return false
			}
		}
		return b.walk(p.RightChild(), depth+1, hi, bounded)
	}
	return false
}

// leaf appends leaf pgno, below separator hi (when bounded).
func (b *keyDirBuilder) leaf(pgno uint32, hi keyEntry, bounded bool) bool {
	if len(b.ents) >= b.max {
		return false
	}
	if !bounded {
		b.open = true
		b.ents = append(b.ents, keyEntry{leaf: pgno, cells: hi.cells})
		return true
	}
	if n := len(b.ents); n > 0 {
		last := &b.ents[n-1]
		if bytes.Compare(b.arena[last.off:last.off+last.n], b.arena[hi.off:hi.off+hi.n]) >= 0 {
			return false // separators out of order
		}
	}
	hi.leaf = pgno
	b.ents = append(b.ents, hi)
	return true
}
