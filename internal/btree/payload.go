package btree

import (
	"github.com/pagodadb/pagoda/internal/format"
)

// Payload reads ranges of one cell's payload in place: the local part from
// the b-tree page, the rest from the overflow chain, page by page, without
// assembling the whole payload. It remembers the last overflow page it
// read, so reading forward costs one page per page of data; reading
// backward walks the chain again from its start.
//
// An overflow page:
//
//	offset 0  next overflow page number (4 bytes, big-endian), 0 on the last
//	offset 4  payload bytes, up to the usable size
type Payload struct {
	src   Pages
	pgno  uint32 // the b-tree page holding the cell, for errors
	local []byte // the payload bytes stored on the b-tree page
	total int64  // payload length
	first uint32 // first overflow page, 0 if none
	per   int64  // payload bytes per overflow page

	// The position cache: overflow page number at, index in the chain k
	// (0 is first); k < 0 means nothing is cached.
	k  int64
	at uint32
}

// PayloadRef returns the current entry's payload as a Payload, leaving the
// overflow chain unread. A length that needs more overflow pages than the
// database has is corruption (what reads it sizes buffers by it).
func (c *Cursor) PayloadRef() (Payload, error) {
	t := c.top()
	cell, err := t.page.Cell(t.idx)
	if err != nil {
		return Payload{}, err
	}
	if err := checkPayloadLen(c.src, cell, t.page.Pgno); err != nil {
		return Payload{}, err
	}
	return Payload{
		src: c.src, pgno: t.page.Pgno, local: cell.Local, total: cell.PayloadLen,
		first: cell.Overflow, per: int64(c.src.UsableSize() - format.OverflowPageHeaderSize), k: -1,
	}, nil
}

// LocalPayload is the Payload of a cell whose payload lies whole on its
// page, pgno, as FindRowid returns it.
func LocalPayload(pgno uint32, local []byte) Payload {
	return Payload{pgno: pgno, local: local, total: int64(len(local)), k: -1}
}

// Len returns the payload's length in bytes.
func (p *Payload) Len() int64 { return p.total }

// Local returns the part of the payload stored on the b-tree page.
func (p *Payload) Local() []byte { return p.local }

// ReadAt copies payload bytes from off into dst and returns how many it
// copied: len(dst), or fewer at the end of the payload.
func (p *Payload) ReadAt(dst []byte, off int64) (int, error) {
	if off < 0 || off >= p.total {
		return 0, nil
	}
	dst = dst[:min(int64(len(dst)), p.total-off)]
	n := 0
	if off < int64(len(p.local)) {
		n = copy(dst, p.local[off:])
	}
	for n < len(dst) {
		pos := off + int64(n) - int64(len(p.local)) // offset in the overflow part
		k := pos / p.per
		data, err := p.overflowPage(k)
		if err != nil {
			return n, err
		}
		in := format.OverflowPageHeaderSize + int(pos%p.per)
		n += copy(dst[n:], data[in:format.OverflowPageHeaderSize+int(p.per)])
	}
	return n, nil
}

// overflowPage returns overflow page k of the chain (0 is the first),
// walking from the cached position when it is not past k.
func (p *Payload) overflowPage(k int64) ([]byte, error) {
	i, pg := int64(0), p.first
	if p.k >= 0 && p.k <= k {
		i, pg = p.k, p.at
	}
	pages := p.src.PageCount()
	for {
		if pg == 0 || pg > pages {
			return nil, format.Corruptf(p.pgno, "overflow chain: page %d of the chain is %d, outside 1..%d", i, pg, pages)
		}
		data, err := p.src.Page(pg)
		if err != nil {
			return nil, err
		}
		if i == k {
			p.k, p.at = i, pg
			return data, nil
		}
		pg = format.OverflowNext(data)
		i++
	}
}
