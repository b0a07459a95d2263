package btree

import (
	"slices"

	"github.com/pagodadb/pagoda/internal/format"
)

// balanceMax is the most siblings one balance takes: a page that
// overflows and its neighbours on either side.
const balanceMax = 3

// Balancing keeps the tree within the rules sqlite3 checks
// (sqlite-format.md §7.2, §11): every page within its capacity, every leaf
// at the same depth, no empty page but a root leaf, at least one cell on
// every interior page but the root, and the root's page number fixed.
//
// One operation does all the work, balanceSiblings: it takes one or two
// adjacent children of a parent, gathers their cells in order (with the
// parent's divider between two siblings, and any pending cells that did
// not fit), distributes them over as few pages as hold them, rewrites those
// pages, and replaces the old dividers in the parent by the new ones.
//
//	split:    parent [.. P ..]      + pending     => parent [.. Q1 d1 Q2 ..]
//	merge:    parent [.. L d R ..]  (R underfull) => parent [.. R' ..]
//	          or, when L+d+R does not fit a page, redistribute into L', d', R'
//
// The right-most resulting page keeps the page number of the right-most
// old sibling, so the parent's pointer to it never changes; new pages
// (allocated) come first. In a table leaf the dividers are new cells,
// (left page, its largest rowid); in every other page kind the cell after
// each page moves up into the parent and, in interior pages, its left child
// becomes that page's right-most child. Going down, a divider moves into the
// merged page the other way.
//
// A parent that cannot take the new dividers is split in turn with them as
// its pending cells, up to the root; a parent left underfull (after a
// merge) is merged or redistributed with a sibling of its own. The root
// overflows by moving its content into new children (balanceDeeper), and
// an interior root left with no cells takes its only child's content
// (collapseRoot), so the tree grows and shrinks at the top and the root's
// page number never changes.
//
// Within a balance, cells spread as evenly as SQLite spreads them (fill
// from the left, then move cells right while that evens the pages), except
// on the right edge of the tree when the new cells go at the end of the
// page: there the left pages are filled full (a bulk load in key order
// packs pages), and a table leaf splits 100/0 (splitRightEdge).

// underfull reports whether a non-root page should be merged or
// redistributed: it is empty or less than a third full, SQLite's threshold.
func (wr *Writer) underfull(pg *format.Page) (bool, error) {
	if pg.NCells == 0 {
		return true, nil
	}
	free, err := pg.FreeSpace()
	return free*3 > wr.usable*2, err
}

// capacity returns the bytes for cells and pointers on a non-root page
// (never page 1) of type t.
func (wr *Writer) capacity(t format.PageType) int { return wr.usable - t.HeaderSize() }

// rebalance restores the rules from level l of the path up: the page at
// level l has cells pending (pend) that did not fit, or, when shrunk, may
// be underfull. Each round fixes one level and moves to its parent.
func (wr *Writer) rebalance(l int, pend pending, shrunk bool) error {
	for {
		switch {
		case len(pend.cells) > 0:
			if l == 0 {
				return wr.balanceDeeper(pend)
			}
			pg, err := wr.readPage(wr.path[l].pgno)
			if err != nil {
				return err
			}
			bulk := pend.pos == pg.NCells && wr.rightEdge(l)
			ci := wr.path[l-1].idx
			a, b := ci, ci
			if !bulk {
				// The page and the neighbour with the more room: the cells
				// that do not fit flow into it, and only when the two are
				// full do they make three pages of two (a B*-tree's split),
				// so random inserts leave pages about as full as SQLite's
				// balance of three siblings does, writing two pages as a
				// split of one does.
				if a, b, err = wr.neighbour(l, ci); err != nil {
					return err
				}
			}
			if pend, err = wr.balanceSiblings(l, a, b, ci, pend, bulk); err != nil {
				return err
			}
			shrunk = false
		case !shrunk:
			return nil
		case l == 0:
			return wr.collapseRoot()
		default:
			pg, err := wr.readPage(wr.path[l].pgno)
			if err != nil {
				return err
			}
			under, err := wr.underfull(&pg)
			if err != nil || !under {
				return err
			}
			parent, err := wr.readPage(wr.path[l-1].pgno)
			if err != nil {
				return err
			}
			if parent.NCells == 0 {
				// Only a root whose one child would not fit in it (page 1)
				// has no cells; the child may fit now.
				if l-1 != 0 {
					return format.Corruptf(parent.Pgno, "interior page without cells below the root")
				}
				return wr.collapseRoot()
			}
			a := max(wr.path[l-1].idx-1, 0)
			if pend, err = wr.balanceSiblings(l, a, a+1, -1, pending{}, false); err != nil {
				return err
			}
		}
		l--
	}
}

