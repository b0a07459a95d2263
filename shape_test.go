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

	"github.com/pagodadb/pagoda/internal/sqltest"
)

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
