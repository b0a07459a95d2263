package bench_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/bench/internal/bench"
	bolt "go.etcd.io/bbolt"
)

var benchRows = flag.Int("bench.rows", 100_000, "rows in the fixture of BenchmarkLookup and BenchmarkScan")

// benchFixture returns the benchmark fixture, cached across runs under the
// OS temporary directory (building 100,000 rows takes a few seconds).
func benchFixture(b *testing.B) *bench.Fixture {
	b.Helper()
	f, err := bench.LoadFixture(filepath.Join(os.TempDir(), "pagoda-bench"), bench.FixtureOptions{Rows: *benchRows})
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// runWorkload runs workload w against every peer as sub-benchmarks named
// after the peers: BenchmarkLookup/pagoda, BenchmarkLookup/mattn, ...
func runWorkload(b *testing.B, name string) {
	w, err := bench.WorkloadByName(name)
	if err != nil {
		b.Fatal(err)
	}
	f := benchFixture(b)
	for _, peer := range bench.PeersOf(name, bench.PeerNames) {
		b.Run(peer, func(b *testing.B) {
			p, err := bench.NewWorkloadPeer(w, peer, bench.PeerOptions{})
			if bench.Skipped(err) {
				b.Skip(err)
			}
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Open(f); err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			if err := bench.Verify(p, f, 100); err != nil { // also warms the caches
				b.Fatal(err)
			}
			b.ReportAllocs()
			if err := w.Run(b, p, f); err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkLookup(b *testing.B)           { runWorkload(b, "lookup") }
func BenchmarkLookupBucket(b *testing.B)     { runWorkload(b, "lookup-bucket") }
func BenchmarkScan(b *testing.B)             { runWorkload(b, "scan") }
func BenchmarkScanCursor(b *testing.B)       { runWorkload(b, "scan-cursor") }
func BenchmarkScanBucket(b *testing.B)       { runWorkload(b, "scan-bucket") }
func BenchmarkScanCursorBucket(b *testing.B) { runWorkload(b, "scan-cursor-bucket") }

// smallFixture builds a fresh fixture of 2,000 rows in a test directory.
func smallFixture(t *testing.T) *bench.Fixture {
	t.Helper()
	f, err := bench.LoadFixture(t.TempDir(), bench.FixtureOptions{Rows: 2000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Built {
		t.Fatal("a fixture in a new directory was not built")
	}
	return f
}

// TestPeersAgree checks that every peer, holding one read transaction
// (NewPeer) or reading in a transaction per call (NewTxPeer), returns the
// fixture's exact bytes for every rowid, fails on missing rowids, and
// scans the same rows in the same order, so that a broken peer cannot
// produce a pretty number; pagoda runs in the shared mode and
// pagoda-exclusive in the exclusive one.
func TestPeersAgree(t *testing.T) {
	f := smallFixture(t)
	var want []byte
	wantHash := fnv.New64a()
	for id := int64(1); id <= int64(f.Rows); id++ {
		want = f.Value(want[:0], id)
		wantHash.Write(want)
	}
	names := append(slices.Clip(bench.PeerNames), "pagoda-exclusive")
	if slices.Contains(names, "mattn") {
		names = append(names, "mattn-autocommit")
	}
	for _, name := range names {
		for _, tx := range []bool{false, true} {
			sub := name
			if tx {
				sub += "/tx"
			}
			t.Run(sub, func(t *testing.T) { testPeerAgrees(t, f, name, tx, want, wantHash.Sum64()) })
		}
	}
}

// testPeerAgrees is TestPeersAgree for one peer.
func testPeerAgrees(t *testing.T, f *bench.Fixture, name string, tx bool, want []byte, wantHash uint64) {
	p, err := bench.NewPeer(name)
	if tx {
		p, err = bench.NewTxPeer(name, bench.PeerOptions{})
	}
	if bench.Skipped(err) {
		t.Skipf("%s: %v", name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Open(f); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := bench.Verify(p, f, 1000); err != nil {
		t.Fatal(err)
	}
	if m, ok := p.(interface{ Mode() string }); ok {
		wantMode := map[string]string{"pagoda": "shared", "pagoda-exclusive": "exclusive"}[name]
		if runtime.GOOS != "linux" {
			wantMode = "exclusive"
		}
		if m.Mode() != wantMode {
			t.Errorf("%s: mode %q, want %q", name, m.Mode(), wantMode)
		}
	} else if name == "pagoda" || name == "pagoda-exclusive" {
		t.Errorf("%s says no mode", name)
	}
	for id := int64(1); id <= int64(f.Rows); id++ {
		v, err := p.Get(id)
		if err != nil {
			t.Fatalf("get %d: %v", id, err)
		}
		if want = f.Value(want[:0], id); !bytes.Equal(v, want) {
			t.Fatalf("get %d: %x, want %x", id, v, want)
		}
	}
	for _, id := range []int64{0, -1, int64(f.Rows) + 1} {
		if v, err := p.Get(id); err == nil {
			t.Errorf("get %d (missing): %x, want an error", id, v)
		}
	}
	h := fnv.New64a()
	total := 0
	n, err := p.Scan(func(v []byte) {
		h.Write(v)
		total += len(v)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != f.Rows || total != f.Rows*f.ValueSize || h.Sum64() != wantHash {
		t.Fatalf("scan: %d rows, %d bytes, hash %x; want %d rows, %d bytes, hash %x",
			n, total, h.Sum64(), f.Rows, f.Rows*f.ValueSize, wantHash)
	}
}

// TestFixture checks the files: the SQLite file is in WAL mode with nothing
// left in a -wal file, and a second load reuses the cached files.
func TestFixture(t *testing.T) {
	dir := t.TempDir()
	opt := bench.FixtureOptions{Rows: 500}
	f, err := bench.LoadFixture(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	hdr := make([]byte, 100)
	file, err := os.Open(f.SQLitePath)
	if err != nil {
		t.Fatal(err)
	}
	_, err = file.ReadAt(hdr, 0)
	file.Close()
	if err != nil {
		t.Fatal(err)
	}
	if string(hdr[:16]) != "SQLite format 3\x00" || hdr[18] != 2 || hdr[19] != 2 {
		t.Errorf("header %q, read/write versions %d/%d: want a SQLite file in WAL mode (2/2)", hdr[:16], hdr[18], hdr[19])
	}
	if st, err := os.Stat(f.SQLitePath + "-wal"); err == nil && st.Size() > 0 {
		t.Errorf("fixture left a %d-byte -wal file", st.Size())
	}
	g, err := bench.LoadFixture(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if g.Built || g.SQLitePath != f.SQLitePath {
		t.Errorf("second load: built=%v path %s, want the cached %s", g.Built, g.SQLitePath, f.SQLitePath)
	}
	// Values depend on the seed.
	a := bench.FixtureOptions{Seed: 1}.Value(nil, 5)
	b := bench.FixtureOptions{Seed: 2}.Value(nil, 5)
	if len(a) != 100 || bytes.Equal(a, b) {
		t.Errorf("values: %x (seed 1), %x (seed 2): want 100 bytes differing by seed", a, b)
	}
}

// smallFS are fs sizes that take well under a second per peer: small
// generated trees, and this package's source as the real tree.
var smallFS = bench.FSOptions{Files: 200, Blobs: 20, BlobSize: 1000, SrcDir: "."}

// smallBeside is a beside workload of a tenth of a second a round.
var smallBeside = bench.BesideOptions{Rows: 2000, Time: 100 * time.Millisecond, Slice: 5 * time.Millisecond}

// smallRaft are raft sizes that take well under a second per store.
var smallRaft = bench.RaftOptions{Store1: 10, Truncate: 3000, Applies: 10}

// smallWrites are write sizes that take well under a second per peer.
var smallWrites = bench.WriteOptions{LoadRows: 3000, InsertRows: 2000, TxRows: 500, Commits: 5, CacheKeys: []int{300}, MemoryRows: 2000, MemoryRandRows: 2500}

// TestRun runs the whole harness on small sizes with a tiny benchtime and
// checks the report: 2 rounds, and 3 of what the shared mode's targets
// compare.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	rep, err := bench.Run(bench.Config{
		Dir:         dir,
		Fixture:     bench.FixtureOptions{Rows: 2000},
		Benchtime:   5 * time.Millisecond,
		Count:       2,
		TargetCount: 3,
		Writes:      smallWrites,
		FS:          smallFS,
		Beside:      smallBeside,
		Raft:        smallRaft,
	})
	if err != nil {
		t.Fatal(err)
	}
	// pagoda-exclusive joins the default peers in lookup-tx, commit and
	// commit-8.
	// The workloads of pagoda's bucket API and cursors run pagoda and
	// bbolt only.
	wantReads := 1
	for _, w := range bench.Workloads {
		wantReads += len(bench.PeersOf(w.Name, bench.PeerNames))
	}
	if got := len(rep.Results); got != wantReads {
		t.Fatalf("%d read results, want %d", got, wantReads)
	}
	for _, r := range rep.Results {
		bucket := strings.HasSuffix(r.Workload, "-bucket")
		if (bucket || r.Workload == "scan-cursor") && r.Peer != "pagoda" && r.Peer != "bbolt" {
			t.Errorf("result %s/%s: want only pagoda and bbolt in the bucket and cursor workloads", r.Workload, r.Peer)
		}
		if r.Peer == "pagoda" && bucket != (r.FileSize == rep.BucketSize) {
			t.Errorf("result %s/%s: file size %d, bucket file %d: want the bucket file's size exactly in the bucket workloads", r.Workload, r.Peer, r.FileSize, rep.BucketSize)
		}
	}
	for _, r := range rep.Results {
		if r.Skipped != (r.Peer == "pebble") {
			t.Errorf("result %+v: want only pebble's read results skipped", r)
			continue
		}
		if !r.Skipped && len(r.RoundNs) != wantRounds(r.Workload, r.Peer) {
			t.Errorf("result %+v: %d rounds, want %d", r, len(r.RoundNs), wantRounds(r.Workload, r.Peer))
		}
		if !r.Skipped && (r.N == 0 || r.NsPerOp <= 0 || r.FileSize <= 0 || r.MinNs > r.NsPerOp || r.MaxNs < r.NsPerOp) {
			t.Errorf("result %+v: want operations, time within the spread and a file size", r)
		}
	}
	if runtime.GOOS != "windows" && runtime.GOOS != "plan9" && (rep.LookupFloorNs <= 0 || rep.ScanFloorNs <= 0) {
		t.Errorf("memory floors %v ns/lookup, %v ns/row: want both measured", rep.LookupFloorNs, rep.ScanFloorNs)
	}
	wantWrites := 2
	for _, w := range bench.WriteWorkloads {
		wantWrites += len(bench.PeersOf(w.Name, bench.PeerNames))
	}
	if got := len(rep.Writes); got != wantWrites {
		t.Fatalf("%d write results, want %d", got, wantWrites)
	}
	wantOps := map[string]int{"load-seq": 3000, "load-rand": 3000, "insert": 2000, "delete": 200, "insert-bucket": 2000, "delete-bucket": 200, "commit": 5, "commit-8": 5}
	for _, r := range rep.Writes {
		if r.Skipped || r.Stopped || r.Ops != wantOps[r.Workload] || r.NsPerOp <= 0 || r.FileSize <= 0 || r.Total <= 0 ||
			r.MinNs > r.NsPerOp || r.MaxNs < r.NsPerOp || len(r.RoundNs) != wantRounds(r.Workload, r.Peer) {
			t.Errorf("write result %+v: want %d operations in %d rounds, time within the spread and a file size", r, wantOps[r.Workload], wantRounds(r.Workload, r.Peer))
		}
		// The interleaved ratios of commit: pagoda's against the disk
		// floor, the others' against pagoda's, one a round.
		if r.Workload == "commit" {
			ratios := r.PagodaRatios
			if r.Peer == "pagoda" {
				ratios = r.FloorRatios
			}
			if len(ratios) != wantRounds(r.Workload, r.Peer) || slices.ContainsFunc(ratios, func(x float64) bool { return x <= 0 }) {
				t.Errorf("commit of %s: interleaved ratios %v, want one a round", r.Peer, ratios)
			}
		}
	}
	if len(rep.LookupTxRatios) != 3 || slices.ContainsFunc(rep.LookupTxRatios, func(x float64) bool { return x <= 0 }) {
		t.Errorf("lookup-tx interleaved ratios %v, want one a round", rep.LookupTxRatios)
	}
	if got, want := len(rep.Beside), 3; got != want {
		t.Fatalf("%d beside results, want %d (none, pagoda, a SQLite writer): %+v", got, want, rep.Beside)
	}
	for i, r := range rep.Beside {
		writer := r.Writer != "none"
		if r.Writer != []string{"none", "pagoda", rep.Beside[2].Writer}[i] || r.Rounds != 3 || r.Reads <= 0 || r.ReadsPerSec <= 0 ||
			r.MinReads > r.ReadsPerSec || r.MaxReads < r.ReadsPerSec || writer != (r.CommitsPerSec > 0) ||
			(r.Writer == "pagoda") != (r.Mode != "") || (i == 2) != (len(r.Ratios) == 3) {
			t.Errorf("beside result %d: %+v", i, r)
		}
	}
	// The raft workloads: every store of each, 2 rounds, the ops asked
	// for, a file size after the writes.
	wantRaft := 0
	for _, w := range bench.RaftWorkloads {
		wantRaft += len(bench.RaftPeersOf(w.Name))
	}
	if len(rep.Raft) != wantRaft {
		t.Fatalf("%d raft results, want %d", len(rep.Raft), wantRaft)
	}
	raftOps := map[string]int{"raft-store-1": 10, "raft-store-64": 4 * 64, "raft-getlog": 3000, "raft-truncate": 3000, "raft-apply": 10, "raft-apply-64": 80}
	for _, r := range rep.Raft {
		if r.Ops != raftOps[r.Workload] || r.NsPerOp <= 0 || len(r.RoundNs) != 2 || ((strings.HasPrefix(r.Workload, "raft-store-") || r.Workload == "raft-truncate") != (r.FileSize > 0)) {
			t.Errorf("raft result %+v: want %d ops in 2 rounds, and a file size for raft-store-* and raft-truncate only", r, raftOps[r.Workload])
		}
	}
	if got, want := len(rep.Cache), len(bench.PeerNames); got != want {
		t.Fatalf("%d cache results, want %d", got, want)
	}
	if got, want := len(rep.Memory), len(bench.PeerNames); got != want {
		t.Fatalf("%d memory results, want %d", got, want)
	}
	for _, r := range rep.Memory {
		if r.Skipped || r.Rows != 2000 || r.NsPerRow <= 0 || r.FileSize <= 0 || r.PeakAnon != 0 || r.MaxRSS != 0 {
			t.Errorf("memory result %+v: want a time, a file size and no memory (no child process)", r)
		}
	}
	if got, want := len(rep.MemoryRand), len(bench.PeerNames); got != want {
		t.Fatalf("%d memory-rand results, want %d", got, want)
	}
	for _, r := range rep.MemoryRand {
		if r.Skipped || r.Stopped || r.Rows != 2500 || r.NsPerRow <= 0 || r.FileSize <= 0 || r.PeakAnon != 0 || r.MaxRSS != 0 || len(r.Rounds) != 2 {
			t.Errorf("memory-rand result %+v: want 2 rounds, a time, a file size and no memory (no child process)", r)
		}
	}
	for _, r := range rep.Cache {
		if r.Skipped || r.Keys != 300 || r.InsertNs <= 0 || r.ReadNs <= 0 || r.DeleteNs <= 0 || r.FileSize <= 0 || r.MaxRSS != 0 {
			t.Errorf("cache result %+v: want times, a file size and no memory (no child process)", r)
		}
	}
	var out strings.Builder
	if err := rep.Print(&out); err != nil {
		t.Fatal(err)
	}
	for _, name := range bench.WorkloadNames() {
		if name == bench.CacheWorkload || name == bench.MemoryWorkload || name == bench.MemoryRandWorkload || name == bench.BesideWorkload || name == bench.RaftWorkload {
			continue
		}
		peers := bench.PeersOf(name, bench.PeerNames)
		if strings.HasPrefix(name, "fs-") {
			peers = bench.FSPeerNames
		}
		for _, peer := range peers {
			if !hasRow(out.String(), name, peer) {
				t.Errorf("report lacks %s/%s:\n%s", name, peer, out.String())
			}
		}
	}
	for _, peer := range bench.PeerNames {
		if !hasRow(out.String(), "2,000", peer) {
			t.Errorf("report lacks the memory row of %s:\n%s", peer, out.String())
		}
		if !hasRow(out.String(), "2,500", peer) {
			t.Errorf("report lacks the memory-rand row of %s:\n%s", peer, out.String())
		}
		if !hasRow(out.String(), "300", peer) {
			t.Errorf("report lacks the cache row of %s:\n%s", peer, out.String())
		}
	}
	if got, want := len(rep.FS), len(bench.FSPeerNames)*len(bench.FSWorkloads); got != want {
		t.Errorf("%d fs results, want %d", got, want)
	}
	for _, w := range bench.RaftWorkloads {
		for _, peer := range bench.RaftPeersOf(w.Name) {
			if !hasRow(out.String(), w.Name, peer) {
				t.Errorf("report lacks %s/%s:\n%s", w.Name, peer, out.String())
			}
		}
	}
	if !hasRow(out.String(), "lookup", "pebble") {
		t.Errorf("report lacks pebble's skipped lookup row:\n%s", out.String())
	}
	for _, want := range []string{"skipped", "targets:", "load-seq vs bbolt", "commit vs mattn", "load-seq file: pagoda",
		"fs-walk/gen vs os", "fs-blob vs os", "archive/du",
		"lookup-tx shared vs exclusive, interleaved 256 lookups at a time: ", "commit shared vs exclusive, interleaved commit by commit: ", "commit (shared) vs a bare fdatasync",
		"commit-8 vs commit (pagoda, shared, Batch): ", "beside: a SQLite reader's reads/s beside pagoda over beside ", "(median of 3 rounds, "} {
		if want == "commit vs mattn" && !slices.Contains(bench.PeerNames, "mattn") {
			continue
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("\n%s", out.String())
	if entries, err := os.ReadDir(dir); err != nil || slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), "run-") }) {
		t.Errorf("the run left its stores behind in %s (%v): %v", dir, err, entries)
	}

	_, err = bench.Run(bench.Config{Dir: dir, Fixture: bench.FixtureOptions{Rows: 2000}, Peers: []string{"nope"}})
	if err == nil || !strings.Contains(err.Error(), "unknown peer") {
		t.Errorf("unknown peer: err %v", err)
	}
	_, err = bench.Run(bench.Config{Dir: dir, Fixture: bench.FixtureOptions{Rows: 2000}, Workloads: []string{"nope"}})
	if err == nil || !strings.Contains(err.Error(), "unknown workload") {
		t.Errorf("unknown workload: err %v", err)
	}
	if _, err := bench.LoadFixture(dir, bench.FixtureOptions{}); err == nil {
		t.Error("a fixture of zero rows: no error")
	} else if errors.Is(err, os.ErrNotExist) {
		t.Errorf("a fixture of zero rows: %v", err)
	}
}

// wantRounds is the rounds of TestRun's (workload, peer): 3 for pagoda's
// in the workloads that compare the modes, 2 for the others.
func wantRounds(workload, peer string) int {
	if (peer == "pagoda" || peer == "pagoda-exclusive") && slices.Contains(bench.ModePeerWorkloads, workload) {
		return 3
	}
	return 2
}

// hasRow reports whether a table of out has a row starting with the cells
// first and second.
func hasRow(out, first, second string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[0] == first && f[1] == second {
			return true
		}
	}
	return false
}

// TestMemoryFloors measures the floors over a small file: both positive,
// and nothing on a file shorter than a page.
func TestMemoryFloors(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("the memory floors map files with mmap(2)")
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, bytes.Repeat([]byte{1, 2, 3, 4}, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	lookup, scan, err := bench.MemoryFloors(path, 1000, 5*time.Millisecond)
	if err != nil || lookup <= 0 || scan <= 0 {
		t.Fatalf("MemoryFloors = %v ns, %v ns/row, %v; want two positive times", lookup, scan, err)
	}
	if err := os.WriteFile(path, []byte("short"), 0o644); err != nil {
		t.Fatal(err)
	}
	if lookup, scan, err := bench.MemoryFloors(path, 1000, time.Millisecond); err != nil || lookup != 0 || scan != 0 {
		t.Fatalf("MemoryFloors of a 5-byte file = %v, %v, %v; want zeros", lookup, scan, err)
	}
}

// BenchmarkShortTx measures the bbolt idiom for one lookup: a read
// transaction of its own (View), the table or bucket taken in it, one
// random row read, as a request handler would, for pagoda (Table.Get and
// Column) and bbolt (Bucket.Get) on the same rows. Run with -benchmem:
// the transaction's allocations are most of its cost.
func BenchmarkShortTx(b *testing.B) {
	f := benchFixture(b)
	ids := f.LookupRowids()
	b.Run("pagoda", func(b *testing.B) {
		db, err := pagoda.Open(f.SQLitePath, &pagoda.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		b.ReportAllocs()
		n := 0
		for i := 0; b.Loop(); i++ {
			err := db.View(func(tx *pagoda.Tx) error {
				t, err := tx.Table("t")
				if err != nil {
					return err
				}
				rec, err := t.Get(ids[i&(len(ids)-1)])
				if err != nil {
					return err
				}
				n += len(rec.Column(1).Blob())
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		if n != b.N*f.ValueSize {
			b.Fatalf("read %d bytes, want %d", n, b.N*f.ValueSize)
		}
	})
	b.Run("bbolt", func(b *testing.B) {
		db, err := bolt.Open(f.BoltPath, 0o444, &bolt.Options{ReadOnly: true, Timeout: 10 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		b.ReportAllocs()
		n := 0
		var key [8]byte
		for i := 0; b.Loop(); i++ {
			err := db.View(func(tx *bolt.Tx) error {
				binary.BigEndian.PutUint64(key[:], uint64(ids[i&(len(ids)-1)]))
				n += len(tx.Bucket([]byte("t")).Get(key[:]))
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		if n != b.N*f.ValueSize {
			b.Fatalf("read %d bytes, want %d", n, b.N*f.ValueSize)
		}
	})
}
