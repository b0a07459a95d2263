package btree

import (
	"errors"
	"slices"

	"github.com/pagodadb/pagoda/internal/format"
)

// Pages is what a b-tree needs from the pager: one snapshot's pages.
type Pages interface {
	Page(pgno uint32) ([]byte, error)
	UsableSize() int
	PageCount() uint32
}

// MaxDepth bounds the height of a tree, as SQLite's BTCURSOR_MAX_DEPTH does;
// a deeper descent means a cycle.
const MaxDepth = 20

// inlineDepth is how many levels of its stack a cursor holds itself: a
// table b-tree of 4 KiB pages that deep holds billions of rows, an index
// tree of long keys millions. A deeper tree's levels go to a slice the
// cursor allocates the first time it needs one. A stack of MaxDepth
// levels, 1.6 KiB, made each Table and Bucket handle a 2 KiB allocation;
// a short read transaction (View, Table, one Get) spent a third of its time
// allocating and collecting it.
const inlineDepth = 5

type level struct {
	page format.Page
	// idx is, on a leaf, the current cell; on an interior page, the child
	// the cursor descended into, or (index trees, when this level is the
	// top of the stack) the interior cell the cursor is on.
	idx int
}

// Cursor walks one b-tree. The zero value is unusable; call Init.
type Cursor struct {
	src     Pages
	root    uint32
	table   bool
	usable  int
	kinfo   *format.KeyInfo
	depth   int
	valid   bool
	err     error
	scratch []byte // overflow payloads assembled for comparisons
	cur     *level // &stack[depth-1] while depth > 0: the fast paths' view
	leafN   int    // cells on the top page when it is a leaf, else 0
	sink    byte   // keeps loads whose value is unused alive (loadGuessed, prefetch2)
	// ahead is the leaf after the current one, when a forward step
	// reached this one at its first cell (descendLeft), and line where
	// loadAhead's next request for it starts. aheadDue: not yet looked
	// up (leafAhead), as a cursor that does not scan never needs it.
	ahead    []byte
	line     int
	aheadDue bool
	// A read cursor's run (UseRuns): cells runAt..runAt+runN-1 of the
	// leaf on top, decoded at once into run, that Entry hands out
	// (fillRun). nil: no runs.
	run   *[RunLen]format.TableCell
	runAt int
	runN  int
	// leaves counts the leaves reached by steps the same way (forward
	// when forward) since the cursor was positioned: see arrive.
	leaves  uint32
	forward bool
	// guessScore rates searchBlob's interpolated guesses on this tree's
	// keys, and seeks counts seeks: see seekDown.
	guessScore int
	seeks      uint32
	// FindRowid's hint (rootHint). It is kept across Init (a Table's Get
	// inits its cursor each call): it only places a first probe, so one
	// from another tree or snapshot costs probes, never a wrong answer.
	hint        rootHint
	at          int              // the cell whose key a seek's search could not read (search)
	levels      int              // the levels of a seek's path
	path        [MaxDepth]uint16 // and the cell or child taken on each
	innerCells  int              // cells of the last interior page below the root FindRowid read
	dir         *LeafDir         // the tree's leaf directory, for FindRowid: see UseLeafDir
	leafCell    int              // the cell size FindRowid guesses for a leaf: the last one's
	blobCell    int              // and FindBlob for an index leaf,
	blobInOrder bool             // whose first cell it guesses lowest (learnBlobCells)
	blobN       uint16           // or, for a leaf of blobN cells, at blobPtrs
	blobPtrs    [64]uint16
	maxLocal    int // the largest payload a table leaf holds whole: format.MaxLocal
	// The source's flat pages (FlatPages), for FindRowid: nil when it
	// has none, or when the usable size is below format.MinUsableSize.
	flat    []byte
	flatPS  int
	writing bool // a Writer's searches: see search
	stack   [inlineDepth]level
	deep    []level // levels inlineDepth.. of a deeper tree: see inlineDepth
}

