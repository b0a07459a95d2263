package pagoda

import (
	"errors"
	"fmt"
	"math"

	"github.com/pagodadb/pagoda/internal/format"
)

// bucketKeyFields is the number of leading record fields that identify a
// bucket entry: the key.
const bucketKeyFields = 1

// bucketSQL is the CREATE statement of a new bucket.
func bucketSQL(name string) string {
	return "CREATE TABLE " + quoteIdent(name) + "(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID"
}

// CreateBucket creates a bucket (a table of the Bucket shape) called name.
// It returns an error wrapping ErrExists when a table, index, view or
// trigger of that name exists. Names starting with "sqlite_" are reserved.
func (tx *Tx) CreateBucket(name string) (*Bucket, error) {
	if err := tx.writeCheck(); err != nil {
		return nil, err
	}
	if err := tx.checkNewName("bucket", name); err != nil {
		return nil, err
	}
	root, err := tx.btree().CreateTree(false)
	if err != nil {
		return nil, tx.fail(err)
	}
	sql := bucketSQL(name)
	if err := tx.schemaInsert("table", name, name, root, &sql); err != nil {
		return nil, tx.fail(err)
	}
	// A sequence left by a bucket of that name that sqlite3 dropped (it
	// deletes sqlite_sequence rows of AUTOINCREMENT tables only) is not
	// the new bucket's.
	if err := tx.dropSequence(name); err != nil {
		return nil, tx.fail(err)
	}
	if err := tx.schemaChanged(); err != nil {
		return nil, tx.fail(err)
	}
	return tx.Bucket(name)
}

// CreateBucketIfNotExists returns the bucket called name, creating it if
// there is none.
func (tx *Tx) CreateBucketIfNotExists(name string) (*Bucket, error) {
	if err := tx.writeCheck(); err != nil {
		return nil, err
	}
	if tx.cat.Table(name) != nil {
		return tx.Bucket(name)
	}
	return tx.CreateBucket(name)
}

// DeleteBucket deletes the bucket called name and all its keys; its pages
// go to the freelist. ErrNotFound if there is none; a table that is not a
// bucket is an error wrapping ErrUnsupported (use DropTable).
func (tx *Tx) DeleteBucket(name string) error {
	if err := tx.writeCheck(); err != nil {
		return err
	}
	if _, err := tx.Bucket(name); err != nil {
		return err
	}
	if err := tx.DropTable(name); err != nil {
		return err
	}
	return tx.dropSequence(name) // its sequence goes too (Bucket.Sequence)
}

// writeCheck checks the transaction and that the bucket still exists.
func (b *Bucket) writeCheck() error {
	if err := b.tx.writeCheck(); err != nil {
		return err
	}
	return b.current()
}

// current checks that the bucket still exists when its transaction has
// changed the schema since the bucket was obtained.
func (b *Bucket) current() error {
	if b.cat != b.tx.cat {
		nb, err := b.tx.Bucket(b.name)
		if err != nil {
			return err
		}
		if nb.root != b.root {
			return fmt.Errorf("pagoda: bucket %q was deleted: %w", b.name, ErrNotFound)
		}
		b.cat, b.table = nb.cat, nb.table
	}
	return nil
}

// asTable returns the bucket's table, for writes that take the table's
// path (b.table). The table follows the transaction's schema changes
// itself (Table.refresh).
func (b *Bucket) asTable() (*Table, error) {
	if b.tbl == nil {
		t, err := b.tx.Table(b.name)
		if err != nil {
			return nil, err
		}
		b.tbl = t
	}
	return b.tbl, nil
}

// bucketRecord encodes the stored record (key, value) into tx's scratch.
func (tx *Tx) bucketRecord(key, value []byte) []byte {
	if value == nil {
		value = []byte{}
	}
	tx.vals = append(tx.vals[:0], format.BlobValue(key), format.BlobValue(value))
	tx.scratch = format.AppendRecord(tx.scratch[:0], tx.vals)
	return tx.scratch
}

