package sqlitediff

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// dbFile is a database file SQLite wrote, read back as raw bytes.
type dbFile struct {
	t      *testing.T
	data   []byte
	ps, u  int
	nPages uint32
	// What the walks met, so the test proves it exercised each path.
	kinds         map[format.PageType]int
	overflowPages int
}

func (f *dbFile) page(n uint32) []byte {
	if n < 1 || n > f.nPages {
		f.t.Fatalf("page number %d outside 1..%d", n, f.nPages)
	}
	return f.data[int(n-1)*f.ps : int(n)*f.ps]
}

func (f *dbFile) parse(n uint32) format.Page {
	p, err := format.ParsePage(f.page(n), n, f.u)
	if err != nil {
		f.t.Fatalf("ParsePage(%d): %v", n, err)
	}
	if _, err := p.FreeSpace(); err != nil {
		f.t.Errorf("FreeSpace(page %d): %v", n, err)
	}
	f.kinds[p.Type]++
	return p
}

// payload reassembles a cell's payload from its local part and its
// overflow chain, checking the chain length.
func (f *dbFile) payload(c format.Cell, tableLeaf bool) []byte {
	out := append([]byte{}, c.Local...)
	if want := format.LocalSize(c.PayloadLen, f.u, tableLeaf); len(c.Local) != want {
		f.t.Errorf("local size %d, LocalSize says %d", len(c.Local), want)
	}
	pages := int64(0)
	for next := c.Overflow; next != 0; pages++ {
		pg := f.page(next)
		next = binary.BigEndian.Uint32(pg)
		take := min(int64(f.u-format.OverflowPageHeaderSize), c.PayloadLen-int64(len(out)))
		out = append(out, pg[4:4+take]...)
		if pages > 1<<20 {
			f.t.Fatal("overflow chain loops")
		}
	}
	f.overflowPages += int(pages)
	if int64(len(out)) != c.PayloadLen {
		f.t.Errorf("payload reassembled to %d bytes, cell says %d", len(out), c.PayloadLen)
	}
	if want := format.OverflowPages(c.PayloadLen, f.u, tableLeaf); pages != want {
		f.t.Errorf("payload %d: %d overflow pages, OverflowPages says %d", c.PayloadLen, pages, want)
	}
	return out
}

// walkTable visits a table b-tree in order and returns rowids and records.
// It checks the separator keys against the rowids below them.
func (f *dbFile) walkTable(root uint32, visit func(rowid int64, rec []byte)) (lo, hi int64, n int) {
	p := f.parse(root)
	if !p.Type.IsTable() {
		f.t.Fatalf("page %d is a %v page in a table b-tree", root, p.Type)
	}
	lo, hi = math.MaxInt64, math.MinInt64
	if p.Type == format.PageTableLeaf {
		for i := 0; i < p.NCells; i++ {
			c, err := p.Cell(i)
			if err != nil {
				f.t.Fatalf("page %d cell %d: %v", root, i, err)
			}
			if r, err := p.TableLeafRowid(i); r != c.Rowid || err != nil {
				f.t.Errorf("TableLeafRowid(%d) = %d, %v; Cell says %d", i, r, err, c.Rowid)
			}
			visit(c.Rowid, f.payload(c, true))
			lo, hi = min(lo, c.Rowid), max(hi, c.Rowid)
		}
		return lo, hi, p.NCells
	}
	prevKey := int64(math.MinInt64)
	for i := 0; i <= p.NCells; i++ {
		child, err := p.Child(i)
		if err != nil {
			f.t.Fatalf("page %d child %d: %v", root, i, err)
		}
		clo, chi, cn := f.walkTable(child, visit)
		n += cn
		lo, hi = min(lo, clo), max(hi, chi)
		if i > 0 && cn > 0 && clo <= prevKey {
			f.t.Errorf("page %d: rowid %d right of separator %d", root, clo, prevKey)
		}
		if i < p.NCells {
			key, err := p.TableInteriorKey(i)
			if err != nil {
				f.t.Fatal(err)
			}
			if c, _ := p.Cell(i); c.Rowid != key || c.Child != child {
				f.t.Errorf("page %d cell %d: Cell %+v, key %d child %d", root, i, c, key, child)
			}
			if cn > 0 && chi > key {
				f.t.Errorf("page %d: rowid %d left of separator %d", root, chi, key)
			}
			prevKey = key
		}
	}
	return lo, hi, n
}

