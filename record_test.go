package pagoda

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// columnMeta describes six columns for the Column tests: column 0 the rowid
// alias, 1 to 4 stored fields 0 to 3 (REAL affinity where real says so),
// 5 a virtual generated column; field 3 has a default for old rows.
func columnMeta(real byte) *recordMeta {
	m := &recordMeta{
		owner: "table t",
		names: []string{"id", "a", "b", "c", "d", "v"},
		Layout: expr.Layout{
			Field:    []int{-1, 0, 1, 2, 3, -1},
			Alias:    0,
			Real:     make([]bool, 6),
			Defaults: []format.Value{{}, {}, {}, {}, format.IntValue(7), {}},
		},
	}
	for i := range m.Real {
		m.Real[i] = real&(1<<i) != 0
	}
	m.setFast()
	return m
}

// sameValue reports whether a and b are the same value, aliasing the same
// bytes.
func sameValue(a, b Value) bool {
	if a.Type() != b.Type() || len(a.b) != len(b.b) || cap(a.b) != cap(b.b) {
		return false
	}
	if len(a.b) > 0 && &a.b[0] != &b.b[0] {
		return false
	}
	return a.n == b.n
}

// FuzzColumn checks Column's fast path against its general path, column,
// on any bytes as a record: the same value (aliasing the same bytes) for
// every column, and never a panic.
func FuzzColumn(f *testing.F) {
	seeds := [][]byte{
		{4, 0, 0x81, 0x54}, // the bench's row: NULL (the rowid), a 100-byte BLOB, cut short
		{5, 1, 7, 13, 21, 9, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 'a', 'b', 'c', 'd'},
		{3, 1, 1, 42, 43},  // two integers, in REAL columns when real says so
		{2, 10, 0},         // a reserved serial type
		{0x80, 0x03, 1, 1}, // a header length in two bytes
		{3, 0x80, 0x0c, 0}, // a two-byte serial type of 12
		{200, 1},           // a header longer than the record
		{},
	}
	for i, s := range seeds {
		f.Add(s, byte(i*37))
	}
	f.Fuzz(func(t *testing.T, data []byte, real byte) {
		m := columnMeta(real)
		r := Record{data: pager.AsString(data), rowid: -3, ctx: &recordCtx{meta: m}}
		for i := -1; i <= len(m.Field); i++ {
			got, want := r.Column(i), r.column(i)
			if !sameValue(got, want) {
				t.Fatalf("record % x, real %08b: Column(%d) = %v %x %d; column = %v %x %d",
					data, real, i, got.Type(), got.b, got.n, want.Type(), want.b, want.n)
			}
		}
	})
}

// TestColumnFastPath checks Column on records of every serial type the fast
// path reads, against the general path and against what was stored.
func TestColumnFastPath(t *testing.T) {
	big := make([]byte, 8000)
	for i := range big {
		big[i] = byte(i)
	}
	tests := []struct {
		name string
		vals []format.Value
		real byte
		want []Value
	}{
		{"ints", []format.Value{format.IntValue(0), format.IntValue(1), format.IntValue(-300), format.IntValue(1 << 40)}, 0,
			[]Value{intValue(0), intValue(1), intValue(-300), intValue(1 << 40)}},
		{"ints in REAL columns", []format.Value{format.IntValue(2), format.FloatValue(2.5), format.NullValue(), format.IntValue(-1)}, 0xff,
			[]Value{floatValue(2), floatValue(2.5), {}, floatValue(-1)}},
		{"text and blobs", []format.Value{format.TextValue([]byte("héllo")), format.BlobValue(nil), format.BlobValue(big), format.TextValue(nil)}, 0xff,
			[]Value{bytesValue(TypeText, []byte("héllo")), bytesValue(TypeBlob, []byte{}), bytesValue(TypeBlob, big), bytesValue(TypeText, []byte{})}},
		{"old row", []format.Value{format.IntValue(5), format.NullValue(), format.FloatValue(-0.5)}, 0,
			[]Value{intValue(5), {}, floatValue(-0.5), intValue(7)}},
	}
	for _, tt := range tests {
		data := format.AppendRecord(nil, tt.vals)
		m := columnMeta(tt.real << 1)
		r := Record{data: pager.AsString(data), rowid: 99, ctx: &recordCtx{meta: m}}
		if got := r.Column(0); got.Int() != 99 || got.Type() != TypeInteger {
			t.Errorf("%s: the rowid alias reads %v %d", tt.name, got.Type(), got.Int())
		}
		for k, want := range tt.want {
			got := r.Column(k + 1)
			if !sameValue(got, r.column(k+1)) || got.Type() != want.Type() || got.n != want.n || string(got.Blob()) != string(want.Blob()) {
				t.Errorf("%s: column %d = %v %x %d, want %v %x %d", tt.name, k+1, got.Type(), got.b, got.n, want.Type(), want.b, want.n)
			}
		}
		if got := r.Column(5); got.Type() != TypeNull {
			t.Errorf("%s: the virtual column reads %v", tt.name, got.Type())
		}
	}
}

