package format

import (
	"bytes"
	"math"
	"testing"
)

// checkTableLeafCells checks TableLeafCells against LeafEntry from every
// start and with batches of several sizes: each cell it decodes must be
// the one LeafEntry reads, whole and local, and it may stop early only
// before a cell that is not plain (one LeafEntry reports spilling or
// malformed, or that falls outside its fast path). On other page types it
// decodes nothing. It checks IndexLeafCells the same way.
func checkTableLeafCells(t *testing.T, p *Page) {
	t.Helper()
	checkLeafCells(t, p, "TableLeafCells", PageTableLeaf, p.TableLeafCells, tableCellPlain)
	checkLeafCells(t, p, "IndexLeafCells", PageIndexLeaf, p.IndexLeafCells, indexCellPlain)
}

func checkLeafCells(t *testing.T, p *Page, name string, typ PageType, decode func(int, []TableCell) int, plain func(*Page, int) bool) {
	t.Helper()
	for _, size := range []int{1, 3, 32} {
		out := make([]TableCell, size)
		for start := -1; start <= p.NCells; start++ {
			n := decode(start, out)
			if p.Type != typ || start < 0 || start >= p.NCells {
				if n != 0 {
					t.Fatalf("%s(%d) on a %v page with %d cells decoded %d", name, start, p.Type, p.NCells, n)
				}
				continue
			}
			if n < 0 || n > size || start+n > p.NCells {
				t.Fatalf("%s(%d, [%d]) = %d of %d cells", name, start, size, n, p.NCells)
			}
			for k, e := range out[:n] {
				rowid, local, ovfl, err := p.LeafEntry(start + k)
				if err != nil || ovfl || rowid != e.Rowid || !bytes.Equal(local, e.Payload) ||
					len(e.Payload) > 0 && &local[0] != &e.Payload[0] || cap(e.Payload) != len(e.Payload) {
					t.Fatalf("%s(%d) cell %d = %d, % x; LeafEntry = %d, % x, %v, %v",
						name, start, start+k, e.Rowid, e.Payload, rowid, local, ovfl, err)
				}
			}
			if n < size && start+n < p.NCells {
				if _, _, ovfl, err := p.LeafEntry(start + n); err == nil && !ovfl && plain(p, start+n) {
					t.Fatalf("%s(%d, [%d]) stopped at plain cell %d", name, start, size, start+n)
				}
			}
		}
	}
}

// indexCellPlain reports whether cell i of an index leaf is on
// IndexLeafCells' fast path: a payload length from 1 to under 2^14 in at
// most two bytes.
func indexCellPlain(p *Page, i int) bool {
	off, ok := p.cellOffset(i)
	if !ok || off > p.Usable-2 {
		return false
	}
	n, m := Uvarint(p.Data[off:p.Usable])
	return m > 0 && m <= 2 && n > 0 && n <= uint64(p.maxLocal)
}

// tableCellPlain reports whether cell i of a table leaf is on
// TableLeafCells' fast path: a payload length from 1 to under 2^14 in at
// most two bytes, and room after its start for the longest varints.
func tableCellPlain(p *Page, i int) bool {
	off, ok := p.cellOffset(i)
	if !ok || off > p.Usable-tableCellMaxHeader {
		return false
	}
	n, m := Uvarint(p.Data[off:p.Usable])
	return m > 0 && m <= 2 && n > 0 && n <= uint64(p.maxLocal)
}

func TestTableLeafCells(t *testing.T) {
	rowids := []int64{0, 1, 127, 128, 16383, 16384, 1<<21 - 1, 1 << 21, 1 << 28, 1 << 35, 1<<56 - 1, 1 << 56,
		math.MaxInt64, -1, math.MinInt64}
	for _, usable := range []int{512, 4096, 65536} {
		maxLocal := MaxLocal(usable, true)
		lengths := []int{0, 1, 100, 127, 128, maxLocal}
		var cells [][]byte
		add := func(rowid int64, n int) {
			local := LocalSize(int64(n), usable, true)
			cells = append(cells, tableLeafCell(rowid, n, pattern(local, byte(rowid)), 7))
		}
		for i, r := range rowids {
			add(r, lengths[i%len(lengths)])
		}
		add(5, maxLocal+1) // spills
		add(6, 1<<14)      // a 3-byte payload length
		add(7, 3)
		pages := [][]byte{}
		// As many cells as fit, in several pages.
		for len(cells) > 0 {
			var take [][]byte
			size := PageHeaderSizeLeaf
			for len(cells) > 0 && size+len(cells[0])+2 <= usable-8 {
				size += len(cells[0]) + 2
				take, cells = append(take, cells[0]), cells[1:]
			}
			if len(take) == 0 {
				cells = cells[1:] // too large for this page size
				continue
			}
			pages = append(pages, buildPage(2, usable, usable, PageTableLeaf, 0, take...))
		}
		decoded := 0
		for _, data := range pages {
			p, err := ParsePage(data, 2, usable)
			if err != nil {
				t.Fatal(err)
			}
			checkTableLeafCells(t, &p)
			out := make([]TableCell, 4)
			for i := 0; i < p.NCells; i++ {
				n := p.TableLeafCells(i, out)
				decoded += n
				i += n
			}
		}
		if decoded < len(rowids)/2 {
			t.Errorf("usable %d: the fast path decoded only %d cells", usable, decoded)
		}
	}
	// Rows as a table holds them: all decoded in one call.
	var rows [][]byte
	for r := int64(1); r <= 30; r++ {
		rows = append(rows, tableLeafCell(r*1000, 100, pattern(100, byte(r)), 0))
	}
	full, err := ParsePage(buildPage(2, 4096, 4096, PageTableLeaf, 0, rows...), 2, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if n := full.TableLeafCells(0, make([]TableCell, 32)); n != 30 {
		t.Errorf("a page of 30 plain rows: TableLeafCells decoded %d", n)
	}
	checkTableLeafCells(t, &full)
	// A cell whose last byte is the page's last: outside the fast path,
	// which then leaves it to LeafEntry.
	data := buildPage(2, 512, 512, PageTableLeaf, 0, tableLeafCell(1, 1, []byte{9}, 0), tableLeafCell(2, 1, []byte{8}, 0))
	p, err := ParsePage(data, 2, 512)
	if err != nil {
		t.Fatal(err)
	}
	checkTableLeafCells(t, &p)
	// Other page types decode nothing.
	ip, err := ParsePage(buildPage(2, 512, 512, PageIndexLeaf, 0, indexLeafCell(3, []byte{3, 0, 1}, 0)), 2, 512)
	if err != nil {
		t.Fatal(err)
	}
	checkTableLeafCells(t, &ip)
}
