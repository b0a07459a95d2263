package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// checkLayout verifies a page's space accounting as sqlite3's
// integrity_check does: cells and freeblocks inside the content area, no
// byte used twice, freeblocks ascending, at least 4 bytes, at least 4 bytes
// apart, and header byte 7 equal to the bytes covered by neither (and at
// most 60).
func checkLayout(p *Page) error {
	u := p.Usable
	cs := p.ContentStart()
	if cs < p.CellPointerEnd() || cs > u {
		return fmt.Errorf("content start %d outside %d..%d", cs, p.CellPointerEnd(), u)
	}
	used := make([]bool, u)
	mark := func(from, to int) error {
		if from < cs || to > u || from >= to {
			return fmt.Errorf("region %d..%d outside the content area %d..%d", from, to, cs, u)
		}
		for i := from; i < to; i++ {
			if used[i] {
				return fmt.Errorf("multiple uses for byte %d", i)
			}
			used[i] = true
		}
		return nil
	}
	for i := 0; i < p.NCells; i++ {
		off, err := p.CellOffset(i)
		if err != nil {
			return err
		}
		c, err := p.CellAt(off)
		if err != nil {
			return err
		}
		if err := mark(off, off+c.Size); err != nil {
			return fmt.Errorf("cell %d: %v", i, err)
		}
	}
	prevEnd := -1
	for fb := p.FirstFreeblock(); fb != 0; {
		if fb+4 > u {
			return fmt.Errorf("freeblock at %d off the page", fb)
		}
		next := int(binary.BigEndian.Uint16(p.Data[fb:]))
		size := int(binary.BigEndian.Uint16(p.Data[fb+2:]))
		if size < 4 || (prevEnd >= 0 && fb < prevEnd+4) || (next != 0 && next <= fb) {
			return fmt.Errorf("freeblock at %d (size %d, next %d, previous ends %d)", fb, size, next, prevEnd)
		}
		if err := mark(fb, fb+size); err != nil {
			return fmt.Errorf("freeblock: %v", err)
		}
		prevEnd = fb + size
		fb = next
	}
	frag := 0
	for i := cs; i < u; i++ {
		if !used[i] {
			frag++
		}
	}
	if frag != p.FragmentedBytes() || frag > 60 {
		return fmt.Errorf("fragmentation of %d bytes reported as %d", frag, p.FragmentedBytes())
	}
	_, err := p.FreeSpace()
	return err
}

// testCell encodes a cell of page type t whose encoding is about n bytes.
func testCell(t PageType, key int64, n int, usable int) []byte {
	b := make([]byte, n+32)
	switch t {
	case PageTableLeaf:
		p := bytes.Repeat([]byte{byte(key)}, max(n-3, 0))
		return b[:PutTableLeafCell(b, key, int64(len(p)), p, 0)]
	case PageTableInterior:
		return b[:PutTableInteriorCell(b, uint32(key+2), key)]
	case PageIndexLeaf:
		p := bytes.Repeat([]byte{byte(key)}, min(max(n-2, 0), MaxLocal(usable, false)))
		return b[:PutIndexLeafCell(b, int64(len(p)), p, 0)]
	}
	p := bytes.Repeat([]byte{byte(key)}, min(max(n-6, 0), MaxLocal(usable, false)))
	return b[:PutIndexInteriorCell(b, uint32(key+2), int64(len(p)), p, 0)]
}

