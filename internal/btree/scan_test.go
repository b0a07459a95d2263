package btree

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// scanAll reads c's tree with a Scan from where c is (on), and returns
// the entries, the batches that came with a first payload, and the error.
func scanAll(c *Cursor, on bool) (rowids []int64, payloads [][]byte, plain int, err error) {
	var s Scan
	s.Start(c, on)
	for s.NextPage() {
		for first, ok := s.NextBatch(); ok; first, ok = s.NextBatch() {
			if first != nil {
				plain++
			}
			for i := 0; ; i++ {
				rowid, payload, ok := s.Next()
				if !ok {
					break
				}
				s.Ahead()
				if i == 0 && first != nil && !bytes.Equal(first, payload) {
					return nil, nil, 0, fmt.Errorf("first %x, payload %x", first, payload)
				}
				rowids = append(rowids, rowid)
				payloads = append(payloads, payload)
			}
		}
	}
	return rowids, payloads, plain, s.Err()
}

// cursorAll reads c's tree entry by entry from where c is (on).
func cursorAll(c *Cursor, on bool) (rowids []int64, payloads [][]byte, err error) {
	for ok := on; ok; ok = c.Next() {
		rowid, payload, _, err := c.Entry()
		if err != nil {
			return nil, nil, err
		}
		if !c.table {
			rowid = 0
		}
		rowids = append(rowids, rowid)
		payloads = append(payloads, payload)
	}
	return rowids, payloads, c.Err()
}

// TestScanTable scans table trees of rows of every size (plain cells,
// payload sizes of two bytes, rows that spill) from the first row and from
// sought ones: the entries are the cursor's, in order.
func TestScanTable(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		m := newMemPager(ps, false)
		wr := NewWriter(m)
		root := must(wr.CreateTree(true))
		r := rand.New(rand.NewPCG(7, 8))
		for k := int64(1); k <= 3000; k++ {
			if _, err := wr.TableInsert(root, k*3, payloadFor(k, 0, sizeDist(r, ps, 3*ps))); err != nil {
				t.Fatal(err)
			}
		}
		for _, src := range []Pages{m, flatCopy(m)} {
			for _, from := range []int64{-1, 1, 3, 700, 4500, 8999, 9000, 9001} {
				var a, b Cursor
				a.Init(src, root, true, nil)
				b.Init(src, root, true, nil)
				onA, onB := a.First(), b.First()
				if from >= 0 {
					a.SeekRowid(from)
					b.SeekRowid(from)
					onA, onB = a.Valid(), b.Valid()
				}
				gotR, gotP, plain, err := scanAll(&a, onA)
				wantR, wantP, werr := cursorAll(&b, onB)
				if err != nil || werr != nil {
					t.Fatal(err, werr)
				}
				if len(gotR) != len(wantR) || (from < 2 && plain == 0) {
					t.Fatalf("page size %d from %d: %d entries in %d plain batches, want %d", ps, from, len(gotR), plain, len(wantR))
				}
				for i := range gotR {
					if gotR[i] != wantR[i] || !bytes.Equal(gotP[i], wantP[i]) {
						t.Fatalf("page size %d from %d: entry %d is row %d (%d bytes), want %d (%d bytes)", ps, from, i, gotR[i], len(gotP[i]), wantR[i], len(wantP[i]))
					}
				}
			}
		}
	}
}