// walkIndex returns the records of an index b-tree in order: child 0,
// cell 0, child 1, ..., right-most child.
func (f *dbFile) walkIndex(root uint32, out [][]byte) [][]byte {
	p := f.parse(root)
	if p.Type.IsTable() {
		f.t.Fatalf("page %d is a %v page in an index b-tree", root, p.Type)
	}
	for i := 0; i < p.NCells; i++ {
		if p.Type == format.PageIndexInterior {
			child, err := p.Child(i)
			if err != nil {
				f.t.Fatal(err)
			}
			out = f.walkIndex(child, out)
		}
		c, err := p.Cell(i)
		if err != nil {
			f.t.Fatalf("page %d cell %d: %v", root, i, err)
		}
		out = append(out, f.payload(c, false))
	}
	if p.Type == format.PageIndexInterior {
		out = f.walkIndex(p.RightChild(), out)
	}
	return out
}

func decodeAll(t *testing.T, rec []byte) []format.Value {
	t.Helper()
	r, err := format.NewRecordReader(rec)
	if err != nil {
		t.Fatalf("record % x: %v", rec, err)
	}
	var vals []format.Value
	for {
		v, ok, err := r.Next()
		if err != nil {
			t.Fatalf("record % x: %v", rec, err)
		}
		if !ok {
			return vals
		}
		vals = append(vals, v)
	}
}

func sameValue(a, b format.Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case format.KindInt:
		return a.Int() == b.Int()
	case format.KindFloat:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	case format.KindText, format.KindBlob:
		return bytes.Equal(a.Bytes, b.Bytes)
	}
	return true
}

// TestSQLiteWrittenFile lets SQLite write a database, then reads the raw
// file with package format: header, schema, table and index b-trees,
// overflow chains. Records must match AppendRecord byte for byte and index
// entries must be in CompareRecords order.
func TestSQLiteWrittenFile(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) { testWrittenFile(t, ps) })
	}
}