func TestPageEditsAgainstModel(t *testing.T) {
	for _, usable := range []int{512, 4096, 65536} {
		for _, pgno := range []uint32{1, 2} {
			for _, typ := range []PageType{PageTableLeaf, PageTableInterior, PageIndexLeaf, PageIndexInterior} {
				t.Run(fmt.Sprintf("%d/%d/%s", usable, pgno, typ), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(usable), uint64(typ)))
					data := make([]byte, usable)
					scratch := make([]byte, usable)
					pg, err := BuildPage(data, pgno, usable, typ, nil, 7)
					if err != nil {
						t.Fatal(err)
					}
					var model [][]byte
					maxCell := max(usable/8, 8)
					for op := 0; op < 3000; op++ {
						switch x := r.IntN(10); {
						case x < 6:
							c := testCell(typ, int64(op), r.IntN(maxCell), usable)
							i := r.IntN(len(model) + 1)
							free, err := pg.FreeSpace()
							if err != nil {
								t.Fatal(err)
							}
							ok, err := pg.InsertCell(i, c, scratch)
							if err != nil {
								t.Fatal(err)
							}
							if ok != (free >= CellSpace(len(c))+2) {
								t.Fatalf("op %d: insert of %d bytes with %d free: ok %v", op, len(c), free, ok)
							}
							if ok {
								model = append(model[:i], append([][]byte{c}, model[i:]...)...)
							}
						case x < 9 && len(model) > 0:
							i := r.IntN(len(model))
							if err := pg.DropCell(i); err != nil {
								t.Fatal(err)
							}
							model = append(model[:i], model[i+1:]...)
						case x == 9:
							if err := pg.Defragment(scratch); err != nil {
								t.Fatal(err)
							}
							if pg.FirstFreeblock() != 0 || pg.FragmentedBytes() != 0 {
								t.Fatal("defragmented page keeps free blocks")
							}
						}
						if err := checkLayout(&pg); err != nil {
							t.Fatalf("op %d: %v", op, err)
						}
						if pg.NCells != len(model) {
							t.Fatalf("op %d: %d cells, model %d", op, pg.NCells, len(model))
						}
						for i, c := range model {
							got, err := pg.CellBytes(i)
							if err != nil || !bytes.Equal(got, c) {
								t.Fatalf("op %d: cell %d differs (%v)", op, i, err)
							}
						}
						// The view and a fresh parse agree.
						again, err := ParsePage(data, pgno, usable)
						if err != nil || again.NCells != pg.NCells {
							t.Fatalf("op %d: reparse: %v", op, err)
						}
					}
					if pgno == 1 && !bytes.Equal(data[:HeaderSize], make([]byte, HeaderSize)) {
						t.Fatal("edits touched the database header")
					}
				})
			}
		}
	}
}

