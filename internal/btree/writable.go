package btree

import (
	"sync"

	"github.com/pagodadb/pagoda/internal/format"
)

// Writable is a write transaction's view of the pages.
//
// The writer relies on two properties of the buffers it hands out: a buffer
// returned by Write or Allocate stays valid, and the one buffer of its page,
// until the transaction ends or the page is freed; and a buffer returned by
// Page is never written (it may be a read-only mapping).
type Writable interface {
	Pages // Page(pgno) ([]byte, error) returns the current version (possibly a dirty copy); UsableSize(); PageCount()
	// Write returns a private, writable copy of page pgno (the same buffer on every call within the transaction). Writes to it are the transaction's.
	Write(pgno uint32) ([]byte, error)
	// Allocate returns a new page (from the freelist or the end of the file), zero-filled and writable.
	Allocate() (pgno uint32, data []byte, err error)
	// Free returns page pgno to the freelist. The caller must not use it afterwards.
	Free(pgno uint32) error
}

// The package-level functions below are the one-call forms of the Writer's
// methods: each borrows a Writer from a pool, so that a caller without a
// Writer of its own still allocates nothing per call. A caller making many
// changes in one transaction may keep a Writer instead (NewWriter).

var writerPool = sync.Pool{New: func() any { return new(Writer) }}

func borrow(w Writable) *Writer {
	wr := writerPool.Get().(*Writer)
	wr.Reset(w)
	return wr
}

func giveBack(wr *Writer) {
	wr.Reset(nil)
	writerPool.Put(wr)
}

// CreateTree allocates an empty tree: a root leaf of the table kind (0x0d)
// or the index kind (0x0a). It returns the root page number.
func CreateTree(w Writable, table bool) (root uint32, err error) {
	wr := borrow(w)
	defer giveBack(wr)
	return wr.CreateTree(table)
}

// TableInsert inserts the row (rowid, record) into the table tree rooted at
// root, or overwrites the row that has this rowid (freeing its overflow
// pages). record is the row's payload.
func TableInsert(w Writable, root uint32, rowid int64, record []byte) (replaced bool, err error) {
	wr := borrow(w)
	defer giveBack(wr)
	return wr.TableInsert(root, rowid, record)
}

// TableInsertNew inserts the row (rowid, record) into the table tree
// rooted at root unless it has a row with this rowid; then it changes
// nothing and reports exists.
func TableInsertNew(w Writable, root uint32, rowid int64, record []byte) (exists bool, err error) {
	wr := borrow(w)
	defer giveBack(wr)
	return wr.TableInsertNew(root, rowid, record)
}

// TableDelete deletes the row with this rowid from the table tree rooted at
// root, reporting whether there was one.
func TableDelete(w Writable, root uint32, rowid int64) (found bool, err error) {
	wr := borrow(w)
	defer giveBack(wr)
	return wr.TableDelete(root, rowid)
}

// IndexInsert inserts the index entry key (a whole record) into the index
// tree rooted at root. An entry whose first nKey fields equal key's under k
// (all fields when nKey <= 0, CompareRecords semantics) is replaced by key.
func IndexInsert(w Writable, root uint32, k *format.KeyInfo, nKey int, key []byte) (replaced bool, err error) {
	wr := borrow(w)
	defer giveBack(wr)
	return wr.IndexInsert(root, k, nKey, key)
}

// IndexInsertNew inserts the entry key unless the tree has an entry equal
// to it on the first nKey fields; then it changes nothing and reports
// exists.
func IndexInsertNew(w Writable, root uint32, k *format.KeyInfo, nKey int, key []byte) (exists bool, err error) {
	wr := borrow(w)
	defer giveBack(wr)
	return wr.IndexInsertNew(root, k, nKey, key)
}

// IndexDelete deletes the entry whose first nKey fields equal key's,
// reporting whether there was one.
func IndexDelete(w Writable, root uint32, k *format.KeyInfo, nKey int, key []byte) (found bool, err error) {
	wr := borrow(w)
	defer giveBack(wr)
	return wr.IndexDelete(root, k, nKey, key)
}

// ClearTree frees every page of the tree rooted at root, overflow pages
// included. With freeRoot false the root stays, as an empty leaf of its
// kind.
func ClearTree(w Writable, root uint32, freeRoot bool) error {
	wr := borrow(w)
	defer giveBack(wr)
	return wr.ClearTree(root, freeRoot)
}

// TableMaxRowid returns the largest rowid of the table tree rooted at root;
// ok is false when the table is empty.
func TableMaxRowid(src Pages, root uint32) (rowid int64, ok bool, err error) {
	usable := src.UsableSize()
	pgno := root
	for depth := 0; ; depth++ {
		if depth >= MaxDepth {
			return 0, false, format.Corruptf(pgno, "b-tree rooted at page %d deeper than %d levels (cycle?)", root, MaxDepth)
		}
		if pgno == 0 || pgno > src.PageCount() {
			return 0, false, format.Corruptf(root, "right-most child is page %d, outside 1..%d", pgno, src.PageCount())
		}
		data, err := src.Page(pgno)
		if err != nil {
			return 0, false, err
		}
		pg, err := format.ParsePage(data, pgno, usable)
		if err != nil {
			return 0, false, err
		}
		if !pg.Type.IsTable() {
			return 0, false, format.CorruptAt(pgno, pg.Hdr, "%s page in the table b-tree rooted at page %d", pg.Type, root)
		}
		if !pg.Type.IsLeaf() {
			pgno = pg.RightChild()
			continue
		}
		if pg.NCells == 0 {
			if depth > 0 {
				return 0, false, format.Corruptf(pgno, "empty leaf below the root of the b-tree rooted at page %d", root)
			}
			return 0, false, nil
		}
		rowid, err = pg.TableLeafRowid(pg.NCells - 1)
		return rowid, err == nil, err
	}
}
