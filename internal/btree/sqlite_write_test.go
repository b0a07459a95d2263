package btree

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// The differential test: SQLite makes a database with a rowid table, two
// indexes on it (one on a column of large blobs, so index cells overflow)
// and a WITHOUT ROWID table of the bucket shape; the writer applies random
// workloads to the image, keeping the indexes consistent; SQLite then runs
// PRAGMA integrity_check, which must say "ok", and its SELECTs must equal
// the model. Between phases SQLite changes the file too (leaving
// freeblocks, fragments and its own freelist pages for the writer to cope
// with), and the model is reloaded from it.

type diffRow struct{ a, b format.Value }

type diffModel struct {
	rows map[int64]diffRow
	kv   map[string][]byte // bucket: key -> value
}

type diffDB struct {
	t             *testing.T
	path          string
	ps            int
	m             *memPager
	wr            *Writer
	tRoot, taRoot uint32
	tbRoot, wRoot uint32
	model         diffModel
	r             *rand.Rand
	version       int
}

func sqlValue(x any) format.Value {
	switch v := x.(type) {
	case nil:
		return format.NullValue()
	case int64:
		return format.IntValue(v)
	case float64:
		return format.FloatValue(v)
	case string:
		return format.TextValue([]byte(v))
	case []byte:
		return format.BlobValue(append([]byte(nil), v...))
	}
	panic(fmt.Sprintf("unexpected %T", x))
}

func rec(vals ...format.Value) []byte { return format.AppendRecord(nil, vals) }

func newDiffDB(t *testing.T, ps int, seed uint64) *diffDB {
	path := filepath.Join(t.TempDir(), "diff.db")
	sqltest.Exec(t, path,
		fmt.Sprintf("PRAGMA page_size=%d", ps),
		"CREATE TABLE t(a, b)",
		"CREATE INDEX ta ON t(a)",
		"CREATE INDEX tb ON t(b)",
		`CREATE TABLE w(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`,
		fmt.Sprintf(series+"INSERT INTO t(a, b) SELECT x %% 97, randomblob(x %% 300) FROM c", 200),
		fmt.Sprintf(series+"INSERT INTO w SELECT randomblob(8), randomblob(x %% 200) FROM c", 100),
	)
	d := &diffDB{t: t, path: path, ps: ps, r: rand.New(rand.NewPCG(seed, 99))}
	d.reload()
	return d
}

