package pager

// runPages is the most pages a run writes into the database file in one
// system call.
const runPages = 64

// pageRuns writes pages into the database file, given in increasing page
// order: each run of consecutive pages (up to runPages) in one system call,
// through the writer's buffer. A checkpoint copies frames with it, and a
// transaction its new pages past the committed end (spillDirect).
type pageRuns struct {
	p     *Pager
	buf   []byte
	start uint32 // the page buf begins with
	err   error  // the first write that failed; nothing is written after it
}

// runs returns a pageRuns over the writer's buffer. The caller holds the
// writer lock.
func (p *Pager) runs() pageRuns {
	ws := &p.wstate
	if cap(ws.runs) < runPages*p.pageSize {
		ws.runs = make([]byte, 0, runPages*p.pageSize)
	}
	return pageRuns{p: p, buf: ws.runs[:0]}
}

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
		_, r.err = r.p.f.WriteAt(r.buf, int64(r.start-1)*int64(r.p.pageSize))
	}
	r.buf = r.buf[:0]
	return r.err
}
