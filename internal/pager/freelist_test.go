package pager

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

func TestFreelistWalk(t *testing.T) {
	path := makeDB(t, "CREATE TABLE t(a)",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<6000) INSERT INTO t SELECT randomblob(2000) FROM c",
		"DELETE FROM t WHERE rowid % 3 != 0")
	p, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s := p.Snapshot()
	pg1, _ := s.Page(1)
	want := format.Header(pg1).FreelistCount()
	if want < 1100 {
		t.Fatalf("freelist only %d pages; the test needs several trunks", want)
	}
	seen := map[uint32]bool{}
	trunks := 0
	err = WalkFreelist(s, func(pgno uint32, trunk bool) error {
		if seen[pgno] {
			t.Fatalf("page %d twice", pgno)
		}
		seen[pgno] = true
		if trunk {
			trunks++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if uint32(len(seen)) != want || trunks < 2 {
		t.Fatalf("walked %d pages (%d trunks), header says %d", len(seen), trunks, want)
	}

	// A trunk that points to itself is a cycle, reported, not followed.
	b, _ := os.ReadFile(path)
	trunk := format.Header(b).FreelistTrunk()
	binary.BigEndian.PutUint32(b[int(trunk-1)*4096:], trunk)
	bad := filepath.Join(t.TempDir(), "cycle.db")
	os.WriteFile(bad, b, 0o644)
	p2, err := Open(bad, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if err := WalkFreelist(p2.Snapshot(), func(uint32, bool) error { return nil }); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("cycle: %v", err)
	}
}

func TestAllocateFree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	p, err := Open(path, Options{PageSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Allocate 300 pages, free them all (more than one trunk's worth at
	// 512-byte pages: 120 leaves per trunk), commit.
	w, err := p.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	var pages []uint32
	for range 300 {
		pg, _, err := w.Allocate()
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, pg)
	}
	for _, pg := range pages {
		if err := w.Free(pg); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := query(t, path, "PRAGMA integrity_check"); got != "ok" {
		t.Fatalf("integrity_check = %q", got)
	}
	if got := query(t, path, "PRAGMA freelist_count"); got != "300" {
		t.Fatalf("freelist_count = %s", got)
	}
	s := p.Snapshot()
	var n int
	if err := WalkFreelist(s, func(uint32, bool) error { n++; return nil }); err != nil || n != 300 {
		t.Fatalf("WalkFreelist: %d pages, %v", n, err)
	}
	s.Release()
	// Allocation reuses the freelist before growing the file.
	w, _ = p.BeginWrite()
	seen := map[uint32]bool{}
	for range 300 {
		pg, b, err := w.Allocate()
		if err != nil {
			t.Fatal(err)
		}
		if pg > 301 || seen[pg] {
			t.Fatalf("allocated page %d (seen %v)", pg, seen[pg])
		}
		for _, c := range b {
			if c != 0 {
				t.Fatal("allocated page not zeroed")
			}
		}
		seen[pg] = true
	}
	if pg, _, _ := w.Allocate(); pg != 302 {
		t.Fatalf("after the freelist, allocated %d, want 302", pg)
	}
	w.Rollback()
	if got := query(t, path, "PRAGMA freelist_count"); got != "300" {
		t.Fatalf("after rollback freelist_count = %s", got)
	}
}

func TestLockBytePageSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.db")
	p, err := Open(path, Options{PageSize: 65536, Sync: SyncOff})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	w, _ := p.BeginWrite()
	lock := format.LockBytePage(65536)
	w.nPages = lock - 3 // as if the file had grown to just below it
	for {
		pg, _, err := w.Allocate()
		if err != nil {
			t.Fatal(err)
		}
		if pg == lock {
			t.Fatal("allocated the lock-byte page")
		}
		if pg > lock {
			break
		}
	}
	w.Rollback()
}

func TestFreelistCorruptionReported(t *testing.T) {
	path := makeDB(t, "CREATE TABLE t(a)")
	b, _ := os.ReadFile(path)
	binary.BigEndian.PutUint32(b[32:], 999) // trunk out of range
	binary.BigEndian.PutUint32(b[36:], 1)
	os.WriteFile(path, b, 0o644)
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	w, _ := p.BeginWrite()
	defer w.Rollback()
	if _, _, err := w.Allocate(); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("Allocate with a bad trunk: %v", err)
	}
}
