package bench

import (
	"bytes"
	"fmt"
	"math/rand/v2"
)

// rowData holds the rows that the write workloads write: keys 1..n, key k
// with the value FixtureOptions.Value(k), generated once, before any
// timing, so that every peer is handed the same bytes and none pays for
// generating them.
type rowData struct {
	FixtureOptions
	n    int
	vals []byte // n values of ValueSize bytes, key k's at (k-1)*ValueSize
}

func newRowData(opt FixtureOptions, n int) *rowData {
	opt = opt.withDefaults()
	d := &rowData{FixtureOptions: opt, n: n, vals: make([]byte, 0, n*opt.ValueSize)}
	for k := int64(1); k <= int64(n); k++ {
		d.vals = opt.Value(d.vals, k)
	}
	return d
}

// value returns the value of key k, 1 <= k <= n.
func (d *rowData) value(k int64) []byte {
	off := int(k-1) * d.ValueSize
	return d.vals[off : off+d.ValueSize : off+d.ValueSize]
}

// inOrder returns the keys 1..n in increasing order.
func inOrder(n int) []int64 {
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = int64(i + 1)
	}
	return keys
}

// shuffled returns the keys 1..n in a random order that depends only on
// the seed and the salt.
func shuffled(n int, seed, salt uint64) []int64 {
	keys := inOrder(n)
	r := rand.New(rand.NewPCG(seed, salt))
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}

// Salts of the random orders, so that they differ from one another.
const (
	saltLoad   = 0x6c6f6164 // "load"
	saltInsert = 0x696e73   // "ins"
	saltDelete = 0x64656c   // "del"
	saltRead   = 0x72656164 // "read"
)

// keySet is the set of keys that a store should hold, within 1..n.
type keySet struct {
	in    []bool // indexed by key
	count int
}

func newKeySet(n int, keys []int64) *keySet {
	s := &keySet{in: make([]bool, n+1)}
	for _, k := range keys {
		s.add(k)
	}
	return s
}

func (s *keySet) add(k int64) {
	if !s.in[k] {
		s.in[k] = true
		s.count++
	}
}

func (s *keySet) remove(k int64) {
	if s.in[k] {
		s.in[k] = false
		s.count--
	}
}

func (s *keySet) has(k int64) bool { return k >= 1 && k < int64(len(s.in)) && s.in[k] }

// checkSamples is the number of keys checkRows looks up with Get besides
// its scan.
const checkSamples = 200

// checkRows checks that store s holds exactly the keys of want, each with
// its value: a scan must return them in increasing order with the right
// bytes, and Get must find sampled present keys and fail on sampled
// absent ones. A store that drops or garbles writes fails here.
func checkRows(s Store, d *rowData, want *keySet) (err error) {
	if err := s.BeginRead(); err != nil {
		return fmt.Errorf("%s: check: %w", s.Name(), err)
	}
	defer func() {
		if eerr := s.EndRead(); err == nil && eerr != nil {
			err = fmt.Errorf("%s: check: %w", s.Name(), eerr)
		}
	}()
	var bad error
	last, seen := int64(0), 0
	n, err := s.Scan(func(k int64, v []byte) {
		seen++
		switch {
		case bad != nil:
		case k <= last:
			bad = fmt.Errorf("key %d after key %d", k, last)
		case !want.has(k):
			bad = fmt.Errorf("key %d should not be there", k)
		case !bytes.Equal(v, d.value(k)):
			bad = fmt.Errorf("key %d has value %x, want %x", k, v, d.value(k))
		}
		last = k
	})
	if err == nil {
		err = bad
	}
	if err == nil && (n != want.count || seen != want.count) {
		err = fmt.Errorf("scan returned %d rows (%d seen), want %d", n, seen, want.count)
	}
	if err != nil {
		return fmt.Errorf("%s: check: %w", s.Name(), err)
	}
	r := rand.New(rand.NewPCG(d.Seed, uint64(want.count)))
	for range checkSamples {
		k := 1 + r.Int64N(int64(len(want.in)-1))
		v, err := s.Get(k)
		switch {
		case want.has(k) && err != nil:
			return fmt.Errorf("%s: check: get %d: %w", s.Name(), k, err)
		case want.has(k) && !bytes.Equal(v, d.value(k)):
			return fmt.Errorf("%s: check: get %d: value %x, want %x", s.Name(), k, v, d.value(k))
		case !want.has(k) && err == nil:
			return fmt.Errorf("%s: check: get %d: found a deleted or never written key", s.Name(), k)
		}
	}
	return nil
}
