package pager

import (
	"testing"

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
