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
		// scanLeaves' loop, with the entries decoded in it.
		var s btree.Scan
		s.Start(&c, more)
	leaves:
		for s.NextPage() {
			if err := b.tx.checkEpoch(b.epoch); err != nil {
				s.Fail(err)
				break
			}
			for _, ok := s.NextBatch(); ok; _, ok = s.NextBatch() {
				for _, payload, ok := s.Next(); ok; _, payload, ok = s.Next() {
					s.Ahead()
					k, v, plain := format.BytesPair(payload)
					if !plain {
						pg, _ := c.Page()
						var err error
						if k, v, err = bucketKV(payload, pg.Pgno); err != nil {
							s.Fail(err)
							break leaves
						}
					}
					if to != nil && string(k) >= string(to) || !yield(k, v) {
						break leaves
					}
				}
			}
		}
		if err := s.Err(); err != nil {
			b.tx.setErr(err)
		}
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

// scanLeaves hands yield the rowid and record (read through ctx, nil for
// a bucket's) of each entry from the one c is on (when more) to the end of
// its tree, until yield returns false, with a btree.Scan: the leaves'
// cells in one loop, the next leaf loaded as it goes. It checks at each
// leaf that tx still holds the snapshot of epoch: a loop body that ends or
// renews tx stops the scan with ErrTxClosed instead of reading pages tx no
// longer holds. An error is kept by tx, as is one yield gave c (Fail)
// before it returned false.
func scanLeaves(c *btree.Cursor, more bool, tx *Tx, epoch uint64, ctx *recordCtx, yield func(int64, Record) bool) {
	var s btree.Scan
	s.Start(c, more)
leaves:
	for s.NextPage() {
		if err := tx.checkEpoch(epoch); err != nil {
			s.Fail(err)
			break
		}
		for first, ok := s.NextBatch(); ok; first, ok = s.NextBatch() {
			if ctx != nil && first != nil && !ctx.shape.Fits(first) {
				// A batch that opens with a row of another header: the
				// shape is dropped, so that Column does not compare rows
				// of varied headers with it, and learnt again from the
				// row when due.
				ctx.shape = format.RecordShape{}
				ctx.missed(first)
			}
			for rowid, payload, ok := s.Next(); ok; rowid, payload, ok = s.Next() {
				s.Ahead()
				if !yield(rowid, Record{data: pager.AsString(payload), rowid: rowid, ctx: ctx}) {
					break leaves
				}
			}
		}
	}
	if err := s.Err(); err != nil {
		tx.setErr(err)
	}
}

// Range returns an iterator over the rows with from <= rowid < to, in rowid
// order (rowid tables).
func (t *Table) Range(from, to int64) iter.Seq2[int64, Record] {
	return func(yield func(int64, Record) bool) {
		if !t.tx.writable && !t.WithoutRowID() {
			// A read transaction's range: All's scan from the seek.
			if err := t.check(); err != nil {
				t.tx.setErr(err)
				return
			}
			var c btree.Cursor
			c.Init(t.tx.pages(), t.root, true, &t.meta.kinfo)
			c.SeekRowid(from)
			scanLeaves(&c, c.Valid(), t.tx, t.epoch, &t.rc, func(rowid int64, rec Record) bool {
				return rowid < to && yield(rowid, rec)
			})
			return
		}
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
