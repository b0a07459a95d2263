package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/dbtest"
)

// putFSM opens an FSM whose commands are "key=value" puts into bucket kv;
// "fail" is a command that writes and then fails. calls counts the
// commands run.
func putFSM(t *testing.T, path string, calls *int) *FSM {
	t.Helper()
	f, err := NewFSM(path, func(tx *pagoda.Tx, index uint64, cmd []byte) (any, error) {
		*calls++
		b, err := tx.CreateBucketIfNotExists("kv")
		if err != nil {
			return nil, err
		}
		if string(cmd) == "fail" {
			if err := b.Put([]byte("failed"), []byte("written")); err != nil {
				return nil, err
			}
			return nil, errors.New("the command fails")
		}
		k, v, _ := bytes.Cut(cmd, []byte("="))
		return index, b.Put(k, v)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func kv(t *testing.T, f *FSM) map[string]string {
	t.Helper()
	return kvFSM{f}.copy()
}

func cmd(index uint64, data string) *raft.Log {
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: []byte(data)}
}

// TestFSMApply: each command one commit with its index; a failed command
// leaves nothing but its index; raft's own entries move the index; after a
// restart the entries the database holds are skipped when raft replays
// them.
func TestFSMApply(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fsm.db")
	calls := 0
	f := putFSM(t, path, &calls)
	if got := f.Apply(cmd(1, "a=1")); got != uint64(1) {
		t.Errorf("Apply's response %v, want the index", got)
	}
	if err, _ := f.Apply(cmd(2, "fail")).(error); err == nil || err.Error() != "the command fails" {
		t.Errorf("a failing command's response: %v", err)
	}
	f.Apply(&raft.Log{Index: 3, Term: 1, Type: raft.LogConfiguration})
	f.Apply(cmd(4, "b=2"))
	if got := fmt.Sprint(kv(t, f)); got != "map[a:1 b:2]" || f.AppliedIndex() != 4 || calls != 3 {
		t.Errorf("state %s, applied %d, calls %d", got, f.AppliedIndex(), calls)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	dbtest.Check(t, path)

	calls = 0
	f = putFSM(t, path, &calls)
	defer f.Close()
	if f.AppliedIndex() != 4 {
		t.Errorf("reopened: applied %d, want 4", f.AppliedIndex())
	}
	for i, c := range []string{"a=1", "fail", "", "b=2", "a=5"} {
		f.Apply(cmd(uint64(i+1), c)) // raft replays its log
	}
	if got := fmt.Sprint(kv(t, f)); got != "map[a:5 b:2]" || calls != 1 {
		t.Errorf("after the replay: %s, %d commands run, want only the new one", got, calls)
	}
}

// memSink is a raft.SnapshotSink in memory.
type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Close() error  { s.closed = true; return nil }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }

// TestFSMSnapshotRestore: a snapshot is the state as of its Snapshot call
// though commands go on before Persist writes it; restored into another
// FSM it replaces that one's state and index whole, and the file is sound.
func TestFSMSnapshotRestore(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	f := putFSM(t, filepath.Join(dir, "a.db"), &calls)
	defer f.Close()
	for i := 1; i <= 300; i++ {
		f.Apply(cmd(uint64(i), fmt.Sprintf("k%03d=%0500d", i, i)))
	}
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for i := 301; i <= 400; i++ { // while the snapshot waits to be written
		f.Apply(cmd(uint64(i), fmt.Sprintf("k%03d=later", i%300+1)))
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil || !sink.closed {
		t.Fatalf("Persist: %v (closed %v)", err, sink.closed)
	}
	snap.Release()

	bPath := filepath.Join(dir, "b.db")
	g := putFSM(t, bPath, &calls)
	g.Apply(cmd(1, "stale=1"))
	g.Apply(cmd(2, "stale=2"))
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	got := kv(t, g)
	if len(got) != 300 || got["k001"] != fmt.Sprintf("%0500d", 1) || got["stale"] != "" || g.AppliedIndex() != 300 {
		t.Errorf("restored: %d keys, k001 %.10q, stale %q, applied %d", len(got), got["k001"], got["stale"], g.AppliedIndex())
	}
	g.Apply(cmd(301, "after=restore"))
	if kv(t, g)["after"] != "restore" {
		t.Error("no command applies after the restore")
	}
	// A damaged image is refused, and the state stays.
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()[:5000]))); err == nil {
		t.Error("a truncated snapshot restored")
	}
	if len(kv(t, g)) != 301 {
		t.Error("a refused restore changed the state")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	dbtest.Check(t, bPath)
	if m, _ := filepath.Glob(filepath.Join(dir, ".b.db.restore-*")); len(m) != 0 {
		t.Errorf("restore images left: %v", m)
	}
}
