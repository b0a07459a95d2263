package btree

import "github.com/pagodadb/pagoda/internal/format"

// ScanBatch is how many cells of a table leaf a Scan decodes at once.
const ScanBatch = 32

// A Scan hands out the entries of a b-tree in order, from where a cursor
// is to the end of the tree, a leaf at a time: the fastest way to read a
// whole tree. It reads each leaf's cells in a loop of its own, a table
// leaf's decoded in batches while they are plain (format.TableLeafCells),
// and requests the next leaf as it goes, so that the next leaf arrives
// from memory while this one is read: format.LinesAhead cache lines of it
// with each entry (Ahead).
//
// Its loop has three levels, so that a caller can act at each:
//
//	s.Start(&c, c.First())
//	for s.NextPage() {          // a leaf, or an index interior cell
//		for first, ok := s.NextBatch(); ok; first, ok = s.NextBatch() {
//			for rowid, payload, ok := s.Next(); ok; rowid, payload, ok = s.Next() {
//				s.Ahead()
//				...
//			}
//		}
//	}
//	err := s.Err()
//
// Payloads alias the page, but for one that spills onto overflow pages,
// which is assembled into a new slice. A Scan is a large value (a batch
// of cells): keep it on the stack of the loop that reads it.
type Scan struct {
	c     *Cursor
	on    bool         // the cursor is on an entry NextPage has not handed out
	page  *format.Page // the leaf being read; nil on an index interior cell
	i     int          // its next cell to decode
	cells [ScanBatch]format.TableCell
	k, n  int // cells[k:n] are yet to be handed out
	// The leaf after this one (the cursor's ahead) and where Ahead's next
	// request for it starts; sink keeps the loads that stand in for the
	// requests where there is no prefetch instruction.
	ahead []byte
	line  int
	sink  byte
}

// Start makes s read c's tree from the entry c is on, when on (c.First's
// answer, or Valid after a seek); c must not move but through s until the
// scan is done.
func (s *Scan) Start(c *Cursor, on bool) {
	s.c, s.on, s.page, s.k, s.n = c, on, nil, 0, 0
}

// NextPage moves to the next leaf of the tree (the first: the one the
// cursor is on), or to the next interior cell of an index tree, which
// holds one entry. It reports false at the end of the tree, on an error
// (Err), or once Fail stopped the scan.
func (s *Scan) NextPage() bool {
	c := s.c
	if !s.on {
		if c.err != nil || !c.valid {
			return false
		}
		if s.page != nil {
			// The cursor is on the leaf it read: past its last cell, Next
			// goes on to the next leaf.
			c.cur.idx = s.page.NCells - 1
		}
		if !c.Next() {
			return false
		}
	}
	s.on, s.k, s.n = false, 0, 0
	s.page = nil
	if t := c.cur; c.valid && t.page.Type.IsLeaf() {
		s.page, s.i = &t.page, t.idx
		s.ahead, s.line = c.leafAhead(), c.line
	} else {
		s.i = -1 // an index interior cell: one entry, by Entry
	}
	return true
}

// NextBatch decodes the next cells of the page NextPage moved to, and
// reports false when it has none left (or on an error: Err). first is the
// payload of the batch's first cell where the batch is plain cells of a
// table leaf, each a record whose bytes lie whole on the page (a caller
// may check the batch's record shape from it), else nil: a batch of one
// cell read the general way (an index cell, or one that
// format.TableLeafCells leaves: it spills, its payload is empty or its
// length takes three bytes or more, it ends the page, or it is malformed).
func (s *Scan) NextBatch() (first []byte, ok bool) {
	c, pg := s.c, s.page
	s.k, s.n = 0, 0
	if pg == nil { // an index interior cell
		if s.i != -1 {
			return nil, false
		}
		s.i = 0
		rowid, payload, _, err := c.Entry()
		if err != nil {
			c.fail(err)
			return nil, false
		}
		s.cells[0], s.n = format.TableCell{Rowid: rowid, Payload: payload}, 1
		return nil, true
	}
	i := s.i
	if i >= pg.NCells || c.err != nil {
		return nil, false
	}
	switch pg.Type {
	case format.PageTableLeaf:
		if n := pg.TableLeafCells(i, s.cells[:]); n > 0 {
			s.i, s.n = i+n, n
			return s.cells[0].Payload, true
		}
	case format.PageIndexLeaf:
		if n := pg.IndexLeafCells(i, s.cells[:]); n > 0 {
			s.i, s.n = i+n, n
			return nil, true // first is a table's: no record shape here
		}
	}
	rowid, payload, overflow, err := pg.LeafEntry(i)
	if err == nil && overflow {
		c.cur.idx = i
		rowid, payload, _, err = c.Entry()
	}
	if err != nil {
		c.fail(err)
		return nil, false
	}
	s.cells[0], s.i, s.n = format.TableCell{Rowid: rowid, Payload: payload}, i+1, 1
	return nil, true
}

