package pager

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// TestPageTable checks the page table against a map: lookups, creation,
// walks in page order, and reuse after reset.
func TestPageTable(t *testing.T) {
	var pt pageTable
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 5 {
		model := map[uint32]byte{}
		for range 2000 {
			pgno := uint32(rng.IntN(100_000) + 1)
			if round%2 == 1 {
				pgno = uint32(rng.IntN(300) + 1) // dense
			}
			v := byte(rng.IntN(255) + 1)
			pt.slot(pgno).buf = []byte{v}
			model[pgno] = v
			if q := uint32(rng.IntN(100_000) + 1); model[q] == 0 {
				if s := pt.get(q); s != nil && s.buf != nil {
					t.Fatalf("round %d: page %d has a buffer it was never given", round, q)
				}
			}
		}
		var got []uint32
		pt.each(func(pgno uint32, s *pageSlot) {
			if s.buf[0] != model[pgno] {
				t.Fatalf("round %d: page %d holds %d, want %d", round, pgno, s.buf[0], model[pgno])
			}
			got = append(got, pgno)
		})
		want := make([]uint32, 0, len(model))
		for pgno := range model {
			want = append(want, pgno)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: each visited %d pages, want %d in order", round, len(got), len(want))
		}
		pt.reset()
		for pgno := range model {
			if s := pt.get(pgno); s != nil {
				t.Fatalf("round %d: page %d still has a slot after reset", round, pgno)
			}
		}
		if len(pt.spare) == 0 {
			t.Fatalf("round %d: reset kept no chunk for reuse", round)
		}
	}
}

// TestArenaTrimmed checks that a transaction larger than arenaKeep leaves
// the arena at arenaKeep once it ends, and that the next transactions,
// which reuse its buffers, write correct pages.
func TestArenaTrimmed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	p, err := Open(path, Options{CacheSize: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for round, n := range []int{3 * arenaKeep / DefaultPageSize, 100, 5000} {
		w, err := p.BeginWrite()
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			pgno, b, err := w.Allocate()
			if err != nil {
				t.Fatal(err)
			}
			for j := range b {
				if b[j] != 0 {
					t.Fatalf("round %d: page %d allocated with byte %d = %d", round, pgno, j, b[j])
				}
			}
			b[0], b[len(b)-1] = byte(round+1), byte(i)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := p.wstate.arena.size(); got > arenaKeep {
			t.Fatalf("round %d: arena holds %d bytes after the transaction, want <= %d", round, got, arenaKeep)
		}
	}
	s := p.Snapshot()
	defer s.Release()
	n := uint32(3*arenaKeep/DefaultPageSize + 100 + 5000)
	if s.PageCount() < n+1 {
		t.Fatalf("%d pages, want at least %d", s.PageCount(), n+1)
	}
	pg, err := s.Page(s.PageCount())
	if err != nil {
		t.Fatal(err)
	}
	if pg[0] != 3 || pg[len(pg)-1] != byte(4999%256) {
		t.Fatalf("last page starts with %d and ends with %d, want 3 and %d", pg[0], pg[len(pg)-1], byte(4999%256))
	}
}

// TestFreedPagesPastTheEnd: pages allocated past the end of the file and
// freed in the same transaction are never written (their content does
// not matter), so the file ends before the committed size; a snapshot
// reads them as zeros, as sqlite3 does, instead of failing.
func TestFreedPagesPastTheEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	w, err := p.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	var pgnos []uint32
	for range 10 {
		pgno, b, err := w.Allocate()
		if err != nil {
			t.Fatal(err)
		}
		b[0] = 0xaa
		pgnos = append(pgnos, pgno)
	}
	for _, pgno := range pgnos[2:] {
		if err := w.Free(pgno); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	s := p.Snapshot()
	defer s.Release()
	for pgno := uint32(1); pgno <= s.PageCount(); pgno++ {
		if _, err := s.Page(pgno); err != nil {
			t.Fatalf("page %d of %d: %v", pgno, s.PageCount(), err)
		}
	}
}
