package btree

import (
	"math"

	"github.com/pagodadb/pagoda/internal/format"
)

// A LeafDir is the bottom of a table b-tree's interior, flattened: its
// leaves in key order, each with the separator above it. A point lookup
// finds its leaf in it with one or two probes of one array, instead of a
// search of the root and of each interior page below it, so the leaf's
// trip to memory starts at once (UseLeafDir).
//
// It is the tree of one snapshot: pages that cannot change while it is
// used (a read transaction's). BuildLeafDir reads every interior page once
// and keeps 16 bytes a leaf.
//
//	the tree                          the directory, leaf by leaf
//	         [ 40 | 90 ]               key:   30  40  70  90  +inf
//	        /     |     \              page:   7   3   9   4     8
//	  [ 30 ]    [ 70 ]    (right)
//	  /    \    /    \       \
//	 7      3  9      4       8
//
// Leaf i holds the keys in (key[i-1], key[i]]: the same leaf, with the
// same bounds, that a search from the root reaches, as BuildLeafDir
// checks (the separators strictly ascend in key order).
type LeafDir struct {
	ents  []dirEntry
	k0    int64   // ents[0].key
	scale float64 // leaves a key between ents[0].key and ents[n-2].key, for the first guess
}

// dirEntry is leaf i of a LeafDir: its separator and page side by side, so
// that the probe that finds the one has loaded the other.
type dirEntry struct {
	key  int64  // the largest key the leaf may hold; the last leaf's is unbounded
	page uint32 // the leaf's page number
}

// Leaves returns the number of leaves in d.
func (d *LeafDir) Leaves() int { return len(d.ents) }

// leaf returns the leaf that holds rowid if any leaf does, with the bounds
// of its keys: they lie in (lo, hi]. lo is math.MinInt64 for the first leaf
// and hi math.MaxInt64 for the last, where the tree sets no bound (a rowid
// of math.MinInt64 is not above lo, which bounds nothing but FindRowid's
// guesses).
func (d *LeafDir) leaf(rowid int64) (pgno uint32, lo, hi int64) {
	e := d.ents
	n := len(e) // >= 2: a tree whose root is a leaf has no directory
	// Leaf i for the first e[i].key >= rowid, e[n-1].key standing for
	// +inf. Inside the separators (e[0].key < rowid <= e[n-2].key) the
	// spread of the keys guesses i, which is checked with its neighbour;
	// anything else is bisected.
	a := 0
	if k0 := e[0].key; rowid > k0 && rowid <= e[n-2].key {
		g := 1 + int(float64(uint64(rowid)-uint64(k0)-1)*d.scale)
		if g = min(g, n-2); e[g].key >= rowid {
			if e[g-1].key < rowid {
				return e[g].page, e[g-1].key, e[g].key
			}
		} else if e[g+1].key >= rowid {
			return e[g+1].page, e[g].key, e[g+1].key
		}
		a = d.search(rowid, 1, n-2)
	} else if rowid > k0 {
		a = n - 1
	}
	lo, hi = math.MinInt64, math.MaxInt64
	if a > 0 {
		lo = e[a-1].key
	}
	if a < n-1 {
		hi = e[a].key
	}
	return e[a].page, lo, hi
}

// search returns the first i in [a, b] with d.ents[i].key >= rowid, b if
// none.
func (d *LeafDir) search(rowid int64, a, b int) int {
	for a < b {
		m := int(uint(a+b) >> 1)
		if d.ents[m].key < rowid {
			a = m + 1
		} else {
			b = m
		}
	}
	return a
}

// UseLeafDir makes FindRowid find its leaf in d, the directory of the
// cursor's tree in the same snapshot, instead of by a search from the
// root, until the next Init. FindRowid answers as it does without it,
// from the same leaf.
func (c *Cursor) UseLeafDir(d *LeafDir) { c.dir = d }

