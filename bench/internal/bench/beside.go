package bench

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pagodadb/pagoda"
)

// The beside workload (issue #28) measures what a writer costs a SQLite
// reader in another process. A child process (this program again, as
// pagoda bench child beside) reads random rows of copies of a WAL-mode
// file that SQLite wrote, one query per read, each query its own read
// transaction (so that each read sees the last commit and takes a read
// mark of the -shm wal-index, as a sqlite3 process serving requests
// does), while this process commits durable one-row transactions into
// the copies: one copy has no writer (none), one has pagoda (the shared
// mode), one mattn (WAL, synchronous=FULL). The reader has a connection
// to each copy and takes them in turn, BesideOptions.Slice on each, for
// BesideOptions.Time; the writers commit all the while, each into its
// copy. So each copy's reads meet the same machine (the same load, the
// same disk, both writers' CPU), as the interleaved commits do, and
// differ only in what their own writer does to them. The writers are
// paced (BesideOptions.Interval, a commit a millisecond): each commit
// costs the reader a new snapshot (SQLite drops its page cache when the
// WAL changed), so a writer that committed more often would cost it more
// for that alone.
//
// The reader is mattn/go-sqlite3 (SQLite's own C code, as in the sqlite3
// shell) with SQLite's default settings, as a sqlite3 process runs;
// without cgo it is modernc.org/sqlite. A child process running SQLite
// through a driver measures the reads, not the start of a process: the
// sqlite3 shell run in a loop would spend milliseconds a read starting up,
// and fed a script it would time its output.
//
// The reader checks every value it reads; after each round each writer's
// rows are checked (every row scanned), so that no writer wins by
// dropping commits, and each copy with pagoda's DB.Check and SQLite's
// integrity_check.

// BesideWorkload is the name of the beside workload.
const BesideWorkload = "beside"

// besideNone is the writer of the copy that nobody writes.
const besideNone = "none"

// besideChild is the first argument of a child process of the beside
// workload (pagoda bench child beside ...), which RunChild hands to
// runBesideChild.
const besideChild = "beside"

// besideReady is the line a reader prints once it is open and warm, the
// writers' cue to start.
const besideReady = "ready"

// BesideOptions are the sizes of the beside workload.
type BesideOptions struct {
	Rows int           // rows of the file the reader reads (default 100,000)
	Time time.Duration // how long the reader reads in each round (default 2s)
	// Slice is how long the reader reads one copy before it turns to the
	// next (default 20ms).
	Slice time.Duration
	// Interval paces the writers: commit i starts Interval*i after the
	// first (at once when a writer is behind), so that every writer makes
	// as many commits, and the reader meets as many, whatever each one's
	// commit takes. 0 means 1ms; negative, as fast as each writer can.
	Interval time.Duration
}

// besideInterval is the default BesideOptions.Interval: 1,000 commits per
// second, which a durable commit keeps up with on a disk whose fdatasync
// takes less than a millisecond.
const besideInterval = time.Millisecond

func (o BesideOptions) withDefaults() BesideOptions {
	if o.Rows <= 0 {
		o.Rows = 100_000
	}
	if o.Time <= 0 {
		o.Time = 2 * time.Second
	}
	if o.Slice <= 0 {
		o.Slice = 20 * time.Millisecond
	}
	if o.Interval == 0 {
		o.Interval = besideInterval
	}
	return o
}

// BesideResult is the beside workload's figures for one copy.
type BesideResult struct {
	Writer string // pagoda, mattn, modernc, or none
	Mode   string // pagoda's mode: shared, as the reader needs
	Rounds int    // rounds measured
	// ReadsPerSec is the reader's reads per second on this copy, the
	// median over rounds, and MinReads and MaxReads their range.
	ReadsPerSec, MinReads, MaxReads float64
	// Reads is the reads of the median round.
	Reads int
	// CommitsPerSec is the writer's commits per second while the reader
	// read (the median over rounds), MinCommits and MaxCommits their
	// range; 0 for none.
	CommitsPerSec, MinCommits, MaxCommits float64
	// Ratios are, for a writer other than pagoda, the reader's reads per
	// second beside pagoda over its reads per second beside this writer in
	// the same round, in round order; Ratio is their median, MinRatio and
	// MaxRatio their range.
	Ratios                    []float64
	Ratio, MinRatio, MaxRatio float64
}

