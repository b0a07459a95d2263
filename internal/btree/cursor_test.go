package btree

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// fixture builds a database with SQLite and opens it with the pager.
func fixture(t testing.TB, pageSize int, stmts ...string) (*pager.Pager, *sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	sqltest.Exec(t, path, append([]string{fmt.Sprintf("PRAGMA page_size=%d", pageSize)}, stmts...)...)
	p, err := pager.Open(path, pager.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, sqltest.Open(t, path), path
}

func rootOf(t testing.TB, db *sql.DB, name string) uint32 {
	t.Helper()
	var root uint32
	if err := db.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name=?", name).Scan(&root); err != nil {
		t.Fatal(err)
	}
	return root
}

func rowids(t testing.TB, db *sql.DB, q string) []int64 {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

const series = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<%d) "

func TestTableCursor(t *testing.T) {
	for _, ps := range []int{512, 4096, 65536} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			p, db, _ := fixture(t, ps,
				"CREATE TABLE t(a)",
				fmt.Sprintf(series+"INSERT INTO t(rowid, a) SELECT x*3 - 5000, randomblob(abs(random()) %% 300) FROM c", 4000),
				"INSERT INTO t(rowid, a) VALUES (-9223372036854775808, 1), (9223372036854775807, randomblob(70000))",
				"DELETE FROM t WHERE rowid % 11 = 0")
			want := rowids(t, db, "SELECT rowid FROM t ORDER BY rowid")
			s := p.Snapshot()
			var c Cursor
			c.Init(s, rootOf(t, db, "t"), true, nil)
			var got []int64
			for ok := c.First(); ok; ok = c.Next() {
				got = append(got, c.Rowid())
			}
			if c.Err() != nil {
				t.Fatal(c.Err())
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("forward scan differs: %d rows, want %d", len(got), len(want))
			}
			got = got[:0]
			for ok := c.Last(); ok; ok = c.Prev() {
				got = append(got, c.Rowid())
			}
			for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
				got[i], got[j] = got[j], got[i]
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatal("backward scan differs")
			}
			// Seek every rowid and a neighbourhood of missing ones.
			r := rand.New(rand.NewPCG(1, 2))
			for i := 0; i < 2000; i++ {
				target := want[r.IntN(len(want))] + int64(r.IntN(5)) - 2
				var next int64
				found := false
				for _, w := range want {
					if w >= target {
						next, found = w, true
						break
					}
				}
				exact := c.SeekRowid(target)
				if c.Valid() != found || (found && (c.Rowid() != next || exact != (next == target))) {
					t.Fatalf("SeekRowid(%d): valid %v rowid %d exact %v; want found %v next %d", target, c.Valid(), c.Rowid(), exact, found, next)
				}
			}
			if c.SeekRowid(9223372036854775807); !c.Valid() {
				t.Fatal("max rowid not found")
			}
			payload, err := c.Payload()
			if err != nil {
				t.Fatal(err)
			}
			var blob []byte
			if err := db.QueryRow("SELECT a FROM t WHERE rowid=9223372036854775807").Scan(&blob); err != nil {
				t.Fatal(err)
			}
			v, _, err := format.RecordField(payload, 0)
			if err != nil || !bytes.Equal(v.Bytes, blob) {
				t.Fatalf("overflowing payload differs (err %v)", err)
			}
			if n, err := Count(s, rootOf(t, db, "t"), true); err != nil || n != int64(len(want)) {
				t.Fatalf("Count = %d, %v; want %d", n, err, len(want))
			}
		})
	}
}

