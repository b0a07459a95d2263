package sqltest

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestDriverValues: values go to SQLite and come back with their types and
// bytes: -0.0, text that is not UTF-8, an empty blob apart from NULL.
func TestDriverValues(t *testing.T) {
	db := Open(t, ":memory:")
	Run(t, db, "CREATE TABLE t(i, f, s, b, n)")
	negZero := math.Copysign(0, -1)
	if _, err := db.Exec("INSERT INTO t VALUES (?, ?, ?, ?, ?)", int64(math.MinInt64), negZero, "a\xffb\x00c", []byte{}, nil); err != nil {
		t.Fatal(err)
	}
	var (
		i   int64
		f   float64
		s   string
		b   []byte
		n   any
		typ string
	)
	if err := db.QueryRow("SELECT i, f, s, b, n, typeof(b) FROM t").Scan(&i, &f, &s, &b, &n, &typ); err != nil {
		t.Fatal(err)
	}
	if i != math.MinInt64 || math.Float64bits(f) != math.Float64bits(negZero) || s != "a\xffb\x00c" || b == nil || len(b) != 0 || n != nil || typ != "blob" {
		t.Errorf("got %d %v %q %v %v %s", i, f, s, b, n, typ)
	}
	rows, err := db.Query("SELECT 1 AS one, 'x' AS two")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	rows.Close()
	if strings.Join(cols, ",") != "one,two" {
		t.Errorf("columns %q", cols)
	}
	res, err := db.Exec("INSERT INTO t(i) VALUES (1), (2)")
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != 3 {
		t.Errorf("LastInsertId %d, want 3", id)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Errorf("RowsAffected %d, want 2", n)
	}
	if _, err := db.Exec("INSERT INTO nosuch VALUES (1)"); err == nil || !strings.Contains(err.Error(), "no such table") {
		t.Errorf("SQLite's error: %v", err)
	}
}

// TestDriverConnections: connections are SQLite's own, side by side: one
// writing holds the other off ("database is locked"), and a transaction
// rolls back.
func TestDriverConnections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	a, b := Open(t, path), Open(t, path)
	Run(t, a, "CREATE TABLE t(x)")
	tx, err := a.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Exec("INSERT INTO t VALUES (2)"); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("a second writer: %v, want database is locked", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// Many goroutines at once, each on a connection of its own.
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			db := Open(t, ":memory:")
			want := bytes.Repeat([]byte{byte(g)}, 1000+g)
			for range 50 {
				var got []byte
				if err := db.QueryRow("SELECT ?", want).Scan(&got); err != nil || !bytes.Equal(got, want) {
					t.Errorf("goroutine %d: %v, %d bytes", g, err, len(got))
					return
				}
			}
		})
	}
	wg.Wait()
	if got := Rows(t, b, "SELECT count(*) FROM t"); len(got) != 1 || got[0] != "0" {
		t.Errorf("after the rollback: %q", got)
	}
}
