package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
)

// buildPage lays out a b-tree page as the engine writes one: cells packed
// at the end of the usable area (cell 0 highest), each owning at least 4
// bytes, the pointer array in order, no freeblocks. Bytes past usable are
// filled with 0xEE so that reading them shows up. Page 1 gets a valid
// database header.
func buildPage(pgno uint32, pageSize, usable int, typ PageType, right uint32, cells ...[]byte) []byte {
	data := make([]byte, pageSize)
	for i := usable; i < pageSize; i++ {
		data[i] = 0xEE
	}
	if pgno == 1 {
		InitHeader(data, pageSize)
		data[offReservedSpace] = byte(pageSize - usable)
	}
	hdr := HeaderOffset(pgno)
	data[hdr] = byte(typ)
	ptr := hdr + typ.HeaderSize()
	end := usable
	for i, c := range cells {
		end -= max(len(c), MinCellSize)
		copy(data[end:], c)
		binary.BigEndian.PutUint16(data[ptr+2*i:], uint16(end))
	}
	binary.BigEndian.PutUint16(data[hdr+3:], uint16(len(cells)))
	binary.BigEndian.PutUint16(data[hdr+5:], uint16(end)) // 65536 wraps to 0
	if !typ.IsLeaf() {
		binary.BigEndian.PutUint32(data[hdr+8:], right)
	}
	return data
}

// Cell encoders, written from the table in sqlite-format.md §2.4.

func tableLeafCell(rowid int64, payloadLen int, local []byte, ovfl uint32) []byte {
	c := AppendUvarint(nil, uint64(payloadLen))
	c = AppendUvarint(c, uint64(rowid))
	c = append(c, local...)
	if len(local) < payloadLen {
		c = binary.BigEndian.AppendUint32(c, ovfl)
	}
	return c
}

func tableInteriorCell(child uint32, rowid int64) []byte {
	return AppendUvarint(binary.BigEndian.AppendUint32(nil, child), uint64(rowid))
}

func indexLeafCell(payloadLen int, local []byte, ovfl uint32) []byte {
	c := AppendUvarint(nil, uint64(payloadLen))
	c = append(c, local...)
	if len(local) < payloadLen {
		c = binary.BigEndian.AppendUint32(c, ovfl)
	}
	return c
}

