package btree

import (
	"math/rand/v2"

	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// Benchmarks of the write side on the in-memory Writable (pages written in
// place, no copy-on-write), 4096-byte pages, 100-byte rows: the cost of the
// b-tree itself, without a pager.

const benchRowSize = 100

func BenchmarkTableInsertSequential(b *testing.B) {
	m := newMemPager(4096, false)
	wr := NewWriter(m)
	root := must(wr.CreateTree(true))
	rec := make([]byte, benchRowSize)
	m.reserve(b.N/30 + 10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := wr.TableInsert(root, int64(i+1), rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTableInsertRandom(b *testing.B) {
	m := newMemPager(4096, false)
	wr := NewWriter(m)
	root := must(wr.CreateTree(true))
	rec := make([]byte, benchRowSize)
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]int64, b.N)
	m.reserve(b.N/20 + 10)
	for i := range keys {
		keys[i] = r.Int64()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for _, k := range keys {
		if _, err := wr.TableInsert(root, k, rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTableDelete(b *testing.B) {
	m := newMemPager(4096, false)
	wr := NewWriter(m)
	root := must(wr.CreateTree(true))
	rec := make([]byte, benchRowSize)
	for i := 0; i < b.N; i++ {
		if _, err := wr.TableInsert(root, int64(i), rec); err != nil {
			b.Fatal(err)
		}
	}
	keys := rand.New(rand.NewPCG(3, 4)).Perm(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for _, k := range keys {
		if found, err := wr.TableDelete(root, int64(k)); err != nil || !found {
			b.Fatal(found, err)
		}
	}
}

// The package-level function borrows a Writer from a pool.
func BenchmarkTableInsertSequentialPooled(b *testing.B) {
	m := newMemPager(4096, false)
	root := must(CreateTree(m, true))
	rec := make([]byte, benchRowSize)
	m.reserve(b.N/30 + 10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := TableInsert(m, root, int64(i+1), rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIndexInsertRandom(b *testing.B) {
	m := newMemPager(4096, false)
	wr := NewWriter(m)
	root := must(wr.CreateTree(false))
	r := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 60)
	keys := benchKeys(b.N, func(dst []byte, i int) []byte {
		return format.AppendRecord(dst, []format.Value{blobValue(r), blobOf(val)})
	})
	m.reserve(b.N/20 + 10)
	b.ReportAllocs()
	b.ResetTimer()
	for _, k := range keys {
		if _, err := wr.IndexInsert(root, nil, 1, k); err != nil {
			b.Fatal(err)
		}
	}
}

func blobValue(r *rand.Rand) format.Value {
	var k [16]byte
	for i := range k {
		k[i] = byte(r.Uint32())
	}
	return format.BlobValue(k[:])
}

func blobOf(b []byte) format.Value { return format.BlobValue(b) }

// Bucket puts in key order: the right-edge path and packed index pages.
func BenchmarkIndexInsertSequential(b *testing.B) {
	m := newMemPager(4096, false)
	wr := NewWriter(m)
	root := must(wr.CreateTree(false))
	val := make([]byte, 60)
	keys := benchKeys(b.N, func(dst []byte, i int) []byte {
		var k [8]byte
		for j := range k {
			k[j] = byte(uint64(i) >> (56 - 8*j))
		}
		return format.AppendRecord(dst, []format.Value{format.BlobValue(k[:]), blobOf(val)})
	})
	m.reserve(b.N/40 + 10)
	b.ReportAllocs()
	b.ResetTimer()
	for _, k := range keys {
		if _, err := wr.IndexInsert(root, nil, 1, k); err != nil {
			b.Fatal(err)
		}
	}
}

// benchKeys makes n index keys in one buffer, so that the garbage
// collector has few objects to scan while the benchmark runs.
func benchKeys(n int, appendKey func(dst []byte, i int) []byte) [][]byte {
	var buf []byte
	offs := make([]int, n+1)
	for i := 0; i < n; i++ {
		buf = appendKey(buf, i)
		offs[i+1] = len(buf)
	}
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = buf[offs[i]:offs[i+1]:offs[i+1]]
	}
	return keys
}
