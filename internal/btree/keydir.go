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
	// pre holds each separator's prefix (ents[i].prefix), densely, for
	// find's probes; scale guesses the leaf of a prefix between the
	// first separator's and the last's, as LeafDir's does.
	pre   []uint64
	scale float64
}

// keyEntry is leaf i of a KeyDir and the separator above it.
type keyEntry struct {
	prefix  uint64 // format.KeyPrefix64 of the separator
	off, n  uint32 // the separator's bytes in the arena
	leaf    uint32 // the leaf's page number
	sepPage uint32 // the interior page holding the separator; 0: the last leaf, unbounded
	sepCell uint32 // and its cell there
}

// KeyDirMaxArena bounds the separators' bytes a KeyDir keeps: a tree of
// longer keys gets none.
const KeyDirMaxArena = 16 << 20

// Leaves returns the number of leaves in d.
func (d *KeyDir) Leaves() int { return len(d.ents) }

// find returns the first leaf i whose separator is not below key (the
// last leaf if none is), and whether that separator equals key.
func (d *KeyDir) find(key []byte) (int, bool) {
	kp := format.KeyPrefix64(key)
	pre := d.pre // len(d.ents)-1 separators: the last leaf has none
	a, b := 0, len(pre)
	// A first guess from where the prefix falls between the first and
	// the last separator's: right when the key lies strictly between the
	// guessed separator's prefix and the one before (keys that are
	// big-endian integers or random bytes), else bisection.
	if n := len(pre); n >= 2 && kp > pre[0] && kp < pre[n-1] {
		g := 1 + int(float64(kp-pre[0]-1)*d.scale)
		if g = min(g, n-1); pre[g-1] < kp && kp < pre[g] {
			return g, false
		}
	}
	for a < b {
		m := int(uint(a+b) >> 1)
		c := 0
		switch p := pre[m]; {
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
	i, exact := d.find(key)
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
	d := &KeyDir{ents: make([]keyEntry, len(b.ents)), arena: make([]byte, len(b.arena)), pre: make([]uint64, len(b.ents)-1)}
	copy(d.ents, b.ents)
	copy(d.arena, b.arena)
	for i := range d.pre {
		d.pre[i] = d.ents[i].prefix
	}
	if n := len(d.pre); n >= 2 && d.pre[n-1] > d.pre[0] {
		d.scale = float64(n-1) / float64(d.pre[n-1]-d.pre[0])
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
		b.ents = append(b.ents, keyEntry{leaf: pgno})
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
