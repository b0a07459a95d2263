package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/pagodadb/pagoda"
)

// pagodaStore writes through pagoda's public API with its default options
// (SyncFull, 4096-byte pages, 64 MiB of cache): Tx.CreateTable, then
// Table.Insert(key, value), Table.Delete and Table.Get, the table looked up
// once per transaction. Options.Timeout is openTimeout, as mattn's
// busy_timeout is 5 s: beside a sqlite3 reader (the beside workload) a
// write transaction can find WRITE held for a moment, which a reader that
// read the wal-index header while it was being written takes to read it
// again (wal.c's walIndexReadHdr), and with no timeout Begin would fail
// with ErrBusy. pagoda creates its file in WAL mode, so store
// pagoda runs in the shared mode (Linux) and store pagoda-exclusive, with
// Options.Exclusive, in the exclusive one; Mode says which Open found.
//
// With bucket set (the workloads of WriteWorkload.Bucket) the store is
// bucket t instead, written with Bucket.Put and Delete, its keys 8
// big-endian bytes as bbolt's and pebble's.
type pagodaStore struct {
	name      string
	exclusive bool
	bucket    bool
	mode      string
	db        *pagoda.DB
	tx        *pagoda.Tx
	t         *pagoda.Table
	b         *pagoda.Bucket
	key       [8]byte
}

func (s *pagodaStore) Name() string { return s.name }

// Mode is the mode the store was found in at its last Open (pagodaMode).
func (s *pagodaStore) Mode() string { return s.mode }

func (s *pagodaStore) Open(dir string, opt StoreOptions) error {
	opts := &pagoda.Options{Sync: pagoda.SyncFull, CacheSize: opt.CacheSize, Timeout: openTimeout}
	if opt.Defaults {
		opts = nil
	}
	db, err := openPagoda(filepath.Join(dir, storeFile), s.exclusive, opts)
	if err != nil {
		return err
	}
	if s.mode, err = pagodaMode(db, s.exclusive); err != nil {
		db.Close()
		return err
	}
	err = db.Update(func(tx *pagoda.Tx) error {
		if s.bucket {
			_, err := tx.CreateBucketIfNotExists(bucketName)
			return err
		}
		_, err := tx.Table(tableName)
		if errors.Is(err, pagoda.ErrNotFound) {
			_, err = tx.CreateTable(storeTableSQL)
		}
		return err
	})
	if err != nil {
		db.Close()
		return err
	}
	s.db = db
	return nil
}

func (s *pagodaStore) begin(writable bool) error {
	tx, err := s.db.Begin(writable)
	if err != nil {
		return err
	}
	if s.bucket {
		s.b, err = tx.Bucket(bucketName)
	} else {
		s.t, err = tx.Table(tableName)
	}
	if err != nil {
		tx.Rollback()
		return err
	}
	s.tx = tx
	return nil
}

// keyOf returns key as 8 big-endian bytes, in s.key.
func (s *pagodaStore) keyOf(key int64) []byte {
	binary.BigEndian.PutUint64(s.key[:], uint64(key))
	return s.key[:]
}

func (s *pagodaStore) Begin() error { return s.begin(true) }

func (s *pagodaStore) Insert(key int64, v []byte) error {
	if s.bucket {
		return s.b.Put(s.keyOf(key), v)
	}
	_, err := s.t.Insert(key, v)
	return err
}

func (s *pagodaStore) Delete(key int64) error {
	if s.bucket {
		return s.b.Delete(s.keyOf(key))
	}
	return s.t.Delete(key)
}

func (s *pagodaStore) Commit() error {
	err := s.tx.Commit()
	s.tx, s.t, s.b = nil, nil, nil
	return err
}

// InsertDurable commits one row through DB.Batch, which groups the calls
// of concurrent goroutines into one commit.
func (s *pagodaStore) InsertDurable(key int64, v []byte) error {
	return s.db.Batch(func(tx *pagoda.Tx) error {
		if s.bucket {
			b, err := tx.Bucket(bucketName)
			if err != nil {
				return err
			}
			return b.Put(binary.BigEndian.AppendUint64(nil, uint64(key)), v)
		}
		t, err := tx.Table(tableName)
		if err != nil {
			return err
		}
		_, err = t.Insert(key, v)
		return err
	})
}

// walStats returns what pagoda has written to its WAL since Open.
func (s *pagodaStore) walStats() walStats {
	st := s.db.Stats()
	return walStats{frames: st.WALFrames, commits: st.Commits, pageSize: s.db.PageSize()}
}

func (s *pagodaStore) BeginRead() error { return s.begin(false) }

func (s *pagodaStore) Get(key int64) ([]byte, error) {
	if s.bucket {
		return s.b.Get(s.keyOf(key))
	}
	rec, err := s.t.Get(key)
	if err != nil {
		return nil, err
	}
	return rec.Column(1).Blob(), nil
}

func (s *pagodaStore) Scan(fn func(key int64, v []byte)) (int, error) {
	n := 0
	if s.bucket {
		for k, v := range s.b.All() {
			if len(k) != 8 {
				return n, fmt.Errorf("pagoda: key %x is not 8 bytes", k)
			}
			fn(int64(binary.BigEndian.Uint64(k)), v)
			n++
		}
		return n, s.tx.Err()
	}
	for rowid, rec := range s.t.All() {
		fn(rowid, rec.Column(1).Blob())
		n++
	}
	return n, s.tx.Err()
}

func (s *pagodaStore) EndRead() error {
	err := s.tx.Rollback()
	s.tx, s.t, s.b = nil, nil, nil
	return err
}

func (s *pagodaStore) Close() error {
	if s.db == nil {
		return nil
	}
	var err error
	if s.tx != nil {
		err = s.tx.Rollback()
		s.tx, s.t, s.b = nil, nil, nil
	}
	err = errors.Join(err, s.db.Close())
	s.db = nil
	return err
}
