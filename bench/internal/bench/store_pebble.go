package bench

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"
)

// pebbleStore writes pebble with its default options: a transaction is a
// Batch of Set and Delete calls committed with pebble.Sync (the WAL is
// synced); keys are 8 big-endian bytes. Pebble has no read transactions:
// reads go to the DB (Get copies the value out before releasing it, an
// Iterator scans).
type pebbleStore struct {
	db    *pebble.DB
	batch *pebble.Batch
	key   [8]byte
	buf   []byte
}

func (s *pebbleStore) Name() string { return "pebble" }

func (s *pebbleStore) Open(dir string, _ StoreOptions) error {
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		return err
	}
	s.db = db
	return nil
}

func (s *pebbleStore) Begin() error {
	s.batch = s.db.NewBatch()
	return nil
}

func (s *pebbleStore) Insert(key int64, v []byte) error {
	binary.BigEndian.PutUint64(s.key[:], uint64(key))
	return s.batch.Set(s.key[:], v, nil) // the batch copies both
}

// InsertDurable sets one row with pebble.Sync; pebble groups the WAL
// syncs of concurrent writers.
func (s *pebbleStore) InsertDurable(key int64, v []byte) error {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], uint64(key))
	return s.db.Set(k[:], v, pebble.Sync)
}

func (s *pebbleStore) Delete(key int64) error {
	binary.BigEndian.PutUint64(s.key[:], uint64(key))
	return s.batch.Delete(s.key[:], nil)
}

func (s *pebbleStore) Commit() error {
	err := s.batch.Commit(pebble.Sync)
	err = errors.Join(err, s.batch.Close())
	s.batch = nil
	return err
}

func (s *pebbleStore) BeginRead() error { return nil }

func (s *pebbleStore) Get(key int64) ([]byte, error) {
	binary.BigEndian.PutUint64(s.key[:], uint64(key))
	v, closer, err := s.db.Get(s.key[:])
	if err != nil {
		if errors.Is(err, pebble.ErrNotFound) {
			return nil, fmt.Errorf("pebble: key %d not found", key)
		}
		return nil, err
	}
	s.buf = append(s.buf[:0], v...) // v is valid until closer.Close
	return s.buf, closer.Close()
}

func (s *pebbleStore) Scan(fn func(key int64, v []byte)) (n int, err error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, it.Close()) }()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != 8 {
			return n, fmt.Errorf("pebble: key %x is not 8 bytes", k)
		}
		fn(int64(binary.BigEndian.Uint64(k)), it.Value())
		n++
	}
	return n, it.Error()
}

func (s *pebbleStore) EndRead() error { return nil }

// Flush flushes the memtable into sstables: a load's rows then are where
// they stay, as the other engines' are after Close (see flusher).
func (s *pebbleStore) Flush() error { return s.db.Flush() }

func (s *pebbleStore) Close() error {
	if s.db == nil {
		return nil
	}
	if s.batch != nil {
		s.batch.Close()
		s.batch = nil
	}
	err := s.db.Close()
	s.db = nil
	return err
}

// quietLogger drops pebble's informational messages (it reports each WAL
// it replays at Open on stderr), which would garble the progress lines.
type quietLogger struct{}

func (quietLogger) Infof(format string, args ...any)  {}
func (quietLogger) Fatalf(format string, args ...any) { pebble.DefaultLogger.Fatalf(format, args...) }
