package format_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/pagodadb/pagoda/internal/format"
)

func ExampleUvarint() {
	v, n := format.Uvarint([]byte{0x81, 0x00, 0xff})
	fmt.Println(v, n)
	v, n = format.Uvarint([]byte{0x81}) // ends inside the varint
	fmt.Println(v, n)
	// Output:
	// 128 2
	// 0 0
}

func ExampleAppendUvarint() {
	for _, v := range []uint64{127, 128, 1 << 56, math.MaxUint64} {
		fmt.Printf("% x\n", format.AppendUvarint(nil, v))
	}
	// Output:
	// 7f
	// 81 00
	// 80 c0 80 80 80 80 80 80 00
	// ff ff ff ff ff ff ff ff ff
}

func ExampleValidateHeader() {
	h := make(format.Header, format.HeaderSize)
	format.InitHeader(h, 4096)
	fmt.Println(format.ValidateHeader(h), h.PageSize(), h.UsableSize())

	rv := h[19]
	h[19] = 3 // a read version from the future
	err := format.ValidateHeader(h)
	fmt.Println(errors.Is(err, format.ErrUnsupported))
	h[19] = rv

	h[21] = 65 // max payload fraction must be 64
	err = format.ValidateHeader(h)
	fmt.Println(err)
	fmt.Println(errors.Is(err, format.ErrCorrupt))
	// Output:
	// <nil> 4096 4096
	// true
	// database is corrupt: page 1 offset 21: payload fractions 65/32/32, want 64/32/32
	// true
}

func ExampleLocalSize() {
	const u = 4096
	for _, n := range []int64{4061, 5003, 20004} {
		fmt.Println(n, format.LocalSize(n, u, true), format.OverflowPages(n, u, true))
	}
	// Index b-trees keep less on the page.
	fmt.Println(1005, format.LocalSize(1005, u, false), format.OverflowPages(1005, u, false))
	// Output:
	// 4061 4061 0
	// 5003 911 1
	// 20004 3636 4
	// 1005 489 1
}

func ExampleParsePage() {
	// A 512-byte table leaf (page 2) holding one cell at the end of the
	// page: payload 20 bytes, rowid 1, record (NULL,'row1',7,1.5,x'21').
	page := make([]byte, 512)
	cell := []byte{0x14, 0x01, 0x06, 0x00, 0x15, 0x01, 0x07, 0x0e, 'r', 'o', 'w', '1', 0x07,
		0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0x21}
	off := len(page) - len(cell)
	copy(page[off:], cell)
	page[0] = byte(format.PageTableLeaf)
	binary.BigEndian.PutUint16(page[3:], 1)           // one cell
	binary.BigEndian.PutUint16(page[5:], uint16(off)) // content start
	binary.BigEndian.PutUint16(page[8:], uint16(off)) // cell pointer 0

	p, err := format.ParsePage(page, 2, 512)
	if err != nil {
		panic(err)
	}
	c, err := p.Cell(0)
	if err != nil {
		panic(err)
	}
	free, _ := p.FreeSpace()
	fmt.Println(p.Type, p.NCells, "cell(s),", free, "bytes free")
	fmt.Println("rowid", c.Rowid, "payload", c.PayloadLen, "overflow page", c.Overflow)
	v, _, _ := format.RecordField(c.Local, 1)
	fmt.Printf("%s\n", v.Bytes)
	// Output:
	// table leaf 1 cell(s), 480 bytes free
	// rowid 1 payload 20 overflow page 0
	// row1
}

func ExampleAppendRecord() {
	for _, v := range []int64{0, 1, 2} {
		fmt.Printf("% x\n", format.AppendRecord(nil, []format.Value{format.IntValue(v)}))
	}
	rec := format.AppendRecord(nil, []format.Value{
		format.NullValue(), format.TextValue([]byte("row1")), format.IntValue(7),
		format.FloatValue(1.5), format.BlobValue([]byte{0x21}),
	})
	fmt.Printf("% x\n", rec)
	fmt.Printf("% x\n", format.AppendRecord(nil, []format.Value{format.FloatValue(math.NaN())}))
	// Output:
	// 02 08
	// 02 09
	// 02 01 02
	// 06 00 15 01 07 0e 72 6f 77 31 07 3f f8 00 00 00 00 00 00 21
	// 02 00
}

func ExampleNewRecordReader() {
	rec := format.AppendRecord(nil, []format.Value{
		format.IntValue(-5), format.FloatValue(0.25), format.TextValue([]byte("hi")), format.NullValue(),
	})
	r, err := format.NewRecordReader(rec)
	if err != nil {
		panic(err)
	}
	for {
		v, ok, err := r.Next()
		if err != nil {
			panic(err)
		}
		if !ok {
			break
		}
		switch v.Kind {
		case format.KindInt:
			fmt.Println(v.Kind, v.Int())
		case format.KindFloat:
			fmt.Println(v.Kind, v.Float())
		case format.KindText, format.KindBlob:
			fmt.Println(v.Kind, string(v.Bytes))
		default:
			fmt.Println(v.Kind)
		}
	}
	// Output:
	// INTEGER -5
	// REAL 0.25
	// TEXT hi
	// NULL
}

func ExampleRecordField() {
	rec := format.AppendRecord(nil, []format.Value{format.IntValue(1), format.TextValue([]byte("b"))})
	n, _ := format.RecordFieldCount(rec)
	v, ok, err := format.RecordField(rec, 1)
	fmt.Println(n, string(v.Bytes), ok, err)
	// A row written before ALTER TABLE ADD COLUMN has fewer fields.
	_, ok, err = format.RecordField(rec, 2)
	fmt.Println(ok, err)
	// Output:
	// 2 b true <nil>
	// false <nil>
}

func ExampleCompareRecords() {
	a := format.AppendRecord(nil, []format.Value{format.TextValue([]byte("Smith")), format.IntValue(30)})
	b := format.AppendRecord(nil, []format.Value{format.TextValue([]byte("smith")), format.IntValue(40)})
	c, _ := format.CompareRecords(a, b, nil) // BINARY: 'S' < 's'
	fmt.Println(c)
	// Index (name COLLATE NOCASE, age DESC).
	k := &format.KeyInfo{Colls: []format.Collation{format.CollNoCase}, Desc: []bool{false, true}}
	c, _ = format.CompareRecords(a, b, k)
	fmt.Println(c)
	// A prefix compares equal: the caller decides what that means.
	prefix := format.AppendRecord(nil, []format.Value{format.TextValue([]byte("SMITH"))})
	c, _ = format.CompareRecords(prefix, b, k)
	fmt.Println(c)
	// Output:
	// -1
	// 1
	// 0
}

func ExampleCompareValues() {
	// Numbers compare by exact value, across INTEGER and REAL.
	fmt.Println(format.CompareValues(format.IntValue(9007199254740993), format.FloatValue(9007199254740992), format.CollBinary))
	// NULL < numbers < TEXT < BLOB.
	fmt.Println(format.CompareValues(format.TextValue([]byte("zzz")), format.BlobValue(nil), format.CollBinary))
	// Output:
	// 1
	// -1
}

func ExampleCompareText() {
	fmt.Println(format.CompareText([]byte("abc"), []byte("ABC"), format.CollNoCase))
	fmt.Println(format.CompareText([]byte("É"), []byte("é"), format.CollNoCase)) // ASCII only
	fmt.Println(format.CompareText([]byte("x  "), []byte("x"), format.CollRTrim))
	// Output:
	// 0
	// -1
	// 0
}
