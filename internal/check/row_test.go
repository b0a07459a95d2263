package check

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// build makes a database with SQLite from stmts and returns its image.
func build(t *testing.T, stmts ...string) *image {
	t.Helper()
	path := filepath.Join(t.TempDir(), "row.db")
	sqltest.Exec(t, path, stmts...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := newMemPages(data)
	if m == nil {
		t.Fatal("invalid image header")
	}
	return &image{name: "row", pageSize: m.pageSize, data: data}
}

// sqliteCheck runs PRAGMA integrity_check with SQLite (modernc.org/sqlite,
// in process) on a copy of data and returns its lines, nil for "ok". An
// error ends the list as its message.
func sqliteCheck(t *testing.T, data []byte) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ic.db")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	db := sqltest.Open(t, path)
	defer db.Close()
	rows, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		return []string{err.Error()}
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, s)
	}
	if err := rows.Err(); err != nil {
		lines = append(lines, err.Error())
	}
	if len(lines) == 1 && lines[0] == "ok" {
		return nil
	}
	return lines
}

// leafCell returns the page and the cell (its Local aliasing data) of row
// rowid of the rowid table rooted at root.
func leafCell(t *testing.T, im *image, data []byte, root uint32, rowid int64) (uint32, format.Cell) {
	t.Helper()
	for _, p := range treePages(t, im, data, root) {
		if p.typ != format.PageTableLeaf {
			continue
		}
		pg := parse(t, im, data, p.pgno)
		for i := 0; i < pg.NCells; i++ {
			c, err := pg.Cell(i)
			if err != nil {
				t.Fatal(err)
			}
			if c.Rowid == rowid {
				return p.pgno, c
			}
		}
	}
	t.Fatalf("row %d not found", rowid)
	return 0, format.Cell{}
}

// TestMalformedRowRecords: every row's record is checked, as sqlite3's
// integrity_check decodes every row's header, in tables that no index,
// NOT NULL or CHECK constraint makes the checker read otherwise. Each case
// damages the header of one row: pagoda reports that row once, on its leaf
// page, and SQLite says the file is malformed.
func TestMalformedRowRecords(t *testing.T) {
	setup := []string{
		"PRAGMA page_size=1024",
		"CREATE TABLE t(a INTEGER PRIMARY KEY, b, c)",         // root 2
		"CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID", // root 3
		"INSERT INTO t VALUES (1, 'one', 1), (2, 'two', 2.5), (3, 'three', 'x'), (4, 'four', randomblob(3000)), (5, NULL, NULL)",
		"INSERT INTO w VALUES ('a', 1), ('b', 'two'), ('c', NULL)",
	}
	for _, tc := range []struct {
		name string
		row  int64 // of t; 0 for w's row 'b'
		// damage edits the row's record (its local part: header, then
		// body) and returns what pagoda must say about it.
		damage   func(rec []byte) string
		sqliteOK bool // SQLite reads the row and says ok
		// oldOK: sqlite3 3.40 reads the row (every field NULL) and says
		// ok; SQLite 3.54 (modernc) reports it.
		oldOK bool
	}{
		{name: "header length past the payload", row: 3, damage: func(rec []byte) string {
			rec[0], rec[1] = 0x81, 0x00 // 128, as in the repro
			return "record header length out of range"
		}},
		{name: "header length zero", row: 3, oldOK: true, damage: func(rec []byte) string {
			rec[0] = 0
			return "record header length out of range"
		}},
		{name: "body past the payload", row: 3, damage: func(rec []byte) string {
			rec[rec[0]-1] += 2 // 'x' (type 15) reads as 2 bytes
			return "record body shorter than its header says"
		}},
		{name: "payload past the body", row: 3, damage: func(rec []byte) string {
			rec[rec[0]-1] -= 2 // 'x' reads as ''
			return "its header and fields take 9 of its 10 bytes"
		}},
		{name: "header one byte short", row: 3, damage: func(rec []byte) string {
			rec[0]-- // the last serial type falls into the body
			return "its header and fields take 8 of its 10 bytes"
		}},
		{name: "overflowing row", row: 4, damage: func(rec []byte) string {
			rec[rec[0]-1] -= 2 // the blob reads a byte shorter
			return "its header and fields take 3008 of its 3009 bytes"
		}},
		{name: "WITHOUT ROWID row", damage: func(rec []byte) string {
			rec[rec[0]-1] -= 2 // 'two' reads as 'tw'
			return "its header and fields take 6 of its 7 bytes"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			im := build(t, setup...)
			data := im.clone()
			if got := Run(newMemPages(data), nil, nil); len(got) != 0 {
				t.Fatalf("sound file: %s", joinProblems(got))
			}
			var pgno uint32
			var want string
			if tc.row > 0 {
				var cell format.Cell
				pgno, cell = leafCell(t, im, data, 2, tc.row)
				want = "table t: row " + strconv.FormatInt(tc.row, 10) + ": malformed record: " + tc.damage(cell.Local)
			} else {
				pgno = 3 // w's root, a leaf
				pg := parse(t, im, data, pgno)
				cell, err := pg.Cell(1)
				if err != nil || !strings.Contains(string(cell.Local), "two") {
					t.Fatalf("cell 1 of w is not row 'b': %v", err)
				}
				want = "table w: cell 1: malformed record: " + tc.damage(cell.Local)
			}
			got := Run(newMemPages(data), nil, nil)
			if len(got) != 1 || got[0].Page != pgno || got[0].Msg != want {
				t.Errorf("want one problem, page %d: %s; got:\n%s", pgno, want, joinProblems(got))
			}
			// SQLite 3.54 says "database disk image is malformed", or
			// "*** in database main ***" and "Tree 2 page 6 cell 2: Bad
			// cell header size".
			ic := sqliteCheck(t, data)
			switch {
			case tc.sqliteOK && ic != nil:
				t.Errorf("sqlite's integrity_check = %q, want ok", ic)
			case !tc.sqliteOK && len(ic) != 1 && len(ic) != 2:
				t.Errorf("sqlite's integrity_check = %q, want one problem", ic)
			}
			if out, ok := sqliteIntegrity(t, data); ok && (out == "ok") != (tc.sqliteOK || tc.oldOK) {
				t.Errorf("sqlite3 CLI integrity_check = %q", out)
			}
		})
	}
}

