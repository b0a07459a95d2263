package btree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
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

// TestSeekBlobKey seeks BLOB keys in index trees whose first fields mix
// every type, long BLOBs that spill among them (compareBlob reads the
// short ones in place and asks compareCell about the rest), and checks
// each seek against the sorted model: the cursor lands on the first entry
// not below the key, exact when that entry's first field is the key.
func TestSeekBlobKey(t *testing.T) {
	for _, ps := range []int{512, 4096} {
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
			kv := keyValue(r, 2000, ps, 10)
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
		targets := [][]byte{nil, {}, {0}, {0xff, 0xff}}
		for _, b := range blobs {
			targets = append(targets, b, append(b[:len(b):len(b)], 0), b[:len(b)/2])
		}
		var c Cursor
		c.Init(m, root, false, nil)
		for _, b := range targets {
			key := []format.Value{format.BlobValue(b)}
			at := len(sorted)
			for j, e := range sorted {
				if cmp, err := format.CompareKey(e, key, nil); err != nil {
					t.Fatal(err)
				} else if cmp >= 0 {
					at = j
					break
				}
			}
			exact := c.SeekKey(key)
			if at == len(sorted) {
				if c.Valid() {
					p, _ := c.Payload()
					t.Fatalf("page size %d: SeekKey(% x) landed on % x, want past the end", ps, b[:min(8, len(b))], p[:min(12, len(p))])
				}
				continue
			}
			p, err := c.Payload()
			if !c.Valid() || err != nil || !bytes.Equal(p, sorted[at]) {
				t.Fatalf("page size %d: SeekKey(% x) = %v, %v: not on entry %d", ps, b[:min(8, len(b))], c.Valid(), err, at)
			}
			cmp, _ := format.CompareKey(sorted[at], key, nil)
			if exact != (cmp == 0) {
				t.Fatalf("page size %d: SeekKey(% x) exact = %v, want %v", ps, b[:min(8, len(b))], exact, cmp == 0)
			}
		}
	}
}
