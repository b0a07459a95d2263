package btree

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/pagodadb/pagoda/internal/format"
)

// validator checks trees the way sqlite3's integrity_check does, and more:
// page layout (cells and freeblocks inside the content area, no byte used
// twice, freeblocks ascending, at least 4 bytes and never within 4 bytes of
// each other, header byte 7 equal to the uncovered bytes and at most 60),
// key order (table trees with SQLite's own bounds, index trees strictly
// increasing in order), equal leaf depth, no empty page but a root leaf,
// interior pages with cells, overflow chains of the right length, and
// every page used once.
type validator struct {
	src   Pages
	table bool
	kinfo *format.KeyInfo
	nKey  int
	root  uint32
	used  map[uint32]string
	// entries counts leaf cells (and interior cells of index trees).
	entries  int
	prevKey  []byte // index trees: the previous entry in order
	havePrev bool
	cover    []int32 // scratch for the coverage check
}

func newValidator(src Pages) *validator {
	return &validator{src: src, used: map[uint32]string{}}
}

func (v *validator) use(pgno uint32, what string) error {
	if pgno < 1 || pgno > v.src.PageCount() {
		return fmt.Errorf("%s: page %d outside 1..%d", what, pgno, v.src.PageCount())
	}
	if prev, ok := v.used[pgno]; ok {
		return fmt.Errorf("2nd reference to page %d: %s, and before %s", pgno, what, prev)
	}
	v.used[pgno] = what
	return nil
}

// tree checks the tree rooted at root and returns its entry count.
func (v *validator) tree(root uint32, table bool, kinfo *format.KeyInfo, nKey int) (int, error) {
	v.table, v.kinfo, v.nKey, v.root = table, kinfo, nKey, root
	v.entries, v.havePrev = 0, false
	_, _, err := v.page(root, 0, 0, true, true)
	return v.entries, err
}

// page checks page pgno and its subtree; for table trees maxKey and
// keyCanBeEqual bound the keys from above as in SQLite's checkTreePage. It
// returns the subtree's depth and its least key (table trees).
func (v *validator) page(pgno uint32, depth int, maxKey int64, unbounded, keyCanBeEqual bool) (int, int64, error) {
	if depth > MaxDepth {
		return 0, 0, fmt.Errorf("tree %d: deeper than %d", v.root, MaxDepth)
	}
	if err := v.use(pgno, fmt.Sprintf("tree %d page", v.root)); err != nil {
		return 0, 0, err
	}
	data, err := v.src.Page(pgno)
	if err != nil {
		return 0, 0, err
	}
	pg, err := format.ParsePage(data, pgno, v.src.UsableSize())
	if err != nil {
		return 0, 0, err
	}
	if err := reservedUntouched(data, v.src.UsableSize(), pgno); err != nil {
		return 0, 0, err
	}
	if pg.Type.IsTable() != v.table {
		return 0, 0, fmt.Errorf("page %d: %s in a tree of the other kind", pgno, pg.Type)
	}
	if err := v.layout(&pg); err != nil {
		return 0, 0, err
	}
	if pgno != v.root && pg.NCells == 0 {
		return 0, 0, fmt.Errorf("page %d: empty %s below the root", pgno, pg.Type)
	}
	for i := 0; i < pg.NCells; i++ {
		c, err := pg.Cell(i)
		if err != nil {
			return 0, 0, err
		}
		if pg.Type != format.PageTableInterior {
			if err := v.chain(c, pgno); err != nil {
				return 0, 0, err
			}
		}
	}
	leaf := pg.Type.IsLeaf()
	if v.table {
		// SQLite's order: right child first, then cells right to left, each
		// key below the least key of the subtree to its right.
		childDepth := -1
		if !leaf {
			d, mk, err := v.page(pg.RightChild(), depth+1, maxKey, unbounded, keyCanBeEqual)
			if err != nil {
				return 0, 0, err
			}
			childDepth, maxKey, unbounded, keyCanBeEqual = d, mk, false, false
		}
		for i := pg.NCells - 1; i >= 0; i-- {
			c, _ := pg.Cell(i)
			if !unbounded && (keyCanBeEqual && c.Rowid > maxKey || !keyCanBeEqual && c.Rowid >= maxKey) {
				return 0, 0, fmt.Errorf("page %d cell %d: rowid %d out of order (bound %d)", pgno, i, c.Rowid, maxKey)
			}
			maxKey, unbounded, keyCanBeEqual = c.Rowid, false, false
			if leaf {
				v.entries++
				continue
			}
			d, mk, err := v.page(c.Child, depth+1, maxKey, false, true)
			if err != nil {
				return 0, 0, err
			}
			if d != childDepth {
				return 0, 0, fmt.Errorf("page %d: child page depth differs", pgno)
			}
			maxKey = mk
		}
		if leaf {
			return depth, maxKey, nil
		}
		return childDepth, maxKey, nil
	}
	// Index trees: in order, strictly increasing.
	childDepth := -1
	for i := 0; i <= pg.NCells; i++ {
		if !leaf {
			child, err := pg.Child(i)
			if err != nil {
				return 0, 0, err
			}
			d, _, err := v.page(child, depth+1, 0, true, true)
			if err != nil {
				return 0, 0, err
			}
			if childDepth >= 0 && d != childDepth {
				return 0, 0, fmt.Errorf("page %d: child page depth differs", pgno)
			}
			childDepth = d
		}
		if i == pg.NCells {
			break
		}
		c, _ := pg.Cell(i)
		payload := c.Local
		if c.Overflow != 0 {
			if payload, err = readOverflow(v.src, nil, c, pgno); err != nil {
				return 0, 0, err
			}
		}
		if _, err := format.CheckRecord(payload); err != nil {
			return 0, 0, fmt.Errorf("page %d cell %d: %v", pgno, i, err)
		}
		if v.havePrev {
			cmp, err := format.CompareRecordPrefix(v.prevKey, payload, v.kinfo, v.nKey)
			if err != nil {
				return 0, 0, err
			}
			if cmp >= 0 {
				return 0, 0, fmt.Errorf("page %d cell %d: index entry out of order", pgno, i)
			}
		}
		v.prevKey, v.havePrev = append(v.prevKey[:0], payload...), true
		v.entries++
	}
	if leaf {
		return depth, 0, nil
	}
	return childDepth, 0, nil
}

