package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// boltPeer reads the bbolt file: one long read transaction, the bucket
// looked up once, Bucket.Get with a reused key buffer and a Cursor.
type boltPeer struct {
	db  *bolt.DB
	tx  *bolt.Tx
	b   *bolt.Bucket
	key [8]byte
}

func (p *boltPeer) Name() string { return "bbolt" }

func (p *boltPeer) Open(f *Fixture) error {
	db, err := bolt.Open(f.BoltPath, 0o444, &bolt.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	tx, err := db.Begin(false)
	if err != nil {
		db.Close()
		return err
	}
	b := tx.Bucket([]byte(bucketName))
	if b == nil {
		tx.Rollback()
		db.Close()
		return fmt.Errorf("bbolt: no bucket %q", bucketName)
	}
	p.db, p.tx, p.b = db, tx, b
	return nil
}

func (p *boltPeer) Get(rowid int64) ([]byte, error) {
	binary.BigEndian.PutUint64(p.key[:], uint64(rowid))
	v := p.b.Get(p.key[:])
	if v == nil {
		return nil, fmt.Errorf("bbolt: rowid %d not found", rowid)
	}
	return v, nil
}

func (p *boltPeer) Scan(fn func(v []byte)) (int, error) {
	c := p.b.Cursor()
	n := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		fn(v)
		n++
	}
	return n, nil
}

func (p *boltPeer) Close() error {
	if p.db == nil {
		return nil
	}
	err := errors.Join(p.tx.Rollback(), p.db.Close())
	p.db, p.tx, p.b = nil, nil, nil
	return err
}