// rowProblem is a problem with a row: sqlite3's line msg ("non-TEXT value
// in t.x"), which pagoda's message carries after the row's name ("table t:
// row 2: non-TEXT value in t.x (INTEGER)").
type rowProblem struct{ row, msg string }

// strictSetup makes table t with the untyped columns i, n, r, x, b, a (so
// that each row stores what it is given) and rows of every storage class,
// then declares t STRICT with the types INT, integer, REAL, TEXT, BLOB, ANY
// in sqlite_schema.
var strictSetup = []string{
	"CREATE TABLE t(id INTEGER PRIMARY KEY, i, n, r, x, b, a)",
	"INSERT INTO t VALUES (1, NULL, NULL, NULL, NULL, NULL, NULL)",
	"INSERT INTO t VALUES (2, 7, 7, 7, 7, 7, 7)",
	"INSERT INTO t VALUES (3, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5)",
	"INSERT INTO t VALUES (4, 's', 's', 's', 's', 's', 's')",
	"INSERT INTO t VALUES (5, x'00', x'00', x'00', x'00', x'00', x'00')",
	"INSERT INTO t VALUES (6, 0, 1, 2, 'ok', x'01', 2.5)", // fits every type
	"PRAGMA writable_schema=ON",
	"UPDATE sqlite_schema SET sql = 'CREATE TABLE t(id INTEGER PRIMARY KEY, i INT, n integer, r REAL, x TEXT, b BLOB, a ANY) STRICT' WHERE name = 't'",
}