func testWrittenFile(t *testing.T, pageSize int) {
	path := filepath.Join(t.TempDir(), "test.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	mustExec(t, db, fmt.Sprintf("PRAGMA page_size=%d", pageSize))
	mustExec(t, db, "PRAGMA journal_mode=DELETE")
	mustExec(t, db, "CREATE TABLE t(a)")
	mustExec(t, db, "CREATE TABLE m(a, b, c, d, e)")
	mustExec(t, db, "CREATE INDEX i_bin ON t(a)")
	mustExec(t, db, "CREATE INDEX i_nocase_desc ON t(a COLLATE NOCASE DESC)")
	mustExec(t, db, "CREATE INDEX i_rtrim ON t(a COLLATE RTRIM)")
	mustExec(t, db, "CREATE INDEX i_m ON m(c DESC, a)")

	// Row values: the ordering list plus payloads around the overflow
	// limits of this page size (table and index).
	vals := valueList()
	u := pageSize
	for _, n := range []int{
		format.MaxLocal(u, false) - 4, format.MaxLocal(u, false) + 3, format.MaxLocal(u, true) - 6, format.MaxLocal(u, true),
		format.MaxLocal(u, true) + 1, format.MinLocal(u) + (u - 4), 3 * u, 20004,
	} {
		vals = append(vals, format.BlobValue(bytes.Repeat([]byte{byte(n)}, n)), txt(strings.Repeat("x", n)))
	}
	// Rowids from the varint table first, then increasing ones.
	special := []int64{-1, 0, 127, 128, 16383, 16384, 1<<56 - 1, 1 << 56, math.MaxInt64, math.MinInt64}
	rowidOf := func(i int) int64 {
		if i < len(special) {
			return special[i]
		}
		return int64(1000 + i)
	}
	byRowid := map[int64]format.Value{}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		if _, err := tx.Exec("INSERT INTO t(rowid, a) VALUES(?, ?)", rowidOf(i), arg(v)); err != nil {
			t.Fatal(err)
		}
		byRowid[rowidOf(i)] = v
	}
	mrows := map[int64][]format.Value{}
	for i := 0; i < len(vals); i += 3 {
		row := []format.Value{vals[i], format.IntValue(int64(i % 3)), vals[(i*7)%len(vals)], format.IntValue(int64(i)), vals[(i+1)%len(vals)]}
		args := []any{int64(i + 1)}
		for _, v := range row {
			args = append(args, arg(v))
		}
		if _, err := tx.Exec("INSERT INTO m(rowid, a, b, c, d, e) VALUES(?, ?, ?, ?, ?, ?)", args...); err != nil {
			t.Fatal(err)
		}
		mrows[int64(i+1)] = row
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	roots := map[string]uint32{}
	rows, err := db.Query("SELECT name, rootpage FROM sqlite_schema")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var root uint32
		if err := rows.Scan(&name, &root); err != nil {
			t.Fatal(err)
		}
		roots[name] = root
	}
	rows.Close()
	var version string
	if err := db.QueryRow("SELECT sqlite_version()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The header.
	if err := format.ValidateHeader(data); err != nil {
		t.Fatalf("ValidateHeader: %v", err)
	}
	h := format.Header(data)
	if h.PageSize() != pageSize || h.UsableSize() != pageSize || h.SchemaFormat() != 4 || h.TextEncoding() != format.TextEncodingUTF8 {
		t.Errorf("header: page size %d usable %d schema format %d encoding %d", h.PageSize(), h.UsableSize(), h.SchemaFormat(), h.TextEncoding())
	}
	if !h.SizeIsValid() || int(h.DatabaseSize())*pageSize != len(data) {
		t.Errorf("header size %d pages (valid %v), file %d bytes", h.DatabaseSize(), h.SizeIsValid(), len(data))
	}
	if h.WriteVersion() != format.FileFormatLegacy || h.ReadVersion() != format.FileFormatLegacy {
		t.Errorf("file format %d/%d in rollback mode", h.WriteVersion(), h.ReadVersion())
	}
	if h.SchemaCookie() != 6 {
		t.Errorf("schema cookie %d after 6 DDL statements", h.SchemaCookie())
	}
	parts := strings.Split(version, ".")
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(parts[1])
	patch, _ := strconv.Atoi(parts[2])
	if want := uint32(major*1000000 + minor*1000 + patch); h.SQLiteVersion() != want {
		t.Errorf("SQLiteVersion = %d, want %d (%s)", h.SQLiteVersion(), want, version)
	}
	f := &dbFile{t: t, data: data, ps: pageSize, u: h.UsableSize(), nPages: h.DatabaseSize(), kinds: map[format.PageType]int{}}
	defer func() {
		t.Logf("pages walked: %v; overflow pages: %d", f.kinds, f.overflowPages)
		for _, k := range []format.PageType{format.PageTableLeaf, format.PageTableInterior, format.PageIndexLeaf, format.PageIndexInterior} {
			if f.kinds[k] == 0 {
				t.Errorf("the file has no %v page: the test did not exercise it", k)
			}
		}
		if f.overflowPages == 0 {
			t.Errorf("no overflow pages walked")
		}
	}()

	// The schema table on page 1: its rows name the roots SQLite reported.
	schemaRoots := map[string]uint32{}
	f.walkTable(1, func(rowid int64, rec []byte) {
		v := decodeAll(t, rec)
		if len(v) != 5 || v[0].Kind != format.KindText || v[3].Kind != format.KindInt {
			t.Fatalf("schema row %d: %v", rowid, v)
		}
		schemaRoots[string(v[1].Bytes)] = uint32(v[3].Int())
		if got := format.AppendRecord(nil, v); !bytes.Equal(got, rec) {
			t.Errorf("schema row %d: AppendRecord % x, SQLite % x", rowid, got, rec)
		}
	})
	for name, root := range roots {
		if schemaRoots[name] != root {
			t.Errorf("schema on page 1 says %s is at %d, SQLite says %d", name, schemaRoots[name], root)
		}
	}

	// Table t: one record per row, equal to AppendRecord of the value.
	seen := 0
	f.walkTable(roots["t"], func(rowid int64, rec []byte) {
		v, ok := byRowid[rowid]
		if !ok {
			t.Fatalf("unexpected rowid %d", rowid)
		}
		seen++
		if want := format.AppendRecord(nil, []format.Value{v}); !bytes.Equal(rec, want) {
			t.Errorf("rowid %d %s: SQLite record % .40x, AppendRecord % .40x", rowid, show(v), rec, want)
		}
	})
	if seen != len(vals) {
		t.Errorf("table t: %d rows, want %d", seen, len(vals))
	}
	seen = 0
	f.walkTable(roots["m"], func(rowid int64, rec []byte) {
		seen++
		if want := format.AppendRecord(nil, mrows[rowid]); !bytes.Equal(rec, want) {
			t.Errorf("m rowid %d: SQLite record % .60x, AppendRecord % .60x", rowid, rec, want)
		}
	})
	if seen != len(mrows) {
		t.Errorf("table m: %d rows, want %d", seen, len(mrows))
	}

	// Indexes: entries (value, rowid) strictly increasing under the
	// index's collation and order.
	for _, ix := range []struct {
		name string
		k    *format.KeyInfo
		cols int
	}{
		{"i_bin", nil, 2},
		{"i_nocase_desc", &format.KeyInfo{Colls: []format.Collation{format.CollNoCase}, Desc: []bool{true}}, 2},
		{"i_rtrim", &format.KeyInfo{Colls: []format.Collation{format.CollRTrim}}, 2},
		{"i_m", &format.KeyInfo{Desc: []bool{true}}, 3},
	} {
		recs := f.walkIndex(roots[ix.name], nil)
		want := len(vals)
		if ix.name == "i_m" {
			want = len(mrows)
		}
		if len(recs) != want {
			t.Errorf("%s: %d entries, want %d", ix.name, len(recs), want)
		}
		for i, r := range recs {
			v := decodeAll(t, r)
			if len(v) != ix.cols || v[ix.cols-1].Kind != format.KindInt {
				t.Fatalf("%s entry %d: %v", ix.name, i, v)
			}
			rowid := v[ix.cols-1].Int()
			if ix.name != "i_m" && !sameValue(v[0], storedForm(byRowid[rowid])) {
				t.Errorf("%s entry %d: %s for rowid %d, table has %s", ix.name, i, show(v[0]), rowid, show(byRowid[rowid]))
			}
			if i == 0 {
				continue
			}
			c, err := format.CompareRecords(recs[i-1], r, ix.k)
			if err != nil || c != -1 {
				t.Errorf("%s entries %d, %d: CompareRecords = %d, %v; want -1\n  %v\n  %v", ix.name, i-1, i, c, err,
					showAll(decodeAll(t, recs[i-1])), showAll(v))
			}
		}
	}
}

// storedForm is what SQLite stores for v: a NaN becomes NULL.
func storedForm(v format.Value) format.Value {
	if v.Kind == format.KindFloat && math.IsNaN(v.Float()) {
		return format.NullValue()
	}
	return v
}

func showAll(vs []format.Value) string {
	var s []string
	for _, v := range vs {
		s = append(s, show(v))
	}
	return "(" + strings.Join(s, ", ") + ")"
}
