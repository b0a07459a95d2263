package pagoda

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// The model of the differential write test: buckets (b3 with an index on
// its values), a rowid table with three indexes (one UNIQUE) and a WITHOUT
// ROWID table with one index.
type wrow struct {
	a any // string or nil
	b any // int64 or nil (UNIQUE)
	c []byte
	d any // float64 or nil
}

type wkrow struct {
	v any // int64 or nil
	x []byte
}

type wmodel struct {
	buckets map[string]map[string][]byte
	rows    map[int64]wrow
	wrows   map[string]wkrow
}

func (m *wmodel) clone() *wmodel {
	c := &wmodel{buckets: map[string]map[string][]byte{}, rows: maps.Clone(m.rows), wrows: maps.Clone(m.wrows)}
	for n, b := range m.buckets {
		c.buckets[n] = maps.Clone(b)
	}
	return c
}

var wschema = []string{
	"CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b INTEGER, c BLOB, d REAL)",
	"CREATE INDEX t_a ON t(a COLLATE NOCASE)",
	"CREATE UNIQUE INDEX t_b ON t(b)",
	"CREATE INDEX t_db ON t(d DESC, b)",
	"CREATE TABLE w(k TEXT PRIMARY KEY, v INTEGER, x BLOB) WITHOUT ROWID",
	"CREATE INDEX w_v ON w(v)",
}

// wgen draws operations and values scaled to the page size.
type wgen struct {
	r  *rand.Rand
	ps int
}

