package check

import (
	"strconv"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/format"
)

// tree is one b-tree being checked and what the walk learned about it.
type tree struct {
	name  string // for messages: "table t", "index i", "sqlite_schema"
	root  uint32
	table bool // a table b-tree (pages 5/13, rowid keys), else an index b-tree (2/10)
	// kinfo orders the entries of an index b-tree; nil when pagoda cannot
	// tell the order (an index it does not understand), which skips the
	// key-order checks.
	kinfo *format.KeyInfo
	nKey  int // fields the order compares, 0 for all (WITHOUT ROWID: the primary key)
	// unique is, for a UNIQUE index, the number of leading fields that no
	// two entries may share unless one of them is NULL; 0 otherwise.
	unique int
	// rows is set for the tree of a table from the schema, rowid or
	// WITHOUT ROWID: its entries are rows, whose records rowRecord checks
	// (every table b-tree's are). rules, when not nil, is what each row
	// holds (row.go).
	rows  bool
	rules *rowRules
	// parseSet says that, in a rowid table of a known schema, SQLite's
	// check of each row's header decodes only its first parse fields
	// (pragma.c: the OP_Column of mxCol; rowParse): the rest of a header
	// that has more, and the bytes after them, go unread.
	parseSet bool
	parse    int

	// ok stays true while the tree's shape can be trusted: every page read,
	// every cell and overflow chain whole, no byte used twice, leaves at
	// one depth and, in an index b-tree, every entry in order. It is the
	// condition for reading the tree with a cursor and comparing its
	// entries with another tree's.
	ok      bool
	entries int64 // leaf cells, and interior cells of index b-trees

	// The in-order walk's previous key: a rowid (table b-trees, with
	// prevSep telling whether it was an interior separator) or a record.
	prevSet   bool
	prevSep   bool
	prevRowid int64
	prevKey   []byte

	levels [btree.MaxDepth][]cellInfo // parsed cells, one slice per depth
}

// cellInfo is one cell of a page as layout parsed it; ok is false when it
// could not be parsed (the problem is reported).
type cellInfo struct {
	cell format.Cell
	ok   bool
}

// walkTree checks the tree t.root heads, whose root page has been marked
// used.
func (c *checker) walkTree(t *tree) {
	t.ok = true
	c.walkPage(t, t.root, 0)
}

// walkPage checks page pgno of tree t, at depth (0 for the root), and its
// subtree, in key order: child 0, cell 0, child 1, ..., the right child.
// It returns the subtree's height (0 for a leaf: the levels below pgno),
// -1 when it is unknown.
func (c *checker) walkPage(t *tree, pgno uint32, depth int) (height int) {
	if c.stopped {
		t.ok = false
		return -1
	}
	data, err := c.src.Page(pgno)
	if err != nil {
		c.reportf(pgno, "%s: cannot read the page: %s", t.name, errMsg(err, pgno))
		t.ok = false
		return -1
	}
	pg, err := format.ParsePage(data, pgno, c.usable)
	if err != nil {
		c.reportf(pgno, "%s: %s", t.name, errMsg(err, pgno))
		t.ok = false
		return -1
	}
	if pg.Type.IsTable() != t.table {
		want := "index pages (types 2 and 10)"
		if t.table {
			want = "table pages (types 5 and 13)"
		}
		c.reportf(pgno, "%s: %s page in a tree of %s", t.name, pg.Type, want)
		t.ok = false
		return -1
	}
	t.levels[depth] = c.layout(t, &pg, t.levels[depth][:0])
	cells := t.levels[depth]
	leaf := pg.Type.IsLeaf()
	switch {
	case !leaf && pg.NCells == 0 && pgno != t.root:
		// A root with a right child alone is what SQLite leaves when the
		// child cannot be copied up into page 1; sqlite3 accepts it.
		c.reportf(pgno, "%s: interior page without cells", t.name)
		t.ok = false
	case leaf && pg.NCells == 0 && pgno != t.root:
		c.reportf(pgno, "%s: empty leaf below the root", t.name)
		t.ok = false
	}
	// All leaves at one depth: every child of an interior page heads a
	// subtree of the same height.
	height = -1
	var first uint32 // the child whose subtree set height
	child := func(pgno uint32) {
		h := c.walkChild(t, pg.Pgno, pgno, depth+1)
		switch {
		case h < 0:
		case height < 0:
			height, first = h, pgno
		case h != height:
			c.reportf(pg.Pgno, "%s: child page depth differs: the subtree of child %d has height %d, of child %d height %d",
				t.name, first, height, pgno, h)
			t.ok = false
			height = max(height, h)
		}
	}
	descend := !leaf
	if descend && depth+1 >= btree.MaxDepth {
		c.reportf(pgno, "%s: deeper than %d levels: the children of this page are not checked", t.name, btree.MaxDepth)
		t.ok, descend = false, false
	}
	for i := 0; i <= pg.NCells && !c.stopped; i++ {
		if descend {
			if i == pg.NCells {
				child(pg.RightChild())
			} else if cells[i].ok {
				child(cells[i].cell.Child)
			}
		}
		if i < pg.NCells && cells[i].ok {
			c.entry(t, &pg, i, cells[i].cell)
		}
	}
	if leaf {
		return 0
	}
	if height < 0 {
		return -1
	}
	return height + 1
}

