package pagoda

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// utf16Encodings are the two UTF-16 text encodings, as PRAGMA encoding
// names them.
var utf16Encodings = []string{"UTF-16le", "UTF-16be"}

// renderValue renders a pagoda value as renderSQL renders SQLite's.
func renderValue(v Value) string {
	switch v.Type() {
	case TypeNull:
		return "null"
	case TypeInteger:
		return fmt.Sprintf("integer:%d", v.Int())
	case TypeFloat:
		return fmt.Sprintf("real:%x", math.Float64bits(v.Float()))
	case TypeText:
		return fmt.Sprintf("text:%q", v.Blob())
	}
	return fmt.Sprintf("blob:%x", v.Blob())
}

// renderSQL renders a value SQLite returned with its typeof().
func renderSQL(typ string, v any) string {
	switch typ {
	case "null":
		return "null"
	case "integer":
		return fmt.Sprintf("integer:%d", v.(int64))
	case "real":
		return fmt.Sprintf("real:%x", math.Float64bits(v.(float64)))
	case "text":
		switch s := v.(type) {
		case string:
			return fmt.Sprintf("text:%q", s)
		case []byte:
			return fmt.Sprintf("text:%q", s)
		}
	case "blob":
		if v == nil {
			return "blob:"
		}
		return fmt.Sprintf("blob:%x", v.([]byte))
	}
	return fmt.Sprintf("?%s:%v", typ, v)
}

