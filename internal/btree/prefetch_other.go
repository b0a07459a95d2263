//go:build !(amd64 || arm64) || purego

package btree

import "github.com/pagodadb/pagoda/internal/format"

// prefetchLines loads n cache lines of b, from its start (n at most
// (len(b)+format.CacheLine-1)/format.CacheLine), and returns the sum of
// their first bytes, for the caller to keep in its cursor's sink: a load
// whose value is unused may be dropped. Without a prefetch instruction in
// this package's assembly for the architecture, loads stand in for one.
func prefetchLines(b []byte, n int) (sum byte) {
	for k := range n {
		sum += b[k*format.CacheLine]
	}
	return sum
}

// prefetch2 is prefetchLines(b[off:], 2), for off+format.CacheLine <
// len(b).
func prefetch2(b []byte, off int) byte { return b[off] + b[off+format.CacheLine] }
