package pager

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/wal"
)

// Options configure Open.
type Options struct {
	ReadOnly bool
}

// Pager owns the database file, its mapping and the recovered WAL.
type Pager struct {
	path     string
	f        *os.File
	readOnly bool
	pageSize int
	usable   int

	mu      sync.Mutex
	data    []byte // mapping of the database file
	dbPages uint32 // whole pages present in the file
	walFile *os.File
	walData []byte // mapping of the WAL file
	log     *wal.Log
	nPages  uint32 // committed database size
	retired [][]byte
	closed  bool
}

// WALPath returns the path of the write-ahead log of the database at path.
func WALPath(path string) string { return path + "-wal" }

// Open opens and validates the database at path and recovers its WAL.
func Open(path string, opts Options) (*Pager, error) {
	flag := os.O_RDONLY
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	p := &Pager{path: path, f: f, readOnly: opts.ReadOnly}
	if err := p.load(); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Pager) load() error {
	st, err := p.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size == 0 {
		// An empty file is an empty database to sqlite3.
		p.pageSize, p.usable = 4096, 4096
		return nil
	}
	var hdr [format.HeaderSize]byte
	if _, err := p.f.ReadAt(hdr[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			return format.Corruptf(1, "file of %d bytes is shorter than the database header", size)
		}
		return err
	}
	if err := format.ValidateHeader(hdr[:]); err != nil {
		return err
	}
	h := format.Header(hdr[:])
	p.pageSize, p.usable = h.PageSize(), h.UsableSize()
	if size < int64(p.pageSize) {
		return format.Corruptf(1, "file of %d bytes is shorter than one %d-byte page", size, p.pageSize)
	}
	if size/int64(p.pageSize) > int64(^uint32(0)>>1) {
		return fmt.Errorf("%w: file of %d bytes has too many pages", format.ErrUnsupported, size)
	}
	p.dbPages = uint32(size / int64(p.pageSize))
	if p.data, err = mapFile(p.f, int(p.dbPages)*p.pageSize); err != nil {
		return fmt.Errorf("pager: map %s: %w", p.path, err)
	}
	if err := p.openWAL(); err != nil {
		return err
	}
	// The size comes from the last commit frame when the WAL has one, else
	// from the header (page 1 of the file) if valid, else the file size.
	switch {
	case p.log != nil && p.log.MaxFrame > 0:
		p.nPages = p.log.DBSize
	case h.SizeIsValid():
		p.nPages = h.DatabaseSize()
	default:
		p.nPages = p.dbPages
	}
	if p.nPages > p.dbPages && (p.log == nil || p.log.MaxFrame == 0) {
		return format.Corruptf(1, "header says %d pages, the file holds %d", p.nPages, p.dbPages)
	}
	// Check the header as the snapshot sees it (page 1 may be in the WAL).
	s := p.Snapshot()
	pg1, err := s.Page(1)
	if err != nil {
		return err
	}
	if err := format.ValidateHeader(pg1); err != nil {
		return err
	}
	if format.Header(pg1).PageSize() != p.pageSize || format.Header(pg1).UsableSize() != p.usable {
		return format.Corruptf(1, "page size in the WAL's page 1 differs from the file's")
	}
	if h1 := format.Header(pg1); p.log != nil && p.log.MaxFrame > 0 && h1.SizeIsValid() && h1.DatabaseSize() > p.nPages {
		return format.Corruptf(1, "header says %d pages, the last commit has %d", h1.DatabaseSize(), p.nPages)
	}
	return nil
}

func (p *Pager) openWAL() error {
	f, err := os.Open(WALPath(p.path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if st.Size() == 0 {
		f.Close()
		return nil
	}
	p.walFile = f
	if st.Size() > int64(^uint(0)>>1) {
		return fmt.Errorf("%w: WAL of %d bytes", format.ErrUnsupported, st.Size())
	}
	if p.walData, err = mapFile(f, int(st.Size())); err != nil {
		return fmt.Errorf("pager: map %s: %w", WALPath(p.path), err)
	}
	p.log, err = wal.Recover(p.walData, p.pageSize)
	return err
}

// PageSize returns the database page size.
func (p *Pager) PageSize() int { return p.pageSize }

// UsableSize returns the page size less the reserved bytes.
func (p *Pager) UsableSize() int { return p.usable }

// Path returns the database file's path.
func (p *Pager) Path() string { return p.path }

// WALFrames returns the number of committed frames in the WAL.
func (p *Pager) WALFrames() uint32 {
	if p.log == nil {
		return 0
	}
	return p.log.MaxFrame
}

// Snapshot returns a read view of the last committed state.
func (p *Pager) Snapshot() *Snapshot {
	s := &Snapshot{}
	p.InitSnapshot(s)
	return s
}

// InitSnapshot fills s with a read view of the last committed state, so that
// callers can embed a Snapshot without an allocation.
func (p *Pager) InitSnapshot(s *Snapshot) {
	p.mu.Lock()
	*s = Snapshot{
		data:     p.data,
		dbPages:  p.dbPages,
		nPages:   p.nPages,
		pageSize: p.pageSize,
		usable:   p.usable,
	}
	if p.log != nil && p.log.MaxFrame > 0 {
		s.log, s.walData, s.maxFrame = p.log, p.walData, p.log.MaxFrame
	}
	p.mu.Unlock()
}

// Close unmaps and closes the files. Slices handed out become invalid.
func (p *Pager) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var errs []error
	errs = append(errs, unmapFile(p.data), unmapFile(p.walData))
	for _, m := range p.retired {
		errs = append(errs, unmapFile(m))
	}
	p.data, p.walData, p.retired = nil, nil, nil
	if p.walFile != nil {
		errs = append(errs, p.walFile.Close())
	}
	if p.f != nil {
		errs = append(errs, p.f.Close())
	}
	return errors.Join(errs...)
}
