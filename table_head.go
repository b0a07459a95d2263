package pagoda

import (
	"fmt"

	"github.com/pagodadb/pagoda/internal/btree"
)

// Head returns the leading bytes of the record of the row with the given
// rowid, as they lie on its b-tree leaf page, and the record's whole
// length: the whole record when it does not spill onto overflow pages,
// else its first bytes (at least SQLite's minimum local payload, about
// 489 bytes on a 4 KiB page). Head reads no overflow page, so learning a
// row's leading columns (a SQLite Archive row's name, mode, mtime and sz,
// before its data) costs one leaf however large the row. The bytes are
// in SQLite's record format, as Record.Raw gives them; a record's header
// and its leading fields may lie past them. The slice aliases the page:
// it is valid until the transaction ends (in a write transaction, until
// its next change) and must not be written. A missing row is
// ErrNotFound; a WITHOUT ROWID table is ErrUnsupported.
func (t *Table) Head(rowid int64) (head []byte, size int64, err error) {
	if err := t.check(); err != nil {
		return nil, 0, err
	}
	if err := t.refresh(); err != nil {
		return nil, 0, err
	}
	if t.WithoutRowID() {
		return nil, 0, fmt.Errorf("pagoda: table %q is WITHOUT ROWID: Head needs a rowid: %w", t.Name(), ErrUnsupported)
	}
	local, _, st := t.find(rowid)
	switch st {
	case btree.FindFound:
		return local, int64(len(local)), nil
	case btree.FindAbsent:
		return nil, 0, fmt.Errorf("pagoda: table %q row %d: %w", t.Name(), rowid, ErrNotFound)
	case btree.FindUnsure:
		// A page out of shape: the cursor's search reports it.
		if !t.cur.SeekRowid(rowid) {
			if err := t.cur.Err(); err != nil {
				return nil, 0, err
			}
			return nil, 0, fmt.Errorf("pagoda: table %q row %d: %w", t.Name(), rowid, ErrNotFound)
		}
	}
	// The row spills (FindRowid left the cursor on it), or SeekRowid
	// found it: its local part, the chain unread.
	p, err := t.cur.PayloadRef()
	if err != nil {
		return nil, 0, err
	}
	return p.Local(), p.Len(), nil
}
