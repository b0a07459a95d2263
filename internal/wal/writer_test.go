package wal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/pagodadb/pagoda/internal/vfs"
)

const testPageSize = 512

// newWriter creates a WAL in a temporary directory through fsys and starts
// it (Restart), as an owner does before its first frame.
func newWriter(t *testing.T, fsys vfs.FS, noSync bool) (*File, *sync.Mutex) {
	t.Helper()
	mu := new(sync.Mutex)
	w, err := Create(fsys, Path(filepath.Join(t.TempDir(), "db")), Options{PageSize: testPageSize, NoSync: noSync, Lock: mu})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := w.Restart(); err != nil {
		t.Fatal(err)
	}
	return w, mu
}

func page(fill byte) []byte { return bytes.Repeat([]byte{fill}, testPageSize) }

// commit appends pages 1..n (page i filled with fill+i), the last as the
// commit frame of a database of n pages, commits and publishes them.
func commit(t *testing.T, w *File, mu *sync.Mutex, n int, fill byte) {
	t.Helper()
	for i := 1; i <= n; i++ {
		var c uint32
		if i == n {
			c = uint32(n)
		}
		if _, err := w.Append(uint32(i), page(fill+byte(i)), c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	w.Publish()
	mu.Unlock()
}

// recovered reads the WAL's file back as a reopen would.
func recovered(t *testing.T, w *File) *Log {
	t.Helper()
	data, err := os.ReadFile(w.path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Recover(data, testPageSize)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestWriterCommit: committed frames are what recovery finds (rules 5, 7):
// the same last commit, size and running checksum, and each page in its
// newest frame, read back through the File's mapping too.
func TestWriterCommit(t *testing.T) {
	w, mu := newWriter(t, vfs.OS, false)
	commit(t, w, mu, 3, 0x10)
	commit(t, w, mu, 2, 0x20)
	l, got := w.Log(), recovered(t, w)
	if got.MaxFrame != 5 || l.MaxFrame != 5 || got.DBSize != 2 || l.DBSize != 2 ||
		got.Cksum1 != l.Cksum1 || got.Cksum2 != l.Cksum2 || got.Header != l.Header {
		t.Fatalf("recovered %+v, written %+v", got, l)
	}
	for pgno, want := range map[uint32]uint32{1: 4, 2: 5, 3: 3} {
		if f := l.Index.Find(pgno, l.MaxFrame); f != want || got.Index.Find(pgno, got.MaxFrame) != want {
			t.Errorf("page %d in frame %d (recovered: %d), want %d", pgno, f, got.Index.Find(pgno, got.MaxFrame), want)
		}
	}
	if !bytes.Equal(w.Frame(5), page(0x22)) || !bytes.Equal(l.FrameData(w.Data(), 3), page(0x13)) {
		t.Error("frames read back wrong")
	}
	// The first commit synced the file and, once, the directory.
	if w.Syncs() != 3 {
		t.Errorf("%d syncs for two commits, want 3", w.Syncs())
	}
}

// TestWriterBatches: frames go out frameBatch to a write, the rest at the
// commit (rule 6), in a buffer of their own or in one the owner lends
// (SetBuffer), however large.
func TestWriterBatches(t *testing.T) {
	for _, lend := range []int{0, 2 * BatchBytes(testPageSize)} {
		fault := vfs.NewFault(vfs.OS)
		var writes []vfs.Op
		fault.OnOp = func(op vfs.Op) {
			if op.Kind == vfs.OpWrite {
				writes = append(writes, op)
			}
		}
		w, mu := newWriter(t, fault, true)
		w.allocated = 1 << 40 // no zeros written ahead here: TestWriterPreallocates
		var buf []byte
		if lend > 0 {
			buf = make([]byte, lend)
			w.SetBuffer(buf)
		}
		writes = nil
		commit(t, w, mu, 2*frameBatch+2, 0)
		frameSize := int64(FrameHeaderSize + testPageSize)
		want := []struct{ off, frames int64 }{{HeaderSize, frameBatch}, {HeaderSize + frameBatch*frameSize, frameBatch}, {HeaderSize + 2*frameBatch*frameSize, 2}}
		if len(writes) != len(want) {
			t.Fatalf("lent %d bytes: %d writes: %v", lend, len(writes), writes)
		}
		for i, op := range writes {
			if op.Off != want[i].off || int64(op.Len) != want[i].frames*frameSize {
				t.Errorf("lent %d bytes: write %d: %v, want %d frames at %d", lend, i, op, want[i].frames, want[i].off)
			}
		}
		if lend > 0 && !bytes.Equal(buf[FrameHeaderSize:frameSize], page(byte(2*frameBatch+1))) {
			t.Errorf("the lent buffer was not used")
		}
	}
}

// TestWriterRollback: frames appended and flushed before their commit read
// back, and after Rollback the next transaction writes over them; no reopen
// finds them (rules 6, 8).
func TestWriterRollback(t *testing.T) {
	w, mu := newWriter(t, vfs.OS, false)
	commit(t, w, mu, 1, 0x10)
	for i := uint32(1); i <= 3; i++ {
		f, err := w.Append(i, page(0x40+byte(i)), 0)
		if err != nil || f != 1+i {
			t.Fatalf("Append: frame %d, %v; want %d", f, err, 1+i)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.Pending() != 3 || !bytes.Equal(w.Frame(4), page(0x43)) {
		t.Fatal("spilled frames not read back")
	}
	w.Rollback()
	if w.Pending() != 0 || w.Log().MaxFrame != 1 {
		t.Fatalf("after Rollback: %d pending, MaxFrame %d", w.Pending(), w.Log().MaxFrame)
	}
	if got := recovered(t, w); got.MaxFrame != 1 {
		t.Fatalf("recovered MaxFrame %d after a rollback", got.MaxFrame)
	}
	commit(t, w, mu, 1, 0x70)
	if got := recovered(t, w); got.MaxFrame != 2 || got.Index.Find(1, 2) != 2 || got.Index.Find(3, 2) != 0 {
		t.Fatalf("recovered MaxFrame %d: the rolled-back frames came back", got.MaxFrame)
	}
}

// TestWriterSpoil: a commit whose sync fails is spoiled: its first frame
// header is zeroed and synced, and recovery ends before it (rule 9). When
// spoiling fails too, RetrySpoil does it later.
func TestWriterSpoil(t *testing.T) {
	fault := vfs.NewFault(vfs.OS)
	w, mu := newWriter(t, fault, false)
	commit(t, w, mu, 2, 0x10)
	appendAll := func() {
		t.Helper()
		for i := uint32(1); i <= 2; i++ {
			var c uint32
			if i == 2 {
				c = 2
			}
			if _, err := w.Append(i, page(0x50), c); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendAll()
	fault.Inject(vfs.FaultOnce, fault.Ops(), vfs.OpSync)
	err := w.Commit(true)
	if !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Commit: %v, want the injected sync error", err)
	}
	if got := w.Spoil(err); got != err {
		t.Fatalf("Spoil returned %v", got)
	}
	w.Rollback()
	if got := recovered(t, w); got.MaxFrame != 2 || w.unspoiled != 0 {
		t.Fatalf("recovered MaxFrame %d after a failed commit (unspoiled %d)", got.MaxFrame, w.unspoiled)
	}

	// Spoil fails: the failed commit stays valid on disk until RetrySpoil.
	appendAll()
	fault.Inject(vfs.FaultForever, fault.Ops(), vfs.OpSync, vfs.OpWrite)
	if err := w.Commit(true); err == nil {
		t.Fatal("Commit on a failing disk succeeded")
	}
	_ = w.Spoil(err)
	w.Rollback()
	if w.unspoiled != 3 {
		t.Fatalf("unspoiled = %d, want frame 3", w.unspoiled)
	}
	if err := w.RetrySpoil(); err == nil {
		t.Fatal("RetrySpoil on a failing disk succeeded")
	}
	fault.Inject(vfs.NoFault, 0)
	if err := w.RetrySpoil(); err != nil || w.unspoiled != 0 {
		t.Fatalf("RetrySpoil: %v, unspoiled %d", err, w.unspoiled)
	}
	if got := recovered(t, w); got.MaxFrame != 2 {
		t.Fatalf("recovered MaxFrame %d after RetrySpoil", got.MaxFrame)
	}
}

// TestWriterRestart: a restart advances the salts and the checkpoint
// sequence, forgets every frame, and, over old frames, syncs its header
// before any frame is written (rule 11).
func TestWriterRestart(t *testing.T) {
	fault := vfs.NewFault(vfs.OS)
	var ops []vfs.OpKind
	fault.OnOp = func(op vfs.Op) { ops = append(ops, op.Kind) }
	w, mu := newWriter(t, fault, false)
	commit(t, w, mu, 2, 0x10)
	old := w.Log().Header
	w.SetBackfilled(2)
	ops = nil
	if err := w.Restart(); err != nil {
		t.Fatal(err)
	}
	h := w.Log().Header
	if h.Salt1 != old.Salt1+1 || h.CheckpointSeq != old.CheckpointSeq+1 || h.PageSize != testPageSize {
		t.Fatalf("header %+v after %+v", h, old)
	}
	if w.Log().MaxFrame != 0 || w.Backfilled() != 0 || w.Log().Index.Len() != 0 {
		t.Fatal("a restart kept frames")
	}
	if len(ops) != 2 || ops[0] != vfs.OpWrite || ops[1] != vfs.OpSync {
		t.Fatalf("restart over old frames: %v, want a write and a sync", ops)
	}
	commit(t, w, mu, 1, 0x30)
	if got := recovered(t, w); got.MaxFrame != 1 || got.Header.Salt1 != h.Salt1 {
		t.Fatalf("recovered %d frames of salt %x", got.MaxFrame, got.Header.Salt1)
	}
}

// TestSyncCommitted: a checkpoint's sync is needed unless every commit
// synced the WAL (rule 10).
func TestSyncCommitted(t *testing.T) {
	w, mu := newWriter(t, vfs.OS, false)
	n := w.Syncs()
	if err := w.SyncCommitted(); err != nil || w.Syncs() != n+2 {
		t.Fatalf("a new WAL: %d syncs, want a sync of the file and of its directory", w.Syncs()-n)
	}
	commit(t, w, mu, 1, 0)
	n = w.Syncs()
	if err := w.SyncCommitted(); err != nil || w.Syncs() != n {
		t.Fatalf("after a synced commit: %d syncs", w.Syncs()-n)
	}
	if _, err := w.Append(1, page(1), 1); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(false); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	w.Publish()
	mu.Unlock()
	if err := w.SyncCommitted(); err != nil || w.Syncs() != n+1 {
		t.Fatalf("after a commit without sync: %d syncs", w.Syncs()-n)
	}
	off, mu2 := newWriter(t, vfs.OS, true)
	commit(t, off, mu2, 1, 0)
	if err := off.SyncCommitted(); err != nil || off.Syncs() != 0 {
		t.Fatalf("NoSync: %d syncs", off.Syncs())
	}
}

// TestWriterPreallocates: the file is extended with zeros ahead of the
// frames, a walChunk at a time, so that commits write over blocks it has;
// the zeros are no frames: the log recovered from the file is the one
// written.
func TestWriterPreallocates(t *testing.T) {
	fault := vfs.NewFault(vfs.OS)
	w, mu := newWriter(t, fault, true)
	commit(t, w, mu, 3, 0)
	size, err := w.f.Size()
	if err != nil {
		t.Fatal(err)
	}
	if size%walChunk != 0 || size < FrameOffset(4, testPageSize) {
		t.Fatalf("WAL of %d bytes after 3 frames: want a multiple of %d", size, walChunk)
	}
	commit(t, w, mu, 2, 0)
	if s2, _ := w.f.Size(); s2 != size {
		t.Fatalf("the WAL grew from %d to %d bytes within its first chunk", size, s2)
	}
	data, err := os.ReadFile(w.path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Recover(data, testPageSize)
	if err != nil || l.MaxFrame != 5 {
		t.Fatalf("recovered %d frames (%v), want 5", l.MaxFrame, err)
	}
}

// wbFS is the OS's file system whose files record the writeback hints
// they take (vfs.StartWriteback).
type wbFS struct {
	vfs.FS
	hints *[][2]int64 // offset, length
}

type wbFile struct {
	vfs.File
	hints *[][2]int64
}

func (f wbFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return wbFile{file, f.hints}, nil
}

func (f wbFile) StartWriteback(off, n int64) { *f.hints = append(*f.hints, [2]int64{off, n}) }

// TestWriterWriteBack: with WriteBack on, each full batch a commit writes
// is handed to the system to write back, the batch at the commit (which
// its sync writes) is not, and the log reads back as without; with it off
// (the default, for spills), or without syncs, no batch is.
func TestWriterWriteBack(t *testing.T) {
	frameSize := int64(FrameHeaderSize + testPageSize)
	for _, tc := range []struct {
		on, noSync bool
		want       [][2]int64
	}{
		{on: true, want: [][2]int64{{HeaderSize, frameBatch * frameSize}, {HeaderSize + frameBatch*frameSize, frameBatch * frameSize}}},
		{on: false},
		{on: true, noSync: true},
	} {
		var hints [][2]int64
		w, mu := newWriter(t, wbFS{vfs.OS, &hints}, tc.noSync)
		w.WriteBack(tc.on)
		commit(t, w, mu, 2*frameBatch+2, 0)
		if len(hints) != len(tc.want) || (len(hints) > 0 && !slices.Equal(hints, tc.want)) {
			t.Errorf("WriteBack(%v), noSync %v: hints %v, want %v", tc.on, tc.noSync, hints, tc.want)
		}
		if got := recovered(t, w); got.MaxFrame != 2*frameBatch+2 || got.Cksum1 != w.Log().Cksum1 || got.Cksum2 != w.Log().Cksum2 {
			t.Errorf("WriteBack(%v): recovered %d frames, want %d with the same checksum", tc.on, got.MaxFrame, 2*frameBatch+2)
		}
	}
}