// sqlRows runs q, whose result columns are pairs typeof(x), x, and renders
// each row's values joined by "|".
func sqlRows(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("sqlite: %s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for i := 0; i < len(vals); i += 2 {
			parts = append(parts, renderSQL(vals[i].(string), vals[i+1]))
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// renderRecord renders columns cols of a pagoda record.
func renderRecord(r Record, cols []int) string {
	var parts []string
	for _, c := range cols {
		parts = append(parts, renderValue(r.Column(c)))
	}
	return strings.Join(parts, "|")
}

// utf16Texts are the texts the differential tests draw from: empty, ASCII
// in both cases, trailing spaces, BMP characters whose UTF-16 order is not
// their UTF-8 order (U+FF71 against a surrogate pair), and non-BMP ones.
var utf16Texts = []string{
	"", "a", "A", "ab", "abc", "ABC", "Abc", "abc ", "abc  ", "b", "z", "Z", "é", "É", "héllo", "HÉLLO",
	"ｱ", "ｱｲ", "😀", "a😀", "a😀b", "😀😀", "\u07ff", "\u0800", "\uffff", "\U0010ffff", "12", " 12", "1e3",
	"日本語", "a b", "ß", "ÿ", "Ā",
}

func randText(r *rand.Rand) string {
	switch r.IntN(10) {
	case 0: // long: onto overflow pages at any page size
		var b strings.Builder
		for b.Len() < 300+r.IntN(20000) {
			b.WriteString(utf16Texts[r.IntN(len(utf16Texts))])
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		return b.String()
	case 1:
		return utf16Texts[r.IntN(len(utf16Texts))] + utf16Texts[r.IntN(len(utf16Texts))]
	}
	return utf16Texts[r.IntN(len(utf16Texts))]
}

func randAny(r *rand.Rand) any {
	switch r.IntN(7) {
	case 0:
		return nil
	case 1:
		return r.Int64N(2000) - 1000
	case 2:
		return float64(r.IntN(1000)) / 8
	case 3:
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		if r.IntN(8) == 0 {
			b = bytes.Repeat(b, 300)
		}
		return b
	}
	return randText(r)
}

// utf16Schema is the schema of TestUTF16LikeSQLite: text under BINARY,
// NOCASE and RTRIM, DESC, in rowid tables' indexes and WITHOUT ROWID keys.
var utf16Schema = []string{
	"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c, d TEXT COLLATE NOCASE, e BLOB, f REAL, g TEXT COLLATE RTRIM)",
	"CREATE INDEX tb ON t(b)",
	"CREATE INDEX tc ON t(c)",
	"CREATE INDEX td ON t(d)",
	"CREATE INDEX tg ON t(g)",
	"CREATE INDEX tbdesc ON t(b DESC, c)",
	"CREATE INDEX tbnocase ON t(b COLLATE NOCASE, d DESC)",
	"CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID",
	"CREATE TABLE wn(k TEXT COLLATE NOCASE PRIMARY KEY, v) WITHOUT ROWID",
	"CREATE TABLE wd(k TEXT, j INTEGER, v, PRIMARY KEY(k DESC, j)) WITHOUT ROWID",
	"CREATE INDEX wdv ON wd(v)",
	"CREATE TABLE later(a INTEGER PRIMARY KEY, b TEXT)",
	"INSERT INTO later VALUES (1, 'old row')",
	"ALTER TABLE later ADD COLUMN x TEXT DEFAULT 'défaut 😀'",
	"CREATE TABLE gen(a TEXT, b TEXT AS (a || '!'), c INTEGER AS (length(a)) STORED, CHECK (length(a) < 100000))",
}

// utf16Indexes lists, per index, its table, the ORDER BY that gives its
// order in SQLite, and the columns of its entries as SQL expressions.
var utf16Indexes = []struct {
	name, table, order string
	cols               []string
}{
	{"tb", "t", "b, a", []string{"b", "a"}},
	{"tc", "t", "c, a", []string{"c", "a"}},
	{"td", "t", "d, a", []string{"d", "a"}},
	{"tg", "t", "g, a", []string{"g", "a"}},
	{"tbdesc", "t", "b DESC, c, a", []string{"b", "c", "a"}},
	{"tbnocase", "t", "b COLLATE NOCASE, d DESC, a", []string{"b", "d", "a"}},
	{"wdv", "wd", "v, k DESC, j", []string{"v", "k", "j"}},
}

// buildUTF16 makes a database of encoding enc and page size ps with SQLite,
// random rows in every table, and returns its path and the texts used.
func buildUTF16(t *testing.T, enc string, ps int, seed uint64) (string, []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "u16.db")
	sdb := sqltest.Open(t, path)
	sqltest.Run(t, sdb, fmt.Sprintf("PRAGMA page_size=%d", ps), "PRAGMA encoding='"+enc+"'")
	sqltest.Run(t, sdb, utf16Schema...)
	r := rand.New(rand.NewPCG(seed, 16))
	var texts []string
	tx, err := sdb.Begin()
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := tx.Exec(q, args...); err != nil {
			t.Fatalf("%s %v: %v", q, args, err)
		}
	}
	for i := 0; i < 150; i++ {
		b := any(randText(r))
		if r.IntN(10) == 0 {
			b = randAny(r)
		}
		d, g := randText(r), randText(r)
		if s, ok := b.(string); ok {
			texts = append(texts, s)
		}
		texts = append(texts, d, g)
		exec("INSERT INTO t VALUES (NULL, ?, ?, ?, ?, ?, ?)", b, randAny(r), d, randAny(r), randAny(r), g)
		k := randText(r)
		texts = append(texts, k)
		exec("INSERT OR IGNORE INTO w VALUES (?, ?)", k, randAny(r))
		exec("INSERT OR IGNORE INTO wn VALUES (?, ?)", randText(r), randAny(r))
		exec("INSERT OR IGNORE INTO wd VALUES (?, ?, ?)", k, r.IntN(3), randAny(r))
		exec("INSERT INTO gen(a) VALUES (?)", randText(r))
	}
	exec("INSERT INTO later(a, b) VALUES (2, 'new row')")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := sdb.Close(); err != nil {
		t.Fatal(err)
	}
	return path, texts
}

// TestUTF16LikeSQLite reads UTF-16 databases (both byte orders, several
// page sizes) that SQLite wrote, and compares with SQLite: every row of
// every table and every index entry (by value and type, in order), seeks
// by text (Index.Prefix against WHERE col = ?, IndexCursor.Seek against a
// range, Table.GetKey), Check against integrity_check, and writes refused
// with the file unchanged.
func TestUTF16LikeSQLite(t *testing.T) {
	pageSizes := []int{512, 4096, 65536}
	if testing.Short() {
		pageSizes = []int{1024}
	}
	for _, enc := range utf16Encodings {
		for _, ps := range pageSizes {
			t.Run(fmt.Sprintf("%s/%d", enc, ps), func(t *testing.T) {
				path, texts := buildUTF16(t, enc, ps, uint64(ps))
				testUTF16Reads(t, path, enc, ps, texts)
			})
		}
	}
}

func testUTF16Reads(t *testing.T, path, enc string, ps int, texts []string) {
	sdb := sqltest.Open(t, path)
	if got := sqltest.Rows(t, sdb, "PRAGMA encoding"); len(got) != 1 || got[0] != enc {
		t.Fatalf("encoding %v, want %s", got, enc)
	}
	if got := sqltest.Rows(t, sdb, "PRAGMA integrity_check"); len(got) != 1 || got[0] != "ok" {
		t.Fatalf("integrity_check: %v", got)
	}
	db, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if h, _ := tx.Header(); !format.IsUTF16(h.TextEncoding) || h.PageSize != ps {
		t.Fatalf("text encoding %d, page size %d", h.TextEncoding, h.PageSize)
	}
	// The schema, as SQLite has it.
	var objects []string
	for _, o := range tx.Objects() {
		objects = append(objects, o.Type+"|"+o.Name+"|"+o.Table+"|"+o.SQL)
	}
	if want := sqltest.Rows(t, sdb, "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema"); !slices.Equal(objects, want) {
		t.Errorf("schema:\n%q\nSQLite:\n%q", objects, want)
	}

	// Every row of every table, in order.
	tables := []struct {
		name, order string
		cols        []string
	}{
		{"t", "a", []string{"a", "b", "c", "d", "e", "f", "g"}},
		{"w", "k", []string{"k", "v"}},
		{"wn", "k COLLATE NOCASE", []string{"k", "v"}},
		{"wd", "k DESC, j", []string{"k", "j", "v"}},
		{"later", "a", []string{"a", "b", "x"}},
		{"gen", "rowid", []string{"a", "b", "c"}},
	}
	for _, tb := range tables {
		var sel []string
		idx := make([]int, len(tb.cols))
		for i, c := range tb.cols {
			sel = append(sel, "typeof("+c+"), "+c)
			idx[i] = i
		}
		want := sqlRows(t, sdb, fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", strings.Join(sel, ", "), tb.name, tb.order))
		tab, err := tx.Table(tb.name)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, rec := range tab.All() {
			got = append(got, renderRecord(rec, idx))
		}
		if err := tx.Err(); err != nil {
			t.Fatalf("table %s: %v", tb.name, err)
		}
		compareLines(t, "table "+tb.name, got, want)
	}

	// Every entry of every index, in index order.
	for _, ix := range utf16Indexes {
		var sel []string
		idx := make([]int, len(ix.cols))
		for i, c := range ix.cols {
			sel = append(sel, "typeof("+c+"), "+c)
			idx[i] = i
		}
		want := sqlRows(t, sdb, fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", strings.Join(sel, ", "), ix.table, ix.order))
		in, err := tx.Index(ix.name)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		c := in.Cursor()
		for ok := c.First(); ok; ok = c.Next() {
			got = append(got, renderRecord(c.Key(), idx))
		}
		if err := c.Err(); err != nil {
			t.Fatalf("index %s: %v", ix.name, err)
		}
		compareLines(t, "index "+ix.name, got, want)
	}

	// Seeks by text: equality through Prefix and GetKey, ranges through
	// Seek, for the texts stored and some that are not.
	probes := slices.Clone(texts)
	probes = append(probes, utf16Texts...)
	for _, s := range utf16Texts {
		probes = append(probes, strings.ToUpper(s), s+" ", s+"\uffff", s+"😀")
	}
	slices.Sort(probes)
	probes = slices.Compact(probes)
	eq := []struct{ index, col string }{{"tb", "b"}, {"td", "d"}, {"tg", "g"}, {"tbdesc", "b"}, {"tbnocase", "b COLLATE NOCASE"}}
	rng := []struct{ index, where, order string }{
		{"tb", "b >= ?", "b, a"},
		{"td", "d >= ?", "d, a"},
		{"tg", "g >= ?", "g, a"},
		{"tbdesc", "b <= ?", "b DESC, c, a"},
		{"tbnocase", "b >= ? COLLATE NOCASE", "b COLLATE NOCASE, d DESC, a"},
	}
	for _, p := range probes {
		for _, e := range eq {
			want := sqltest.Rows(t, sdb, fmt.Sprintf("SELECT a FROM t WHERE %s = ? ORDER BY a", e.col), p)
			in, err := tx.Index(e.index)
			if err != nil {
				t.Fatal(err)
			}
			var rowids []int64
			for rowid := range in.Prefix(p) {
				rowids = append(rowids, rowid)
			}
			if err := tx.Err(); err != nil {
				t.Fatal(err)
			}
			slices.Sort(rowids)
			var got []string
			for _, r := range rowids {
				got = append(got, fmt.Sprint(r))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: Prefix(%q) finds %v, SQLite %v", e.index, p, got, want)
			}
		}
		for _, q := range rng {
			want := sqltest.Rows(t, sdb, fmt.Sprintf("SELECT a FROM t WHERE %s ORDER BY %s LIMIT 4", q.where, q.order), p)
			in, err := tx.Index(q.index)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			c := in.Cursor()
			for ok := c.Seek(p); ok && len(got) < 4; ok = c.Next() {
				if c.Key().Column(0).IsNull() {
					break // SQLite's range skips the NULLs; they sort first, so only DESC reaches them
				}
				got = append(got, fmt.Sprint(c.Rowid()))
			}
			if err := c.Err(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: Seek(%q) then Next gives rows %v, SQLite %v", q.index, p, got, want)
			}
			if q.index == "tb" {
				gotFirst, wantFirst := "none", "none"
				if c := in.Cursor(); c.SeekText([]byte(p)) {
					gotFirst = fmt.Sprint(c.Rowid())
				}
				if len(want) > 0 {
					wantFirst = want[0]
				}
				if gotFirst != wantFirst {
					t.Errorf("tb: SeekText(%q) is on row %s, SQLite's first is %s", p, gotFirst, wantFirst)
				}
			}
		}
		for _, w := range []string{"w", "wn"} {
			want := sqlRows(t, sdb, fmt.Sprintf("SELECT typeof(v), v FROM %s WHERE k = ?", w), p)
			tab, err := tx.Table(w)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			switch rec, err := tab.GetKey(p); {
			case err == nil:
				got = append(got, renderRecord(rec, []int{1}))
			case !errors.Is(err, ErrNotFound):
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: GetKey(%q) = %v, SQLite %v", w, p, got, want)
			}
		}
	}
}

// compareLines reports the first lines where got and want differ.
func compareLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: pagoda reads %d lines, SQLite %d", what, len(got), len(want))
	}
	bad := 0
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s line %d:\npagoda %.300s\nSQLite %.300s", what, i, got[i], want[i])
			if bad++; bad == 3 {
				return
			}
		}
	}
}

