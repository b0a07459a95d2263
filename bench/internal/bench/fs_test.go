package bench

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// writeTinyTree writes a small tree with nested directories, an empty
// directory, an empty file and files that compress, and returns its root
// and its regular files.
func writeTinyTree(t testing.TB) (string, []string) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"a.txt":             "hello, world\n",
		"b/c.txt":           strings.Repeat("compressible text ", 200),
		"b/d/e.bin":         "\x00\x01\x02\xff",
		"b/d/f/g.go":        "package g\n",
		"b-c/x":             "a sibling whose name sorts between b and b/",
		"b.c":               "another one",
		"empty":             "",
		"z/deep/er/est.txt": strings.Repeat("z", 5000),
	}
	var names []string
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if err := os.Mkdir(filepath.Join(root, "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return root, names
}

// TestSQLFS checks the SQL peers' io/fs with testing/fstest, on archives
// of a tiny tree built with SQL (raw and compressed), and against
// os.DirFS.
func TestSQLFS(t *testing.T) {
	root, names := writeTinyTree(t)
	for _, compress := range []bool{false, true} {
		name := "raw"
		if compress {
			name = "zlib"
		}
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "a.db")
			if err := buildArchiveSQL(root, file, moderncDriver, compress); err != nil {
				t.Fatal(err)
			}
			f, err := openSQLFS("modernc", moderncDriver, file, SQLitePragmas)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := f.Close(); err != nil {
					t.Error(err)
				}
			}()
			if err := fstest.TestFS(f, append(names, "emptydir")...); err != nil {
				t.Fatal(err)
			}
			tree, err := ScanTree(root)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyFS(&FSPeer{name: "modernc", fsys: f}, tree); err != nil {
				t.Fatal(err)
			}
			for _, dir := range []string{".", "b", "b/d", "emptydir", "z/deep"} {
				want, err := fs.ReadDir(os.DirFS(root), dir)
				if err != nil {
					t.Fatal(err)
				}
				got, err := f.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := entryNames(got), entryNames(want); !slices.Equal(g, w) {
					t.Errorf("ReadDir(%q) = %v, want %v", dir, g, w)
				}
			}
			for _, bad := range []string{"nope", "a.txt/x", "b/nope", "/a.txt", "b/"} {
				if _, err := f.ReadDir(bad); err == nil {
					t.Errorf("ReadDir(%q): no error", bad)
				}
				if _, err := f.ReadFile(bad); err == nil {
					t.Errorf("ReadFile(%q): no error", bad)
				}
			}
			if _, err := f.ReadDir("a.txt"); err == nil {
				t.Error("ReadDir of a file: no error")
			}
			if _, err := f.ReadFile("b"); err == nil {
				t.Error("ReadFile of a directory: no error")
			}
			if _, err := f.Stat("nope"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Stat of a missing file: %v, want fs.ErrNotExist", err)
			}
			data, err := f.readBlob("b/d/e.bin")
			if !compress && (err != nil || string(data) != "\x00\x01\x02\xff") {
				t.Errorf("readBlob: %q, %v", data, err)
			}
		})
	}
}

func entryNames(entries []fs.DirEntry) []string {
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		out = append(out, n)
	}
	return out
}

// smallFSTree are fs sizes that make each tree in a fraction of a second.
var smallFSTree = FSOptions{Files: 300, Blobs: 50, BlobSize: 1000}