func TestBuildPageCompact(t *testing.T) {
	data := make([]byte, 512)
	cells := [][]byte{{0, 1}, {1, 2, 'a'}, testCell(PageTableLeaf, 3, 40, 512)}
	pg, err := BuildPage(data, 2, 512, PageTableLeaf, cells, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkLayout(&pg); err != nil {
		t.Fatal(err)
	}
	free, _ := pg.FreeSpace()
	// Two short cells own 4 bytes each.
	if want := 512 - 8 - 6 - 4 - 4 - len(cells[2]); free != want {
		t.Fatalf("free %d, want %d", free, want)
	}
	big := make([][]byte, 200)
	for i := range big {
		big[i] = []byte{0, byte(i), 0, 0}
	}
	if _, err := BuildPage(data, 2, 512, PageTableLeaf, big, 0); err == nil {
		t.Fatal("BuildPage accepted cells that do not fit")
	}
	// A 65536-byte page stores an empty content area's start as 0.
	big64 := make([]byte, 65536)
	pg, err = BuildPage(big64, 2, 65536, PageIndexLeaf, nil, 0)
	if err != nil || pg.ContentStart() != 65536 || binary.BigEndian.Uint16(big64[5:]) != 0 {
		t.Fatalf("empty 64 KiB page: %v, content start %d", err, pg.ContentStart())
	}
}

func TestCellEncoders(t *testing.T) {
	for _, usable := range []int{512, 4096, 65536} {
		for _, n := range []int64{0, 1, 100, int64(MaxLocal(usable, true)), int64(MaxLocal(usable, true)) + 1, int64(MaxLocal(usable, false)) + 1, 5 * int64(usable)} {
			for _, rowid := range []int64{0, 127, 128, -1, 1 << 56} {
				cellLen, local := TableLeafCellLen(rowid, n, usable)
				b := make([]byte, cellLen+8)
				payload := bytes.Repeat([]byte{0x5a}, int(n))
				if got := PutTableLeafCell(b, rowid, n, payload[:local], 77); got != cellLen {
					t.Fatalf("table leaf cell: wrote %d, len %d", got, cellLen)
				}
				if l := LocalSize(n, usable, true); l != local {
					t.Fatalf("local %d, want %d", local, l)
				}
			}
			for _, interior := range []bool{false, true} {
				cellLen, local := IndexCellLen(n, usable, interior)
				b := make([]byte, cellLen)
				payload := bytes.Repeat([]byte{0x5a}, int(n))
				var got int
				if interior {
					got = PutIndexInteriorCell(b, 9, n, payload[:local], 77)
				} else {
					got = PutIndexLeafCell(b, n, payload[:local], 77)
				}
				if got != cellLen {
					t.Fatalf("index cell: wrote %d, len %d", got, cellLen)
				}
			}
		}
	}
}

// Cells parse back as the page reads them.
func TestCellEncodersRoundTrip(t *testing.T) {
	const usable = 4096
	data := make([]byte, usable)
	scratch := make([]byte, usable)
	for _, typ := range []PageType{PageTableLeaf, PageIndexLeaf, PageIndexInterior} {
		for k, n := range []int64{0, 3, 1000, 1002, 1003, 4061, 4062, 20000} {
			pg, _ := BuildPage(data, 2, usable, typ, nil, 3)
			rowid := int64(k) * 1000
			var cellLen, local int
			if typ == PageTableLeaf {
				cellLen, local = TableLeafCellLen(rowid, n, usable)
			} else {
				cellLen, local = IndexCellLen(n, usable, typ == PageIndexInterior)
			}
			off, ok, err := pg.AllocCell(0, cellLen, scratch)
			if err != nil || !ok {
				t.Fatalf("%s: alloc %d: %v %v", typ, cellLen, ok, err)
			}
			payload := bytes.Repeat([]byte{byte(k)}, int(n))
			switch typ {
			case PageTableLeaf:
				PutTableLeafCell(data[off:], rowid, n, payload[:local], 99)
			case PageIndexLeaf:
				PutIndexLeafCell(data[off:], n, payload[:local], 99)
			default:
				PutIndexInteriorCell(data[off:], 55, n, payload[:local], 99)
			}
			c, err := pg.Cell(0)
			if err != nil {
				t.Fatal(err)
			}
			if c.PayloadLen != n || len(c.Local) != local || (int64(local) < n) != (c.Overflow == 99) || c.Size != CellSpace(cellLen) {
				t.Fatalf("%s n=%d: parsed %+v", typ, n, c)
			}
			if typ == PageTableLeaf && c.Rowid != rowid || typ == PageIndexInterior && c.Child != 55 {
				t.Fatalf("%s: key fields %+v", typ, c)
			}
			if b, _ := pg.CellBytes(0); len(b) != cellLen {
				t.Fatalf("CellBytes %d, want %d", len(b), cellLen)
			}
			if err := checkLayout(&pg); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// FuzzPageEdits edits arbitrary page images: the edits must never panic,
// and on a page whose layout is sound they must keep it sound.
func FuzzPageEdits(f *testing.F) {
	data := make([]byte, 512)
	pg, _ := BuildPage(data, 2, 512, PageTableLeaf, [][]byte{testCell(PageTableLeaf, 1, 20, 512), testCell(PageTableLeaf, 2, 30, 512)}, 0)
	_ = pg.DropCell(0)
	f.Add(append([]byte(nil), data...), []byte{0, 1, 2, 3})
	f.Add(make([]byte, 512), []byte{1, 1, 1})
	f.Fuzz(func(t *testing.T, img, ops []byte) {
		if len(img) < 512 {
			img = append(img, make([]byte, 512-len(img))...)
		}
		img = img[:512]
		pg, err := ParsePage(img, 2, 512)
		var into Page
		if err2 := into.Load(img, 2, 512); (err == nil) != (err2 == nil) || err == nil && (&into.Data[0] != &pg.Data[0] || into.Pgno != pg.Pgno || into.Type != pg.Type || into.Hdr != pg.Hdr ||
			into.NCells != pg.NCells || into.Usable != pg.Usable || into.cellPtrs != pg.cellPtrs || into.maxLocal != pg.maxLocal) {
			t.Fatalf("Load differs from ParsePage: %v / %v", err, err2)
		}
		if err != nil {
			return
		}
		sound := checkLayout(&pg) == nil
		scratch := make([]byte, 512)
		for k, op := range ops {
			var err error
			switch op % 4 {
			case 0, 1:
				c := testCell(pg.Type, int64(k), int(op)/4, 512)
				_, err = pg.InsertCell(int(op)%(pg.NCells+1), c, scratch)
			case 2:
				if pg.NCells > 0 {
					err = pg.DropCell(int(op) % pg.NCells)
				}
			case 3:
				err = pg.Defragment(scratch)
			}
			if err != nil {
				if sound {
					t.Fatalf("op %d on a sound page: %v", k, err)
				}
				return
			}
			if sound {
				if err := checkLayout(&pg); err != nil {
					t.Fatalf("op %d broke the page: %v", k, err)
				}
			}
		}
	})
}

func TestPageEditsDoNotAllocate(t *testing.T) {
	data := make([]byte, 4096)
	scratch := make([]byte, 4096)
	cell := testCell(PageTableLeaf, 5, 40, 4096)
	pg, _ := BuildPage(data, 2, 4096, PageTableLeaf, nil, 0)
	allocs := testing.AllocsPerRun(100, func() {
		for i := 0; i < 20; i++ {
			if ok, err := pg.InsertCell(i/2, cell, scratch); !ok || err != nil {
				t.Fatal(ok, err)
			}
		}
		for pg.NCells > 0 {
			if err := pg.DropCell(pg.NCells / 3); err != nil {
				t.Fatal(err)
			}
		}
		var p Page
		if err := p.Load(data, 2, 4096); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations", allocs)
	}
}

func TestCompareRecordPrefix(t *testing.T) {
	rec := func(vals ...Value) []byte { return AppendRecord(nil, vals) }
	a := rec(IntValue(1), TextValue([]byte("b")), IntValue(9))
	b := rec(IntValue(1), TextValue([]byte("B")), IntValue(3))
	nocase := &KeyInfo{Colls: []Collation{CollBinary, CollNoCase}}
	for _, tc := range []struct {
		a, b []byte
		k    *KeyInfo
		n    int
		want int
	}{
		{a, b, nil, 1, 0},                 // first field only
		{a, b, nil, 2, 1},                 // 'b' > 'B'
		{a, b, nocase, 2, 0},              // equal under NOCASE
		{a, b, nocase, 0, 1},              // all fields: 9 > 3
		{a, b, nocase, 5, 1},              // n beyond the fields
		{a, rec(IntValue(1)), nil, 2, 0},  // a prefix record is equal
		{rec(IntValue(0)), a, nil, 0, -1}, // 0 < 1
		{a, b, &KeyInfo{Desc: []bool{false, true}}, 2, -1},
	} {
		got, err := CompareRecordPrefix(tc.a, tc.b, tc.k, tc.n)
		if err != nil || got != tc.want {
			t.Errorf("CompareRecordPrefix(n=%d) = %d, %v; want %d", tc.n, got, err, tc.want)
		}
		if tc.n <= 0 {
			if want, _ := CompareRecords(tc.a, tc.b, tc.k); got != want {
				t.Errorf("n=0 differs from CompareRecords")
			}
		}
	}
	if _, err := CompareRecordPrefix([]byte{0x05}, a, nil, 1); err == nil {
		t.Error("malformed record accepted")
	}
}
