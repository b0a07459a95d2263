package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// boltPeer reads the bbolt file: one long read transaction, the bucket
// looked up once, Bucket.Get with a reused key buffer and a Cursor; or,
// with txPerOp (NewTxPeer), each Get and Scan in a View of its own (the
// bucket, then Get or the Cursor), the value copied out of the View.
type boltPeer struct {
	txPerOp bool
	db      *bolt.DB
	tx      *bolt.Tx
	b       *bolt.Bucket
	key     [8]byte
	buf     []byte
}

func (p *boltPeer) Name() string { return "bbolt" }

func (p *boltPeer) Open(f *Fixture) error {
	db, err := bolt.Open(f.BoltPath, 0o444, &bolt.Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		return err
	}
	if p.txPerOp {
		p.db = db
		return nil
	}
	tx, err := db.Begin(false)
	if err != nil {
		db.Close()
		return err
	}
	b, err := bucketOf(tx)
	if err != nil {
		tx.Rollback()
		db.Close()
		return err
	}
	p.db, p.tx, p.b = db, tx, b
	return nil
}

func (p *boltPeer) Get(rowid int64) ([]byte, error) {
	if p.txPerOp {
		err := p.db.View(func(tx *bolt.Tx) error {
			b, err := bucketOf(tx)
			if err != nil {
				return err
			}
			v, err := p.get(b, rowid)
			p.buf = append(p.buf[:0], v...)
			return err
		})
		return p.buf, err
	}
	return p.get(p.b, rowid)
}

func (p *boltPeer) get(b *bolt.Bucket, rowid int64) ([]byte, error) {
	binary.BigEndian.PutUint64(p.key[:], uint64(rowid))
	v := b.Get(p.key[:])
	if v == nil {
		return nil, fmt.Errorf("bbolt: rowid %d not found", rowid)
	}
	return v, nil
}

// bucketOf returns the fixture's bucket in tx.
func bucketOf(tx *bolt.Tx) (*bolt.Bucket, error) {
	b := tx.Bucket([]byte(bucketName))
	if b == nil {
		return nil, fmt.Errorf("bbolt: no bucket %q", bucketName)
	}
	return b, nil
}

func (p *boltPeer) Scan(fn func(v []byte)) (int, error) {
	if p.txPerOp {
		n := 0
		err := p.db.View(func(tx *bolt.Tx) error {
			b, err := bucketOf(tx)
			n = scanBucket(b, fn)
			return err
		})
		return n, err
	}
	return scanBucket(p.b, fn), nil
}

// scanBucket hands every value of b to fn in key order.
func scanBucket(b *bolt.Bucket, fn func(v []byte)) int {
	if b == nil {
		return 0
	}
	c := b.Cursor()
	n := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		fn(v)
		n++
	}
	return n
}

func (p *boltPeer) Close() error {
	if p.db == nil {
		return nil
	}
	var err error
	if p.tx != nil {
		err = p.tx.Rollback()
	}
	err = errors.Join(err, p.db.Close())
	p.db, p.tx, p.b = nil, nil, nil
	return err
}
