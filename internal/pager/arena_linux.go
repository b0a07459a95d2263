package pager

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on the platforms Go
// supports with Linux (x86-64, arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// allocChunk maps n bytes of private anonymous memory, aligned to a huge
// page and advised to be backed by huge pages. It returns the aligned part
// and the whole mapping, for freeChunk.
func allocChunk(n int) (b, m []byte, err error) {
	m, err = unix.Mmap(-1, 0, n+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, nil, err
	}
	// The mapping's address, only to align within it: unsafe is needed
	// to see it, and nothing is dereferenced through it.
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	skip := int((hugePage - addr%hugePage) % hugePage)
	b = m[skip : skip+n : skip+n]
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice: without it, 4 KiB pages
	return b, m, nil
}

// freeChunk unmaps a mapping of allocChunk.
func freeChunk(m []byte) { _ = unix.Munmap(m) }