// BuildLeafDir returns the directory of the table b-tree rooted at root in
// src, or nil where it has none to give: a root that is a leaf, more than
// maxLeaves leaves, or any page not as a well-formed table b-tree has it
// (a search from the root reports those). Pages are read through src:
// the snapshot's, WAL frames and all.
func BuildLeafDir(src Pages, root uint32, maxLeaves int) *LeafDir {
	_, depth := leftPath(src, root)
	if depth < 1 {
		return nil // a leaf for root, or a path that cannot be read
	}
	b := dirBuilder{src: src, usable: src.UsableSize(), max: maxLeaves, pages: src.PageCount(), leafDepth: depth}
	if !b.walk(root, 0, 0, false) || len(b.ents) < 2 {
		return nil
	}
	d := &LeafDir{ents: make([]dirEntry, len(b.ents))}
	copy(d.ents, b.ents)
	d.k0 = d.ents[0].key
	if n := len(d.ents); n > 2 {
		d.scale = float64(n-2) / float64(uint64(d.ents[n-2].key)-uint64(d.ents[0].key))
	}
	return d
}

// dirBuilder walks a tree for BuildLeafDir.
type dirBuilder struct {
	src      Pages
	usable   int
	max      int
	pages    uint32 // the snapshot's page count
	interior int    // interior pages read
	// The depth of the leaves, from the left-most path: pages there are
	// taken for leaves unread (FindRowid checks each when it reads it).
	leafDepth int
	open      bool // the last leaf appended had no upper bound: nothing may follow
	ents      []dirEntry
}

// walk appends the leaves of the subtree at pgno, depth levels below the
// root, whose keys the parent bounds by hi (when bounded). It reports false
// where the directory cannot be made.
func (b *dirBuilder) walk(pgno uint32, depth int, hi int64, bounded bool) bool {
	if depth >= MaxDepth || pgno < 1 || pgno > b.pages || b.open {
		return false
	}
	if depth == b.leafDepth {
		return b.leaf(pgno, hi, bounded)
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
	case format.PageTableLeaf: // above the leaf depth: a tree out of balance
		return depth > 0 && b.leaf(pgno, hi, bounded)
	case format.PageTableInterior:
		// Every interior page is read once in a well-formed tree; more
		// reads than leaves allowed means pages shared, or a cycle.
		if b.interior++; b.interior > b.max {
			return false
		}
		for i := range p.NCells {
			child, err := p.Child(i)
			if err != nil {
				return false
			}
			key, err := p.TableInteriorKey(i)
			if err != nil || bounded && key > hi {
				return false
			}
			if !b.walk(child, depth+1, key, true) {
				return false
			}
		}
		return b.walk(p.RightChild(), depth+1, hi, bounded)
	}
	return false
}

// leaf appends leaf pgno, whose keys its parents bound by hi (when
// bounded).
func (b *dirBuilder) leaf(pgno uint32, hi int64, bounded bool) bool {
	if len(b.ents) >= b.max {
		return false
	}
	if !bounded {
		hi, b.open = math.MaxInt64, true
	} else if n := len(b.ents); n > 0 && b.ents[n-1].key >= hi {
		// Separators out of order: two leaves would claim the keys
		// between, where a search from the root picks one.
		return false
	}
	b.ents = append(b.ents, dirEntry{key: hi, page: pgno})
	return true
}

// EstimateLeaves returns how many leaves the b-tree rooted at root
// would have if every interior page had as many cells as the first one of
// its level: the product of their cell counts plus one down the left-most
// path, read in a page per level. It is 1 for a root that is a leaf, and 0
// where a page on the path cannot be read as a b-tree page.
func EstimateLeaves(src Pages, root uint32) int {
	est, _ := leftPath(src, root)
	return est
}

// leftPath walks the left-most path of the b-tree rooted at root: it
// returns EstimateLeaves's estimate and the depth of the leaf it ends on
// (0 for a root that is a leaf), or 0 and -1 where a page on the path
// cannot be read as a b-tree page.
func leftPath(src Pages, root uint32) (est, depth int) {
	usable, pages := src.UsableSize(), src.PageCount()
	est, pgno := 1, root
	for depth := range MaxDepth {
		if pgno < 1 || pgno > pages {
			return 0, -1
		}
		data, err := src.Page(pgno)
		if err != nil {
			return 0, -1
		}
		var p format.Page
		if p.Load(data, pgno, usable) != nil {
			return 0, -1
		}
		switch p.Type {
		case format.PageTableLeaf, format.PageIndexLeaf:
			return est, depth
		case format.PageTableInterior, format.PageIndexInterior:
			est = min(est*(p.NCells+1), math.MaxInt32)
			if pgno, err = p.Child(0); err != nil {
				return 0, -1
			}
		default:
			return 0, -1
		}
	}
	return 0, -1
}