// FlatPages is a Pages that may hold its pages in one slice: Flat returns
// data and pageSize such that page pgno, for pgno-1 < len(data)/pageSize,
// is data[(pgno-1)*pageSize:][:pageSize], the bytes Page returns, or nil
// when it cannot say so. The data must stay as it is while the source is
// used (a read snapshot's mapping).
type FlatPages interface {
	Flat() (data []byte, pageSize int)
}

// Init prepares c for the tree rooted at root; table selects a table b-tree
// (rowid keys) rather than an index b-tree, whose keys compare by kinfo.
func (c *Cursor) Init(src Pages, root uint32, table bool, kinfo *format.KeyInfo) {
	c.src, c.root, c.table, c.kinfo = src, root, table, kinfo
	c.usable = src.UsableSize()
	c.maxLocal = format.MaxLocal(c.usable, true)
	c.depth, c.valid, c.err, c.ahead, c.aheadDue = 0, false, nil, nil, false
	c.flat, c.flatPS, c.dir, c.writing = nil, 0, nil, false
	c.run, c.runN = nil, 0
	if f, ok := src.(FlatPages); ok {
		if data, ps := f.Flat(); ps >= c.usable && c.usable >= format.MinUsableSize {
			c.flat, c.flatPS = data[:len(data)/ps*ps], ps
		}
	}
}

// Valid reports whether the cursor is on an entry.
func (c *Cursor) Valid() bool { return c.valid }

// Err returns the error that stopped the cursor, if any.
func (c *Cursor) Err() error { return c.err }

func (c *Cursor) fail(err error) bool {
	c.err, c.valid = err, false
	return false
}

func (c *Cursor) reset() {
	c.depth, c.valid, c.err, c.leaves = 0, false, nil, 0
	c.ahead, c.aheadDue = nil, false
}

// arrive counts a leaf that a step reached, forward (descendLeft) or
// backward (descendRight). In a tree, the steps one way since the cursor
// was positioned or turned reach each leaf once: more of them than the
// file has pages means interior pages that reach a leaf twice (shared
// subtrees, which the depth bound does not catch), which would repeat
// entries, up to a number of times that grows with the tree's depth as a
// power of its fan-out.
func (c *Cursor) arrive(forward bool) bool {
	if forward != c.forward {
		c.forward, c.leaves = forward, 0
	}
	if c.leaves++; c.leaves > c.src.PageCount() {
		return c.fail(format.Corruptf(c.top().page.Pgno, "more leaves reached in a row than the file has pages (a page reached twice?)"))
	}
	return true
}

// push reads page pgno and makes it the top of the stack.
func (c *Cursor) push(pgno uint32) error {
	if o := uint64(pgno-1) * uint64(c.flatPS); o < uint64(len(c.flat)) && pgno > 0 { // 64 bits: no overflow on 32
		off := int(o)
		return c.pushData(pgno, c.flat[off:off+c.flatPS:off+c.flatPS]) // see FlatPages
	}
	data, err := c.src.Page(pgno)
	if err != nil {
		return err
	}
	return c.pushData(pgno, data)
}

// pushData makes data, page pgno, the top of the stack.
func (c *Cursor) pushData(pgno uint32, data []byte) error {
	if c.depth >= MaxDepth {
		return format.Corruptf(pgno, "b-tree rooted at page %d deeper than %d levels (cycle?)", c.root, MaxDepth)
	}
	if c.depth == len(c.stack) && c.deep == nil {
		c.deep = make([]level, MaxDepth-len(c.stack))
	}
	lv := c.levelAt(c.depth)
	pg := &lv.page
	if err := pg.Load(data, pgno, c.usable); err != nil {
		return err
	}
	if pg.Type.IsTable() != c.table {
		kind := "index"
		if c.table {
			kind = "table"
		}
		return format.CorruptAt(pgno, pg.Hdr, "%s page in the %s b-tree rooted at page %d", pg.Type, kind, c.root)
	}
	lv.idx = 0
	c.cur = lv
	c.depth++
	c.leafN, c.runN = 0, 0
	if pg.Type.IsLeaf() {
		c.leafN = pg.NCells
	}
	return nil
}

func (c *Cursor) top() *level { return c.cur }