// A UTF-16 database is never written: every write is refused with an
// error wrapping ErrUnsupported that says pagoda writes only UTF-8
// databases, whether the DB is writable or read-only, and the file (and
// its absent WAL) stays as it was, byte for byte.
func TestUTF16WritesRefused(t *testing.T) {
	for _, enc := range utf16Encodings {
		t.Run(enc, func(t *testing.T) {
			path, _ := buildUTF16(t, enc, 4096, 7)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			db := openChecked(t, path, nil)
			wantRefused := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "pagoda writes only UTF-8 databases") {
					t.Errorf("%s: %v, want ErrUnsupported saying pagoda writes only UTF-8 databases", what, err)
				}
			}
			_, err = db.Begin(true)
			wantRefused("Begin(true)", err)
			wantRefused("Update", db.Update(func(tx *Tx) error { return nil }))
			wantRefused("Update(CreateBucket)", db.Update(func(tx *Tx) error {
				_, err := tx.CreateBucket("b")
				return err
			}))
			wantRefused("Batch", db.Batch(func(tx *Tx) error { return nil }))
			wantRefused("Compact", db.Compact(filepath.Join(t.TempDir(), "c.db")))
			// Reading goes on.
			if err := db.View(func(tx *Tx) error {
				tab, err := tx.Table("t")
				if err != nil {
					return err
				}
				_, err = tab.Get(1)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			// Backup copies the file as it is.
			bpath := filepath.Join(t.TempDir(), "backup.db")
			if err := db.Backup(bpath); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			rdb, err := Open(path, &Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			_, err = rdb.Begin(true)
			if !errors.Is(err, ErrReadOnly) {
				t.Errorf("read-only DB: Begin(true): %v, want ErrReadOnly", err)
			}
			rdb.Close()
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the file changed")
			}
			if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
				t.Errorf("a WAL is left beside the file: %v", err)
			}
			if got, err := os.ReadFile(bpath); err != nil || !bytes.Equal(got, before) {
				t.Errorf("the backup differs from the file (%v)", err)
			}
		})
	}
}

