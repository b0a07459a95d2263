package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// fuzzWantCorrupt fails unless err wraps ErrCorrupt through a
// *CorruptError naming page pgno.
func fuzzWantCorrupt(t *testing.T, err error, pgno uint32) {
	t.Helper()
	var ce *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Page != pgno {
		t.Fatalf("error %v (%T): want a *CorruptError for page %d", err, err, pgno)
	}
}

func FuzzUvarint(f *testing.F) {
	for _, tc := range varintTable {
		f.Add(unhex(f, tc.hex))
	}
	f.Add([]byte{})
	f.Add([]byte{0x80, 0x01})
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, n := Uvarint(data)
		// ShortVarint agrees with Uvarint on varints of up to three bytes
		// that have three bytes to read, and declines all others.
		if sv, ok := ShortVarint(data, 0); ok != (n >= 1 && n <= 3 && len(data) >= 3) || (ok && sv != v) {
			t.Fatalf("ShortVarint(% x) = %d, %v; Uvarint %d, %d", data, sv, ok, v, n)
		}
		if n == 0 {
			// Only a buffer that ends before the varint does.
			if v != 0 || len(data) >= MaxVarintLen {
				t.Fatalf("Uvarint(% x) = %d, 0", data, v)
			}
			for _, c := range data {
				if c < 0x80 {
					t.Fatalf("Uvarint(% x): n == 0 despite a final byte", data)
				}
			}
			return
		}
		if n < 1 || n > MaxVarintLen || n > len(data) {
			t.Fatalf("Uvarint(% x) read %d bytes", data, n)
		}
		for i := 0; i < min(n-1, 8); i++ {
			if data[i] < 0x80 {
				t.Fatalf("Uvarint(% x) = %d bytes but byte %d ends the varint", data, n, i)
			}
		}
		if n < MaxVarintLen && data[n-1] >= 0x80 {
			t.Fatalf("Uvarint(% x) stopped at a continuation byte", data)
		}
		enc := AppendUvarint(nil, v)
		if len(enc) != VarintLen(v) || len(enc) > n {
			t.Fatalf("AppendUvarint(%d) = % x (VarintLen %d), input form had %d bytes", v, enc, VarintLen(v), n)
		}
		checkVarintShape(t, enc)
		if v2, n2 := Uvarint(enc); v2 != v || n2 != len(enc) {
			t.Fatalf("Uvarint(AppendUvarint(%d)) = %d, %d", v, v2, n2)
		}
		var buf [MaxVarintLen]byte
		if k := PutUvarint(buf[:], v); !bytes.Equal(buf[:k], enc) {
			t.Fatalf("PutUvarint(%d) = % x, AppendUvarint % x", v, buf[:k], enc)
		}
		// Without a leading zero group the input was already the shortest form.
		if data[0] != 0x80 && !bytes.Equal(enc, data[:n]) {
			t.Fatalf("shortest form of % x is % x", data[:n], enc)
		}
	})
}

