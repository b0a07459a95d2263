package pager

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// TestShmManyReaders: more read-only pagers than sqlite3 has read slots
// share them, and a sqlite3 checkpoint copies nothing until the last one
// closes.
func TestShmManyReaders(t *testing.T) {
	requireOFD(t)
	path := filepath.Join(t.TempDir(), "r.db")
	w := sqltest.Open(t, path)
	sqltest.Run(t, w, "PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0",
		"CREATE TABLE t(a)", "INSERT INTO t VALUES (randomblob(5000))")
	var readers []*Pager
	slots := map[int]int{}
	for range 2 * shmReaders {
		p := mustOpen(t, path, Options{Exclusive: true, ReadOnly: true})
		readers = append(readers, p)
		slots[p.shmSlot]++
		if p.shmSlot < 1 || p.shmSlot >= shmReaders {
			t.Fatalf("read slot %d", p.shmSlot)
		}
	}
	if len(slots) != shmReaders-1 {
		t.Errorf("the readers hold slots %v, want each of 1..%d", slots, shmReaders-1)
	}
	checkpoint := func() (done int) {
		t.Helper()
		if _, err := w.Exec("INSERT INTO t VALUES (randomblob(5000))"); err != nil {
			t.Fatal(err)
		}
		var busy, log int
		if err := w.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done); err != nil {
			t.Fatal(err)
		}
		return done
	}
	for i, p := range readers {
		if done := checkpoint(); done != 0 {
			t.Fatalf("with %d readers open, a checkpoint copied %d frames", len(readers)-i, done)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if done := checkpoint(); done == 0 {
		t.Fatal("with every reader closed, the checkpoint copied nothing")
	}
}

// TestShmStale: a -shm file that a dead sqlite3 process left keeps all
// but the reader's mark, and sqlite3, arriving next, finds itself the
// first connection, starts it over and reads the file right, while the
// reader keeps its slot.
func TestShmStale(t *testing.T) {
	requireOFD(t)
	path := sqltest.WithWAL(t, []string{"CREATE TABLE t(a)", "INSERT INTO t VALUES (1)"},
		[]string{"INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (3)"})
	junk := make([]byte, 32768)
	for i := range junk {
		junk[i] = byte(i*7 + 1)
	}
	if err := os.WriteFile(shmPath(path), junk, 0o644); err != nil {
		t.Fatal(err)
	}
	p := mustOpen(t, path, Options{Exclusive: true, ReadOnly: true})
	shm, err := os.ReadFile(shmPath(path))
	if err != nil {
		t.Fatal(err)
	}
	mark := shmOffReadMarks + 4*p.shmSlot
	if !bytes.Equal(shm[:mark], junk[:mark]) || !bytes.Equal(shm[mark+4:], junk[mark+4:]) {
		t.Error("the reader changed the -shm file beyond its read mark")
	}
	if m := binary.NativeEndian.Uint32(shm[mark:]); m != 0 {
		t.Errorf("the reader's mark is %d, want 0", m)
	}
	if got := query(t, path, "SELECT group_concat(a) FROM t"); got != "1,2,3" {
		t.Errorf("sqlite3 beside the reader reads %q", got)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestShmBusy: while other connections hold every read slot exclusively
// (a checkpoint moving marks, for a moment), a reader waits, then fails
// with ErrLocked; once they let go, it opens.
func TestShmBusy(t *testing.T) {
	requireOFD(t)
	path := sqltest.WithWAL(t, []string{"CREATE TABLE t(a)"}, []string{"INSERT INTO t VALUES (1)"})
	other, err := vfs.OS.OpenFile(shmPath(path), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.LockRange(walLockRead(1).offset(), shmReaders-1, true); err != nil {
		t.Fatal(err)
	}
	if p, err := Open(path, Options{Exclusive: true, ReadOnly: true}); !errors.Is(err, ErrLocked) {
		if p != nil {
			p.Close()
		}
		t.Fatalf("Open beside exclusive read locks: %v, want ErrLocked", err)
	}
	if err := other.UnlockRange(walLockRead(1).offset(), shmReaders-1); err != nil {
		t.Fatal(err)
	}
	p := mustOpen(t, path, Options{Exclusive: true, ReadOnly: true})
	if p.WALFrames() == 0 {
		t.Error("the reader sees no WAL frame")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestShmReadOnly: a -shm file the pager may not write leaves it a slot
// that a sqlite3 reader marked to share, and none when every mark is
// unused.
func TestShmReadOnly(t *testing.T) {
	requireOFD(t)
	path := sqltest.WithWAL(t, []string{"CREATE TABLE t(a)"}, []string{"INSERT INTO t VALUES (1)"})
	shm := make([]byte, 136)
	for i := range shmReaders {
		binary.NativeEndian.PutUint32(shm[shmOffReadMarks+4*i:], readMarkNotUsed)
	}
	if err := os.WriteFile(shmPath(path), shm, 0o644); err != nil {
		t.Fatal(err)
	}
	ro := Options{Exclusive: true, ReadOnly: true, FS: deniedFS{vfs.OS, fs.ErrPermission}}
	if p, err := Open(path, ro); !errors.Is(err, ErrLocked) {
		if p != nil {
			p.Close()
		}
		t.Fatalf("every mark unused: %v, want ErrLocked", err)
	}
	binary.NativeEndian.PutUint32(shm[shmOffReadMarks+4*2:], 1) // a reader at frame 1
	if err := os.WriteFile(shmPath(path), shm, 0o644); err != nil {
		t.Fatal(err)
	}
	p := mustOpen(t, path, ro)
	if p.shmSlot != 2 {
		t.Errorf("slot %d, want 2", p.shmSlot)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if after, err := os.ReadFile(shmPath(path)); err != nil || !bytes.Equal(after, shm) {
		t.Errorf("the read-only -shm changed (%v)", err)
	}
}
