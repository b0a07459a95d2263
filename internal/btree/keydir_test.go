package btree

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// keyTree builds an index tree of (key BLOB, value BLOB) entries, a
// bucket's, from keys, and returns it with the keys sorted.
func keyTree(t testing.TB, ps int, keys [][]byte, valSize func(i int) int) (*memPager, uint32, [][]byte) {
	t.Helper()
	m := newMemPager(ps, false)
	wr := NewWriter(m)
	root, err := wr.CreateTree(false)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		rec := format.AppendRecord(nil, []format.Value{format.BlobValue(k), format.BlobValue(bytes.Repeat([]byte{byte(i)}, valSize(i)))})
		if _, err := wr.IndexInsert(root, nil, 1, rec); err != nil {
			t.Fatal(err)
		}
	}
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, bytes.Compare)
	sorted = slices.CompactFunc(sorted, bytes.Equal)
	return m, root, sorted
}

// TestKeyDir checks SeekBlobDir against SeekKey from the root on trees of
// several depths and key shapes: every key (those in interior pages
// found there), keys between them, before the first and after the last;
// and that the directory lists the tree's leaves in order.
func TestKeyDir(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := []struct {
		name string
		key  func(i int) []byte
		val  func(i int) int
		n    int
	}{
		{"be64", func(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)*7919) }, func(int) int { return 100 }, 6000},
		{"text", func(i int) []byte { return fmt.Appendf(nil, "k%08d", r.IntN(1e8)) }, func(int) int { return 40 }, 5000},
		{"random-lengths", func(i int) []byte {
			b := make([]byte, 1+r.IntN(30))
			for j := range b {
				b[j] = byte(r.IntN(4)) // shared prefixes
			}
			return b
		}, func(i int) int { return r.IntN(200) }, 4000},
		{"long-keys", func(i int) []byte { return fmt.Appendf(nil, "%0100d", i) }, func(int) int { return 10 }, 3000},
	}
	for _, ps := range []int{512, 4096} {
		for _, sh := range shapes {
			t.Run(fmt.Sprintf("%s/%d", sh.name, ps), func(t *testing.T) {
				keys := make([][]byte, sh.n)
				for i := range keys {
					keys[i] = sh.key(i)
				}
				// Entries held whole in the interior pages: the directory
				// refuses separators that spill.
				val := func(i int) int { return min(sh.val(i), ps/16) }
				if len(keys[0])+ps/16 > format.MaxLocal(ps, false)-8 {
					t.Skip("entries spill at this page size")
				}
				m, root, sorted := keyTree(t, ps, keys, val)
				d := BuildKeyDir(m, root, 1<<20)
				if d == nil {
					t.Fatal("no directory")
				}
				// The directory's leaves are the tree's, in order.
				var c Cursor
				c.Init(m, root, false, nil)
				var leaves []uint32
				for ok := c.First(); ok; ok = c.Next() {
					if pg, _ := c.Page(); pg.Type.IsLeaf() && (len(leaves) == 0 || leaves[len(leaves)-1] != pg.Pgno) {
						leaves = append(leaves, pg.Pgno)
					}
				}
				got := make([]uint32, d.Leaves())
				for i, e := range d.ents {
					got[i] = e.leaf
				}
				if !slices.Equal(got, leaves) {
					t.Fatalf("directory leaves %v..., want %v...", got[:min(5, len(got))], leaves[:min(5, len(leaves))])
				}
				probes := [][]byte{{}, {0}, bytes.Repeat([]byte{0xff}, 120)}
				for _, k := range sorted {
					probes = append(probes, k, append(slices.Clone(k), 0), k[:len(k)-1])
				}
				var dc, rc Cursor
				for _, k := range probes {
					dc.Init(m, root, false, nil)
					rc.Init(m, root, false, nil)
					want := rc.SeekKey([]format.Value{format.BlobValue(k)})
					got := dc.SeekBlobDir(d, k)
					if got != want || dc.Err() != nil || rc.Err() != nil {
						t.Fatalf("key %x: through the directory %v (%v), from the root %v (%v)", k, got, dc.Err(), want, rc.Err())
					}
					if !got {
						continue
					}
					_, gp, _, err1 := dc.Entry()
					_, wp, _, err2 := rc.Entry()
					if err1 != nil || err2 != nil || !bytes.Equal(gp, wp) {
						t.Fatalf("key %x: entry %x (%v), want %x (%v)", k, gp, err1, wp, err2)
					}
				}
				// FindBlob through flat pages: every answer it gives is
				// SeekBlobDir's, and on evenly spread keys it gives most.
				fm := flatCopy(m)
				var fc Cursor
				fc.Init(fm, root, false, nil)
				found, present := 0, 0
				for _, k := range probes {
					dc.Init(m, root, false, nil)
					want := dc.SeekBlobDir(d, k)
					var wp []byte
					if want {
						present++
						_, wp, _, _ = dc.Entry()
					}
					payload, pgno, st := fc.FindBlob(d, k)
					switch {
					case st == FindUnsure:
					case st != FindFound || !want || !bytes.Equal(payload, wp) || pgno < 2:
						t.Fatalf("key %x: FindBlob %d, %x on page %d; SeekBlobDir %v, %x", k, st, payload, pgno, want, wp)
					default:
						found++
					}
				}
				// Keys equal to a separator (one a leaf: a sixth of them on
				// 512-byte pages) and the first leaf's are left to the seek.
				if sh.name == "be64" && found < present*3/4 {
					t.Errorf("FindBlob found %d of %d keys present, want 3/4", found, present)
				}
				// A cap below the leaves: no directory.
				if d := BuildKeyDir(m, root, len(leaves)-1); d != nil {
					t.Fatalf("a directory of %d leaves under a cap of %d", d.Leaves(), len(leaves)-1)
				}
			})
		}
	}
}