// besideReads is a reader's outcome, as a child prints it in JSON: the
// reads of each copy, in the order of the paths it was given, and the
// time they took.
type besideReads struct {
	Driver string  `json:"driver"`
	Reads  []int   `json:"reads"`
	Ns     []int64 `json:"ns"`
}

// besideRound is one copy's figures in one round.
type besideRound struct {
	reads   int
	ns      int64
	commits int
	elapsed time.Duration // the writers', from the reader's cue to its result
	mode    string
}

func (r besideRound) readsPerSec() float64 { return float64(r.reads) / (float64(r.ns) / 1e9) }

func (r besideRound) commitsPerSec() float64 { return float64(r.commits) / r.elapsed.Seconds() }

// besideReader is the SQLite driver of the reader.
func besideReader() string {
	if cgoEnabled {
		return "mattn"
	}
	return "modernc"
}

// besideWriters returns the writers of the beside workload: pagoda and
// mattn (modernc without cgo) with the default peers, else the peers of
// cfg.Peers that are one of pagoda, mattn and modernc.
func (cfg *Config) besideWriters() []string {
	if cfg.defaultPeers {
		return []string{"pagoda", besideReader()}
	}
	var out []string
	for _, name := range cfg.Peers {
		if name == "pagoda" || name == "mattn" || name == "modernc" {
			out = append(out, name)
		}
	}
	return out
}

// runBeside measures the beside workload in a directory under dir: it
// builds the file once with SQLite, then in each round copies it for no
// writer and for each writer and measures the reader beside them all.
func runBeside(cfg *Config, dir string, rep *Report) error {
	o := cfg.Beside.withDefaults()
	values := FixtureOptions{Rows: o.Rows, ValueSize: cfg.Fixture.ValueSize, Seed: cfg.Fixture.Seed}.withDefaults()
	bdir, err := os.MkdirTemp(dir, "beside-")
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(bdir)
	cfg.progress("beside: a %d-row file written by SQLite ...", o.Rows)
	template := filepath.Join(bdir, "template.db")
	if _, err := buildSQLite(template, values, false); err != nil {
		return err
	}
	copies := append([]string{besideNone}, cfg.besideWriters()...)
	rounds := map[string][]besideRound{}
	for round := 1; round <= cfg.rounds(); round++ {
		// The reader takes the copies in turn, from another one each round.
		order := append(slices.Clone(copies[(round-1)%len(copies):]), copies[:(round-1)%len(copies)]...)
		cfg.progress("%sbeside: a SQLite reader in another process beside %s ...", cfg.targetRound(round), strings.Join(order, ", "))
		rs, err := measureBeside(cfg, bdir, template, order, values, o)
		if err != nil {
			return fmt.Errorf("bench: beside: %w", err)
		}
		for i, w := range order {
			rounds[w] = append(rounds[w], rs[i])
		}
	}
	for _, w := range copies {
		rs := rounds[w]
		res := BesideResult{Writer: w, Mode: rs[0].mode, Rounds: len(rs)}
		m := medianOf(rs, besideRound.readsPerSec)
		res.ReadsPerSec, res.Reads = m.readsPerSec(), m.reads
		res.MinReads, res.MaxReads = rangeOf(rs, besideRound.readsPerSec)
		if w != besideNone {
			res.CommitsPerSec = medianOf(rs, besideRound.commitsPerSec).commitsPerSec()
			res.MinCommits, res.MaxCommits = rangeOf(rs, besideRound.commitsPerSec)
		}
		if p := rounds["pagoda"]; w != "pagoda" && w != besideNone && len(p) == len(rs) {
			ratios := make([]float64, len(rs))
			for i := range rs {
				ratios[i] = p[i].readsPerSec() / rs[i].readsPerSec()
			}
			res.Ratios = ratios
			res.Ratio = medianOf(ratios, identity)
			res.MinRatio, res.MaxRatio = rangeOf(ratios, identity)
		}
		rep.Beside = append(rep.Beside, res)
	}
	return nil
}

