package btree

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLeafDirShapes checks FindRowid through a leaf directory against FindRowid from the root (checkLeafDir) on
// trees of every depth the page sizes give, with keys dense (one a cell:
// the short path), sparse, negative, at the ends of int64, and with rows
// that spill; and that the directory lists each leaf once, in key order.
func TestLeafDirShapes(t *testing.T) {
	type shape struct {
		name string
		key  func(i int64, r *rand.Rand) int64
		size func(i int64, r *rand.Rand) int
		rows int64
	}
	shapes := []shape{
		{"dense", func(i int64, _ *rand.Rand) int64 { return i + 1 }, func(int64, *rand.Rand) int { return 100 }, 20000},
		{"dense-varied", func(i int64, _ *rand.Rand) int64 { return i + 1 }, func(_ int64, r *rand.Rand) int { return r.IntN(300) }, 8000},
		{"sparse", func(i int64, _ *rand.Rand) int64 { return i * 7 }, func(int64, *rand.Rand) int { return 30 }, 8000},
		{"random", func(_ int64, r *rand.Rand) int64 { return r.Int64() - r.Int64() }, func(_ int64, r *rand.Rand) int { return r.IntN(80) }, 6000},
		{"rowids-of-4-bytes", func(i int64, _ *rand.Rand) int64 { return 1<<22 + i }, func(int64, *rand.Rand) int { return 20 }, 6000},
		// A two-byte payload size before a four-byte rowid: the longest cell
		// start the directory's short path reads.
		{"rowids-of-4-bytes-wide", func(i int64, _ *rand.Rand) int64 { return 1<<22 + i }, func(int64, *rand.Rand) int { return 200 }, 3000},
		{"rowids-of-6-bytes", func(i int64, _ *rand.Rand) int64 { return 1<<40 + i }, func(int64, *rand.Rand) int { return 20 }, 6000},
		{"spills", func(i int64, _ *rand.Rand) int64 { return i * 2 }, func(i int64, _ *rand.Rand) int {
			if i%11 == 0 {
				return 5000
			}
			return 60
		}, 3000},
	}
	for _, ps := range []int{512, 4096, 65536} {
		for _, sh := range shapes {
			t.Run(fmt.Sprintf("%s/%d", sh.name, ps), func(t *testing.T) {
				m := newMemPager(ps, false)
				wr := NewWriter(m)
				root, err := wr.CreateTree(true)
				if err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewPCG(uint64(ps), 9))
				model := tableModel{}
				for i := range sh.rows {
					k := sh.key(i, r)
					p := payloadFor(k, 0, sh.size(i, r))
					if _, err := wr.TableInsert(root, k, p); err != nil {
						t.Fatal(err)
					}
					model[k] = p
				}
				for _, k := range []int64{math.MinInt64, math.MaxInt64} {
					p := payloadFor(k, 1, 10)
					if _, err := wr.TableInsert(root, k, p); err != nil {
						t.Fatal(err)
					}
					model[k] = p
				}
				keys := make([]int64, 0, len(model))
				for k := range model {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				var c Cursor
				c.Init(m, root, true, nil)
				checkLeafDir(t, &c, keys)
				// The directory's leaves are the tree's, in order.
				d := BuildLeafDir(m, root, 1<<20)
				if d == nil {
					t.Fatal("no directory")
				}
				var leaves []uint32
				for ok := c.First(); ok; ok = c.Next() {
					pg, _ := c.Page()
					if len(leaves) == 0 || leaves[len(leaves)-1] != pg.Pgno {
						leaves = append(leaves, pg.Pgno)
					}
				}
				if c.Err() != nil {
					t.Fatal(c.Err())
				}
				got := make([]uint32, d.Leaves())
				for i, e := range d.ents {
					got[i] = e.page
				}
				if !slices.Equal(got, leaves) {
					t.Fatalf("directory leaves %v..., want the scan's %v...", got[:min(5, len(got))], leaves[:min(5, len(leaves))])
				}
				if est := EstimateLeaves(m, root); est < 2 {
					t.Fatalf("EstimateLeaves = %d for %d leaves", est, len(leaves))
				}
				// A cap below the leaves: no directory.
				if d := BuildLeafDir(m, root, len(leaves)-1); d != nil {
					t.Fatalf("a directory of %d leaves under a cap of %d", d.Leaves(), len(leaves)-1)
				}
			})
		}
	}
}