// TestKeyDirRefuses: no directory for a tree whose root is a leaf, a
// table tree, or keys that are not BLOBs.
func TestKeyDirRefuses(t *testing.T) {
	m, root, _ := keyTree(t, 4096, [][]byte{[]byte("a"), []byte("b")}, func(int) int { return 1 })
	if d := BuildKeyDir(m, root, 1<<20); d != nil {
		t.Error("a directory of a one-leaf tree")
	}
	tm, troot := damageTree(t, 400)
	if d := BuildKeyDir(tm, troot, 1<<20); d != nil {
		t.Error("a directory of a table tree")
	}
	im := newMemPager(512, false)
	wr := NewWriter(im)
	iroot, err := wr.CreateTree(false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		if _, err := wr.IndexInsert(iroot, nil, 1, format.AppendRecord(nil, []format.Value{format.IntValue(int64(i)), format.BlobValue(make([]byte, 30))})); err != nil {
			t.Fatal(err)
		}
	}
	if d := BuildKeyDir(im, iroot, 1<<20); d != nil {
		t.Error("a directory of integer keys")
	}
}

// TestKeyDirDamaged damages every byte of a small key tree's interior
// pages in turn: building must not panic or loop, and where a directory
// is built, seeks through it must not either.
func TestKeyDirDamaged(t *testing.T) {
	keys := make([][]byte, 300)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint32(nil, uint32(i*13))
	}
	for pgno := uint32(2); ; pgno++ {
		m, root, sorted := keyTree(t, 512, keys, func(int) int { return 20 })
		if pgno > m.n {
			break
		}
		pg := m.pages[pgno-1]
		if format.PageType(pg[0]) != format.PageIndexInterior && format.PageType(pg[100%len(pg)]) != format.PageIndexInterior {
			continue
		}
		for off := 0; off < len(pg); off += 3 {
			saved := pg[off]
			pg[off] ^= 0x5a
			if d := BuildKeyDir(m, root, 1<<20); d != nil {
				var c Cursor
				for _, k := range sorted[:40] {
					c.Init(m, root, false, nil)
					c.SeekBlobDir(d, k)
				}
			}
			pg[off] = saved
		}
	}
}