// encodeUnits writes UTF-16 code units in the byte order of enc.
func encodeUnits(units []uint16, enc string) []byte {
	var b []byte
	for _, u := range units {
		if enc == "UTF-16le" {
			b = append(b, byte(u), byte(u>>8))
		} else {
			b = append(b, byte(u>>8), byte(u))
		}
	}
	return b
}

func encNumber(enc string) uint32 {
	if enc == "UTF-16le" {
		return format.TextEncodingUTF16LE
	}
	return format.TextEncodingUTF16BE
}

// TestUTF16ConversionLikeSQLite stores malformed UTF-16 (unpaired
// surrogates of both halves, reversed pairs, a surrogate before any
// character or at the end) with CAST(x'...' AS TEXT), and odd byte counts
// by patching a record's serial types, and reads each value through
// pagoda and through SQLite (sqlite3_column_text, which converts to
// UTF-8): the bytes must be the same. And UTF-8 to UTF-16, for the keys
// pagoda seeks: malformed UTF-8 bound to hex(?) in a UTF-16 database.
func TestUTF16ConversionLikeSQLite(t *testing.T) {
	fixed := [][]uint16{
		{0xD800}, {0xDC00}, {0xD800, 0x0061}, {0xDC00, 0x0061}, {0xD83D, 0xDE00}, {0xDE00, 0xD83D},
		{0xD800, 0xD800}, {0x0061, 0xD800}, {0xD800, 0xDC00, 0xDC00}, {0xDBFF, 0xDFFF}, {0xDFFF, 0xFFFF},
		{0xD800, 0x0000, 0x0062}, {0xDB40, 0x00E9}, {0xFF71, 0xD83D}, {0x00E9, 0x07FF, 0x0800},
	}
	r := rand.New(rand.NewPCG(1, 2))
	pool := []uint16{0x0041, 0x007F, 0x0080, 0x00E9, 0x07FF, 0x0800, 0xFF71, 0xFFFF, 0xD7FF, 0xE000}
	for i := 0; i < 300; i++ {
		var u []uint16
		for j := 0; j < 1+r.IntN(6); j++ {
			if r.IntN(2) == 0 {
				u = append(u, 0xD800+uint16(r.IntN(0x800)))
			} else {
				u = append(u, pool[r.IntN(len(pool))])
			}
		}
		fixed = append(fixed, u)
	}
	utf8s := []string{
		"\xff", "\x80", "a\x80b", "\xc3", "\xc3\xa9", "\xc3\xa9\xa9", "\xed\xa0\x80", "\xed\xbf\xbf", "\xc0\x80", "\xc1\xbf",
		"\xe0\x80\x80", "\xf4\x90\x80\x80", "\xf7\xbf\xbf\xbf", "\xf8\x88\x80\x80\x80", "\xfc\x84\x80\x80\x80\x80",
		"\xfe", "\xe2\x82", "\xf0\x9f\x98", "😀", "\U0010ffff", "\xef\xbf\xbf", "a\xc3", "\xbf\xbf",
	}
	for i := 0; i < 300; i++ {
		b := make([]byte, 1+r.IntN(6))
		for j := range b {
			b[j] = []byte{0x41, 0x80, 0xBF, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xF8, 0xFF, 0x9F, 0xA0}[r.IntN(12)]
		}
		utf8s = append(utf8s, string(b))
	}
	for _, enc := range utf16Encodings {
		t.Run(enc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "conv.db")
			sdb := sqltest.Open(t, path)
			sqltest.Run(t, sdb, "PRAGMA encoding='"+enc+"'", "CREATE TABLE s(id INTEGER PRIMARY KEY, x TEXT)")
			for i, u := range fixed {
				if _, err := sdb.Exec(fmt.Sprintf("INSERT INTO s VALUES (%d, CAST(x'%x' AS TEXT))", i, encodeUnits(u, enc))); err != nil {
					t.Fatal(err)
				}
			}
			want := map[int64][]byte{}
			rows, err := sdb.Query("SELECT id, hex(x), x FROM s")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id int64
				var hx string
				var x []byte
				if err := rows.Scan(&id, &hx, &x); err != nil {
					t.Fatal(err)
				}
				if stored := fmt.Sprintf("%X", encodeUnits(fixed[id], enc)); hx != stored {
					t.Fatalf("row %d stored as %s, not %s", id, hx, stored)
				}
				want[id] = x
			}
			rows.Close()
			// UTF-8 to UTF-16: SQLite converts a bound text to the
			// database's encoding.
			for _, s := range utf8s {
				var hx string
				if err := sdb.QueryRow("SELECT hex(?)", s).Scan(&hx); err != nil {
					t.Fatal(err)
				}
				if got := fmt.Sprintf("%X", format.UTF8ToUTF16(nil, []byte(s), encNumber(enc))); got != hx {
					t.Errorf("UTF8ToUTF16(%q) = %s, SQLite %s", s, got, hx)
				}
			}
			sdb.Close()

			db, err := Open(path, &Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.View(func(tx *Tx) error {
				tab, err := tx.Table("s")
				if err != nil {
					return err
				}
				n := 0
				for id, rec := range tab.All() {
					n++
					got := rec.Column(1)
					if got.Type() != TypeText || !bytes.Equal(got.Blob(), want[id]) {
						t.Errorf("units %04X: pagoda reads %q (%v), SQLite %q", fixed[id], got.Blob(), got.Type(), want[id])
					}
					if direct := format.UTF16ToUTF8(nil, encodeUnits(fixed[id], enc), encNumber(enc)); !bytes.Equal(direct, want[id]) {
						t.Errorf("UTF16ToUTF8(%04X) = %q, SQLite %q", fixed[id], direct, want[id])
					}
				}
				if n != len(fixed) {
					t.Errorf("%d rows, want %d", n, len(fixed))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestUTF16OddLengthLikeSQLite reads text of an odd number of bytes, which
// SQLite never writes but reads: it drops the last byte. The file is
// patched: a row's two texts of 6 and 2 bytes become texts of 5 and 3.
func TestUTF16OddLengthLikeSQLite(t *testing.T) {
	for _, enc := range utf16Encodings {
		t.Run(enc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "odd.db")
			abc, x := encodeUnits([]uint16{'a', 'b', 'c'}, enc), encodeUnits([]uint16{'x'}, enc)
			sqltest.Exec(t, path, "PRAGMA encoding='"+enc+"'", "CREATE TABLE o(a TEXT, b TEXT)",
				fmt.Sprintf("INSERT INTO o VALUES (CAST(x'%x' AS TEXT), CAST(x'%x' AS TEXT))", abc, x))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rec := append([]byte{3, 13 + 2*6, 13 + 2*2}, append(abc, x...)...)
			at := bytes.Index(data, rec)
			if at < 0 || bytes.Count(data, rec) != 1 {
				t.Fatalf("record % x not found once", rec)
			}
			data[at+1], data[at+2] = 13+2*5, 13+2*3
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			sdb := sqltest.Open(t, path)
			var ha, hb string
			var a, b []byte
			if err := sdb.QueryRow("SELECT hex(a), a, hex(b), b FROM o").Scan(&ha, &a, &hb, &b); err != nil {
				t.Fatal(err)
			}
			if ha != fmt.Sprintf("%X", abc[:5]) || string(a) != "ab" {
				t.Fatalf("SQLite reads a as %s, %q: the patch did not take", ha, a)
			}
			db, err := Open(path, &Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.View(func(tx *Tx) error {
				tab, err := tx.Table("o")
				if err != nil {
					return err
				}
				rec, err := tab.Get(1)
				if err != nil {
					return err
				}
				if got := rec.Column(0).Blob(); !bytes.Equal(got, a) {
					t.Errorf("a: pagoda %q, SQLite %q", got, a)
				}
				if got := rec.Column(1).Blob(); !bytes.Equal(got, b) {
					t.Errorf("b: pagoda %q, SQLite %q", got, b)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestUTF16Relabeled: a UTF-8 file whose header says UTF-16 opens, its
// schema reads as garbage (sqlite3 calls it malformed), and Check finds
// the trees that no schema row names.
func TestUTF16Relabeled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	sqltest.Exec(t, path, "CREATE TABLE t(a TEXT)", "INSERT INTO t VALUES ('hello')", "CREATE INDEX ta ON t(a)")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[59] = format.TextEncodingUTF16LE
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.View(func(tx *Tx) error {
		if _, err := tx.Table("t"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Table(t): %v, want ErrNotFound", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Check(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Check: %v, want ErrCorrupt", err)
	}
}

// TestUTF16CheckFindsIndexDamage: Check compares the indexes of a UTF-16
// database with their tables, as integrity_check does: an index entry
// whose text differs from its row's is found by both.
func TestUTF16CheckFindsIndexDamage(t *testing.T) {
	for _, enc := range utf16Encodings {
		t.Run(enc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d.db")
			sqltest.Exec(t, path, "PRAGMA encoding='"+enc+"'", "CREATE TABLE t(a TEXT)", "CREATE INDEX ta ON t(a)",
				"INSERT INTO t VALUES ('abc'), ('abd')")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// The index entry of row 1: header (3, text of 6 bytes, the
			// integer 1), then 'abc'.
			entry := append([]byte{3, 13 + 2*6, 9}, encodeUnits([]uint16{'a', 'b', 'c'}, enc)...)
			at := bytes.Index(data, entry)
			if at < 0 {
				t.Fatalf("index entry % x not found", entry)
			}
			if enc == "UTF-16le" {
				data[at+3+4] = 'b' // 'abb', still before 'abd'
			} else {
				data[at+3+5] = 'b'
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			sdb := sqltest.Open(t, path)
			if got := sqltest.Rows(t, sdb, "PRAGMA integrity_check"); len(got) == 1 && got[0] == "ok" {
				t.Fatal("integrity_check finds no damage")
			}
			db, err := Open(path, &Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Check(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "index ta") {
				t.Errorf("Check: %v, want the damage to index ta", err)
			}
		})
	}
}