func FuzzValidateHeader(f *testing.F) {
	f.Add(sqliteHeader(f))
	for _, ps := range []int{512, 4096, 65536} {
		h := make([]byte, HeaderSize)
		InitHeader(h, ps)
		f.Add(h)
	}
	bad := sqliteHeader(f)
	bad[19] = 3
	f.Add(bad)
	bad = sqliteHeader(f)
	bad[59] = 2
	f.Add(bad)
	f.Add([]byte("SQLite format 3\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := ValidateHeader(data)
		if err != nil {
			corrupt, unsupported := errors.Is(err, ErrCorrupt), errors.Is(err, ErrUnsupported)
			if corrupt == unsupported {
				t.Fatalf("ValidateHeader error %q: corrupt %v, unsupported %v", err, corrupt, unsupported)
			}
			if corrupt {
				fuzzWantCorrupt(t, err, 1)
			}
			return
		}
		h := Header(data)
		switch {
		case len(data) < HeaderSize, string(data[:16]) != Magic:
			t.Fatalf("accepted a header without magic")
		case !ValidPageSize(h.PageSize()):
			t.Fatalf("accepted page size %d", h.PageSize())
		case h.UsableSize() < MinUsableSize:
			t.Fatalf("accepted usable size %d", h.UsableSize())
		case h.ReadVersion() > 2:
			t.Fatalf("accepted read version %d", h.ReadVersion())
		case data[21] != 64 || data[22] != 32 || data[23] != 32:
			t.Fatalf("accepted fractions % x", data[21:24])
		case h.TextEncoding() > TextEncodingUTF16BE:
			t.Fatalf("accepted text encoding %d", h.TextEncoding())
		case h.SchemaFormat() > 4:
			t.Fatalf("accepted schema format %d", h.SchemaFormat())
		}
		if lb := LockBytePage(h.PageSize()); int64(lb-1)*int64(h.PageSize()) > 1<<30 {
			t.Fatalf("LockBytePage(%d) = %d", h.PageSize(), lb)
		}
	})
}

var fuzzUsable = []int{480, 512, 1000, 4096}

