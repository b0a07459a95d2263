package btree

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/pagodadb/pagoda/internal/format"
)

// Writer changes b-trees in one write transaction. It holds the descent
// path and every scratch buffer the changes need (a copy of the new cell, page
// copies for balancing, divider cells, assembled overflow payloads), so that
// after warming up an insert or delete allocates nothing. A Writer is not
// safe for concurrent use; keep one per write transaction, or use the
// package-level functions, which borrow one from a pool.
//
// Entries are written directly into page buffers: an insert reserves the
// cell's space in the page (format.Page.AllocCell) and encodes the cell
// there. Only a cell that does not fit goes through a scratch copy, on its
// way into a balance.
//
// If a method returns an error the tree may be half changed: the
// transaction must be rolled back.
type Writer struct {
	w      Writable
	usable int

	// The tree being changed.
	root  uint32
	table bool
	kinfo *format.KeyInfo
	nKey  int

	// path[0] is the root, path[depth-1] the page the last descent stopped
	// on. idx is the child taken on an interior page, or the cell found or
	// the insertion point on the last page. nCells is the page's cell count
	// at the time of the descent.
	path  [MaxDepth]step
	depth int
	cur   Cursor           // the state of seekTable's searches: no page is loaded onto it
	pages [MaxDepth][]byte // the pages of the path of the last search

	cell    []byte                 // a new cell that did not fit its page
	scratch []byte                 // defragmentation space
	copies  [balanceMax][]byte     // copies of the pages a balance rewrites
	sep     [balanceMax - 1][]byte // the parent's divider cells, moving down
	div     [2]divBuf              // divider cells for a parent; by level parity, see balanceSiblings
	items   [][]byte               // the cells a balance distributes
	sizes   []int                  // their space, pointer included
	cnt     []int                  // distribute's page boundaries
	used    []int                  // distribute's page fill
	pgnos   []uint32               // a balance's new pages
	bufs    [][]byte               // and their buffers
	one     [1][]byte              // a pending list of one cell
	keyVals []format.Value         // the key sought, unpacked
	payload []byte                 // an overflowing key assembled for a comparison
	pred    []byte                 // index delete: the predecessor cell moving up
	predKey []byte                 // and its whole key

	// appended is set by a table insert that added its row at the end of
	// the tree's right-most leaf with no balance, and cleared by the
	// next operation (begin): the path of that descent still leads to
	// the leaf where a larger rowid belongs, so the next insert of one
	// into the same tree loads that leaf alone (tableInsert).
	appended struct {
		root  uint32
		rowid int64
		ok    bool
	}
}

type step struct {
	pgno   uint32
	idx    int
	nCells int
}

// divBuf holds divider cells produced by one balance, in one buffer.
type divBuf struct {
	buf   []byte
	offs  []int
	cells [][]byte
}

func (d *divBuf) reset() {
	d.buf, d.offs, d.cells = d.buf[:0], d.offs[:0], d.cells[:0]
}

// add reserves n bytes for the next divider cell and returns them, to be
// written before the next add (which may move the buffer, copying what is
// written). seal slices the cells off the buffer once it stops growing.
func (d *divBuf) add(n int) []byte {
	off := len(d.buf)
	if cap(d.buf)-off < n {
		nb := make([]byte, off, 2*cap(d.buf)+n)
		copy(nb, d.buf)
		d.buf = nb
	}
	d.buf = d.buf[:off+n]
	d.offs = append(d.offs, off)
	return d.buf[off : off+n]
}

func (d *divBuf) seal() [][]byte {
	d.cells = d.cells[:0]
	for i, off := range d.offs {
		end := len(d.buf)
		if i+1 < len(d.offs) {
			end = d.offs[i+1]
		}
		d.cells = append(d.cells, d.buf[off:end:end])
	}
	return d.cells
}

// pending is cells that belong at index pos of a page but did not fit.
type pending struct {
	pos   int
	cells [][]byte
}

