package btree

import (
	"github.com/pagodadb/pagoda/internal/format"
)

// An overflow chain holds the part of a payload that does not fit its cell
// (format.LocalSize), in pages of this layout, the last one's next page 0:
//
//	OFF  SIZE   FIELD
//	  0     4   next overflow page, 0 on the last
//	  4   U-4   the next U-4 bytes of the payload (the last page: the rest,
//	            then bytes nobody reads)

// writeOverflow writes rest, the part of a payload after its local bytes,
// to a new overflow chain and returns its first page.
func (wr *Writer) writeOverflow(rest []byte) (uint32, error) {
	var first uint32
	var prev []byte
	for len(rest) > 0 {
		pgno, data, err := wr.w.Allocate()
		if err != nil {
			return 0, err
		}
		if prev == nil {
			first = pgno
		} else {
			format.SetOverflowNext(prev, pgno)
		}
		n := copy(data[format.OverflowPageHeaderSize:wr.usable], rest)
		format.SetOverflowNext(data, 0)
		rest = rest[n:]
		prev = data
	}
	return first, nil
}

// freeChain frees the overflow pages of cell, a cell of page owner: exactly
// as many as its payload needs. The chain is walked first, read-only, and
// must end there (next page 0): a chain that loops never does, so a
// damaged chain is reported before any page of it is freed twice.
func (wr *Writer) freeChain(cell format.Cell, owner uint32) error {
	if cell.Overflow == 0 {
		return nil
	}
	per := int64(wr.usable - format.OverflowPageHeaderSize)
	pages := (cell.PayloadLen - int64(len(cell.Local)) + per - 1) / per
	if pages > int64(wr.w.PageCount()) {
		return format.Corruptf(owner, "overflow chain of %d pages in a database of %d", pages, wr.w.PageCount())
	}
	for pass := 0; pass < 2; pass++ {
		next := cell.Overflow
		for i := int64(0); i < pages; i++ {
			if next < 2 || next > wr.w.PageCount() {
				return format.Corruptf(owner, "overflow chain: page %d of %d is %d, outside 2..%d", i+1, pages, next, wr.w.PageCount())
			}
			data, err := wr.w.Page(next)
			if err != nil {
				return err
			}
			after := format.OverflowNext(data)
			if pass == 1 {
				if err := wr.w.Free(next); err != nil {
					return err
				}
			}
			next = after
		}
		if next != 0 {
			return format.Corruptf(owner, "overflow chain continues past its %d pages to page %d", pages, next)
		}
	}
	return nil
}

// ClearTree frees a tree's pages; see the package-level ClearTree. A page
// reached twice (a damaged tree) is reported before it is freed twice.
func (wr *Writer) ClearTree(root uint32, freeRoot bool) error {
	if root < 2 && freeRoot {
		return format.Corruptf(root, "cannot free page %d", root)
	}
	if root == 0 || root > wr.w.PageCount() {
		return format.Corruptf(root, "no such page")
	}
	data, err := wr.w.Page(root)
	if err != nil {
		return err
	}
	t := format.PageType(data[format.HeaderOffset(root)])
	wr.begin(root, t.IsTable(), nil, 0)
	seen := map[uint32]bool{}
	if err := wr.clearPage(root, 0, seen); err != nil {
		return err
	}
	if freeRoot {
		return wr.w.Free(root)
	}
	if data, err = wr.w.Write(root); err != nil {
		return err
	}
	leaf := format.PageIndexLeaf
	if wr.table {
		leaf = format.PageTableLeaf
	}
	_, err = format.BuildPage(data, root, wr.usable, leaf, nil, 0)
	return err
}

// clearPage frees the overflow chains and the subtrees below page pgno,
// and pgno itself unless it is the root.
func (wr *Writer) clearPage(pgno uint32, depth int, seen map[uint32]bool) error {
	if depth >= MaxDepth {
		return format.Corruptf(pgno, "b-tree rooted at page %d deeper than %d levels (cycle?)", wr.root, MaxDepth)
	}
	if seen[pgno] {
		return format.Corruptf(pgno, "page %d is reached twice in the b-tree rooted at page %d", pgno, wr.root)
	}
	seen[pgno] = true
	pg, err := wr.readPage(pgno)
	if err != nil {
		return err
	}
	for i := 0; i <= pg.NCells; i++ {
		if i < pg.NCells && pg.Type != format.PageTableInterior {
			cell, err := pg.Cell(i)
			if err != nil {
				return err
			}
			if err := wr.freeChain(cell, pgno); err != nil {
				return err
			}
		}
		if !pg.Type.IsLeaf() {
			c, err := wr.child(&pg, i)
			if err != nil {
				return err
			}
			if err := wr.clearPage(c, depth+1, seen); err != nil {
				return err
			}
		}
	}
	if pgno == wr.root {
		return nil
	}
	return wr.w.Free(pgno)
}
