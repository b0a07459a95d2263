package pagoda

import (
	"iter"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
)

// All returns an iterator over every key and value in key order. An error
// stops the iteration; Tx.Err (and View) report it.
func (b *Bucket) All() iter.Seq2[[]byte, []byte] { return b.Range(nil, nil) }

// Range returns an iterator over the keys k with from <= k < to in key
// order; a nil bound is open.
func (b *Bucket) Range(from, to []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		if err := b.check(); err != nil {
			b.tx.setErr(err)
			return
		}
		if b.tx.writable {
			// The loop body may change the bucket: go entry by entry with
			// a cursor that survives changes.
			c := b.Cursor()
			var ok bool
			if from == nil {
				ok = c.First()
			} else {
				ok = c.Seek(from)
			}
			for ; ok; ok = c.Next() {
				if to != nil && string(c.Key()) >= string(to) {
					return
				}
				if !yield(c.Key(), c.Value()) {
					return
				}
			}
			if err := c.Err(); err != nil {
				b.tx.setErr(err)
			}
			return
		}
		var c btree.Cursor
		c.Init(b.tx.pages(), b.root, false, nil)
		var more bool
		if from == nil {
			more = c.First()
		} else {
			c.SeekKey([]format.Value{format.BlobValue(from)})
			more = c.Valid()
		}
		scanLeaves(&c, more, b.tx, b.epoch, nil, func(_ int64, rec Record) bool {
			pg, _ := c.Page()
			k, v, err := bucketKV(rec.bytes(), pg.Pgno)
			if err != nil {
				c.Fail(err)
				return false
			}
			if to != nil && string(k) >= string(to) {
				return false
			}
			return yield(k, v)
		})
	}
}

// All returns an iterator over every row in rowid (or primary key) order.
// An error stops the iteration; Tx.Err (and View) report it. It is the
// fastest way to read a whole table: it steps through each leaf page in one
// loop.
func (t *Table) All() iter.Seq2[int64, Record] {
	return func(yield func(int64, Record) bool) {
		if err := t.check(); err != nil {
			t.tx.setErr(err)
			return
		}
		if t.tx.writable {
			// The loop body may change the table: go row by row with a
			// cursor that survives changes.
			tc := t.Cursor()
			for ok := tc.First(); ok; ok = tc.Next() {
				if !yield(tc.Rowid(), tc.Record()) {
					return
				}
			}
			if err := tc.Err(); err != nil {
				t.tx.setErr(err)
			}
			return
		}
		var c btree.Cursor
		c.Init(t.tx.pages(), t.root, !t.WithoutRowID(), &t.meta.kinfo)
		scanLeaves(&c, c.First(), t.tx, t.epoch, &t.rc, yield)
	}
}

// scanBatch is how many cells of a table leaf scanLeaves decodes at once.
const scanBatch = 32

// scanLeaves hands yield the rowid and record (read through ctx, nil for
// a bucket's) of each entry from the one c is on (when more) to the end of
// its tree, until yield returns false. It reads each leaf's cells in one
// loop, loading the next leaf as it goes, and checks at each leaf that tx
// still holds the snapshot of epoch: a loop body that ends or renews tx
// stops the scan with ErrTxClosed instead of reading pages tx no longer
// holds. An error is kept by tx, as is one yield gave c (Fail) before it
// returned false.
func scanLeaves(c *btree.Cursor, more bool, tx *Tx, epoch uint64, ctx *recordCtx, yield func(int64, Record) bool) {
	var cells [scanBatch]format.TableCell
leaves:
	for ; more; more = c.Next() {
		if err := tx.checkEpoch(epoch); err != nil {
			c.Fail(err)
			break
		}
		pg, i, ahead, ok := c.Leaf()
		if !ok { // an entry in an index interior cell
			rowid, payload, _, err := c.Entry()
			if err != nil {
				c.Fail(err)
				break
			}
			if !yield(rowid, Record{data: pager.AsString(payload), rowid: rowid, ctx: ctx}) {
				break leaves
			}
			continue
		}
		// The leaf's cells in one loop, loading the next leaf as it goes:
		// on a table leaf, decoded in batches while they are plain.
		line := 0
		for i < pg.NCells {
			if pg.Type == format.PageTableLeaf {
				n := pg.TableLeafCells(i, cells[:])
				if ctx != nil && n > 0 && !ctx.shape.Fits(cells[0].Payload) {
					// A batch that opens with a row of another header: the
					// shape is dropped, so that Column does not compare
					// rows of varied headers with it, and learnt again
					// from the row when due.
					ctx.shape = format.RecordShape{}
					ctx.missed(cells[0].Payload)
				}
				for k := range cells[:n] {
					// Keep per row: one add to the cursor, where a sum
					// kept across yield costs a spill and two reloads.
					var s byte
					line, s = btree.LoadAhead(ahead, line)
					c.Keep(s)
					cell := &cells[k]
					if !yield(cell.Rowid, Record{data: pager.AsString(cell.Payload), rowid: cell.Rowid, ctx: ctx}) {
						break leaves
					}
				}
				if i += n; n == len(cells) || i >= pg.NCells {
					continue
				}
			}
			// One cell the general way: an index leaf's, or one that
			// TableLeafCells left (it spills, its payload is empty or its
			// length takes three bytes or more, it ends the page, or it is
			// malformed).
			var s byte
			line, s = btree.LoadAhead(ahead, line)
			c.Keep(s)
			rowid, payload, overflow, err := pg.LeafEntry(i)
			if err == nil && overflow {
				c.SetLeafIndex(i)
				rowid, payload, _, err = c.Entry()
			}
			if err != nil {
				c.Fail(err)
				break
			}
			if !yield(rowid, Record{data: pager.AsString(payload), rowid: rowid, ctx: ctx}) {
				break leaves
			}
			i++
		}
		if c.Err() != nil {
			break
		}
		c.SetLeafIndex(pg.NCells - 1)
	}
	if err := c.Err(); err != nil {
		tx.setErr(err)
	}
}

// Range returns an iterator over the rows with from <= rowid < to, in rowid
// order (rowid tables).
func (t *Table) Range(from, to int64) iter.Seq2[int64, Record] {
	return func(yield func(int64, Record) bool) {
		c := t.Cursor()
		for ok := c.SeekRowid(from); ok && c.Rowid() < to; ok = c.Next() {
			if !yield(c.Rowid(), c.Record()) {
				return
			}
		}
		if err := c.Err(); err != nil {
			t.tx.setErr(err)
		}
	}
}

// Prefix returns an iterator over the entries whose first key columns equal
// prefix, in index order, yielding each entry's rowid (0 on WITHOUT ROWID
// tables) and key record.
func (ix *Index) Prefix(prefix ...any) iter.Seq2[int64, Record] {
	return func(yield func(int64, Record) bool) {
		c := ix.Cursor()
		for ok := c.Seek(prefix...); ok && c.Match(prefix...); ok = c.Next() {
			if !yield(c.Rowid(), c.Key()) {
				return
			}
		}
		if err := c.Err(); err != nil {
			ix.tx.setErr(err)
		}
	}
}