// rangeOf returns the smallest and largest key of xs.
func rangeOf[T any](xs []T, key func(T) float64) (lo, hi float64) {
	for i, x := range xs {
		k := key(x)
		if i == 0 || k < lo {
			lo = k
		}
		if i == 0 || k > hi {
			hi = k
		}
	}
	return lo, hi
}

// besideCopy is one copy of the file in a round, and its writer.
type besideCopy struct {
	dir, path string
	s         Store // nil for none
	res       besideRound
	err       error
}

// measureBeside copies the template into a new directory under dir for
// each of writers (none: no writer), opens each writer's store on its
// copy, starts the reader of every copy (a child process with
// cfg.ChildCommand, else a goroutine of this process), and from the
// reader's cue until its result arrives has each writer commit one-row
// transactions, keys after the file's, one every o.Interval, all writers
// at once. Then it checks each writer's rows, and each copy with pagoda's
// DB.Check and SQLite's integrity_check. The results are in the order of
// writers.
func measureBeside(cfg *Config, dir, template string, writers []string, values FixtureOptions, o BesideOptions) (rs []besideRound, err error) {
	copies := make([]*besideCopy, len(writers))
	paths := make([]string, len(writers))
	for i, w := range writers {
		c := &besideCopy{}
		if c.dir, err = os.MkdirTemp(dir, w+"-"); err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, removeAll(c.dir)) }()
		c.path = filepath.Join(c.dir, storeFile)
		if err := copyFile(template, c.path); err != nil {
			return nil, err
		}
		copies[i], paths[i] = c, c.path
	}
	settleDisk() // the copies' writes are not the writers' to sync
	for i, w := range writers {
		if w == besideNone {
			continue
		}
		c := copies[i]
		if c.s, err = NewStore(w, cfg.PeerOptions); err != nil {
			return nil, err
		}
		if err := c.s.Open(c.dir, StoreOptions{}); err != nil {
			return nil, fmt.Errorf("%s: open: %w", w, err)
		}
		defer func() { err = errors.Join(err, c.s.Close()) }()
		c.res.mode = modeOf(c.s)
	}
	reader := startBesideReader(cfg.ChildCommand, paths, values, o)
	defer reader.result() // the reader has ended before the files go
	if err := reader.ready(); err != nil {
		return nil, err
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range copies {
		if c.s != nil {
			wg.Go(func() { c.res.commits, c.err = besideCommits(c.s, reader, values, start, o.Interval) })
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	reads, err := reader.result()
	if err != nil {
		return nil, err
	}
	if len(reads.Reads) != len(copies) || len(reads.Ns) != len(copies) {
		return nil, fmt.Errorf("reader: %d and %d figures for %d copies", len(reads.Reads), len(reads.Ns), len(copies))
	}
	for i, c := range copies {
		c.res.reads, c.res.ns, c.res.elapsed = reads.Reads[i], reads.Ns[i], elapsed
		if c.s == nil {
			continue
		}
		if c.err == nil {
			c.err = checkWriter(c, values)
		}
		if c.err != nil {
			return nil, fmt.Errorf("%s: %w", writers[i], c.err)
		}
	}
	for _, c := range copies {
		rs = append(rs, c.res)
	}
	return rs, nil
}

// besideCommits commits one-row transactions into s, keys after the
// file's, the i-th at start + i*interval (or at once when behind, or with
// interval <= 0), until the reader has ended; it returns the commits made.
func besideCommits(s Store, reader *besideReaderRun, values FixtureOptions, start time.Time, interval time.Duration) (int, error) {
	v := make([]byte, 0, values.ValueSize)
	n := 0
	for !reader.done() {
		if interval > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(n) * interval)))
		}
		k := int64(values.Rows + n + 1)
		v = values.Value(v[:0], k)
		if err := s.Begin(); err != nil {
			return n, err
		}
		if err := s.Insert(k, v); err != nil {
			return n, fmt.Errorf("insert key %d: %w", k, err)
		}
		if err := s.Commit(); err != nil {
			return n, fmt.Errorf("commit: %w", err)
		}
		n++
	}
	return n, nil
}