// neighbour returns the children a..b of the parent at level l-1 to
// balance child ci with when it overflows: ci and the sibling beside it
// with the more free space, or ci alone when it has none.
func (wr *Writer) neighbour(l, ci int) (a, b int, err error) {
	parent, err := wr.readPage(wr.path[l-1].pgno)
	if err != nil {
		return 0, 0, err
	}
	best, room := -1, -1
	for _, s := range [2]int{ci - 1, ci + 1} {
		if s < 0 || s > parent.NCells { // children 0..NCells
			continue
		}
		c, err := wr.child(&parent, s)
		if err != nil {
			return 0, 0, err
		}
		pg, err := wr.readPage(c)
		if err != nil {
			return 0, 0, err
		}
		free, err := pg.FreeSpace()
		if err != nil {
			return 0, 0, err
		}
		if free > room {
			best, room = s, free
		}
	}
	if best < 0 {
		return ci, ci, nil
	}
	return min(ci, best), max(ci, best), nil
}

// copyPage copies page data into balance scratch buffer s.
func (wr *Writer) copyPage(s int, data []byte) []byte {
	if len(wr.copies[s]) != len(data) {
		wr.copies[s] = make([]byte, len(data))
	}
	copy(wr.copies[s], data)
	return wr.copies[s]
}

// gatherCells appends the cells of pg to items, with pend's cells at their
// position when pend is given.
func gatherCells(items [][]byte, pg *format.Page, pend *pending) ([][]byte, error) {
	for i := 0; i < pg.NCells; i++ {
		if pend != nil && i == pend.pos {
			items = append(items, pend.cells...)
		}
		c, err := pg.CellBytes(i)
		if err != nil {
			return items, err
		}
		items = append(items, c)
	}
	if pend != nil && pend.pos >= pg.NCells {
		items = append(items, pend.cells...)
	}
	return items, nil
}

