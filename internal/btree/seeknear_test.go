package btree

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// TestSeekKeyNear: from any place in an index tree, SeekKeyNear lands
// where SeekKey lands and says the same about an exact match, whether the
// target is on the current leaf (ahead or behind) or elsewhere.
//
// The trees are deep enough (up to four levels at 512-byte pages) that a
// far target makes SeekKeyNear climb; with dups, runs of entries share the
// sought prefix, so interior cells equal to it must not stop the climb
// early.
func TestSeekKeyNear(t *testing.T) {
	for _, tc := range []struct {
		ps, n, dup int
	}{{512, 3000, 1}, {4096, 3000, 1}, {512, 20000, 1}, {512, 20000, 7}, {1024, 20000, 50}} {
		t.Run(fmt.Sprintf("%d-%d-dup%d", tc.ps, tc.n, tc.dup), func(t *testing.T) {
			ps := tc.ps
			r := rand.New(rand.NewPCG(uint64(ps), uint64(tc.n+tc.dup)))
			m := newMemPager(ps, true)
			wr := NewWriter(m)
			root, err := wr.CreateTree(false)
			if err != nil {
				t.Fatal(err)
			}
			text := func(i int) format.Value { return format.TextValue(fmt.Appendf(nil, "name/%06d", i/tc.dup)) }
			for i := 0; i < tc.n; i += 2 { // even keys stored, odd ones missing
				rec := format.AppendRecord(nil, []format.Value{text(i), format.IntValue(int64(i))})
				if _, err := wr.IndexInsert(root, nil, 1, rec); err != nil {
					t.Fatal(err)
				}
			}
			var near, far Cursor
			for range 3000 {
				near.Init(m, root, false, nil)
				far.Init(m, root, false, nil)
				s := r.IntN(tc.n + 100)
				near.SeekKey([]format.Value{text(s)})
				for range r.IntN(3) {
					near.Next() // sometimes not where the last seek left it
				}
				target := r.IntN(tc.n + 100)
				if r.IntN(2) == 0 { // often a neighbour, on the same leaf or the next
					target = max(0, s+r.IntN(41*tc.dup)-20*tc.dup)
				}
				key := []format.Value{text(target)}
				gotExact := near.SeekKeyNear(key)
				wantExact := far.SeekKey(key)
				if gotExact != wantExact || near.Valid() != far.Valid() {
					t.Fatalf("target %d: exact %v valid %v, want %v %v", target, gotExact, near.Valid(), wantExact, far.Valid())
				}
				if near.Valid() {
					a, _ := near.Payload()
					b, _ := far.Payload()
					if string(a) != string(b) {
						t.Fatalf("target %d: landed on another entry", target)
					}
				}
			}
		})
	}
}