func (g wgen) blob() []byte {
	var n int
	switch g.r.IntN(10) {
	case 0:
		n = 0
	case 1, 2:
		n = g.r.IntN(3*g.ps) + g.ps // overflows onto several pages
	default:
		n = g.r.IntN(g.ps / 8)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

func (g wgen) text() any {
	if g.r.IntN(8) == 0 {
		return nil
	}
	words := []string{"apple", "Apple", "APPLE", "berry", "cherry", "", "ünïcödé", "zeta"}
	return fmt.Sprintf("%s%d", words[g.r.IntN(len(words))], g.r.IntN(50))
}

func (g wgen) key() string { return fmt.Sprintf("k%04d", g.r.IntN(400)) }

// wapply runs one random operation on tx and the model; it returns an
// unexpected error.
func wapply(tx *Tx, m *wmodel, g wgen) error {
	r := g.r
	switch op := r.IntN(100); {
	case op < 4: // create or drop a bucket
		name := fmt.Sprintf("b%d", r.IntN(4))
		if _, ok := m.buckets[name]; ok && r.IntN(2) == 0 {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
			delete(m.buckets, name)
			return nil
		}
		_, err := tx.CreateBucket(name)
		if _, ok := m.buckets[name]; ok {
			if !errors.Is(err, ErrExists) {
				return fmt.Errorf("CreateBucket of an existing bucket: %v", err)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if name == "b3" {
			// An index on the values, as sqlite3 could add: the bucket's
			// writes must keep it.
			if _, err := tx.CreateIndex("CREATE INDEX b3_value ON b3(value)"); err != nil {
				return err
			}
		}
		m.buckets[name] = map[string][]byte{}
	case op < 40: // bucket put / delete
		names := slices.Sorted(maps.Keys(m.buckets))
		if len(names) == 0 {
			return nil
		}
		name := names[r.IntN(len(names))]
		b, err := tx.Bucket(name)
		if err != nil {
			return err
		}
		k := g.key()
		if r.IntN(4) == 0 {
			if err := b.Delete([]byte(k)); err != nil {
				return err
			}
			delete(m.buckets[name], k)
			return nil
		}
		v := g.blob()
		if err := b.Put([]byte(k), v); err != nil {
			return err
		}
		m.buckets[name][k] = v
	case op < 75: // rowid table
		t, err := tx.Table("t")
		if err != nil {
			return err
		}
		row := wrow{a: g.text(), c: g.blob()}
		if r.IntN(5) != 0 {
			row.b = int64(r.IntN(300))
		}
		if r.IntN(5) != 0 {
			row.d = float64(r.IntN(20)) / 4
		}
		conflict := func(self int64) bool {
			if row.b == nil {
				return false
			}
			for id, o := range m.rows {
				if id != self && o.b == row.b {
					return true
				}
			}
			return false
		}
		switch r.IntN(3) {
		case 0: // insert with a chosen rowid
			id := int64(r.IntN(500)) - 20
			_, exists := m.rows[id]
			_, err := t.Insert(id, row.a, row.b, row.c, row.d)
			if exists || conflict(id) {
				if !errors.Is(err, ErrExists) {
					return fmt.Errorf("insert of a duplicate: %v", err)
				}
				return nil
			}
			if err != nil {
				return err
			}
			m.rows[id] = row
		case 1: // insert with a new rowid, or put
			if r.IntN(2) == 0 {
				id, err := t.Insert(nil, row.a, row.b, row.c, row.d)
				if conflict(-1 << 63) {
					if !errors.Is(err, ErrExists) {
						return fmt.Errorf("insert of a duplicate: %v", err)
					}
					return nil
				}
				if err != nil {
					return err
				}
				want := int64(1)
				for k := range m.rows {
					want = max(want, k+1)
				}
				if id != want {
					return fmt.Errorf("new rowid %d, want %d", id, want)
				}
				m.rows[id] = row
				return nil
			}
			id := int64(r.IntN(500)) - 20
			err := t.Put(id, nil, row.a, row.b, row.c, row.d)
			if conflict(id) {
				if !errors.Is(err, ErrExists) {
					return fmt.Errorf("put of a duplicate: %v", err)
				}
				return nil
			}
			if err != nil {
				return err
			}
			m.rows[id] = row
		case 2:
			id := int64(r.IntN(500)) - 20
			err := t.Delete(id)
			if _, ok := m.rows[id]; !ok {
				if !errors.Is(err, ErrNotFound) {
					return fmt.Errorf("delete of a missing row: %v", err)
				}
				return nil
			}
			if err != nil {
				return err
			}
			delete(m.rows, id)
		}
	default: // WITHOUT ROWID table
		w, err := tx.Table("w")
		if err != nil {
			return err
		}
		k := g.key()
		if r.IntN(3) == 0 {
			err := w.DeleteKey(k)
			if _, ok := m.wrows[k]; !ok {
				if !errors.Is(err, ErrNotFound) {
					return fmt.Errorf("DeleteKey of a missing key: %v", err)
				}
				return nil
			}
			if err != nil {
				return err
			}
			delete(m.wrows, k)
			return nil
		}
		row := wkrow{x: g.blob()}
		if r.IntN(4) != 0 {
			row.v = int64(r.IntN(50))
		}
		if r.IntN(2) == 0 {
			_, err := w.Insert(k, row.v, row.x)
			if _, ok := m.wrows[k]; ok {
				if !errors.Is(err, ErrExists) {
					return fmt.Errorf("insert of an existing key: %v", err)
				}
				return nil
			}
			if err != nil {
				return err
			}
		} else if err := w.Put(0, k, row.v, row.x); err != nil {
			return err
		}
		m.wrows[k] = row
	}
	return nil
}

// snapshotFiles copies the database and its WAL as a crash would leave them.
func snapshotFiles(t *testing.T, path string) string {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "copy.db")
	sqltest.CopyFile(t, path, cp, false)
	sqltest.CopyFile(t, pager.WALPath(path), pager.WALPath(cp), true)
	return cp
}

// verifySQLite has SQLite check the file and compares its content with m.
func verifySQLite(t *testing.T, path string, m *wmodel) {
	t.Helper()
	db := sqltest.Open(t, path)
	defer db.Close()
	var ic string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
		rows, _ := db.Query("PRAGMA integrity_check")
		var all []string
		for rows != nil && rows.Next() {
			var s string
			rows.Scan(&s)
			all = append(all, s)
		}
		t.Fatalf("integrity_check: %v %v", all, err)
	}
	var names []string
	rows, err := db.Query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'b*' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	if want := slices.Sorted(maps.Keys(m.buckets)); !slices.Equal(names, want) {
		t.Fatalf("buckets %v, want %v", names, want)
	}
	for _, n := range names {
		got := map[string][]byte{}
		rows, err := db.Query(fmt.Sprintf("SELECT key, value FROM %q", n))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			got[string(k)] = v
		}
		rows.Close()
		if !maps.EqualFunc(got, m.buckets[n], bytes.Equal) {
			t.Fatalf("bucket %s: %d keys, want %d", n, len(got), len(m.buckets[n]))
		}
	}
	got := map[int64]wrow{}
	rows, err = db.Query("SELECT id, a, b, c, d FROM t")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var a, b, d any
		var c []byte
		if err := rows.Scan(&id, &a, &b, &c, &d); err != nil {
			t.Fatal(err)
		}
		if c == nil {
			c = []byte{}
		}
		got[id] = wrow{a, b, c, d}
	}
	rows.Close()
	eqRow := func(x, y wrow) bool {
		return x.a == y.a && x.b == y.b && bytes.Equal(x.c, y.c) && x.d == y.d
	}
	if !maps.EqualFunc(got, m.rows, eqRow) {
		t.Fatalf("table t: %d rows, want %d (%v)", len(got), len(m.rows), firstDiff(got, m.rows, eqRow))
	}
	gotw := map[string]wkrow{}
	rows, err = db.Query("SELECT k, v, x FROM w")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		var v any
		var x []byte
		if err := rows.Scan(&k, &v, &x); err != nil {
			t.Fatal(err)
		}
		if x == nil {
			x = []byte{}
		}
		gotw[k] = wkrow{v, x}
	}
	rows.Close()
	if !maps.EqualFunc(gotw, m.wrows, func(x, y wkrow) bool { return x.v == y.v && bytes.Equal(x.x, y.x) }) {
		t.Fatalf("table w: %d rows, want %d", len(gotw), len(m.wrows))
	}
	// The indexes answer as the table does.
	for _, q := range []string{
		"SELECT count(*) FROM t INDEXED BY t_a WHERE a >= '' COLLATE NOCASE",
		"SELECT count(*) FROM t INDEXED BY t_b WHERE b >= 0",
		"SELECT count(*) FROM w INDEXED BY w_v WHERE v >= 0",
	} {
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func firstDiff[K comparable, V any](got, want map[K]V, eq func(V, V) bool) string {
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			return fmt.Sprintf("missing %v", k)
		}
		if !eq(g, v) {
			return fmt.Sprintf("%v: got %v want %v", k, g, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			return fmt.Sprintf("extra %v", k)
		}
	}
	return ""
}