// An index whose keys are large enough that interior pages hold entries:
// the in-order walk visits interior cells too, and seeks land on them.
func TestIndexCursor(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			p, db, _ := fixture(t, ps,
				"CREATE TABLE t(a TEXT)",
				"CREATE INDEX ia ON t(a)",
				fmt.Sprintf(series+"INSERT INTO t SELECT printf('%%08d', abs(random()) %% 100000) || hex(randomblob(abs(random()) %% 600)) FROM c", 3000),
				fmt.Sprintf(series+"INSERT INTO t SELECT printf('%%08d', x*17) FROM c", 500))
			s := p.Snapshot()
			root := rootOf(t, db, "ia")
			var c Cursor
			c.Init(s, root, false, nil)
			wantKeys := func(q string) []string {
				rows, err := db.Query(q)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var out []string
				for rows.Next() {
					var a string
					var r int64
					rows.Scan(&a, &r)
					out = append(out, fmt.Sprintf("%s/%d", a, r))
				}
				return out
			}
			key := func() string {
				payload, err := c.Payload()
				if err != nil {
					t.Fatal(err)
				}
				a, _, _ := format.RecordField(payload, 0)
				r, _, _ := format.RecordField(payload, 1)
				return fmt.Sprintf("%s/%d", a.Bytes, r.Int())
			}
			want := wantKeys("SELECT a, rowid FROM t ORDER BY a, rowid")
			var got []string
			interior := 0
			for ok := c.First(); ok; ok = c.Next() {
				got = append(got, key())
				if pg, _ := c.Page(); !pg.Type.IsLeaf() {
					interior++
				}
			}
			if c.Err() != nil {
				t.Fatal(c.Err())
			}
			if interior == 0 {
				t.Fatal("no entry came from an interior page; the fixture is too small")
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("index scan differs: %d entries, want %d", len(got), len(want))
			}
			var back []string
			for ok := c.Last(); ok; ok = c.Prev() {
				back = append(back, key())
			}
			for i := range back {
				if back[i] != want[len(want)-1-i] {
					t.Fatalf("backward entry %d = %s, want %s", i, back[i], want[len(want)-1-i])
				}
			}
			if n, err := Count(s, root, false); err != nil || n != int64(len(want)) {
				t.Fatalf("Count = %d, %v", n, err)
			}
			// Prefix seeks against SQLite's answer.
			r := rand.New(rand.NewPCG(3, 4))
			for i := 0; i < 300; i++ {
				prefix := fmt.Sprintf("%08d", r.IntN(100000))
				if i%3 == 0 {
					prefix = fmt.Sprintf("%08d", r.IntN(500)*17)
				}
				exact := c.SeekKey([]format.Value{format.TextValue([]byte(prefix))})
				w := wantKeys(fmt.Sprintf("SELECT a, rowid FROM t WHERE a >= '%s' ORDER BY a, rowid LIMIT 1", prefix))
				if len(w) == 0 {
					if c.Valid() {
						t.Fatalf("SeekKey(%s) found %s, want nothing", prefix, key())
					}
					continue
				}
				if !c.Valid() || key() != w[0] {
					t.Fatalf("SeekKey(%s) = %v, want %s", prefix, c.Valid(), w[0])
				}
				if exact != (w[0][:len(prefix)+1] == prefix+"/") {
					t.Fatalf("SeekKey(%s) exact = %v at %s", prefix, exact, w[0])
				}
			}
		})
	}
}

func TestEmptyTree(t *testing.T) {
	p, db, _ := fixture(t, 4096, "CREATE TABLE t(a)", "CREATE INDEX i ON t(a)")
	for _, tc := range []struct {
		name  string
		table bool
	}{{"t", true}, {"i", false}} {
		var c Cursor
		c.Init(p.Snapshot(), rootOf(t, db, tc.name), tc.table, nil)
		if c.First() || c.Last() || c.Err() != nil {
			t.Fatalf("%s: empty tree positioned (err %v)", tc.name, c.Err())
		}
		if tc.table && (c.SeekRowid(1) || c.Valid()) {
			t.Fatal("seek in an empty tree")
		}
	}
}

