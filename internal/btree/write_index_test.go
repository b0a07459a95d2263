package btree

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// indexModel is what an index tree should hold: entries by their identity
// (the encoding of their first nKey fields).
type indexModel struct {
	nKey    int
	kinfo   *format.KeyInfo
	entries map[string][]byte
}

func (im *indexModel) identity(rec []byte) string {
	if im.nKey <= 0 {
		return string(rec)
	}
	var vals []format.Value
	r := must(format.NewRecordReader(rec))
	for i := 0; i < im.nKey; i++ {
		v, ok, err := r.Next()
		if err != nil {
			panic(err)
		}
		if !ok {
			break
		}
		vals = append(vals, v)
	}
	return string(format.AppendRecord(nil, vals))
}

func (im *indexModel) sorted() [][]byte {
	out := make([][]byte, 0, len(im.entries))
	for _, e := range im.entries {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b []byte) int { return must(format.CompareRecordPrefix(a, b, im.kinfo, im.nKey)) })
	return out
}

func checkIndex(t testing.TB, m *memPager, root uint32, im *indexModel) {
	t.Helper()
	v := newValidator(m)
	n, err := v.tree(root, false, im.kinfo, im.nKey)
	if err != nil {
		t.Fatalf("tree %d: %v", root, err)
	}
	if n != len(im.entries) {
		t.Fatalf("tree holds %d entries, model %d", n, len(im.entries))
	}
	if err := v.accounting(m, 1); err != nil {
		t.Fatal(err)
	}
	compareIndexScan(t, m, root, im)
	if err := m.commit(); err != nil {
		t.Fatal(err)
	}
}

func compareIndexScan(t testing.TB, src Pages, root uint32, im *indexModel) {
	t.Helper()
	want := im.sorted()
	var c Cursor
	c.Init(src, root, false, im.kinfo)
	i := 0
	for ok := c.First(); ok; ok = c.Next() {
		p, err := c.Payload()
		if err != nil {
			t.Fatal(err)
		}
		if i >= len(want) || !bytes.Equal(p, want[i]) {
			t.Fatalf("forward scan: entry %d differs (%d entries expected)", i, len(want))
		}
		i++
	}
	if c.Err() != nil || i != len(want) {
		t.Fatalf("forward scan: err %v, %d entries, want %d", c.Err(), i, len(want))
	}
	for ok := c.Last(); ok; ok = c.Prev() {
		i--
		p, err := c.Payload()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p, want[i]) {
			t.Fatalf("backward scan: entry %d differs", i)
		}
	}
	if c.Err() != nil || i != 0 {
		t.Fatalf("backward scan: err %v, %d missed", c.Err(), i)
	}
}

// keyValue draws an index key field: integers, texts and blobs, some long
// enough to overflow an index cell.
func keyValue(r *rand.Rand, space, pageSize int, big int) format.Value {
	k := r.IntN(space)
	switch r.IntN(4) {
	case 0:
		return format.IntValue(int64(k) - int64(space/2))
	case 1:
		pad := 0
		if r.IntN(100) < big {
			pad = r.IntN(2 * pageSize)
		}
		return format.TextValue(fmt.Appendf(nil, "k%06d%s", k, bytes.Repeat([]byte{'x'}, pad)))
	default:
		pad := 0
		if r.IntN(100) < big {
			pad = r.IntN(pageSize)
		}
		return format.BlobValue(fmt.Appendf(nil, "%08d%s", k, bytes.Repeat([]byte{0xee}, pad)))
	}
}

type indexWorkload struct {
	name  string
	nKey  int
	n     int
	ops   int
	space int
	big   int
	desc  bool
}

func TestIndexRandomOps(t *testing.T) {
	workloads := []indexWorkload{
		{name: "kv", nKey: 1, n: 1500, ops: 2500, space: 2000, big: 5},
		{name: "kv-large", nKey: 1, n: 300, ops: 600, space: 400, big: 50},
		{name: "index", nKey: 0, n: 2000, ops: 2000, space: 500, big: 3},
		{name: "desc", nKey: 1, n: 1000, ops: 1500, space: 1500, big: 5, desc: true},
		{name: "sequential", nKey: 1, n: 3000, ops: 500, space: -1, big: 0},
	}
	for _, ps := range []int{512, 4096, 65536} {
		for wi, wl := range workloads {
			t.Run(fmt.Sprintf("%d/%s", ps, wl.name), func(t *testing.T) {
				scale := 1
				if ps == 65536 {
					scale = 4
				}
				runIndexWorkload(t, ps, wl, scale, uint64(ps*10+wi))
			})
		}
	}
}

func runIndexWorkload(t *testing.T, ps int, wl indexWorkload, scale int, seed uint64) {
	runIndexWorkloadOn(t, newMemPager(ps, true), wl, scale, seed)
}