// Put sets the value of key, replacing any previous value. A nil value is
// stored as an empty one. Cursors of the transaction stay usable: they find
// their place again before they move.
func (b *Bucket) Put(key, value []byte) error {
	if err := b.writeCheck(); err != nil {
		return err
	}
	if key == nil {
		key = []byte{}
	}
	if b.table {
		if value == nil {
			value = []byte{}
		}
		t, err := b.asTable()
		if err != nil {
			return err
		}
		return t.Put(0, key, value)
	}
	if len(key)+len(value) > format.MaxLength/2 {
		if vals := []format.Value{format.BlobValue(key), format.BlobValue(value)}; format.RecordTooBig(vals) {
			return tooBig(vals, fmt.Sprintf("bucket %q: put", b.name))
		}
	}
	rec := b.tx.bucketRecord(key, value)
	if _, err := b.tx.btree().IndexInsert(b.root, nil, bucketKeyFields, rec); err != nil {
		return b.tx.fail(fmt.Errorf("pagoda: bucket %q: put: %w", b.name, err))
	}
	return b.tx.changed()
}

// Delete removes key. Deleting a missing key is not an error.
func (b *Bucket) Delete(key []byte) error {
	if err := b.writeCheck(); err != nil {
		return err
	}
	if key == nil {
		key = []byte{}
	}
	if b.table {
		t, err := b.asTable()
		if err != nil {
			return err
		}
		if err := t.DeleteKey(key); !errors.Is(err, ErrNotFound) {
			return err
		}
		return nil
	}
	rec := b.tx.bucketRecord(key, nil)
	found, err := b.tx.btree().IndexDelete(b.root, nil, bucketKeyFields, rec)
	if err != nil {
		return b.tx.fail(fmt.Errorf("pagoda: bucket %q: delete: %w", b.name, err))
	}
	if found {
		return b.tx.changed()
	}
	return nil
}

// Delete removes the cursor's current key. The cursor then sits between
// the keys around it: Next moves to the key after the deleted one, Prev to
// the one before.
func (c *Cursor) Delete() error {
	if !c.ready() {
		return c.Err()
	}
	if c.k == nil {
		return fmt.Errorf("pagoda: cursor is not on a key: %w", ErrNotFound)
	}
	if err := c.b.Delete(c.k); err != nil {
		return err
	}
	return nil
}

// NextSequence returns the bucket's next sequence number, one more than
// Sequence, and stores it (see Sequence).
func (b *Bucket) NextSequence() (uint64, error) {
	if err := b.writeCheck(); err != nil {
		return 0, err
	}
	s, err := b.tx.bucketSequence(b.name)
	if err != nil {
		return 0, err
	}
	if s.seq == math.MaxInt64 {
		return 0, fmt.Errorf("pagoda: bucket %q: the sequence is at its largest, %d", b.name, s.seq)
	}
	return uint64(s.seq + 1), b.storeSequence(s, s.seq+1)
}

// SetSequence sets the bucket's sequence number (see Sequence). SQLite's
// integers are signed: a v above 1<<63 - 1 is an error.
func (b *Bucket) SetSequence(v uint64) error {
	if err := b.writeCheck(); err != nil {
		return err
	}
	if v > math.MaxInt64 {
		return fmt.Errorf("pagoda: bucket %q: sequence %d does not fit SQLite's 64-bit signed integers: %w", b.name, v, ErrUnsupported)
	}
	s, err := b.tx.bucketSequence(b.name)
	if err != nil {
		return err
	}
	return b.storeSequence(s, int64(v))
}

// storeSequence writes seq as the bucket's row of sqlite_sequence (s, as
// bucketSequence read it), creating the table as sqlite3 would.
func (b *Bucket) storeSequence(s sequence, seq int64) error {
	tx := b.tx
	if s.tab == nil {
		if err := tx.createSequence(); err != nil {
			return tx.fail(err)
		}
		if err := tx.schemaChanged(); err != nil {
			return tx.fail(err)
		}
		st, err := tx.Table(sequenceTable)
		if err != nil {
			return err
		}
		s.tab = st
	}
	var err error
	if s.found {
		err = s.tab.Put(s.rowid, b.name, seq)
	} else {
		_, err = s.tab.Insert(b.name, seq)
	}
	return err
}