// TestGenTree checks the generated tree's shape, that it is reproducible
// and cached, and the blob tree's.
func TestGenTree(t *testing.T) {
	dir := t.TempDir()
	g, err := GenTree(dir, smallFSTree)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Built || g.Files != 300 || g.Dirs != 30 || g.Others != 0 || g.Entries() != 331 {
		t.Errorf("tree %+v: want 300 files in 30 directories, just built", g.FSTreeInfo)
	}
	depth := 0
	for _, e := range g.entries {
		depth = max(depth, strings.Count(strings.TrimSuffix(e, "/"), "/")+1)
	}
	if depth != 4 {
		t.Errorf("deepest entry %d names deep, want 4", depth)
	}
	if avg := g.Bytes / int64(g.Files); avg < 6<<10 || avg > 11<<10 {
		t.Errorf("average file size %d, want about 8 KiB", avg)
	}
	again, err := GenTree(dir, smallFSTree)
	if err != nil {
		t.Fatal(err)
	}
	if again.Built || again.sum != g.sum || !slices.Equal(again.entries, g.entries) {
		t.Error("second GenTree: want the same tree, cached")
	}
	other, err := GenTree(t.TempDir(), smallFSTree)
	if err != nil {
		t.Fatal(err)
	}
	if other.sum != g.sum || !slices.Equal(other.entries, g.entries) {
		t.Error("GenTree in another directory: want the same tree")
	}
	b, err := BlobTree(dir, smallFSTree)
	if err != nil {
		t.Fatal(err)
	}
	if b.Files != 50 || b.Bytes != 50_000 || len(b.order) != 50 || b.files[0] != "000000" {
		t.Errorf("blob tree %+v, files %v: want 50 blobs of 1,000 bytes", b.FSTreeInfo, b.files[:3])
	}
}

// TestFSRun runs the fs workloads through Run on small trees, with every
// SQL peer and os, on archives built with SQL, and checks the report.
// pagoda's own archive and peer are TestFSPagoda's.
func TestFSRun(t *testing.T) {
	fsArchiveBuilder = func(tree *FSTree, file string) (*Archive, error) {
		if err := buildArchiveSQL(tree.Dir, file, moderncDriver, false); err != nil {
			return nil, err
		}
		size, err := filesSize(file, file+"-wal")
		return &Archive{Path: file, Size: size, ImportTime: time.Millisecond}, err
	}
	defer func() { fsArchiveBuilder = BuildArchive }()
	peers := slices.DeleteFunc(slices.Clone(FSPeerNames), func(p string) bool { return p == "pagoda" || p == pagodaTxPeer })
	o := smallFSTree
	o.SrcDir = "." // this package's source: a real tree
	dir := t.TempDir()
	rep, err := Run(Config{Dir: dir, Peers: peers, Workloads: []string{"fs"}, FS: o, Benchtime: 2 * time.Millisecond, Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.FS), len(FSWorkloads)*len(peers); got != want {
		t.Fatalf("%d fs results, want %d", got, want)
	}
	for _, r := range rep.FS {
		if r.Peer == walkDirPeer && !strings.HasPrefix(r.Workload, "fs-walk") {
			if !r.Skipped {
				t.Errorf("walkdir measured %s: it walks only", r.Workload)
			}
			continue
		}
		if r.Skipped || r.N == 0 || r.NsPerOp <= 0 || r.MinNs > r.NsPerOp || r.MaxNs < r.NsPerOp ||
			(r.Workload != "fs-blob") != (r.NsPerItem > 0) || strings.HasPrefix(r.Workload, "fs-walk") != (r.MBPerSec == 0) {
			t.Errorf("result %+v", r)
		}
	}
	if len(rep.FSTrees) != 3 || rep.Fixture != nil || len(rep.Writes) > 0 {
		t.Errorf("%d trees, fixture %v, %d writes: want 3 trees and nothing else", len(rep.FSTrees), rep.Fixture, len(rep.Writes))
	}
	var out strings.Builder
	if err := rep.Print(&out); err != nil {
		t.Fatal(err)
	}
	for _, w := range FSWorkloads {
		for _, p := range peers {
			if !fsHasRow(out.String(), w.Name, p) {
				t.Errorf("report lacks %s/%s:\n%s", w.Name, p, out.String())
			}
		}
	}
	for _, want := range []string{"archive/du", "SELECT data FROM sqlar", "every peer is checked"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("\n%s", out.String())
	if entries, _ := os.ReadDir(dir); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), runPrefix) }) {
		t.Errorf("the run left its archives behind in %s: %v", dir, entries)
	}

	// A missing real tree skips its workloads; a group name selects.
	o.SrcDir = filepath.Join(dir, "nope")
	rep, err = Run(Config{Dir: dir, Peers: []string{osPeer}, Workloads: []string{"fs-walk"}, FS: o, Benchtime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.FS) != 2 || rep.FS[0].Skipped || !rep.FS[1].Skipped || rep.FS[1].Workload != "fs-walk/gosrc" {
		t.Errorf("results %+v: want fs-walk/gen measured and fs-walk/gosrc skipped", rep.FS)
	}
	out.Reset()
	if err := rep.Print(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "skipped: ") {
		t.Errorf("report does not say why gosrc was skipped:\n%s", out.String())
	}
}