// TestScanIndex scans an index tree of long keys, whose interior cells
// hold entries too, as its cursor steps through it.
func TestScanIndex(t *testing.T) {
	m := newMemPager(512, false)
	wr := NewWriter(m)
	root := must(wr.CreateTree(false))
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 3000 {
		key := fmt.Appendf(nil, "%08d%s", r.IntN(1_000_000), bytes.Repeat([]byte{'k'}, r.IntN(900)))
		if _, err := wr.IndexInsert(root, nil, 0, rec(format.BlobValue(key), format.IntValue(int64(i)))); err != nil {
			t.Fatal(err)
		}
	}
	var a, b Cursor
	a.Init(m, root, false, nil)
	b.Init(m, root, false, nil)
	gotR, gotP, plain, err := scanAll(&a, a.First())
	wantR, wantP, werr := cursorAll(&b, b.First())
	if err != nil || werr != nil || plain != 0 {
		t.Fatal(err, werr, plain)
	}
	if len(gotP) != len(wantP) || len(gotP) != 3000 {
		t.Fatalf("%d entries, want %d", len(gotP), len(wantP))
	}
	for i := range gotP {
		if gotR[i] != wantR[i] || !bytes.Equal(gotP[i], wantP[i]) {
			t.Fatalf("entry %d differs", i)
		}
	}
}

// TestScanFail: an error a caller gives Fail stops the scan, and Err
// returns it; a malformed cell stops it with an error naming its page.
func TestScanFail(t *testing.T) {
	m := newMemPager(512, false)
	wr := NewWriter(m)
	root := must(wr.CreateTree(true))
	for k := int64(1); k <= 500; k++ {
		if _, err := wr.TableInsert(root, k, payloadFor(k, 0, 30)); err != nil {
			t.Fatal(err)
		}
	}
	var c Cursor
	c.Init(m, root, true, nil)
	var s Scan
	s.Start(&c, c.First())
	stop := errors.New("stop")
	n := 0
	for s.NextPage() {
		for _, ok := s.NextBatch(); ok; _, ok = s.NextBatch() {
			for _, _, ok := s.Next(); ok; _, _, ok = s.Next() {
				if n++; n == 100 {
					s.Fail(stop)
				}
			}
		}
	}
	if s.Err() != stop || n >= 500 {
		t.Fatalf("after Fail: %d entries, err %v", n, s.Err())
	}

	// Damage a cell pointer of the last leaf.
	c.Init(m, root, true, nil)
	c.Last()
	pg, _ := c.Page()
	data := m.pages[pg.Pgno-1]
	data[pg.Hdr+format.PageHeaderSizeLeaf] = 0xff
	c.Init(m, root, true, nil)
	_, _, _, err := scanAll(&c, c.First())
	var ce *format.CorruptError
	if !errors.As(err, &ce) || ce.Page != pg.Pgno {
		t.Fatalf("scan of a damaged leaf: %v, want a CorruptError naming page %d", err, pg.Pgno)
	}
}

// countPages counts the pages read through it.
type countPages struct {
	Pages
	reads int
}

func (p *countPages) Page(pgno uint32) ([]byte, error) {
	p.reads++
	return p.Pages.Page(pgno)
}

// TestLeafAheadOnlyForScans: a cursor that steps onto a leaf looks up the
// leaf after it only when something requests it ahead (a Scan, a cursor
// with runs): First reads the pages of its descent and no more.
func TestLeafAheadOnlyForScans(t *testing.T) {
	m := newMemPager(512, false)
	wr := NewWriter(m)
	root := must(wr.CreateTree(true))
	for k := int64(1); k <= 2000; k++ {
		if _, err := wr.TableInsert(root, k, payloadFor(k, 0, 40)); err != nil {
			t.Fatal(err)
		}
	}
	src := &countPages{Pages: m}
	var c Cursor
	c.Init(src, root, true, nil)
	if !c.First() {
		t.Fatal(c.Err())
	}
	depth := c.depth
	if src.reads != depth || depth < 3 {
		t.Fatalf("First read %d pages for a descent of %d levels", src.reads, depth)
	}
	var s Scan
	s.Start(&c, true)
	if !s.NextPage() || src.reads != depth+1 || len(s.ahead) == 0 {
		t.Fatalf("a Scan's first leaf: %d pages read, %d bytes ahead; want %d and a page", src.reads, len(s.ahead), depth+1)
	}
}
