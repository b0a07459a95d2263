package btree

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// checkFindRowid looks up every key of model (sorted in keys) and the
// rowids beside each through c's tree with FindRowid: a row whose payload
// fits its leaf is found with the model's payload, one that spills leaves
// the cursor on it for Entry to read the chain, and a rowid not in the
// model is absent.
func checkFindRowid(t testing.TB, c *Cursor, keys []int64, model tableModel) {
	t.Helper()
	maxLocal := format.MaxLocal(c.usable, true)
	find := func(rowid int64) {
		t.Helper()
		payload, _, st := c.FindRowid(rowid)
		want, ok := model[rowid]
		switch {
		case !ok:
			if st != FindAbsent {
				t.Fatalf("FindRowid(%d) = %d, want absent", rowid, st)
			}
		case len(want) > maxLocal:
			if st != FindSpills {
				t.Fatalf("FindRowid(%d) of a row of %d bytes = %d, want spills", rowid, len(want), st)
			}
			// The cursor is on the row: Entry reads the chain.
			if r, got, _, err := c.Entry(); err != nil || r != rowid || !bytes.Equal(got, want) {
				t.Fatalf("FindRowid(%d) spills: Entry = %d with %d bytes (%v), want the model's %d", rowid, r, len(got), err, len(want))
			}
		case st != FindFound || !bytes.Equal(payload, want):
			t.Fatalf("FindRowid(%d) = %d with %d bytes, want the model's %d", rowid, st, len(payload), len(want))
		}
	}
	for _, k := range seekTargets(keys) {
		find(k)
	}
	checkLeafDir(t, c, keys)
}

// checkLeafDir builds the leaf directory of c's tree and checks that
// FindRowid through it (UseLeafDir) answers every rowid that checkFindRowid looks up as
// FindRowid does (the same status, leaf and payload, and for a row that
// spills the cursor on it), through c's pages and through a flat copy of
// them, which takes the directory's short path.
func checkLeafDir(t testing.TB, c *Cursor, keys []int64) {
	t.Helper()
	d := BuildLeafDir(c.src, c.root, 1<<20)
	est := EstimateLeaves(c.src, c.root)
	if est < 1 {
		t.Fatalf("EstimateLeaves = %d, want at least 1", est)
	}
	if d == nil {
		if est > 1 {
			t.Fatalf("no leaf directory for a tree estimated at %d leaves", est)
		}
		return // the root is a leaf
	}
	srcs := []Pages{c.src}
	if m, ok := c.src.(*memPager); ok {
		srcs = append(srcs, flatCopy(m))
	}
	for _, src := range srcs {
		var plain, dir Cursor
		plain.Init(src, c.root, true, nil)
		dir.Init(src, c.root, true, nil)
		dir.UseLeafDir(d)
		for _, k := range seekTargets(keys) {
			want, wat, wst := plain.FindRowid(k)
			got, at, st := dir.FindRowid(k)
			if st != wst || at != wat || !bytes.Equal(got, want) {
				t.Fatalf("FindRowid(%d) through the directory = %d on page %d (%d bytes); FindRowid = %d on page %d (%d bytes)",
					k, st, at, len(got), wst, wat, len(want))
			}
			if st == FindSpills {
				r, p, _, err := dir.Entry()
				wr, wp, _, werr := plain.Entry()
				if err != nil || werr != nil || r != wr || !bytes.Equal(p, wp) {
					t.Fatalf("FindRowid(%d) through the directory spills: Entry = %d with %d bytes (%v), FindRowid's %d with %d bytes (%v)",
						k, r, len(p), err, wr, len(wp), werr)
				}
			}
		}
	}
}

// seekTargets returns the rowids a search test looks up in a tree of keys:
// each key and the rowids beside it, the ends of int64, and 0.
func seekTargets(keys []int64) []int64 {
	out := make([]int64, 0, 3*len(keys)+3)
	for _, k := range keys {
		out = append(out, k)
		if k > math.MinInt64 {
			out = append(out, k-1)
		}
		if k < math.MaxInt64 {
			out = append(out, k+1)
		}
	}
	return append(out, math.MinInt64, math.MaxInt64, 0)
}