// pop leaves the top level; it reports false when the stack is empty.
func (c *Cursor) pop() bool {
	c.depth--
	c.leafN, c.runN = 0, 0 // only leaves are pushed last; the level below is interior
	if c.depth == 0 {
		c.cur = nil
		return false
	}
	c.cur = c.levelAt(c.depth - 1)
	return true
}

// levelAt returns level d of the stack (d < MaxDepth; the deep levels
// allocated when d >= inlineDepth).
func (c *Cursor) levelAt(d int) *level {
	if d < len(c.stack) {
		return &c.stack[d]
	}
	return &c.deep[d-len(c.stack)]
}

// pushChild descends into child top.idx of the interior page on top.
func (c *Cursor) pushChild() error {
	child, err := c.child()
	if err != nil {
		return err
	}
	return c.push(child)
}

// child returns the page number of child top.idx of the interior page on top.
func (c *Cursor) child() (uint32, error) {
	t := c.top()
	child, err := t.page.Child(t.idx)
	if err != nil {
		return 0, err
	}
	if child == 0 || child > c.src.PageCount() {
		return 0, format.Corruptf(t.page.Pgno, "child %d is page %d, outside 1..%d", t.idx, child, c.src.PageCount())
	}
	return child, nil
}

// loadGuessed loads the guessLines cache lines from where cell g of n
// would start on data if it were a full leaf of equal cells laid out from
// the end of its usable bytes, as SQLite and pagoda write them, and
// returns their sum, for the caller to keep in c.sink (a load whose value
// is unused may be dropped). A search that expects cell g loads them with
// the page's header, so that a random lookup waits for the header and the
// cell at once instead of one after the other. On a table of similar rows
// the guess is exact nearly always (99.6% of the lookups in pagoda bench's
// table); a wrong one costs three loads.
func loadGuessed(data []byte, usable int, g, n int64) (sum byte) {
	u := int64(min(usable, len(data)))
	if sz := (u - format.PageHeaderSizeLeaf - 2*n) / n; sz > 0 {
		off := u - (g+1)*sz
		for k := 0; k < guessLines && off < u; k++ {
			if off >= 0 {
				sum += data[off]
			}
			off += format.CacheLine
		}
	}
	return sum
}

// guessLines is how many cache lines loadGuessed loads from the guessed
// cell on: the cell's start, and the record header and value after it.
const guessLines = 3

// descendLeft descends from the interior page on top, into child top.idx,
// to the first entry of that subtree.
func (c *Cursor) descendLeft() bool {
	for {
		if err := c.pushChild(); err != nil {
			return c.fail(err)
		}
		t := c.top()
		t.idx = 0
		if t.page.Type.IsLeaf() {
			if !c.arrive(true) {
				return false
			}
			c.ahead, c.line, c.aheadDue = nil, 0, true
			if t.page.NCells == 0 {
				return c.climbForward()
			}
			c.valid = true
			return true
		}
	}
}

// descendRight descends from the interior page on top, into child top.idx,
// to the last entry of that subtree.
func (c *Cursor) descendRight() bool {
	for {
		if err := c.pushChild(); err != nil {
			return c.fail(err)
		}
		t := c.top()
		if t.page.Type.IsLeaf() {
			if !c.arrive(false) {
				return false
			}
			c.ahead, c.aheadDue = nil, false
			t.idx = t.page.NCells - 1
			if t.idx < 0 {
				return c.climbBackward()
			}
			c.valid = true
			return true
		}
		t.idx = t.page.NCells
	}
}

// climbForward leaves a finished subtree and moves to the next entry.
func (c *Cursor) climbForward() bool {
	for {
		if !c.pop() {
			c.valid = false
			return false
		}
		t := c.top()
		if t.idx < t.page.NCells {
			if !c.table {
				c.valid = true // on interior cell t.idx
				return true
			}
			t.idx++
			return c.descendLeft()
		}
	}
}