// checkWriter closes c's store, reopens it and checks its rows (the file's
// and the writer's commits), closes it again and checks the file.
func checkWriter(c *besideCopy, values FixtureOptions) error {
	if err := c.s.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	if err := c.s.Open(c.dir, StoreOptions{}); err != nil {
		return fmt.Errorf("reopen: %w", err)
	}
	if err := countRows(c.s, values, values.Rows+c.res.commits); err != nil {
		return err
	}
	if err := c.s.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return checkFile(c.path)
}

// checkFile checks the database at path with pagoda's DB.Check and with
// SQLite's integrity_check (mattn, or modernc without cgo).
func checkFile(path string) (err error) {
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	if err := errors.Join(db.Check(), db.Close()); err != nil {
		return fmt.Errorf("pagoda: check: %w", err)
	}
	driver := moderncDriver
	if cgoEnabled {
		driver = mattnDriver
	}
	sdb, err := sql.Open(driver, path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sdb.Close()) }()
	var res string
	if err := sdb.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("integrity_check: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("integrity_check: %s", res)
	}
	return nil
}

// copyFile copies the file src to a new file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

// besideReaderRun is a reader at work: in a child process or a goroutine.
type besideReaderRun struct {
	cue chan struct{} // receives the reader's cue
	end chan struct{} // closed once the reader is done and res and err set
	res besideReads
	err error
}

// startBesideReader starts a reader of the files at paths for o.Time,
// o.Slice on each in turn: a child process with command (pagoda bench
// child), else a goroutine.
func startBesideReader(command []string, paths []string, values FixtureOptions, o BesideOptions) *besideReaderRun {
	r := &besideReaderRun{cue: make(chan struct{}, 1), end: make(chan struct{})}
	driver := besideReader()
	if command == nil {
		go func() {
			defer close(r.end)
			r.res, r.err = readBeside(paths, driver, values, o.Time, o.Slice, func() { r.cue <- struct{}{} })
		}()
		return r
	}
	args := append(command[1:len(command):len(command)], besideChild,
		"-driver", driver, "-rows", strconv.Itoa(values.Rows), "-time", o.Time.String(), "-slice", o.Slice.String(),
		"-value-size", strconv.Itoa(values.ValueSize), "-seed", strconv.FormatUint(values.Seed, 10))
	args = append(args, paths...)
	cmd := exec.Command(command[0], args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		r.err = fmt.Errorf("reader process: %w", err)
		close(r.end)
		return r
	}
	go func() {
		defer close(r.end)
		sc := bufio.NewScanner(stdout)
		var err error
		switch {
		case !sc.Scan():
			err = errors.New("no cue")
		case sc.Text() != besideReady:
			err = fmt.Errorf("cue %q", sc.Text())
		default:
			r.cue <- struct{}{}
			if !sc.Scan() {
				err = errors.New("no result")
			} else {
				err = json.Unmarshal(sc.Bytes(), &r.res)
			}
		}
		io.Copy(io.Discard, stdout)
		if werr := cmd.Wait(); werr != nil || err != nil {
			r.err = fmt.Errorf("reader process: %w\n%s", errors.Join(err, werr), bytes.TrimSpace(stderr.Bytes()))
		}
	}()
	return r
}

// ready waits for the reader's cue; it returns the reader's error if the
// reader ended without one.
func (r *besideReaderRun) ready() error {
	select {
	case <-r.cue:
		return nil
	case <-r.end:
		return r.err
	}
}

// done reports whether the reader has ended.
func (r *besideReaderRun) done() bool {
	select {
	case <-r.end:
		return true
	default:
		return false
	}
}