// reload reads the file into a new memPager and the model from SQLite.
func (d *diffDB) reload() {
	t := d.t
	db := sqltest.Open(t, d.path)
	d.tRoot, d.taRoot, d.tbRoot, d.wRoot = rootOf(t, db, "t"), rootOf(t, db, "ta"), rootOf(t, db, "tb"), rootOf(t, db, "w")
	d.model = diffModel{rows: map[int64]diffRow{}, kv: map[string][]byte{}}
	d.query(db, "SELECT rowid, a, b FROM t", func(v []any) {
		d.model.rows[v[0].(int64)] = diffRow{sqlValue(v[1]), sqlValue(v[2])}
	})
	d.query(db, "SELECT key, value FROM w", func(v []any) {
		d.model.kv[string(v[0].([]byte))] = append([]byte(nil), v[1].([]byte)...)
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	d.m = memPagerFromImage(img, true)
	d.wr = NewWriter(d.m)
}

func (d *diffDB) query(db *sql.DB, q string, fn func([]any)) {
	rows, err := db.Query(q)
	if err != nil {
		d.t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		v := make([]any, len(cols))
		p := make([]any, len(cols))
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			d.t.Fatal(err)
		}
		fn(v)
	}
	if err := rows.Err(); err != nil {
		d.t.Fatal(err)
	}
}

// verify writes the image to the file, and has SQLite check it and read it.
func (d *diffDB) verify(phase string) {
	t := d.t
	v := newValidator(d.m)
	for _, tr := range []struct {
		root  uint32
		table bool
		nKey  int
	}{{1, true, 0}, {d.tRoot, true, 0}, {d.taRoot, false, 0}, {d.tbRoot, false, 0}, {d.wRoot, false, 1}} {
		if _, err := v.tree(tr.root, tr.table, nil, tr.nKey); err != nil {
			t.Fatalf("%s: tree %d: %v", phase, tr.root, err)
		}
	}
	if err := v.accounting(d.m); err != nil {
		t.Fatalf("%s: %v", phase, err)
	}
	img, err := d.m.image()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	db := sqltest.Open(t, d.path)
	var res []string
	d.query(db, "PRAGMA integrity_check", func(v []any) { res = append(res, fmt.Sprint(v[0])) })
	if len(res) != 1 || res[0] != "ok" {
		t.Fatalf("%s: integrity_check: %q", phase, res[:min(len(res), 10)])
	}
	var gotRows []int64
	d.query(db, "SELECT rowid, a, b FROM t ORDER BY rowid", func(v []any) {
		r := v[0].(int64)
		want, ok := d.model.rows[r]
		got := diffRow{sqlValue(v[1]), sqlValue(v[2])}
		if !ok || string(rec(got.a, got.b)) != string(rec(want.a, want.b)) {
			t.Fatalf("%s: row %d differs from the model (present %v)", phase, r, ok)
		}
		gotRows = append(gotRows, r)
	})
	if len(gotRows) != len(d.model.rows) {
		t.Fatalf("%s: SQLite sees %d rows, model has %d", phase, len(gotRows), len(d.model.rows))
	}
	n := 0
	d.query(db, "SELECT key, value FROM w ORDER BY key", func(v []any) {
		want, ok := d.model.kv[string(v[0].([]byte))]
		if !ok || string(want) != string(v[1].([]byte)) {
			t.Fatalf("%s: bucket key %x differs from the model", phase, v[0])
		}
		n++
	})
	if n != len(d.model.kv) {
		t.Fatalf("%s: SQLite sees %d bucket entries, model has %d", phase, n, len(d.model.kv))
	}
	// The indexes answer queries that use them.
	var cnt int64
	if err := db.QueryRow("SELECT count(*) FROM t INDEXED BY ta WHERE a IS NOT NULL OR a IS NULL").Scan(&cnt); err != nil || cnt != int64(len(d.model.rows)) {
		t.Fatalf("%s: index count %d, %v", phase, cnt, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// sqliteChanges lets SQLite change the file, then reloads.
func (d *diffDB) sqliteChanges() {
	sqltest.Exec(d.t, d.path,
		"DELETE FROM t WHERE rowid % 5 = 2",
		fmt.Sprintf(series+"INSERT INTO t(a, b) SELECT 'sql' || x, randomblob(x * 37 %% %d) FROM c", 60, 2*d.ps),
		"UPDATE t SET b = randomblob(length(b) + 3) WHERE rowid % 7 = 1",
		"DELETE FROM w WHERE value < x'40'",
		fmt.Sprintf(series+"INSERT OR REPLACE INTO w SELECT randomblob(6), randomblob(x %% 300) FROM c", 40),
	)
	d.reload()
}

func (d *diffDB) aValue() format.Value {
	switch d.r.IntN(3) {
	case 0:
		return format.IntValue(int64(d.r.IntN(1000)))
	case 1:
		return format.TextValue(fmt.Appendf(nil, "v%d", d.r.IntN(1000)))
	}
	return format.NullValue()
}

func (d *diffDB) bValue() format.Value {
	d.version++
	return format.BlobValue(payloadFor(int64(d.version), 3, sizeDist(d.r, d.ps, 8)))
}

func (d *diffDB) putRow(rowid int64) {
	t := d.t
	if old, ok := d.model.rows[rowid]; ok {
		for _, ix := range []struct {
			root uint32
			v    format.Value
		}{{d.taRoot, old.a}, {d.tbRoot, old.b}} {
			found, err := d.wr.IndexDelete(ix.root, nil, 0, rec(ix.v, format.IntValue(rowid)))
			if err != nil || !found {
				t.Fatalf("index delete for row %d: %v %v", rowid, found, err)
			}
		}
	}
	row := diffRow{d.aValue(), d.bValue()}
	if _, err := d.wr.TableInsert(d.tRoot, rowid, rec(row.a, row.b)); err != nil {
		t.Fatal(err)
	}
	for _, ix := range []struct {
		root uint32
		v    format.Value
	}{{d.taRoot, row.a}, {d.tbRoot, row.b}} {
		replaced, err := d.wr.IndexInsert(ix.root, nil, 0, rec(ix.v, format.IntValue(rowid)))
		if err != nil || replaced {
			t.Fatalf("index insert for row %d: %v %v", rowid, replaced, err)
		}
	}
	d.model.rows[rowid] = row
}

func (d *diffDB) deleteRow(rowid int64) {
	t := d.t
	old, ok := d.model.rows[rowid]
	found, err := d.wr.TableDelete(d.tRoot, rowid)
	if err != nil || found != ok {
		t.Fatalf("delete row %d: %v %v, model %v", rowid, found, err, ok)
	}
	if !ok {
		return
	}
	for _, ix := range []struct {
		root uint32
		v    format.Value
	}{{d.taRoot, old.a}, {d.tbRoot, old.b}} {
		found, err := d.wr.IndexDelete(ix.root, nil, 0, rec(ix.v, format.IntValue(rowid)))
		if err != nil || !found {
			t.Fatalf("index delete for row %d: %v %v", rowid, found, err)
		}
	}
	delete(d.model.rows, rowid)
}

func (d *diffDB) putKV() {
	var key []byte
	if len(d.model.kv) > 0 && d.r.IntN(4) == 0 {
		for k := range d.model.kv {
			key = []byte(k)
			break
		}
	} else {
		key = fmt.Appendf(nil, "key-%d-%s", d.r.IntN(100000), make([]byte, d.r.IntN(d.ps/3)))
	}
	d.version++
	val := payloadFor(int64(d.version), 5, sizeDist(d.r, d.ps, 8))
	_, had := d.model.kv[string(key)]
	replaced, err := d.wr.IndexInsert(d.wRoot, nil, 1, rec(format.BlobValue(key), format.BlobValue(val)))
	if err != nil || replaced != had {
		d.t.Fatalf("bucket put: replaced %v, model %v, err %v", replaced, had, err)
	}
	d.model.kv[string(key)] = val
}

func (d *diffDB) deleteKV(key string) {
	found, err := d.wr.IndexDelete(d.wRoot, nil, 1, rec(format.BlobValue([]byte(key))))
	_, had := d.model.kv[key]
	if err != nil || found != had {
		d.t.Fatalf("bucket delete: found %v, model %v, err %v", found, had, err)
	}
	delete(d.model.kv, key)
}

func (d *diffDB) maxRowid() int64 {
	mx, _, err := TableMaxRowid(d.m, d.tRoot)
	if err != nil {
		d.t.Fatal(err)
	}
	return mx
}

func (d *diffDB) anyRow() int64 {
	for k := range d.model.rows {
		return k
	}
	return 1
}

// boundaryLengths returns blob lengths L such that the row record (NULL,
// blob L) or the index key (blob L, rowid) has a payload size at an edge of
// the local-size formulas (sqlite-format.md §3.1): X-1, X, X+1, the sizes
// where K = M + (P-M) % (U-4) stops fitting under X, and a few pages.
func boundaryLengths(usable int) []int {
	x, xi, m := format.MaxLocal(usable, true), format.MaxLocal(usable, false), format.MinLocal(usable)
	per := usable - 4
	var targets []int
	for _, edge := range []int{x, xi, x + per, xi + per, m + per, m + 2*per, x + 2*per, 3 * usable} {
		targets = append(targets, edge-1, edge, edge+1)
	}
	var out []int
	for _, tgt := range targets {
		for l := max(tgt-12, 0); l <= tgt; l++ {
			row := format.RecordSize([]format.Value{format.NullValue(), format.BlobValue(make([]byte, l))})
			key := format.RecordSize([]format.Value{format.BlobValue(make([]byte, l)), format.IntValue(1 << 40)})
			if row == tgt || key == tgt {
				out = append(out, l)
			}
		}
	}
	return out
}

func TestSQLiteIntegrityAfterWrites(t *testing.T) {
	for i, ps := range []int{512, 4096, 65536} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			scale := map[int]int{512: 1, 4096: 1, 65536: 3}[ps]
			size := func(n int) int { return n * (*soak) / scale }
			d := newDiffDB(t, ps, uint64(i))
			// Phase 1: a load, mostly appends.
			for j := 0; j < size(1200); j++ {
				if d.r.IntN(10) < 7 {
					d.putRow(d.maxRowid() + 1)
				} else {
					d.putRow(int64(d.r.IntN(1 << 20)))
				}
				if j%4 == 0 {
					d.putKV()
				}
			}
			d.verify("load")
			// Payload sizes at the edges of the overflow formulas.
			for _, l := range boundaryLengths(ps) {
				rowid := d.maxRowid() + 1<<40
				row := diffRow{format.NullValue(), format.BlobValue(payloadFor(rowid, l, l))}
				d.putRow(rowid)
				d.deleteRow(rowid)
				if _, err := d.wr.TableInsert(d.tRoot, rowid, rec(row.a, row.b)); err != nil {
					t.Fatal(err)
				}
				for _, ix := range []struct {
					root uint32
					v    format.Value
				}{{d.taRoot, row.a}, {d.tbRoot, row.b}} {
					if _, err := d.wr.IndexInsert(ix.root, nil, 0, rec(ix.v, format.IntValue(rowid))); err != nil {
						t.Fatal(err)
					}
				}
				d.model.rows[rowid] = row
			}
			d.verify("boundaries")
			d.sqliteChanges()
			// Phase 2: random inserts, overwrites, deletes.
			for j := 0; j < size(1500); j++ {
				switch x := d.r.IntN(10); {
				case x < 3:
					d.putRow(int64(d.r.IntN(1 << 20)))
				case x < 5:
					d.putRow(d.anyRow())
				case x < 7:
					d.deleteRow(d.anyRow())
				case x < 9:
					d.putKV()
				default:
					for k := range d.model.kv {
						d.deleteKV(k)
						break
					}
				}
			}
			d.verify("random")
			d.sqliteChanges()
			// Phase 3: delete nearly everything.
			rows := make([]int64, 0, len(d.model.rows))
			for k := range d.model.rows {
				rows = append(rows, k)
			}
			slices.Sort(rows)
			d.r.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
			for _, k := range rows[:len(rows)*19/20] {
				d.deleteRow(k)
			}
			keys := make([]string, 0, len(d.model.kv))
			for k := range d.model.kv {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys[:len(keys)*19/20] {
				d.deleteKV(k)
			}
			d.verify("delete most")
			// Phase 4: everything, then a reload.
			for k := range d.model.rows {
				d.deleteRow(k)
			}
			for k := range d.model.kv {
				d.deleteKV(k)
			}
			d.verify("delete all")
			for j := 0; j < size(300); j++ {
				d.putRow(d.maxRowid() + 1)
				d.putKV()
			}
			d.verify("reload")
			d.sqliteChanges()
			d.verify("after sqlite")
		})
	}
}

// Trees rooted at page 1, whose b-tree header sits after the database
// header: the root splits, shrinks back, and may be left with one child
// that does not fit it.
func TestPage1Root(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			m := newMemPager(ps, true)
			wr := NewWriter(m)
			model := tableModel{}
			r := rand.New(rand.NewPCG(uint64(ps), 1))
			for round := 0; round < 6; round++ {
				for i := 0; i < 400; i++ {
					k := int64(r.IntN(600))
					p := payloadFor(k, i, sizeDist(r, ps, 10))
					if _, err := wr.TableInsert(1, k, p); err != nil {
						t.Fatal(err)
					}
					model[k] = p
				}
				checkTable1(t, m, model)
				for k := range model {
					if r.IntN(10) < 9 {
						if _, err := wr.TableDelete(1, k); err != nil {
							t.Fatal(err)
						}
						delete(model, k)
					}
				}
				checkTable1(t, m, model)
			}
			img, err := m.image()
			if err != nil {
				t.Fatal(err)
			}
			if string(img[:16]) != format.Magic {
				t.Fatal("database header damaged")
			}
		})
	}
}