// walkChild enters the child page of parent unless it is already used (a
// cycle or a shared page), and returns the child's height (see walkPage).
func (c *checker) walkChild(t *tree, parent, child uint32, depth int) int {
	if !c.use(child, ref{kind: useChild, by: parent}, parent) {
		t.ok = false
		return -1
	}
	return c.walkPage(t, child, depth)
}

// entry checks cell i of pg as the next key of t's in-order walk, and walks
// its overflow chain.
//
// Table b-trees (sqlite-format.md §7.2): each rowid of a leaf is above the
// key before it, leaf or separator; a separator is at least the last rowid
// before it (the largest of its left subtree) and above a separator right
// before it. Together this is SQLite's rule: every rowid of leftChild_i
// <= key_i < every rowid of the next subtree, and rowids strictly
// increasing. Index b-trees: every entry, interior cells included, is above
// the entry before it.
func (c *checker) entry(t *tree, pg *format.Page, i int, cell format.Cell) {
	switch pg.Type {
	case format.PageTableInterior:
		if t.prevSet && (cell.Rowid < t.prevRowid || cell.Rowid == t.prevRowid && t.prevSep) {
			c.reportf(pg.Pgno, "%s: cell %d: separator %d is below %s %d before it", t.name, i, cell.Rowid, t.prevWhat(), t.prevRowid)
		}
		t.prevSet, t.prevSep, t.prevRowid = true, true, cell.Rowid
	case format.PageTableLeaf:
		if rec, ok := c.record(t, pg, i, cell); !ok {
			t.ok = false
		} else if c.rowRecord(t, pg.Pgno, i, cell.Rowid, rec) && t.rules != nil {
			c.checkFields(t, pg.Pgno, cell.Rowid, rec, false)
		}
		if t.prevSet && cell.Rowid <= t.prevRowid {
			c.reportf(pg.Pgno, "%s: cell %d: rowid %d out of order (after %s %d)", t.name, i, cell.Rowid, t.prevWhat(), t.prevRowid)
		}
		t.prevSet, t.prevSep, t.prevRowid = true, false, cell.Rowid
		t.entries++
	default:
		t.entries++
		payload, ok := c.record(t, pg, i, cell)
		if !ok {
			t.ok = false
			return
		}
		if t.rows { // a row of a WITHOUT ROWID table
			if !c.rowRecord(t, pg.Pgno, i, 0, payload) {
				t.ok = false
				return
			}
			// integrity_check checks the row's primary-key order before
			// its columns.
			inOrder := c.keyOrder(t, pg.Pgno, i, payload)
			if t.rules != nil {
				c.checkFields(t, pg.Pgno, 0, payload, !inOrder)
			}
			return
		}
		if _, err := format.CheckRecord(payload); err != nil {
			c.reportf(pg.Pgno, "%s: cell %d: malformed key record: %s", t.name, i, errMsg(err, pg.Pgno))
			t.ok = false
			return
		}
		c.keyOrder(t, pg.Pgno, i, payload)
	}
}

// maxLength is the longest record SQLite reads (format.MaxLength; tests
// lower it).
var maxLength int64 = format.MaxLength