func runIndexWorkloadOn(t *testing.T, m *memPager, wl indexWorkload, scale int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 11))
	ps := m.usable
	wr := NewWriter(m)
	root, err := wr.CreateTree(false)
	if err != nil {
		t.Fatal(err)
	}
	im := &indexModel{nKey: wl.nKey, entries: map[string][]byte{}}
	if wl.desc {
		im.kinfo = &format.KeyInfo{Colls: []format.Collation{format.CollNoCase}, Desc: []bool{true}}
	}
	seq := 0
	newEntry := func() []byte {
		var kv format.Value
		if wl.space < 0 {
			seq++
			kv = format.IntValue(int64(seq))
		} else {
			kv = keyValue(r, wl.space, ps, wl.big)
		}
		seq++
		if wl.nKey == 1 {
			val := format.BlobValue(payloadFor(int64(seq), 0, sizeDist(r, ps, wl.big)))
			return format.AppendRecord(nil, []format.Value{kv, val})
		}
		return format.AppendRecord(nil, []format.Value{kv, format.IntValue(int64(seq))})
	}
	put := func(e []byte) {
		id := im.identity(e)
		_, had := im.entries[id]
		replaced, err := wr.IndexInsert(root, im.kinfo, im.nKey, e)
		if err != nil {
			t.Fatalf("insert: %v", err)
		}
		if replaced != had {
			t.Fatalf("insert: replaced %v, model had %v", replaced, had)
		}
		im.entries[id] = e
	}
	del := func(e []byte) {
		id := im.identity(e)
		_, had := im.entries[id]
		key := e
		if wl.nKey == 1 && r.IntN(2) == 0 {
			key = []byte(id) // the key field alone
		}
		found, err := wr.IndexDelete(root, im.kinfo, im.nKey, key)
		if err != nil {
			t.Fatalf("delete: %v", err)
		}
		if found != had {
			t.Fatalf("delete: found %v, model had %v", found, had)
		}
		delete(im.entries, id)
	}
	anyEntry := func() []byte {
		for _, e := range im.entries {
			return e
		}
		return newEntry()
	}
	n, ops := wl.n*(*soak)/scale, wl.ops*(*soak)/scale
	for i := 0; i < n; i++ {
		put(newEntry())
		if i%(n/4+1) == 0 {
			checkIndex(t, m, root, im)
		}
	}
	checkIndex(t, m, root, im)
	for i := 0; i < ops; i++ {
		switch x := r.IntN(10); {
		case x < 4:
			put(newEntry())
		case x < 5 && wl.nKey == 1:
			// Overwrite the value of an existing key.
			e := anyEntry()
			kv, _, _ := format.RecordField(e, 0)
			val := format.BlobValue(payloadFor(int64(i), 1, sizeDist(r, ps, wl.big)))
			put(format.AppendRecord(nil, []format.Value{kv, val}))
		case x < 6:
			del(newEntry()) // mostly absent
		default:
			del(anyEntry())
		}
		if i%(ops/4+1) == 0 {
			checkIndex(t, m, root, im)
		}
	}
	checkIndex(t, m, root, im)
	all := im.sorted()
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for i, e := range all {
		del(e)
		if i == len(all)*9/10 {
			checkIndex(t, m, root, im)
		}
	}
	checkIndex(t, m, root, im)
	for i := 0; i < n/2; i++ {
		put(newEntry())
	}
	checkIndex(t, m, root, im)
	if err := wr.ClearTree(root, true); err != nil {
		t.Fatal(err)
	}
	if err := m.commit(); err != nil {
		t.Fatal(err)
	}
	if err := newValidator(m).accounting(m, 1); err != nil {
		t.Fatal(err)
	}
}