// strictAlterSQL adds columns to table s after rows 1 and 2 were stored,
// with DEFAULTs of every type, some not of the column's, then declares s
// STRICT. sqlite3 3.40 makes such a STRICT table itself (ALTER TABLE on
// the STRICT table); SQLite 3.54 refuses that ("type mismatch on
// DEFAULT"), hence the detour through a plain table.
var strictAlterSQL = []string{
	"CREATE TABLE s(id INTEGER PRIMARY KEY, v)",
	"INSERT INTO s VALUES (1, 1), (2, 'two')",
	"ALTER TABLE s ADD COLUMN c1 INTEGER DEFAULT 'abc'",
	"ALTER TABLE s ADD COLUMN c2 INTEGER DEFAULT '5'",
	"ALTER TABLE s ADD COLUMN c3 INT DEFAULT 2.0",
	"ALTER TABLE s ADD COLUMN c4 INT DEFAULT 2.5",
	"ALTER TABLE s ADD COLUMN c5 REAL DEFAULT 3",
	"ALTER TABLE s ADD COLUMN c6 REAL DEFAULT 'x'",
	"ALTER TABLE s ADD COLUMN c7 TEXT DEFAULT 1",
	"ALTER TABLE s ADD COLUMN c8 TEXT DEFAULT x'00'",
	"ALTER TABLE s ADD COLUMN c9 BLOB DEFAULT 'a'",
	"ALTER TABLE s ADD COLUMN c10 BLOB DEFAULT x'00'",
	"ALTER TABLE s ADD COLUMN c11 ANY DEFAULT 'q'",
	"ALTER TABLE s ADD COLUMN c12 INTEGER DEFAULT NULL",
	"INSERT INTO s VALUES (3, 3, 3, 3, 3, 3, 3.5, 3, 3, 'x', x'03', x'03', 3, 3)",
	"PRAGMA writable_schema=ON",
	"UPDATE sqlite_schema SET sql = replace(sql, 'PRIMARY KEY, v,', 'PRIMARY KEY, v ANY,') || ' STRICT' WHERE name = 's'",
}

// alterWant is what integrity_check reports on strictAlterSQL's rows 1 and
// 2; row 3 was stored with every column.
var alterWant = []rowProblem{
	{"row 1", "non-INTEGER value in s.c1"}, {"row 1", "non-INT value in s.c4"}, {"row 1", "non-REAL value in s.c6"},
	{"row 1", "non-TEXT value in s.c8"}, {"row 1", "non-BLOB value in s.c9"},
	{"row 2", "non-INTEGER value in s.c1"}, {"row 2", "non-INT value in s.c4"}, {"row 2", "non-REAL value in s.c6"},
	{"row 2", "non-TEXT value in s.c8"}, {"row 2", "non-BLOB value in s.c9"},
}

