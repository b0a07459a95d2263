package raftstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pagodadb/pagoda"
)

// errKeyNotFound is what Get and GetUint64 return for an absent key: raft
// compares its text with "not found". It is pagoda.ErrNotFound itself, so
// errors.Is(err, pagoda.ErrNotFound) holds too.
var errKeyNotFound = pagoda.ErrNotFound

// Set stores val under key, in one durable commit.
func (s *Store) Set(key, val []byte) error {
	db, err := s.acquire()
	if err != nil {
		return err
	}
	defer s.mu.RUnlock()
	if val == nil {
		val = []byte{} // a nil value would be NULL, which a bucket refuses
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err = db.Update(func(tx *pagoda.Tx) error {
		b, err := tx.Bucket(stableTable)
		if err != nil {
			return err
		}
		return b.Put(key, val)
	})
	if err != nil {
		return fmt.Errorf("raftstore: set %q: %w", key, err)
	}
	return nil
}

// Get returns the value of key (a copy), or an error whose text is "not
// found" (pagoda.ErrNotFound) when there is none.
func (s *Store) Get(key []byte) ([]byte, error) {
	db, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	var val []byte
	err = db.View(func(tx *pagoda.Tx) error {
		b, err := tx.Bucket(stableTable)
		if err != nil {
			return err
		}
		v, err := b.Get(key)
		if err != nil {
			return err
		}
		val = append(make([]byte, 0, len(v)), v...)
		return nil
	})
	if errors.Is(err, pagoda.ErrNotFound) {
		return nil, errKeyNotFound
	}
	return val, err
}

// SetUint64 stores val under key as 8 bytes, big-endian.
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 returns the value of key stored by SetUint64, or an error whose
// text is "not found" when there is none. A value that is not 8 bytes long
// is an error wrapping pagoda.ErrCorrupt.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("raftstore: %s %q holds %d bytes, not a uint64's 8: %w", stableTable, key, len(v), pagoda.ErrCorrupt)
	}
	return binary.BigEndian.Uint64(v), nil
}