// TestRecordShapes reads rows whose headers repeat in runs, broken by rows
// of other headers, through Get and All, every column in a shuffled
// order, against SQLite: a row read through the shape of the rows before
// it (recordCtx.shape) reads as a row read by walking its header. The
// runs include what the shape must not read alone: integers in a REAL
// column (stored as integers, read as floats), rows written before an
// ALTER TABLE ADD COLUMN (fewer fields, a default for the rest), NULLs,
// and text and blobs of the same length but of the other class.
func TestRecordShapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shapes.db")
	db := sqltest.Open(t, path)
	sqltest.Run(t, db, "PRAGMA page_size=1024", "CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c REAL, d TEXT, e BLOB)")
	r := rand.New(rand.NewPCG(7, 11))
	fixed := bytes.Repeat([]byte{0xab}, 16)
	insert := func(id int, cols string, vals ...any) {
		q := "INSERT INTO t(a, " + cols + ") VALUES (?" + string(bytes.Repeat([]byte(", ?"), len(vals))) + ")"
		if _, err := db.Exec(q, append([]any{id}, vals...)...); err != nil {
			t.Fatal(err)
		}
	}
	id := 0
	for run := range 120 {
		kind := r.IntN(7)
		for range 1 + r.IntN(40) {
			id++
			switch kind {
			case 0, 1: // the common shape
				insert(id, "b, c, d, e", 1000+id%100, 2.5, "sixteen chars ok", fixed)
			case 2: // a REAL column holding a whole number: stored as 3
				insert(id, "b, c, d, e", 1000+id%100, 3.0, "sixteen chars ok", fixed)
			case 3: // text and blob swapped, same lengths
				insert(id, "b, c, d, e", 1000+id%100, 2.5, fixed, "sixteen chars ok")
			case 4: // NULLs
				insert(id, "b, d", nil, nil)
			case 5: // lengths that vary
				insert(id, "b, c, d, e", r.Int64(), r.Float64(), string(bytes.Repeat([]byte("x"), r.IntN(200))), fixed[:r.IntN(16)])
			case 6: // integers of other sizes
				insert(id, "b, c, d, e", int64(1)<<(8*(run%8)), 2.5, "sixteen chars ok", fixed)
			}
		}
		if run == 80 {
			sqltest.Run(t, db, "ALTER TABLE t ADD COLUMN f TEXT DEFAULT 'later'")
		}
	}
	want := map[int64]string{}
	var ids []int64
	for i, row := range sqlRows(t, db, "SELECT typeof(a), a, typeof(b), b, typeof(c), c, typeof(d), d, typeof(e), e, typeof(f), f FROM t ORDER BY a") {
		want[int64(i+1)] = row
		ids = append(ids, int64(i+1))
	}
	if len(ids) != id {
		t.Fatalf("SQLite has %d rows, want %d", len(ids), id)
	}
	db.Close()

	pdb, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	cols := []int{0, 1, 2, 3, 4, 5}
	render := func(rec Record) string {
		// Every column, in a shuffled order, rendered in declared order.
		got := make([]string, len(cols))
		r.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
		for _, c := range cols {
			got[c] = renderValue(rec.Column(c))
		}
		return strings.Join(got, "|")
	}
	err = pdb.View(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		// Get in rowid order, at random (past the leaf directory's
		// threshold), and in reverse; then a scan.
		orders := [][]int64{ids, append([]int64(nil), ids...), append([]int64(nil), ids...)}
		r.Shuffle(len(orders[1]), func(i, j int) { orders[1][i], orders[1][j] = orders[1][j], orders[1][i] })
		for i, j := 0, len(orders[2])-1; i < j; i, j = i+1, j-1 {
			orders[2][i], orders[2][j] = orders[2][j], orders[2][i]
		}
		for _, order := range orders {
			for _, rowid := range order {
				rec, err := tb.Get(rowid)
				if err != nil {
					t.Fatalf("Get(%d): %v", rowid, err)
				}
				if got := render(rec); got != want[rowid] {
					t.Fatalf("Get(%d):\n got %s\nwant %s", rowid, got, want[rowid])
				}
			}
		}
		n := 0
		for rowid, rec := range tb.All() {
			n++
			if got := render(rec); got != want[rowid] {
				t.Fatalf("All, row %d:\n got %s\nwant %s", rowid, got, want[rowid])
			}
		}
		if n != len(ids) {
			t.Fatalf("All: %d rows, want %d", n, len(ids))
		}
		return tx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	// A scan of its own, in a new transaction: the shape is learnt by
	// the scan (scanLeaves), not by Gets before it.
	err = pdb.View(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for rowid, rec := range tb.All() {
			if got := render(rec); got != want[rowid] {
				t.Fatalf("All alone, row %d:\n got %s\nwant %s", rowid, got, want[rowid])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRecordShapeShortRow damages one row of a table of rows of one
// header: its cell's payload size one byte short, the header untouched.
// Read after the shape of its neighbours is learnt, Get still refuses it
// and a scan reading its last column still reports it.
func TestRecordShapeShortRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "short.db")
	db := sqltest.Open(t, path)
	sqltest.Run(t, db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)")
	const rows, damaged = 3000, 1234
	blob := func(id int) []byte { return fmt.Appendf(nil, "row-%05d-%s", id, strings.Repeat("v", 30)) } // 40 bytes
	for id := 1; id <= rows; id++ {
		if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", id, blob(id)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// cell: payload size (43) | rowid (2 bytes) | header 03 00 5c | blob
	at := bytes.Index(data, blob(damaged))
	if at < 6 || !bytes.Equal(data[at-6:at], []byte{43, 0x80 | damaged>>7, damaged & 0x7f, 3, 0, 92}) {
		t.Fatalf("row %d's cell is not where the test expects it", damaged)
	}
	data[at-6] = 42
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}

	pdb, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	err = pdb.View(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		for id := int64(1); id <= rows; id++ {
			if id == damaged {
				continue
			}
			rec, err := tb.Get(id)
			if err != nil || !bytes.Equal(rec.Column(1).Blob(), blob(int(id))) {
				t.Fatalf("Get(%d) = %q, %v", id, rec.Column(1).Blob(), err)
			}
		}
		if _, err := tb.Get(damaged); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Get of the row cut short: %v, want ErrCorrupt", err)
		}
		for range tb.All() {
		}
		if err := tx.Err(); err != nil {
			t.Fatalf("a scan reading no column: %v", err)
		}
		for id, rec := range tb.All() {
			if v := rec.Column(1).Blob(); id != damaged && !bytes.Equal(v, blob(int(id))) {
				t.Fatalf("All, row %d: %q", id, v)
			}
		}
		if err := tx.Err(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("a scan reading the row cut short: %v, want ErrCorrupt", err)
		}
		return nil
	})
	if !errors.Is(err, ErrCorrupt) { // View returns the transaction's error
		t.Fatalf("View: %v, want the scan's ErrCorrupt", err)
	}
}

