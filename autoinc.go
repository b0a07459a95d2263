package pagoda

import (
	"errors"
	"fmt"
	"math"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/expr"
)

// AUTOINCREMENT.
//
// A rowid table whose INTEGER PRIMARY KEY is declared AUTOINCREMENT never
// hands out a rowid twice, even after deletes: SQLite keeps the largest
// rowid each such table has held in the sqlite_sequence table, which it
// creates with the first of them:
//
//	CREATE TABLE sqlite_sequence(name,seq)
//	  name  the table's name (TEXT), as in sqlite_schema
//	  seq   the largest rowid it has held (INTEGER)
//
// As sqlite3 does, pagoda reads a table's row as the first, in rowid
// order, whose name is that TEXT; gives an insert without a rowid one more
// than both seq and the table's largest rowid (and fails when either is
// the largest int64, where a plain table picks a random unused rowid);
// after every insert raises seq to the new rowid when that is larger,
// adding the row (seq at least 0) when there is none; leaves seq alone on
// deletes; and deletes the table's rows when the table is dropped.

const (
	sequenceTable     = "sqlite_sequence"
	createSequenceSQL = "CREATE TABLE sqlite_sequence(name,seq)"
)

// sequence is a table's row of sqlite_sequence, as an insert found it.
type sequence struct {
	tab   *Table // sqlite_sequence
	found bool   // the table has a row
	rowid int64  // its rowid
	seq   int64  // seq as sqlite3 reads it: an integer, 0 without a row
}

// sequenceOf reads table name's row of sqlite_sequence.
func (tx *Tx) sequenceOf(name string) (sequence, error) {
	st, err := tx.Table(sequenceTable)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return sequence{}, fmt.Errorf("pagoda: table %q is AUTOINCREMENT, but there is no %s table: %w", name, sequenceTable, ErrCorrupt)
		}
		return sequence{}, err
	}
	s := sequence{tab: st}
	c := st.Cursor()
	for ok := c.First(); ok; ok = c.Next() {
		rec := c.Record()
		if v := rec.Column(0); v.Type() != TypeText || string(v.Blob()) != name {
			continue
		}
		s.found, s.rowid, s.seq = true, c.Rowid(), expr.IntValue(rec.Column(1).format())
		break
	}
	return s, c.Err()
}

// autoRowid chooses the rowid of an insert without one into an
// AUTOINCREMENT table: one more than the largest rowid (1 in an empty
// table) and than seq. There is none when either is the largest int64.
func (t *Table) autoRowid(s sequence) (int64, error) {
	last, ok, err := btree.TableMaxRowid(t.tx.w, t.root)
	if err != nil {
		return 0, err
	}
	if (ok && last == math.MaxInt64) || s.seq == math.MaxInt64 {
		return 0, constraintf("table %q: AUTOINCREMENT has used the largest rowid (database or disk is full)", t.Name())
	}
	next := int64(1)
	if ok {
		next = last + 1
	}
	return max(next, s.seq+1), nil
}

// raise stores seq after an insert of rowid into table name: a new row
// when there is none, and the row rewritten only when rowid is larger
// than seq (a seq stored as another type stays as it is otherwise).
func (s sequence) raise(name string, rowid int64) error {
	switch {
	case !s.found:
		_, err := s.tab.Insert(name, max(0, rowid))
		return err
	case rowid <= s.seq:
		return nil
	}
	return s.tab.Put(s.rowid, name, rowid)
}

// createSequence creates sqlite_sequence, as sqlite3 does when it creates
// the first AUTOINCREMENT table.
func (tx *Tx) createSequence() error {
	if tx.cat.Table(sequenceTable) != nil {
		return nil
	}
	root, err := tx.btree().CreateTree(true)
	if err != nil {
		return err
	}
	sql := createSequenceSQL
	return tx.schemaInsert("table", sequenceTable, sequenceTable, root, &sql)
}

// dropSequence deletes table name's rows from sqlite_sequence, as sqlite3
// does when it drops an AUTOINCREMENT table.
func (tx *Tx) dropSequence(name string) error {
	st, err := tx.Table(sequenceTable)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var rowids []int64
	c := st.Cursor()
	for ok := c.First(); ok; ok = c.Next() {
		if v := c.Record().Column(0); v.Type() == TypeText && string(v.Blob()) == name {
			rowids = append(rowids, c.Rowid())
		}
	}
	if err := c.Err(); err != nil {
		return err
	}
	for _, r := range rowids {
		if err := st.Delete(r); err != nil {
			return err
		}
	}
	return nil
}
