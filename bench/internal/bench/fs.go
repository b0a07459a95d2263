package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
)

// The fs workloads measure filesystems: pagoda's fsys over a SQLite Archive
// of a tree, against os.DirFS on the tree itself and against an io/fs over
// the same archive written with database/sql (sqlFS, with mattn or
// modernc). See FSWorkloads.

// The name of the OS peer of the fs workloads, which has no [Peer] or
// [Store]: it takes part in the fs workloads only.
const osPeer = "os"

// pagodaTxPeer is pagoda's fsys In one read transaction: an fs-only peer.
const pagodaTxPeer = "pagoda-tx"

// walkDirPeer is fs.WalkDir's own cost: a peer of the fs-walk workloads
// only, whose ReadDir returns listings read beforehand (see listedFS).
const walkDirPeer = "walkdir"

// sqlite3Peer is pagoda's fsys over an archive that `sqlite3 -Ac .` made
// of the tree, as a user of sqlite3 makes one: sqlite3's layout (512-byte
// pages, zlib where it makes a file smaller, a rollback journal), no
// sqlar_listing index, names in the "./" form. An fs-only peer, there
// when the sqlite3 command is.
const sqlite3Peer = "pagoda-sqlite3"

// fsOnly reports whether name is a peer of the fs workloads only.
func fsOnly(name string) bool {
	return name == osPeer || name == pagodaTxPeer || name == walkDirPeer || name == sqlite3Peer
}

// FSPeerNames lists the peers of the fs workloads, in the order they are
// measured and reported: pagoda (fsys.New over the archive, a snapshot
// per call), pagoda-tx (the same FS In one read transaction held for the
// whole measurement: one snapshot, as a consistent walk takes), mattn (left
// out without cgo) and modernc (sqlFS over the archive), os (os.DirFS
// over the tree), and walkdir (fs-walk only: the floor no FS walked with
// fs.WalkDir can go under).
var FSPeerNames = fsPeerNames()

func fsPeerNames() []string {
	names := []string{"pagoda", pagodaTxPeer}
	if _, err := exec.LookPath("sqlite3"); err == nil {
		names = append(names, sqlite3Peer)
	}
	if cgoEnabled {
		names = append(names, "mattn")
	}
	return append(names, "modernc", osPeer, walkDirPeer)
}

// isFSPeer reports whether name is a peer of the fs workloads.
func isFSPeer(name string) bool {
	for _, n := range FSPeerNames {
		if n == name {
			return true
		}
	}
	return false
}

// Archive is a SQLite Archive of a tree, written by pagoda's fsys.
type Archive struct {
	Path       string
	Size       int64         // the database file (and its WAL, if any) after Close
	ImportTime time.Duration // Open, CopyFS and Close
}

// BuildArchive imports the tree t into a new pagoda database at file,
// uncompressed: fsys.New(db, &fsys.Options{Compress: false}).CopyFS of
// os.DirFS(t.Dir), one transaction, then Close.
func BuildArchive(t *FSTree, file string) (*Archive, error) {
	start := time.Now()
	db, err := pagoda.Open(file, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: archive of %s: %w", t.Dir, err)
	}
	err = fsys.New(db, &fsys.Options{Compress: false}).CopyFS(os.DirFS(t.Dir))
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("bench: archive of %s: CopyFS: %w", t.Dir, err)
	}
	a := &Archive{Path: file, ImportTime: time.Since(start)}
	if a.Size, err = filesSize(file, file+"-wal"); err != nil {
		return nil, fmt.Errorf("bench: archive of %s: %w", t.Dir, err)
	}
	return a, nil
}

// sqlite3Archive is where Run keeps the archive that sqlite3 makes beside
// pagoda's archive (for the pagoda-sqlite3 peer).
func sqlite3Archive(archive string) string {
	return strings.TrimSuffix(archive, ".db") + "-sqlite3.db"
}