// record returns the whole payload of cell i of pg, as overflow does. A
// payload longer than SQLite reads (sqlite3: "string or blob too big") is
// reported instead, its overflow chain walked but not assembled, and ok is
// false.
func (c *checker) record(t *tree, pg *format.Page, i int, cell format.Cell) (payload []byte, ok bool) {
	if cell.PayloadLen <= maxLength {
		return c.overflow(t, pg, i, cell, true)
	}
	c.overflow(t, pg, i, cell, false)
	c.reportf(pg.Pgno, "%s: cell %d: a record of %d bytes, longer than SQLite's limit of %d (sqlite3 reads it as: string or blob too big)",
		t.name, i, cell.PayloadLen, maxLength)
	return nil, false
}

// rowRecord checks the record of a row, cell i of page pgno of table t
// (rowid in a rowid table), as sqlite3's integrity_check decodes every
// row's header: header length in range, every serial type valid, and a
// body (the sizes the serial types give) exactly as long as the payload
// after the header. It returns whether the row's fields can be read: not
// when the header is malformed or the body runs past the payload. A rowid
// table with an unreadable row stays sound (its shape is not in question);
// expectedKeys then skips it. In a rowid table whose schema is known,
// only the fields SQLite's check decodes are checked (tree.parse).
//
// In the rows of a rowid table the reserved serial types 10 and 11 read as
// NULL, as SQLite reads them (rowSerialSize); elsewhere (sqlite_schema,
// WITHOUT ROWID rows) they make the record malformed.
func (c *checker) rowRecord(t *tree, pgno uint32, i int, rowid int64, rec []byte) (readable bool) {
	limit := -1
	if t.parseSet {
		if limit = t.parse; limit == 0 {
			return true // SQLite decodes none of it
		}
	}
	end, bad, partial := recordEnd(rec, t.rows && t.table, limit)
	if bad == "" && (end == int64(len(rec)) || partial && end <= int64(len(rec))) {
		return true
	}
	row := "cell " + strconv.Itoa(i)
	if t.table {
		row = "row " + strconv.FormatInt(rowid, 10)
	}
	switch {
	case bad != "":
		c.reportf(pgno, "%s: %s: malformed record: %s", t.name, row, bad)
		return false
	case end > int64(len(rec)):
		c.reportf(pgno, "%s: %s: malformed record: %s", t.name, row, msgBodyShort)
		return false
	}
	c.reportf(pgno, "%s: %s: malformed record: its header and fields take %d of its %d bytes", t.name, row, end, len(rec))
	return true
}

// What recordEnd finds wrong with a record header, in format's words.
const (
	msgHeaderLen = "record header length out of range"
	msgTypeCut   = "record header ends inside a serial type"
	msgReserved  = "reserved serial type in record"
	msgBodyShort = "record body shorter than its header says"
)

// recordEnd returns where record rec ends by its header: the header's
// length plus the body size of every serial type, more than len(rec) when
// the body does not fit. bad says what is wrong when the header is
// malformed: its length out of range, a serial type cut short or, unless
// reservedNull, reserved (10, 11; with reservedNull they have no body, as
// SQLite reads them in a row). With limit 0 or more, only that many
// fields are decoded: partial says the header has more, end is then where
// the last one decoded ends. It passes a sound record in one pass without
// allocating.
func recordEnd(rec []byte, reservedNull bool, limit int) (end int64, bad string, partial bool) {
	h, n := format.Uvarint(rec)
	if n == 0 || h < uint64(n) || h > uint64(len(rec)) {
		return 0, msgHeaderLen, false
	}
	hdr := rec[:h]
	end = int64(h)
	for pos, f := n, 0; pos < len(hdr); f++ {
		if f == limit {
			return end, "", true
		}
		_, size, next, short := format.ShortSerial(hdr, pos)
		if !short { // a type of three bytes or more, or reserved, or cut short
			t, m := format.Uvarint(hdr[pos:])
			if m == 0 {
				return 0, msgTypeCut, false
			}
			s, valid := format.SerialTypeSize(t)
			if reservedNull {
				s, valid = rowSerialSize(t)
			}
			if !valid {
				return 0, msgReserved, false
			}
			if s > int64(len(rec))-end {
				return int64(len(rec)) + 1, "", false
			}
			size, next = int(s), pos+m
		}
		if end += int64(size); end > int64(len(rec)) {
			return end, "", false // the fields after it are not read, as CheckRecord does not
		}
		pos = next
	}
	return end, "", false
}