func indexInteriorCell(child uint32, payloadLen int, local []byte, ovfl uint32) []byte {
	return append(binary.BigEndian.AppendUint32(nil, child), indexLeafCell(payloadLen, local, ovfl)...)
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func mustParse(t *testing.T, data []byte, pgno uint32, usable int) Page {
	t.Helper()
	p, err := ParsePage(data, pgno, usable)
	if err != nil {
		t.Fatalf("ParsePage(page %d, usable %d) = %v", pgno, usable, err)
	}
	return p
}

// checkPacked checks the accessors every valid page built by buildPage
// must satisfy.
func checkPacked(t *testing.T, p Page, typ PageType, n int) {
	t.Helper()
	if p.Type != typ || p.NCells != n || p.Hdr != HeaderOffset(p.Pgno) {
		t.Fatalf("page %d: type %v, %d cells, hdr %d; want %v, %d, %d", p.Pgno, p.Type, p.NCells, p.Hdr, typ, n, HeaderOffset(p.Pgno))
	}
	if got, want := p.CellPointerEnd(), p.Hdr+typ.HeaderSize()+2*n; got != want {
		t.Errorf("CellPointerEnd = %d, want %d", got, want)
	}
	if p.FirstFreeblock() != 0 || p.FragmentedBytes() != 0 {
		t.Errorf("freeblock %d, fragments %d; want 0, 0", p.FirstFreeblock(), p.FragmentedBytes())
	}
	free, err := p.FreeSpace()
	if err != nil {
		t.Fatalf("FreeSpace = %v", err)
	}
	if want := p.ContentStart() - p.CellPointerEnd(); free != want {
		t.Errorf("FreeSpace = %d, want %d", free, want)
	}
	// Cells own the content area exactly: their sizes add up.
	used := 0
	for i := 0; i < n; i++ {
		c, err := p.Cell(i)
		if err != nil {
			t.Fatalf("Cell(%d) = %v", i, err)
		}
		used += c.Size
	}
	if want := p.Usable - p.ContentStart(); used != want {
		t.Errorf("cells use %d bytes, content area is %d", used, want)
	}
}

func TestPageTypes(t *testing.T) {
	for _, tc := range []struct {
		t           PageType
		valid, leaf bool
		table       bool
		hdrSize     int
		name        string
	}{
		{PageIndexInterior, true, false, false, 12, "index interior"},
		{PageTableInterior, true, false, true, 12, "table interior"},
		{PageIndexLeaf, true, true, false, 8, "index leaf"},
		{PageTableLeaf, true, true, true, 8, "table leaf"},
	} {
		if tc.t.Valid() != tc.valid || tc.t.IsLeaf() != tc.leaf || tc.t.IsTable() != tc.table ||
			tc.t.HeaderSize() != tc.hdrSize || tc.t.String() != tc.name {
			t.Errorf("PageType(%d): valid %v leaf %v table %v hdr %d %q", byte(tc.t),
				tc.t.Valid(), tc.t.IsLeaf(), tc.t.IsTable(), tc.t.HeaderSize(), tc.t.String())
		}
	}
	for b := 0; b < 256; b++ {
		want := b == 2 || b == 5 || b == 10 || b == 13
		if PageType(b).Valid() != want {
			t.Errorf("PageType(%d).Valid() = %v", b, !want)
		}
		if !want && PageType(b).String() != "invalid" {
			t.Errorf("PageType(%d).String() = %q", b, PageType(b).String())
		}
	}
	if HeaderOffset(1) != 100 || HeaderOffset(2) != 0 || HeaderOffset(math.MaxUint32) != 0 {
		t.Errorf("HeaderOffset: %d %d", HeaderOffset(1), HeaderOffset(2))
	}
}

// TestSchemaPageOne rebuilds page 1 of the one-table database of
// sqlite-format.md §2.6 byte for byte and decodes it.
func TestSchemaPageOne(t *testing.T) {
	const sql = "CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b INTEGER, c REAL, d BLOB)"
	data := make([]byte, 4096)
	copy(data, sqliteHeader(t))
	copy(data[100:], unhex(t, "0d 0000 0001 0fa6 00 | 0fa6"))
	cell := append(unhex(t, "58 01 07 17 0f 0f 01 81 1f"), "tablett\x02"+sql...)
	if 4006+len(cell) != 4096 {
		t.Fatalf("test cell is %d bytes", len(cell))
	}
	copy(data[4006:], cell)

	p := mustParse(t, data, 1, 4096)
	checkPacked(t, p, PageTableLeaf, 1)
	if p.ContentStart() != 4006 || p.CellPointerEnd() != 110 {
		t.Errorf("ContentStart %d, CellPointerEnd %d; want 4006, 110", p.ContentStart(), p.CellPointerEnd())
	}
	if off, err := p.CellOffset(0); off != 4006 || err != nil {
		t.Errorf("CellOffset(0) = %d, %v", off, err)
	}
	if free, _ := p.FreeSpace(); free != 4006-110 {
		t.Errorf("FreeSpace = %d, want %d", free, 4006-110)
	}
	c, err := p.Cell(0)
	if err != nil {
		t.Fatal(err)
	}
	if c.PayloadLen != 88 || c.Rowid != 1 || c.Overflow != 0 || c.Size != 90 || len(c.Local) != 88 {
		t.Errorf("cell = %+v", c)
	}
	if rowid, err := p.TableLeafRowid(0); rowid != 1 || err != nil {
		t.Errorf("TableLeafRowid(0) = %d, %v", rowid, err)
	}
	want := []Value{TextValue([]byte("table")), TextValue([]byte("t")), TextValue([]byte("t")), IntValue(2), TextValue([]byte(sql))}
	checkRecord(t, c.Local, want)
	// The engine's encoder produces the same record bytes.
	if got := AppendRecord(nil, want); !bytes.Equal(got, c.Local) {
		t.Errorf("AppendRecord(schema row) = % x\nwant % x", got, c.Local)
	}
	// The same page with the header cleared still parses: ParsePage does
	// not look at the database header.
	clear(data[:100])
	if _, err := ParsePage(data, 1, 4096); err != nil {
		t.Errorf("ParsePage without db header: %v", err)
	}
	// As page 2 the same bytes are garbage at offset 0.
	_, err = ParsePage(data, 2, 4096)
	wantCorrupt(t, err, 2)
}

func TestTableLeafPage(t *testing.T) {
	rowids := []int64{math.MinInt64, -1, 0, 1, 127, 128, 1 << 56, math.MaxInt64}
	for _, geo := range []struct {
		pgno             uint32
		pageSize, usable int
	}{{2, 512, 512}, {1, 512, 512}, {2, 1024, 1000}, {1, 4096, 4064}, {7, 65536, 65536}} {
		t.Run(fmt.Sprintf("page%d_%d_%d", geo.pgno, geo.pageSize, geo.usable), func(t *testing.T) {
			var cells [][]byte
			var recs [][]byte
			for i, r := range rowids {
				rec := AppendRecord(nil, []Value{IntValue(r), TextValue(pattern(i*3, 'a'))})
				recs = append(recs, rec)
				cells = append(cells, tableLeafCell(r, len(rec), rec, 0))
			}
			// A cell whose encoding is 2 bytes still owns 4.
			cells = append(cells, tableLeafCell(5, 0, nil, 0))
			// An overflowing cell.
			big := pattern(600+geo.usable, 'x')
			l := LocalSize(int64(len(big)), geo.usable, true)
			cells = append(cells, tableLeafCell(77, len(big), big[:l], 4242))

			data := buildPage(geo.pgno, geo.pageSize, geo.usable, PageTableLeaf, 0, cells...)
			p := mustParse(t, data, geo.pgno, geo.usable)
			checkPacked(t, p, PageTableLeaf, len(cells))
			for i, r := range rowids {
				c, err := p.Cell(i)
				if err != nil {
					t.Fatalf("Cell(%d) = %v", i, err)
				}
				if c.Rowid != r || c.PayloadLen != int64(len(recs[i])) || !bytes.Equal(c.Local, recs[i]) || c.Overflow != 0 || c.Child != 0 {
					t.Errorf("Cell(%d) = %+v, want rowid %d local % x", i, c, r, recs[i])
				}
				if want := VarintLen(uint64(len(recs[i]))) + VarintLen(uint64(r)) + len(recs[i]); c.Size != want {
					t.Errorf("Cell(%d).Size = %d, want %d", i, c.Size, want)
				}
				if cap(c.Local) != len(c.Local) {
					t.Errorf("Cell(%d).Local has spare capacity %d: appending would overwrite the page", i, cap(c.Local))
				}
				got, err := p.TableLeafRowid(i)
				if got != r || err != nil {
					t.Errorf("TableLeafRowid(%d) = %d, %v; want %d", i, got, err, r)
				}
				off, _ := p.CellOffset(i)
				if c2, err := p.CellAt(off); err != nil || c2.Rowid != c.Rowid || c2.Size != c.Size {
					t.Errorf("CellAt(%d) = %+v, %v; Cell(%d) = %+v", off, c2, err, i, c)
				}
			}
			small, err := p.Cell(len(rowids))
			if err != nil || small.Rowid != 5 || small.PayloadLen != 0 || len(small.Local) != 0 || small.Size != 4 {
				t.Errorf("2-byte cell = %+v, %v; want rowid 5, size 4", small, err)
			}
			ov, err := p.Cell(len(rowids) + 1)
			if err != nil {
				t.Fatal(err)
			}
			if ov.Rowid != 77 || ov.PayloadLen != int64(len(big)) || ov.Overflow != 4242 || !bytes.Equal(ov.Local, big[:l]) {
				t.Errorf("overflow cell = rowid %d len %d ovfl %d local %d bytes; want 77 %d 4242 %d",
					ov.Rowid, ov.PayloadLen, ov.Overflow, len(ov.Local), len(big), l)
			}
			if want := VarintLen(uint64(len(big))) + 1 + l + 4; ov.Size != want {
				t.Errorf("overflow cell size %d, want %d", ov.Size, want)
			}
		})
	}
}

func TestTableInteriorPage(t *testing.T) {
	type kc struct {
		child uint32
		key   int64
	}
	keys := []kc{{3, math.MinInt64}, {4, -1}, {5, 0}, {6, 1 << 40}, {math.MaxUint32, math.MaxInt64}}
	for _, pgno := range []uint32{1, 2} {
		var cells [][]byte
		for _, k := range keys {
			cells = append(cells, tableInteriorCell(k.child, k.key))
		}
		data := buildPage(pgno, 512, 512, PageTableInterior, 99, cells...)
		p := mustParse(t, data, pgno, 512)
		checkPacked(t, p, PageTableInterior, len(keys))
		if p.RightChild() != 99 {
			t.Errorf("RightChild = %d", p.RightChild())
		}
		for i, k := range keys {
			child, err := p.Child(i)
			if child != k.child || err != nil {
				t.Errorf("page %d Child(%d) = %d, %v; want %d", pgno, i, child, err, k.child)
			}
			key, err := p.TableInteriorKey(i)
			if key != k.key || err != nil {
				t.Errorf("page %d TableInteriorKey(%d) = %d, %v; want %d", pgno, i, key, err, k.key)
			}
			c, err := p.Cell(i)
			if err != nil || c.Child != k.child || c.Rowid != k.key || c.Local != nil || c.PayloadLen != 0 {
				t.Errorf("page %d Cell(%d) = %+v, %v", pgno, i, c, err)
			}
			if want := 4 + VarintLen(uint64(k.key)); c.Size != want {
				t.Errorf("Cell(%d).Size = %d, want %d", i, c.Size, want)
			}
		}
		if child, err := p.Child(len(keys)); child != 99 || err != nil {
			t.Errorf("Child(NCells) = %d, %v; want right child 99", child, err)
		}
	}
}

func TestIndexPages(t *testing.T) {
	const u = 512 // X_index = 102, M = 39
	recs := [][]byte{
		AppendRecord(nil, []Value{TextValue([]byte("alpha")), IntValue(1)}),
		AppendRecord(nil, []Value{NullValue(), IntValue(-5)}),
	}
	// Payload sizes at the overflow boundary: 102 stays, 103 spills to M.
	// Header 03 + 2-byte blob serial type, so a 99-byte blob makes 102.
	exact := AppendRecord(nil, []Value{BlobValue(pattern(102-3, 0))})
	spill := AppendRecord(nil, []Value{BlobValue(pattern(103-3, 0))})
	huge := AppendRecord(nil, []Value{BlobValue(pattern(5000, 9))})
	if len(exact) != 102 || len(spill) != 103 {
		t.Fatalf("test records are %d and %d bytes", len(exact), len(spill))
	}
	type want struct {
		payload []byte
		local   int
		ovfl    uint32
	}
	wants := []want{{recs[0], len(recs[0]), 0}, {recs[1], len(recs[1]), 0}, {exact, 102, 0}, {spill, 39, 11}, {huge, LocalSize(int64(len(huge)), u, false), 12}}
	if wants[4].local < 39 || wants[4].local > 102 {
		t.Fatalf("local size of huge = %d", wants[4].local)
	}
	for _, typ := range []PageType{PageIndexLeaf, PageIndexInterior} {
		for _, pgno := range []uint32{1, 2} {
			var cells [][]byte
			for i, w := range wants {
				if typ == PageIndexLeaf {
					cells = append(cells, indexLeafCell(len(w.payload), w.payload[:w.local], w.ovfl))
				} else {
					cells = append(cells, indexInteriorCell(uint32(100+i), len(w.payload), w.payload[:w.local], w.ovfl))
				}
			}
			data := buildPage(pgno, 1024, u, typ, 555, cells...)
			p := mustParse(t, data, pgno, u)
			checkPacked(t, p, typ, len(wants))
			for i, w := range wants {
				c, err := p.Cell(i)
				if err != nil {
					t.Fatalf("%v page %d: Cell(%d) = %v", typ, pgno, i, err)
				}
				if c.PayloadLen != int64(len(w.payload)) || !bytes.Equal(c.Local, w.payload[:w.local]) || c.Overflow != w.ovfl || c.Rowid != 0 {
					t.Errorf("%v page %d: Cell(%d) = len %d local %d ovfl %d; want %d %d %d", typ, pgno, i,
						c.PayloadLen, len(c.Local), c.Overflow, len(w.payload), w.local, w.ovfl)
				}
				size := VarintLen(uint64(len(w.payload))) + w.local
				if w.ovfl != 0 {
					size += 4
				}
				if typ == PageIndexInterior {
					size += 4
					if c.Child != uint32(100+i) {
						t.Errorf("Cell(%d).Child = %d", i, c.Child)
					}
					if child, err := p.Child(i); child != uint32(100+i) || err != nil {
						t.Errorf("Child(%d) = %d, %v", i, child, err)
					}
				}
				if c.Size != size {
					t.Errorf("%v: Cell(%d).Size = %d, want %d", typ, i, c.Size, size)
				}
			}
			if typ == PageIndexInterior {
				if child, err := p.Child(len(wants)); child != 555 || err != nil {
					t.Errorf("Child(NCells) = %d, %v", child, err)
				}
			}
		}
	}
}

func TestEmptyPages(t *testing.T) {
	// An empty leaf as sqlite3 writes it: 0d 0000 0000 1000 00.
	data := make([]byte, 4096)
	copy(data, unhex(t, "0d 0000 0000 1000 00"))
	p := mustParse(t, data, 2, 4096)
	if p.NCells != 0 || p.ContentStart() != 4096 {
		t.Errorf("empty leaf: %d cells, content start %d", p.NCells, p.ContentStart())
	}
	if free, err := p.FreeSpace(); free != 4088 || err != nil {
		t.Errorf("empty leaf FreeSpace = %d, %v; want 4088", free, err)
	}
	// 64 KiB page: content start 0 means 65536.
	data = make([]byte, 65536)
	data[0] = byte(PageTableLeaf)
	p = mustParse(t, data, 3, 65536)
	if p.ContentStart() != 65536 {
		t.Errorf("ContentStart = %d, want 65536", p.ContentStart())
	}
	if free, err := p.FreeSpace(); free != 65528 || err != nil {
		t.Errorf("64K FreeSpace = %d, %v; want 65528", free, err)
	}
	// Empty interior page 1: only the right child.
	data = buildPage(1, 512, 512, PageTableInterior, 2)
	p = mustParse(t, data, 1, 512)
	if free, err := p.FreeSpace(); free != 512-112 || err != nil {
		t.Errorf("page 1 interior FreeSpace = %d, %v", free, err)
	}
	if child, err := p.Child(0); child != 2 || err != nil {
		t.Errorf("Child(0) of empty interior = %d, %v", child, err)
	}
}

func TestFreeSpaceFreeblocks(t *testing.T) {
	// Table leaf, 512 bytes, two cells; content area from 400 with two
	// freeblocks (one at the content start itself) and 3 fragment bytes.
	build := func() ([]byte, Page) {
		data := buildPage(2, 512, 512, PageTableLeaf, 0, tableLeafCell(1, 3, []byte{1, 2, 3}, 0), tableLeafCell(2, 3, []byte{4, 5, 6}, 0))
		// Cells sit at 507 and 502; put the content start at 400.
		binary.BigEndian.PutUint16(data[5:], 400)
		binary.BigEndian.PutUint16(data[1:], 400)
		binary.BigEndian.PutUint16(data[400:], 440) // next
		binary.BigEndian.PutUint16(data[402:], 16)  // size
		binary.BigEndian.PutUint16(data[440:], 0)
		binary.BigEndian.PutUint16(data[442:], 10)
		data[7] = 3
		return data, mustParse(t, data, 2, 512)
	}
	data, p := build()
	free, err := p.FreeSpace()
	if want := (400 - 12) + 16 + 10 + 3; free != want || err != nil {
		t.Errorf("FreeSpace = %d, %v; want %d", free, err, want)
	}
	if p.FirstFreeblock() != 400 || p.FragmentedBytes() != 3 {
		t.Errorf("FirstFreeblock %d, FragmentedBytes %d", p.FirstFreeblock(), p.FragmentedBytes())
	}
	if next, size := p.Freeblock(400); next != 440 || size != 16 {
		t.Errorf("Freeblock(400) = %d, %d; want 440, 16", next, size)
	}
	if p.CellPointer(0) != 507 || p.CellPointer(1) != 502 {
		t.Errorf("CellPointer = %d, %d; want 507, 502", p.CellPointer(0), p.CellPointer(1))
	}
	// Freeblocks exactly 4 bytes apart are legal (the gap is a fragment).
	binary.BigEndian.PutUint16(data[400:], 420) // first ends at 416, next at 416+4
	binary.BigEndian.PutUint16(data[420:], 0)
	binary.BigEndian.PutUint16(data[422:], 10)
	if free, err := p.FreeSpace(); free != (400-12)+16+10+3 || err != nil {
		t.Errorf("freeblocks 4 bytes apart: FreeSpace = %d, %v", free, err)
	}
	// A freeblock ending exactly at U (the cells are ignored here).
	data, p = build()
	binary.BigEndian.PutUint16(data[442:], 512-440)
	if free, err := p.FreeSpace(); free != (400-12)+16+72+3 || err != nil {
		t.Errorf("freeblock ending at U: FreeSpace = %d, %v", free, err)
	}
}

// TestCorruptPages starts from valid pages and breaks one rule at a time.
// Every error must wrap ErrCorrupt and name the page.
func TestCorruptPages(t *testing.T) {
	const u = 512
	leaf := func(pgno uint32) []byte {
		return buildPage(pgno, u, u, PageTableLeaf, 0,
			tableLeafCell(1, 3, []byte{1, 2, 3}, 0), tableLeafCell(2, 3, []byte{4, 5, 6}, 0))
	}
	interior := func(pgno uint32) []byte {
		return buildPage(pgno, u, u, PageTableInterior, 9, tableInteriorCell(3, 10), tableInteriorCell(4, 20))
	}
	ptr := func(d []byte, pgno uint32, typ PageType, i int) []byte {
		return d[HeaderOffset(pgno)+typ.HeaderSize()+2*i:]
	}
	put16 := binary.BigEndian.PutUint16
	// Place raw cell bytes at off and point cell 0 at them.
	place := func(d []byte, pgno uint32, typ PageType, off int, cell []byte) {
		put16(ptr(d, pgno, typ, 0), uint16(off))
		copy(d[off:], cell)
	}

	type corruption struct {
		name  string
		pgno  uint32
		base  func(uint32) []byte
		typ   PageType
		mod   func(d []byte, pgno uint32)
		step  string // which call must fail: parse, cell, rowid, key, child, free
		inMsg string
	}
	cases := []corruption{
		{"type 0", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) { d[0] = 0 }, "parse", "page type 0"},
		{"type 1", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) { d[0] = 1 }, "parse", "page type 1"},
		{"type 14", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) { d[0] = 14 }, "parse", "page type 14"},
		{"type 255 on page 1", 1, leaf, PageTableLeaf, func(d []byte, _ uint32) { d[100] = 255 }, "parse", "page type 255"},
		{"page 1 type read at 0 would be 'S'", 1, leaf, PageTableLeaf, func(d []byte, _ uint32) { d[100] = 'S' }, "parse", "page type 83"},
		{"too many cells", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) { put16(d[3:], 253) }, "parse", "253 cells"},
		{"too many cells on page 1", 1, leaf, PageTableLeaf, func(d []byte, _ uint32) { put16(d[103:], 203) }, "parse", "203 cells"},
		{"too many cells, interior", 2, interior, PageTableInterior, func(d []byte, _ uint32) { put16(d[3:], 251) }, "parse", "251 cells"},
		{"65535 cells", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) { put16(d[3:], 0xffff) }, "parse", "cells"},

		{"cell pointer 0", 2, leaf, PageTableLeaf, func(d []byte, p uint32) { put16(ptr(d, p, PageTableLeaf, 0), 0) }, "cell", "out of range"},
		{"cell pointer into page 1 header", 1, leaf, PageTableLeaf, func(d []byte, p uint32) { put16(ptr(d, p, PageTableLeaf, 0), 50) }, "cell", "out of range"},
		{"cell pointer into pointer array", 2, leaf, PageTableLeaf, func(d []byte, p uint32) { put16(ptr(d, p, PageTableLeaf, 0), 11) }, "cell", "out of range"},
		{"cell pointer U-3", 2, leaf, PageTableLeaf, func(d []byte, p uint32) { put16(ptr(d, p, PageTableLeaf, 0), u-3) }, "cell", "out of range"},
		{"cell pointer U-1", 2, leaf, PageTableLeaf, func(d []byte, p uint32) { put16(ptr(d, p, PageTableLeaf, 0), u-1) }, "cell", "out of range"},
		{"cell pointer U", 2, leaf, PageTableLeaf, func(d []byte, p uint32) { put16(ptr(d, p, PageTableLeaf, 1), u) }, "cell", "out of range"},
		{"cell pointer 0xffff", 2, leaf, PageTableLeaf, func(d []byte, p uint32) { put16(ptr(d, p, PageTableLeaf, 1), 0xffff) }, "cell", "out of range"},
		{"rowid: cell pointer U-2", 2, leaf, PageTableLeaf, func(d []byte, p uint32) { put16(ptr(d, p, PageTableLeaf, 0), u-2) }, "rowid", "out of range"},
		{"key: cell pointer 1", 2, interior, PageTableInterior, func(d []byte, p uint32) { put16(ptr(d, p, PageTableInterior, 0), 1) }, "key", "out of range"},
		{"child: cell pointer U-1", 2, interior, PageTableInterior, func(d []byte, p uint32) { put16(ptr(d, p, PageTableInterior, 0), u-1) }, "child", "out of range"},

		{"payload runs off the page", 2, leaf, PageTableLeaf, func(d []byte, p uint32) {
			place(d, p, PageTableLeaf, u-10, tableLeafCell(1, 100, nil, 0)[:2])
		}, "cell", "extends off"},
		{"payload one byte too long", 2, leaf, PageTableLeaf, func(d []byte, p uint32) {
			place(d, p, PageTableLeaf, u-10, tableLeafCell(1, 9, pattern(8, 1), 0)) // 1+1+9 = 11 > 10
			d[u-10] = 9
		}, "cell", "extends off"},
		{"payload length varint truncated at U", 2, leaf, PageTableLeaf, func(d []byte, p uint32) {
			place(d, p, PageTableLeaf, u-4, []byte{0xff, 0xff, 0xff, 0xff})
		}, "cell", "extends off"},
		{"rowid varint truncated at U", 2, leaf, PageTableLeaf, func(d []byte, p uint32) {
			place(d, p, PageTableLeaf, u-4, []byte{0x00, 0x81, 0x81, 0x81})
		}, "cell", "extends off"},
		{"rowid: rowid varint truncated at U", 2, leaf, PageTableLeaf, func(d []byte, p uint32) {
			place(d, p, PageTableLeaf, u-4, []byte{0x00, 0x81, 0x81, 0x81})
		}, "rowid", "extends off"},
		{"overflow pointer runs off the page", 2, leaf, PageTableLeaf, func(d []byte, p uint32) {
			c := tableLeafCell(3, 600, pattern(LocalSize(600, u, true), 1), 7) // 2+1+92+4 = 99 bytes
			place(d, p, PageTableLeaf, u-len(c)+1, c[:len(c)-1])
		}, "cell", "extends off"},
		{"overflow page 0", 2, leaf, PageTableLeaf, func(d []byte, p uint32) {
			c := tableLeafCell(3, 600, pattern(LocalSize(600, u, true), 1), 0)
			place(d, p, PageTableLeaf, u-len(c), c)
		}, "cell", "no overflow page"},
		{"payload length 2^40", 2, leaf, PageTableLeaf, func(d []byte, p uint32) {
			// tableLeafCell(3, 1<<40, nil, 0), which int cannot hold on 32 bits.
			c := binary.BigEndian.AppendUint32(AppendUvarint(AppendUvarint(nil, 1<<40), 3), 0)
			place(d, p, PageTableLeaf, 400, c[:7])
		}, "cell", "too large"},
		{"payload length 2^64-1", 2, leaf, PageTableLeaf, func(d []byte, p uint32) {
			place(d, p, PageTableLeaf, 400, bytes.Repeat([]byte{0xff}, 10))
		}, "cell", "too large"},
		{"interior rowid missing at U-4", 2, interior, PageTableInterior, func(d []byte, p uint32) {
			place(d, p, PageTableInterior, u-4, []byte{0, 0, 0, 3})
		}, "key", "extends off"},
		{"interior cell rowid missing at U-4", 2, interior, PageTableInterior, func(d []byte, p uint32) {
			place(d, p, PageTableInterior, u-4, []byte{0, 0, 0, 3})
		}, "cell", "extends off"},
		{"interior rowid truncated", 2, interior, PageTableInterior, func(d []byte, p uint32) {
			place(d, p, PageTableInterior, u-6, []byte{0, 0, 0, 3, 0x81, 0x81})
		}, "key", "extends off"},

		{"content start 10, inside the pointer array", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) { put16(d[5:], 10) }, "free", "content area"},
		{"content start past U", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) { put16(d[5:], u+1) }, "free", "content area"},
		{"content start 0 (65536) on a 512 page", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) { put16(d[5:], 0) }, "free", "content area"},
		{"content start inside page 1 header", 1, leaf, PageTableLeaf, func(d []byte, _ uint32) { put16(d[105:], 90) }, "free", "content area"},
		{"freeblock before content start", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) {
			put16(d[5:], 400)
			put16(d[1:], 300)
			put16(d[302:], 8)
		}, "free", "free space corruption"},
		{"freeblock header past U", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) {
			put16(d[5:], 400)
			put16(d[1:], u-3)
		}, "free", "free space corruption"},
		{"freeblock size 3", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) {
			put16(d[5:], 400)
			put16(d[1:], 400)
			put16(d[402:], 3)
		}, "free", "free space corruption"},
		{"freeblock runs past U", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) {
			put16(d[5:], 400)
			put16(d[1:], 400)
			put16(d[402:], u-400+1)
		}, "free", "free space corruption"},
		{"adjacent freeblocks", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) {
			put16(d[5:], 400)
			put16(d[1:], 400)
			put16(d[400:], 408)
			put16(d[402:], 8)
			put16(d[408:], 0)
			put16(d[410:], 8)
		}, "free", "overlaps or touches"},
		{"freeblocks 3 bytes apart", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) {
			put16(d[5:], 400)
			put16(d[1:], 400)
			put16(d[400:], 411)
			put16(d[402:], 8)
			put16(d[411:], 0)
			put16(d[413:], 8)
		}, "free", "overlaps or touches"},
		{"overlapping freeblocks", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) {
			put16(d[5:], 400)
			put16(d[1:], 400)
			put16(d[400:], 404)
			put16(d[402:], 20)
			put16(d[404:], 0)
			put16(d[406:], 8)
		}, "free", "overlaps or touches"},
		{"freeblock chain loops back", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) {
			put16(d[5:], 400)
			put16(d[1:], 400)
			put16(d[400:], 420)
			put16(d[402:], 8)
			put16(d[420:], 400)
			put16(d[422:], 8)
		}, "free", "free space corruption"},
		{"freeblock points to itself", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) {
			put16(d[5:], 400)
			put16(d[1:], 400)
			put16(d[400:], 400)
			put16(d[402:], 8)
		}, "free", "free space corruption"},
		{"fragment count beyond the page", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) { d[7] = 255 }, "free", "free space"},
		{"freeblocks plus fragments beyond the page", 2, leaf, PageTableLeaf, func(d []byte, _ uint32) {
			put16(d[5:], 400)
			put16(d[1:], 400)
			put16(d[402:], 90) // 400..489, below the cells at 502
			d[7] = 200
		}, "free", "free space"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.base(tc.pgno)
			// The unmodified base page passes the step under test.
			if err := runStep(d, tc.pgno, u, tc.step); err != nil {
				t.Fatalf("base page fails %s: %v", tc.step, err)
			}
			tc.mod(d, tc.pgno)
			err := runStep(d, tc.pgno, u, tc.step)
			wantCorrupt(t, err, tc.pgno)
			if !strings.Contains(err.Error(), tc.inMsg) {
				t.Errorf("error %q does not mention %q", err, tc.inMsg)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("page %d", tc.pgno)) {
				t.Errorf("error %q does not name page %d", err, tc.pgno)
			}
		})
	}

	// A page shorter than the usable size.
	_, err := ParsePage(leaf(2)[:u-1], 2, u)
	wantCorrupt(t, err, 2)
	_, err = ParsePage(make([]byte, 107), 1, 107)
	wantCorrupt(t, err, 1)
	// Interior page 1 whose 12-byte header does not fit.
	d := make([]byte, 110)
	d[100] = byte(PageTableInterior)
	_, err = ParsePage(d, 1, 110)
	wantCorrupt(t, err, 1)
}

// runStep parses d and runs one accessor on cell 0 (or the free space).
func runStep(d []byte, pgno uint32, usable int, step string) error {
	p, err := ParsePage(d, pgno, usable)
	if err != nil || step == "parse" {
		return err
	}
	switch step {
	case "cell":
		_, err = p.Cell(0)
		if err == nil {
			_, err = p.Cell(1)
		}
	case "rowid":
		_, err = p.TableLeafRowid(0)
	case "key":
		_, err = p.TableInteriorKey(0)
	case "child":
		_, err = p.Child(0)
	case "free":
		_, err = p.FreeSpace()
	default:
		panic(step)
	}
	return err
}

func TestCellAtBadOffsets(t *testing.T) {
	d := buildPage(2, 512, 512, PageTableLeaf, 0, tableLeafCell(1, 3, []byte{1, 2, 3}, 0))
	p := mustParse(t, d, 2, 512)
	for _, off := range []int{-1, 509, 511, 512, 513, 1 << 20} {
		_, err := p.CellAt(off)
		wantCorrupt(t, err, 2)
	}
	if c, err := p.CellAt(508); err != nil || c.Rowid != 1 {
		t.Errorf("CellAt(508) = %+v, %v", c, err)
	}
}