// damagedKeyFile writes, with SQLite, WITHOUT ROWID table w (root page 2)
// of keys key00001 to key00005, then sets the header length byte of key's
// record to hdr.
func damagedKeyFile(t *testing.T, key string, hdr byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.db")
	stmts := []string{"CREATE TABLE w(k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID"}
	for i := 1; i <= 5; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO w VALUES ('key0000%d', %d)", i, i))
	}
	sqltest.Exec(t, path, stmts...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The record: header 3 bytes (TEXT of 8, an 8-bit integer), the key.
	i := bytes.Index(data, append([]byte{3, 29, 1}, key...))
	if i < 0 {
		t.Fatalf("%s's record is not in the file", key)
	}
	data[i] = hdr
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGetKeyShortRow: a WITHOUT ROWID row whose record was cut to no
// fields (damage) matches no key: GetKey returns the row sought or an
// error wrapping ErrCorrupt, never the damaged row in its place.
func TestGetKeyShortRow(t *testing.T) {
	path := damagedKeyFile(t, "key00002", 1) // a header of its own length byte alone: no fields
	_, tx, w := readTable(t, path, nil, "w")
	corrupt := 0
	for i := 1; i <= 6; i++ {
		key := fmt.Sprintf("key0000%d", i)
		rec, err := w.GetKey(key)
		switch {
		case errors.Is(err, ErrCorrupt):
			corrupt++
		case errors.Is(err, ErrNotFound) && i == 6:
		case err != nil:
			t.Errorf("GetKey(%s): %v", key, err)
		case string(rec.Column(0).Text()) != key || rec.Column(1).Int() != int64(i):
			t.Errorf("GetKey(%s) returned the row %q, %v", key, rec.Column(0).Text(), rec.Column(1))
		}
	}
	if corrupt == 0 {
		t.Error("no lookup met the damaged row")
	}
	// A scan reads the damaged row's key as no default: it is damage.
	for _, rec := range w.All() {
		_ = rec.Column(0)
	}
	if err := tx.Err(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a scan past the damaged row: Tx.Err %v, want ErrCorrupt", err)
	}
}

// TestCorruptEntryNamesPage: a malformed WITHOUT ROWID row read by a scan
// reads NULL and leaves the transaction an error that names its page,
// found again by its bytes (it has no rowid to seek).
func TestCorruptEntryNamesPage(t *testing.T) {
	path := damagedKeyFile(t, "key00004", 0x7f) // a header longer than the record
	_, tx, w := readTable(t, path, nil, "w")
	for _, rec := range w.All() {
		_ = rec.Column(1)
	}
	var ce *format.CorruptError
	if err := tx.Err(); !errors.As(err, &ce) || ce.Page != 2 {
		t.Fatalf("Tx.Err = %v, want a corruption error naming page 2", err)
	}
}

// TestCorruptRowOutOfOrderNamesPage: a malformed row whose rowid is also
// out of order, which a seek by rowid misses, is found again by its bytes
// to name its page. The error said "table t row 100" and no page.
func TestCorruptRowOutOfOrderNamesPage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	stmts := []string{"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)"}
	for i := 1; i <= 10; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO t VALUES (%d, 'row%d')", i, i))
	}
	sqltest.Exec(t, path, stmts...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Row 5's cell: payload length 7, rowid 5, then its record (header
	// 3 bytes: the alias's NULL, a TEXT of 4), the text.
	i := bytes.Index(data, []byte{7, 5, 3, 0, 21, 'r', 'o', 'w', '5'})
	if i < 0 {
		t.Fatal("row 5's cell is not in the file")
	}
	data[i+1] = 127  // a rowid out of order, which a seek misses
	data[i+2] = 0x7f // a header longer than the record
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, tx, tb := readTable(t, path, nil, "t")
	c := tb.Cursor()
	for ok := c.First(); ok; ok = c.Next() {
		_ = c.Record().Column(1)
	}
	var ce *format.CorruptError
	if err := tx.Err(); !errors.As(err, &ce) || ce.Page != 2 {
		t.Fatalf("Tx.Err = %v, want a corruption error naming page 2", err)
	}
}