// chain checks the overflow chain of a cell and marks its pages.
func (v *validator) chain(c format.Cell, owner uint32) error {
	usable := v.src.UsableSize()
	want := int64(0)
	if rest := c.PayloadLen - int64(len(c.Local)); rest > 0 {
		want = (rest + int64(usable-5)) / int64(usable-4)
	}
	if c.Overflow == 0 {
		if want != 0 {
			return fmt.Errorf("page %d: cell overflows without a chain", owner)
		}
		return nil
	}
	next := c.Overflow
	for i := int64(0); i < want; i++ {
		if err := v.use(next, fmt.Sprintf("overflow page of a cell on page %d", owner)); err != nil {
			return err
		}
		data, err := v.src.Page(next)
		if err != nil {
			return err
		}
		if err := reservedUntouched(data, usable, next); err != nil {
			return err
		}
		next = binary.BigEndian.Uint32(data)
	}
	if next != 0 {
		return fmt.Errorf("page %d: overflow list longer than %d pages", owner, want)
	}
	return nil
}

// layout checks the page's space accounting.
func (v *validator) layout(pg *format.Page) error {
	usable := pg.Usable
	cs := pg.ContentStart()
	ptrEnd := pg.CellPointerEnd()
	if cs < ptrEnd || cs > usable {
		return fmt.Errorf("page %d: content start %d outside %d..%d", pg.Pgno, cs, ptrEnd, usable)
	}
	if cap(v.cover) < usable {
		v.cover = make([]int32, usable)
	}
	cover := v.cover[:usable]
	clear(cover[cs:])
	mark := func(from, to int, what int32) error {
		if from < cs || to > usable || from >= to {
			return fmt.Errorf("page %d: region %d..%d outside the content area %d..%d", pg.Pgno, from, to, cs, usable)
		}
		for i := from; i < to; i++ {
			if cover[i] != 0 {
				return fmt.Errorf("page %d: multiple uses for byte %d", pg.Pgno, i)
			}
			cover[i] = what
		}
		return nil
	}
	for i := 0; i < pg.NCells; i++ {
		off, err := pg.CellOffset(i)
		if err != nil {
			return err
		}
		c, err := pg.Cell(i)
		if err != nil {
			return err
		}
		if err := mark(off, off+c.Size, int32(i+1)); err != nil {
			return err
		}
	}
	prevEnd := -1
	for fb := pg.FirstFreeblock(); fb != 0; {
		if fb+4 > usable {
			return fmt.Errorf("page %d: freeblock at %d runs off the page", pg.Pgno, fb)
		}
		next := int(binary.BigEndian.Uint16(pg.Data[fb:]))
		size := int(binary.BigEndian.Uint16(pg.Data[fb+2:]))
		if size < 4 {
			return fmt.Errorf("page %d: freeblock at %d of %d bytes", pg.Pgno, fb, size)
		}
		if prevEnd >= 0 && fb < prevEnd+4 {
			return fmt.Errorf("page %d: freeblock at %d within 4 bytes of the previous (ends %d)", pg.Pgno, fb, prevEnd)
		}
		if err := mark(fb, fb+size, -1); err != nil {
			return err
		}
		prevEnd = fb + size
		if next != 0 && next <= fb {
			return fmt.Errorf("page %d: freeblocks not ascending", pg.Pgno)
		}
		fb = next
	}
	frag := 0
	for i := cs; i < usable; i++ {
		if cover[i] == 0 {
			frag++
		}
	}
	if frag != pg.FragmentedBytes() {
		return fmt.Errorf("page %d: fragmentation of %d bytes reported as %d", pg.Pgno, frag, pg.FragmentedBytes())
	}
	if frag > 60 {
		return fmt.Errorf("page %d: %d fragmented bytes, more than 60", pg.Pgno, frag)
	}
	if _, err := pg.FreeSpace(); err != nil {
		return err
	}
	return nil
}

// accounting checks that the pages of the given trees, the freelist and
// the extra pages (e.g. page 1 with its sqlite_schema) are every page of the
// database exactly once. The trees must have been checked by v.
func (v *validator) accounting(m *memPager, extra ...uint32) error {
	free, err := m.freelistPages()
	if err != nil {
		return err
	}
	for _, p := range free {
		if err := v.use(p, "freelist"); err != nil {
			return err
		}
	}
	for _, p := range extra {
		if err := v.use(p, "extra"); err != nil {
			return err
		}
	}
	var missing []uint32
	for p := uint32(1); p <= m.PageCount(); p++ {
		if _, ok := v.used[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("pages never used: %v", missing[:min(len(missing), 20)])
	}
	return nil
}

// reservedUntouched checks that the reserved bytes after the usable part of
// a page (zero on every page the tests make) were not written.
func reservedUntouched(data []byte, usable int, pgno uint32) error {
	for _, b := range data[usable:] {
		if b != 0 {
			return fmt.Errorf("page %d: reserved bytes written", pgno)
		}
	}
	return nil
}