// TestSeekBlobKey seeks BLOB keys in index trees of several shapes, and
// checks each seek, from the root (SeekKey) and from the last place
// (SeekKeyNear), against the sorted model: the cursor lands on the first
// entry not below the key, exact when that entry's first field is the key.
// The shapes: first fields of every type with long BLOBs that spill
// (compareBlob reads the short ones in place and asks compareCell about the
// rest); 8-byte big-endian integers, dense and sparse, where searchBlob's
// guesses pay; keys spread unevenly, where they miss and seekDown stops
// guessing; and keys sharing their first 8 bytes, where there is nothing
// to guess from.
func TestSeekBlobKey(t *testing.T) {
	be := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	shapes := []struct {
		name string
		key  func(r *rand.Rand, i, ps int) format.Value
	}{
		{"mixed", func(r *rand.Rand, _, ps int) format.Value { return keyValue(r, 2000, ps, 10) }},
		{"integers", func(_ *rand.Rand, i, _ int) format.Value { return format.BlobValue(be(uint64(i))) }},
		{"sparse", func(r *rand.Rand, _, _ int) format.Value { return format.BlobValue(be(r.Uint64())) }},
		{"uneven", func(r *rand.Rand, _, _ int) format.Value {
			return format.BlobValue(be(uint64(1) << r.IntN(63) * uint64(1+r.IntN(3))))
		}},
		{"shared-prefix", func(r *rand.Rand, i, _ int) format.Value {
			return format.BlobValue(fmt.Appendf(nil, "prefix::%07d", r.IntN(100000)))
		}},
	}
	for _, ps := range []int{512, 4096} {
		for _, sh := range shapes {
			t.Run(fmt.Sprintf("%s/%d", sh.name, ps), func(t *testing.T) {
				m := newMemPager(ps, true)
				wr := NewWriter(m)
				root, err := wr.CreateTree(false)
				if err != nil {
					t.Fatal(err)
				}
				im := &indexModel{nKey: 0, entries: map[string][]byte{}}
				r := rand.New(rand.NewPCG(uint64(ps), 21))
				var blobs [][]byte
				for i := range 3000 {
					kv := sh.key(r, i, ps)
					if kv.Kind == format.KindBlob {
						blobs = append(blobs, kv.Bytes)
					}
					e := format.AppendRecord(nil, []format.Value{kv, format.IntValue(int64(i))})
					if _, err := wr.IndexInsert(root, nil, 0, e); err != nil {
						t.Fatal(err)
					}
					im.entries[im.identity(e)] = e
				}
				checkIndex(t, m, root, im)
				sorted := im.sorted()
				targets := [][]byte{nil, {}, {0}, {0xff, 0xff}, be(0), be(1 << 63), be(^uint64(0))}
				for _, b := range blobs {
					targets = append(targets, b, append(b[:len(b):len(b)], 0), b[:len(b)/2])
					if len(b) == 8 {
						targets = append(targets, be(binary.BigEndian.Uint64(b)+1), be(binary.BigEndian.Uint64(b)-1))
					}
				}
				var c, near Cursor
				c.Init(m, root, false, nil)
				near.Init(m, root, false, nil)
				for _, b := range targets {
					key := []format.Value{format.BlobValue(b)}
					at := sort.Search(len(sorted), func(j int) bool {
						cmp, err := format.CompareKey(sorted[j], key, nil)
						if err != nil {
							t.Fatal(err)
						}
						return cmp >= 0
					})
					for _, cur := range []*Cursor{&c, &near} {
						var exact bool
						if cur == &c {
							exact = cur.SeekKey(key)
						} else {
							exact = cur.SeekKeyNear(key)
						}
						if at == len(sorted) {
							if cur.Valid() {
								p, _ := cur.Payload()
								t.Fatalf("seek of % x landed on % x, want past the end", b[:min(8, len(b))], p[:min(12, len(p))])
							}
							continue
						}
						p, err := cur.Payload()
						if !cur.Valid() || err != nil || !bytes.Equal(p, sorted[at]) {
							t.Fatalf("seek of % x = %v, %v: not on entry %d", b[:min(8, len(b))], cur.Valid(), err, at)
						}
						cmp, _ := format.CompareKey(sorted[at], key, nil)
						if exact != (cmp == 0) {
							t.Fatalf("seek of % x: exact = %v, want %v", b[:min(8, len(b))], exact, cmp == 0)
						}
					}
				}
				t.Logf("guess score %d after %d seeks", c.guessScore, c.seeks)
			})
		}
	}
}

// FuzzSeekBlob overwrites bytes of an index tree of BLOB keys (8-byte
// integers, where seeks guess their probes) and seeks BLOB keys in it:
// no seek may panic or loop, whatever the pages say.
func FuzzSeekBlob(f *testing.F) {
	f.Add(uint8(1), uint16(0), []byte{0x0a}, uint64(300))
	f.Add(uint8(2), uint16(12), []byte{0xff, 0xff}, uint64(0))
	f.Add(uint8(0), uint16(20), []byte{0x81, 0x00, 0x0c}, uint64(1<<63))
	f.Fuzz(func(t *testing.T, page uint8, off uint16, patch []byte, k uint64) {
		m := newMemPager(512, false)
		wr := NewWriter(m)
		root, err := wr.CreateTree(false)
		if err != nil {
			t.Fatal(err)
		}
		for i := range uint64(600) {
			e := format.AppendRecord(nil, []format.Value{format.BlobValue(binary.BigEndian.AppendUint64(nil, i*3)), format.IntValue(int64(i))})
			if _, err := wr.IndexInsert(root, nil, 0, e); err != nil {
				t.Fatal(err)
			}
		}
		pg := m.pages[1+int(page)%(int(m.n)-1)] // not page 1, the file header's
		copy(pg[int(off)%len(pg):], patch)
		var c Cursor
		c.Init(m, root, false, nil)
		for _, v := range []uint64{k, k + 1, 0, 900, 1799, 5000} {
			key := []format.Value{format.BlobValue(binary.BigEndian.AppendUint64(nil, v))}
			c.SeekKey(key)
			c.SeekKeyNear(key)
			c.SeekKey([]format.Value{format.BlobValue(binary.BigEndian.AppendUint64(nil, v)[:3])})
		}
	})
}
