package pagoda

import (
	"errors"
	"fmt"

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
				p.Kind = "overflow"
				return nil
			}
			p.Kind, p.Cells = v.Type.String(), v.Cells
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