// reservedFile writes a database with SQLite, then turns fields of two
// records into the reserved serial types 10 and 11, which SQLite never
// writes and reads as NULL: in row 1 of rowid table t, a (10) and c (11),
// and in the row of WITHOUT ROWID table w, v (10).
func reservedFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reserved.db")
	sqltest.Exec(t, path,
		"CREATE TABLE t(id INTEGER PRIMARY KEY, a, b, c REAL)",
		"CREATE INDEX ta ON t(a, c)",
		"INSERT INTO t VALUES (1, NULL, 'marker-one', NULL)",
		"INSERT INTO t VALUES (2, 7, 'two', 2.5)",
		"CREATE TABLE w(k PRIMARY KEY, v) WITHOUT ROWID",
		"INSERT INTO w VALUES ('marker-w', NULL)",
	)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	patch := func(rec, with []byte) {
		i := bytes.Index(data, rec)
		if i < 0 || bytes.Index(data[i+1:], rec) >= 0 {
			t.Fatalf("record % x is not in the file once", rec)
		}
		copy(data[i:], with)
	}
	// Row 1: header 5 bytes (id, a, b, c: NULL, NULL, TEXT of 10, NULL).
	patch(append([]byte{5, 0, 0, 33, 0}, "marker-one"...), []byte{5, 0, 10, 33, 11})
	// w's row: header 3 bytes (k: TEXT of 8, v: NULL).
	patch(append([]byte{3, 29, 0}, "marker-w"...), []byte{3, 29, 10})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// SQLite reads them as NULL and passes the file.
	if ic := sqlOne(t, path, "PRAGMA integrity_check"); ic != "ok" {
		t.Fatalf("integrity_check: %s", ic)
	}
	if got := sqlOne(t, path, "SELECT typeof(a) || ',' || b || ',' || typeof(c) FROM t WHERE id = 1"); got != "null,marker-one,null" {
		t.Fatalf("SQLite reads row 1 as %s", got)
	}
	return path
}

