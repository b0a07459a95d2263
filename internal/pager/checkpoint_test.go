package pager

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// TestCheckpointSyncsFoundWAL: a WAL that Open finds may hold frames its
// writer never synced (it crashed, or ran with SyncNormal). A checkpoint
// syncs it before it writes the database file; otherwise a power loss
// could keep the new pages in the file and only an older prefix of the
// WAL, which recovery would replay over them.
func TestCheckpointSyncsFoundWAL(t *testing.T) {
	path := makeDB(t, "CREATE TABLE t(a)")
	fsys := vfs.NewFault(vfs.OS)
	fsys.SkipSync = true
	session := func(sync SyncMode, fn func(p *Pager)) {
		t.Helper()
		p, err := Open(path, Options{FS: fsys, CheckpointPages: -1, Sync: sync, JournalMode: JournalWAL})
		if err != nil {
			t.Fatal(err)
		}
		fn(p)
		// The process dies: no checkpoint, the files stay as they are.
		fsys.Inject(vfs.FaultCrash, fsys.Ops())
		p.Close()
		fsys.Revive()
	}
	session(SyncFull, func(p *Pager) { setUserVersion(t, p, 1) })
	session(SyncNormal, func(p *Pager) {
		setUserVersion(t, p, 2)
		setUserVersion(t, p, 3)
	})
	session(SyncFull, func(p *Pager) {
		if _, err := p.Checkpoint(CheckpointPassive); err != nil {
			t.Fatal(err)
		}
	})
	if err := fsys.Crash(vfs.CrashDrop, 0); err != nil { // and now the power
		t.Fatal(err)
	}
	wantRecoveredUserVersion(t, path, 3)
}

// TestCloseCheckpointFails: when the checkpoint at Close cannot write the
// database file (a full disk), Close says that every commit stands
// (ErrCheckpoint), and they all do: the WAL holds them for the next Open.
func TestCloseCheckpointFails(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "full.db")
		fsys := vfs.NewFault(vfs.OS)
		p, err := Open(path, Options{FS: fsys, CheckpointPages: -1, Exclusive: exclusive})
		if err != nil {
			t.Fatal(err)
		}
		for v := uint32(1); v <= 5; v++ {
			setUserVersion(t, p, v)
		}
		fsys.Inject(vfs.FaultForever, fsys.Ops(), vfs.OpWrite)
		err = p.Close()
		if !errors.Is(err, format.ErrCheckpoint) || !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("exclusive %v: Close: %v, want ErrCheckpoint", exclusive, err)
		}
		if got := query(t, path, "PRAGMA user_version"); got != "5" {
			t.Errorf("exclusive %v: after the failed checkpoint SQLite reads user_version %s, want 5", exclusive, got)
		}
		q, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var s Snapshot
		if err := q.InitSnapshot(&s); err != nil {
			t.Fatal(err)
		}
		pg1, err := s.Page(1)
		if err != nil {
			t.Fatal(err)
		}
		if v := format.Header(pg1).UserVersion(); v != 5 {
			t.Errorf("exclusive %v: reopened: user_version %d, want 5", exclusive, v)
		}
		s.Release()
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		if got := query(t, path, "PRAGMA integrity_check"); got != "ok" {
			t.Errorf("integrity_check: %s", got)
		}
	}
}
