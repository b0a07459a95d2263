package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/pagodadb/pagoda"
)

// ApplyFunc applies one command of the raft log to the state machine's
// database, inside the write transaction tx. Its result is what
// raft.ApplyFuture.Response returns; an error rolls the command's changes
// back (the log entry still counts as applied, as raft requires of a
// deterministic machine) and is returned as the response.
type ApplyFunc func(tx *pagoda.Tx, index uint64, cmd []byte) (any, error)

// appliedBucket and appliedKey keep the index of the last log entry the
// FSM applied, in the state machine's own database, so that a restart
// skips the entries raft replays and the database already holds.
const (
	appliedBucket = "raft_fsm"
	appliedKey    = "applied_index"
)

// FSM is a raft.FSM whose state is a pagoda database: each command runs in
// one write transaction that also records the command's log index; a
// snapshot is a consistent image of the file (Tx.WriteTo) taken in a read
// transaction while commands go on; a restore replaces the file
// atomically. Read the state through View. The file is a SQLite database:
// sqlite3 opens it.
type FSM struct {
	path  string
	apply ApplyFunc
	opts  *pagoda.Options

	mu      sync.RWMutex // held for writing while Restore swaps the file
	db      *pagoda.DB
	applied uint64
}

// NewFSM opens (or creates) the state machine's database at path, with
// apply as its transition. opts are the database's options (nil: the
// defaults).
func NewFSM(path string, apply ApplyFunc, opts *pagoda.Options) (*FSM, error) {
	f := &FSM{path: path, apply: apply, opts: opts}
	if err := removeRestores(path); err != nil {
		return nil, err
	}
	if err := f.open(); err != nil {
		return nil, err
	}
	return f, nil
}

// open opens the database and reads the applied index.
func (f *FSM) open() error {
	db, err := pagoda.Open(f.path, f.opts)
	if err != nil {
		return err
	}
	var applied uint64
	err = db.View(func(tx *pagoda.Tx) error {
		b, err := tx.Bucket(appliedBucket)
		if errors.Is(err, pagoda.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := b.Get([]byte(appliedKey))
		if errors.Is(err, pagoda.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(v) != 8 {
			return fmt.Errorf("raftstore: %s: the applied index is %d bytes, not 8: %w", f.path, len(v), pagoda.ErrCorrupt)
		}
		applied = binary.BigEndian.Uint64(v)
		return nil
	})
	if err != nil {
		db.Close()
		return err
	}
	f.db, f.applied = db, applied
	return nil
}

// Apply runs the command of log entry l in one write transaction, with
// the entry's index recorded in the same commit. An entry at or below the
// recorded index is one the database holds already (raft replays its log
// after a restart): it is skipped. Entries that are not commands (raft's
// own) only move the index.
func (f *FSM) Apply(l *raft.Log) any {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if l.Index <= f.applied {
		return nil
	}
	var resp any
	var applyErr error
	err := f.db.Update(func(tx *pagoda.Tx) error {
		if l.Type == raft.LogCommand && f.apply != nil {
			resp, applyErr = f.apply(tx, l.Index, l.Data)
			if applyErr != nil {
				return applyErr
			}
		}
		return setApplied(tx, l.Index)
	})
	if applyErr != nil {
		// The command failed: its changes are gone, the entry counts as
		// applied (every replica fails it the same way).
		if err := f.db.Update(func(tx *pagoda.Tx) error { return setApplied(tx, l.Index) }); err != nil {
			return err
		}
		f.applied = l.Index
		return applyErr
	}
	if err != nil {
		return err
	}
	f.applied = l.Index
	return resp
}

// setApplied records index as the last applied, in tx.
func setApplied(tx *pagoda.Tx, index uint64) error {
	b, err := tx.CreateBucketIfNotExists(appliedBucket)
	if err != nil {
		return err
	}
	return b.Put([]byte(appliedKey), binary.BigEndian.AppendUint64(nil, index))
}

// AppliedIndex returns the index of the last log entry applied.
func (f *FSM) AppliedIndex() uint64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.applied
}

// View runs fn in a read transaction of the state machine's database.
func (f *FSM) View(fn func(tx *pagoda.Tx) error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.db.View(fn)
}

// Snapshot begins a read transaction: the snapshot is the database as of
// the last command applied, written out by Persist while commands go on.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	tx, err := f.db.Begin(false)
	if err != nil {
		return nil, err
	}
	return &fsmSnapshot{tx: tx}, nil
}

type fsmSnapshot struct {
	once sync.Once
	tx   *pagoda.Tx
}

// Persist writes the database image to sink.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	_, err := s.tx.WriteTo(sink)
	s.Release()
	if err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

// Release ends the snapshot's read transaction.
func (s *fsmSnapshot) Release() {
	s.once.Do(func() { s.tx.Rollback() })
}

// Restore replaces the database with the image rc holds: written to a
// file beside it and synced, checked, then renamed over it with the
// database closed, and opened again. Until the rename the old state stays;
// a crash leaves one or the other, never a mix.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	dir := filepath.Dir(f.path)
	tmp := filepath.Join(dir, "."+filepath.Base(f.path)+".restore-"+strconv.FormatUint(rand.Uint64(), 36))
	out, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // after the rename, a no-op
	_, err = io.Copy(out, rc)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("raftstore: restore %s: %w", f.path, err)
	}
	// The image must be a database pagoda reads whole.
	check, err := pagoda.Open(tmp, &pagoda.Options{ReadOnly: true})
	if err == nil {
		err = errors.Join(check.Check(), check.Close())
	}
	if err != nil {
		return fmt.Errorf("raftstore: restore %s: the snapshot is not a sound database: %w", f.path, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.db.Close(); err != nil {
		return err
	}
	// Close checkpointed and removed the WAL: the file is the state. A
	// -shm of a read-only check may stay; it is rebuilt as needed.
	if err := os.Rename(tmp, f.path); err != nil {
		return errors.Join(err, f.open())
	}
	if err := syncDir(dir); err != nil {
		return errors.Join(err, f.open())
	}
	return f.open()
}

// Close closes the database.
func (f *FSM) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.db.Close()
}

// removeRestores removes restore images a crash left beside path.
func removeRestores(path string) error {
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".restore-*"))
	if err != nil {
		return err
	}
	for _, m := range matches {
		if err := os.Remove(m); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
