package pagoda

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
)

// HeaderInfo is the database header as of a transaction's snapshot.
type HeaderInfo struct {
	PageSize          int
	WriteVersion      int // 1 rollback journal, 2 WAL
	ReadVersion       int
	ReservedBytes     int
	ChangeCounter     uint32
	DatabaseSize      uint32 // as stored in the header
	FreelistTrunk     uint32
	FreelistCount     uint32
	SchemaCookie      uint32
	SchemaFormat      uint32
	DefaultCacheSize  uint32
	AutoVacuumRoot    uint32
	TextEncoding      uint32
	UserVersion       uint32
	IncrementalVacuum uint32
	ApplicationID     uint32
	VersionValidFor   uint32
	SQLiteVersion     uint32
	PageCount         uint32 // pages in this snapshot
	WALFrames         uint32 // committed frames in the WAL now (the database's, not this snapshot's: checkpoints and restarts move it)
}

// Header returns the database header as this transaction sees it.
func (tx *Tx) Header() (HeaderInfo, error) {
	if err := tx.check(); err != nil {
		return HeaderInfo{}, err
	}
	info := HeaderInfo{PageSize: tx.snap.PageSize(), PageCount: tx.snap.PageCount(), WALFrames: tx.db.pager.WALFrames()}
	if tx.snap.PageCount() == 0 {
		return info, nil
	}
	pg1, err := tx.snap.Page(1)
	if err != nil {
		return HeaderInfo{}, err
	}
	h := format.Header(pg1)
	info.WriteVersion, info.ReadVersion = int(h.WriteVersion()), int(h.ReadVersion())
	info.ReservedBytes = h.ReservedSpace()
	info.ChangeCounter, info.DatabaseSize = h.ChangeCounter(), h.DatabaseSize()
	info.FreelistTrunk, info.FreelistCount = h.FreelistTrunk(), h.FreelistCount()
	info.SchemaCookie, info.SchemaFormat = h.SchemaCookie(), h.SchemaFormat()
	info.DefaultCacheSize, info.AutoVacuumRoot = h.DefaultCacheSize(), h.LargestRootPage()
	info.TextEncoding, info.UserVersion = h.TextEncoding(), h.UserVersion()
	info.IncrementalVacuum, info.ApplicationID = h.IncrementalVacuum(), h.ApplicationID()
	info.VersionValidFor, info.SQLiteVersion = h.VersionValidFor(), h.SQLiteVersion()
	return info, nil
}

// PageInfo describes one page of the file.
type PageInfo struct {
	Pgno  uint32
	Kind  string // "table leaf", "table interior", "index leaf", "index interior", "overflow", "freelist trunk", "freelist leaf", "pointer map", "lock-byte", "unused"
	Cells int    // b-tree pages
	Free  int    // free bytes of b-tree pages, -1 for other kinds
	Owner string // the table or index the page belongs to
	InWAL bool   // served from the WAL
	// Depth is a b-tree page's level below its tree's root (0 for the
	// root); 0 for other kinds.
	Depth int
	// Payload counts the bytes of values on the page, as SQLite's dbstat
	// counts them: on a b-tree page the local part of each cell's payload
	// (none on table interior pages), on an overflow page the part of the
	// value it holds; 0 on other kinds.
	Payload int
	// Unused counts the bytes that hold nothing, as dbstat counts them:
	// Free on a b-tree page, what the value leaves of the last page of an
	// overflow chain (0 on the others); 0 on other kinds.
	Unused int
}