// TestFSTargets checks the fs targets on made-up results.
func TestFSTargets(t *testing.T) {
	res := func(w, peer string, ns float64, allocs int64) FSResult {
		return FSResult{Workload: w, Peer: peer, NsPerOp: ns, AllocsPerOp: allocs}
	}
	r := &Report{
		FSTrees: []FSTreeResult{{FSTreeInfo: FSTreeInfo{Name: TreeGen, Files: 10_000}}},
		FS: []FSResult{
			res("fs-walk/gen", "pagoda", 1, 10), res("fs-walk/gen", "mattn", 30, 1), res("fs-walk/gen", "modernc", 19, 1),
			res("fs-walk/gen", "os", 6, 11), res("fs-walk/gen", walkDirPeer, 0.5, 9),
			res("fs-read/gen", "pagoda", 1, 1), res("fs-read/gen", "os", 1.5, 1),
			res("fs-blob", "pagoda", 1, 1), res("fs-blob", "os", 3, 1),
			res("fs-walk/gosrc", "pagoda", 1, 1), res("fs-walk/gosrc", "os", 2, 1),
			{Workload: "fs-read/gosrc", Peer: "pagoda", Skipped: true},
		},
	}
	got := strings.Join(r.fsTargets(), "\n")
	wantTargets(t, got,
		"fs-walk/gen vs os: 6.00x (1 round) faster, want >= 5x: met",
		"fs-walk/gen allocs/op: pagoda 10, os 11, want fewer: met",
		"fs-walk/gen vs the fastest SQLite-backed FS (modernc): 19.00x (1 round) faster, want >= 20x: NOT met (fs.WalkDir's own work, walkdir, is 38.0x faster)",
		"fs-read/gen vs os: 1.50x (1 round) faster, want >= 2x: NOT met",
		"fs-blob vs os: 3.00x (1 round) faster, want >= 3x: met",
		"fs-walk/gosrc: pagoda faster than os 2.0x (shown beside, no target)",
	)
	if strings.Contains(got, "fs-read/gosrc") || strings.Contains(got, "the issue's figure") {
		t.Errorf("targets:\n%s", got)
	}
	r.FSTrees[0].Files = 300
	if got := strings.Join(r.fsTargets(), "\n"); !strings.Contains(got, "the issue's figure is for 10,000 files, this tree has 300") {
		t.Errorf("targets on a small tree do not say so:\n%s", got)
	}
}

