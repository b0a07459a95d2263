package pagoda

import "github.com/pagodadb/pagoda/internal/btree"

// Point lookups in a read transaction go through a leaf directory
// (btree.LeafDir) once a table has had enough of them: the leaves of the
// table's b-tree in key order, read from its interior pages once, so that
// a lookup finds its leaf in one array and the leaf's trip to memory
// starts at once, instead of after a search of the root and each interior
// page below it. The snapshot's pages do not change while the transaction
// lasts, so the directory stays right; write transactions, whose pages
// change under their lookups, never build one.
//
// A table's directory is built when its lookups in the transaction, made
// through any of its handles, reach dirMinLookups and its leaves (as
// btree.EstimateLeaves guesses them) divided by dirLeavesPerLookup:
// building reads the interior pages, about 12 ns a leaf, a fraction of
// the lookups made already (one costs 60 to 300 ns) and repaid by the
// next ones. A table of more than dirMaxLeaves leaves gets none, nor do
// tables past the transaction's first txLeafDirs.
const (
	dirMinLookups      = 256
	dirLeavesPerLookup = 8
	dirMaxLeaves       = 1 << 18 // 16 bytes a leaf: 4 MiB, a table of 1 GiB in 4 KiB pages
	txLeafDirs         = 4
)

// leafDirState is a read transaction's leaf directory of one table, and
// the count of lookups that decides when to build it.
type leafDirState struct {
	root    uint32 // the table's root page; 0: a free slot
	dir     *btree.LeafDir
	lookups int // Get and OpenBlob calls on the table in the transaction
	dirAt   int // lookups at which to build dir, 0 before it is estimated; -1: never
}

// leafDir returns the transaction's state for the table rooted at root,
// taking a free slot for it, or nil when none is left.
func (tx *Tx) leafDir(root uint32) *leafDirState {
	for i := range tx.dirs {
		d := &tx.dirs[i]
		if d.root == root {
			return d
		}
		if d.root == 0 {
			d.root = root
			return d
		}
	}
	return nil
}

// find looks rowid up for Get and OpenBlob with btree's FindRowid: through
// the table's leaf directory when the transaction has one, building it
// when the lookups have come to pay for it.
func (t *Table) find(rowid int64) ([]byte, uint32, btree.FindStatus) {
	if t.dir == nil {
		t.cur.Init(t.tx.pages(), t.root, true, nil)
		t.takeDir()
	}
	// Once t has dir, t.cur reads through it: nothing but find inits it
	// on a rowid table in a read transaction.
	return t.cur.FindRowid(rowid)
}

// takeDir counts a lookup towards the table's leaf directory, builds the
// directory when due, and has t.cur (just set for the snapshot) use it
// once there is one.
func (t *Table) takeDir() {
	ld := t.ld
	if ld == nil {
		return
	}
	if ld.root != t.root {
		// The transaction ended, which freed its slots, and Renew took
		// it up again on the same snapshot (t is still valid): the slot
		// may be another table's now.
		if ld = t.tx.leafDir(t.root); ld == nil {
			t.ld = nil
			return
		}
		t.ld = ld
	}
	if ld.dir == nil && ld.dirAt >= 0 {
		if ld.lookups++; ld.lookups >= dirMinLookups && ld.lookups >= ld.dirAt {
			ld.build(t.tx.pages())
		}
	}
	if t.dir = ld.dir; t.dir != nil {
		t.cur.UseLeafDir(t.dir)
	}
}

// build builds the directory of the table in src, or sets when to: see
// the top of the file.
func (ld *leafDirState) build(src btree.Pages) {
	if ld.dirAt == 0 {
		est := btree.EstimateLeaves(src, ld.root)
		if est < 2 || est > dirMaxLeaves {
			ld.dirAt = -1 // one leaf, too many, or a damaged path: none
			return
		}
		if ld.dirAt = est / dirLeavesPerLookup; ld.lookups < ld.dirAt {
			return
		}
	}
	ld.dirAt = -1 // one attempt
	ld.dir = btree.BuildLeafDir(src, ld.root, dirMaxLeaves)
}
