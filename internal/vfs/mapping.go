package vfs

import (
	"errors"
	"sync"
)

// Mapping is the read-only mapping (File.Map) of a file that grows while
// readers hold slices of it: the database file and its WAL. Growth never
// invalidates such a slice. A mapping with room past the file's end is
// extended in place (the file's new bytes appear in it); else the file is
// mapped again, larger, and the old mapping is retired: it stays mapped
// until Unmap. Room is reserved generously, so that a file that grows by a
// page at a time is seldom mapped again.
//
// Mapping has no lock of its own. Its owner reads Bytes under a lock of its
// own, which Grow and Truncate take while they change what Bytes returns;
// only one goroutine (the owner's writer) calls them.
type Mapping struct {
	data    []byte   // the file's bytes, a prefix of the mapping
	size    int      // bytes mapped: len(data) and the room past it
	retired [][]byte // older, smaller mappings, whole
}

// minMapRoom is the least a file that grows is mapped with.
const minMapRoom = 1 << 20

// roomFor returns how many bytes to map for a growing file of size bytes:
// a power of two, at least minMapRoom, with a quarter to spare.
func roomFor(size int) int {
	c := minMapRoom
	for c < size+size/4 {
		c *= 2
	}
	return c
}

// Map maps the first size bytes of f: exactly size when room is false (a
// file that does not grow), else with room to grow.
func (m *Mapping) Map(f File, size int, room bool) error {
	c := size
	if room && size != 0 {
		c = roomFor(size)
	}
	b, err := f.Map(c)
	if err != nil {
		return err
	}
	m.data, m.size = b[:size], c
	return nil
}

// Bytes returns the mapped bytes of the file. Read it under the owner's
// lock (the owner's writer need not).
func (m *Mapping) Bytes() []byte { return m.data }

// Grow makes Bytes cover the file's first size bytes, which f must hold,
// holding mu while it changes them.
func (m *Mapping) Grow(f File, size int, mu sync.Locker) error {
	if size <= m.size && m.data != nil && !MapCopies {
		mu.Lock()
		if size > len(m.data) {
			m.data = m.data[:size]
		}
		mu.Unlock()
		return nil
	}
	c := roomFor(size)
	b, err := f.Map(c)
	if err != nil {
		return err
	}
	mu.Lock()
	var old []byte
	if m.data != nil {
		old = m.data[:m.size:m.size]
		m.retired = append(m.retired, old)
	}
	m.data, m.size = b[:size], c
	mu.Unlock()
	// Readers still reading the retired mapping map its pages again as
	// they touch them; the rest no longer count in the resident set.
	dropResident(old)
	return nil
}

// DropResident lets the mapping's pages go from the process's resident
// set; they stay in the page cache, and readers map them again as they
// touch them (see dropResident). A write transaction larger than its cache
// calls it, so that the file's pages it reads back do not add up to the
// whole file in the resident set.
func (m *Mapping) DropResident() {
	if m.data != nil {
		dropResident(m.data[:m.size:m.size])
	}
}

// Truncate ends Bytes at size bytes when they are longer, holding mu: the
// file was cut short. The mapping stays, so that Grow extends it again.
func (m *Mapping) Truncate(size int, mu sync.Locker) {
	mu.Lock()
	if size < len(m.data) {
		m.data = m.data[:size]
	}
	mu.Unlock()
}

// Unmap releases the mapping and every retired one. No reader may use them
// any more.
func (m *Mapping) Unmap(fsys FS) error {
	errs := []error{fsys.Unmap(m.data[:m.size:m.size])}
	for _, r := range m.retired {
		errs = append(errs, fsys.Unmap(r))
	}
	m.data, m.size, m.retired = nil, 0, nil
	return errors.Join(errs...)
}
