package raftstore

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/raft"
	"github.com/pagodadb/pagoda"
)

// FirstIndex returns the first index in the log, 0 when it is empty.
func (s *Store) FirstIndex() (uint64, error) {
	if _, err := s.acquire(); err != nil {
		return 0, err
	}
	defer s.mu.RUnlock()
	return s.first.Load(), nil
}

// LastIndex returns the last index in the log, 0 when it is empty.
func (s *Store) LastIndex() (uint64, error) {
	if _, err := s.acquire(); err != nil {
		return 0, err
	}
	defer s.mu.RUnlock()
	return s.last.Load(), nil
}

// IsMonotonic reports that raft must not leave gaps in the log: after
// restoring a snapshot it deletes the whole log, which is cheap here (rule
// 2), rather than leaving a gap before the snapshot's index.
func (s *Store) IsMonotonic() bool { return true }

// GetLog reads the entry at index into log, or returns raft.ErrLogNotFound.
// log's slices are its own.
func (s *Store) GetLog(index uint64, log *raft.Log) error {
	db, err := s.acquire()
	if err != nil {
		return err
	}
	defer s.mu.RUnlock()
	if index > math.MaxInt64 {
		return raft.ErrLogNotFound
	}
	return db.View(func(tx *pagoda.Tx) error {
		tb, err := tx.Table(logTable)
		if err != nil {
			return err
		}
		rec, err := tb.Get(int64(index))
		if errors.Is(err, pagoda.ErrNotFound) {
			return raft.ErrLogNotFound
		}
		if err != nil {
			return err
		}
		return decodeLog(rec, log)
	})
}

// StoreLog stores one entry.
func (s *Store) StoreLog(log *raft.Log) error {
	return s.StoreLogs([]*raft.Log{log})
}

// StoreLogs stores the entries in one write transaction: one durable commit
// (rule 1). An entry at an index that is in the log replaces it.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for _, l := range logs {
		if l.Index > math.MaxInt64 {
			return fmt.Errorf("raftstore: log index %d is past SQLite's largest rowid: %w", l.Index, pagoda.ErrUnsupported)
		}
		lo, hi = min(lo, l.Index), max(hi, l.Index)
	}
	db, err := s.acquire()
	if err != nil {
		return err
	}
	defer s.mu.RUnlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err = db.Update(func(tx *pagoda.Tx) error {
		tb, err := tx.Table(logTable)
		if err != nil {
			return err
		}
		for _, l := range logs {
			if err := tb.Put(int64(l.Index), nil, int64(l.Term), int64(l.Type), l.Data, l.Extensions, encodeTime(l.AppendedAt)); err != nil {
				return fmt.Errorf("raftstore: store log %d: %w", l.Index, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if first, last := s.first.Load(), s.last.Load(); first != 0 || last != 0 {
		lo, hi = min(first, lo), max(last, hi)
	}
	s.first.Store(lo)
	s.last.Store(hi)
	return nil
}

// DeleteRange deletes the entries from min to max, inclusive, in one write
// transaction, then compacts the file if it has become mostly free (rules
// 2 and 3).
func (s *Store) DeleteRange(min, max uint64) error {
	db, err := s.acquire()
	if err != nil {
		return err
	}
	compact, err := s.deleteRange(db, min, max)
	s.mu.RUnlock()
	if err != nil || !compact {
		return err
	}
	return s.compactIfSparse()
}

// deleteRange deletes the entries and reports whether the file is worth
// compacting. The caller holds mu for reading.
func (s *Store) deleteRange(db *pagoda.DB, lo, hi uint64) (compact bool, err error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	first, last := s.first.Load(), s.last.Load()
	lo, hi = max(lo, first), min(hi, last)
	if first == 0 && last == 0 || lo > hi {
		return false, nil
	}
	err = db.Update(func(tx *pagoda.Tx) error {
		if lo <= first && hi >= last {
			first, last = 0, 0
			// The whole log: dropping the table frees its pages at the
			// cost of its interior pages alone.
			if err := tx.DropTable(logTable); err != nil {
				return err
			}
			_, err := tx.CreateTable(logSchema)
			return err
		}
		tb, err := tx.Table(logTable)
		if err != nil {
			return err
		}
		c := tb.Cursor()
		for ok := c.SeekRowid(int64(lo)); ok && uint64(c.Rowid()) <= hi; ok = c.Next() {
			if err := tb.Delete(c.Rowid()); err != nil {
				return err
			}
		}
		if err := c.Err(); err != nil {
			return err
		}
		first, last, err = bounds(tb)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("raftstore: delete logs %d to %d: %w", lo, hi, err)
	}
	s.first.Store(first)
	s.last.Store(last)
	return s.minCmp >= 0 && sparse(db, s.minCmp), nil
}

// decodeLog fills log from a raft_log row, checking each column's type.
func decodeLog(rec pagoda.Record, log *raft.Log) error {
	bad := func(col string, v pagoda.Value) error {
		return fmt.Errorf("raftstore: %s row %d: %s is %s: %w", logTable, rec.Rowid(), col, v.Type(), pagoda.ErrCorrupt)
	}
	term, typ := rec.Column(1), rec.Column(2)
	if term.Type() != pagoda.TypeInteger {
		return bad("term", term)
	}
	if typ.Type() != pagoda.TypeInteger || typ.Int() < 0 || typ.Int() > math.MaxUint8 {
		return bad("type", typ)
	}
	data, err := bytesOf(rec.Column(3))
	if err != nil {
		return bad("data", rec.Column(3))
	}
	ext, err := bytesOf(rec.Column(4))
	if err != nil {
		return bad("extensions", rec.Column(4))
	}
	at, err := decodeTime(rec.Column(5))
	if err != nil {
		return fmt.Errorf("raftstore: %s row %d: appended_at: %w", logTable, rec.Rowid(), err)
	}
	*log = raft.Log{
		Index:      uint64(rec.Rowid()),
		Term:       uint64(term.Int()),
		Type:       raft.LogType(typ.Int()),
		Data:       data,
		Extensions: ext,
		AppendedAt: at,
	}
	return nil
}

// bytesOf copies a BLOB (or TEXT) value out of the page: nil for NULL.
func bytesOf(v pagoda.Value) ([]byte, error) {
	switch v.Type() {
	case pagoda.TypeNull:
		return nil, nil
	case pagoda.TypeBlob, pagoda.TypeText:
		return append(make([]byte, 0, len(v.Blob())), v.Blob()...), nil
	}
	return nil, pagoda.ErrCorrupt
}

// encodeTime is rule 3 of the encoding.
func encodeTime(t time.Time) any {
	switch {
	case t.IsZero():
		return nil
	case t.Before(minNanoTime) || t.After(maxNanoTime):
		return t.Format(time.RFC3339Nano)
	}
	return t.UnixNano()
}

var (
	minNanoTime = time.Unix(0, math.MinInt64)
	maxNanoTime = time.Unix(0, math.MaxInt64)
)

func decodeTime(v pagoda.Value) (time.Time, error) {
	switch v.Type() {
	case pagoda.TypeNull:
		return time.Time{}, nil
	case pagoda.TypeInteger:
		return time.Unix(0, v.Int()), nil
	case pagoda.TypeText:
		t, err := time.Parse(time.RFC3339Nano, v.Text())
		if err != nil {
			return time.Time{}, fmt.Errorf("%w: %v", pagoda.ErrCorrupt, err)
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%s: %w", v.Type(), pagoda.ErrCorrupt)
}