// prevWhat names the previous key of a table b-tree's walk.
func (t *tree) prevWhat() string {
	if t.prevSep {
		return "separator"
	}
	return "rowid"
}

// keyOrder checks that key, entry i of page pgno, comes after the previous
// entry of index b-tree t, and is no duplicate in a UNIQUE index. It
// returns false when key is out of order.
func (c *checker) keyOrder(t *tree, pgno uint32, i int, key []byte) (inOrder bool) {
	if t.kinfo == nil {
		return true
	}
	inOrder = true
	if t.prevSet {
		cmp, err := format.CompareRecordPrefix(t.prevKey, key, t.kinfo, t.nKey)
		switch {
		case err != nil:
			c.reportf(pgno, "%s: cell %d: cannot compare keys: %s", t.name, i, errMsg(err, pgno))
			t.ok = false
		case cmp >= 0:
			c.reportf(pgno, "%s: cell %d: key %s out of order (not after %s)", t.name, i, formatKey(key, c.enc), formatKey(t.prevKey, c.enc))
			t.ok, inOrder = false, false
		case t.unique > 0 && !hasNull(key, t.unique):
			if cmp, _ := format.CompareRecordPrefix(t.prevKey, key, t.kinfo, t.unique); cmp == 0 {
				c.reportf(pgno, "%s: cell %d: non-unique entry %s (after %s)", t.name, i, formatKey(key, c.enc), formatKey(t.prevKey, c.enc))
			}
		}
	}
	t.prevSet = true
	t.prevKey = append(t.prevKey[:0], key...)
	return inOrder
}

// hasNull reports whether one of the first n fields of rec is NULL.
func hasNull(rec []byte, n int) bool {
	for i := 0; i < n; i++ {
		if v, ok := format.Field(rec, i); ok && v.Kind == format.KindNull {
			return true
		}
	}
	return false
}

// overflow walks the overflow chain of cell i of pg, marking its pages
// used, and checks that it has exactly the pages the payload needs
// (format.OverflowPages) and ends with 0. With assemble it returns the
// whole payload (in c.payload, valid until the next call); ok is false
// when the payload could not be read whole.
//
// An overflow page:
//
//	OFF  SIZE  FIELD
//	  0     4  next overflow page, 0 on the last
//	  4   U-4  the next U-4 bytes of the payload (the last page: what is left)
func (c *checker) overflow(t *tree, pg *format.Page, i int, cell format.Cell, assemble bool) (payload []byte, ok bool) {
	if cell.Overflow == 0 {
		return cell.Local, true
	}
	want := format.OverflowPages(cell.PayloadLen, c.usable, pg.Type == format.PageTableLeaf)
	rest := cell.PayloadLen - int64(len(cell.Local))
	per := int64(c.usable - format.OverflowPageHeaderSize)
	buf := c.payload[:0]
	if assemble {
		buf = append(buf, cell.Local...)
	}
	var got int64
	next, from := cell.Overflow, pg.Pgno
	for rest > 0 {
		if next == 0 {
			c.reportf(pg.Pgno, "%s: cell %d: overflow chain ends after %d of its %d pages", t.name, i, got, want)
			return nil, false
		}
		if !c.use(next, ref{kind: useOverflow, by: from}, pg.Pgno) {
			return nil, false
		}
		data, err := c.src.Page(next)
		if err != nil {
			c.reportf(next, "%s: overflow page of cell %d of page %d: %s", t.name, i, pg.Pgno, errMsg(err, next))
			return nil, false
		}
		n := min(rest, per)
		if assemble {
			buf = append(buf, data[format.OverflowPageHeaderSize:format.OverflowPageHeaderSize+n]...)
		}
		rest -= n
		got++
		from, next = next, format.OverflowNext(data)
	}
	if next != 0 {
		c.reportf(pg.Pgno, "%s: cell %d: overflow chain runs on past its %d pages (page %d points to page %d)", t.name, i, want, from, next)
	}
	if !assemble {
		return nil, true
	}
	c.payload = buf
	return buf, true
}
