package btree

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// soak multiplies the sizes of the randomized write workloads: the default
// keeps the package's tests quick; go test -run Random -btree.soak=50 runs
// a long soak.
var soak = flag.Int("btree.soak", 1, "multiply the sizes of the randomized write workloads")

// tableModel is what a table tree should hold.
type tableModel map[int64][]byte

// payloadFor makes a recognizable payload of n bytes for a row version.
func payloadFor(rowid int64, version, n int) []byte {
	b := make([]byte, n)
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], uint64(rowid)*31+uint64(version))
	for i := range b {
		b[i] = seed[i%8] ^ byte(i/8)
	}
	return b
}

// checkTable validates the tree and compares both scan directions with the
// model.
func checkTable(t testing.TB, m *memPager, root uint32, model tableModel) {
	t.Helper()
	v := newValidator(m)
	n, err := v.tree(root, true, nil, 0)
	if err != nil {
		t.Fatalf("tree %d: %v", root, err)
	}
	if n != len(model) {
		t.Fatalf("tree holds %d rows, model %d", n, len(model))
	}
	if err := v.accounting(m, 1); err != nil {
		t.Fatal(err)
	}
	compareTableScan(t, m, root, model)
	if err := m.commit(); err != nil {
		t.Fatal(err)
	}
}

