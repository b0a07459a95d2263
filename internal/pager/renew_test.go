package pager

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// TestRenewSnapshot: a snapshot renewed with nothing committed is the same
// snapshot, its slices intact, whether it was live or released and however
// the checkpoints ran meanwhile; after a commit, or a WAL that started over
// beneath a released snapshot without any commit (a spill that rolled back),
// it is a new snapshot of the latest commit.
func TestRenewSnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "renew.db")
	p, err := Open(path, Options{PageSize: 512, CacheSize: 16 * 512, CheckpointPages: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	uv := func(s *Snapshot) (uint32, []byte) {
		pg, err := s.Page(1)
		if err != nil {
			t.Fatal(err)
		}
		return format.Header(pg).UserVersion(), pg
	}
	// 60 pages for a later transaction to change.
	w, err := p.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	for range 60 {
		if _, _, err := w.Allocate(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	setUserVersion(t, p, 1)
	var s Snapshot
	p.InitSnapshot(&s)
	v, page1 := uv(&s)
	if v != 1 || !s.InWAL(1) {
		t.Fatalf("user version %d, page 1 in the WAL %v", v, s.InWAL(1))
	}
	held := bytes.Clone(page1)

	// Live, nothing committed: the same snapshot, nothing re-registered.
	if !renew(t, p, &s) {
		t.Fatal("a live snapshot with nothing committed was renewed as a new one")
	}
	// Released, nothing committed, the WAL only partly copied: the same
	// snapshot, and it reads the WAL again, so the next commit must not
	// restart it.
	s.Release()
	if !renew(t, p, &s) {
		t.Fatal("a released snapshot with nothing committed was renewed as a new one")
	}
	frames := p.WALFrames()
	setUserVersion(t, p, 2)
	if p.WALFrames() <= frames {
		t.Fatalf("the WAL started over beneath a renewed snapshot (%d frames, then %d)", frames, p.WALFrames())
	}
	if !bytes.Equal(page1, held) {
		t.Fatal("a renewed snapshot's page changed under it")
	}
	// A commit since: a new snapshot.
	if renew(t, p, &s) {
		t.Fatal("a snapshot was renewed as the same after a commit")
	}
	if v, _ := uv(&s); v != 2 {
		t.Fatalf("renewed snapshot reads user version %d, want 2", v)
	}
	// Every frame copied since, nothing committed: a new snapshot of the
	// same commit, on READ(0) as a new one takes it, so that the next
	// commit starts the WAL over (a snapshot kept on its read mark would
	// keep every writer from doing so, and the WAL would only grow).
	if _, err := p.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	if renew(t, p, &s) {
		t.Fatal("a snapshot on a read mark was renewed as the same once every frame was copied")
	}
	if v, _ := uv(&s); v != 2 {
		t.Fatalf("renewed snapshot reads user version %d, want 2", v)
	}
	setUserVersion(t, p, 2)
	if got := p.WALFrames(); got > 1 {
		t.Fatalf("the WAL did not start over beneath a snapshot of a copied WAL: %d frames", got)
	}

	// A WAL that starts over beneath a released snapshot, with no commit:
	// a write transaction spills frames over the old ones, then rolls back.
	s.Release()
	if _, err := p.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	if w, err = p.BeginWrite(); err != nil {
		t.Fatal(err)
	}
	for pg := uint32(2); pg <= 61; pg++ {
		b, err := w.Write(pg)
		if err != nil {
			t.Fatal(err)
		}
		b[0] = 0xee
		if err := w.Settle(); err != nil {
			t.Fatal(err)
		}
	}
	w.Rollback()
	if renew(t, p, &s) {
		t.Fatal("a snapshot was renewed as the same after its WAL started over")
	}
	if v, _ := uv(&s); v != 2 {
		t.Fatalf("renewed snapshot reads user version %d, want 2", v)
	}
	s.Release()
}

// renew is RenewSnapshot, failing t on an error.
func renew(t *testing.T, p *Pager, s *Snapshot) bool {
	t.Helper()
	same, err := p.RenewSnapshot(s)
	if err != nil {
		t.Fatal(err)
	}
	return same
}