// result waits for the reader to end and returns its reads.
func (r *besideReaderRun) result() (besideReads, error) {
	<-r.end
	return r.res, r.err
}

// readBeside opens each file of paths with driver (mattn or modernc) as a
// peer of NewTxPeer with SQLite's default settings and checks every row
// (which also warms the caches), calls ready, then reads random rows of
// the files for d, slice on each in turn, checking each value.
func readBeside(paths []string, driver string, values FixtureOptions, d, slice time.Duration, ready func()) (res besideReads, err error) {
	res.Driver = driver
	peers := make([]Peer, len(paths))
	for i, path := range paths {
		p, err := NewTxPeer(driver, PeerOptions{SQLiteDefaults: true})
		if err != nil {
			return res, err
		}
		f := &Fixture{FixtureOptions: values, SQLitePath: path}
		if err := p.Open(f); err != nil {
			return res, err
		}
		defer func() { err = errors.Join(err, p.Close()) }()
		if err := Verify(p, f, 100); err != nil {
			return res, err
		}
		peers[i] = p
	}
	res.Reads, res.Ns = make([]int, len(paths)), make([]int64, len(paths))
	rng := rand.New(rand.NewPCG(values.Seed, 0x626573696465)) // "beside"
	want := make([]byte, 0, values.ValueSize)
	ready()
	deadline := time.Now().Add(d)
	for i := 0; time.Now().Before(deadline); i = (i + 1) % len(peers) {
		p := peers[i]
		start := time.Now()
		end := start.Add(slice)
		n := 0
		for ; n&15 != 0 || time.Now().Before(end); n++ {
			id := 1 + rng.Int64N(int64(values.Rows))
			v, err := p.Get(id)
			if err != nil {
				return res, fmt.Errorf("%s: %s: get %d: %w", driver, paths[i], id, err)
			}
			if want = values.Value(want[:0], id); !bytes.Equal(v, want) {
				return res, fmt.Errorf("%s: %s: get %d: value %x, want %x", driver, paths[i], id, v, want)
			}
		}
		res.Reads[i] += n
		res.Ns[i] += time.Since(start).Nanoseconds()
	}
	return res, nil
}

// runBesideChild is the main function of a reader process of the beside
// workload: it parses args as startBesideReader passes them, prints
// besideReady once warm, then the reads as JSON.
func runBesideChild(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("pagoda bench child beside", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		driver      string
		rows, vsize int
		seed        uint64
		d, slice    time.Duration
	)
	fs.StringVar(&driver, "driver", "", "mattn or modernc")
	fs.IntVar(&rows, "rows", 0, "rows of the file")
	fs.DurationVar(&d, "time", 0, "how long to read")
	fs.DurationVar(&slice, "slice", 0, "how long to read one file before the next")
	fs.IntVar(&vsize, "value-size", 0, "bytes per value")
	fs.Uint64Var(&seed, "seed", 0, "seed of the values")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("bench child beside: %w", err)
	}
	if fs.NArg() == 0 || (driver != "mattn" && driver != "modernc") || rows < 1 || d <= 0 || slice <= 0 {
		return fmt.Errorf("bench child beside: usage: child beside -driver mattn|modernc -rows N -time D -slice D [-value-size N -seed N] FILE...; an internal command of pagoda bench")
	}
	values := FixtureOptions{Rows: rows, ValueSize: vsize, Seed: seed}.withDefaults()
	bw := bufio.NewWriter(w)
	res, err := readBeside(fs.Args(), driver, values, d, slice, func() {
		fmt.Fprintln(bw, besideReady)
		bw.Flush()
	})
	if err != nil {
		return err
	}
	if err := json.NewEncoder(bw).Encode(res); err != nil {
		return err
	}
	return bw.Flush()
}

// besideWriterDoc describes writer w for the report.
func besideWriterDoc(w string) string {
	switch w {
	case besideNone:
		return "no writer"
	case "pagoda":
		return "pagoda, SyncFull"
	}
	return w + ", " + strings.Join(storePragmas, "; ")
}
