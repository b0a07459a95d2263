package pagoda

import (
	"fmt"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/expr"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/schema"
)

// Index is a SQLite index. Its entries are records holding the indexed
// columns followed by the row's rowid (or, on a WITHOUT ROWID table, the
// primary key columns not already indexed), in the index's order
// (collations and DESC columns included).
type Index struct {
	tx    *Tx
	epoch uint64          // tx.epoch when ix was taken
	cat   *schema.Catalog // the catalog info comes from
	info  *schema.IndexInfo
	meta  *indexMeta
	root  uint32
	rc    recordCtx // its entries'
}

// Index returns the index called name (case-insensitive), or ErrNotFound.
func (tx *Tx) Index(name string) (*Index, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	ii := tx.cat.Index(name)
	if ii == nil {
		return nil, noSuch("index", name)
	}
	if ii.Err != nil {
		return nil, schemaErr("index", name, ii.Err)
	}
	if ii.Table == nil || ii.Table.Table == nil {
		return nil, fmt.Errorf("pagoda: index %q: its table %q is missing or unreadable: %w", name, ii.Entry.TblName, ErrCorrupt)
	}
	if err := tx.rootOK("index", name, ii.Entry.RootPage); err != nil {
		return nil, err
	}
	ix := &Index{tx: tx, epoch: tx.epoch, cat: tx.cat, info: ii, meta: tx.db.indexMeta(tx.cat, ii), root: ii.Entry.RootPage}
	ix.rc = recordCtx{meta: &ix.meta.rec, tx: tx}
	return ix, nil
}

// check reports whether ix may be used (see Table.check).
func (ix *Index) check() error {
	if ix.ok() {
		return nil
	}
	return ix.recheck()
}

// ok is check's fast path, with no call: ix was taken in the transaction's
// epoch and catalog, and the transaction is open.
func (ix *Index) ok() bool {
	return ix.epoch == ix.tx.epoch && !ix.tx.closed && ix.cat == ix.tx.cat
}

func (ix *Index) recheck() error {
	if err := ix.tx.checkEpoch(ix.epoch); err != nil {
		return err
	}
	if ix.cat != ix.tx.cat {
		nx, err := ix.tx.Index(ix.info.Entry.Name)
		if err != nil {
			return err
		}
		if nx.root != ix.root {
			return fmt.Errorf("pagoda: index %q was dropped: %w", ix.info.Entry.Name, ErrNotFound)
		}
		ix.cat, ix.info, ix.meta = nx.cat, nx.info, nx.meta
		ix.rc.meta = &ix.meta.rec
	}
	return nil
}

// Name returns the index's name.
func (ix *Index) Name() string { return ix.info.Entry.Name }

// SQL returns the CREATE INDEX statement ("" for an automatic index).
func (ix *Index) SQL() string { return ix.info.Entry.SQL }

// TableName returns the name of the indexed table.
func (ix *Index) TableName() string { return ix.info.Entry.TblName }

// Unique reports whether the index is UNIQUE.
func (ix *Index) Unique() bool { return ix.info.Index.Unique }

// Count returns the number of entries.
func (ix *Index) Count() (int64, error) {
	if err := ix.check(); err != nil {
		return 0, err
	}
	return btree.Count(ix.tx.pages(), ix.root, false)
}

// Cursor returns a cursor over the index's entries in index order.
func (ix *Index) Cursor() *IndexCursor {
	c := &IndexCursor{ix: ix}
	c.c.Init(ix.tx.pages(), ix.root, false, &ix.meta.kinfo)
	if !ix.tx.writable {
		c.c.UseRuns(&c.run)
	}
	return c
}

// Reset points c at the start of ix (which may belong to another
// transaction), reusing c's memory: a cursor kept and reset for each
// transaction costs no allocation per transaction. Reset(nil) drops every
// reference to the last transaction, for a cursor kept in a pool.
func (c *IndexCursor) Reset(ix *Index) {
	c.ix, c.rec, c.err, c.key = ix, Record{}, nil, c.key[:0]
	if ix == nil {
		c.c = btree.Cursor{}
		return
	}
	c.c.Init(ix.tx.pages(), ix.root, false, &ix.meta.kinfo)
	if !ix.tx.writable {
		c.c.UseRuns(&c.run)
	}
}

// IndexCursor iterates an index. Moving methods return false at either end
// or on error; Err says which.
type IndexCursor struct {
	ix  *Index
	c   btree.Cursor
	rec Record
	err error
	key []format.Value
	run [btree.RunLen]format.TableCell // the cursor's runs in a read transaction
}

func (c *IndexCursor) ready() bool {
	return (c.ix.ok() && c.err == nil) || c.readySlow()
}

func (c *IndexCursor) readySlow() bool {
	if err := c.ix.check(); err != nil {
		c.err = err
	}
	return c.err == nil
}

func (c *IndexCursor) load(ok bool) bool {
	c.rec = Record{}
	if !ok {
		return false
	}
	_, payload, _, err := c.c.Entry()
	if err != nil {
		c.err = err
		return false
	}
	// As for table cursors, the record is checked as its columns are read.
	c.rec = Record{data: pager.AsString(payload), ctx: &c.ix.rc}
	return true
}

// First moves to the first entry.
func (c *IndexCursor) First() bool { return c.ready() && c.load(c.c.First()) }

// Last moves to the last entry.
func (c *IndexCursor) Last() bool { return c.ready() && c.load(c.c.Last()) }