// TestStrictTypes: pagoda reports exactly the rows and columns of STRICT
// tables that sqlite3's integrity_check reports ("non-INTEGER value in
// t.a", "NULL value in t.a"), and nothing in sound STRICT tables.
func TestStrictTypes(t *testing.T) {
	msgs := func(ps []rowProblem) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.msg)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		stmts []string
		want  []rowProblem
		// sqliteOnly are the lines sqlite3 reports that pagoda does not.
		sqliteOnly []string
	}{
		{name: "sound", stmts: []string{
			"PRAGMA page_size=512",
			"CREATE TABLE t(id INTEGER PRIMARY KEY, i INT, n INTEGER, r REAL, x TEXT, b BLOB, a ANY, nn TEXT NOT NULL) STRICT",
			"INSERT INTO t VALUES (1, NULL, NULL, NULL, NULL, NULL, NULL, '')",
			"INSERT INTO t VALUES (2, 0, 1, 3, 'x', x'00', 1, 'n')",         // 3 in a REAL column: stored as an integer
			"INSERT INTO t VALUES (3, -9e15, 1e3, 2.5, 7, x'07', 2.5, 'n')", // whole reals into INT(EGER), a number into TEXT: converted
			"INSERT INTO t VALUES (4, 9223372036854775807, -1, -0.0, printf('%.2000c', 'y'), zeroblob(3000), 'a', 'n')",
			"INSERT INTO t(id, a, nn) VALUES (5, x'0102', 'n'), (6, NULL, 'n')",
			"CREATE TABLE w(k TEXT PRIMARY KEY, v REAL NOT NULL, o ANY) STRICT, WITHOUT ROWID",
			"INSERT INTO w VALUES ('a', 1, NULL), ('b', 2.5, 'x'), (printf('%.600c', 'k'), 3, x'00')",
			"CREATE TABLE g(id INTEGER PRIMARY KEY, a INT, v INT AS (a * 2) VIRTUAL, s TEXT AS (CAST(a AS TEXT)) STORED) STRICT",
			"INSERT INTO g(id, a) VALUES (1, 5), (2, NULL)",
			"CREATE TABLE e(id INTEGER PRIMARY KEY, v ANY) STRICT",
			"INSERT INTO e VALUES (1, 1)",
			"ALTER TABLE e ADD COLUMN c INTEGER DEFAULT '5'",
			"ALTER TABLE e ADD COLUMN d REAL DEFAULT 3",
			"ALTER TABLE e ADD COLUMN f TEXT",
		}},
		{name: "every storage class against every type", stmts: strictSetup, want: []rowProblem{
			{"row 2", "non-TEXT value in t.x"}, {"row 2", "non-BLOB value in t.b"},
			{"row 3", "non-INT value in t.i"}, {"row 3", "non-INTEGER value in t.n"},
			{"row 3", "non-TEXT value in t.x"}, {"row 3", "non-BLOB value in t.b"},
			{"row 4", "non-INT value in t.i"}, {"row 4", "non-INTEGER value in t.n"},
			{"row 4", "non-REAL value in t.r"}, {"row 4", "non-BLOB value in t.b"},
			{"row 5", "non-INT value in t.i"}, {"row 5", "non-INTEGER value in t.n"},
			{"row 5", "non-REAL value in t.r"}, {"row 5", "non-TEXT value in t.x"},
		}},
		{name: "NULL in a NOT NULL column", stmts: []string{
			"CREATE TABLE t(id INTEGER PRIMARY KEY, a, b)",
			"INSERT INTO t VALUES (1, NULL, NULL), (2, 'x', 3)",
			"PRAGMA writable_schema=ON",
			"UPDATE sqlite_schema SET sql = 'CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b ANY NOT NULL) STRICT' WHERE name = 't'",
		}, want: []rowProblem{
			// A NULL is reported once, not also as a non-INTEGER value.
			{"row 1", "NULL value in t.a"}, {"row 1", "NULL value in t.b"}, {"row 2", "non-INTEGER value in t.a"},
		}},
		{name: "WITHOUT ROWID", stmts: []string{
			"CREATE TABLE w(k, v, PRIMARY KEY(k)) WITHOUT ROWID",
			"INSERT INTO w VALUES (1, 'a'), ('b', 2)",
			"PRAGMA writable_schema=ON",
			"UPDATE sqlite_schema SET sql = 'CREATE TABLE w(k TEXT, v INT NOT NULL, PRIMARY KEY(k)) STRICT, WITHOUT ROWID' WHERE name = 'w'",
		}, want: []rowProblem{
			{`row (1, "a")`, "non-TEXT value in w.k"}, {`row (1, "a")`, "non-INT value in w.v"},
		}},
		{name: "ALTER TABLE ADD COLUMN", stmts: strictAlterSQL, want: alterWant},
		{name: "generated column", stmts: []string{
			// SQLite 3.54 checks a generated column's type on insert,
			// hence the detour. (A VIRTUAL column, which pagoda does not
			// compute, is not checked: sqlite3 3.40 reports one of the
			// wrong type, SQLite 3.54's integrity_check fails on it.)
			"CREATE TABLE g(id INTEGER PRIMARY KEY, a TEXT, s INTEGER AS (a || 'y') STORED)",
			"INSERT INTO g(id, a) VALUES (1, 'p'), (2, NULL)",
			"PRAGMA writable_schema=ON",
			"UPDATE sqlite_schema SET sql = sql || ' STRICT' WHERE name = 'g'",
		}, want: []rowProblem{{"row 1", "non-INTEGER value in g.s"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			im := build(t, tc.stmts...)
			got := Run(newMemPages(im.data), nil, nil)
			left := slices.Clone(got)
			for _, w := range tc.want {
				m := ": " + w.row + ": " + w.msg
				i := slices.IndexFunc(left, func(p Problem) bool {
					return strings.HasPrefix(p.Msg, "table ") && (strings.HasSuffix(p.Msg, m) || strings.Contains(p.Msg, m+" ("))
				})
				if i < 0 {
					t.Errorf("missing: %s: %s", w.row, w.msg)
					continue
				}
				left = slices.Delete(left, i, i+1)
			}
			if len(left) > 0 {
				t.Errorf("unexpected problems:\n%s", joinProblems(left))
			}
			// SQLite reports the same, and sqliteOnly.
			ic := append(msgs(tc.want), tc.sqliteOnly...)
			slices.Sort(ic)
			sq := sqliteCheck(t, im.data)
			slices.Sort(sq)
			if !slices.Equal(sq, ic) {
				t.Errorf("sqlite's integrity_check:\n%s\nwant:\n%s", strings.Join(sq, "\n"), strings.Join(ic, "\n"))
			}
			if out, ok := sqliteIntegrity(t, im.data); ok {
				var cli []string
				if out != "ok" {
					cli = strings.Split(out, "\n")
				}
				slices.Sort(cli)
				if !slices.Equal(cli, ic) {
					t.Errorf("sqlite3 CLI integrity_check:\n%s\nwant:\n%s", out, strings.Join(ic, "\n"))
				}
			}
			if t.Failed() {
				t.Logf("pagoda:\n%s", joinProblems(got))
			}
		})
	}
}

