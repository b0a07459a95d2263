package raftstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pagodadb/pagoda"
)

// sparse reports whether the file has reached minSize bytes and more than
// half of its pages are free (rule 3).
func sparse(db *pagoda.DB, minSize int64) bool {
	var yes bool
	db.View(func(tx *pagoda.Tx) error {
		h, err := tx.Header()
		if err != nil {
			return err
		}
		total := int64(h.PageCount)
		free := int64(h.FreelistCount)
		yes = total*int64(h.PageSize) >= minSize && free > total-free
		return nil
	})
	return yes
}

// Compact compacts the file now if more than half of its pages are free,
// whatever its size, and reports whether it did.
func (s *Store) Compact() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.compactLocked(0)
}

// compactIfSparse compacts the file if it is still sparse once mu is held.
func (s *Store) compactIfSparse() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.compactLocked(s.minCmp)
	return err
}

// compactLocked is rule 3: copy, close, check that nothing else has the
// file open, rename, sync the directory, open. The caller holds mu.
func (s *Store) compactLocked(minSize int64) (bool, error) {
	switch {
	case s.closed:
		return false, fmt.Errorf("raftstore: %s: store is closed: %w", s.path, pagoda.ErrTxClosed)
	case s.broken != nil:
		return false, s.broken
	case s.db.ReadOnly():
		return false, fmt.Errorf("raftstore: compact %s: %w", s.path, pagoda.ErrReadOnly)
	}
	if !sparse(s.db, minSize) {
		return false, nil
	}
	tmp := s.path + compactSuffix
	if err := removeCopies(s.path); err != nil {
		return false, err
	}
	if err := s.db.Compact(tmp); err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("raftstore: compact: %w", err)
	}
	err := s.db.Close()
	s.db = nil
	if err == nil && (exists(s.path+"-wal") || exists(s.path+"-shm")) {
		// Another connection has the file open: its WAL would be read
		// beside the copy. Keep the file as it is.
		err = errSharing
	}
	if err == nil {
		err = os.Rename(tmp, s.path)
		if err == nil {
			err = syncDir(filepath.Dir(s.path))
			s.compactions++
		}
	}
	os.Remove(tmp)
	if oerr := s.open(); oerr != nil {
		s.broken = fmt.Errorf("raftstore: %s: open again after a compaction: %w", s.path, oerr)
		return false, errors.Join(err, s.broken)
	}
	if errors.Is(err, errSharing) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("raftstore: compact: %w", err)
	}
	return true, nil
}

var errSharing = errors.New("the file is open elsewhere")

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}
