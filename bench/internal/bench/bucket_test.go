package bench

import (
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda"
	bolt "go.etcd.io/bbolt"
)

// BenchmarkBucketGet looks random keys up in a bucket of 100,000 entries
// (8-byte big-endian keys, 100-byte values) through pagoda's Bucket.Get
// and bbolt's, each in one long read transaction, the stores freshly
// written by each engine (pagoda's reopened, its WAL checkpointed). pagoda's
// bucket is a WITHOUT ROWID table whose interior cells hold whole entries,
// as SQLite lays it out: its tree is deeper than bbolt's, whose branch
// pages hold only keys.
func BenchmarkBucketGet(b *testing.B) {
	const n = 100000
	dir := b.TempDir()
	pdb, err := pagoda.Open(filepath.Join(dir, "p.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { pdb.Close() }() // the reopened one
	err = pdb.Update(func(tx *pagoda.Tx) error {
		bk, err := tx.CreateBucket("b")
		if err != nil {
			return err
		}
		for i := uint64(1); i <= n; i++ {
			var k [8]byte
			binary.BigEndian.PutUint64(k[:], i)
			if err := bk.Put(k[:], make([]byte, 100)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	// Reopened: Close checkpoints the WAL into the file, as a store read
	// later would be.
	if err := pdb.Close(); err != nil {
		b.Fatal(err)
	}
	if pdb, err = pagoda.Open(filepath.Join(dir, "p.db"), nil); err != nil {
		b.Fatal(err)
	}
	bdb, err := bolt.Open(filepath.Join(dir, "b.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		bk.FillPercent = 1
		for i := uint64(1); i <= n; i++ {
			var k [8]byte
			binary.BigEndian.PutUint64(k[:], i)
			if err := bk.Put(k[:], make([]byte, 100)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([][8]byte, 4096)
	for i := range keys {
		binary.BigEndian.PutUint64(keys[i][:], 1+r.Uint64N(n))
	}
	b.Run("pagoda", func(b *testing.B) {
		tx, err := pdb.Begin(false)
		if err != nil {
			b.Fatal(err)
		}
		defer tx.Rollback()
		bk, err := tx.Bucket("b")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if v, err := bk.Get(keys[i&4095][:]); err != nil || len(v) != 100 {
				b.Fatal(err)
			}
		}
	})
	b.Run("bbolt", func(b *testing.B) {
		tx, err := bdb.Begin(false)
		if err != nil {
			b.Fatal(err)
		}
		defer tx.Rollback()
		bk := tx.Bucket([]byte("b"))
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if v := bk.Get(keys[i&4095][:]); len(v) != 100 {
				b.Fatal("missing")
			}
		}
	})
}