// TestLeafDirDamaged damages every byte of a small tree's pages in turn and
// builds its directory: building must not panic or loop, and where a
// directory is built, FindRowid through it must not either, and what it finds lies
// on a page of the file. (A damaged tree has no one answer: see
// TestFindRowidDamaged. Where the interior pages are whole, the directory
// is the tree's, and the lookups land on the leaves FindRowid reads.)
func TestLeafDirDamaged(t *testing.T) {
	m, root := damageTree(t, 400)
	lookups := []int64{0, 1, 3, 111, 299, 600, 1197, 5000, -1, math.MaxInt64, math.MinInt64}
	built, refused := 0, 0
	for pgno := uint32(2); pgno <= m.n; pgno++ {
		pg := m.pages[pgno-1]
		for off := range pg {
			for _, v := range []byte{0x00, 0xff, pg[off] ^ 0x80, byte(pgno)} {
				old := pg[off]
				pg[off] = v
				for _, src := range []Pages{m, flatCopy(m)} {
					d := BuildLeafDir(src, root, 1<<20)
					EstimateLeaves(src, root)
					if d == nil {
						refused++
						continue
					}
					built++
					var c Cursor
					c.Init(src, root, true, nil)
					c.UseLeafDir(d)
					for _, k := range lookups {
						payload, at, st := c.FindRowid(k)
						if st == FindFound && (at < 1 || at > m.n || len(payload) > m.usable) {
							t.Fatalf("page %d byte %d = %#x: FindRowid(%d) through the directory found %d bytes on page %d", pgno, off, v, k, len(payload), at)
						}
						if st == FindSpills {
							c.Entry() // reads a damaged chain without panicking
						}
					}
				}
				pg[off] = old
			}
		}
	}
	if built == 0 || refused == 0 {
		t.Fatalf("%d directories built, %d refused: want both", built, refused)
	}
}

// FuzzFindRowidIn overwrites bytes of a small table tree's pages, builds
// its leaf directory and looks rowids up through it: neither may panic or
// loop, and what FindRowid finds through it lies on a page of the tree's file.
func FuzzFindRowidIn(f *testing.F) {
	f.Add(uint8(1), uint16(0), []byte{0x0d}, int64(3))
	f.Add(uint8(0), uint16(12), []byte{0, 0, 0, 2}, int64(-1))
	f.Add(uint8(3), uint16(20), []byte{0x81, 0x00}, int64(897))
	f.Fuzz(func(t *testing.T, page uint8, off uint16, patch []byte, rowid int64) {
		m, root := damageTree(t, 300)
		pg := m.pages[1+int(page)%(int(m.n)-1)] // not page 1, the file header's
		copy(pg[int(off)%len(pg):], patch)
		for _, src := range []Pages{m, flatCopy(m)} {
			d := BuildLeafDir(src, root, 1<<20)
			if d == nil {
				continue
			}
			var c Cursor
			c.Init(src, root, true, nil)
			c.UseLeafDir(d)
			for _, k := range []int64{rowid, rowid + 1, 0, 111, 897} {
				payload, at, st := c.FindRowid(k)
				if st == FindFound && (at < 1 || at > m.n || len(payload) > m.usable) {
					t.Fatalf("FindRowid(%d) through the directory found %d bytes on page %d", k, len(payload), at)
				}
				if st == FindSpills {
					c.Entry()
				}
			}
		}
	})
}