// balanceSiblings rebalances children a..b (at most three) of the parent
// at level l-1, whose pages are at level l, with pend's cells going into
// child pc. It returns the dividers the parent could not take.
//
// Divider cells made here live in div[l%2] until the parent takes them;
// if the parent is split in turn, its balance reads them from there and
// writes its own dividers to div[(l-1)%2], and so on alternately.
func (wr *Writer) balanceSiblings(l, a, b, pc int, pend pending, bulk bool) (pending, error) {
	parent, err := wr.writePage(wr.path[l-1].pgno)
	if err != nil {
		return pending{}, err
	}
	m := b - a + 1
	var sib [balanceMax]uint32
	var spg [balanceMax]format.Page
	for s := 0; s < m; s++ {
		c, err := wr.child(&parent, a+s)
		if err != nil {
			return pending{}, err
		}
		if c == parent.Pgno || slices.Contains(sib[:s], c) {
			return pending{}, format.Corruptf(parent.Pgno, "child %d is page %d again", a+s, c)
		}
		data, err := wr.w.Write(c)
		if err != nil {
			return pending{}, err
		}
		if spg[s], err = wr.parse(wr.copyPage(s, data), c); err != nil {
			return pending{}, err
		}
		if spg[s].Type != spg[0].Type {
			return pending{}, format.Corruptf(c, "%s page beside a %s page under page %d", spg[s].Type, spg[0].Type, parent.Pgno)
		}
		sib[s] = c
	}
	typ := spg[0].Type
	leaf := typ.IsLeaf()

	// Gather: the cells of the siblings in order, the parent's divider
	// between them (not in table trees' leaves), pending cells at their place.
	items := wr.items[:0]
	for s := 0; s < m; s++ {
		var p *pending
		if a+s == pc {
			p = &pend
		}
		if items, err = gatherCells(items, &spg[s], p); err != nil {
			wr.items = items
			return pending{}, err
		}
		if s < m-1 && typ != format.PageTableLeaf {
			dc, err := parent.CellBytes(a + s)
			if err != nil {
				wr.items = items
				return pending{}, err
			}
			sep := append(wr.sep[s][:0], dc...)
			wr.sep[s] = sep
			if leaf {
				items = append(items, sep[format.ChildPtrSize:])
			} else {
				format.SetCellChild(sep, spg[s].RightChild())
				items = append(items, sep)
			}
		}
	}
	wr.items = items
	var finalRight uint32
	if !leaf {
		finalRight = spg[m-1].RightChild()
	}
	cnt, err := wr.distribute(items, typ, wr.capacity(typ), bulk)
	if err != nil {
		return pending{}, err
	}
	k := len(cnt)

	// Pages: the last ones are the old siblings, right-most last; any
	// others are new.
	wr.pgnos = wr.pgnos[:0]
	wr.bufs = wr.bufs[:0]
	for j := 0; j < k; j++ {
		if s := m - k + j; s >= 0 {
			data, err := wr.w.Write(sib[s])
			if err != nil {
				return pending{}, err
			}
			wr.pgnos, wr.bufs = append(wr.pgnos, sib[s]), append(wr.bufs, data)
			continue
		}
		pgno, data, err := wr.w.Allocate()
		if err != nil {
			return pending{}, err
		}
		wr.pgnos, wr.bufs = append(wr.pgnos, pgno), append(wr.bufs, data)
	}
	d := &wr.div[l%2]
	if err := wr.writePages(items, cnt, typ, finalRight, d); err != nil {
		return pending{}, err
	}

	// The parent: the dividers between the old siblings go, the new ones
	// come in their place.
	for s := 0; s < m-1; s++ {
		if err := parent.DropCell(a); err != nil {
			return pending{}, err
		}
	}
	out, err := wr.insertCells(&parent, a, d.seal())
	if err != nil {
		return pending{}, err
	}
	for s := 0; s < m-k; s++ {
		if err := wr.w.Free(sib[s]); err != nil {
			return pending{}, err
		}
	}
	return out, nil
}

// writePages writes items over the pages wr.pgnos (buffers wr.bufs) as cnt
// divides them, and the divider cells for the parent into d.
func (wr *Writer) writePages(items [][]byte, cnt []int, typ format.PageType, finalRight uint32, d *divBuf) error {
	consuming := typ != format.PageTableLeaf
	leaf := typ.IsLeaf()
	d.reset()
	start := 0
	for j, end := range cnt {
		last := j == len(cnt)-1
		var right uint32
		if !leaf {
			right = finalRight
			if !last {
				right = format.CellChild(items[end])
			}
		}
		if _, err := format.BuildPage(wr.bufs[j], wr.pgnos[j], wr.usable, typ, items[start:end], right); err != nil {
			return err
		}
		if last {
			break
		}
		switch {
		case typ == format.PageTableLeaf:
			rowid := leafCellRowid(items[end-1])
			format.PutTableInteriorCell(d.add(format.TableInteriorCellLen(rowid)), wr.pgnos[j], rowid)
		case leaf: // index leaf: the entry moves up behind a child pointer
			c := d.add(format.ChildPtrSize + len(items[end]))
			format.SetCellChild(c, wr.pgnos[j])
			copy(c[format.ChildPtrSize:], items[end])
		default: // interior: the cell moves up, its child now this page's right-most
			c := d.add(len(items[end]))
			copy(c, items[end])
			format.SetCellChild(c, wr.pgnos[j])
		}
		start = end
		if consuming {
			start++
		}
	}
	return nil
}