// Pages describes every page of the database, in page order, by walking
// every b-tree of the schema (sqlite_schema included) and the freelist.
// Pages that nothing reaches are "unused". A damaged tree does not stop the
// walk: its error is returned along with everything that could be read.
func (tx *Tx) Pages() ([]PageInfo, error) {
	if err := tx.check(); err != nil {
		return nil, err
	}
	n := tx.snap.PageCount()
	pages := make([]PageInfo, n)
	for i := range pages {
		pages[i] = PageInfo{Pgno: uint32(i + 1), Kind: "unused", Free: -1, InWAL: tx.snap.InWAL(uint32(i + 1))}
	}
	if n == 0 {
		return pages, nil
	}
	var errs []error
	if lb := format.LockBytePage(tx.snap.PageSize()); lb <= n {
		pages[lb-1].Kind = "lock-byte"
	}
	if pg1, err := tx.snap.Page(1); err == nil && len(pg1) >= format.HeaderSize && format.Header(pg1).LargestRootPage() != 0 {
		// An auto-vacuum file: its pointer-map pages.
		usable, lb := tx.snap.UsableSize(), format.LockBytePage(tx.snap.PageSize())
		for p := uint32(2); p <= n && usable >= format.MinUsableSize; p++ {
			if format.PtrMapPageOf(p, usable, lb) == p {
				pages[p-1].Kind = "pointer map"
			}
		}
	}
	mark := func(owner string) func(v btree.PageVisit) error {
		return func(v btree.PageVisit) error {
			p := &pages[v.Pgno-1]
			if p.Owner != "" || p.Kind != "unused" {
				return format.Corruptf(v.Pgno, "2nd reference to page %d (%s and %s)", v.Pgno, p.Owner, owner)
			}
			p.Owner = owner
			if v.Role == btree.RoleOverflow {
				p.Kind, p.Payload = "overflow", v.Payload
				p.Unused = tx.snap.UsableSize() - format.OverflowPageHeaderSize - v.Payload
				return nil
			}
			p.Kind, p.Cells, p.Depth = v.Type.String(), v.Cells, v.Depth
			data, err := tx.snap.Page(v.Pgno)
			if err != nil {
				return err
			}
			pg, err := format.ParsePage(data, v.Pgno, tx.snap.UsableSize())
			if err != nil {
				return err
			}
			if p.Free, err = pg.FreeSpace(); err != nil {
				p.Free = -1
				return err
			}
			p.Unused = p.Free
			if pg.Type != format.PageTableInterior {
				for i := 0; i < pg.NCells; i++ {
					cell, err := pg.Cell(i)
					if err != nil {
						return err
					}
					p.Payload += len(cell.Local)
				}
			}
			return nil
		}
	}
	if err := btree.Walk(&tx.snap, schemaRoot, true, true, mark("sqlite_schema")); err != nil {
		errs = append(errs, err)
	}
	for _, e := range tx.cat.Entries {
		if e.RootPage == 0 || (e.Type != "table" && e.Type != "index") {
			continue
		}
		if e.RootPage > n {
			errs = append(errs, format.Corruptf(e.RootPage, "%s %q: root page out of range", e.Type, e.Name))
			continue
		}
		table := e.Type == "table"
		if ti := tx.cat.Table(e.Name); table && ti != nil && ti.Table != nil && ti.Table.WithoutRowID {
			table = false
		}
		if err := btree.Walk(&tx.snap, e.RootPage, table, true, mark(e.Name)); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", e.Type, e.Name, err))
		}
	}
	err := pager.WalkFreelist(&tx.snap, func(pgno uint32, trunk bool) error {
		p := &pages[pgno-1]
		if p.Kind != "unused" {
			return format.Corruptf(pgno, "2nd reference to page %d (freelist and %s)", pgno, p.Owner)
		}
		p.Kind = "freelist leaf"
		if trunk {
			p.Kind = "freelist trunk"
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return pages, errors.Join(errs...)
}

// PageDetail is one page decoded: what Pages says of it, and its contents
// by kind.
type PageDetail struct {
	PageInfo
	// B-tree pages: the page header's fields, the cells, the freeblocks.
	FirstFreeblock int    // offset of the first freeblock, 0 for none
	CellContent    int    // offset of the cell content area
	Fragmented     int    // fragmented free bytes
	RightChild     uint32 // interior pages: the right-most child
	CellList       []CellInfo
	Freeblocks     []Freeblock
	// Next is the next page of an overflow chain or of the freelist's
	// trunks, 0 at the end; 0 on other kinds.
	Next uint32
	// Leaves lists a freelist trunk's leaf pages.
	Leaves []uint32
	// PtrMap lists a pointer-map page's entries, for the pages after it.
	PtrMap []PtrMapEntry
}

// CellInfo is one cell of a b-tree page.
type CellInfo struct {
	Offset   int    // where the cell starts on the page
	Child    uint32 // interior pages: the child left of the cell
	Rowid    int64  // table pages: the rowid (the key, on interior pages)
	Payload  int64  // the payload's length, 0 on table interior pages
	Local    int    // payload bytes on the page
	Overflow uint32 // first overflow page, 0 when the payload is all local
	// Values are the record's fields that lie wholly in the local bytes
	// (all of them unless the payload spills), text as stored (UTF-16 in
	// a UTF-16 database). They alias the page.
	Values []Value
}

// Freeblock is a free block of a b-tree page.
type Freeblock struct {
	Offset, Size int
}

// PtrMapEntry is one entry of a pointer-map page (auto-vacuum files).
type PtrMapEntry struct {
	Pgno   uint32 // the page it describes
	Type   string // "root", "free", "overflow1" (a chain's first page), "overflow2" (a later one), "btree" (below a root), or "type N"
	Parent uint32 // the page pointing at it, 0 for roots and free pages
}

// Page decodes page pgno (1 to PageCount). Its kind and owner come from a
// walk of the whole file, as Pages; the walk's error, if any, is returned
// with what could be decoded. A page number outside the file is an error
// wrapping ErrNotFound.
func (tx *Tx) Page(pgno uint32) (PageDetail, error) {
	if err := tx.check(); err != nil {
		return PageDetail{}, err
	}
	if n := tx.snap.PageCount(); pgno == 0 || pgno > n {
		return PageDetail{}, fmt.Errorf("page %d is out of range: the file has pages 1 to %d: %w", pgno, n, ErrNotFound)
	}
	pages, walkErr := tx.Pages()
	d := PageDetail{PageInfo: pages[pgno-1]}
	data, err := tx.snap.Page(pgno)
	if err != nil {
		return d, err
	}
	usable := tx.snap.UsableSize()
	switch d.Kind {
	case "table leaf", "table interior", "index leaf", "index interior":
		err = d.decodeBtree(data, usable)
	case "overflow":
		d.Next = format.OverflowNext(data)
	case "freelist trunk":
		var tr format.FreelistTrunk
		if tr, err = format.ParseFreelistTrunk(data, pgno, usable); err == nil {
			d.Next = tr.Next()
			for i := uint32(0); i < min(tr.Count(), uint32(format.MaxTrunkLeavesRead(usable))); i++ {
				d.Leaves = append(d.Leaves, tr.Leaf(i))
			}
		}
	case "pointer map":
		for p := pgno + 1; p <= tx.snap.PageCount(); p++ {
			typ, parent, ok := format.PtrMapEntry(data, usable, pgno, p)
			if !ok {
				break
			}
			d.PtrMap = append(d.PtrMap, PtrMapEntry{Pgno: p, Type: ptrMapTypeName(typ), Parent: parent})
		}
	}
	if walkErr != nil && err != nil && strings.Contains(walkErr.Error(), err.Error()) {
		return d, walkErr // the walk met the same damage
	}
	return d, errors.Join(walkErr, err)
}

// decodeBtree fills d's b-tree fields from the page's bytes.
func (d *PageDetail) decodeBtree(data []byte, usable int) error {
	pg, err := format.ParsePage(data, d.Pgno, usable)
	if err != nil {
		return err
	}
	d.FirstFreeblock, d.CellContent, d.Fragmented = pg.FirstFreeblock(), pg.ContentStart(), pg.FragmentedBytes()
	if !pg.Type.IsLeaf() {
		d.RightChild = pg.RightChild()
	}
	for fb, n := pg.FirstFreeblock(), 0; fb != 0 && fb+format.FreeblockHeaderSize <= usable && n < usable/format.FreeblockHeaderSize; n++ {
		next, size := pg.Freeblock(fb)
		d.Freeblocks = append(d.Freeblocks, Freeblock{Offset: fb, Size: size})
		if next <= fb {
			break
		}
		fb = next
	}
	for i := 0; i < pg.NCells; i++ {
		off, err := pg.CellOffset(i)
		if err != nil {
			return err
		}
		c, err := pg.CellAt(off)
		if err != nil {
			return err
		}
		ci := CellInfo{Offset: off, Child: c.Child, Rowid: c.Rowid, Payload: c.PayloadLen, Local: len(c.Local), Overflow: c.Overflow}
		if pg.Type != format.PageTableInterior {
			if r, err := format.NewRecordReader(c.Local); err == nil {
				for {
					v, ok, err := r.Next()
					if !ok || err != nil {
						break
					}
					ci.Values = append(ci.Values, valueOf(v))
				}
			}
		}
		d.CellList = append(d.CellList, ci)
	}
	return nil
}

// ptrMapTypeName names a pointer-map entry type.
func ptrMapTypeName(t byte) string {
	switch t {
	case format.PtrMapRoot:
		return "root"
	case format.PtrMapFree:
		return "free"
	case format.PtrMapOverflow1:
		return "overflow1"
	case format.PtrMapOverflow2:
		return "overflow2"
	case format.PtrMapBtree:
		return "btree"
	}
	return fmt.Sprintf("type %d", t)
}