// BuildSQLite3Archive archives the tree t into a new file with the
// sqlite3 command, as `cd DIR && sqlite3 FILE -Ac .` does (names "./...",
// zlib where it makes a file smaller, 512-byte pages).
func BuildSQLite3Archive(t *FSTree, file string) (*Archive, error) {
	start := time.Now()
	cmd := exec.Command("sqlite3", file, "-Ac", ".")
	cmd.Dir = t.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("bench: sqlite3 -Ac of %s: %v: %s", t.Dir, err, out)
	}
	a := &Archive{Path: file, ImportTime: time.Since(start)}
	var err error
	if a.Size, err = filesSize(file); err != nil {
		return nil, fmt.Errorf("bench: sqlite3 archive of %s: %w", t.Dir, err)
	}
	return a, nil
}

// filesSize returns the total size of files; missing files count 0, but
// the first must exist.
func filesSize(files ...string) (int64, error) {
	var n int64
	for i, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			if i > 0 && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return 0, err
		}
		n += st.Size()
	}
	return n, nil
}

// removeArchive removes an archive's files.
func removeArchive(file string) error {
	var errs []error
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(file + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// FSPeer is one filesystem of the fs workloads over one tree, opened.
type FSPeer struct {
	name     string
	fsys     fs.FS
	blob     func(i int) ([]byte, error) // fs-blob's read of the tree's file i
	close    func() error
	walkOnly bool // takes part in the fs-walk workloads only
}

// Name is the peer's name, one of FSPeerNames.
func (p *FSPeer) Name() string { return p.name }

// FS is the peer's filesystem.
func (p *FSPeer) FS() fs.FS { return p.fsys }

// Close closes the peer's files.
func (p *FSPeer) Close() error {
	if p.close == nil {
		return nil
	}
	err := p.close()
	p.close = nil
	return err
}

// OpenFSPeer opens the peer called name over the tree t: os is
// os.DirFS(t.Dir); walkdir is os.DirFS with every listing read beforehand
// (fs-walk only); pagoda opens archive (t imported by BuildArchive)
// read-only and reads it with fsys.New(db, nil); mattn and modernc read
// archive with an sqlFS, with SQLitePragmas unless opt.SQLiteDefaults.
//
// fs-blob's read of a file is fs.ReadFile for pagoda, os.ReadFile of the
// file's path (joined beforehand) for os, and SELECT data FROM sqlar
// WHERE name = ? for mattn and modernc.
func OpenFSPeer(name string, t *FSTree, archive string, opt PeerOptions) (*FSPeer, error) {
	pragmas := SQLitePragmas
	if opt.SQLiteDefaults {
		pragmas = nil
	}
	files := t.files
	switch name {
	case osPeer:
		paths := make([]string, len(files))
		for i, f := range files {
			paths[i] = filepath.Join(t.Dir, filepath.FromSlash(f))
		}
		return &FSPeer{
			name: name,
			fsys: os.DirFS(t.Dir),
			blob: func(i int) ([]byte, error) { return os.ReadFile(paths[i]) },
		}, nil
	case walkDirPeer:
		l, err := listTree(t.Dir)
		if err != nil {
			return nil, err
		}
		return &FSPeer{name: name, fsys: l, walkOnly: true}, nil
	case "pagoda":
		db, err := pagoda.Open(archive, &pagoda.Options{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		f := fsys.New(db, nil)
		return &FSPeer{
			name:  name,
			fsys:  f,
			blob:  func(i int) ([]byte, error) { return fs.ReadFile(f, files[i]) },
			close: db.Close,
		}, nil
	case sqlite3Peer:
		db, err := pagoda.Open(sqlite3Archive(archive), &pagoda.Options{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		f, err := fsys.Open(db, nil)
		if err != nil {
			db.Close()
			return nil, err
		}
		return &FSPeer{
			name:  name,
			fsys:  f,
			blob:  func(i int) ([]byte, error) { return fs.ReadFile(f, files[i]) },
			close: db.Close,
		}, nil
	case pagodaTxPeer:
		db, err := pagoda.Open(archive, &pagoda.Options{ReadOnly: true})
		if err != nil {
			return nil, err
		}
		tx, err := db.Begin(false)
		if err != nil {
			db.Close()
			return nil, err
		}
		f := fsys.New(db, nil).In(tx)
		return &FSPeer{
			name: name,
			fsys: f,
			blob: func(i int) ([]byte, error) { return fs.ReadFile(f, files[i]) },
			close: func() error {
				tx.Rollback()
				return db.Close()
			},
		}, nil
	case "mattn", "modernc":
		driver := moderncDriver
		if name == "mattn" {
			if !cgoEnabled {
				return nil, errNoCgo
			}
			driver = mattnDriver
		}
		s, err := openSQLFS(name, driver, archive, pragmas)
		if err != nil {
			return nil, err
		}
		return &FSPeer{
			name:  name,
			fsys:  s,
			blob:  func(i int) ([]byte, error) { return s.readBlob(files[i]) },
			close: s.Close,
		}, nil
	}
	return nil, fmt.Errorf("bench: peer %q has no filesystem (want one of %s)", name, strings.Join(FSPeerNames, ", "))
}

// VerifyFS checks that peer p sees exactly the tree t: fs.WalkDir visits
// the same entries in the same order, each directory as a directory, and
// fs.ReadFile of every regular file returns the same bytes (by length and
// CRC-32); on the blob tree fs-blob's read of every file does too. It
// also warms the peer's caches and the OS page cache before timing.
func VerifyFS(p *FSPeer, t *FSTree) error {
	var got []string
	err := fs.WalkDir(p.fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name += "/"
		}
		got = append(got, name)
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: walk of %s: %w", p.name, t.Dir, err)
	}
	if err := t.checkWalk(p.name, got); err != nil {
		return err
	}
	if p.walkOnly {
		return nil
	}
	var c contentSum
	for _, name := range t.files {
		data, err := fs.ReadFile(p.fsys, name)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		c.add(data)
	}
	if err := c.check(p.name, "fs.ReadFile of every file", t); err != nil {
		return err
	}
	if t.order == nil {
		return nil
	}
	c = contentSum{}
	for i := range t.files {
		data, err := p.blob(i)
		if err != nil {
			return fmt.Errorf("%s: blob %s: %w", p.name, t.files[i], err)
		}
		c.add(data)
	}
	return c.check(p.name, "the blob read of every file", t)
}

// FSWorkload is a named timed loop over a filesystem peer and its tree.
// Run returns an error instead of failing b (see Workload).
type FSWorkload struct {
	Name string // fs-walk/gen, fs-walk/gosrc, fs-read/gen, fs-read/gosrc, fs-blob
	Kind string // walk, read or blob
	Tree string // gen, gosrc or blob
	Run  func(b *testing.B, p *FSPeer, t *FSTree) error
}

// The kinds of fs workloads.
const (
	fsWalk = "walk"
	fsRead = "read"
	fsBlob = "blob"
)

// FSWorkloads lists the fs workloads, in report order:
//
//   - fs-walk/gen, fs-walk/gosrc: one op is fs.WalkDir over the whole tree,
//     the callback counting entries (FSWalk);
//   - fs-read/gen, fs-read/gosrc: one op reads every regular file whole
//     with fs.ReadFile, names listed beforehand (FSRead);
//   - fs-blob: one op reads one blob of the blob tree, in a fixed random
//     order (FSBlob).
var FSWorkloads = []FSWorkload{
	{Name: "fs-walk/" + TreeGen, Kind: fsWalk, Tree: TreeGen, Run: FSWalk},
	{Name: "fs-walk/" + TreeGoSrc, Kind: fsWalk, Tree: TreeGoSrc, Run: FSWalk},
	{Name: "fs-read/" + TreeGen, Kind: fsRead, Tree: TreeGen, Run: FSRead},
	{Name: "fs-read/" + TreeGoSrc, Kind: fsRead, Tree: TreeGoSrc, Run: FSRead},
	{Name: "fs-blob", Kind: fsBlob, Tree: TreeBlob, Run: FSBlob},
}

// fsTrees lists the trees in the order Run measures them.
var fsTrees = []string{TreeGen, TreeGoSrc, TreeBlob}

// FSWorkloadsNamed returns the fs workloads that name selects: one by its
// name, or a group: fs (all of them), fs-walk or fs-read (both trees).
func FSWorkloadsNamed(name string) []FSWorkload {
	var out []FSWorkload
	for _, w := range FSWorkloads {
		if w.Name == name || name == "fs" || name == "fs-"+w.Kind {
			out = append(out, w)
		}
	}
	return out
}

// FSWalk measures one fs.WalkDir over the whole tree per operation, the
// callback counting the entries, and reports ns/entry.
func FSWalk(b *testing.B, p *FSPeer, t *FSTree) error {
	n := 0
	count := func(_ string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n++
		return nil
	}
	want := t.Entries()
	for b.Loop() {
		n = 0
		if err := fs.WalkDir(p.fsys, ".", count); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		if n != want {
			return fmt.Errorf("%s: walk of %s visited %d entries, want %d", p.name, t.Dir, n, want)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(want), "ns/entry")
	return nil
}

// FSRead measures reading every regular file of the tree whole with
// fs.ReadFile per operation, and reports ns/file.
func FSRead(b *testing.B, p *FSPeer, t *FSTree) error {
	files := t.files
	for b.Loop() {
		var total int64
		for _, name := range files {
			data, err := fs.ReadFile(p.fsys, name)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			total += int64(len(data))
		}
		if total != t.Bytes {
			return fmt.Errorf("%s: read %d bytes of %s, want %d", p.name, total, t.Dir, t.Bytes)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(max(len(files), 1)), "ns/file")
	return nil
}

// FSBlob measures one blob read per operation, cycling through the blob
// tree's files in a fixed random order (the same for every peer).
func FSBlob(b *testing.B, p *FSPeer, t *FSTree) error {
	order := t.order
	if len(order) == 0 {
		return fmt.Errorf("%s: %s is not a blob tree", p.name, t.Dir)
	}
	var total int64
	i, ops := 0, 0
	for b.Loop() {
		data, err := p.blob(order[i])
		if err != nil {
			return fmt.Errorf("%s: blob %s: %w", p.name, t.files[order[i]], err)
		}
		total += int64(len(data))
		if i++; i == len(order) {
			i = 0
		}
		ops++
	}
	if want := int64(ops) * (t.Bytes / int64(t.Files)); total != want {
		return fmt.Errorf("%s: %d blob reads returned %d bytes, want %d", p.name, ops, total, want)
	}
	return nil
}

// FSResult is one measured (fs workload, peer) pair.
type FSResult struct {
	Workload string
	Tree     string
	Peer     string
	Skipped  bool // the workload's tree is missing (see FSTreeInfo.Skipped)
	N        int  // operations timed
	NsPerOp  float64
	MinNs    float64 // fastest and slowest ns/op over rounds
	MaxNs    float64
	RoundNs  []float64 // ns/op of each round, in round order
	// RoundAllocs is allocs/op of each round, in round order (AllocsPerOp
	// their median).
	RoundAllocs []float64
	// NsPerItem is ns/op per entry walked (fs-walk) or per file read
	// (fs-read); 0 for fs-blob, whose op is one file.
	NsPerItem   float64
	MBPerSec    float64 // file data read per second, in 10^6 bytes (fs-read, fs-blob)
	AllocsPerOp int64
	BytesPerOp  int64
}

// measureFS verifies p against t (which also warms the caches), then
// measures each workload with testing.Benchmark.
func measureFS(p *FSPeer, t *FSTree, workloads []FSWorkload) ([]FSResult, error) {
	if err := VerifyFS(p, t); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var out []FSResult
	for _, w := range workloads {
		if p.walkOnly && w.Kind != fsWalk {
			out = append(out, skippedFS(w, p.name))
			continue
		}
		runtime.GC()
		var runErr error
		r := testing.Benchmark(func(b *testing.B) {
			if err := w.Run(b, p, t); err != nil {
				runErr = err
				b.FailNow()
			}
		})
		if runErr != nil {
			return nil, fmt.Errorf("bench: %s: %s: %w", p.name, w.Name, runErr)
		}
		if r.N == 0 {
			return nil, fmt.Errorf("bench: %s: %s: benchmark did not run", p.name, w.Name)
		}
		res := FSResult{
			Workload:    w.Name,
			Tree:        w.Tree,
			Peer:        p.name,
			N:           r.N,
			NsPerOp:     float64(r.T.Nanoseconds()) / float64(r.N),
			AllocsPerOp: r.AllocsPerOp(),
			BytesPerOp:  r.AllocedBytesPerOp(),
		}
		res.MinNs, res.MaxNs = res.NsPerOp, res.NsPerOp
		var bytesPerOp float64
		switch w.Kind {
		case fsWalk:
			res.NsPerItem = res.NsPerOp / float64(t.Entries())
		case fsRead:
			res.NsPerItem = res.NsPerOp / float64(max(t.Files, 1))
			bytesPerOp = float64(t.Bytes)
		case fsBlob:
			bytesPerOp = float64(t.Bytes) / float64(t.Files)
		}
		if bytesPerOp > 0 {
			res.MBPerSec = bytesPerOp / res.NsPerOp * 1e3
		}
		out = append(out, res)
	}
	return out, nil
}

// skippedFS is the result of workload w for a peer that does not take
// part in it.
func skippedFS(w FSWorkload, peer string) FSResult {
	return FSResult{Workload: w.Name, Tree: w.Tree, Peer: peer, Skipped: true}
}

// medianFS returns the result with the median ns/op (the lower middle one
// for an even count), with MinNs and MaxNs spanning all of them.
func medianFS(rs []FSResult) FSResult {
	m := medianOf(rs, func(r FSResult) float64 { return r.NsPerOp })
	m.RoundNs, m.RoundAllocs = nil, nil
	for _, r := range rs {
		m.MinNs, m.MaxNs = min(m.MinNs, r.NsPerOp), max(m.MaxNs, r.NsPerOp)
		m.RoundNs = append(m.RoundNs, r.NsPerOp)
		m.RoundAllocs = append(m.RoundAllocs, float64(r.AllocsPerOp))
	}
	m.AllocsPerOp = int64(medianFloat(m.RoundAllocs))
	return m
}

// listedFS is the walkdir peer: os.DirFS over a tree, with every
// directory's listing read once beforehand and returned by ReadDir without
// a copy. Walking it with fs.WalkDir costs fs.WalkDir's own work alone (a
// path.Join, a callback and a recursion per entry), which every FS walked
// that way pays too: no FS's walk can be faster.
type listedFS struct {
	fs.FS
	dirs map[string][]fs.DirEntry
}

// listTree reads every directory of the tree under dir.
func listTree(dir string) (*listedFS, error) {
	l := &listedFS{FS: os.DirFS(dir), dirs: map[string][]fs.DirEntry{}}
	err := fs.WalkDir(l.FS, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		list, err := fs.ReadDir(l.FS, name)
		l.dirs[name] = list
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bench: listing %s: %w", dir, err)
	}
	return l, nil
}

// ReadDir implements fs.ReadDirFS: the listing read beforehand. Callers
// must not change it (fs.WalkDir does not).
func (l *listedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if list, ok := l.dirs[name]; ok {
		return list, nil
	}
	return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
}