// TestFindBlobDamaged: FindBlob on leaves damaged after their directory
// was built (a file that changed under a snapshot, or damaged where the
// directory does not look) neither panics nor answers a key it does not
// hold: every byte of every leaf changed in turn.
func TestFindBlobDamaged(t *testing.T) {
	keys := make([][]byte, 300)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(nil, uint64(i*13))
	}
	m, root, sorted := keyTree(t, 512, keys, func(int) int { return 20 })
	d := BuildKeyDir(m, root, 1<<20)
	if d == nil {
		t.Fatal("no directory")
	}
	f := flatCopy(m)
	var c Cursor
	c.Init(f, root, false, nil)
	for pgno := uint32(2); pgno <= m.n; pgno++ {
		pg := f.data[int(pgno-1)*512 : int(pgno)*512]
		if format.PageType(pg[0]) != format.PageIndexLeaf {
			continue
		}
		for off := range pg {
			saved := pg[off]
			pg[off] ^= 0x5a
			for _, k := range sorted {
				payload, _, st := c.FindBlob(d, k)
				if st != FindFound {
					continue
				}
				if got, _, ok := format.BytesPair(payload); ok && !bytes.Equal(got, k) {
					t.Fatalf("page %d byte %d changed: FindBlob(%x) answered the entry of %x", pgno, off, k, got)
				}
			}
			pg[off] = saved
		}
	}
}

func BenchmarkSeekBlobDir(b *testing.B) {
	keys := make([][]byte, 50000)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(nil, r.Uint64())
	}
	m, root, sorted := keyTree(b, 4096, keys, func(int) int { return 100 })
	d := BuildKeyDir(m, root, 1<<20)
	for _, mode := range []string{"root", "dir"} {
		b.Run(mode, func(b *testing.B) {
			var c Cursor
			for i := 0; b.Loop(); i++ {
				k := sorted[(i*7919)%len(sorted)]
				c.Init(m, root, false, nil)
				var ok bool
				if mode == "dir" {
					ok = c.SeekBlobDir(d, k)
				} else {
					ok = c.SeekKey([]format.Value{format.BlobValue(k)})
				}
				if !ok {
					b.Fatal("not found")
				}
			}
		})
	}
}

// FuzzFindBlob overwrites bytes of a small bucket tree's pages, after and
// before its key directory is built, and looks keys up through it with
// FindBlob: it may not panic or loop, and an entry it finds holds the key
// looked up and lies on a page of the file.
func FuzzFindBlob(f *testing.F) {
	f.Add(uint8(1), uint16(0), []byte{0x0a}, uint64(13))
	f.Add(uint8(2), uint16(8), []byte{0x0f, 0xff}, uint64(26))
	f.Add(uint8(3), uint16(300), []byte{0x81, 0x00, 0x0c}, uint64(1))
	keys := make([][]byte, 300)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(nil, uint64(i*13))
	}
	f.Fuzz(func(t *testing.T, page uint8, off uint16, patch []byte, k uint64) {
		m, root, _ := keyTree(t, 512, keys, func(int) int { return 20 })
		before := BuildKeyDir(m, root, 1<<20)
		pg := m.pages[1+int(page)%(int(m.n)-1)] // not page 1, the file header's
		copy(pg[int(off)%len(pg):], patch)
		flat := flatCopy(m)
		for _, d := range []*KeyDir{before, BuildKeyDir(flat, root, 1<<20)} {
			if d == nil {
				continue
			}
			var c Cursor
			c.Init(flat, root, false, nil)
			for _, key := range [][]byte{binary.BigEndian.AppendUint64(nil, k), binary.BigEndian.AppendUint64(nil, k-k%13), {}, {0xff}} {
				payload, at, st := c.FindBlob(d, key)
				if st != FindFound {
					continue
				}
				if at < 2 || at > m.n || len(payload) > m.usable {
					t.Fatalf("FindBlob(%x) found %d bytes on page %d", key, len(payload), at)
				}
				if got, _, ok := format.BytesPair(payload); ok && !bytes.Equal(got, key) {
					t.Fatalf("FindBlob(%x) found the entry of %x", key, got)
				}
			}
		}
	})
}
