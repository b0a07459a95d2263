package btree

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/pagodadb/pagoda/internal/format"
)

// memPager is an in-memory Writable over a SQLite database image, with a
// real freelist (trunk and leaf pages, header bytes 32..39, as SQLite and
// the pager keep it) and the page count in header bytes 28..31, so that its
// image is a database sqlite3 opens.
//
// In strict mode it behaves like a copy-on-write pager and checks the
// writer's manners: Page returns the committed image of a page that the
// transaction has not written, and commit verifies that none of those was
// written through; a freed page's buffer is filled with garbage (as is its
// content), so that a writer still using it is caught; Allocate always
// returns a new buffer. Without strict, pages are written in place (for
// benchmarks).
type memPager struct {
	pageSize int
	usable   int
	strict   bool
	pages    [][]byte // committed images (live ones without strict); pages[0] is page 1
	n        uint32   // page count
	dirty    map[uint32][]byte
	sums     []uint32 // strict: checksum of each committed page
	spare    [][]byte // pages made ahead by reserve
}

// reserve makes n page buffers ahead of time and touches them, so that a
// benchmark does not time the Go heap growing and the kernel faulting in
// fresh memory.
func (m *memPager) reserve(n int) {
	slab := make([]byte, n*m.pageSize)
	for i := 0; i < len(slab); i += 4096 {
		slab[i] = 1
	}
	for i := 0; i < n; i++ {
		m.spare = append(m.spare, slab[i*m.pageSize:(i+1)*m.pageSize:(i+1)*m.pageSize])
	}
}

// Freelist trunk page layout (sqlite-format.md §5):
//
//	OFF SIZE FIELD
//	  0    4 next trunk page, 0 on the last
//	  4    4 number of leaf page numbers that follow
//	  8  4*n leaf page numbers
const (
	memTrunkNext   = 0
	memTrunkCount  = 4
	memTrunkLeaves = 8
)

// poison fills freed pages in strict mode.
const poison = 0xa5

// newMemPager returns a one-page database: page 1 holds the header and an
// empty sqlite_schema leaf.
func newMemPager(pageSize int, strict bool) *memPager {
	return newMemPagerReserved(pageSize, 0, strict)
}

// newMemPagerReserved is newMemPager with reserved bytes at the end of
// every page (header byte 20), which make the usable size smaller.
func newMemPagerReserved(pageSize, reserved int, strict bool) *memPager {
	p1 := make([]byte, pageSize)
	format.InitHeader(format.Header(p1), pageSize)
	p1[20] = byte(reserved)
	if _, err := format.BuildPage(p1, 1, pageSize-reserved, format.PageTableLeaf, nil, 0); err != nil {
		panic(err)
	}
	return memPagerFrom(p1, pageSize, strict)
}

// memPagerFromImage loads a database image (a file sqlite3 wrote).
func memPagerFromImage(img []byte, strict bool) *memPager {
	ps := format.Header(img).PageSize()
	return memPagerFrom(img, ps, strict)
}

func memPagerFrom(img []byte, pageSize int, strict bool) *memPager {
	h := format.Header(img)
	m := &memPager{pageSize: pageSize, usable: pageSize - h.ReservedSpace(), strict: strict, dirty: map[uint32][]byte{}}
	for off := 0; off+pageSize <= len(img); off += pageSize {
		m.pages = append(m.pages, append([]byte(nil), img[off:off+pageSize]...))
	}
	m.n = uint32(len(m.pages))
	if strict {
		m.sums = make([]uint32, len(m.pages))
		for i, p := range m.pages {
			m.sums[i] = crc32.ChecksumIEEE(p)
		}
	}
	return m
}

func (m *memPager) UsableSize() int   { return m.usable }
func (m *memPager) PageCount() uint32 { return m.n }

func (m *memPager) Page(pgno uint32) ([]byte, error) {
	if pgno == 0 || pgno > m.n {
		return nil, format.Corruptf(pgno, "page %d outside 1..%d", pgno, m.n)
	}
	if b, ok := m.dirty[pgno]; ok {
		return b, nil
	}
	return m.pages[pgno-1], nil
}

func (m *memPager) Write(pgno uint32) ([]byte, error) {
	if pgno == 0 || pgno > m.n {
		return nil, format.Corruptf(pgno, "page %d outside 1..%d", pgno, m.n)
	}
	if !m.strict {
		return m.pages[pgno-1], nil
	}
	if b, ok := m.dirty[pgno]; ok {
		return b, nil
	}
	b := append([]byte(nil), m.pages[pgno-1]...)
	m.dirty[pgno] = b
	return b, nil
}

// fresh returns a zero-filled writable buffer for pgno.
func (m *memPager) fresh(pgno uint32) []byte {
	if !m.strict {
		clear(m.pages[pgno-1])
		return m.pages[pgno-1]
	}
	b := make([]byte, m.pageSize)
	m.dirty[pgno] = b
	return b
}

func (m *memPager) header() format.Header {
	b, err := m.Write(1)
	if err != nil {
		panic(err)
	}
	return format.Header(b)
}

