package pager

import "path/filepath"

// Stats counts what the pager has done since Open.
type Stats struct {
	Commits     uint64 // write transactions committed with changes
	Frames      uint64 // WAL frames written
	Syncs       uint64 // fsync calls, on any file
	Checkpoints uint64 // checkpoints that copied pages
	Spilled     uint64 // pages written before their commit (Settle)
	Allocated   uint64 // pages committed transactions took: from the freelist or the file's end
	Freed       uint64 // pages committed transactions put on the freelist
	Copied      uint64 // pages checkpoints copied into the database file
	Restarts    uint64 // times the WAL started over (new salts) or was created
}

// Stats returns the pager's counters.
func (p *Pager) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Restarts = p.restarts
	if p.wal != nil {
		s.Syncs += p.wal.Syncs()
	}
	return s
}

func (p *Pager) count(f func(*Stats)) {
	p.mu.Lock()
	f(&p.stats)
	p.mu.Unlock()
}

// syncDB syncs the database file unless syncing is off, and counts it.
// The WAL syncs itself (wal.File).
func (p *Pager) syncDB() error {
	if p.opts.Sync == SyncOff {
		return nil
	}
	p.count(func(s *Stats) { s.Syncs++ })
	return p.f.Sync()
}

// syncDir makes the creation or removal of the files beside the database
// durable, and counts it.
func (p *Pager) syncDir() error {
	p.count(func(s *Stats) { s.Syncs++ })
	return p.fs.SyncDir(filepath.Dir(p.path))
}