// errTreeTooDeep is returned rather than growing a tree past MaxDepth.
var errTreeTooDeep error = &format.Wrapped{
	Msg: format.ErrUnsupported.Error() + ": b-tree would be deeper than " + strconv.Itoa(MaxDepth) + " levels",
	Err: format.ErrUnsupported,
}

// NewWriter returns a Writer for the transaction w.
func NewWriter(w Writable) *Writer {
	wr := new(Writer)
	wr.Reset(w)
	return wr
}

// Reset points the Writer at the transaction w (nil to let go of it),
// keeping its scratch buffers.
func (wr *Writer) Reset(w Writable) {
	wr.w = w
	wr.usable = 0
	if w != nil {
		wr.usable = w.UsableSize()
	}
	wr.depth = 0
	wr.kinfo = nil
	wr.appended.ok = false
	wr.cur.src = nil // nothing of the last transaction's
	if w != nil {
		wr.cur.Init(w, 0, true, nil)
		wr.cur.writing = true
	}
	// Let go of the last transaction's page buffers and the caller's key.
	clear(wr.bufs[:cap(wr.bufs)])
	wr.bufs = wr.bufs[:0]
	clear(wr.keyVals[:cap(wr.keyVals)])
	wr.keyVals = wr.keyVals[:0]
}

func (wr *Writer) begin(root uint32, table bool, k *format.KeyInfo, nKey int) {
	wr.root, wr.table, wr.kinfo, wr.nKey = root, table, k, nKey
	wr.depth = 0
	wr.appended.ok = false
}

// readPage returns page pgno of the current tree for reading.
func (wr *Writer) readPage(pgno uint32) (format.Page, error) {
	var pg format.Page
	err := wr.loadPage(&pg, pgno)
	return pg, err
}

// loadPage parses page pgno of the current tree into *pg, for reading. (The
// hot paths load in place: a format.Page is a hundred bytes to copy.)
func (wr *Writer) loadPage(pg *format.Page, pgno uint32) error {
	if pgno == 0 || pgno > wr.w.PageCount() {
		return format.Corruptf(wr.root, "b-tree rooted at page %d refers to page %d, outside 1..%d", wr.root, pgno, wr.w.PageCount())
	}
	data, err := wr.w.Page(pgno)
	if err != nil {
		return err
	}
	return wr.parseInto(pg, data, pgno)
}

// writePage returns page pgno of the current tree for writing.
func (wr *Writer) writePage(pgno uint32) (format.Page, error) {
	var pg format.Page
	data, err := wr.w.Write(pgno)
	if err != nil {
		return pg, err
	}
	err = wr.parseInto(&pg, data, pgno)
	return pg, err
}

// makeWritable points pg, parsed from the read-only version of its page,
// at the writable copy: the bytes are the same, so the parse still holds.
func (wr *Writer) makeWritable(pg *format.Page) error {
	data, err := wr.w.Write(pg.Pgno)
	if err != nil {
		return err
	}
	if len(data) < pg.Usable {
		return format.Corruptf(pg.Pgno, "writable page of %d bytes", len(data))
	}
	pg.Data = data
	return nil
}

func (wr *Writer) parse(data []byte, pgno uint32) (format.Page, error) {
	var pg format.Page
	err := wr.parseInto(&pg, data, pgno)
	return pg, err
}

func (wr *Writer) parseInto(pg *format.Page, data []byte, pgno uint32) error {
	if err := pg.Load(data, pgno, wr.usable); err != nil {
		return err
	}
	if pg.Type.IsTable() != wr.table {
		kind := "index"
		if wr.table {
			kind = "table"
		}
		return format.CorruptAt(pgno, pg.Hdr, "%s page in the %s b-tree rooted at page %d", pg.Type, kind, wr.root)
	}
	return nil
}

// push records a level of the descent.
func (wr *Writer) push(pgno uint32, idx, nCells int) error {
	if wr.depth >= MaxDepth {
		return format.Corruptf(pgno, "b-tree rooted at page %d deeper than %d levels (cycle?)", wr.root, MaxDepth)
	}
	wr.path[wr.depth] = step{pgno: pgno, idx: idx, nCells: nCells}
	wr.depth++
	return nil
}