// climbBackward leaves a finished subtree and moves to the previous entry.
func (c *Cursor) climbBackward() bool {
	for {
		if !c.pop() {
			c.valid = false
			return false
		}
		t := c.top()
		if t.idx > 0 {
			t.idx--
			if !c.table {
				c.valid = true
				return true
			}
			return c.descendRight()
		}
	}
}

func (c *Cursor) start() bool {
	c.reset()
	if err := c.push(c.root); err != nil {
		return c.fail(err)
	}
	return true
}

// First moves to the first entry; false if the tree is empty or on error.
func (c *Cursor) First() bool {
	if !c.start() {
		return false
	}
	t := c.top()
	if t.page.Type.IsLeaf() {
		if t.page.NCells == 0 {
			return false
		}
		c.valid = true
		return true
	}
	return c.descendLeft()
}

// Last moves to the last entry.
func (c *Cursor) Last() bool {
	if !c.start() {
		return false
	}
	t := c.top()
	if t.page.Type.IsLeaf() {
		t.idx = t.page.NCells - 1
		c.valid = t.idx >= 0
		return c.valid
	}
	t.idx = t.page.NCells
	return c.descendRight()
}

// Next moves to the next entry. Stepping within a leaf is inlined.
func (c *Cursor) Next() bool {
	if c.valid && c.cur.idx+1 < c.leafN {
		c.cur.idx++
		return true
	}
	return c.nextSlow()
}

func (c *Cursor) nextSlow() bool {
	if !c.valid {
		return false
	}
	t := c.top()
	t.idx++
	if t.page.Type.IsLeaf() {
		if t.idx < t.page.NCells {
			return true
		}
		return c.climbForward()
	}
	return c.descendLeft() // index interior cell k: next is child k+1's first
}

// Prev moves to the previous entry.
func (c *Cursor) Prev() bool {
	if !c.valid {
		return false
	}
	t := c.top()
	if t.page.Type.IsLeaf() {
		t.idx--
		if t.idx >= 0 {
			return true
		}
		return c.climbBackward()
	}
	return c.descendRight() // index interior cell k: previous is child k's last
}

// SeekRowid moves a table cursor to the first row whose rowid is >= rowid
// and reports whether that row has exactly this rowid. It makes FindRowid's
// search (search), loading each page onto the stack with its checks, so
// that it reports what is wrong where FindRowid answers FindUnsure.
func (c *Cursor) SeekRowid(rowid int64) bool {
	st := c.seekRowid(rowid)
	if st == FindUnsure {
		return false
	}
	if t := c.top(); t.idx < t.page.NCells {
		c.valid = true
		return st == FindFound
	}
	c.climbForward()
	return false
}

// SeekKey moves an index cursor to the first entry that is >= key, where an
// entry equal to key on key's fields (a prefix) counts as equal, and reports
// whether that entry matches key on all of key's fields. key holds the
// values of the leading key fields.
func (c *Cursor) SeekKey(key []format.Value) bool {
	if !c.start() {
		return false
	}
	return c.seekDown(key, 0, c.top().page.NCells)
}

// seekDown finishes a seek from the page on top of the stack, whose cells
// lo..hi-1 hold the answer's position on it (the first cell >= key, or hi
// for past them all), down to a leaf.
func (c *Cursor) seekDown(key []format.Value, lo, hi int) bool {
	blob, isBlob := c.blobKey(key)
	var bounds blobBounds
	guessing := isBlob && c.guessBlobs()
	for {
		t := c.top()
		pg := &t.page
		var exact bool
		var err error
		if guessing {
			lo, exact, err = c.searchBlob(pg, lo, hi, blob, key, &bounds)
		} else {
			lo, exact, err = c.bisect(pg, lo, hi, blob, isBlob, key)
		}
		if err != nil {
			return c.fail(err)
		}
		t.idx = lo
		if !pg.Type.IsLeaf() {
			if err := c.pushChild(); err != nil {
				return c.fail(err)
			}
			lo, hi = 0, c.top().page.NCells
			continue
		}
		if lo < pg.NCells {
			c.valid = true
			return exact
		}
		if !c.climbForward() {
			return false
		}
		cmp, err := c.compareCell(&c.top().page, c.top().idx, key)
		if err != nil {
			return c.fail(err)
		}
		return cmp == 0
	}
}