func FuzzParsePage(f *testing.F) {
	// Seeds: one valid page of each type, page 1 with its header, and the
	// worked examples.
	recA := AppendRecord(nil, []Value{TextValue([]byte("alpha")), IntValue(1)})
	big := pattern(700, 3)
	for _, u := range []int{512, 1000} {
		f.Add(buildPage(2, u, u, PageTableLeaf, 0, tableLeafCell(1, len(recA), recA, 0),
			tableLeafCell(-1, len(big), big[:LocalSize(int64(len(big)), u, true)], 9)), false, uint8(1), false, uint16(0))
		f.Add(buildPage(1, u, u, PageTableInterior, 7, tableInteriorCell(3, 10), tableInteriorCell(4, 1<<60)), true, uint8(1), false, uint16(112))
		f.Add(buildPage(2, u, u, PageIndexLeaf, 0, indexLeafCell(len(recA), recA, 0),
			indexLeafCell(len(big), big[:LocalSize(int64(len(big)), u, false)], 9)), false, uint8(1), true, uint16(300))
		f.Add(buildPage(2, u, u, PageIndexInterior, 8, indexInteriorCell(5, len(recA), recA, 0)), false, uint8(2), false, uint16(508))
	}
	withFree := buildPage(2, 512, 512, PageTableLeaf, 0, tableLeafCell(1, 3, []byte{1, 2, 3}, 0))
	binary.BigEndian.PutUint16(withFree[5:], 400)
	binary.BigEndian.PutUint16(withFree[1:], 400)
	binary.BigEndian.PutUint16(withFree[400:], 420)
	binary.BigEndian.PutUint16(withFree[402:], 8)
	binary.BigEndian.PutUint16(withFree[422:], 8)
	withFree[7] = 2
	f.Add(withFree, false, uint8(1), false, uint16(400))
	empty := make([]byte, 4096)
	copy(empty, []byte{0x0d, 0, 0, 0, 0, 0x10, 0, 0})
	f.Add(empty, false, uint8(3), false, uint16(0))

	f.Fuzz(func(t *testing.T, data []byte, page1 bool, usableSel uint8, pad bool, off uint16) {
		usable := fuzzUsable[int(usableSel)%len(fuzzUsable)]
		if pad && len(data) < usable {
			data = append(data, make([]byte, usable-len(data))...)
		}
		pgno := uint32(2)
		if page1 {
			pgno = 1
		}
		p, err := ParsePage(data, pgno, usable)
		if err != nil {
			fuzzWantCorrupt(t, err, pgno)
			return
		}
		if p.CellPointerEnd() > usable || p.Hdr != HeaderOffset(pgno) || !p.Type.Valid() {
			t.Fatalf("ParsePage accepted pointer array end %d > %d", p.CellPointerEnd(), usable)
		}
		for i := 0; i < p.NCells; i++ {
			cellOff, offErr := p.CellOffset(i)
			c, err := p.Cell(i)
			if offErr != nil {
				fuzzWantCorrupt(t, offErr, pgno)
				if err == nil {
					t.Fatalf("Cell(%d) succeeded with a bad offset", i)
				}
			}
			if err != nil {
				fuzzWantCorrupt(t, err, pgno)
			} else {
				checkFuzzCell(t, &p, cellOff, c)
				if c2, err := p.CellAt(cellOff); err != nil || c2.Size != c.Size || c2.Rowid != c.Rowid {
					t.Fatalf("CellAt(%d) = %+v, %v; Cell(%d) = %+v", cellOff, c2, err, i, c)
				}
			}
			switch p.Type {
			case PageTableLeaf:
				r, rerr := p.TableLeafRowid(i)
				if rerr != nil {
					fuzzWantCorrupt(t, rerr, pgno)
				}
				if err == nil && (rerr != nil || r != c.Rowid) {
					t.Fatalf("TableLeafRowid(%d) = %d, %v; Cell rowid %d", i, r, rerr, c.Rowid)
				}
			case PageTableInterior:
				k, kerr := p.TableInteriorKey(i)
				if kerr != nil {
					fuzzWantCorrupt(t, kerr, pgno)
				}
				if err == nil && (kerr != nil || k != c.Rowid) {
					t.Fatalf("TableInteriorKey(%d) = %d, %v; Cell rowid %d", i, k, kerr, c.Rowid)
				}
			}
			if !p.Type.IsLeaf() {
				ch, cherr := p.Child(i)
				if cherr != nil {
					fuzzWantCorrupt(t, cherr, pgno)
				}
				if err == nil && (cherr != nil || ch != c.Child) {
					t.Fatalf("Child(%d) = %d, %v; Cell child %d", i, ch, cherr, c.Child)
				}
				if p.Type == PageIndexInterior {
					local, ovfl, lerr := p.IndexInteriorPayload(i)
					switch {
					case lerr != nil:
						fuzzWantCorrupt(t, lerr, pgno)
					case !ovfl && (err != nil || c.Overflow != 0 || !bytes.Equal(local, c.Local)):
						t.Fatalf("IndexInteriorPayload(%d) = % x; Cell = %+v, %v", i, local, c, err)
					case ovfl && err == nil && c.Overflow == 0:
						t.Fatalf("IndexInteriorPayload(%d) reports overflow, Cell has none: %+v", i, c)
					}
				}
			} else {
				rowid, local, ovfl, lerr := p.LeafEntry(i)
				if lerr != nil {
					fuzzWantCorrupt(t, lerr, pgno)
				} else if !ovfl {
					// A whole local payload: Cell must agree exactly.
					if err != nil || c.Overflow != 0 || !bytes.Equal(local, c.Local) || (p.Type == PageTableLeaf && rowid != c.Rowid) {
						t.Fatalf("LeafEntry(%d) = %d, % x, %v; Cell = %+v, %v", i, rowid, local, ovfl, c, err)
					}
				} else if err == nil && c.Overflow == 0 {
					t.Fatalf("LeafEntry(%d) reports overflow, Cell has none: %+v", i, c)
				}
			}
		}
		checkTableLeafCells(t, &p)
		if !p.Type.IsLeaf() {
			if ch, err := p.Child(p.NCells); err != nil || ch != p.RightChild() {
				t.Fatalf("Child(NCells) = %d, %v; RightChild %d", ch, err, p.RightChild())
			}
		}
		if free, err := p.FreeSpace(); err != nil {
			fuzzWantCorrupt(t, err, pgno)
		} else if free < 0 || free > usable-p.CellPointerEnd() {
			t.Fatalf("FreeSpace = %d, outside 0..%d", free, usable-p.CellPointerEnd())
		}
		// CellAt at any offset, even a nonsensical one, only errs.
		for _, o := range []int{int(off), int(off) - 1000, usable - 1, usable} {
			if c, err := p.CellAt(o); err != nil {
				fuzzWantCorrupt(t, err, pgno)
			} else {
				checkFuzzCell(t, &p, o, c)
			}
		}
	})
}