// child returns child i of the interior page pg, checked to be a page of
// the database other than the root.
func (wr *Writer) child(pg *format.Page, i int) (uint32, error) {
	c, err := pg.Child(i)
	if err != nil {
		return 0, err
	}
	if c < 2 || c > wr.w.PageCount() || c == wr.root {
		return 0, format.Corruptf(pg.Pgno, "child %d is page %d, outside 2..%d or the root", i, c, wr.w.PageCount())
	}
	return c, nil
}

// rightEdge reports whether the page at level l is the right-most page of
// its level: the descent took the right-most child at every level above.
func (wr *Writer) rightEdge(l int) bool {
	for j := 0; j < l; j++ {
		if wr.path[j].idx != wr.path[j].nCells {
			return false
		}
	}
	return true
}

// seekTable descends the table tree to the leaf where rowid is or belongs,
// and reports whether it is there; *leaf is left parsed (read-only, see
// makeWritable). The search is the read cursor's (Cursor.search), which
// probes where rowid would sit if a page's keys were evenly spread (on
// dense or uniformly random rowids two or three probes, each a likely
// cache miss, rather than log2(cells)) and, for a writer, probes the last
// cell first on the right edge, so that appends in rowid order take one
// probe per level. The path it took is then loaded with the writer's
// checks, which report what is wrong.
func (wr *Writer) seekTable(rowid int64, leaf *format.Page) (bool, error) {
	c := &wr.cur
	c.levels, c.at = 0, -1
	_, _, st := c.search(rowid, wr.root, keyRange{}, true)
	pgno := wr.root
	for d := 0; ; d++ {
		if err := wr.loadPage(leaf, pgno); err != nil {
			return false, err
		}
		if d == c.levels {
			break // the page the search stopped on
		}
		i := int(c.path[d])
		if err := wr.push(pgno, i, leaf.NCells); err != nil {
			return false, err
		}
		if leaf.Type.IsLeaf() {
			if d == c.levels-1 && st != FindUnsure {
				return st == FindFound, nil
			}
			break // not reached: the search ends at a leaf
		}
		var err error
		if pgno, err = wr.child(leaf, i); err != nil {
			return false, err
		}
	}
	// The page loads with the writer's checks: a key the search could not
	// read.
	if c.at >= 0 && c.at < leaf.NCells {
		return false, keyErr(leaf, c.at)
	}
	return false, format.Corruptf(pgno, "b-tree rooted at page %d: rowid %d not found in the table page", wr.root, rowid)
}

// seekIndex descends the index tree to the entry equal to key (on the
// first nKey fields), which may be on an interior page, or to the leaf
// position where key belongs; *pg is left parsed (read-only).
func (wr *Writer) seekIndex(key []byte, pg *format.Page) (bool, error) {
	if err := wr.unpackKey(key); err != nil {
		return false, err
	}
	pgno := wr.root
	for {
		if err := wr.loadPage(pg, pgno); err != nil {
			return false, err
		}
		i, exact, err := wr.searchKey(pg)
		if err != nil {
			return false, err
		}
		if err := wr.push(pgno, i, pg.NCells); err != nil {
			return false, err
		}
		if exact {
			return true, nil
		}
		if pg.Type.IsLeaf() {
			return false, nil
		}
		if pgno, err = wr.child(pg, i); err != nil {
			return false, err
		}
	}
}

// searchKey returns the first cell of pg whose entry is >= the key being
// sought, and whether it equals it. The last cell is compared first
// (appends).
func (wr *Writer) searchKey(pg *format.Page) (int, bool, error) {
	n := pg.NCells
	if n == 0 {
		return 0, false, nil
	}
	c, err := wr.compareCell(pg, n-1)
	if err != nil || c <= 0 {
		if c < 0 {
			return n, false, err
		}
		return n - 1, err == nil, err
	}
	lo, hi := 0, n-1 // cell hi > key
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c, err := wr.compareCell(pg, m)
		if err != nil {
			return 0, false, err
		}
		switch {
		case c < 0:
			lo = m + 1
		case c > 0:
			hi = m
		default:
			return m, true, nil
		}
	}
	return lo, false, nil
}