// guessBlobs counts a blob seek and reports whether it is to guess its
// probes (searchBlob): while guesses have paid on this tree, and one seek
// in guessRetry when they have not, to see whether they pay now.
func (c *Cursor) guessBlobs() bool {
	c.seeks++
	return c.guessScore >= 0 || c.seeks%guessRetry == 0
}

// bisect returns the first of cells lo..hi-1 of pg not below key (hi if
// none) and whether it equals key, by bisection; isBlob says key is the
// one BLOB blob (compareBlob), else cells compare by compareCell.
func (c *Cursor) bisect(pg *format.Page, lo, hi int, blob []byte, isBlob bool, key []format.Value) (int, bool, error) {
	exact := false
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		var cmp int
		var err error
		if isBlob {
			cmp, _, _, err = c.compareBlob(pg, m, blob, key)
		} else {
			cmp, err = c.compareCell(pg, m, key)
		}
		if err != nil {
			return 0, false, err
		}
		if cmp < 0 {
			lo = m + 1
		} else {
			hi, exact = m, cmp == 0
		}
	}
	return lo, exact, nil
}

// blobKey returns the bytes of key when a search by it may compare cells
// through compareBlob: one BLOB, on an index tree whose first field sorts
// ascending in an order pagoda knows (a bucket's key, say). Under any
// collation a BLOB compares with a BLOB byte by byte, and sorts after
// every other type.
func (c *Cursor) blobKey(key []format.Value) ([]byte, bool) {
	if c.table || len(key) != 1 || key[0].Kind != format.KindBlob {
		return nil, false
	}
	if k := c.kinfo; k != nil && (k.Other != "" || len(k.Desc) > 0 && k.Desc[0]) {
		return nil, false
	}
	return key[0].Bytes, true
}

// guessRetry is how often, in seeks, a cursor whose guesses did not pay
// guesses again (seekDown).
const guessRetry = 32

// blobBounds are what a blob seek knows of the keys of the page it is on
// from the separators around it in its parent: the first 8 bytes of each,
// as a big-endian number (prefix64), where the separator is a BLOB read in
// place.
type blobBounds struct {
	lo, hi         uint64
	haveLo, haveHi bool
}

// searchBlob is seekDown's search of page pg, cells lo..hi-1, for a key of
// one BLOB (blobKey): it returns the first cell not below the key (hi if
// none) and whether that cell's first field equals it. Where bounds holds
// the page's key range from its parent, the first probe is guessed from
// where the key's first 8 bytes fall in it (keys that are big-endian
// integers or random bytes spread evenly), the second is its neighbour
// towards the key, and bisection follows, as FindRowid searches a table.
// It leaves in bounds the range of the child that the answer leads to.
// The guesses place probes only: the answer is the bisection's.
func (c *Cursor) searchBlob(pg *format.Page, lo, hi int, blob []byte, key []format.Value, bounds *blobBounds) (int, bool, error) {
	kp := format.KeyPrefix64(blob)
	m, steps, guess := -1, 0, -1
	if b := bounds; b.haveLo && b.haveHi && b.hi > b.lo && kp >= b.lo && kp <= b.hi && hi-lo > 2 {
		guess = lo + int(float64(kp-b.lo)/float64(b.hi-b.lo)*float64(hi-lo))
		m, steps = guess, 1
	}
	// The child's range: the parent's where the answer is the page's
	// first or last child, else the separators probed around it.
	first, last := lo, hi
	child := *bounds
	var loKey, hiKey []byte // the separators' first fields, when BLOBs read in place
	loSet, hiSet := false, false
	exact := false
	for lo < hi {
		if m < lo || m >= hi {
			m = int(uint(lo+hi) >> 1)
		}
		cmp, k, inPlace, err := c.compareBlob(pg, m, blob, key)
		if err != nil {
			return 0, false, err
		}
		if cmp < 0 {
			lo = m + 1
			loKey, loSet, child.haveLo = k, true, inPlace
			m = lo
		} else {
			hi = m
			exact = cmp == 0
			hiKey, hiSet, child.haveHi = k, true, inPlace
			m = hi - 1
		}
		if steps == 0 {
			m = -1
		}
		steps = 0
	}
	if guess >= 0 {
		// Keys whose first bytes do not spread evenly (text of digits,
		// say) make guesses that cost more than bisection: seekDown
		// stops guessing while they miss more than one in nine.
		if d := lo - guess; d >= -1 && d <= 1 {
			c.guessScore = min(c.guessScore+1, 16)
		} else {
			c.guessScore = max(c.guessScore-8, -64)
		}
	}
	if loSet {
		child.lo = format.KeyPrefix64(loKey)
	}
	if hiSet {
		child.hi = format.KeyPrefix64(hiKey)
	}
	if lo == first && first > 0 || lo == last && last < pg.NCells {
		// A search from inside the page (seekUp's): its ends are not the
		// parent's separators.
		child.haveLo, child.haveHi = false, false
	}
	*bounds = child
	return lo, exact, nil
}

