package bench

import (
	"math/rand/v2"
	"os"
	"time"
)

// Memory floors of the read workloads: what the fixture's SQLite file
// costs to read from memory with no engine at all, measured in the same
// run, so that a lookup or scan ratio can be read against what memory
// allows on this machine.
//
//   - lookup: one random page of the file after another, each the next's
//     only way to be chosen (a dependent chain, as a lookup's leaf depends
//     on its parent), four lines of each loaded at once: the first (a
//     leaf's header and pointers) and three from a random offset (the
//     cell a lookup guesses): what one lookup's leaf costs from memory.
//   - scan: every cache line of the file loaded once, in file order, per
//     row of the fixture: reading the file's bytes once.
//
// Both read the file through a read-only shared mapping, as pagoda does,
// touched whole beforehand.

// floorLines is the stride of the scan floor's loads.
const floorLines = 64

// MemoryFloors measures the lookup floor in ns per lookup and the scan
// floor in ns per row (rows rows in the file) over the file at path, each
// for about d. Where files cannot be mapped it returns zeros.
func MemoryFloors(path string, rows int, d time.Duration) (lookupNs, scanNsPerRow float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	data, unmap, err := mapFile(f)
	if err != nil || data == nil {
		return 0, 0, err
	}
	defer unmap()
	const pageSize = 4096 // the lines a lookup loads lie within any page size's first 4 KiB
	if len(data) < pageSize || rows <= 0 {
		return 0, 0, nil
	}
	sink := touchLines(data) // fault every page in first

	// The lookup floor: 65,536 random (page, offset) pairs, as many as the
	// lookups' rowids, walked as a chain.
	pages := len(data) / pageSize
	r := rand.New(rand.NewPCG(7, 11))
	steps := make([]int32, lookupKeys)
	offs := make([]int32, lookupKeys)
	for i := range steps {
		steps[i] = int32(r.IntN(pages) * pageSize)
		offs[i] = int32(floorLines + r.IntN(pageSize-4*floorLines))
	}
	var n int
	start := time.Now()
	for x := 0; time.Since(start) < d; {
		for range 1024 {
			j := (n + x) & (lookupKeys - 1)
			p, o := int(steps[j]), int(steps[j]+offs[j])
			x = int(data[p]+data[o]+data[o+floorLines]+data[o+2*floorLines]) & 1
			n++
		}
		sink += byte(x)
	}
	lookupNs = float64(time.Since(start).Nanoseconds()) / float64(n)

	// The scan floor: the whole file, line by line, as often as fits d.
	passes := 0
	start = time.Now()
	for passes == 0 || time.Since(start) < d {
		sink += touchLines(data)
		passes++
	}
	scanNsPerRow = float64(time.Since(start).Nanoseconds()) / float64(passes) / float64(rows)
	floorSink = sink
	return lookupNs, scanNsPerRow, nil
}

// touchLines loads one byte of every line of data and returns their sum.
func touchLines(data []byte) (sum byte) {
	for i := 0; i < len(data); i += floorLines {
		sum += data[i]
	}
	return sum
}

// floorSink keeps the floors' loads from being optimized away.
var floorSink byte
