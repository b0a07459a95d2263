package bench

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// Workload is a named timed loop over a peer. Run is called by
// testing.Benchmark (pagoda bench) or from a Benchmark function (go test);
// it returns an error instead of failing b, so that both callers can report
// it.
type Workload struct {
	Name string
	Doc  string // one line, for reports
	// PerRow reports a metric per row of the fixture (ns/row), for
	// workloads whose one operation reads the whole table.
	PerRow bool
	// TxPerOp runs the workload on peers of NewTxPeer, which read each
	// operation in a read transaction of its own, instead of peers
	// holding one read transaction throughout.
	TxPerOp bool
	// Variant selects pagoda's API (see pagodaPeer): "" the table and its
	// iterator, or one of the variant constants. Other peers read as they
	// always do.
	Variant string
	// Peers, when set, are the only peers the workload runs (those that
	// have the API it measures); the others are left out of its rows.
	Peers []string
	Run   func(b *testing.B, p Peer, f *Fixture) error
}

// Variants of pagoda's read API (Workload.Variant).
const (
	variantCursor       = "cursor"        // the table's cursor: First, Next, Record
	variantBucket       = "bucket"        // the bucket file: Bucket.Get, Bucket.All
	variantBucketCursor = "bucket-cursor" // the bucket file: Bucket.Get, Cursor First, Next, Value
)

// isBucketVariant reports whether variant reads the bucket file.
func isBucketVariant(variant string) bool {
	return variant == variantBucket || variant == variantBucketCursor
}

// kvPeers are the peers of the workloads of pagoda's bucket API and
// cursors: the key/value stores with that API, each with its own.
var kvPeers = []string{"pagoda", "bbolt"}

// Workloads lists every workload, in report order.
var Workloads = []Workload{
	{Name: "lookup", Doc: "random point lookup by rowid, value read", Run: Lookup},
	{Name: "lookup-tx", Doc: "the same, each lookup in a read transaction of its own (a request handler's read)", TxPerOp: true, Run: Lookup},
	{Name: "lookup-bucket", Doc: "lookup through pagoda's bucket API (Bucket.Get of the rowid as 8 big-endian bytes)", Variant: variantBucket, Peers: kvPeers, Run: Lookup},
	{Name: "lookup-tx-bucket", Doc: "the same, each lookup in a View of its own", TxPerOp: true, Variant: variantBucket, Peers: kvPeers, Run: Lookup},
	{Name: "scan", Doc: "full scan in rowid order, every value read; pagoda: Table.All (iterator)", PerRow: true, Run: Scan},
	{Name: "scan-cursor", Doc: "the same through pagoda's table cursor (First, Next, Record)", PerRow: true, Variant: variantCursor, Peers: kvPeers, Run: Scan},
	{Name: "scan-bucket", Doc: "the same through the bucket API's iterator (Bucket.All)", PerRow: true, Variant: variantBucket, Peers: kvPeers, Run: Scan},
	{Name: "scan-cursor-bucket", Doc: "the same through the bucket's cursor (First, Next, Value)", PerRow: true, Variant: variantBucketCursor, Peers: kvPeers, Run: Scan},
}

// WorkloadByName returns the workload called name.
func WorkloadByName(name string) (Workload, error) {
	for _, w := range Workloads {
		if w.Name == name {
			return w, nil
		}
	}
	return Workload{}, fmt.Errorf("bench: unknown workload %q", name)
}

// lookupKeys is the number of pre-generated random rowids a lookup loop
// cycles through (a power of two).
const lookupKeys = 1 << 16

var rowidCache sync.Map // FixtureOptions -> []int64

// LookupRowids returns the random rowids, uniform in 1..Rows, that Lookup
// cycles through. They depend only on the fixture's options, so every peer
// looks up the same rows in the same order; they are generated once, before
// any timed loop.
func (o FixtureOptions) LookupRowids() []int64 {
	o = o.withDefaults()
	if ids, ok := rowidCache.Load(o); ok {
		return ids.([]int64)
	}
	r := rand.New(rand.NewPCG(o.Seed, 0x6c6f6f6b7570)) // "lookup"
	ids := make([]int64, lookupKeys)
	for i := range ids {
		ids[i] = 1 + r.Int64N(int64(o.Rows))
	}
	rowidCache.Store(o, ids)
	return ids
}