// unpackKey decodes the fields of key that take part in comparisons (the
// first nKey, or all) into wr.keyVals, once per descent.
func (wr *Writer) unpackKey(key []byte) error {
	r, err := format.NewRecordReader(key)
	if err != nil {
		return errBadKey
	}
	wr.keyVals = wr.keyVals[:0]
	for wr.nKey <= 0 || len(wr.keyVals) < wr.nKey {
		v, ok, err := r.Next()
		if err != nil {
			return errBadKey
		}
		if !ok {
			break
		}
		wr.keyVals = append(wr.keyVals, v)
	}
	return nil
}

// compareCell compares the entry of cell i of pg with the key being sought
// (wr.keyVals), over the fields both have.
func (wr *Writer) compareCell(pg *format.Page, i int) (int, error) {
	cell, err := pg.Cell(i)
	if err != nil {
		return 0, err
	}
	payload := cell.Local
	if cell.Overflow != 0 {
		if wr.payload, err = readOverflow(wr.w, wr.payload[:0], cell, pg.Pgno); err != nil {
			return 0, err
		}
		payload = wr.payload
	}
	c, err := format.CompareKey(payload, wr.keyVals, wr.kinfo)
	if errors.Is(err, format.ErrUnsupported) {
		return 0, err // an order pagoda does not know (KeyInfo.Other), not damage
	}
	if err != nil {
		return 0, format.Corruptf(pg.Pgno, "cell %d: %v", i, err)
	}
	return c, nil
}

// scratchPage returns the defragmentation buffer.
func (wr *Writer) scratchPage() []byte {
	if len(wr.scratch) < wr.usable {
		wr.scratch = make([]byte, wr.usable)
	}
	return wr.scratch
}

// cellBuf returns the new-cell buffer, n bytes long.
func (wr *Writer) cellBuf(n int) []byte {
	if cap(wr.cell) < n {
		wr.cell = make([]byte, n, max(n, wr.usable+32))
	}
	return wr.cell[:n]
}

// CreateTree allocates an empty tree and returns its root page; see the
// package-level CreateTree.
func (wr *Writer) CreateTree(table bool) (uint32, error) {
	pgno, data, err := wr.w.Allocate()
	if err != nil {
		return 0, err
	}
	t := format.PageIndexLeaf
	if table {
		t = format.PageTableLeaf
	}
	if _, err := format.BuildPage(data, pgno, wr.usable, t, nil, 0); err != nil {
		return 0, err
	}
	return pgno, nil
}

// TableInsert inserts or overwrites a row; see the package-level TableInsert.
func (wr *Writer) TableInsert(root uint32, rowid int64, record []byte) (replaced bool, err error) {
	return wr.tableInsert(root, rowid, record, true)
}

// TableInsertNew inserts the row (rowid, record) unless the tree has a row
// with this rowid, in which case it changes nothing and reports exists.
func (wr *Writer) TableInsertNew(root uint32, rowid int64, record []byte) (exists bool, err error) {
	return wr.tableInsert(root, rowid, record, false)
}