// TestRecordEnd: recordEnd passes exactly the records format.CheckRecord
// accepts whose fields fill them (rowRecord relies on it), and says what
// is wrong in CheckRecord's words, on records of random values, cut short,
// run on and with random bytes changed or made serial types 10 and 11.
// With reservedNull, it reads the record as CheckRecord reads the record
// with those types made 0 (NULL).
func TestRecordEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var vals []format.Value
		for range rng.IntN(6) {
			switch rng.IntN(5) {
			case 0:
				vals = append(vals, format.NullValue())
			case 1:
				vals = append(vals, format.IntValue(rng.Int64()>>rng.IntN(64)))
			case 2:
				vals = append(vals, format.FloatValue(rng.Float64()))
			case 3:
				vals = append(vals, format.TextValue(make([]byte, rng.IntN(200))))
			default:
				vals = append(vals, format.BlobValue(make([]byte, rng.IntN(9000))))
			}
		}
		rec := format.AppendRecord(nil, vals)
		switch rng.IntN(5) {
		case 0:
			rec = rec[:rng.IntN(len(rec)+1)]
		case 1:
			rec = append(rec, make([]byte, 1+rng.IntN(3))...)
		case 2:
			for range 1 + rng.IntN(3) {
				rec[rng.IntN(min(len(rec), 12))] = byte(rng.Uint32())
			}
		case 3:
			if h := int(rec[0]); h > 1 && h < 0x80 {
				rec[1+rng.IntN(h-1)] = byte(10 + rng.IntN(2))
			}
		}
		for _, reservedNull := range []bool{false, true} {
			ref := rec
			if reservedNull {
				ref = nullReserved(rec)
			}
			end, bad, _ := recordEnd(rec, reservedNull, -1)
			_, err := format.CheckRecord(ref)
			msg := bad
			if bad == "" && end > int64(len(rec)) {
				msg = msgBodyShort
			}
			if err == nil && msg != "" || err != nil && err.Error() != (&format.CorruptError{Offset: -1, Msg: msg}).Error() {
				t.Fatalf("record %x (reservedNull %v): recordEnd = %d, %q; CheckRecord: %v", rec, reservedNull, end, bad, err)
			}
		}
	}
}

// nullReserved returns a copy of rec with each serial type 10 or 11 of its
// header made 0, as far as the header can be read.
func nullReserved(rec []byte) []byte {
	out := slices.Clone(rec)
	h, pos := format.Uvarint(out)
	if pos == 0 || h > uint64(len(out)) {
		return out
	}
	for pos < int(h) {
		st, n := format.Uvarint(out[pos:h])
		if n == 0 {
			break
		}
		if st == 10 || st == 11 {
			out[pos+n-1] = 0 // the varint's last byte holds the low bits; the others are 0x80
		}
		pos += n
	}
	return out
}

