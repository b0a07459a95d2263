//go:build (amd64 || arm64) && !purego

package btree

// prefetchLines asks the CPU to bring n cache lines of b, from its start,
// into its cache (n at most (len(b)+format.CacheLine-1)/format.CacheLine)
// and returns 0 at once. Unlike a load, a request does not hold up the
// instructions after it while its line comes from memory, so that a scan
// goes on reading the cells of one leaf while the next arrives. A hint:
// it reads nothing and cannot fault.
//
//go:noescape
func prefetchLines(b []byte, n int) byte

// prefetch2 is prefetchLines(b[off:], 2), for off+format.CacheLine <
// len(b).
//
//go:noescape
func prefetch2(b []byte, off int) byte