func (wr *Writer) tableInsert(root uint32, rowid int64, record []byte, replace bool) (found bool, err error) {
	if len(record) > format.MaxPayload {
		return false, fmt.Errorf("%w: row of %d bytes", format.ErrUnsupported, len(record))
	}
	last, depth := wr.appended, wr.depth
	wr.begin(root, true, nil, 0)
	var pg format.Page
	if !(last.ok && last.root == root && rowid > last.rowid && wr.appendLeaf(depth, rowid, &pg)) {
		if found, err = wr.seekTable(rowid, &pg); err != nil || (found && !replace) {
			return found, err
		}
	}
	lv := wr.depth - 1
	i := wr.path[lv].idx
	plen := int64(len(record))
	cellLen, local := format.TableLeafCellLen(rowid, plen, wr.usable)
	// An append that a full right-most leaf cannot take leaves that leaf
	// as it is (splitRightEdge), so it is not made writable: the commit
	// does not write it again.
	edgeSplit := !found && lv > 0 && i == pg.NCells && wr.rightEdge(lv) && !fits(&pg, cellLen)
	if !edgeSplit {
		if err := wr.makeWritable(&pg); err != nil {
			return false, err
		}
	}
	oldSpace := -1
	if found {
		old, err := pg.Cell(i)
		if err != nil {
			return false, err
		}
		if err := wr.freeChain(old, pg.Pgno); err != nil {
			return false, err
		}
		oldSpace = old.Size
	}
	var ovfl uint32
	if local < len(record) {
		if ovfl, err = wr.writeOverflow(record[local:]); err != nil {
			return false, err
		}
	}
	if edgeSplit {
		cell := wr.cellBuf(cellLen)
		format.PutTableLeafCell(cell, rowid, plen, record[:local], ovfl)
		return false, wr.splitRightEdge(lv, &pg, cell)
	}
	if found {
		if oldSpace == format.CellSpace(cellLen) { // overwrite in place
			off, err := pg.CellOffset(i)
			if err != nil {
				return false, err
			}
			format.PutTableLeafCell(pg.Data[off:], rowid, plen, record[:local], ovfl)
			return true, nil
		}
		if err := pg.DropCell(i); err != nil {
			return false, err
		}
	}
	atEnd := !found && i == pg.NCells
	off, ok, err := pg.AllocCell(i, cellLen, wr.scratchPage())
	if err != nil {
		return false, err
	}
	if ok {
		format.PutTableLeafCell(pg.Data[off:], rowid, plen, record[:local], ovfl)
		if atEnd && wr.rightEdge(lv) {
			wr.appended.root, wr.appended.rowid, wr.appended.ok = root, rowid, true
		}
		return found, nil
	}
	cell := wr.cellBuf(cellLen)
	format.PutTableLeafCell(cell, rowid, plen, record[:local], ovfl)
	if lv > 0 && i == pg.NCells && wr.rightEdge(lv) {
		return found, wr.splitRightEdge(lv, &pg, cell)
	}
	wr.one[0] = cell
	return found, wr.rebalance(lv, pending{pos: i, cells: wr.one[:]}, false)
}

// fits reports whether a cell of n bytes fits pg as AllocCell finds room
// for it; a page whose free space does not add up is said to fit, for the
// caller's writes to report it.
func fits(pg *format.Page, n int) bool {
	free, err := pg.FreeSpace()
	return err != nil || free >= format.CellSpace(n)+2
}

// appendLeaf takes up the last descent's path, depth levels deep, for an
// append after an append (Writer.appended): it loads the right-most leaf
// into *pg and places the path at its end. It reports false, for a full
// descent, unless the leaf is a table leaf whose last rowid is below
// rowid, as the append left it.
func (wr *Writer) appendLeaf(depth int, rowid int64, pg *format.Page) bool {
	if depth < 1 {
		return false
	}
	lv := depth - 1
	if wr.loadPage(pg, wr.path[lv].pgno) != nil || pg.Type != format.PageTableLeaf || pg.NCells == 0 {
		return false
	}
	if k, err := pg.TableLeafRowid(pg.NCells - 1); err != nil || k >= rowid {
		return false
	}
	wr.depth = depth
	wr.path[lv].idx, wr.path[lv].nCells = pg.NCells, pg.NCells
	return true
}

// TableDelete deletes a row; see the package-level TableDelete.
func (wr *Writer) TableDelete(root uint32, rowid int64) (found bool, err error) {
	wr.begin(root, true, nil, 0)
	var pg format.Page
	if found, err = wr.seekTable(rowid, &pg); err != nil || !found {
		return false, err
	}
	lv := wr.depth - 1
	if err := wr.makeWritable(&pg); err != nil {
		return false, err
	}
	i := wr.path[lv].idx
	old, err := pg.Cell(i)
	if err != nil {
		return false, err
	}
	if err := wr.freeChain(old, pg.Pgno); err != nil {
		return false, err
	}
	if err := pg.DropCell(i); err != nil {
		return false, err
	}
	return true, wr.rebalance(lv, pending{}, true)
}