// Next hands out the batch's next entry: its rowid (0 for an index's) and
// payload; ok is false when the batch is done.
func (s *Scan) Next() (rowid int64, payload []byte, ok bool) {
	if s.k >= s.n {
		return 0, nil, false
	}
	cell := &s.cells[s.k]
	s.k++
	return cell.Rowid, cell.Payload, true
}

// Ahead requests format.LinesAhead cache lines of the leaf after this
// one, from where its last call left off (loadAhead): a caller calls it
// with each entry, so that the next leaf has arrived when the scan gets
// there. It is small enough to inline, which Next with the request in it
// was not. A page's last line is left when its lines are odd in number (a
// 4 KiB page has 64).
func (s *Scan) Ahead() {
	if s.line+format.CacheLine < len(s.ahead) {
		s.sink += prefetch2(s.ahead, s.line)
		s.line += 2 * format.CacheLine
	}
}

// prefetch2 is written for two lines: this fails to compile if
// format.LinesAhead is changed without it.
var _ = [1]struct{}{}[format.LinesAhead-2]

// Fail stops the scan (and the cursor) with err, for a caller that found
// an entry malformed: Err returns it.
func (s *Scan) Fail(err error) { s.c.fail(err) }

// Err returns the error that stopped the scan, if any.
func (s *Scan) Err() error { return s.c.err }

// loadAhead requests n cache lines of the leaf after this one (ahead),
// from where the last request ended, as far as it has lines left: a
// cursor stepping forward through runs of cells asks for
// format.LinesAhead lines for each cell of a run (a Scan asks with each
// entry, through Ahead), so that the next leaf has arrived when the step
// gets there. The requests do not wait for the lines. A Scan asking for
// its batch's lines at once was slower, and for the whole page no
// faster: more lines are then in flight than the CPU tracks.
func (c *Cursor) loadAhead(n int) {
	if left := len(c.leafAhead()) - c.line; left > 0 {
		n = min(n, (left+format.CacheLine-1)/format.CacheLine)
		c.sink += prefetchLines(c.ahead[c.line:], n)
		c.line += n * format.CacheLine
	}
}

// leafAhead returns the leaf after the current one (nil if none), looked
// up at its first use since descendLeft reached this leaf: the parent on
// the stack is still the one that leads to it.
func (c *Cursor) leafAhead() []byte {
	if c.aheadDue {
		c.ahead, c.aheadDue = c.nextLeafData(), false
	}
	return c.ahead
}

// nextLeafData returns the bytes of the page after the current leaf, when
// its parent is on the stack, for a scan to load ahead; nil when there is
// none or it cannot be read (the step to it will report the problem).
func (c *Cursor) nextLeafData() []byte {
	if c.depth < 2 {
		return nil
	}
	parent := c.levelAt(c.depth - 2)
	if parent.idx >= parent.page.NCells {
		return nil
	}
	next, err := parent.page.Child(parent.idx + 1)
	if err != nil || next == 0 || next > c.src.PageCount() {
		return nil
	}
	data, err := c.src.Page(next)
	if err != nil {
		return nil
	}
	return data[:c.usable]
}