// Next moves to the next entry (ready, inlined).
func (c *IndexCursor) Next() bool {
	return ((c.ix.ok() && c.err == nil) || c.readySlow()) && c.load(c.c.Next())
}

// Prev moves to the previous entry (ready, inlined).
func (c *IndexCursor) Prev() bool {
	return ((c.ix.ok() && c.err == nil) || c.readySlow()) && c.load(c.c.Prev())
}

// Seek moves to the first entry that is >= prefix in index order, where
// prefix gives values for the first len(prefix) key columns (converted by
// the columns' affinities, as SQLite converts them). Use Match to tell
// whether the entry starts with the prefix.
func (c *IndexCursor) Seek(prefix ...any) bool {
	if !(c.ix.ok() && c.err == nil) && !c.readySlow() { // ready, inlined
		return false
	}
	if !c.setKey(prefix) {
		return false
	}
	c.c.SeekKey(c.key)
	return c.load(c.c.Valid())
}

// SeekNear is Seek for a prefix near the current entry, as when skipping
// a short run of entries or seeking a neighbour of the last entry read:
// when the target is on the current leaf page it searches that page alone.
// Anywhere else it is Seek.
func (c *IndexCursor) SeekNear(prefix ...any) bool {
	if !(c.ix.ok() && c.err == nil) && !c.readySlow() { // ready, inlined
		return false
	}
	if !c.setKey(prefix) {
		return false
	}
	c.c.SeekKeyNear(c.key)
	return c.load(c.c.Valid())
}

// SeekText is SeekNear for a one-column prefix holding the TEXT value
// text: it moves to the first entry whose first column is >= text, as
// SeekNear(string(text)) does, without converting or allocating (but in a
// UTF-16 database, where it is SeekNear(string(text))).
func (c *IndexCursor) SeekText(text []byte) bool {
	if !(c.ix.ok() && c.err == nil) && !c.readySlow() { // ready, inlined
		return false
	}
	if len(c.ix.meta.aff) == 0 || (c.ix.meta.aff[0] != schema.AffinityText && c.ix.meta.aff[0] != schema.AffinityBlob) ||
		c.ix.meta.rec.Enc != 0 {
		// The column's affinity may turn text into a number; the text of a
		// UTF-16 database's keys is UTF-16.
		return c.SeekNear(string(text))
	}
	c.key = append(c.key[:0], format.TextValue(text))
	c.c.SeekKeyNear(c.key)
	return c.load(c.c.Valid())
}

// setKey converts prefix into c.key; false (and c.err) when it cannot.
func (c *IndexCursor) setKey(prefix []any) bool {
	key, err := c.ix.searchKey(c.key[:0], prefix)
	if err != nil {
		c.err = err
		return false
	}
	c.key = key
	return true
}

// Match reports whether the current entry equals prefix on its first
// len(prefix) columns, under the index's collations.
func (c *IndexCursor) Match(prefix ...any) bool {
	if !c.c.Valid() {
		return false
	}
	if !c.setKey(prefix) {
		return false
	}
	cmp, err := format.CompareKey(c.rec.bytes(), c.key, &c.ix.meta.kinfo)
	if err != nil {
		c.err = err
		return false
	}
	return cmp == 0
}

// Key returns the current entry: the indexed columns, then the rowid (or
// the remaining primary key columns).
func (c *IndexCursor) Key() Record { return c.rec }

// Raw returns the current entry's record bytes, as Key().Raw() does, but
// without copying a Record: a loop that decodes entries itself reads them
// with no more than a slice load.
func (c *IndexCursor) Raw() []byte { return c.rec.bytes() }

// Rowid returns the rowid of the current entry's row (indexes on rowid
// tables; 0 otherwise).
func (c *IndexCursor) Rowid() int64 {
	if c.ix.info.Table.Table.WithoutRowID || c.rec.ctx == nil {
		return 0
	}
	return c.rec.Column(c.rec.Len() - 1).Int()
}

// Err returns the error that stopped the cursor, if any, or else a
// malformed record that a column read met in this transaction.
func (c *IndexCursor) Err() error {
	if c.err != nil {
		return c.err
	}
	if err := c.c.Err(); err != nil {
		return err
	}
	if c.ix != nil {
		return c.ix.tx.err
	}
	return nil
}

// searchKey converts prefix values to a search key, appending to dst.
func (ix *Index) searchKey(dst []format.Value, prefix []any) ([]format.Value, error) {
	if len(prefix) > len(ix.meta.aff) {
		return nil, fmt.Errorf("pagoda: index %q has %d key columns, got %d values", ix.Name(), len(ix.meta.aff), len(prefix))
	}
	for i, x := range prefix {
		v, err := toValue(x)
		if err != nil {
			return nil, err
		}
		dst = append(dst, keyText(expr.ApplyAffinity(v, expr.ComparisonAffinity(ix.meta.aff[i])), ix.meta.rec.Enc))
	}
	return dst, nil
}

// keyText returns a search key's value v as the keys of a database of text
// encoding enc (0 for UTF-8) hold it: TEXT in UTF-16 is converted from
// UTF-8 as sqlite3 converts a bound value, so that BINARY compares the
// UTF-16 bytes as sqlite3 does (and NOCASE and RTRIM convert both sides
// back, as sqlite3 does: see format.Collation.ForEncoding).
func keyText(v format.Value, enc uint32) format.Value {
	if enc == 0 || v.Kind != format.KindText {
		return v
	}
	return format.TextValue(format.UTF8ToUTF16(make([]byte, 0, 2*len(v.Bytes)), v.Bytes, enc))
}
