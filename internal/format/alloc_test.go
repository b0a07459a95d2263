package format

import (
	"math"
	"testing"
)

// Sinks keep the compiler from discarding the work measured below.
var (
	sinkU64   uint64
	sinkInt   int
	sinkI64   int64
	sinkValue Value
	sinkCell  Cell
	sinkBytes []byte
)

// allocFixture is a 4096-byte table leaf holding small rows and one
// overflowing row, an interior page, and two index records sharing a
// prefix.
type allocFixture struct {
	leaf, interior Page
	leafOffs       []int
	rec, recA      []byte
	recB           []byte
	key            *KeyInfo
	varints        [][]byte
}

func newAllocFixture(tb testing.TB) *allocFixture {
	var fx allocFixture
	var cells [][]byte
	for i := 0; i < 20; i++ {
		r := AppendRecord(nil, []Value{IntValue(int64(i) << 20), TextValue(pattern(10+i, 'a')), FloatValue(float64(i) / 3), NullValue()})
		cells = append(cells, tableLeafCell(int64(i)*1000, len(r), r, 0))
	}
	big := pattern(9000, 1)
	cells = append(cells, tableLeafCell(99, len(big), big[:LocalSize(int64(len(big)), 4096, true)], 12))
	leaf := buildPage(2, 4096, 4096, PageTableLeaf, 0, cells...)
	var err error
	if fx.leaf, err = ParsePage(leaf, 2, 4096); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < fx.leaf.NCells; i++ {
		off, err := fx.leaf.CellOffset(i)
		if err != nil {
			tb.Fatal(err)
		}
		fx.leafOffs = append(fx.leafOffs, off)
	}
	var icells [][]byte
	for i := 0; i < 50; i++ {
		icells = append(icells, tableInteriorCell(uint32(i+3), int64(i)<<30))
	}
	if fx.interior, err = ParsePage(buildPage(1, 4096, 4096, PageTableInterior, 77, icells...), 1, 4096); err != nil {
		tb.Fatal(err)
	}
	fx.rec = AppendRecord(nil, []Value{IntValue(1), TextValue([]byte("name")), IntValue(1 << 40), FloatValue(2.5),
		BlobValue(pattern(30, 0)), TextValue([]byte("the field we want")), NullValue(), IntValue(-1)})
	fx.recA = AppendRecord(nil, []Value{TextValue([]byte("Customer 0042")), IntValue(7), FloatValue(1.5), IntValue(123456)})
	fx.recB = AppendRecord(nil, []Value{TextValue([]byte("customer 0042")), IntValue(7), IntValue(1), IntValue(123457)})
	fx.key = &KeyInfo{Colls: []Collation{CollNoCase, CollBinary, CollBinary}, Desc: []bool{false, false, true}}
	for _, tc := range varintTable {
		fx.varints = append(fx.varints, unhex(tb, tc.hex))
	}
	return &fx
}

// TestHotPathsDoNotAllocate: the read path runs per cell and per key
// comparison; it must not allocate.
func TestHotPathsDoNotAllocate(t *testing.T) {
	fx := newAllocFixture(t)
	var buf [64]byte
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"Uvarint", func() {
			for _, b := range fx.varints {
				v, n := Uvarint(b)
				sinkU64 += v + uint64(n)
			}
		}},
		{"PutUvarint", func() { sinkInt += PutUvarint(buf[:], math.MaxUint64) + PutUvarint(buf[:], 300) }},
		{"ParsePage", func() {
			p, _ := ParsePage(fx.leaf.Data, 2, 4096)
			sinkInt += p.NCells
		}},
		{"Page accessors", func() {
			p := &fx.leaf
			sinkInt += p.ContentStart() + p.FirstFreeblock() + p.FragmentedBytes() + p.CellPointerEnd()
			off, _ := p.CellOffset(3)
			free, _ := p.FreeSpace()
			sinkInt += off + free
			r, _ := p.TableLeafRowid(5)
			k, _ := fx.interior.TableInteriorKey(7)
			c, _ := fx.interior.Child(7)
			rc, _ := fx.interior.Child(fx.interior.NCells)
			sinkI64 += r + k + int64(c) + int64(rc) + int64(fx.interior.RightChild())
		}},
		{"CellAt", func() {
			for _, off := range fx.leafOffs {
				sinkCell, _ = fx.leaf.CellAt(off)
			}
		}},
		{"Cell", func() { sinkCell, _ = fx.leaf.Cell(fx.leaf.NCells - 1) }},
		{"LeafEntry", func() {
			r, local, _, _ := fx.leaf.LeafEntry(4)
			sinkI64 += r
			sinkBytes = local
		}},
		{"TableLeafCells", func() {
			var out [8]TableCell
			n := fx.leaf.TableLeafCells(0, out[:])
			sinkInt += n
			sinkBytes = out[0].Payload
		}},
		{"FieldAt", func() {
			_, body, _ := FieldAt(fx.rec, 5)
			sinkBytes = body
		}},
		{"RecordReader.Next", func() {
			r, _ := NewRecordReader(fx.rec)
			for {
				v, ok, err := r.Next()
				if !ok || err != nil {
					break
				}
				sinkValue = v
			}
		}},
		{"RecordField", func() { sinkValue, _, _ = RecordField(fx.rec, 5) }},
		{"RecordFieldCount", func() { sinkInt, _ = RecordFieldCount(fx.rec) }},
		{"Field", func() { sinkValue, _ = Field(fx.rec, 5) }},
		{"CheckRecord", func() { sinkInt, _ = CheckRecord(fx.rec) }},
		{"CompareRecords", func() { sinkInt, _ = CompareRecords(fx.recA, fx.recB, fx.key) }},
		{"CompareKey", func() {
			sinkInt, _ = CompareKey(fx.recA, []Value{TextValue([]byte("customer 0042")), IntValue(7)}, fx.key)
		}},
		{"CompareValues", func() {
			sinkInt = CompareValues(IntValue(9007199254740993), FloatValue(9007199254740992), CollBinary) +
				CompareValues(TextValue([]byte("abc  ")), TextValue([]byte("ABC")), CollRTrim)
		}},
		{"AppendRecord into capacity", func() {
			sinkBytes = AppendRecord(buf[:0], []Value{IntValue(1 << 40), FloatValue(1.5), NullValue()})
		}},
	} {
		if n := testing.AllocsPerRun(100, tc.fn); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", tc.name, n)
		}
	}
}

func BenchmarkUvarint(b *testing.B) {
	fx := newAllocFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, v := range fx.varints {
			x, n := Uvarint(v)
			sinkU64 += x + uint64(n)
		}
	}
}

func BenchmarkCellAt(b *testing.B) {
	fx := newAllocFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, off := range fx.leafOffs {
			sinkCell, _ = fx.leaf.CellAt(off)
		}
	}
}

func BenchmarkRecordField(b *testing.B) {
	fx := newAllocFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		sinkValue, _, _ = RecordField(fx.rec, 5)
	}
}

func BenchmarkCompareRecords(b *testing.B) {
	fx := newAllocFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		sinkInt, _ = CompareRecords(fx.recA, fx.recB, fx.key)
	}
}

func BenchmarkAppendRecord(b *testing.B) {
	vals := []Value{IntValue(1), TextValue([]byte("name")), IntValue(1 << 40), FloatValue(2.5), NullValue()}
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		sinkBytes = AppendRecord(buf[:0], vals)
	}
}