// checkFuzzCell checks what a successfully parsed cell promises: it lies in
// the usable area, owns at least 4 bytes, and its local payload is the
// size the format says.
func checkFuzzCell(t *testing.T, p *Page, off int, c Cell) {
	t.Helper()
	if off < 0 || c.Size < MinCellSize || off+c.Size > p.Usable {
		t.Fatalf("cell at %d of size %d outside the usable area %d", off, c.Size, p.Usable)
	}
	if p.Type == PageTableInterior {
		return
	}
	if c.PayloadLen < 0 || c.PayloadLen > MaxPayload {
		t.Fatalf("cell at %d: payload length %d", off, c.PayloadLen)
	}
	if want := LocalSize(c.PayloadLen, p.Usable, p.Type == PageTableLeaf); len(c.Local) != want {
		t.Fatalf("cell at %d: %d local bytes, want %d of %d", off, len(c.Local), want, c.PayloadLen)
	}
	if (c.Overflow != 0) != (int64(len(c.Local)) < c.PayloadLen) {
		t.Fatalf("cell at %d: overflow page %d with %d of %d bytes local", off, c.Overflow, len(c.Local), c.PayloadLen)
	}
	// Local starts right after the cell's header varints.
	pos := off
	if p.Type == PageIndexInterior {
		pos += 4
	}
	_, n := Uvarint(p.Data[pos:p.Usable])
	pos += n
	if p.Type == PageTableLeaf {
		_, m := Uvarint(p.Data[pos:p.Usable])
		pos += m
	}
	if len(c.Local) > 0 && &c.Local[0] != &p.Data[pos] {
		t.Fatalf("cell at %d: Local does not start at offset %d", off, pos)
	}
	if pos+len(c.Local) > off+c.Size {
		t.Fatalf("cell at %d: Local runs past the cell's %d bytes", off, c.Size)
	}
}

func fuzzRecordSeeds() [][]byte {
	seeds := [][]byte{
		{0x06, 0x00, 0x15, 0x01, 0x07, 0x0e, 'r', 'o', 'w', '1', 0x07, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0x21},
		{0x02, 0x08}, {0x02, 0x09}, {0x02, 0x01, 0x02}, {0x01}, {}, {0x02, 0x0a},
		{0x02, 0x07, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0},
		// The reserved types, which rows read as NULL: between fields, in
		// a two-byte varint, and before a field past the header's end.
		{0x04, 0x01, 0x0b, 0x0f, 0x05, 'a'}, {0x04, 0x80, 0x0a, 0x01, 0x09}, {0x03, 0x0a, 0x0c, 0x00},
		append([]byte{11}, append(AppendUvarint(nil, 1<<63+12), 1, 7)...),
		// Body sizes near 2^63: offset + size overflows int64.
		append([]byte{10}, AppendUvarint(nil, math.MaxUint64-1)...),
		append(append([]byte{19}, AppendUvarint(nil, 1<<63+1<<62+10)...), AppendUvarint(nil, 1<<63+1<<62+10)...),
	}
	bv := boundaryValues()
	seeds = append(seeds, AppendRecord(nil, bv[:20]), AppendRecord(nil, bv[20:40]), AppendRecord(nil, bv[40:]))
	return seeds
}