// compareBlob is compareCell for a key of one BLOB, blob (blobKey): it
// compares the bytes of the cell's first field where format.IndexBlobKey
// reads them, and asks compareCell otherwise. inPlace reports a first
// field that is a BLOB read in place, k: searchBlob's bounds.
func (c *Cursor) compareBlob(pg *format.Page, i int, blob []byte, key []format.Value) (cmp int, k []byte, inPlace bool, err error) {
	switch k, kind := pg.IndexBlobKey(i); kind {
	case 1:
		return format.CompareKeyBytes(k, blob), k, true, nil
	case -1:
		return -1, nil, false, nil
	}
	cmp, err = c.compareCell(pg, i, key)
	return cmp, nil, false, err
}

// compareCell compares the key of cell i of pg with key.
func (c *Cursor) compareCell(pg *format.Page, i int, key []format.Value) (int, error) {
	// The fast path: a cell whose payload is all local.
	var payload []byte
	var overflow bool
	var err error
	if pg.Type.IsLeaf() {
		_, payload, overflow, err = pg.LeafEntry(i)
	} else {
		payload, overflow, err = pg.IndexInteriorPayload(i)
	}
	if err == nil && overflow {
		var cell format.Cell
		if cell, err = pg.Cell(i); err == nil {
			c.scratch, err = readOverflow(c.src, c.scratch[:0], cell, pg.Pgno)
			payload = c.scratch
		}
	}
	if err != nil {
		return 0, err
	}
	cmp, err := format.CompareKey(payload, key, c.kinfo)
	if err != nil {
		if errors.Is(err, format.ErrUnsupported) {
			return 0, err // an order pagoda does not know (KeyInfo.Other), not damage
		}
		return 0, format.Corruptf(pg.Pgno, "cell %d: %v", i, err)
	}
	return cmp, nil
}

// Fail stops the cursor with err, for a caller that found a malformed cell
// on a page the cursor handed out.
func (c *Cursor) Fail(err error) { c.fail(err) }

// Entry returns the current entry's rowid (table trees), payload and page
// number, parsing the cell once. The payload aliases the page unless it
// spills onto overflow pages, when it is assembled into a new slice.
func (c *Cursor) Entry() (rowid int64, payload []byte, pgno uint32, err error) {
	t := c.top()
	if c.run != nil {
		if k := t.idx - c.runAt; uint(k) < uint(c.runN) || c.fillRun(t) {
			cell := &c.run[t.idx-c.runAt]
			return cell.Rowid, cell.Payload, t.page.Pgno, nil
		}
	}
	switch t.page.Type {
	case format.PageTableLeaf, format.PageIndexLeaf:
		rowid, local, overflow, err := t.page.LeafEntry(t.idx)
		if err != nil || !overflow {
			return rowid, local, t.page.Pgno, err
		}
	case format.PageIndexInterior:
		local, overflow, err := t.page.IndexInteriorPayload(t.idx)
		if err != nil || !overflow {
			return 0, local, t.page.Pgno, err
		}
	}
	cell, err := t.page.Cell(t.idx)
	if err != nil {
		return 0, nil, t.page.Pgno, err
	}
	if cell.Overflow == 0 {
		return cell.Rowid, cell.Local, t.page.Pgno, nil
	}
	payload, err = readOverflow(c.src, nil, cell, t.page.Pgno)
	return cell.Rowid, payload, t.page.Pgno, err
}