// Hand-damaged trees: errors that name the page, never a hang or a panic.
func TestCorruptTrees(t *testing.T) {
	_, db, path := fixture(t, 512,
		"CREATE TABLE t(a)",
		fmt.Sprintf(series+"INSERT INTO t SELECT randomblob(100 + x %% 1000) FROM c", 800))
	root := rootOf(t, db, "t")
	db.Close()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := func(b []byte, pgno uint32) []byte { return b[int(pgno-1)*512 : int(pgno)*512] }
	rootPage := page(orig, root)
	if rootPage[0] != byte(format.PageTableInterior) {
		t.Fatal("root is not interior; grow the fixture")
	}
	firstChild := binary.BigEndian.Uint32(page(orig, root)[binary.BigEndian.Uint16(rootPage[12:]):])
	tests := []struct {
		name   string
		mutate func(b []byte)
	}{
		{"child points to root (cycle)", func(b []byte) {
			off := binary.BigEndian.Uint16(page(b, root)[12:])
			binary.BigEndian.PutUint32(page(b, root)[off:], root)
		}},
		{"right child points to root", func(b []byte) { binary.BigEndian.PutUint32(page(b, root)[8:], root) }},
		{"child out of range", func(b []byte) { binary.BigEndian.PutUint32(page(b, root)[8:], 1<<30) }},
		{"child is page 0", func(b []byte) { binary.BigEndian.PutUint32(page(b, root)[8:], 0) }},
		{"bad page type", func(b []byte) { page(b, firstChild)[0] = 7 }},
		{"index page in table tree", func(b []byte) { page(b, firstChild)[0] = byte(format.PageIndexLeaf) }},
		{"cell count too big", func(b []byte) { binary.BigEndian.PutUint16(page(b, firstChild)[3:], 400) }},
		{"cell pointer past end", func(b []byte) { binary.BigEndian.PutUint16(page(b, firstChild)[8:], 600) }},
		{"cell pointer into header", func(b []byte) { binary.BigEndian.PutUint16(page(b, firstChild)[8:], 2) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := append([]byte(nil), orig...)
			tt.mutate(b)
			bad := filepath.Join(t.TempDir(), "bad.db")
			os.WriteFile(bad, b, 0o644)
			p, err := pager.Open(bad, pager.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			var c Cursor
			c.Init(p.Snapshot(), root, true, nil)
			n := 0
			for ok := c.First(); ok; ok = c.Next() {
				if _, err := c.Payload(); err != nil {
					break
				}
				if n++; n > 100000 {
					t.Fatal("scan does not end")
				}
			}
			err = c.Err()
			if err == nil {
				for ok := c.Last(); ok; ok = c.Prev() {
				}
				err = c.Err()
			}
			if err == nil {
				err = Walk(p.Snapshot(), root, true, true, func(PageVisit) error { return nil })
			}
			var ce *format.CorruptError
			if !errors.Is(err, format.ErrCorrupt) || !errors.As(err, &ce) || ce.Page == 0 {
				t.Fatalf("err = %v, want a CorruptError naming a page", err)
			}
		})
	}
}

// spilledRow is a 512-byte-page database of one row that spills onto
// overflow pages: its bytes, its table's root (a leaf) and the row's cell.
func spilledRow(t *testing.T) (b []byte, root uint32, leaf format.Page, cell format.Cell) {
	t.Helper()
	_, db, path := fixture(t, 512, "CREATE TABLE t(a)", "INSERT INTO t VALUES (randomblob(5000))")
	root = rootOf(t, db, "t")
	db.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if leaf, err = format.ParsePage(b[int(root-1)*512:int(root)*512], root, 512); err != nil {
		t.Fatal(err)
	}
	if cell, err = leaf.Cell(0); err != nil {
		t.Fatal(err)
	}
	return b, root, leaf, cell
}

// firstRowOf opens database bytes b read-only and returns a cursor on the
// first row of the table rooted at root.
func firstRowOf(t *testing.T, b []byte, root uint32) *Cursor {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bad.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pager.Open(path, pager.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	cur := new(Cursor)
	cur.Init(p.Snapshot(), root, true, nil)
	if !cur.First() {
		t.Fatal(cur.Err())
	}
	return cur
}

// An overflow chain that loops or ends early is an error.
func TestCorruptOverflow(t *testing.T) {
	b, root, _, cell := spilledRow(t)
	first := cell.Overflow
	for name, next := range map[string]uint32{"loop": first, "ends early": 0, "out of range": 99999} {
		t.Run(name, func(t *testing.T) {
			c := append([]byte(nil), b...)
			binary.BigEndian.PutUint32(c[int(first-1)*512:], next)
			cur := firstRowOf(t, c, root)
			payload, err := cur.Payload()
			if name == "loop" {
				// A loop is bounded by the payload length: the bytes come out
				// wrong but the read ends; Walk names it as a second reference.
				if err != nil && !errors.Is(err, format.ErrCorrupt) {
					t.Fatal(err)
				}
				_ = payload
				return
			}
			if !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// TestHugePayloadLength: a cell whose payload length claims far more bytes
// than the database's pages hold is corruption found before the payload is
// assembled: a damaged length of 2 GB was a 2 GB allocation per read.
func TestHugePayloadLength(t *testing.T) {
	const ps = 512
	b, root, leaf, cell := spilledRow(t)
	off, err := leaf.CellOffset(0)
	if err != nil {
		t.Fatal(err)
	}
	// A length whose local part is the minimum, so that the new cell fits
	// where the old one was: payload varint, rowid, local bytes, first
	// overflow page.
	minLocal := format.MinLocal(ps)
	per := int64(ps - format.OverflowPageHeaderSize)
	huge := int64(minLocal) + per*((1<<31-1-int64(minLocal))/per)
	if format.LocalSize(huge, ps, true) != minLocal {
		t.Fatalf("fixture: local size %d", format.LocalSize(huge, ps, true))
	}
	pg := b[int(root-1)*ps : int(root)*ps]
	n := format.PutUvarint(pg[off:], uint64(huge))
	n += format.PutUvarint(pg[off+n:], 1)
	n += minLocal
	binary.BigEndian.PutUint32(pg[off+n:], cell.Overflow)
	cur := firstRowOf(t, b, root)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = cur.Payload()
	runtime.ReadMemStats(&after)
	var ce *format.CorruptError
	if !errors.As(err, &ce) || ce.Page != root {
		t.Errorf("Payload: %v, want ErrCorrupt naming page %d", err, root)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("Payload allocated %d bytes for a payload of %d bytes claimed in a %d-byte file", grew, huge, len(b))
	}
	if _, err := cur.PayloadRef(); !errors.As(err, &ce) || ce.Page != root {
		t.Errorf("PayloadRef: %v, want ErrCorrupt naming page %d", err, root)
	}
}

// TestSeekRowidShapes seeks every key of tables whose rowids are spread in
// different ways, and the gaps beside each: SeekRowid guesses a cell's
// position from the keys around a page (and, at the root, from its first
// and last keys), and each shape misleads the guess differently. Rows of
// equal size, as here, make the guessed cell's cache lines exact for dense
// keys; rows of random size make them wrong.
func TestSeekRowidShapes(t *testing.T) {
	shapes := []struct{ name, expr string }{
		{"dense", "x"},
		{"dense-negative", "x - 30000"},
		{"squares", "x*x"},
		{"clusters", "(x / 100) * 1000000000000 + x % 100"},
		{"huge-gaps", "CASE WHEN x % 2 = 0 THEN 9223372036854775807 - x ELSE -9223372036854775807 + x END"},
		{"sparse-head", "CASE WHEN x < 100 THEN x * 100000 ELSE 10000000 + x END"},
	}
	for _, ps := range []int{512, 4096} {
		for _, sh := range shapes {
			for _, size := range []string{"60", "abs(random()) % 200"} {
				name := fmt.Sprintf("%d/%s/%s", ps, sh.name, map[bool]string{true: "equal", false: "random"}[size == "60"])
				t.Run(name, func(t *testing.T) {
					p, db, _ := fixture(t, ps, "CREATE TABLE t(a)",
						fmt.Sprintf(series+"INSERT INTO t(rowid, a) SELECT %s, randomblob(%s) FROM c", 6000, sh.expr, size))
					want := rowids(t, db, "SELECT rowid FROM t ORDER BY rowid")
					var c Cursor
					c.Init(p.Snapshot(), rootOf(t, db, "t"), true, nil)
					seek := func(target int64) {
						t.Helper()
						i, _ := slices.BinarySearch(want, target)
						// FindRowid, the lookups' short path, makes the same
						// search: it must find exactly the rows SeekRowid
						// finds, with the same payload, and never give up on
						// a well-formed tree whose rows all fit their leaves.
						found, _, st := c.FindRowid(target)
						exact := c.SeekRowid(target)
						if c.Err() != nil {
							t.Fatal(c.Err())
						}
						switch {
						case st == FindUnsure:
							t.Fatalf("FindRowid(%d) unsure", target)
						case (st == FindFound) != exact:
							t.Fatalf("FindRowid(%d) = %d, SeekRowid exact %v", target, st, exact)
						case exact:
							if pl, err := c.Payload(); err != nil || !bytes.Equal(pl, found) {
								t.Fatalf("FindRowid(%d) payload %x, SeekRowid's %x (%v)", target, found, pl, err)
							}
						}
						if i == len(want) {
							if c.Valid() || exact {
								t.Fatalf("SeekRowid(%d) = %v on %d; want past the end", target, exact, c.Rowid())
							}
							return
						}
						if !c.Valid() || c.Rowid() != want[i] || exact != (want[i] == target) {
							t.Fatalf("SeekRowid(%d): valid %v rowid %d exact %v; want %d", target, c.Valid(), c.Rowid(), exact, want[i])
						}
					}
					for _, k := range seekTargets(want) {
						seek(k)
					}
				})
			}
		}
	}
}

func BenchmarkSeekRowid(b *testing.B) {
	p, db, _ := fixture(b, 4096, "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)",
		fmt.Sprintf(series+"INSERT INTO t SELECT x, randomblob(100) FROM c", 100000))
	var c Cursor
	c.Init(p.Snapshot(), rootOf(b, db, "t"), true, nil)
	keys := make([]int64, 4096)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range keys {
		keys[i] = 1 + r.Int64N(100000)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if !c.SeekRowid(keys[i&4095]) {
			b.Fatal("missing")
		}
		if _, err := c.Payload(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScan(b *testing.B) {
	p, db, _ := fixture(b, 4096, "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)",
		fmt.Sprintf(series+"INSERT INTO t SELECT x, randomblob(100) FROM c", 100000))
	var c Cursor
	c.Init(p.Snapshot(), rootOf(b, db, "t"), true, nil)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for ok := c.First(); ok; ok = c.Next() {
			pl, _ := c.Payload()
			n += len(pl)
		}
		if n == 0 {
			b.Fatal("empty")
		}
	}
}

// TestCursorDeepTree walks, seeks and steps a tree deeper than the levels a
// cursor holds itself (inlineDepth): an index of long keys on 512-byte
// pages. The levels past them live in a slice the cursor allocates.
func TestCursorDeepTree(t *testing.T) {
	m := newMemPager(512, true)
	wr := NewWriter(m)
	root, err := wr.CreateTree(false)
	if err != nil {
		t.Fatal(err)
	}
	im := &indexModel{nKey: 0, entries: map[string][]byte{}}
	r := rand.New(rand.NewPCG(3, 4))
	keys := map[string][]format.Value{}
	for i := range 40000 {
		key := format.TextValue(fmt.Appendf(nil, "%08d%s", r.IntN(1_000_000), bytes.Repeat([]byte{'k'}, 88)))
		vals := []format.Value{key, format.IntValue(int64(i))}
		e := format.AppendRecord(nil, vals)
		keys[string(e)] = vals
		if _, err := wr.IndexInsert(root, nil, 0, e); err != nil {
			t.Fatal(err)
		}
		im.entries[im.identity(e)] = e
	}
	checkIndex(t, m, root, im)
	var c Cursor
	c.Init(m, root, false, nil)
	if !c.First() {
		t.Fatal(c.Err())
	}
	if c.depth <= inlineDepth || c.deep == nil {
		t.Fatalf("tree of depth %d: want more than the cursor's %d inline levels", c.depth, inlineDepth)
	}
	// Every entry found by a seek, from the root and from near the last.
	var near Cursor
	near.Init(m, root, false, nil)
	for i, e := range im.sorted() {
		if i%7 != 0 {
			continue
		}
		key := keys[string(e)]
		for _, cur := range []*Cursor{&c, &near} {
			ok := false
			if cur == &c {
				ok = cur.SeekKey(key)
			} else {
				ok = cur.SeekKeyNear(key)
			}
			p, err := cur.Payload()
			if !ok || err != nil || !bytes.Equal(p, e) {
				t.Fatalf("seek of entry %d: %v %v, %d bytes", i, ok, err, len(p))
			}
		}
	}
}

// TestCursorRuns walks trees with two cursors, one decoding runs of cells
// (UseRuns) and one not, through random First, Last, Next, Prev and seeks:
// every step lands both on the same entry, with the same rowid, payload
// and page. The trees mix plain cells with empty payloads and payloads
// that spill (which a run stops before), and the index tree holds entries
// in its interior cells.
func TestCursorRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	m := newMemPager(512, false)
	wr := NewWriter(m)
	table := must(wr.CreateTree(true))
	for k := int64(1); k <= 2000; k++ {
		if _, err := wr.TableInsert(table, k*2, payloadFor(k, 0, sizeDist(r, 512, 10))); err != nil {
			t.Fatal(err)
		}
	}
	index := must(wr.CreateTree(false))
	for i := range 2000 {
		key := fmt.Appendf(nil, "%06d%s", r.IntN(1_000_000), bytes.Repeat([]byte{'k'}, sizeDist(r, 512, 10)))
		if _, err := wr.IndexInsert(index, nil, 0, rec(format.BlobValue(key), format.IntValue(int64(i)))); err != nil {
			t.Fatal(err)
		}
	}
	for _, src := range []Pages{m, flatCopy(m)} {
		for _, tree := range []struct {
			name  string
			root  uint32
			table bool
		}{{"table", table, true}, {"index", index, false}} {
			var a, b Cursor
			a.Init(src, tree.root, tree.table, nil)
			a.UseRuns(new([RunLen]format.TableCell))
			b.Init(src, tree.root, tree.table, nil)
			fromRun := 0
			for step := range 20_000 {
				var op string
				var okA, okB bool
				switch x := r.IntN(100); {
				case x < 2 || !a.Valid():
					op, okA, okB = "First", a.First(), b.First()
				case x < 4:
					op, okA, okB = "Last", a.Last(), b.Last()
				case x < 6:
					op = "Seek"
					if tree.table {
						rowid := r.Int64N(4002)
						a.SeekRowid(rowid)
						b.SeekRowid(rowid)
					} else {
						key := []format.Value{format.BlobValue(fmt.Appendf(nil, "%06d", r.IntN(1_000_000)))}
						a.SeekKey(key)
						b.SeekKey(key)
					}
					okA, okB = a.Valid(), b.Valid()
				case x < 30:
					op, okA, okB = "Prev", a.Prev(), b.Prev()
				default:
					op, okA, okB = "Next", a.Next(), b.Next()
				}
				if okA != okB || a.Err() != nil || b.Err() != nil {
					t.Fatalf("%s step %d (%s): %v %v, errors %v %v", tree.name, step, op, okA, okB, a.Err(), b.Err())
				}
				if !okA {
					continue
				}
				ra, pa, ga, errA := a.Entry()
				rb, pb, gb, errB := b.Entry()
				if ra != rb || !bytes.Equal(pa, pb) || ga != gb || errA != nil || errB != nil {
					t.Fatalf("%s step %d (%s): entry %d (%d bytes) on page %d, %v; want %d (%d bytes) on page %d, %v", tree.name, step, op, ra, len(pa), ga, errA, rb, len(pb), gb, errB)
				}
				if a.runN > 0 {
					fromRun++
				}
			}
			if fromRun < 5000 {
				t.Errorf("%s: %d of 20,000 entries came from a run", tree.name, fromRun)
			}
		}
	}
	var c Cursor
	c.Init(m, table, true, nil)
	c.UseRuns(new([RunLen]format.TableCell))
	c.Init(m, table, true, nil)
	c.First()
	c.Entry()
	if c.run != nil || c.runN != 0 {
		t.Errorf("Init left the cursor's runs on")
	}
}

// TestLoadAhead: a forward walk requests the lines of the leaf after the
// one it is on, as far as that leaf goes and never past it, whether the
// page is a whole number of lines or not.
func TestLoadAhead(t *testing.T) {
	for _, size := range []int{0, 1, 63, 64, 65, 127, 128, 500, 512, 4096, 4000} {
		var c Cursor
		c.ahead = make([]byte, size)
		for i := range c.ahead {
			c.ahead[i] = 1
		}
		asked := 0
		for range 200 {
			before := c.line
			c.loadAhead(format.LinesAhead)
			asked += (c.line - before) / format.CacheLine
		}
		if want := (size + format.CacheLine - 1) / format.CacheLine; asked != want {
			t.Errorf("a leaf of %d bytes: %d lines requested, want %d", size, asked, want)
		}
		// A Scan asks for two lines at a time, and leaves an odd last one.
		s := Scan{ahead: c.ahead}
		asked = 0
		for range 200 {
			before := s.line
			s.Ahead()
			asked += (s.line - before) / format.CacheLine
		}
		if want := (size + format.CacheLine - 1) / format.CacheLine / 2 * 2; asked != want {
			t.Errorf("a Scan over a leaf of %d bytes: %d lines requested, want %d", size, asked, want)
		}
	}
}