// TestFindRowidInChecksTheKey changes the rowid of one cell of a leaf that
// holds one key a cell (the directory's short path reads the cell where the
// rowid should be) to its neighbour's: that rowid is gone from the tree,
// and FindRowid through the directory must not find it in the cell it expected it in.
func TestFindRowidInChecksTheKey(t *testing.T) {
	m := newMemPager(512, false)
	wr := NewWriter(m)
	root, err := wr.CreateTree(true)
	if err != nil {
		t.Fatal(err)
	}
	for k := int64(1); k <= 2000; k++ {
		if _, err := wr.TableInsert(root, k, payloadFor(k, 0, 40)); err != nil {
			t.Fatal(err)
		}
	}
	const gone = 1000 // a two-byte varint, 0x87 0x68; 1001 is 0x87 0x69
	var c Cursor
	c.Init(m, root, true, nil)
	if !c.SeekRowid(gone) || c.Rowid() != gone {
		t.Fatal("row not found")
	}
	pg, _ := c.Page()
	off, err := pg.CellOffset(c.cur.idx)
	if err != nil {
		t.Fatal(err)
	}
	data := m.pages[pg.Pgno-1]
	if data[off] != 40 || data[off+1] != 0x87 || data[off+2] != 0x68 {
		t.Fatalf("cell % x: not the layout this test expects", data[off:off+3])
	}
	data[off+2] = 0x69
	for _, src := range []Pages{m, flatCopy(m)} {
		d := BuildLeafDir(src, root, 1<<20)
		if d == nil {
			t.Fatal("no directory")
		}
		var dc Cursor
		dc.Init(src, root, true, nil)
		dc.UseLeafDir(d)
		if _, _, st := dc.FindRowid(gone); st == FindFound || st == FindSpills {
			t.Fatalf("FindRowid(%d) through the directory = %d: found a row whose cell says %d", gone, st, gone+1)
		}
		if p, _, st := dc.FindRowid(gone - 1); st != FindFound || !bytes.Equal(p, payloadFor(gone-1, 0, 40)) {
			t.Fatalf("FindRowid(%d) through the directory beside the damage = %d", gone-1, st)
		}
	}
}

// BenchmarkBuildLeafDir builds the leaf directory of a tree of 200,000
// rows of 100 bytes on 4 KiB pages, the bench fixture's shape: the cost
// that Table.Get amortizes over its lookups (reported a leaf).
func BenchmarkBuildLeafDir(b *testing.B) {
	m := newMemPager(4096, false)
	wr := NewWriter(m)
	root, err := wr.CreateTree(true)
	if err != nil {
		b.Fatal(err)
	}
	for k := int64(1); k <= 200_000; k++ {
		if _, err := wr.TableInsert(root, k, payloadFor(k, 0, 100)); err != nil {
			b.Fatal(err)
		}
	}
	src := flatCopy(m)
	leaves := 0
	b.ReportAllocs()
	for b.Loop() {
		d := BuildLeafDir(src, root, 1<<20)
		if d == nil {
			b.Fatal("no directory")
		}
		leaves = d.Leaves()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(leaves), "ns/leaf")
}

// BenchmarkFindRowidIn looks random rowids up in the tree of
// BenchmarkBuildLeafDir, through its directory and from the root: the
// work of a lookup whose pages are in the CPU's caches.
func BenchmarkFindRowidIn(b *testing.B) {
	m := newMemPager(4096, false)
	wr := NewWriter(m)
	root, err := wr.CreateTree(true)
	if err != nil {
		b.Fatal(err)
	}
	const rows = 200_000
	for k := int64(1); k <= rows; k++ {
		if _, err := wr.TableInsert(root, k, payloadFor(k, 0, 100)); err != nil {
			b.Fatal(err)
		}
	}
	src := flatCopy(m)
	d := BuildLeafDir(src, root, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]int64, 4096)
	for i := range keys {
		keys[i] = 1 + r.Int64N(rows)
	}
	for _, via := range []string{"dir", "root"} {
		b.Run(via, func(b *testing.B) {
			var c Cursor
			c.Init(src, root, true, nil)
			if via == "dir" {
				c.UseLeafDir(d)
			}
			i := 0
			for b.Loop() {
				_, _, st := c.FindRowid(keys[i&4095])
				if st != FindFound {
					b.Fatal(st)
				}
				i++
			}
		})
	}
}