// RunLen is how many cells of a leaf a cursor with runs decodes at once.
const RunLen = 8

// UseRuns makes Entry decode the cells of a leaf several at once, from
// the one asked for on (or, a step back from the run, up to it), and hand
// the next ones out from that run: a cursor stepping through a leaf pays
// one loop's decoding for several cells (format.TableLeafCells). With
// each run it asks for format.LinesAhead lines of the next leaf a cell
// (loadAhead), so that a forward scan finds that leaf in the cache. (A
// Scan asks with each entry instead; a cursor was faster asking with
// each run, in the bench's scan-cursor workloads.) Only for a tree whose
// pages do not change while the cursor is on them (a read snapshot's):
// Init turns it off. The cells are decoded into run, which the cursor's
// owner keeps (a Cursor used for lookups only need not carry it).
func (c *Cursor) UseRuns(run *[RunLen]format.TableCell) { c.run, c.runN = run, 0 }

// NextInRun moves to the next entry when it is the next cell of the run
// Entry decoded last, and returns its rowid (0 in an index) and payload;
// otherwise it reports false and leaves the cursor where it is, for Next
// and Entry. It is a forward scan's step through a leaf.
func (c *Cursor) NextInRun() (rowid int64, payload []byte, ok bool) {
	if !c.valid {
		return 0, nil, false
	}
	if k := c.cur.idx + 1 - c.runAt; uint(k) < uint(c.runN) {
		c.cur.idx++
		cell := &c.run[k]
		return cell.Rowid, cell.Payload, true
	}
	return 0, nil, false
}

// fillRun decodes the run that holds cell t.idx of the leaf on top, and
// reports false where the cell is not plain (Entry reads it the general
// way) or t is not a leaf.
func (c *Cursor) fillRun(t *level) bool {
	from := t.idx
	if from == c.runAt-1 && c.runN > 0 { // a step back: the run ends here
		from = max(0, from-RunLen+1)
	}
	var n int
	switch t.page.Type {
	case format.PageTableLeaf:
		n = t.page.TableLeafCells(from, c.run[:])
	case format.PageIndexLeaf:
		n = t.page.IndexLeafCells(from, c.run[:])
	}
	if n <= t.idx-from {
		c.runN = 0
		return false
	}
	c.runAt, c.runN = from, n
	c.loadAhead(format.LinesAhead * n)
	return true
}

// Rowid returns the rowid of the current row of a table cursor.
func (c *Cursor) Rowid() int64 {
	t := c.top()
	r, err := t.page.TableLeafRowid(t.idx)
	if err != nil {
		c.fail(err)
		return 0
	}
	return r
}

// Payload returns the current entry's payload (the row record, or the index
// key). It aliases the page when the payload is all local; an overflowing
// payload is assembled into a new slice.
func (c *Cursor) Payload() ([]byte, error) {
	_, payload, _, err := c.Entry()
	return payload, err
}

// Page returns the page the cursor is on and the cell index there.
func (c *Cursor) Page() (*format.Page, int) {
	t := c.top()
	return &t.page, t.idx
}

// checkPayloadLen reports a cell of page pgno whose payload needs more
// overflow pages than the database has: a damaged length (up to 2^63
// bytes) must be found before anything is sized by it.
func checkPayloadLen(src Pages, cell format.Cell, pgno uint32) error {
	rest := cell.PayloadLen - int64(len(cell.Local))
	per := int64(src.UsableSize() - format.OverflowPageHeaderSize)
	if pages := (rest + per - 1) / per; rest < 0 || pages > int64(src.PageCount()) {
		return format.Corruptf(pgno, "payload of %d bytes needs %d overflow pages in a database of %d", cell.PayloadLen, pages, src.PageCount())
	}
	return nil
}