func compareTableScan(t testing.TB, src Pages, root uint32, model tableModel) {
	t.Helper()
	keys := make([]int64, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var c Cursor
	c.Init(src, root, true, nil)
	i := 0
	for ok := c.First(); ok; ok = c.Next() {
		rowid, payload, _, err := c.Entry()
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(keys) || rowid != keys[i] {
			t.Fatalf("forward scan: entry %d is rowid %d, want %v", i, rowid, keys[min(i, len(keys)-1):min(i+1, len(keys))])
		}
		if !bytes.Equal(payload, model[rowid]) {
			t.Fatalf("rowid %d: payload of %d bytes differs from the model's %d", rowid, len(payload), len(model[rowid]))
		}
		i++
	}
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	if i != len(keys) {
		t.Fatalf("forward scan saw %d rows, want %d", i, len(keys))
	}
	for ok := c.Last(); ok; ok = c.Prev() {
		i--
		if r := c.Rowid(); r != keys[i] {
			t.Fatalf("backward scan: rowid %d, want %d", r, keys[i])
		}
	}
	if c.Err() != nil || i != 0 {
		t.Fatalf("backward scan: err %v, %d rows missed", c.Err(), i)
	}
	checkFindRowid(t, &c, keys, model)
	if len(keys) > 0 {
		mx, ok, err := TableMaxRowid(src, root)
		if err != nil || !ok || mx != keys[len(keys)-1] {
			t.Fatalf("TableMaxRowid = %d %v %v, want %d", mx, ok, err, keys[len(keys)-1])
		}
	} else if _, ok, err := TableMaxRowid(src, root); ok || err != nil {
		t.Fatalf("TableMaxRowid of an empty table: %v %v", ok, err)
	}
}

// sizeDist draws payload sizes: mostly small, some empty, some larger than
// the local maximum, some larger than a page.
func sizeDist(r *rand.Rand, pageSize int, big int) int {
	switch x := r.IntN(100); {
	case x < 5:
		return 0
	case x < 10:
		return r.IntN(4)
	case x < 100-big:
		return r.IntN(min(200, pageSize/4))
	case x < 100-big/2:
		return pageSize/2 + r.IntN(pageSize)
	default:
		return r.IntN(3 * pageSize)
	}
}

type tableWorkload struct {
	name     string
	n        int  // rows in the first phase
	ops      int  // random operations after it
	keySpace int  // 0: sequential rowids in the first phase
	big      int  // percent of large payloads
	negative bool // rowids anywhere in int64
}

func TestTableRandomOps(t *testing.T) {
	workloads := []tableWorkload{
		{name: "sequential", n: 3000, ops: 2000, big: 4},
		{name: "random", n: 2000, ops: 3000, keySpace: 4000, big: 6},
		{name: "large", n: 300, ops: 600, keySpace: 400, big: 60},
		{name: "tiny", n: 3000, ops: 3000, keySpace: 3000, big: 0},
		{name: "wide-keys", n: 1000, ops: 1000, keySpace: -1, big: 5, negative: true},
	}
	for _, ps := range []int{512, 4096, 65536} {
		for wi, wl := range workloads {
			t.Run(fmt.Sprintf("%d/%s", ps, wl.name), func(t *testing.T) {
				scale := 1
				if ps == 65536 {
					scale = 4 // fewer, the pages are big
				}
				runTableWorkload(t, ps, wl, scale, uint64(ps*100+wi))
			})
		}
	}
}

func runTableWorkload(t *testing.T, ps int, wl tableWorkload, scale int, seed uint64) {
	runTableWorkloadOn(t, newMemPager(ps, true), wl, scale, seed)
}

func runTableWorkloadOn(t *testing.T, m *memPager, wl tableWorkload, scale int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	ps := m.usable
	wr := NewWriter(m)
	root, err := wr.CreateTree(true)
	if err != nil {
		t.Fatal(err)
	}
	model := tableModel{}
	version := 0
	key := func() int64 {
		switch {
		case wl.negative:
			if r.IntN(4) == 0 {
				return []int64{-1 << 63, 1<<63 - 1, 0, -1, 127, 128, 1 << 56}[r.IntN(7)]
			}
			return int64(r.Uint64())
		case wl.keySpace > 0:
			return int64(r.IntN(wl.keySpace))
		}
		return int64(r.IntN(1 << 20))
	}
	put := func(rowid int64) {
		version++
		p := payloadFor(rowid, version, sizeDist(r, ps, wl.big))
		_, had := model[rowid]
		replaced, err := wr.TableInsert(root, rowid, p)
		if err != nil {
			t.Fatalf("insert %d: %v", rowid, err)
		}
		if replaced != had {
			t.Fatalf("insert %d: replaced %v, model had %v", rowid, replaced, had)
		}
		model[rowid] = p
	}
	del := func(rowid int64) {
		_, had := model[rowid]
		found, err := wr.TableDelete(root, rowid)
		if err != nil {
			t.Fatalf("delete %d: %v", rowid, err)
		}
		if found != had {
			t.Fatalf("delete %d: found %v, model had %v", rowid, found, had)
		}
		delete(model, rowid)
	}
	anyKey := func() int64 {
		for k := range model {
			return k
		}
		return key()
	}
	n, ops := wl.n*(*soak)/scale, wl.ops*(*soak)/scale
	for i := 0; i < n; i++ {
		if wl.keySpace == 0 {
			put(int64(i + 1))
		} else {
			put(key())
		}
		if i%(n/4+1) == 0 {
			checkTable(t, m, root, model)
		}
	}
	checkTable(t, m, root, model)
	for i := 0; i < ops; i++ {
		switch x := r.IntN(10); {
		case x < 4:
			put(key())
		case x < 6:
			put(anyKey()) // overwrite
		default:
			del(anyKey())
		}
		if i%(ops/4+1) == 0 {
			checkTable(t, m, root, model)
		}
	}
	checkTable(t, m, root, model)
	// Delete most, then everything: merges, redistribution, root collapse.
	keys := make([]int64, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for i, k := range keys {
		del(k)
		if i == len(keys)*9/10 {
			checkTable(t, m, root, model)
		}
	}
	checkTable(t, m, root, model)
	pg := must(format.ParsePage(must(m.Page(root)), root, m.usable))
	if !pg.Type.IsLeaf() || pg.NCells != 0 {
		t.Fatalf("empty tree's root is %s with %d cells", pg.Type, pg.NCells)
	}
	// And refill: pages come from the freelist.
	before := m.PageCount()
	for i := 0; i < n/2; i++ {
		put(key())
	}
	checkTable(t, m, root, model)
	if m.PageCount() > before+uint32(n) {
		t.Fatalf("refill grew the file from %d to %d pages", before, m.PageCount())
	}
	if err := wr.ClearTree(root, false); err != nil {
		t.Fatal(err)
	}
	clear(model)
	checkTable(t, m, root, model)
	if err := wr.ClearTree(root, true); err != nil {
		t.Fatal(err)
	}
	if err := m.commit(); err != nil {
		t.Fatal(err)
	}
	v := newValidator(m)
	if err := v.accounting(m, 1); err != nil {
		t.Fatal(err)
	}
}

// Deleting in key order, reverse order, and from the middle out exercises
// merges with left and right siblings.
func TestTableDeleteOrders(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		for _, order := range []string{"ascending", "descending", "alternate", "middle"} {
			t.Run(fmt.Sprintf("%d/%s", ps, order), func(t *testing.T) {
				m := newMemPager(ps, true)
				root := must(CreateTree(m, true))
				model := tableModel{}
				const n = 3000
				for i := int64(0); i < n; i++ {
					p := payloadFor(i, 0, int(i%37)*3)
					if _, err := TableInsert(m, root, i, p); err != nil {
						t.Fatal(err)
					}
					model[i] = p
				}
				checkTable(t, m, root, model)
				var keys []int64
				for i := int64(0); i < n; i++ {
					switch order {
					case "ascending":
						keys = append(keys, i)
					case "descending":
						keys = append(keys, n-1-i)
					case "alternate":
						keys = append(keys, (i*2)%n+(i*2)/n)
					case "middle":
						if i%2 == 0 {
							keys = append(keys, n/2+i/2)
						} else {
							keys = append(keys, n/2-1-i/2)
						}
					}
				}
				for j, k := range keys {
					found, err := TableDelete(m, root, k)
					if err != nil || !found {
						t.Fatalf("delete %d: %v %v", k, found, err)
					}
					delete(model, k)
					if j%500 == 0 {
						checkTable(t, m, root, model)
					}
				}
				checkTable(t, m, root, model)
			})
		}
	}
}

// A sequential load packs leaves full: every leaf but the last is filled
// to within one cell of capacity.
func TestSequentialLoadPacksPages(t *testing.T) {
	m := newMemPager(4096, false)
	root := must(CreateTree(m, true))
	const n = 20000
	rec := make([]byte, 100)
	for i := int64(1); i <= n; i++ {
		if _, err := TableInsert(m, root, i, rec); err != nil {
			t.Fatal(err)
		}
	}
	leaves, interior := 0, 0
	if err := Walk(m, root, true, false, func(v PageVisit) error {
		if v.Type.IsLeaf() {
			leaves++
		} else {
			interior++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cell := 1 + 2 + 100 + 2      // payload length, rowid (2 bytes), record, pointer
	perLeaf := (4096 - 8) / cell // 38
	if want := (n + perLeaf - 1) / perLeaf; leaves > want+1 {
		t.Fatalf("%d leaves for %d rows, want about %d (pages not packed)", leaves, n, want)
	}
	if interior > leaves/100+2 {
		t.Fatalf("%d interior pages for %d leaves", interior, leaves)
	}
}

// Inserting into a page with room shifts pointers only; defragmentation
// happens when the gap is short but freeblocks suffice.
func TestPageEditsFragmentation(t *testing.T) {
	m := newMemPager(512, true)
	root := must(CreateTree(m, true))
	model := tableModel{}
	r := rand.New(rand.NewPCG(5, 5))
	for round := 0; round < 400; round++ {
		k := int64(r.IntN(40))
		if r.IntN(3) == 0 {
			if _, err := TableDelete(m, root, k); err != nil {
				t.Fatal(err)
			}
			delete(model, k)
		} else {
			// Sizes differing by 1..3 bytes leave fragments.
			p := payloadFor(k, round, 10+r.IntN(6))
			if _, err := TableInsert(m, root, k, p); err != nil {
				t.Fatal(err)
			}
			model[k] = p
		}
		checkTable(t, m, root, model)
	}
}

// Pages with reserved bytes at their end: everything works in the usable
// part, and the reserved bytes stay untouched (the validator checks).
func TestReservedBytes(t *testing.T) {
	for _, reserved := range []int{8, 32} {
		t.Run(fmt.Sprint(reserved), func(t *testing.T) {
			m := newMemPagerReserved(1024, reserved, true)
			runTableWorkloadOn(t, m, tableWorkload{n: 800, ops: 1500, keySpace: 1500, big: 10}, 1, uint64(reserved))
			mi := newMemPagerReserved(1024, reserved, true)
			runIndexWorkloadOn(t, mi, indexWorkload{nKey: 1, n: 600, ops: 1000, space: 800, big: 10}, 1, uint64(reserved))
		})
	}
}

// Index entries appended in key order fill their pages too: the split at
// the right edge leaves the left page full and moves its last entry up.
func TestSequentialIndexLoadPacksPages(t *testing.T) {
	m := newMemPager(4096, true)
	root := must(CreateTree(m, false))
	const n = 20000
	val := make([]byte, 60)
	var entrySize int
	for i := 0; i < n; i++ {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], uint64(i))
		e := rec(format.BlobValue(k[:]), format.BlobValue(val))
		entrySize = len(e)
		if _, err := IndexInsert(m, root, nil, 1, e); err != nil {
			t.Fatal(err)
		}
	}
	leaves := 0
	if err := Walk(m, root, false, false, func(v PageVisit) error {
		if v.Type.IsLeaf() {
			leaves++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	perLeaf := (4096 - 8) / (entrySize + 1 + 2)
	if want := n / perLeaf; leaves > want+want/20+2 {
		t.Fatalf("%d leaves for %d entries, want about %d (pages not packed)", leaves, n, want)
	}
	im := &indexModel{nKey: 1, entries: map[string][]byte{}}
	for i := 0; i < n; i++ {
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], uint64(i))
		e := rec(format.BlobValue(k[:]), format.BlobValue(val))
		im.entries[im.identity(e)] = e
	}
	checkIndex(t, m, root, im)
}

// TestWriterAppends: one Writer's appends take the last descent's path
// (Writer.appended) only while nothing else has run since: a larger
// rowid after an append, with appends that split the leaf, inserts
// behind the end, replacements, deletes, another tree's appends and
// overflowing rows in between. The trees must match their models and
// validate after each phase.
func TestWriterAppends(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			m := newMemPager(ps, true)
			wr := NewWriter(m)
			a, b := must(wr.CreateTree(true)), must(wr.CreateTree(true))
			ma, mb := tableModel{}, tableModel{}
			r := rand.New(rand.NewPCG(uint64(ps), 7))
			insert := func(root uint32, model tableModel, rowid int64, n int) {
				t.Helper()
				rec := payloadFor(rowid, len(model), n)
				if _, err := wr.TableInsert(root, rowid, rec); err != nil {
					t.Fatalf("insert %d into %d: %v", rowid, root, err)
				}
				model[rowid] = rec
			}
			hinted := 0
			next := int64(1)
			for phase := range 6 {
				for range 2000 {
					switch op := r.IntN(20); {
					case op < 12: // an append, now and then overflowing
						n := 1 + r.IntN(ps/8)
						if r.IntN(50) == 0 {
							n = 3 * ps
						}
						if wr.appended.ok && wr.appended.root == a {
							hinted++
						}
						insert(a, ma, next, n)
						next += 1 + int64(r.IntN(3))
					case op < 14: // behind the end
						insert(a, ma, 1+r.Int64N(next), 1+r.IntN(ps/4))
					case op < 16: // the other tree
						insert(b, mb, int64(len(mb)+1), 1+r.IntN(ps/8))
					case op < 18: // a delete, the last row at times
						k := next - 1
						if r.IntN(2) == 0 {
							k = 1 + r.Int64N(next)
						}
						if _, err := wr.TableDelete(a, k); err != nil {
							t.Fatal(err)
						}
						delete(ma, k)
					default: // a row replaced by one as long or not
						k := 1 + r.Int64N(next)
						if _, ok := ma[k]; ok {
							insert(a, ma, k, 1+r.IntN(ps/4))
						}
					}
				}
				v := newValidator(m)
				for _, tr := range []struct {
					root  uint32
					model tableModel
				}{{a, ma}, {b, mb}} {
					if n, err := v.tree(tr.root, true, nil, 0); err != nil || n != len(tr.model) {
						t.Fatalf("tree %d: %d rows, %v; the model has %d", tr.root, n, err, len(tr.model))
					}
					compareTableScan(t, m, tr.root, tr.model)
				}
				if err := v.accounting(m, 1); err != nil {
					t.Fatal(err)
				}
				if err := m.commit(); err != nil {
					t.Fatal(err)
				}
				t.Logf("phase %d: %d rows, %d appends on the last path", phase, len(ma), hinted)
			}
			if hinted == 0 {
				t.Fatal("no append took the last descent's path")
			}
		})
	}
}

