package check

import (
	"fmt"
	"strconv"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// DefaultMaxProblems is how many problems Run reports when Options does not
// say.
const DefaultMaxProblems = 100

// Problem is one broken invariant.
type Problem struct {
	// Page is the page the problem is on, 0 when it belongs to no single
	// page (a schema row that does not fit the others, a root page number
	// out of range).
	Page uint32
	// Msg says what is wrong, without the page number.
	Msg string
}

// String returns "page N: Msg", or Msg alone when Page is 0.
func (p Problem) String() string {
	if p.Page == 0 {
		return p.Msg
	}
	return "page " + strconv.FormatUint(uint64(p.Page), 10) + ": " + p.Msg
}

// Options tunes Run. The zero value (or a nil *Options) is fine.
type Options struct {
	// MaxProblems caps the report; 0 means DefaultMaxProblems. When the
	// cap is reached Run stops and adds one last Problem saying so.
	MaxProblems int
}

// Run checks the database snapshot src whose schema is cat and returns every
// problem it finds, nil when there is none. When cat is nil, Run reads the
// schema from sqlite_schema itself (after checking that tree), so that a
// file whose schema the caller could not load can still be diagnosed.
//
// src's pages must stay valid and unchanged while Run runs.
func Run(src btree.Pages, cat *schema.Catalog, opts *Options) []Problem {
	c := &checker{src: src, n: src.PageCount(), usable: src.UsableSize(), max: DefaultMaxProblems}
	if opts != nil {
		if opts.MaxProblems > 0 {
			c.max = opts.MaxProblems
		}
	}
	if c.n == 0 {
		return nil // an empty file: no header yet, nothing to check
	}
	c.run(cat)
	return c.problems
}

// checker is the state of one Run.
type checker struct {
	src      btree.Pages
	n        uint32 // pages in the snapshot
	usable   int
	max      int
	problems []Problem
	stopped  bool // the problem cap was reached: unwind

	refs     []ref    // refs[p]: who uses page p, first come first served
	roots    []string // what each tree is, for messages ("table t"); refs of kind useRoot index it
	utf16    bool     // text is UTF-16 (enc is 2 or 3)
	enc      uint32   // the text encoding (header offset 56)
	sf       uint32   // the schema format number (header offset 44): below 4, DESC is ignored
	lockByte uint32   // the lock-byte page, 0 when the file does not reach it

	// exprs are the tables' rows as expressions read them (exprTable).
	exprs map[*schema.TableInfo]*expr.Table

	// The trees walked, by the catalog object they belong to.
	tables  map[*schema.TableInfo]*tree
	indexes map[*schema.IndexInfo]*tree

	// Scratch space reused from page to page.
	spans   []span
	payload []byte
	ftype   []uint64 // a row's serial types (decodeHeader)
	foff    []int    // where each of its fields starts, and where the last ends
}

// exprTable returns table ti's rows as SQLite's expressions read them:
// its columns' DEFAULTs and its VIRTUAL columns, built once a Run.
func (c *checker) exprTable(ti *schema.TableInfo) *expr.Table {
	t := c.exprs[ti]
	if t == nil {
		if c.exprs == nil {
			c.exprs = make(map[*schema.TableInfo]*expr.Table)
		}
		t = expr.NewTable(ti, c.enc)
		c.exprs[ti] = t
	}
	return t
}

// reportf records a problem on page pgno (0 for none), or, once the cap is
// reached, records that it was and sets stopped.
func (c *checker) reportf(pgno uint32, format string, args ...any) {
	if c.stopped {
		return
	}
	if len(c.problems) >= c.max {
		c.problems = append(c.problems, Problem{Msg: fmt.Sprintf("too many problems: stopped after %d", c.max)})
		c.stopped = true
		return
	}
	c.problems = append(c.problems, Problem{Page: pgno, Msg: fmt.Sprintf(format, args...)})
}

// errMsg is the message of an error from the format, pager or btree
// packages without the "database is corrupt: page N:" prefix that a
// Problem's page already says.
func errMsg(err error, pgno uint32) string {
	if ce, ok := err.(*format.CorruptError); ok && (ce.Page == pgno || ce.Page == 0) {
		if ce.Offset >= 0 {
			return fmt.Sprintf("%s (offset %d)", ce.Msg, ce.Offset)
		}
		return ce.Msg
	}
	return err.Error()
}

// useKind says how a page is used.
type useKind uint8

const (
	useNone     useKind = iota
	useRoot             // root of a b-tree; ref.by indexes checker.roots
	useChild            // b-tree page below the root; ref.by is the parent
	useOverflow         // overflow page; ref.by is the page pointing to it
	useTrunk            // freelist trunk; ref.by is the previous trunk, 0 for the header
	useFreeLeaf         // freelist leaf; ref.by is its trunk
	useLockByte         // the lock-byte page, never used by SQLite
	usePtrMap           // an auto-vacuum pointer-map page
)

// ref is the first use of a page.
type ref struct {
	by   uint32
	kind useKind
}

// describe names the user of a page for messages.
func (c *checker) describe(r ref) string {
	switch r.kind {
	case useRoot:
		if int(r.by) < len(c.roots) {
			return "the schema (root of " + c.roots[r.by] + ")"
		}
		return "the schema"
	case useChild:
		return fmt.Sprintf("page %d (child pointer)", r.by)
	case useOverflow:
		return fmt.Sprintf("page %d (overflow pointer)", r.by)
	case useTrunk:
		if r.by == 0 {
			return "the header (first freelist trunk)"
		}
		return fmt.Sprintf("page %d (next freelist trunk)", r.by)
	case useFreeLeaf:
		return fmt.Sprintf("freelist trunk page %d", r.by)
	}
	return "nothing"
}

// pointer names, for messages, the pointer that makes a use r of a page.
func (c *checker) pointer(r ref) string {
	switch r.kind {
	case useRoot:
		if int(r.by) < len(c.roots) {
			return "the root page of " + c.roots[r.by]
		}
	case useChild:
		return "a child pointer"
	case useOverflow:
		return "an overflow pointer"
	case useTrunk:
		if r.by == 0 {
			return "the first freelist trunk (header offset 32)"
		}
		return "the next-trunk pointer"
	case useFreeLeaf:
		return "a freelist leaf entry"
	}
	return "a pointer"
}

// use records that page pgno is used as r. It reports and returns false
// when the page is out of range (on page from, which holds the pointer) or
// already used; the caller must then not read the page as what r says it
// is.
func (c *checker) use(pgno uint32, r ref, from uint32) bool {
	if pgno == 0 || pgno > c.n {
		c.reportf(from, "%s is page %d, outside 1..%d", c.pointer(r), pgno, c.n)
		return false
	}
	switch prev := c.refs[pgno]; prev.kind {
	case useNone:
	case useLockByte:
		c.reportf(pgno, "the lock-byte page, which nothing may use, is used by %s", c.describe(r))
		return false
	case usePtrMap:
		c.reportf(pgno, "a pointer-map page is used by %s", c.describe(r))
		return false
	default:
		c.reportf(pgno, "referenced twice (by %s and by %s)", c.describe(prev), c.describe(r))
		return false
	}
	c.refs[pgno] = r
	return true
}

// run is Run after the trivial cases.
func (c *checker) run(cat *schema.Catalog) {
	pg1, err := c.src.Page(1)
	if err != nil {
		c.reportf(1, "cannot read the header: %s", errMsg(err, 1))
		return
	}
	if len(pg1) < format.HeaderSize {
		c.reportf(1, "page 1 is %d bytes, shorter than the %d-byte header", len(pg1), format.HeaderSize)
		return
	}
	hdr := format.Header(pg1)
	enc := hdr.TextEncoding()
	c.utf16 = format.IsUTF16(enc)
	c.enc = enc
	c.sf = hdr.SchemaFormat()
	c.refs = make([]ref, int(c.n)+1) // int: n may be 2^32-1
	c.exemptPages(len(pg1), hdr)

	// sqlite_schema first: the other roots come from it.
	c.roots = append(c.roots, "sqlite_schema")
	c.refs[1] = ref{kind: useRoot, by: 0}
	schemaTree := &tree{name: "sqlite_schema", root: 1, table: true}
	c.walkTree(schemaTree)
	complete := true // the catalog names every tree of the file
	if cat == nil {
		cat, complete = c.readCatalog(schemaTree)
	}
	c.checkSchema(cat)
	c.walkCatalog(cat)
	c.walkFreelist(hdr)
	if hdr.LargestRootPage() == 0 && hdr.IncrementalVacuum() != 0 {
		// sqlite3's integrity_check reports it too: incremental vacuum
		// works only in an auto-vacuum file.
		c.reportf(1, "incremental vacuum is on (header offset 64) in a file without auto-vacuum (largest root page 0 at offset 52)")
	}
	if complete {
		c.unusedPages()
		if hdr.LargestRootPage() != 0 && c.usable >= format.MinUsableSize {
			c.checkPtrMap(hdr)
		}
	}
	c.checkIndexes(cat)
}

// exemptPages marks the pages that belong to no tree and no list: the
// lock-byte page and, in an auto-vacuum file (header[52] != 0), the
// pointer-map pages, whose content is not checked.
func (c *checker) exemptPages(pageSize int, hdr format.Header) {
	lb := uint32(0)
	if pageSize >= format.MinPageSize {
		if lb = format.LockBytePage(pageSize); lb <= c.n {
			c.refs[lb] = ref{kind: useLockByte}
		}
	}
	c.lockByte = lb
	if hdr.LargestRootPage() == 0 || c.usable < format.MinUsableSize {
		return
	}
	// Pointer-map pages: the first page of each group of usable/5 + 1
	// (format.PtrMapPageOf).
	step := uint32(c.usable/format.PtrMapEntrySize + 1)
	for p := uint32(2); p <= c.n && p >= 2; p += step {
		m := format.PtrMapPageOf(p, c.usable, lb)
		if m <= c.n && c.refs[m].kind == useNone {
			c.refs[m] = ref{kind: usePtrMap}
		}
	}
}

// unusedPages reports every page that nothing uses.
func (c *checker) unusedPages() {
	for p := uint32(2); p <= c.n && !c.stopped; p++ {
		if c.refs[p].kind == useNone {
			c.reportf(p, "never used (not in any b-tree, overflow chain or the freelist)")
		}
	}
}