// TestReservedSerialTypes: the rows of a rowid table read the reserved
// serial types 10 and 11 as NULL, as SQLite does, through Get, cursors and
// iterators, and a change to such a row leaves a file SQLite passes.
// Elsewhere (here a WITHOUT ROWID row) pagoda reports them as corruption
// (format.CheckRow says why).
func TestReservedSerialTypes(t *testing.T) {
	path := reservedFile(t)
	db, tx, tb := readTable(t, path, nil, "t")
	row1 := func(t *testing.T, rec Record) {
		t.Helper()
		if rec.Rowid() != 1 || rec.Column(0).Int() != 1 || rec.Column(1).Type() != TypeNull ||
			string(rec.Column(2).Text()) != "marker-one" || rec.Column(3).Type() != TypeNull {
			t.Errorf("row 1 reads %v, %v, %q, %v", rec.Column(0), rec.Column(1), rec.Column(2).Text(), rec.Column(3))
		}
	}
	rec, err := tb.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	row1(t, rec)
	c := tb.Cursor()
	if !c.First() {
		t.Fatalf("cursor: %v", c.Err())
	}
	row1(t, c.Record())
	n := 0
	for rowid, rec := range tb.All() {
		if rowid == 1 {
			row1(t, rec)
		}
		n++
	}
	if n != 2 {
		t.Errorf("All gave %d rows", n)
	}
	if err := tx.Err(); err != nil {
		t.Errorf("Tx.Err after reading: %v", err)
	}
	w, err := tx.Table("w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.GetKey("marker-w"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("w's row with serial type 10: %v, want ErrCorrupt", err)
	}
	tx.Rollback()
	// Put replaces the row: its index entry (NULL, NULL, 1) is found and
	// replaced, and the row is written again with NULLs of type 0.
	err = db.Update(func(tx *Tx) error {
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		return tb.Put(1, nil, 5, "marker-one", nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if ic := sqlOne(t, path, "PRAGMA integrity_check"); ic != "ok" {
		t.Fatalf("integrity_check after the update: %s", ic)
	}
	if got := sqlOne(t, path, "SELECT a || ',' || typeof(c) FROM t WHERE id = 1"); got != "5,null" {
		t.Errorf("SQLite reads the updated row as %s", got)
	}
}