// TestFSPagoda checks pagoda's peer: BuildArchive imports a small tree
// with fsys, and the archive passes VerifyFS with pagoda and the SQL
// peers, and so does the archive sqlite3 -Ac . makes (pagoda-sqlite3)
// when the sqlite3 command is there. It is skipped while fsys is not
// implemented.
func TestFSPagoda(t *testing.T) {
	tree, err := GenTree(t.TempDir(), FSOptions{Files: 100})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "a.db")
	a, err := BuildArchive(tree, file)
	if err != nil {
		if strings.Contains(err.Error(), "not implemented") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	if a.Size <= tree.Bytes || a.ImportTime <= 0 {
		t.Errorf("archive %+v of %d bytes of files", a, tree.Bytes)
	}
	if slices.Contains(FSPeerNames, sqlite3Peer) { // the sqlite3 command is there
		if _, err := BuildSQLite3Archive(tree, sqlite3Archive(file)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range FSPeerNames {
		p, err := OpenFSPeer(name, tree, file, PeerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyFS(p, tree); err != nil {
			t.Error(err)
		}
		if name == "pagoda" {
			if err := fstest.TestFS(p.FS(), tree.files[:3]...); err != nil {
				t.Error(err)
			}
		}
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}
}

// wantTargets reports each of wants that the targets got lack.
func wantTargets(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(got, want) {
			t.Errorf("targets lack %q:\n%s", want, got)
		}
	}
}

func fsHasRow(out, first, second string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[0] == first && f[1] == second {
			return true
		}
	}
	return false
}

var (
	benchFSFiles = flag.Int("bench.fsfiles", 10_000, "files in the generated tree of BenchmarkFSWalk and BenchmarkFSRead")
	benchFSTree  = flag.String("bench.fstree", TreeGen, "tree of BenchmarkFSWalk and BenchmarkFSRead: gen, or gosrc for $(go env GOROOT)/src")
	benchFSBlobs = flag.Int("bench.fsblobs", 10_000, "blobs of BenchmarkFSBlob")
)

// runFSBenchmark runs the fs workload of kind against every fs peer as
// sub-benchmarks named after the peers (BenchmarkFSWalk/pagoda, ...), on
// trees cached under the OS temporary directory and an archive built by
// pagoda's fsys.
func runFSBenchmark(b *testing.B, kind string) {
	dir := filepath.Join(os.TempDir(), "pagoda-bench")
	o := FSOptions{Files: *benchFSFiles, Blobs: *benchFSBlobs}
	var tree *FSTree
	var err error
	switch {
	case kind == fsBlob:
		tree, err = BlobTree(dir, o)
	case *benchFSTree == TreeGoSrc:
		tree, err = SrcTree("")
	default:
		tree, err = GenTree(dir, o)
	}
	if err != nil {
		b.Fatal(err)
	}
	var w FSWorkload
	for _, x := range FSWorkloads {
		if x.Kind == kind && (kind == fsBlob || x.Tree == tree.Name) {
			w = x
		}
	}
	file := filepath.Join(b.TempDir(), "archive.db")
	if _, err := BuildArchive(tree, file); err != nil {
		b.Fatal(err)
	}
	if slices.Contains(FSPeerNames, sqlite3Peer) {
		if _, err := BuildSQLite3Archive(tree, sqlite3Archive(file)); err != nil {
			b.Fatal(err)
		}
	}
	for _, peer := range FSPeerNames {
		b.Run(peer, func(b *testing.B) {
			p, err := OpenFSPeer(peer, tree, file, PeerOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			if err := VerifyFS(p, tree); err != nil { // also warms the caches
				b.Fatal(err)
			}
			b.ReportAllocs()
			if err := w.Run(b, p, tree); err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkFSWalk(b *testing.B) { runFSBenchmark(b, fsWalk) }
func BenchmarkFSRead(b *testing.B) { runFSBenchmark(b, fsRead) }
func BenchmarkFSBlob(b *testing.B) { runFSBenchmark(b, fsBlob) }

// TestListedFS: the walkdir peer walks its tree as os.DirFS does, from
// listings read beforehand, and refuses a directory it did not list.
func TestListedFS(t *testing.T) {
	tree, err := GenTree(t.TempDir(), FSOptions{Files: 60})
	if err != nil {
		t.Fatal(err)
	}
	p, err := OpenFSPeer(walkDirPeer, tree, "", PeerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := VerifyFS(p, tree); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadDir(p.FS(), "no/such/dir"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadDir of a missing directory: %v, want fs.ErrNotExist", err)
	}
	// Its walk is checked like any peer's: a file the tree does not
	// record (added after the tree was read) makes the check fail.
	if err := os.WriteFile(filepath.Join(tree.Dir, "late"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := OpenFSPeer(walkDirPeer, tree, "", PeerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyFS(q, tree); err == nil {
		t.Error("VerifyFS accepts a walk with an entry the tree does not have")
	}
}

// TestReadTargets checks the read targets on made-up results of three
// rounds, with and without memory floors: each ratio is the median of the
// rounds' ratios (pagoda's and the peer's of the same round), not the
// ratio of the medians.
func TestReadTargets(t *testing.T) {
	res := func(w, peer string, rounds ...float64) Result {
		return Result{Workload: w, Peer: peer, NsPerOp: medianFloat(rounds), RoundNs: rounds}
	}
	r := &Report{
		Fixture: &Fixture{FixtureOptions: FixtureOptions{Rows: 1000}},
		Results: []Result{
			// bbolt's median over pagoda's is 1000/300, 3.33x; the rounds'
			// ratios are 10, 4 and 1.
			res("lookup", "pagoda", 100, 300, 400), res("lookup", "mattn", 800, 2400, 3200), res("lookup", "bbolt", 1000, 1200, 400),
			res("scan", "pagoda", 10_000, 10_000, 10_000), res("scan", "mattn", 250_000, 250_000, 250_000), res("scan", "bbolt", 20_000, 20_000, 20_000),
		},
		LookupFloorNs: 160, ScanFloorNs: 4,
	}
	got := strings.Join(r.targets(), "\n")
	wantTargets(t, got,
		"lookup vs mattn: 8.00x (median of 3 rounds, 8.00-8.00) faster, want >= 10x: NOT met (10x needs 240 ns; the memory floor is 160)",
		"lookup vs bbolt: 4.00x (median of 3 rounds, 1.00-10.00) faster, want > 1x: met",
		"scan vs fastest peer (bbolt): 2.00x (median of 3 rounds, 2.00-2.00) faster, want >= 1.8x: met (the memory floor allows 5.0x)",
	)
	r.LookupFloorNs, r.ScanFloorNs = 0, 0
	if got := strings.Join(r.targets(), "\n"); strings.Contains(got, "floor") {
		t.Errorf("targets without floors mention one:\n%s", got)
	}
}

// TestIssue31Targets checks issue #31's targets on made-up results of
// three rounds: ratios paired round by round, the lookup target's want by
// the rows, the bucket API against pagoda's own table API, the writes
// against the disk floor of each round.
func TestIssue31Targets(t *testing.T) {
	res := func(w, peer string, rounds ...float64) Result {
		return Result{Workload: w, Peer: peer, NsPerOp: medianFloat(rounds), RoundNs: rounds, RoundAllocs: []float64{0, 0, 0}}
	}
	wr := func(w, peer string, floor []float64, rounds ...float64) WriteResult {
		return WriteResult{Workload: w, Peer: peer, NsPerOp: medianFloat(rounds), RoundNs: rounds, FloorNs: medianFloat(floor), RoundFloorNs: floor}
	}
	r := &Report{
		Fixture: &Fixture{FixtureOptions: FixtureOptions{Rows: 1_000_000}},
		Results: []Result{
			res("lookup", "pagoda", 100, 100, 100), res("lookup", "bbolt", 400, 600, 500),
			res("lookup-tx", "pagoda", 1000, 1000, 1000), res("lookup-tx", "bbolt", 2500, 1500, 2000),
			res("lookup-bucket", "pagoda", 110, 130, 200),
			res("scan-bucket", "pagoda", 10, 10, 10), res("scan-bucket", "bbolt", 14, 15, 16),
		},
		Writes: []WriteResult{
			wr("delete-bucket", "pagoda", []float64{100, 200, 100}, 120, 300, 200), wr("delete-bucket", "bbolt", nil, 400, 900, 600),
		},
	}
	got := strings.Join(r.issue31Targets(), "\n")
	wantTargets(t, got,
		"issue #31: lookup-tx vs bbolt: 2.00x (median of 3 rounds, 1.50-2.50) faster, want >= 2x: met",
		"issue #31: lookup-tx allocs/op: 0, want 0: met",
		"issue #31: lookup vs bbolt at 1,000,000 rows: 5.00x (median of 3 rounds, 4.00-6.00) faster, want >= 5x: met",
		"issue #31: lookup-bucket vs lookup (pagoda's bucket API vs its table API): 1.30x (median of 3 rounds, 1.10-2.00) the table's time, want <= 1.2x: NOT met",
		"issue #31: scan-bucket vs bbolt: 1.50x (median of 3 rounds, 1.40-1.60) faster, want >= 1.5x: met",
		"issue #31: delete-bucket: pagoda 1.50x (median of 3 rounds, 1.20-2.00) its disk floor's time, want <= 1.5x: met",
		"issue #31: delete-bucket vs bbolt: 3.00x (median of 3 rounds, 3.00-3.33) faster, want >= 3x: met",
	)
	if strings.Contains(got, "mattn") || strings.Contains(got, "lookup-tx-bucket") {
		t.Errorf("targets name peers or workloads that were not measured:\n%s", got)
	}
	r.Fixture.Rows = 10_000_000
	if got := strings.Join(r.issue31Targets(), "\n"); !strings.Contains(got, "lookup vs bbolt at 10,000,000 rows: 5.00x (median of 3 rounds, 4.00-6.00) faster, want >= 3x: met") {
		t.Errorf("at 10,000,000 rows the lookup target is not 3x:\n%s", got)
	}
}