// leafCellRowid returns the rowid of a table leaf cell that a page check
// (CellBytes) accepted.
func leafCellRowid(c []byte) int64 {
	_, n := format.Uvarint(c)
	v, _ := format.Uvarint(c[n:])
	return int64(v)
}

// insertCells inserts cells at index pos of pg when they all fit, else
// returns them as pending.
func (wr *Writer) insertCells(pg *format.Page, pos int, cells [][]byte) (pending, error) {
	need := 0
	for _, c := range cells {
		need += format.CellSpace(len(c)) + 2
	}
	free, err := pg.FreeSpace()
	if err != nil {
		return pending{}, err
	}
	if need > free {
		return pending{pos: pos, cells: cells}, nil
	}
	for j, c := range cells {
		ok, err := pg.InsertCell(pos+j, c, wr.scratchPage())
		if err != nil {
			return pending{}, err
		}
		if !ok {
			return pending{}, format.Corruptf(pg.Pgno, "free space accounting is wrong: cell of %d bytes does not fit", len(c))
		}
	}
	return pending{}, nil
}

// distribute divides items over pages of the given capacity (bytes for
// cells and pointers): it returns the end index of each page's items. In
// every kind but table leaves, the item after each page but the last is
// that page's divider and belongs to no page. bulk fills pages from the
// left as full as they go; otherwise cells then move right while that
// makes the pages more even, as SQLite's balance_nonroot does.
func (wr *Writer) distribute(items [][]byte, typ format.PageType, capacity int, bulk bool) ([]int, error) {
	consuming := typ != format.PageTableLeaf
	n := len(items)
	sz := wr.sizes[:0]
	for _, it := range items {
		sz = append(sz, format.CellSpace(len(it))+2)
	}
	cnt, used := wr.cnt[:0], wr.used[:0]
	for i := 0; i < n; {
		start, u := i, 0
		for i < n && u+sz[i] <= capacity {
			u += sz[i]
			i++
		}
		if i == start {
			return nil, format.Corruptf(0, "cell of %d bytes does not fit in a page", len(items[i]))
		}
		cnt, used = append(cnt, i), append(used, u)
		if consuming && i < n {
			i++ // the divider
			if i == n {
				// The divider was the last item: this page gives up its
				// last item as the divider, and the old one makes a page.
				j := len(cnt) - 1
				if cnt[j]-start < 2 {
					return nil, format.Corruptf(0, "cells too large to divide between pages")
				}
				cnt[j]--
				used[j] -= sz[cnt[j]]
				i = cnt[j] + 1
			}
		}
	}
	wr.sizes, wr.cnt, wr.used = sz, cnt, used
	if bulk {
		return cnt, nil
	}
	for j := len(cnt) - 1; j > 0; j-- {
		first := 0 // first item of page j-1
		if j > 1 {
			first = cnt[j-2]
			if consuming {
				first++
			}
		}
		for {
			r := cnt[j-1] - 1 // last item of page j-1
			if r <= first {
				break
			}
			d := r // the item that would move into page j
			if consuming {
				d = cnt[j-1]
			}
			right, left := used[j]+sz[d], used[j-1]-sz[r]
			if right > left {
				break
			}
			used[j], used[j-1] = right, left
			cnt[j-1] = r
		}
	}
	return cnt, nil
}