func FuzzRecord(f *testing.F) {
	for _, s := range fuzzRecordSeeds() {
		f.Add(s)
	}
	f.Add(rec(BlobValue([]byte("key")), BlobValue(make([]byte, 300))))
	f.Add(rec(txt("k"), BlobValue(nil)))
	f.Fuzz(func(t *testing.T, data []byte) {
		var vals []Value
		var decodeErr error
		r, err := NewRecordReader(data)
		if err != nil {
			decodeErr = err
		} else {
			for {
				v, ok, err := r.Next()
				if err != nil {
					decodeErr = err
					break
				}
				if !ok {
					break
				}
				vals = append(vals, v)
			}
		}
		// Every entry point agrees on validity and never panics.
		fields, checkErr := CheckRecord(data)
		if (checkErr == nil) != (decodeErr == nil) {
			t.Fatalf("CheckRecord = %d, %v; RecordReader error %v", fields, checkErr, decodeErr)
		}
		// CheckRecord's fast path answers exactly as its general path does.
		if f2, err2 := checkRecordAny(data, false); f2 != fields || fmt.Sprint(err2) != fmt.Sprint(checkErr) {
			t.Fatalf("CheckRecord(% x) = %d, %v; checkRecordAny = %d, %v", data, fields, checkErr, f2, err2)
		}
		// CheckRow, likewise, passes what CheckRecord passes, and besides
		// only records that CheckRecord refuses for a reserved type.
		rowFields, rowErr := CheckRow(data)
		if f2, err2 := checkRecordAny(data, true); f2 != rowFields || fmt.Sprint(err2) != fmt.Sprint(rowErr) {
			t.Fatalf("CheckRow(% x) = %d, %v; checkRecordAny = %d, %v", data, rowFields, rowErr, f2, err2)
		}
		reserved := checkErr != nil && strings.Contains(checkErr.Error(), "reserved serial type")
		switch {
		case checkErr == nil && (rowErr != nil || rowFields != fields):
			t.Fatalf("CheckRecord(% x) = %d fields; CheckRow = %d, %v", data, fields, rowFields, rowErr)
		case checkErr != nil && rowErr == nil && !reserved:
			t.Fatalf("CheckRow(% x) passes what CheckRecord refuses: %v", data, checkErr)
		}
		// RecordFits passes nothing that CheckRecord refuses.
		if RecordFits(data) && checkErr != nil {
			t.Fatalf("RecordFits(% x) = true; CheckRecord: %v", data, checkErr)
		}
		count, countErr := RecordFieldCount(data)
		// BytesPair accepts only what the general path reads as a BLOB
		// and a TEXT or BLOB field, and returns their bytes.
		if a, b, ok := BytesPair(data); ok {
			if checkErr != nil || fields != 2 || vals[0].Kind != KindBlob || vals[1].Kind < KindText ||
				!bytes.Equal(a, vals[0].Bytes) || !bytes.Equal(b, vals[1].Bytes) {
				t.Fatalf("BytesPair(% x) = % x, % x; general path %d fields %v, %v", data, a, b, fields, vals, checkErr)
			}
		}
		// FieldAt's fast path answers exactly as its general path does.
		// RowFieldAt's too; it reads a field as FieldAt does wherever
		// FieldAt reads one, and a reserved type as NULL.
		for i := 0; i < max(len(vals), rowFields)+3 && i < 100; i++ {
			t1, b1, s1 := FieldAt(data, i)
			t2, b2, s2 := fieldAt(data, i, false)
			if t1 != t2 || s1 != s2 || !bytes.Equal(b1, b2) || len(b1) != len(b2) || (len(b1) > 0 && &b1[0] != &b2[0]) {
				t.Fatalf("field %d: FieldAt = %d, % x, %v; fieldAt = %d, % x, %v", i, t1, b1, s1, t2, b2, s2)
			}
			t3, b3, s3 := RowFieldAt(data, i)
			t4, b4, s4 := fieldAt(data, i, true)
			if t3 != t4 || s3 != s4 || !bytes.Equal(b3, b4) || len(b3) != len(b4) || (len(b3) > 0 && &b3[0] != &b4[0]) {
				t.Fatalf("field %d: RowFieldAt = %d, % x, %v; fieldAt = %d, % x, %v", i, t3, b3, s3, t4, b4, s4)
			}
			if s1 == FieldOK && (t3 != t1 || s3 != FieldOK || len(b3) != len(b1) || (len(b1) > 0 && &b3[0] != &b1[0])) {
				t.Fatalf("field %d: FieldAt = %d, % x; RowFieldAt = %d, % x, %v", i, t1, b1, t3, b3, s3)
			}
			if s3 == FieldOK && t3 >= 10 && t3 <= 11 {
				t.Fatalf("field %d: RowFieldAt returned the reserved type %d", i, t3)
			}
			if rowErr == nil && i < rowFields && s3 != FieldOK {
				t.Fatalf("field %d of a row CheckRow passes (%d fields): %v", i, rowFields, s3)
			}
		}
		for i := 0; i < len(vals)+2 && i < 100; i++ {
			v, ok, err := RecordField(data, i)
			fv, fok := Field(data, i)
			if decodeErr != nil {
				if err != nil {
					fuzzWantCorrupt(t, err, 0)
				}
				continue
			}
			if i < len(vals) {
				if !ok || err != nil || !sameValue(v, vals[i]) || !fok || !sameValue(fv, vals[i]) {
					t.Fatalf("field %d: RecordField %v %v %v, Field %v %v; Next gave %v", i, v, ok, err, fv, fok, vals[i])
				}
			} else if ok || err != nil || fok {
				t.Fatalf("field %d past the end: %v %v %v / %v", i, v, ok, err, fok)
			}
		}
		if decodeErr != nil {
			fuzzWantCorrupt(t, decodeErr, 0)
			fuzzWantCorrupt(t, checkErr, 0)
			if _, err := CompareRecords(data, data, nil); err == nil {
				t.Fatalf("CompareRecords accepted a corrupt record")
			}
			return
		}
		if fields != len(vals) || count != len(vals) || countErr != nil {
			t.Fatalf("%d fields decoded, CheckRecord says %d, RecordFieldCount %d, %v", len(vals), fields, count, countErr)
		}
		for i, v := range vals {
			if v.Kind == KindFloat && math.IsNaN(v.Float()) {
				t.Fatalf("field %d decoded as NaN, want NULL", i)
			}
		}
		// Re-encoding gives the shortest record, which decodes to the same
		// values and re-encodes to itself.
		enc := AppendRecord(nil, vals)
		if len(enc) != RecordSize(vals) || len(enc) > len(data) {
			t.Fatalf("AppendRecord: %d bytes, RecordSize %d, input %d", len(enc), RecordSize(vals), len(data))
		}
		r2, err := NewRecordReader(enc)
		if err != nil {
			t.Fatalf("re-encoded record: %v", err)
		}
		var again []Value
		for {
			v, ok, err := r2.Next()
			if err != nil {
				t.Fatalf("re-encoded record: %v", err)
			}
			if !ok {
				break
			}
			again = append(again, v)
		}
		if len(again) != len(vals) {
			t.Fatalf("re-encoded record has %d fields, want %d", len(again), len(vals))
		}
		for i := range vals {
			if !sameValue(again[i], vals[i]) {
				t.Fatalf("field %d: %v re-decodes as %v", i, vals[i], again[i])
			}
		}
		if enc2 := AppendRecord(nil, again); !bytes.Equal(enc2, enc) {
			t.Fatalf("re-encoding is not stable: % x then % x", enc, enc2)
		}
		if c, err := CompareRecords(data, enc, nil); c != 0 || err != nil {
			t.Fatalf("CompareRecords(input, re-encoded) = %d, %v", c, err)
		}
		if c, err := CompareKey(data, vals, nil); c != 0 || err != nil {
			t.Fatalf("CompareKey(input, its values) = %d, %v", c, err)
		}
	})
}

