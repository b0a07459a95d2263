package sqlitediff

import (
	"fmt"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// TestLocalSizeMatchesDbstat stores one row per table (and its index entry)
// with payloads around the overflow boundaries, and compares LocalSize and
// OverflowPages with what SQLite's dbstat virtual table reports: for the
// root page (a leaf holding the one cell) mx_payload is the payload length
// P and payload is the local part L.
func TestLocalSizeMatchesDbstat(t *testing.T) {
	for _, u := range []int{512, 1024, 4096} {
		t.Run(fmt.Sprint(u), func(t *testing.T) {
			db := openMemory(t)
			mustExec(t, db, fmt.Sprintf("PRAGMA page_size=%d", u))
			var got int
			if err := db.QueryRow("PRAGMA page_size").Scan(&got); err != nil || got != u {
				t.Fatalf("page_size = %d, %v", got, err)
			}
			xt, xi, m, per := format.MaxLocal(u, true), format.MaxLocal(u, false), format.MinLocal(u), u-4
			// Blob sizes: each boundary +-6 (the record adds a few header
			// bytes, so this brackets P = X, K = X, K = M, ...).
			sizes := map[int]bool{0: true, 3 * u: true, 20004: true, 70000: true}
			for _, b := range []int{xt, xi, m + per, xt + per, xi + per, m + 2*per, xt + 2*per} {
				for d := -8; d <= 4; d++ {
					if b+d >= 0 {
						sizes[b+d] = true
					}
				}
			}
			tx, err := db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			for s := range sizes {
				for _, q := range []string{
					fmt.Sprintf("CREATE TABLE t%d(b)", s),
					fmt.Sprintf("CREATE INDEX i%d ON t%d(b)", s, s),
					fmt.Sprintf("INSERT INTO t%d VALUES(zeroblob(%d))", s, s),
				} {
					if _, err := tx.Exec(q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			overflow := map[string]int64{}
			rows, err := db.Query("SELECT name, count(*) FROM dbstat WHERE pagetype = 'overflow' GROUP BY name")
			if err != nil {
				t.Fatalf("dbstat: %v", err)
			}
			for rows.Next() {
				var name string
				var n int64
				if err := rows.Scan(&name, &n); err != nil {
					t.Fatal(err)
				}
				overflow[name] = n
			}
			rows.Close()
			rows, err = db.Query("SELECT name, pagetype, ncell, payload, mx_payload FROM dbstat WHERE path = '/' AND name != 'sqlite_schema'")
			if err != nil {
				t.Fatalf("dbstat: %v", err)
			}
			defer rows.Close()
			checked, spilled := 0, 0
			for rows.Next() {
				var name, pagetype string
				var ncell, payload, mx int64
				if err := rows.Scan(&name, &pagetype, &ncell, &payload, &mx); err != nil {
					t.Fatal(err)
				}
				if pagetype != "leaf" || ncell != 1 {
					t.Fatalf("%s root: %s with %d cells, want a leaf with 1", name, pagetype, ncell)
				}
				table := name[0] == 't'
				if l := format.LocalSize(mx, u, table); int64(l) != payload {
					t.Errorf("U=%d %s: payload %d: SQLite keeps %d local bytes, LocalSize says %d", u, name, mx, payload, l)
				}
				if n := format.OverflowPages(mx, u, table); n != overflow[name] {
					t.Errorf("U=%d %s: payload %d: SQLite uses %d overflow pages, OverflowPages says %d", u, name, mx, overflow[name], n)
				}
				checked++
				if overflow[name] > 0 {
					spilled++
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if checked != 2*len(sizes) || spilled == 0 || spilled == checked {
				t.Fatalf("checked %d roots (%d overflowing) for %d sizes", checked, spilled, len(sizes))
			}
		})
	}
}