// splitRightEdge is the 100/0 split of a full table leaf at the right edge
// of the tree when the new cell goes after its last: the cell starts a new
// right-most leaf, and the parent gets the divider (old leaf, its largest
// rowid). Appends in rowid order thus leave every leaf full.
func (wr *Writer) splitRightEdge(lv int, pg *format.Page, cell []byte) error {
	last, err := pg.TableLeafRowid(pg.NCells - 1)
	if err != nil {
		return err
	}
	pgno, data, err := wr.w.Allocate()
	if err != nil {
		return err
	}
	wr.one[0] = cell
	if _, err := format.BuildPage(data, pgno, wr.usable, format.PageTableLeaf, wr.one[:], 0); err != nil {
		return err
	}
	d := &wr.div[lv%2]
	d.reset()
	format.PutTableInteriorCell(d.add(format.TableInteriorCellLen(last)), pg.Pgno, last)
	parent, err := wr.writePage(wr.path[lv-1].pgno)
	if err != nil {
		return err
	}
	parent.SetRightChild(pgno)
	pend, err := wr.insertCells(&parent, parent.NCells, d.seal())
	if err != nil {
		return err
	}
	return wr.rebalance(lv-1, pend, false)
}

// balanceDeeper handles a root that cannot take its pending cells: its
// cells and pend go to new pages, one level down, and the root becomes an
// interior page over them. (The root's content moves even when it would
// fit one child: on page 1, the only page whose header is larger, the root
// may be left with no cells and one child.)
func (wr *Writer) balanceDeeper(pend pending) error {
	if wr.depth >= MaxDepth-1 {
		return errTreeTooDeep
	}
	data, err := wr.w.Write(wr.root)
	if err != nil {
		return err
	}
	rpg, err := wr.parse(wr.copyPage(0, data), wr.root)
	if err != nil {
		return err
	}
	typ := rpg.Type
	items, err := gatherCells(wr.items[:0], &rpg, &pend)
	wr.items = items
	if err != nil {
		return err
	}
	var finalRight uint32
	if !typ.IsLeaf() {
		finalRight = rpg.RightChild()
	}
	cnt, err := wr.distribute(items, typ, wr.capacity(typ), pend.pos == rpg.NCells)
	if err != nil {
		return err
	}
	wr.pgnos, wr.bufs = wr.pgnos[:0], wr.bufs[:0]
	for range cnt {
		pgno, buf, err := wr.w.Allocate()
		if err != nil {
			return err
		}
		wr.pgnos, wr.bufs = append(wr.pgnos, pgno), append(wr.bufs, buf)
	}
	d := &wr.div[0]
	if err := wr.writePages(items, cnt, typ, finalRight, d); err != nil {
		return err
	}
	it := format.PageIndexInterior
	if typ.IsTable() {
		it = format.PageTableInterior
	}
	_, err = format.BuildPage(data, wr.root, wr.usable, it, d.seal(), wr.pgnos[len(wr.pgnos)-1])
	return err
}

// collapseRoot moves the content of the only child of an interior root
// without cells into the root, and frees the child, while it fits: the
// tree loses a level.
func (wr *Writer) collapseRoot() error {
	for range MaxDepth {
		rpg, err := wr.readPage(wr.root)
		if err != nil {
			return err
		}
		if rpg.Type.IsLeaf() || rpg.NCells > 0 {
			return nil
		}
		c, err := wr.child(&rpg, 0)
		if err != nil {
			return err
		}
		cdata, err := wr.w.Page(c)
		if err != nil {
			return err
		}
		cpg, err := wr.parse(wr.copyPage(0, cdata), c)
		if err != nil {
			return err
		}
		items, err := gatherCells(wr.items[:0], &cpg, nil)
		wr.items = items
		if err != nil {
			return err
		}
		need := 0
		for _, it := range items {
			need += format.CellSpace(len(it)) + 2
		}
		if need > format.Capacity(wr.root, wr.usable, cpg.Type) {
			return nil
		}
		data, err := wr.w.Write(wr.root)
		if err != nil {
			return err
		}
		var right uint32
		if !cpg.Type.IsLeaf() {
			right = cpg.RightChild()
		}
		if _, err := format.BuildPage(data, wr.root, wr.usable, cpg.Type, items, right); err != nil {
			return err
		}
		if err := wr.w.Free(c); err != nil {
			return err
		}
	}
	return nil
}
