package btree

import (
	"github.com/pagodadb/pagoda/internal/format"
)

// PageRole says what a page visited by Walk is.
type PageRole uint8

const (
	RoleBtree    PageRole = iota // a b-tree page (see Info.Type)
	RoleOverflow                 // an overflow page of a cell's payload
)

// PageVisit describes one page reached by Walk.
type PageVisit struct {
	Pgno   uint32
	Role   PageRole
	Type   format.PageType // b-tree pages
	Depth  int             // 0 for the root
	Cells  int             // b-tree pages
	Parent uint32          // the page that points here, 0 for the root
	// Payload is, on an overflow page, the bytes of the value it holds.
	Payload int
}

// Walk visits every page of the tree rooted at root, parents before
// children, and, when overflow is set, the overflow pages of every cell.
// It stops at the first error, from the tree or from fn.
// A tree holds each of its pages once: a walk that visits more b-tree pages
// than the file has reaches some twice (interior pages that share a
// subtree), and stops there rather than repeat it, possibly a number of
// times that grows with the depth as a power of the fan-out.
func Walk(src Pages, root uint32, table, overflow bool, fn func(PageVisit) error) error {
	left := int64(src.PageCount())
	return walk(src, root, 0, 0, table, overflow, &left, fn)
}

func walk(src Pages, pgno, parent uint32, depth int, table, overflow bool, left *int64, fn func(PageVisit) error) error {
	if depth >= MaxDepth {
		return format.Corruptf(pgno, "b-tree deeper than %d levels (cycle?)", MaxDepth)
	}
	if *left--; *left < 0 {
		return format.Corruptf(pgno, "b-tree reaches more pages than the file has (page %d reached twice?)", pgno)
	}
	data, err := src.Page(pgno)
	if err != nil {
		return err
	}
	pg, err := format.ParsePage(data, pgno, src.UsableSize())
	if err != nil {
		return err
	}
	if pg.Type.IsTable() != table {
		return format.CorruptAt(pgno, pg.Hdr, "%s page where the tree needs the other kind", pg.Type)
	}
	if err := fn(PageVisit{Pgno: pgno, Role: RoleBtree, Type: pg.Type, Depth: depth, Cells: pg.NCells, Parent: parent}); err != nil {
		return err
	}
	if overflow && pg.Type != format.PageTableInterior {
		for i := 0; i < pg.NCells; i++ {
			cell, err := pg.Cell(i)
			if err != nil {
				return err
			}
			if err := walkOverflow(src, cell, pgno, fn); err != nil {
				return err
			}
		}
	}
	if pg.Type.IsLeaf() {
		return nil
	}
	for i := 0; i <= pg.NCells; i++ {
		child, err := pg.Child(i)
		if err != nil {
			return err
		}
		if child == 0 || child > src.PageCount() {
			return format.Corruptf(pgno, "child %d is page %d, outside 1..%d", i, child, src.PageCount())
		}
		if err := walk(src, child, pgno, depth+1, table, overflow, left, fn); err != nil {
			return err
		}
	}
	return nil
}

func walkOverflow(src Pages, cell format.Cell, owner uint32, fn func(PageVisit) error) error {
	if cell.Overflow == 0 {
		return nil
	}
	rest := cell.PayloadLen - int64(len(cell.Local))
	per := int64(src.UsableSize() - format.OverflowPageHeaderSize)
	next, parent := cell.Overflow, owner
	for rest > 0 {
		if next == 0 || next > src.PageCount() {
			return format.Corruptf(parent, "overflow chain of a cell on page %d: next page %d is outside 1..%d with %d bytes to go", owner, next, src.PageCount(), rest)
		}
		data, err := src.Page(next)
		if err != nil {
			return err
		}
		if err := fn(PageVisit{Pgno: next, Role: RoleOverflow, Parent: parent, Payload: int(min(rest, per))}); err != nil {
			return err
		}
		rest -= min(rest, per)
		parent, next = next, format.OverflowNext(data)
	}
	if next != 0 {
		// sqlite3 ends every chain with 0; its integrity_check reports a
		// longer list (and this is how a chain that loops back is seen).
		return format.Corruptf(parent, "overflow chain of a cell on page %d continues past its payload to page %d", owner, next)
	}
	return nil
}

// Count returns the number of entries in the tree: leaf cells, plus interior
// cells for index trees. It reads only page headers.
func Count(src Pages, root uint32, table bool) (int64, error) {
	var n int64
	err := Walk(src, root, table, false, func(v PageVisit) error {
		if v.Type.IsLeaf() || !table {
			n += int64(v.Cells)
		}
		return nil
	})
	return n, err
}
