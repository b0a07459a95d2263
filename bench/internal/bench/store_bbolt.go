package bench

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// boltStore writes bbolt with its default options (an fsync at every
// commit): bucket t, 8-byte big-endian keys, Bucket.Put and Delete in a
// Tx from DB.Begin. bbolt keeps references to the keys and values it is
// given until the commit, so they are copied into an arena that lives as
// long as the transaction.
type boltStore struct {
	db         *bolt.DB
	tx         *bolt.Tx
	b          *bolt.Bucket
	sequential bool
	mem        arena
	key        [8]byte
}

func (s *boltStore) Name() string { return "bbolt" }

func (s *boltStore) Open(dir string, opt StoreOptions) error {
	db, err := bolt.Open(filepath.Join(dir, storeFile), 0o644, &bolt.Options{Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte(bucketName))
		return err
	})
	if err != nil {
		db.Close()
		return err
	}
	s.db, s.sequential = db, opt.Sequential
	return nil
}

func (s *boltStore) begin(writable bool) error {
	tx, err := s.db.Begin(writable)
	if err != nil {
		return err
	}
	b := tx.Bucket([]byte(bucketName))
	if b == nil {
		tx.Rollback()
		return fmt.Errorf("bbolt: no bucket %q", bucketName)
	}
	if s.sequential {
		b.FillPercent = 1.0
	}
	s.tx, s.b = tx, b
	return nil
}

func (s *boltStore) Begin() error { return s.begin(true) }

func (s *boltStore) Insert(key int64, v []byte) error {
	binary.BigEndian.PutUint64(s.key[:], uint64(key))
	return s.b.Put(s.mem.copy(s.key[:]), s.mem.copy(v))
}

// InsertDurable commits one row through bbolt's DB.Batch, which groups
// concurrent calls into one commit.
func (s *boltStore) InsertDurable(key int64, v []byte) error {
	k := binary.BigEndian.AppendUint64(nil, uint64(key))
	v = append([]byte(nil), v...) // bbolt keeps them until the commit
	return s.db.Batch(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketName)).Put(k, v)
	})
}

func (s *boltStore) Delete(key int64) error {
	binary.BigEndian.PutUint64(s.key[:], uint64(key))
	return s.b.Delete(s.key[:])
}

func (s *boltStore) Commit() error {
	err := s.tx.Commit()
	s.tx, s.b = nil, nil
	s.mem.reset()
	return err
}

func (s *boltStore) BeginRead() error { return s.begin(false) }

func (s *boltStore) Get(key int64) ([]byte, error) {
	binary.BigEndian.PutUint64(s.key[:], uint64(key))
	v := s.b.Get(s.key[:])
	if v == nil {
		return nil, fmt.Errorf("bbolt: key %d not found", key)
	}
	return v, nil
}

func (s *boltStore) Scan(fn func(key int64, v []byte)) (int, error) {
	c := s.b.Cursor()
	n := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return n, fmt.Errorf("bbolt: key %x is not 8 bytes", k)
		}
		fn(int64(binary.BigEndian.Uint64(k)), v)
		n++
	}
	return n, nil
}

func (s *boltStore) EndRead() error {
	err := s.tx.Rollback()
	s.tx, s.b = nil, nil
	return err
}

func (s *boltStore) Close() error {
	if s.db == nil {
		return nil
	}
	if s.tx != nil {
		s.tx.Rollback()
		s.tx, s.b = nil, nil
		s.mem.reset()
	}
	err := s.db.Close()
	s.db = nil
	return err
}
