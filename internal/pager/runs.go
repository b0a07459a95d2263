package pager

import (
	"github.com/pagodadb/pagoda/internal/vfs"
	"github.com/pagodadb/pagoda/internal/wal"
)

// pageRuns writes pages into the database file, given in increasing page
// order: each run of consecutive pages in one system call, as many as the
// writer's I/O buffer holds. A checkpoint copies frames with it, and a
// transaction its new pages past the committed end (spillDirect).
type pageRuns struct {
	p     *Pager
	buf   []byte
	start uint32 // the page buf begins with
	err   error  // the first write that failed; nothing is written after it
	// writeback asks the system to start writing the runs to the device
	// as they are written (a checkpoint's, or a rollback-mode commit's:
	// its sync follows, and no run is written twice before it); wbFrom..wbTo is the span written since
	// the last StartWriteback, wbBytes the bytes written in it.
	writeback    bool
	wbFrom, wbTo int64
	wbBytes      int
}

// wroteBack notes n bytes written at off, and once a batch's worth is
// written, asks the system to start writing their span to the device:
// a sync of the file follows the runs, and waits for less (the span's
// pages not written are clean, and cost nothing).
func (r *pageRuns) wroteBack(off int64, n int) {
	if !r.writeback || r.p.opts.Sync == SyncOff {
		return
	}
	if r.wbBytes == 0 {
		r.wbFrom = off
	}
	r.wbTo, r.wbBytes = off+int64(n), r.wbBytes+n
	if r.wbBytes >= cap(r.buf) {
		vfs.StartWriteback(r.p.f, r.wbFrom, r.wbTo-r.wbFrom)
		r.wbBytes = 0
	}
}

// ioBuffer returns the writer's I/O buffer: the WAL batches frames in it
// (wal.File.SetBuffer) and pageRuns pages, never both at once. The caller
// holds the writer lock.
func (p *Pager) ioBuffer() []byte {
	ws := &p.wstate
	if n := wal.BatchBytes(p.pageSize); cap(ws.io) < n {
		ws.io = make([]byte, 0, n)
	}
	return ws.io[:0]
}

// runs returns a pageRuns over the writer's I/O buffer. The caller holds
// the writer lock, and the WAL batches no frame.
func (p *Pager) runs() pageRuns { return pageRuns{p: p, buf: p.ioBuffer()} }

// add appends page pgno to the run, writing the run first when pgno does
// not continue it or it is full. It returns the first error of a write.
func (r *pageRuns) add(pgno uint32, page []byte) error {
	ps := r.p.pageSize
	if len(r.buf) > 0 && (pgno != r.start+uint32(len(r.buf)/ps) || len(r.buf)+ps > cap(r.buf)) {
		r.flush()
	}
	if len(r.buf) == 0 {
		r.start = pgno
	}
	r.buf = append(r.buf, page...)
	return r.err
}

// flush writes the run and returns the first error of a write.
func (r *pageRuns) flush() error {
	if len(r.buf) > 0 && r.err == nil {
		off := int64(r.start-1) * int64(r.p.pageSize)
		_, r.err = r.p.f.WriteAt(r.buf, off)
		if r.err == nil {
			r.wroteBack(off, len(r.buf))
		}
	}
	r.buf = r.buf[:0]
	return r.err
}