func (m *memPager) Allocate() (uint32, []byte, error) {
	h := m.header()
	if trunk := h.FreelistTrunk(); trunk != 0 {
		if trunk > m.n {
			return 0, nil, format.CorruptAt(1, 32, "freelist trunk %d out of range", trunk)
		}
		t, _ := m.Write(trunk)
		n := binary.BigEndian.Uint32(t[memTrunkCount:])
		if int(n) > m.usable/4-2 {
			return 0, nil, format.Corruptf(trunk, "freelist leaf count too big (%d)", n)
		}
		h.SetFreelistCount(h.FreelistCount() - 1)
		if n == 0 {
			h.SetFreelistTrunk(binary.BigEndian.Uint32(t[memTrunkNext:]))
			return trunk, m.fresh(trunk), nil
		}
		leaf := binary.BigEndian.Uint32(t[memTrunkLeaves+4*(n-1):])
		binary.BigEndian.PutUint32(t[memTrunkLeaves+4*(n-1):], 0)
		binary.BigEndian.PutUint32(t[memTrunkCount:], n-1)
		if leaf < 2 || leaf > m.n {
			return 0, nil, format.Corruptf(trunk, "freelist leaf %d out of range", leaf)
		}
		return leaf, m.fresh(leaf), nil
	}
	m.n++
	if k := len(m.spare); k > 0 {
		m.pages = append(m.pages, m.spare[k-1])
		m.spare = m.spare[:k-1]
	} else {
		m.pages = append(m.pages, make([]byte, m.pageSize))
	}
	if m.strict {
		m.sums = append(m.sums, crc32.ChecksumIEEE(m.pages[m.n-1]))
	}
	h.SetDatabaseSize(m.n)
	return m.n, m.fresh(m.n), nil
}

func (m *memPager) Free(pgno uint32) error {
	if pgno < 2 || pgno > m.n {
		return fmt.Errorf("free of page %d outside 2..%d", pgno, m.n)
	}
	if m.strict {
		if b, ok := m.dirty[pgno]; ok {
			for i := range b {
				b[i] = poison
			}
		}
		b := make([]byte, m.pageSize)
		for i := range b {
			b[i] = poison
		}
		m.dirty[pgno] = b
	}
	h := m.header()
	trunk := h.FreelistTrunk()
	if trunk != 0 {
		t, err := m.Write(trunk)
		if err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(t[memTrunkCount:])
		if int(n) < m.usable/4-8 {
			binary.BigEndian.PutUint32(t[memTrunkLeaves+4*n:], pgno)
			binary.BigEndian.PutUint32(t[memTrunkCount:], n+1)
			h.SetFreelistCount(h.FreelistCount() + 1)
			return nil
		}
	}
	t := m.fresh(pgno)
	binary.BigEndian.PutUint32(t[memTrunkNext:], trunk)
	h.SetFreelistTrunk(pgno)
	h.SetFreelistCount(h.FreelistCount() + 1)
	return nil
}

// commit ends a transaction: in strict mode it checks that no page the
// transaction did not Write changed, and makes the written pages the
// committed ones.
func (m *memPager) commit() error {
	if !m.strict {
		return nil
	}
	for i := range m.pages {
		pgno := uint32(i + 1)
		if b, ok := m.dirty[pgno]; ok {
			m.pages[i] = b
			m.sums[i] = crc32.ChecksumIEEE(b)
			continue
		}
		if crc32.ChecksumIEEE(m.pages[i]) != m.sums[i] {
			return fmt.Errorf("page %d changed without Write (written through a Page buffer)", pgno)
		}
	}
	clear(m.dirty)
	return nil
}

// image commits and returns the database image.
func (m *memPager) image() ([]byte, error) {
	if err := m.commit(); err != nil {
		return nil, err
	}
	format.Header(m.pages[0]).SetDatabaseSize(m.n)
	if m.strict {
		m.sums[0] = crc32.ChecksumIEEE(m.pages[0])
	}
	out := make([]byte, 0, len(m.pages)*m.pageSize)
	for _, p := range m.pages[:m.n] {
		out = append(out, p...)
	}
	return out, nil
}

// freelistPages returns the pages on the freelist, trunks included, checking
// the count in the header.
func (m *memPager) freelistPages() ([]uint32, error) {
	h := format.Header(must(m.Page(1)))
	var out []uint32
	for trunk := h.FreelistTrunk(); trunk != 0; {
		if trunk > m.n || len(out) > int(m.n) {
			return nil, fmt.Errorf("freelist trunk %d out of range or looping", trunk)
		}
		t := must(m.Page(trunk))
		out = append(out, trunk)
		n := binary.BigEndian.Uint32(t[memTrunkCount:])
		if int(n) > m.usable/4-8 {
			return nil, fmt.Errorf("trunk %d holds %d leaves", trunk, n)
		}
		for i := uint32(0); i < n; i++ {
			out = append(out, binary.BigEndian.Uint32(t[memTrunkLeaves+4*i:]))
		}
		trunk = binary.BigEndian.Uint32(t[memTrunkNext:])
	}
	if uint32(len(out)) != h.FreelistCount() {
		return nil, fmt.Errorf("freelist holds %d pages, header says %d", len(out), h.FreelistCount())
	}
	return out, nil
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