// TestRowFieldsPastParse: SQLite's check of a row's header decodes only
// the fields up to the table's last stored column (rowParse): a row with
// more fields (a table whose SQL lost columns) has the rest of its header
// and body unread, and a table of the rowid alias alone has none read.
// pagoda reports such a row exactly when SQLite 3.54 does.
func TestRowFieldsPastParse(t *testing.T) {
	setup := []string{
		"PRAGMA page_size=1024",
		"CREATE TABLE u(a, b, c)",                   // root 2
		"CREATE TABLE v(id INTEGER PRIMARY KEY, b)", // root 3
		"CREATE TABLE w(a, b, c)",                   // root 4
		"INSERT INTO u VALUES (1, 'x', 'tail')",
		"INSERT INTO v VALUES (1, 'tail')",
		"INSERT INTO w VALUES (1, 'x', 'tail')",
		"PRAGMA writable_schema=ON",
		"UPDATE sqlite_schema SET sql = 'CREATE TABLE u(a, b)' WHERE name = 'u'",
		"UPDATE sqlite_schema SET sql = 'CREATE TABLE v(id INTEGER PRIMARY KEY)' WHERE name = 'v'",
	}
	last := func(d int) func(rec []byte) { return func(rec []byte) { rec[rec[0]-1] = byte(int(rec[rec[0]-1]) + d) } }
	for _, c := range []struct {
		name     string
		root     uint32
		damage   func(rec []byte)
		reported bool
	}{
		{"extra field's bytes short", 2, last(-2), false},
		{"extra field's type reserved", 2, func(rec []byte) { rec[rec[0]-1] = 10 }, false},
		{"extra field past the payload", 2, last(2), false},
		{"decoded field past the payload", 2, func(rec []byte) { rec[rec[0]-2] += 20 }, true},
		{"alias alone: bytes short", 3, last(-2), false},
		{"alias alone: field past the payload", 3, last(20), false},
		{"every field decoded: bytes short", 4, last(-2), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			im := build(t, setup...)
			data := im.clone()
			if got := Run(newMemPages(data), nil, nil); len(got) != 0 {
				t.Fatalf("sound file: %s", joinProblems(got))
			}
			pgno, cell := leafCell(t, im, data, c.root, 1)
			c.damage(cell.Local)
			got := Run(newMemPages(data), nil, nil)
			ic := sqliteCheck(t, data)
			if (ic != nil) != c.reported {
				t.Fatalf("fixture: SQLite's integrity_check = %q, want reported %v", ic, c.reported)
			}
			if c.reported != (len(got) == 1 && got[0].Page == pgno) || !c.reported && len(got) != 0 {
				t.Errorf("pagoda: %s; SQLite: %q", joinProblems(got), ic)
			}
		})
	}
}

// TestRecordTooBig: a record longer than SQLite reads (format.MaxLength;
// lowered here to 1,000 bytes so that SQLite can write the file) is
// reported on its page, row and index entry alike, and its overflow pages
// still count as used: nothing else is reported.
func TestRecordTooBig(t *testing.T) {
	im := build(t,
		"CREATE TABLE t(id INTEGER PRIMARY KEY, a BLOB)",
		"CREATE INDEX ta ON t(a)",
		"INSERT INTO t VALUES (1, zeroblob(100)), (2, x'01' || zeroblob(4999)), (3, x'02' || zeroblob(299))", // in this order in ta too
	)
	if got := Run(newMemPages(im.data), nil, nil); len(got) != 0 {
		t.Fatalf("at SQLite's own limit: %v", got)
	}
	defer func(n int64) { maxLength = n }(maxLength)
	maxLength = 1000
	got := Run(newMemPages(im.data), nil, nil)
	if len(got) != 2 {
		t.Fatalf("%d problems, want the row and its index entry: %v", len(got), got)
	}
	for i, want := range []string{"table t: cell 1: a record of 5004 bytes", "index ta: cell "} {
		if !strings.Contains(got[i].Msg, want) || !strings.Contains(got[i].Msg, []string{"5004", "5005"}[i]) || !strings.Contains(got[i].Msg, "string or blob too big") || got[i].Page == 0 {
			t.Errorf("problem %d: %+v, want %q on its page", i, got[i], want)
		}
	}
}