func FuzzCompareRecords(f *testing.F) {
	seeds := fuzzRecordSeeds()
	for i := range seeds {
		f.Add(seeds[i], seeds[(i+1)%len(seeds)], seeds[(i+2)%len(seeds)], uint8(i), uint8(i*7))
	}
	f.Add(rec(IntValue(1), txt("a")), rec(FloatValue(1), txt("A")), rec(IntValue(1), txt("a "), NullValue()), uint8(0b100101), uint8(2))
	f.Add(rec(txt("a\x00b")), rec(txt("A\x00c")), rec(txt("a\x00")), uint8(1), uint8(0))
	// BLOB keys compare as bytes under every collation (CompareKey's fast path).
	f.Add(rec(BlobValue([]byte("k1")), IntValue(2)), rec(BlobValue([]byte("k2")), IntValue(1)), rec(BlobValue([]byte("k")), txt("k1")), uint8(0b010110), uint8(1))
	f.Add(rec(BlobValue([]byte("k1")), IntValue(2)), rec(BlobValue([]byte("k1")), IntValue(3)), rec(BlobValue([]byte("k1\x00"))), uint8(0b000001), uint8(0))
	f.Fuzz(func(t *testing.T, a, b, c []byte, colls, desc uint8) {
		k := &KeyInfo{}
		for i := 0; i < 3; i++ {
			k.Colls = append(k.Colls, Collation((colls>>(2*i))&3%3))
			k.Desc = append(k.Desc, desc>>i&1 == 1)
		}
		ab, errAB := CompareRecords(a, b, k)
		ba, errBA := CompareRecords(b, a, k)
		if (errAB == nil) != (errBA == nil) {
			t.Fatalf("errors not symmetric: %v / %v", errAB, errBA)
		}
		if errAB != nil {
			fuzzWantCorrupt(t, errAB, 0)
			fuzzWantCorrupt(t, errBA, 0)
			return
		}
		if ab != -ba || ab < -1 || ab > 1 {
			t.Fatalf("CompareRecords = %d, reversed %d", ab, ba)
		}
		// a may still be corrupt past the field that decided against b.
		if aa, err := CompareRecords(a, a, k); err != nil {
			fuzzWantCorrupt(t, err, 0)
		} else if aa != 0 {
			t.Fatalf("CompareRecords(a, a) = %d", aa)
		}
		// The unpacked-key comparison agrees when b decodes fully.
		if vb, ok := decodeAll(b); ok {
			if got, err := CompareKey(a, vb, k); got != ab || err != nil {
				t.Fatalf("CompareKey(a, b's values) = %d, %v; CompareRecords %d", got, err, ab)
			}
		}
		// Transitivity, for records of equal length (a prefix compares
		// equal to both a smaller and a larger extension).
		va, okA := decodeAll(a)
		vb, okB := decodeAll(b)
		vc, okC := decodeAll(c)
		if !okA || !okB || !okC || len(va) != len(vb) || len(vb) != len(vc) {
			return
		}
		bc, err1 := CompareRecords(b, c, k)
		ac, err2 := CompareRecords(a, c, k)
		if err1 != nil || err2 != nil {
			t.Fatalf("valid records: %v / %v", err1, err2)
		}
		if ab <= 0 && bc <= 0 && ac > 0 || ab >= 0 && bc >= 0 && ac < 0 || ab == 0 && bc == 0 && ac != 0 {
			t.Fatalf("not transitive: a?b %d, b?c %d, a?c %d", ab, bc, ac)
		}
	})
}

func decodeAll(rec []byte) ([]Value, bool) {
	r, err := NewRecordReader(rec)
	if err != nil {
		return nil, false
	}
	var vals []Value
	for {
		v, ok, err := r.Next()
		if err != nil {
			return nil, false
		}
		if !ok {
			return vals, true
		}
		vals = append(vals, v)
	}
}
