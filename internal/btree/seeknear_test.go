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
func TestSeekKeyNear(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(ps), 3))
			m := newMemPager(ps, true)
			wr := NewWriter(m)
			root, err := wr.CreateTree(false)
			if err != nil {
				t.Fatal(err)
			}
			text := func(i int) format.Value { return format.TextValue(fmt.Appendf(nil, "name/%06d", i)) }
			for i := 0; i < 3000; i += 2 { // even keys stored, odd ones missing
				rec := format.AppendRecord(nil, []format.Value{text(i), format.IntValue(int64(i))})
				if _, err := wr.IndexInsert(root, nil, 1, rec); err != nil {
					t.Fatal(err)
				}
			}
			var near, far Cursor
			for range 3000 {
				near.Init(m, root, false, nil)
				far.Init(m, root, false, nil)
				s := r.IntN(3100)
				near.SeekKey([]format.Value{text(s)})
				target := r.IntN(3100)
				if r.IntN(2) == 0 { // often a neighbour, on the same leaf or the next
					target = max(0, s+r.IntN(41)-20)
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