// Lookup measures one random point lookup by rowid per operation: Get, and
// the value's length summed so that the value is really fetched. On a peer
// of NewTxPeer (workload lookup-tx) each Get is a read transaction of its
// own.
func Lookup(b *testing.B, p Peer, f *Fixture) error {
	ids := f.LookupRowids()
	mask := len(ids) - 1
	total, i := 0, 0
	for b.Loop() {
		v, err := p.Get(ids[i&mask])
		if err != nil {
			return err
		}
		total += len(v)
		i++
	}
	if total != i*f.ValueSize {
		return fmt.Errorf("%s: lookups read %d bytes, want %d", p.Name(), total, i*f.ValueSize)
	}
	return nil
}

// Scan measures one full scan of the table in rowid order per operation,
// every value read (lengths summed), and reports ns/row besides ns/op.
func Scan(b *testing.B, p Peer, f *Fixture) error {
	// Every value is read: its length, and its first and last bytes, which
	// load the value's memory as a consumer would. Summing lengths alone
	// would let a store that keeps lengths apart from values skip them.
	sum := 0
	add := func(v []byte) {
		sum += len(v)
		if len(v) > 0 {
			sum += int(v[0]) + int(v[len(v)-1])
		}
	}
	want := f.scanSum()
	for b.Loop() {
		sum = 0
		n, err := p.Scan(add)
		if err != nil {
			return err
		}
		if n != f.Rows || sum != want {
			return fmt.Errorf("%s: scan read %d rows, sum %d; want %d rows, sum %d", p.Name(), n, sum, f.Rows, want)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(f.Rows), "ns/row")
	return nil
}

var scanSums sync.Map // FixtureOptions -> int

// scanSum is what Scan's reader adds up over the whole fixture, computed
// from the generated values, once.
func (f *Fixture) scanSum() int {
	o := f.FixtureOptions.withDefaults()
	if s, ok := scanSums.Load(o); ok {
		return s.(int)
	}
	sum := 0
	var buf []byte
	for rowid := int64(1); rowid <= int64(o.Rows); rowid++ {
		buf = o.Value(buf[:0], rowid)
		sum += len(buf)
		if len(buf) > 0 {
			sum += int(buf[0]) + int(buf[len(buf)-1])
		}
	}
	scanSums.Store(o, sum)
	return sum
}

// Verify checks that peer p returns exactly the fixture's data: a full scan
// must yield every row's value in rowid order, and Get must return the
// right value for samples rowids (some random, the first and the last).
// It also warms the peer's caches and the OS page cache before timing.
func Verify(p Peer, f *Fixture, samples int) error {
	var want []byte
	var bad error
	n := 0
	rows, err := p.Scan(func(v []byte) {
		n++
		if bad != nil {
			return
		}
		want = f.Value(want[:0], int64(n))
		if !bytes.Equal(v, want) {
			bad = fmt.Errorf("%s: scan: row %d of %d has value %x, want %x", p.Name(), n, f.Rows, v, want)
		}
	})
	if err != nil {
		return fmt.Errorf("%s: scan: %w", p.Name(), err)
	}
	if bad != nil {
		return bad
	}
	if rows != f.Rows || n != f.Rows {
		return fmt.Errorf("%s: scan returned %d rows (%d values), want %d", p.Name(), rows, n, f.Rows)
	}
	ids := f.LookupRowids()
	check := func(id int64) error {
		v, err := p.Get(id)
		if err != nil {
			return fmt.Errorf("%s: get %d: %w", p.Name(), id, err)
		}
		if want = f.Value(want[:0], id); !bytes.Equal(v, want) {
			return fmt.Errorf("%s: get %d: value %x, want %x", p.Name(), id, v, want)
		}
		return nil
	}
	if err := check(1); err != nil {
		return err
	}
	if err := check(int64(f.Rows)); err != nil {
		return err
	}
	for i := 0; i < samples && i < len(ids); i++ {
		if err := check(ids[i]); err != nil {
			return err
		}
	}
	return nil
}