// TestFindRowidStaleHint changes a tree under a cursor that keeps its
// root's hint, then points the cursor at another tree of the same shape
// and root page: FindRowid guesses from the old first and last keys, and
// must still answer from the keys it reads.
func TestFindRowidStaleHint(t *testing.T) {
	for _, ps := range []int{512, 4096} {
		m := newMemPager(ps, false)
		wr := NewWriter(m)
		root, err := wr.CreateTree(true)
		if err != nil {
			t.Fatal(err)
		}
		model := tableModel{}
		r := rand.New(rand.NewPCG(uint64(ps), 3))
		var c Cursor
		for round := range 6 {
			switch round % 3 {
			case 0: // append past the old last key
				base := int64(len(model)) * 10
				for i := range int64(3000) {
					p := payloadFor(base+i, round, 40)
					if _, err := wr.TableInsert(root, base+i, p); err != nil {
						t.Fatal(err)
					}
					model[base+i] = p
				}
			case 1: // delete most keys, keeping the root's page
				for k := range model {
					if r.IntN(10) != 0 {
						if _, err := wr.TableDelete(root, k); err != nil {
							t.Fatal(err)
						}
						delete(model, k)
					}
				}
			case 2: // rows before the old first key
				for range 2000 {
					k := -1 - r.Int64N(1<<40)
					p := payloadFor(k, round, r.IntN(120))
					if _, err := wr.TableInsert(root, k, p); err != nil {
						t.Fatal(err)
					}
					model[k] = p
				}
			}
			c.Init(m, root, true, nil) // the hint stays
			keys := make([]int64, 0, len(model))
			for k := range model {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			checkFindRowid(t, &c, keys, model)
		}
		// Another tree, its keys far from the first's, through the same
		// cursor: same root page, maybe the same cells, another range.
		other := newMemPager(ps, false)
		owr := NewWriter(other)
		oroot, err := owr.CreateTree(true)
		if err != nil {
			t.Fatal(err)
		}
		omodel := tableModel{}
		okeys := []int64{}
		for i := range int64(3000) {
			k := 1<<50 + i*7
			p := payloadFor(k, 0, 40)
			if _, err := owr.TableInsert(oroot, k, p); err != nil {
				t.Fatal(err)
			}
			omodel[k] = p
			okeys = append(okeys, k)
		}
		if oroot != root {
			t.Fatalf("roots %d and %d: want the same page", root, oroot)
		}
		c.Init(other, oroot, true, nil)
		checkFindRowid(t, &c, okeys, omodel)
	}
}

// TestFindRowidDamaged damages every byte of a small tree's pages in turn:
// FindRowid must not panic or loop, and a payload it finds lies on a page.
// Where the damage breaks the keys' order it may find a row SeekRowid's
// bisection misses, or miss one it finds, as SQLite's own searches would:
// a damaged tree has no one answer, and pagoda check reports it.
func TestFindRowidDamaged(t *testing.T) {
	m, root := damageTree(t, 400)
	if m.n < 4 {
		t.Fatalf("tree of %d pages: want interior pages too", m.n)
	}
	lookups := []int64{0, 1, 3, 111, 299, 600, 1197, 5000, -1}
	answers := map[FindStatus]int{}
	for pgno := uint32(2); pgno <= m.n; pgno++ {
		pg := m.pages[pgno-1]
		for off := range pg {
			for _, v := range []byte{0x00, 0xff, pg[off] ^ 0x80, byte(pgno)} {
				old := pg[off]
				pg[off] = v
				var c, fc Cursor
				c.Init(m, root, true, nil)
				fc.Init(flatCopy(m), root, true, nil)
				for _, k := range lookups {
					payload, at, st := c.FindRowid(k)
					answers[st]++
					sameFind(t, &fc, k, payload, at, st)
					if st == FindFound && (at < 1 || at > m.n || len(payload) > m.usable) {
						t.Fatalf("page %d byte %d = %#x: FindRowid(%d) found %d bytes on page %d", pgno, off, v, k, len(payload), at)
					}
					if st == FindSpills {
						c.Entry() // reads a damaged chain without panicking
					}
				}
				pg[off] = old
			}
		}
	}
	if answers[FindUnsure] == 0 || answers[FindFound] == 0 || answers[FindAbsent] == 0 || answers[FindSpills] == 0 {
		t.Fatalf("answers %v: want each kind on some damaged tree", answers)
	}
}

// damageTree builds the tree the damage tests break: rows 0, 3, 6, ... on
// 512-byte pages, small, and every 37th spilling onto two overflow pages.
func damageTree(t testing.TB, rows int64) (*memPager, uint32) {
	m := newMemPager(512, false)
	wr := NewWriter(m)
	root, err := wr.CreateTree(true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		size := int(i % 50)
		if i%37 == 0 {
			size = 700
		}
		if _, err := wr.TableInsert(root, i*3, payloadFor(i, 0, size)); err != nil {
			t.Fatal(err)
		}
	}
	return m, root
}

// FuzzFindRowid overwrites bytes of a small table tree's pages and looks
// rowids up: FindRowid must neither panic nor loop, and what it finds lies
// on a page of the tree's file.
func FuzzFindRowid(f *testing.F) {
	f.Add(uint8(1), uint16(0), []byte{0x0d}, int64(3))
	f.Add(uint8(2), uint16(8), []byte{0xff, 0xff}, int64(600))
	f.Add(uint8(0), uint16(12), []byte{0, 0, 0, 2}, int64(-1))
	f.Fuzz(func(t *testing.T, page uint8, off uint16, patch []byte, rowid int64) {
		m, root := damageTree(t, 300)
		pg := m.pages[1+int(page)%(int(m.n)-1)] // not page 1, the file header's
		copy(pg[int(off)%len(pg):], patch)
		var c, fc Cursor
		c.Init(m, root, true, nil)
		fc.Init(flatCopy(m), root, true, nil)
		for _, k := range []int64{rowid, rowid + 1, 0, 111, 897} {
			payload, at, st := c.FindRowid(k)
			sameFind(t, &fc, k, payload, at, st)
			if st == FindFound && (at < 1 || at > m.n || len(payload) > m.usable) {
				t.Fatalf("FindRowid(%d) found %d bytes on page %d", k, len(payload), at)
			}
			if st == FindSpills {
				c.Entry() // reads a damaged chain without panicking
			}
		}
	})
}

// flatPager serves a memPager's pages from one slice, as a read snapshot
// of a file without WAL frames does: FindRowid reads them through Flat.
type flatPager struct {
	*memPager
	data []byte
}

// flatCopy copies m's pages into a flatPager.
func flatCopy(m *memPager) *flatPager {
	f := &flatPager{memPager: m}
	for pgno := uint32(1); pgno <= m.n; pgno++ {
		pg, err := m.Page(pgno)
		if err != nil {
			panic(err)
		}
		f.data = append(f.data, pg...)
	}
	return f
}

func (f *flatPager) Page(pgno uint32) ([]byte, error) {
	if pgno == 0 || pgno > f.n {
		return nil, format.Corruptf(pgno, "page %d outside 1..%d", pgno, f.n)
	}
	off := int(pgno-1) * f.pageSize
	return f.data[off : off+f.pageSize : off+f.pageSize], nil
}

func (f *flatPager) Flat() ([]byte, int) { return f.data, f.pageSize }

// sameFind checks that FindRowid(k) through fc, a cursor on a flatPager,
// answers as the cursor on its memPager did: the same status, page and
// payload bytes.
func sameFind(t testing.TB, fc *Cursor, k int64, payload []byte, at uint32, st FindStatus) {
	t.Helper()
	fp, fat, fst := fc.FindRowid(k)
	if fst != st || fat != at || !bytes.Equal(fp, payload) {
		t.Fatalf("FindRowid(%d) through the flat pages = %d on page %d (%d bytes); through Page = %d on page %d (%d bytes)",
			k, fst, fat, len(fp), st, at, len(payload))
	}
}