// errBadKey reports an index key that is not a well-formed record.
var errBadKey = errors.New("index key is not a well-formed record")

// IndexInsert inserts or replaces an index entry; see the package-level
// IndexInsert.
func (wr *Writer) IndexInsert(root uint32, k *format.KeyInfo, nKey int, key []byte) (replaced bool, err error) {
	return wr.indexInsert(root, k, nKey, key, true)
}

// IndexInsertNew inserts the entry key unless the tree has an entry equal
// to it on the first nKey fields, in which case it changes nothing and
// reports exists.
func (wr *Writer) IndexInsertNew(root uint32, k *format.KeyInfo, nKey int, key []byte) (exists bool, err error) {
	return wr.indexInsert(root, k, nKey, key, false)
}

func (wr *Writer) indexInsert(root uint32, k *format.KeyInfo, nKey int, key []byte, replace bool) (found bool, err error) {
	if len(key) > format.MaxPayload {
		return false, fmt.Errorf("%w: index key of %d bytes", format.ErrUnsupported, len(key))
	}
	if _, err := format.CheckRecord(key); err != nil {
		return false, errBadKey
	}
	wr.begin(root, false, k, nKey)
	var pg format.Page
	found, err = wr.seekIndex(key, &pg)
	if err != nil || (found && !replace) {
		return found, err
	}
	lv := wr.depth - 1
	i := wr.path[lv].idx
	if err := wr.makeWritable(&pg); err != nil {
		return false, err
	}
	interior := !pg.Type.IsLeaf()
	plen := int64(len(key))
	cellLen, local := format.IndexCellLen(plen, wr.usable, interior)
	var child uint32
	oldSpace := -1
	if found {
		old, err := pg.Cell(i)
		if err != nil {
			return false, err
		}
		if err := wr.freeChain(old, pg.Pgno); err != nil {
			return false, err
		}
		child, oldSpace = old.Child, old.Size
	}
	var ovfl uint32
	if local < len(key) {
		if ovfl, err = wr.writeOverflow(key[local:]); err != nil {
			return false, err
		}
	}
	put := func(b []byte) {
		if interior {
			format.PutIndexInteriorCell(b, child, plen, key[:local], ovfl)
		} else {
			format.PutIndexLeafCell(b, plen, key[:local], ovfl)
		}
	}
	if found {
		if oldSpace == format.CellSpace(cellLen) {
			off, err := pg.CellOffset(i)
			if err != nil {
				return false, err
			}
			put(pg.Data[off:])
			return true, nil
		}
		if err := pg.DropCell(i); err != nil {
			return false, err
		}
	}
	off, ok, err := pg.AllocCell(i, cellLen, wr.scratchPage())
	if err != nil {
		return false, err
	}
	if ok {
		put(pg.Data[off:])
		return found, nil
	}
	cell := wr.cellBuf(cellLen)
	put(cell)
	wr.one[0] = cell
	return found, wr.rebalance(lv, pending{pos: i, cells: wr.one[:]}, false)
}

