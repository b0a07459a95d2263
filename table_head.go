package pagoda

import (
	"fmt"

	"github.com/pagodadb/pagoda/internal/btree"
)

// Head returns the first bytes of the record of the row with the given
// rowid, len(buf) of them or the whole record when it is shorter, and the
// record's whole length. Bytes the row's b-tree leaf holds are returned
// in place, aliasing the page; when they spill past it, they are copied
// into buf from the leaf and the overflow pages they span, and no further
// page of the chain is read. So a row's leading columns (a SQLite
// Archive row's name, mode, mtime and sz, before its data) cost a leaf
// and at most a page or two, however large the row: Get reads it whole.
// The bytes are in SQLite's record format, as Record.Raw gives them: a
// header of serial types, then the fields' bodies in order. A slice in
// place is valid until the transaction ends (in a write transaction,
// until its next change) and must not be written. A missing row is
// ErrNotFound; a WITHOUT ROWID table is ErrUnsupported.
func (t *Table) Head(rowid int64, buf []byte) (head []byte, size int64, err error) {
	if !t.ok() { // check, inlined
		if err := t.recheck(); err != nil {
			return nil, 0, err
		}
	}
	if t.WithoutRowID() {
		return nil, 0, fmt.Errorf("pagoda: table %q is WITHOUT ROWID: Head needs a rowid: %w", t.Name(), ErrUnsupported)
	}
	local, _, st := t.find(rowid)
	switch st {
	case btree.FindFound:
		return local[:min(len(local), len(buf))], int64(len(local)), nil
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
	// found it: its local part, and the chain as far as buf goes.
	p, err := t.cur.PayloadRef()
	if err != nil {
		return nil, 0, err
	}
	n := min(int64(len(buf)), p.Len())
	if local := p.Local(); n <= int64(len(local)) {
		return local[:n], p.Len(), nil
	}
	m, err := p.ReadAt(buf[:n], 0)
	if err != nil {
		return nil, 0, err
	}
	return buf[:m], p.Len(), nil
}
