package pagoda

import (
	"fmt"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

// Bucket fields in the stored record: (key, value).
const (
	bucketFieldKey   = 0
	bucketFieldValue = 1
)

// Bucket is a key/value table:
//
//	CREATE TABLE "<name>"(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID
//
// Keys are ordered as SQLite orders BLOBs (bytes.Compare). Any table of
// that shape, whoever created it, is a bucket.
type Bucket struct {
	epoch uint64 // tx.epoch when b was taken
	tx    *Tx
	cat   *schema.Catalog // the catalog root comes from
	name  string
	root  uint32
	cur   btree.Cursor // for Get
	// The bucket's directory on a read transaction's commit (see
	// Table.ld): ld is the commit's state, dir its KeyDir once built.
	ld  *leafDirState
	dir *btree.KeyDir
	// table sends writes through the table's write path, which keeps its
	// indexes and refuses triggers: sqlite3 may have given the bucket's
	// table either. tbl is that table, taken on the first such write.
	table bool
	tbl   *Table
}

// Bucket returns the bucket called name (ErrNotFound if there is none; a
// table of another shape is an error wrapping ErrUnsupported).
func (tx *Tx) Bucket(name string) (*Bucket, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	ti := tx.cat.Table(name)
	if ti == nil {
		return nil, noSuch("bucket", name)
	}
	if ti.Err != nil {
		return nil, schemaErr("bucket", name, ti.Err)
	}
	if !ti.Table.IsBucket() {
		return nil, fmt.Errorf("pagoda: table %q is not a bucket (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID: %w", name, ErrUnsupported)
	}
	if err := tx.rootOK("bucket", name, ti.Entry.RootPage); err != nil {
		return nil, err
	}
	for _, b := range tx.bkts {
		if b.cat == tx.cat && b.root == ti.Entry.RootPage {
			b.bind()
			return b, nil
		}
	}
	b := &Bucket{tx: tx, cat: tx.cat, name: ti.Entry.Name, root: ti.Entry.RootPage,
		table: len(ti.Indexes) > 0 || len(ti.Triggers) > 0}
	b.bind()
	tx.bkts = keep(tx.bkts, b, func(o *Bucket) bool { return o.cat != tx.cat })
	return b, nil
}

// bind makes b, new or kept by its Tx, current in the transaction.
func (b *Bucket) bind() {
	tx := b.tx
	b.epoch, b.tbl, b.ld, b.dir = tx.epoch, nil, nil, nil
	if tx.w == nil {
		b.ld = tx.rs.leafDir(b.root)
	}
}

// seek moves b.cur to key, through the bucket's directory once the
// lookups on its commit have come to pay for one (see Table.find).
func (b *Bucket) seek(key []byte) bool {
	b.cur.Init(b.tx.pages(), b.root, false, nil)
	if b.dir == nil && b.ld != nil {
		d := b.ld.keys.Load()
		if d == nil && b.ld.due(b.tx.pages()) {
			d = btree.BuildKeyDir(b.tx.pages(), b.root, dirMaxLeaves)
			b.ld.keys.Store(d)
		}
		b.dir = d
	}
	if b.dir != nil {
		return b.cur.SeekBlobDir(b.dir, key)
	}
	return b.cur.SeekKey([]format.Value{format.BlobValue(key)})
}

// find is Get's short path, FindBlob through the directory, for a bucket
// of a read transaction: b.dir is set only after b.cur was set on the
// transaction's snapshot (seek), and reset when b is bound anew.
func (b *Bucket) find(key []byte) ([]byte, bool) {
	if b.epoch != b.tx.epoch || b.tx.closed {
		return nil, false
	}
	if b.dir == nil {
		if b.ld == nil {
			return nil, false
		}
		if b.dir = b.ld.keys.Load(); b.dir == nil {
			return nil, false
		}
		b.cur.Init(b.tx.pages(), b.root, false, nil)
	}
	payload, _, st := b.cur.FindBlob(b.dir, key)
	if st != btree.FindFound {
		return nil, false
	}
	_, v, ok := format.BytesPair(payload)
	return v, ok
}

// check reports whether b may be used (see Table.check).
func (b *Bucket) check() error {
	if b.ok() {
		return nil
	}
	return b.recheck()
}

// ok is check's fast path, with no call: b was taken in the transaction's
// epoch and catalog, and the transaction is open.
func (b *Bucket) ok() bool {
	return b.epoch == b.tx.epoch && !b.tx.closed && b.cat == b.tx.cat
}

func (b *Bucket) recheck() error {
	if err := b.tx.checkEpoch(b.epoch); err != nil {
		return err
	}
	return b.current()
}

// Name returns the bucket's name.
func (b *Bucket) Name() string { return b.name }

// Get returns the value stored under key, or ErrNotFound. The slice aliases
// the page (or, for values spilling onto overflow pages, a slice assembled
// for this call) and is valid until the transaction ends; do not modify it.
func (b *Bucket) Get(key []byte) ([]byte, error) {
	if v, ok := b.find(key); ok {
		return v, nil
	}
	if err := b.check(); err != nil {
		return nil, err
	}
	if !b.seek(key) {
		if err := b.cur.Err(); err != nil {
			return nil, err
		}
		return nil, ErrNotFound
	}
	_, v, err := bucketEntry(&b.cur)
	return v, err
}

// bucketEntry decodes the key and value of the cursor's current entry.
func bucketEntry(c *btree.Cursor) (k, v []byte, err error) {
	_, payload, pgno, err := c.Entry()
	if err != nil {
		return nil, nil, err
	}
	return bucketKV(payload, pgno)
}

// bucketKV decodes the entry payload of a bucket, found on page pgno.
func bucketKV(payload []byte, pgno uint32) (k, v []byte, err error) {
	if k, v, ok := format.BytesPair(payload); ok {
		return k, v, nil
	}
	n, err := format.CheckRecord(payload)
	if err != nil {
		return nil, nil, format.Corruptf(pgno, "bucket entry: %s", corruptMsg(err))
	}
	if n < 2 {
		return nil, nil, format.Corruptf(pgno, "bucket entry has %d fields, want 2", n)
	}
	kv, _ := format.Field(payload, bucketFieldKey)
	vv, _ := format.Field(payload, bucketFieldValue)
	// A table of a bucket's shape that is not STRICT may hold keys and
	// values of other types (sqlite3 wrote them): their bytes would not
	// be the entry's, nor sort as keys.
	if kv.Kind != format.KindBlob || (vv.Kind != format.KindBlob && vv.Kind != format.KindText) {
		return nil, nil, fmt.Errorf("pagoda: bucket entry on page %d: key of type %s, value of type %s, where a bucket holds BLOB keys and BLOB or TEXT values: %w",
			pgno, expr.KindName(kv.Kind), expr.KindName(vv.Kind), ErrUnsupported)
	}
	return kv.Bytes, vv.Bytes, nil
}

// Cursor returns a cursor over the bucket in key order.
func (b *Bucket) Cursor() *Cursor {
	c := &Cursor{tx: b.tx, b: b}
	c.c.Init(b.tx.pages(), b.root, false, nil)
	if !b.tx.writable {
		c.c.UseRuns(&c.run)
	}
	return c
}

// Cursor iterates a bucket in key order. Moving methods return false at
// either end or on error; Err says which. In a read transaction Key and
// Value are valid until the transaction ends; in a write transaction, until
// its next change (copy them to keep them). A cursor survives changes made
// by its transaction: it finds its key again before it moves.
type Cursor struct {
	tx   *Tx
	b    *Bucket
	c    btree.Cursor
	k, v []byte
	err  error
	gen  uint64                         // tx.gen when the cursor was positioned
	kbuf []byte                         // write transactions: the current key, copied
	run  [btree.RunLen]format.TableCell // the cursor's runs in a read transaction
}

func (c *Cursor) load(ok bool) bool {
	c.k, c.v = nil, nil
	if !ok {
		return false
	}
	k, v, err := bucketEntry(&c.c)
	if err != nil {
		c.err = err
		return false
	}
	if c.tx.writable {
		if c.kbuf == nil {
			c.kbuf = make([]byte, 0, 64) // never nil: the empty key is a key (stale)
		}
		c.kbuf = append(c.kbuf[:0], k...)
		k = c.kbuf
		c.gen = c.tx.gen
	}
	c.k, c.v = k, v
	return true
}

// stale reports whether the transaction changed the trees since the cursor
// was positioned on its key.
func (c *Cursor) stale() bool { return c.k != nil && c.gen != c.tx.gen }

// reseek finds the cursor's key again after a change. It returns whether
// the cursor now sits on that very key; if not, it sits on the next one
// (or is past the end).
func (c *Cursor) reseek() bool {
	c.c.Init(c.tx.pages(), c.b.root, false, nil)
	c.c.SeekKey([]format.Value{format.BlobValue(c.k)})
	if !c.c.Valid() {
		return false
	}
	k, _, err := bucketEntry(&c.c)
	return err == nil && string(k) == string(c.k)
}

func (c *Cursor) ready() bool {
	return (c.b.ok() && c.err == nil) || c.readySlow()
}

func (c *Cursor) readySlow() bool {
	if err := c.b.check(); err != nil {
		c.fail(err)
		return false
	}
	return c.err == nil
}

// fail takes the cursor off its entry with err.
func (c *Cursor) fail(err error) { c.err, c.k, c.v = err, nil, nil }

// First moves to the first key.
func (c *Cursor) First() bool { return c.ready() && c.load(c.c.First()) }

// Last moves to the last key.
func (c *Cursor) Last() bool { return c.ready() && c.load(c.c.Last()) }

// Next moves to the next key.
func (c *Cursor) Next() bool {
	if !(c.b.ok() && c.err == nil) && !c.readySlow() { // ready, inlined
		return false
	}
	if c.stale() && !c.reseek() {
		return c.load(c.c.Valid()) // the key is gone: its successor is next
	}
	// A read transaction's step within the run of cells the cursor
	// decoded (btree.Cursor.UseRuns), to an entry of the usual shape.
	if _, payload, ok := c.c.NextInRun(); ok {
		if k, v, ok := format.BytesPair(payload); ok {
			c.k, c.v = k, v
			return true
		}
		return c.load(true) // the cursor is on it: read it the general way
	}
	return c.load(c.c.Next())
}

// Prev moves to the previous key.
func (c *Cursor) Prev() bool {
	if !(c.b.ok() && c.err == nil) && !c.readySlow() { // ready, inlined
		return false
	}
	if c.stale() {
		c.reseek()
		if !c.c.Valid() {
			return c.load(c.c.Last())
		}
	}
	return c.load(c.c.Prev())
}

// Seek moves to the first key >= key.
func (c *Cursor) Seek(key []byte) bool {
	if !(c.b.ok() && c.err == nil) && !c.readySlow() { // ready, inlined
		return false
	}
	c.c.SeekKey([]format.Value{format.BlobValue(key)})
	return c.load(c.c.Valid())
}

// Key returns the current key (nil when the cursor is not on an entry).
func (c *Cursor) Key() []byte { return c.k }

// Value returns the current value.
func (c *Cursor) Value() []byte { return c.v }

// Err returns the error that stopped the cursor, if any.
func (c *Cursor) Err() error {
	if c.err != nil {
		return c.err
	}
	return c.c.Err()
}

// Count returns the number of keys in the bucket. It reads only page
// headers.
func (b *Bucket) Count() (int64, error) {
	if err := b.check(); err != nil {
		return 0, err
	}
	if b.tx.writable {
		if err := b.current(); err != nil {
			return 0, err
		}
	}
	return btree.Count(b.tx.pages(), b.root, false)
}

// Sequence returns the bucket's sequence number: 0 until NextSequence or
// SetSequence first sets it. It is kept where sqlite3 keeps AUTOINCREMENT
// counters, in sqlite_sequence, as the row whose name is the bucket's:
//
//	SELECT seq FROM sqlite_sequence WHERE name = 'bucket'
func (b *Bucket) Sequence() (uint64, error) {
	if err := b.check(); err != nil {
		return 0, err
	}
	s, err := b.tx.bucketSequence(b.name)
	return uint64(s.seq), err
}

// bucketSequence reads bucket name's row of sqlite_sequence: none (seq 0)
// when the table does not exist, or a seq below 0 as 0.
func (tx *Tx) bucketSequence(name string) (sequence, error) {
	if tx.cat.Table(sequenceTable) == nil {
		return sequence{}, nil
	}
	s, err := tx.sequenceOf(name)
	s.seq = max(s.seq, 0)
	return s, err
}