// IndexDelete deletes an index entry; see the package-level IndexDelete.
//
// An entry on an interior page is replaced by its in-order predecessor,
// the last entry of the leaf at the right edge of its left subtree, in two
// steps that each leave a well-formed tree: first the interior cell takes a
// copy of the predecessor (the tree then holds it twice, in order, sharing
// its overflow chain; an interior page that overflows is split), then a new
// descent finds the predecessor's leaf copy, the last entry left of its
// interior copy, and removes it (the leaf is rebalanced).
func (wr *Writer) IndexDelete(root uint32, k *format.KeyInfo, nKey int, key []byte) (found bool, err error) {
	if _, err := format.CheckRecord(key); err != nil {
		return false, errBadKey
	}
	wr.begin(root, false, k, nKey)
	var pg format.Page
	if found, err = wr.seekIndex(key, &pg); err != nil || !found {
		return false, err
	}
	lv := wr.depth - 1
	if err := wr.makeWritable(&pg); err != nil {
		return false, err
	}
	i := wr.path[lv].idx
	old, err := pg.Cell(i)
	if err != nil {
		return false, err
	}
	if pg.Type.IsLeaf() {
		if err := wr.freeChain(old, pg.Pgno); err != nil {
			return false, err
		}
		if err := pg.DropCell(i); err != nil {
			return false, err
		}
		return true, wr.rebalance(lv, pending{}, true)
	}

	// Step 1: the predecessor's copy replaces the entry in the interior cell.
	leaf, err := wr.descendRightmost(&pg, i)
	if err != nil {
		return false, err
	}
	lf, err := wr.readPage(leaf)
	if err != nil {
		return false, err
	}
	pc, err := lf.CellBytes(lf.NCells - 1)
	if err != nil {
		return false, err
	}
	wr.pred = append(wr.pred[:0], pc...)
	pcell, err := lf.Cell(lf.NCells - 1)
	if err != nil {
		return false, err
	}
	if wr.predKey, err = readOverflow(wr.w, wr.predKey[:0], pcell, leaf); err != nil {
		return false, err
	}
	if err := wr.freeChain(old, pg.Pgno); err != nil {
		return false, err
	}
	cell := wr.cellBuf(format.ChildPtrSize + len(wr.pred))
	format.SetCellChild(cell, old.Child)
	copy(cell[format.ChildPtrSize:], wr.pred)
	if err := pg.DropCell(i); err != nil {
		return false, err
	}
	ok, err := pg.InsertCell(i, cell, wr.scratchPage())
	if err != nil {
		return false, err
	}
	wr.depth = lv + 1
	if !ok {
		wr.one[0] = cell
		if err := wr.rebalance(lv, pending{pos: i, cells: wr.one[:]}, false); err != nil {
			return false, err
		}
	}

	// Step 2: remove the leaf copy.
	wr.depth = 0
	var ipg format.Page
	if found, err = wr.seekIndex(wr.predKey, &ipg); err != nil {
		return false, err
	}
	lv = wr.depth - 1
	if !found {
		return false, format.Corruptf(wr.root, "index entry moved to an interior cell is not found again")
	}
	if ipg.Type.IsLeaf() {
		return false, format.Corruptf(ipg.Pgno, "index entry moved to an interior cell is found on a leaf")
	}
	if leaf, err = wr.descendRightmost(&ipg, wr.path[lv].idx); err != nil {
		return false, err
	}
	lpg, err := wr.writePage(leaf)
	if err != nil {
		return false, err
	}
	if lpg.NCells == 0 {
		return false, format.Corruptf(leaf, "empty leaf below an interior page")
	}
	last, err := lpg.CellBytes(lpg.NCells - 1)
	if err != nil {
		return false, err
	}
	if string(last) != string(wr.pred) {
		return false, format.Corruptf(leaf, "the last entry of the leaf is not the predecessor moved up")
	}
	if err := lpg.DropCell(lpg.NCells - 1); err != nil {
		return false, err
	}
	return true, wr.rebalance(wr.depth-1, pending{}, true)
}

// descendRightmost descends from child i of the interior page pg (on the
// path at depth-1) to the right-most leaf of that subtree, pushing the
// levels, and returns the leaf. The leaf's level idx is its last cell.
func (wr *Writer) descendRightmost(pg *format.Page, i int) (uint32, error) {
	pgno, err := wr.child(pg, i)
	if err != nil {
		return 0, err
	}
	for {
		p, err := wr.readPage(pgno)
		if err != nil {
			return 0, err
		}
		if p.Type.IsLeaf() {
			if p.NCells == 0 {
				return 0, format.Corruptf(pgno, "empty leaf below an interior page")
			}
			return pgno, wr.push(pgno, p.NCells-1, p.NCells)
		}
		if err := wr.push(pgno, p.NCells, p.NCells); err != nil {
			return 0, err
		}
		if pgno, err = wr.child(&p, p.NCells); err != nil {
			return 0, err
		}
	}
}