func checkTable1(t *testing.T, m *memPager, model tableModel) {
	t.Helper()
	v := newValidator(m)
	if n, err := v.tree(1, true, nil, 0); err != nil || n != len(model) {
		t.Fatalf("page 1 tree: %d rows (model %d), %v", n, len(model), err)
	}
	if err := v.accounting(m); err != nil {
		t.Fatal(err)
	}
	compareTableScan(t, m, 1, model)
	if err := m.commit(); err != nil {
		t.Fatal(err)
	}
	if err := format.ValidateHeader(must(m.Page(1))); err != nil {
		t.Fatal(err)
	}
}

// A database the writer builds from nothing, with reserved bytes at the end
// of each page (which sqlite3 honours when the header says so): the schema
// row goes into page 1's tree, the rows into a new tree.
func TestSQLiteReadsWriterBuiltFile(t *testing.T) {
	for _, tc := range []struct{ pageSize, reserved int }{{1024, 32}, {4096, 0}, {512, 8}} {
		t.Run(fmt.Sprintf("%d-%d", tc.pageSize, tc.reserved), func(t *testing.T) {
			m := newMemPagerReserved(tc.pageSize, tc.reserved, true)
			format.Header(must(m.Write(1))).SetSchemaCookie(1)
			wr := NewWriter(m)
			root := must(wr.CreateTree(true))
			iroot := must(wr.CreateTree(false))
			schema := []struct {
				typ, name string
				root      uint32
				sql       string
			}{{"table", "t", root, "CREATE TABLE t(a, b)"}, {"index", "ta", iroot, "CREATE INDEX ta ON t(a)"}}
			for i, s := range schema {
				row := rec(format.TextValue([]byte(s.typ)), format.TextValue([]byte(s.name)), format.TextValue([]byte("t")),
					format.IntValue(int64(s.root)), format.TextValue([]byte(s.sql)))
				if _, err := wr.TableInsert(1, int64(i+1), row); err != nil {
					t.Fatal(err)
				}
			}
			r := rand.New(rand.NewPCG(uint64(tc.pageSize), 3))
			want := map[int64]int{}
			for i := 0; i < 2000; i++ {
				rowid := int64(r.IntN(1500))
				if _, ok := want[rowid]; ok {
					if _, err := wr.TableDelete(root, rowid); err != nil {
						t.Fatal(err)
					}
					if _, err := wr.IndexDelete(iroot, nil, 0, rec(format.IntValue(rowid%97), format.IntValue(rowid))); err != nil {
						t.Fatal(err)
					}
					delete(want, rowid)
					continue
				}
				n := sizeDist(r, tc.pageSize, 10)
				if _, err := wr.TableInsert(root, rowid, rec(format.IntValue(rowid%97), format.BlobValue(make([]byte, n)))); err != nil {
					t.Fatal(err)
				}
				if _, err := wr.IndexInsert(iroot, nil, 0, rec(format.IntValue(rowid%97), format.IntValue(rowid))); err != nil {
					t.Fatal(err)
				}
				want[rowid] = n
			}
			img, err := m.image()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "w.db")
			if err := os.WriteFile(path, img, 0o644); err != nil {
				t.Fatal(err)
			}
			db := sqltest.Open(t, path)
			var res string
			if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
				t.Fatalf("integrity_check: %q, %v", res, err)
			}
			var count, total int
			if err := db.QueryRow("SELECT count(*), coalesce(sum(length(b)), 0) FROM t").Scan(&count, &total); err != nil {
				t.Fatal(err)
			}
			wantTotal := 0
			for _, n := range want {
				wantTotal += n
			}
			if count != len(want) || total != wantTotal {
				t.Fatalf("SQLite counts %d rows of %d bytes, want %d of %d", count, total, len(want), wantTotal)
			}
		})
	}
}
