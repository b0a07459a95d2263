package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/pagodadb/pagoda"
)

// pagodaPeer reads the SQLite file through pagoda's public API, opened
// writable, as an application that also writes opens it: the fixture is a
// WAL-mode file, so peer pagoda runs in the shared mode (the default on
// Linux: each read transaction holds a read mark of the -shm wal-index)
// and peer pagoda-exclusive with Options.Exclusive (the file held
// EXCLUSIVE from Open to Close, no -shm). Mode says which one Open found.
//
// With one long read transaction (NewPeer) the table is looked up once,
// and Get and Scan are Table.Get and Table.All. With a transaction per
// call (NewTxPeer) each Get is a request handler's read: View, Table, Get,
// Column, the value copied out before the transaction ends.
//
// The variant (Workload.Variant) says which API reads: the table's
// iterator (""), its cursor (variantCursor: First, Next, Record), or the
// bucket file through the bucket API (variantBucket: Bucket.Get with the
// rowid as 8 big-endian bytes, Bucket.All; variantBucketCursor: Get, and
// the bucket's Cursor: First, Next, Value).
type pagodaPeer struct {
	name      string
	exclusive bool
	txPerOp   bool
	variant   string
	mode      string
	db        *pagoda.DB
	tx        *pagoda.Tx
	t         *pagoda.Table
	b         *pagoda.Bucket
	buf       []byte
	key       [8]byte
}

// bucket reports whether the peer reads the bucket file.
func (p *pagodaPeer) bucket() bool { return isBucketVariant(p.variant) }

// openTimeout is how long a peer waits for a lock that another process
// holds on a fixture (say, pagoda-exclusive in a bench run beside).
const openTimeout = 10 * time.Second

func (p *pagodaPeer) Name() string { return p.name }

// Mode is the mode the database was found in at Open (see pagodaMode).
func (p *pagodaPeer) Mode() string { return p.mode }

func (p *pagodaPeer) Open(f *Fixture) error {
	path := f.SQLitePath
	if p.bucket() {
		path = f.BucketPath
	}
	db, err := openPagoda(path, p.exclusive, &pagoda.Options{Timeout: openTimeout})
	if err != nil {
		return err
	}
	if p.mode, err = pagodaMode(db, p.exclusive); err != nil {
		db.Close()
		return err
	}
	p.db = db
	if p.txPerOp {
		return nil
	}
	tx, err := db.Begin(false)
	if err != nil {
		p.db = nil
		db.Close()
		return err
	}
	if p.bucket() {
		p.b, err = tx.Bucket(bucketName)
	} else {
		p.t, err = tx.Table(tableName)
	}
	if err != nil {
		p.db = nil
		tx.Rollback()
		db.Close()
		return err
	}
	p.tx = tx
	return nil
}

// openPagoda opens the database at path writable, exclusive or not, with
// opts (nil: the defaults); it fails if the file could only be opened
// read-only, which would not measure the mode asked for.
func openPagoda(path string, exclusive bool, opts *pagoda.Options) (*pagoda.DB, error) {
	if opts != nil || exclusive { // else nil, pagoda's defaults
		o := pagoda.Options{}
		if opts != nil {
			o = *opts
		}
		o.Exclusive = exclusive
		opts = &o
	}
	db, err := pagoda.Open(path, opts)
	if err != nil {
		return nil, err
	}
	if db.ReadOnly() {
		db.Close()
		return nil, fmt.Errorf("bench: %s opened read-only (it cannot be written): the modes are measured on a writable file", path)
	}
	return db, nil
}

func (p *pagodaPeer) Get(rowid int64) ([]byte, error) {
	if p.bucket() {
		return p.getBucket(rowid)
	}
	if p.txPerOp {
		err := p.db.View(func(tx *pagoda.Tx) error {
			t, err := tx.Table(tableName)
			if err != nil {
				return err
			}
			rec, err := t.Get(rowid)
			if err != nil {
				return err
			}
			p.buf = append(p.buf[:0], rec.Column(1).Blob()...)
			return nil
		})
		return p.buf, err
	}
	rec, err := p.t.Get(rowid)
	if err != nil {
		return nil, err
	}
	return rec.Column(1).Blob(), nil
}

// getBucket is Get through the bucket API: the key is the rowid as 8
// big-endian bytes.
func (p *pagodaPeer) getBucket(rowid int64) ([]byte, error) {
	binary.BigEndian.PutUint64(p.key[:], uint64(rowid))
	if p.txPerOp {
		err := p.db.View(func(tx *pagoda.Tx) error {
			b, err := tx.Bucket(bucketName)
			if err != nil {
				return err
			}
			v, err := b.Get(p.key[:])
			p.buf = append(p.buf[:0], v...)
			return err
		})
		return p.buf, err
	}
	return p.b.Get(p.key[:])
}

func (p *pagodaPeer) Scan(fn func(v []byte)) (int, error) {
	if p.txPerOp {
		n := 0
		err := p.db.View(func(tx *pagoda.Tx) (err error) {
			n, err = p.scan(tx, fn)
			return err
		})
		return n, err
	}
	return p.scan(p.tx, fn)
}

// scan reads every value of tx in order through the variant's API.
func (p *pagodaPeer) scan(tx *pagoda.Tx, fn func(v []byte)) (int, error) {
	n := 0
	if p.bucket() {
		b := p.b
		if b == nil || tx != p.tx {
			var err error
			if b, err = tx.Bucket(bucketName); err != nil {
				return 0, err
			}
		}
		if p.variant == variantBucketCursor {
			c := b.Cursor()
			for ok := c.First(); ok; ok = c.Next() {
				fn(c.Value())
				n++
			}
			return n, c.Err()
		}
		for _, v := range b.All() {
			fn(v)
			n++
		}
		return n, tx.Err()
	}
	t := p.t
	if t == nil || tx != p.tx {
		var err error
		if t, err = tx.Table(tableName); err != nil {
			return 0, err
		}
	}
	if p.variant == variantCursor {
		c := t.Cursor()
		for ok := c.First(); ok; ok = c.Next() {
			fn(c.Record().Column(1).Blob())
			n++
		}
		return n, c.Err()
	}
	return scanTable(tx, t, fn)
}

// scanTable hands every value of t, a table of tx, to fn in rowid order.
func scanTable(tx *pagoda.Tx, t *pagoda.Table, fn func(v []byte)) (int, error) {
	n := 0
	for _, rec := range t.All() {
		fn(rec.Column(1).Blob())
		n++
	}
	return n, tx.Err()
}

func (p *pagodaPeer) Close() error {
	if p.db == nil {
		return nil
	}
	var err error
	if p.tx != nil {
		err = p.tx.Rollback()
	}
	err = errors.Join(err, p.db.Close())
	p.db, p.tx, p.t, p.b = nil, nil, nil, nil
	return err
}
