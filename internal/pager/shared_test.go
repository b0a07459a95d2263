package pager

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// openShared opens path as a shared pager (two in one process are two
// connections: the locks belong to each open file), skipping where locks
// belong to the process.
func openShared(t *testing.T, path string) *Pager {
	t.Helper()
	if !vfs.FileLocks {
		t.Skip("locks belong to the process here: pagoda does not share a file")
	}
	p, err := Open(path, Options{CheckpointPages: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p.sh == nil {
		t.Fatal("a new database is not shared")
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// readersFree reports whether another connection can have READ(1..4)
// exclusively, as a restart of the WAL needs them.
func readersFree(t *testing.T, p *Pager) bool {
	t.Helper()
	err := p.sh.x.lock(walLockRead(1), shmReaders-1, true)
	if errors.Is(err, ErrLocked) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := p.sh.x.unlock(walLockRead(1), shmReaders-1); err != nil {
		t.Fatal(err)
	}
	return true
}

// lookAgain has p ask at once whether it is still alone, and let go the
// slots it kept idle if not, as its timer does within idleSlotHold.
func lookAgain(p *Pager) {
	p.mu.Lock()
	p.sh.aloneAt = time.Time{}
	p.mu.Unlock()
	p.releaseIdle()
}

// TestWriteTxHoldsNoSlot: a write transaction's snapshot takes no read
// slot (rule 27): a commit costs no read-mark lock calls, and another
// connection could have every READ(i) while it runs; a read snapshot does
// hold one.
func TestWriteTxHoldsNoSlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	a := openShared(t, path)
	setUserVersion(t, a, 1)
	b := openShared(t, path)

	w, err := a.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Rollback()
	var s Snapshot
	if err := w.InitSnapshot(&s); err != nil {
		t.Fatal(err)
	}
	if w.base.slot >= 0 || s.slot >= 0 {
		t.Errorf("write transaction's snapshots hold slots %d and %d", w.base.slot, s.slot)
	}
	if w.base.maxFrame == 0 {
		t.Error("the write transaction does not read the commit in the WAL")
	}
	if !readersFree(t, b) {
		t.Error("READ(1..4) held during a write transaction")
	}
	pg, err := w.Write(1)
	if err != nil {
		t.Fatal(err)
	}
	format.Header(pg).SetUserVersion(2)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	s.Release()

	var r Snapshot
	if err := b.InitSnapshot(&r); err != nil {
		t.Fatal(err)
	}
	if r.slot < 1 {
		t.Fatalf("a reader of the WAL holds slot %d", r.slot)
	}
	pg1, err := r.Page(1)
	if err != nil {
		t.Fatal(err)
	}
	if v := format.Header(pg1).UserVersion(); v != 2 {
		t.Errorf("the other connection reads user_version %d, want 2", v)
	}
	if readersFree(t, a) {
		t.Error("a reader's slot is free to the other connection")
	}
	r.Release()
}

// TestWriteTxReadingWALDoesNotRestart: a write transaction that began
// while frames were not yet in the database file reads them from the WAL;
// a checkpoint by another connection that copies them all meanwhile must
// not let the transaction's first frame restart the WAL over them.
func TestWriteTxReadingWALDoesNotRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	a := openShared(t, path)
	setUserVersion(t, a, 1)
	b := openShared(t, path)

	w, err := a.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Rollback()
	if w.base.slot != writerSlotWAL {
		t.Fatalf("base slot %d, want writerSlotWAL", w.base.slot)
	}
	// Another connection copies every frame (passive: WRITE is a's), once
	// a has let go the slot it kept while it was alone.
	lookAgain(a)
	res, err := b.Checkpoint(CheckpointPassive)
	if err != nil {
		t.Fatal(err)
	}
	if res.Copied != res.Frames || res.Frames == 0 {
		t.Fatalf("checkpoint copied %d of %d frames", res.Copied, res.Frames)
	}
	restarts := a.restarts
	pg, err := w.Write(1)
	if err != nil {
		t.Fatal(err)
	}
	format.Header(pg).SetUserVersion(2)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if a.restarts != restarts {
		t.Error("the WAL restarted under the transaction's own snapshot")
	}
	// The next transaction begins with every frame copied: it restarts.
	setUserVersion(t, a, 3)
	if _, err := b.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	setUserVersion(t, a, 4)
	if a.restarts == restarts {
		t.Error("the WAL never restarted")
	}
	if got := query(t, path, "PRAGMA integrity_check"); got != "ok" {
		t.Errorf("integrity_check: %s", got)
	}
	if got := query(t, path, "PRAGMA user_version"); got != "4" {
		t.Errorf("user_version %s, want 4", got)
	}
}

// TestReadOnlyLeavesNothing: a read-only pager that is the last connection
// to a WAL-mode database with no WAL left removes the -shm file it shared
// the database through, as sqlite3's last connection does; beside another
// connection, or with a WAL to read, the -shm stays.
func TestReadOnlyLeavesNothing(t *testing.T) {
	if !vfs.FileLocks {
		t.Skip("locks belong to the process here: pagoda does not share a file")
	}
	path := filepath.Join(t.TempDir(), "ro.db")
	sqltest.Exec(t, path, "PRAGMA journal_mode=WAL", "CREATE TABLE t(x)", "INSERT INTO t VALUES (1)")
	shm := func() bool {
		_, err := os.Stat(shmPath(path))
		return err == nil
	}
	readAndClose := func() {
		t.Helper()
		r, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.sh == nil {
			t.Fatal("the read-only pager does not share the database")
		}
		var s Snapshot
		if err := r.InitSnapshot(&s); err != nil {
			t.Fatal(err)
		}
		s.Release()
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if shm() {
		t.Fatal("SQLite left a -shm file")
	}
	readAndClose()
	if shm() {
		t.Error("the last connection, read-only, left the -shm file")
	}

	// Beside a writer: the writer's -shm stays.
	w := openShared(t, path)
	setUserVersion(t, w, 3)
	readAndClose()
	if !shm() {
		t.Error("a read-only pager removed the -shm file of a live connection")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if shm() {
		t.Error("the writer, last, left the -shm file")
	}
	if got := query(t, path, "PRAGMA user_version"); got != "3" {
		t.Errorf("user_version %s, want 3", got)
	}
}

// TestDirectWritesShared: a shared write transaction writes pages past the
// committed end straight into the database file (rule 27) while it holds
// READ(0): another connection's checkpoint meanwhile copies nothing, so it
// cannot cut the file to the last commit's size under those pages; after
// the commit both connections, and SQLite, read every page.
func TestDirectWritesShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "direct.db")
	if !vfs.FileLocks {
		t.Skip("locks belong to the process here: pagoda does not share a file")
	}
	a, err := Open(path, Options{CheckpointPages: -1, CacheSize: 16 * 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	setUserVersion(t, a, 1) // a commit in the WAL for b's checkpoint to copy
	b := openShared(t, path)

	w, err := a.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Rollback()
	var pages []uint32
	for i := range 200 {
		pgno, pg, err := w.Allocate()
		if err != nil {
			t.Fatal(err)
		}
		pg[0], pg[1] = 0x0d, byte(i) // a table leaf's type byte, and a mark
		pages = append(pages, pgno)
		if err := w.Settle(); err != nil {
			t.Fatal(err)
		}
	}
	if !w.direct || !w.fence {
		t.Fatalf("direct %v, fence %v: the pages past the end did not go into the file", w.direct, w.fence)
	}
	size0 := fileSize(t, path)
	res, err := b.Checkpoint(CheckpointPassive)
	if err != nil {
		t.Fatal(err)
	}
	if res.Copied != 0 {
		t.Errorf("a checkpoint beside the transaction copied %d frames", res.Copied)
	}
	if size := fileSize(t, path); size < size0 {
		t.Fatalf("the file shrank from %d to %d bytes under the transaction", size0, size)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if a.sh.slots[0].held {
		t.Error("READ(0) still held after the commit")
	}
	// b checkpoints all now; both read every page.
	if _, err := b.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Pager{a, b} {
		var s Snapshot
		if err := p.InitSnapshot(&s); err != nil {
			t.Fatal(err)
		}
		for i, pgno := range pages {
			pg, err := s.Page(pgno)
			if err != nil || pg[1] != byte(i) {
				t.Fatalf("page %d: mark %v, %v", pgno, pg[1], err)
			}
		}
		s.Release()
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestSlotHeldWhileAlone: a pager alone on the database keeps its read
// slot between read transactions (rule 25: no lock call per transaction);
// once another connection has the file open, a slot goes when its last
// reader ends, so that the other's checkpoints do not wait for it.
func TestSlotHeldWhileAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alone.db")
	a := openShared(t, path)
	setUserVersion(t, a, 1)
	read := func() int {
		t.Helper()
		var s Snapshot
		if err := a.InitSnapshot(&s); err != nil {
			t.Fatal(err)
		}
		slot := s.slot
		s.Release()
		return slot
	}
	slot := read()
	if !a.sh.slots[slot].held {
		t.Errorf("alone: slot %d let go after the read", slot)
	}
	b := openShared(t, path)
	_ = b
	time.Sleep(2 * aloneProbe)
	for range aloneDrops { // a look at the clock in that many ends
		slot = read()
	}
	if a.sh.slots[slot].held {
		t.Errorf("beside another connection: slot %d still held after the read", slot)
	}
	if !readersFree(t, b) {
		t.Error("READ(1..4) not free to the other connection between a's reads")
	}
}

// TestOpenBesideTruncate: a connection opening the file while another
// one's TRUNCATE checkpoint copies a commit that grew the database into
// the file, and empties the WAL, takes the database's size from the
// protocol, not from the header it read before it joined: a snapshot of
// the empty WAL reads the file as the checkpoint left it. (Its first
// snapshots read the stale size before: a tree page of the new commit
// pointed past the end.)
func TestOpenBesideTruncate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grow.db")
	a := openShared(t, path)
	setUserVersion(t, a, 1)
	if _, err := a.Checkpoint(CheckpointTruncate); err != nil {
		t.Fatal(err)
	}
	// A commit that grows the database by 5 pages, in the WAL only.
	grow := func() uint32 {
		w, err := a.BeginWrite()
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			_, pg, err := w.Allocate()
			if err != nil {
				t.Fatal(err)
			}
			pg[0] = 0x0d // an empty table leaf, as a tree's new page
			pg[5], pg[6] = byte(len(pg)>>8), byte(len(pg))
		}
		n := w.PageCount()
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, readOnly := range []bool{false, true} {
		want := grow()
		// B reads the file's header, then, as it opens the -shm, A copies
		// the commit into the file and empties the WAL.
		fault := vfs.NewFault(vfs.OS)
		done := false
		fault.OnOp = func(op vfs.Op) {
			if !done && op.Kind == vfs.OpOpen && strings.HasSuffix(op.Name, "-shm") {
				done = true
				if res, err := a.Checkpoint(CheckpointTruncate); err != nil || res.Frames != res.Copied {
					t.Errorf("checkpoint beside the open: %+v, %v", res, err)
				}
			}
		}
		b, err := Open(path, Options{FS: fault, ReadOnly: readOnly})
		if err != nil {
			t.Fatal(err)
		}
		if !done {
			t.Fatal("B opened no -shm")
		}
		s := b.Snapshot()
		if got := s.PageCount(); got != want {
			t.Errorf("read-only %v: a snapshot after the checkpoint has %d pages, want %d", readOnly, got, want)
		}
		s.Release()
		b.Close()
	}
}