// readOverflow appends cell's whole payload to dst: the local part, then the
// overflow chain, which must hold exactly the pages the payload needs
// (checkPayloadLen comes first).
func readOverflow(src Pages, dst []byte, cell format.Cell, pgno uint32) ([]byte, error) {
	if err := checkPayloadLen(src, cell, pgno); err != nil {
		return nil, err
	}
	rest := cell.PayloadLen - int64(len(cell.Local))
	per := int64(src.UsableSize() - format.OverflowPageHeaderSize)
	dst = slices.Grow(dst, int(cell.PayloadLen))
	dst = append(dst, cell.Local...)
	next := cell.Overflow
	for rest > 0 {
		if next == 0 || next > src.PageCount() {
			return nil, format.Corruptf(pgno, "overflow chain: next page %d is outside 1..%d with %d bytes to go", next, src.PageCount(), rest)
		}
		data, err := src.Page(next)
		if err != nil {
			return nil, err
		}
		n := min(rest, per)
		dst = append(dst, data[format.OverflowPageHeaderSize:format.OverflowPageHeaderSize+n]...)
		rest -= n
		next = format.OverflowNext(data)
	}
	return dst, nil
}

// SeekKeyNear is SeekKey for a key near the current entry (index trees).
// When the answer lies on the current leaf (its first cell sorts before key
// and its last one not), it bisects that leaf. Otherwise it climbs to the
// nearest page on the cursor's path whose first and last cells bracket key
// in the same way, and descends from there: the pages above it are not
// read again. That is what skipping a run of entries, or seeking a
// neighbour of the last entry read, costs: a leaf, or the last levels of
// the tree, rather than a descent from the root. A page's cells and the
// subtrees between them are contiguous in key order, so no entry elsewhere
// lies between two of its cells.
func (c *Cursor) SeekKeyNear(key []format.Value) bool {
	if !c.valid || c.depth == 0 || c.table {
		return c.SeekKey(key)
	}
	t := c.top()
	pg := &t.page
	n := pg.NCells
	if !pg.Type.IsLeaf() || n < 2 || t.idx >= n {
		return c.seekUp(key)
	}
	last, err := c.compareCell(pg, n-1, key)
	if err != nil {
		return c.SeekKey(key)
	}
	if last < 0 {
		return c.seekUp(key)
	}
	lo, hi, exact := 0, n-1, last == 0
	cur, err := c.compareCell(pg, t.idx, key)
	if err != nil {
		return c.SeekKey(key)
	}
	if cur < 0 {
		lo = t.idx + 1
	} else {
		first, err := c.compareCell(pg, 0, key)
		if err != nil {
			return c.SeekKey(key)
		}
		if first >= 0 {
			return c.seekUp(key) // the answer may lie before this leaf
		}
		lo, hi, exact = 1, t.idx, cur == 0
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		cmp, err := c.compareCell(pg, m, key)
		if err != nil {
			return c.fail(err)
		}
		if cmp < 0 {
			lo = m + 1
		} else {
			hi, exact = m, cmp == 0
		}
	}
	t.idx = lo
	return exact
}

// seekUp is SeekKeyNear's way up: from the parent of the page on top, the
// nearest page on the path whose first cell sorts before key and whose last
// one not holds the answer in its cells 1..n-1 or the subtrees before them;
// the seek goes down from there. Without one, it seeks from the root.
func (c *Cursor) seekUp(key []format.Value) bool {
	for d := c.depth - 2; d >= 0; d-- {
		pg := &c.levelAt(d).page
		n := pg.NCells
		if n < 2 {
			continue
		}
		first, err := c.compareCell(pg, 0, key)
		if err != nil {
			return c.SeekKey(key)
		}
		if first >= 0 {
			continue
		}
		last, err := c.compareCell(pg, n-1, key)
		if err != nil {
			return c.SeekKey(key)
		}
		if last < 0 {
			continue
		}
		c.depth, c.cur, c.leafN, c.valid = d+1, c.levelAt(d), 0, false
		return c.seekDown(key, 1, n-1)
	}
	return c.SeekKey(key)
}