// TestWriterAppendSplitLeavesLeaf checks that an append which splits the
// right-most leaf, each in a transaction of its own, writes the new leaf
// and the interior pages above it, not the full leaf it leaves as it was.
func TestWriterAppendSplitLeavesLeaf(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			m := newMemPager(ps, true)
			wr := NewWriter(m)
			root := must(wr.CreateTree(true))
			if err := m.commit(); err != nil {
				t.Fatal(err)
			}
			model := tableModel{}
			splits := 0
			for rowid := int64(1); rowid <= 3000; rowid++ {
				before := m.n
				rec := payloadFor(rowid, 0, 1+int(rowid%int64(ps/6)))
				if _, err := wr.TableInsert(root, rowid, rec); err != nil {
					t.Fatalf("insert %d: %v", rowid, err)
				}
				model[rowid] = rec
				if m.n > before {
					splits++
					for pgno, b := range m.dirty {
						// Page 1 (the header's page count; the schema's
						// leaf) is not the tree's.
						if pgno != 1 && pgno <= before && format.PageType(b[0]) == format.PageTableLeaf {
							t.Fatalf("append of %d: the split wrote leaf %d, which it leaves as it was", rowid, pgno)
						}
					}
				}
				if err := m.commit(); err != nil {
					t.Fatal(err)
				}
			}
			if splits < 10 {
				t.Fatalf("%d splits: the test did not split the right-most leaf", splits)
			}
			v := newValidator(m)
			if n, err := v.tree(root, true, nil, 0); err != nil || n != len(model) {
				t.Fatalf("%d rows, %v; the model has %d", n, err, len(model))
			}
			compareTableScan(t, m, root, model)
			if err := v.accounting(m, 1); err != nil {
				t.Fatal(err)
			}
		})
	}
}
