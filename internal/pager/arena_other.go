//go:build !linux

package pager

// allocChunk takes a chunk from the heap where huge pages are not asked
// for.
func allocChunk(n int) (b, m []byte, err error) {
	b = make([]byte, n)
	return b, b, nil
}

func freeChunk([]byte) {}