// verifyPagoda reads the model back through pagoda.
func verifyPagoda(t *testing.T, db *DB, m *wmodel) {
	t.Helper()
	err := db.View(func(tx *Tx) error {
		for n, want := range m.buckets {
			b, err := tx.Bucket(n)
			if err != nil {
				return err
			}
			got := map[string][]byte{}
			for k, v := range b.All() {
				got[string(k)] = bytes.Clone(v)
			}
			if !maps.EqualFunc(got, want, bytes.Equal) {
				return fmt.Errorf("bucket %s: %d keys, want %d", n, len(got), len(want))
			}
		}
		tb, err := tx.Table("t")
		if err != nil {
			return err
		}
		n := 0
		for id, rec := range tb.All() {
			want, ok := m.rows[id]
			if !ok || rec.Column(1).Any() != want.a || !bytes.Equal(rec.Column(3).Blob(), want.c) {
				return fmt.Errorf("row %d differs", id)
			}
			n++
		}
		if n != len(m.rows) {
			return fmt.Errorf("%d rows, want %d", n, len(m.rows))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWriteDifferential applies seeded random transactions to pagoda and to
// a model; after every commit SQLite checks the file (integrity_check) and
// reads it back, and so does pagoda; rolled-back transactions leave no
// trace. PAGODA_SEED replays a seed.
func TestWriteDifferential(t *testing.T) {
	seed := uint64(1)
	if s := os.Getenv("PAGODA_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	txs, ops := 24, 60
	if testing.Short() {
		txs = 8
	}
	for _, c := range []struct{ ps, cache int }{{512, 0}, {4096, 0}, {65536, 0}, {4096, 16 * 4096}} {
		ps := c.ps
		name := fmt.Sprint(ps)
		if c.cache != 0 {
			name += "-spill" // changed pages spill to the WAL and the file
		}
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(ps+c.cache)))
			g := wgen{r: r, ps: ps}
			path := filepath.Join(t.TempDir(), "w.db")
			db := openChecked(t, path, &Options{PageSize: ps, CheckpointPages: 200, CacheSize: c.cache})
			var err error
			err = db.Update(func(tx *Tx) error {
				for _, s := range wschema {
					var err error
					if s[7] == 'T' {
						_, err = tx.CreateTable(s)
					} else {
						_, err = tx.CreateIndex(s)
					}
					if err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			m := &wmodel{buckets: map[string]map[string][]byte{}, rows: map[int64]wrow{}, wrows: map[string]wkrow{}}
			for i := range txs {
				next := m.clone()
				rollback := r.IntN(6) == 0
				err := db.Update(func(tx *Tx) error {
					for range ops {
						if err := wapply(tx, next, g); err != nil {
							return fmt.Errorf("seed %d tx %d: %w", seed, i, err)
						}
					}
					if rollback {
						return errRollback
					}
					return nil
				})
				if err != nil && !errors.Is(err, errRollback) {
					t.Fatal(err)
				}
				if !rollback {
					m = next
				}
				if i%4 == 3 || i == txs-1 {
					verifySQLite(t, snapshotFiles(t, path), m)
					verifyPagoda(t, db, m)
					if err := db.Check(); err != nil {
						t.Fatalf("db.Check after tx %d: %v", i, err)
					}
				}
			}
			nb := 0
			for _, b := range m.buckets {
				nb += len(b)
			}
			if st := db.Stats(); c.cache != 0 && st.Spilled == 0 {
				t.Error("no page was spilled")
			}
			t.Logf("page size %d: %d buckets with %d keys, %d rows, %d WITHOUT ROWID rows", ps, len(m.buckets), nb, len(m.rows), len(m.wrows))
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(pager.WALPath(path)); err == nil {
				t.Error("WAL left after Close")
			}
			verifySQLite(t, path, m)
			db2, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db2.Close()
			verifyPagoda(t, db2, m)
			if err := db2.Check(); err != nil {
				t.Fatalf("db.Check after reopening: %v", err)
			}
		})
	}
}

var errRollback = errors.New("roll back")

var _ = sql.ErrNoRows
