package bench

import (
	"bufio"
	"bytes"
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
	"time"
)

// The beside workload (issue #28) measures what a writer costs a SQLite
// reader in another process: a child process (this program again, as
// pagoda bench child beside) reads random rows of a WAL-mode file that
// SQLite wrote, for a fixed time, one query per read, each query its own
// read transaction (so each read sees the last commit and takes a read
// mark of the -shm wal-index, as a sqlite3 process serving requests
// does), while this process commits durable one-row transactions into
// the same file: with no writer (none), with pagoda (the shared mode) and
// with mattn (WAL, synchronous=FULL), each on a fresh copy of the file,
// in one run. The reader is mattn/go-sqlite3 (SQLite's own C code, as in
// the sqlite3 shell) with SQLite's default settings, as a sqlite3 process
// runs; without cgo it is modernc.org/sqlite. A child process running
// SQLite through a driver measures the reads, not the start of a process:
// the sqlite3 shell run in a loop would spend milliseconds a read starting
// up, and fed a script it would time its output.
//
// The reader checks every value it reads; each writer's rows are checked
// after (every row scanned), so that no writer wins by dropping commits.

// BesideWorkload is the name of the beside workload.
const BesideWorkload = "beside"

// besideNone is the writer of the phase without a writer.
const besideNone = "none"

// besideChild is the first argument of a child process of the beside
// workload (pagoda bench child beside ...), which RunChild hands to
// runBesideChild.
const besideChild = "beside"

// besideReady is the line a reader prints once it is open and warm, the
// writer's cue to start.
const besideReady = "ready"

// BesideOptions are the sizes of the beside workload.
type BesideOptions struct {
	Rows int           // rows of the file the reader reads (default 100,000)
	Time time.Duration // how long the reader reads beside each writer (default 2s)
}

func (o BesideOptions) withDefaults() BesideOptions {
	if o.Rows <= 0 {
		o.Rows = 100_000
	}
	if o.Time <= 0 {
		o.Time = 2 * time.Second
	}
	return o
}

// BesideResult is the beside workload beside one writer.
type BesideResult struct {
	Writer string // pagoda, mattn, modernc, or none
	Mode   string // pagoda's mode: shared, as the reader needs
	Rounds int    // rounds measured
	// ReadsPerSec is the reader's reads per second, the median over
	// rounds, and MinReads and MaxReads their range.
	ReadsPerSec, MinReads, MaxReads float64
	// Reads is the reads of the median round.
	Reads int
	// CommitsPerSec is the writer's commits per second while the reader
	// read (the median over rounds), MinCommits and MaxCommits their
	// range; 0 for none.
	CommitsPerSec, MinCommits, MaxCommits float64
	// Ratio is, for a writer other than pagoda, the reader's reads per
	// second beside pagoda over its reads per second beside this writer in
	// the same round: the median over rounds, and its range.
	Ratio, MinRatio, MaxRatio float64
}

// besideReads is a reader's outcome, as a child prints it in JSON.
type besideReads struct {
	Driver string `json:"driver"`
	Reads  int    `json:"reads"`
	Ns     int64  `json:"ns"` // the time the reads took
}

func (r besideReads) perSec() float64 { return float64(r.Reads) / (float64(r.Ns) / 1e9) }

// besideRound is one writer's phase in one round.
type besideRound struct {
	reads   besideReads
	commits int
	elapsed time.Duration // the writer's, from the reader's cue to its result
	mode    string
}

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
// builds the file once with SQLite, then in each round copies it for each
// phase (none first, then the writers, in reverse order every other
// round) and measures the reader beside the phase's writer.
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
	if _, err := buildSQLite(template, values); err != nil {
		return err
	}
	writers := cfg.besideWriters()
	rounds := map[string][]besideRound{}
	for round := 1; round <= cfg.Count; round++ {
		phases := slices.Clone(writers)
		if round%2 == 0 {
			slices.Reverse(phases)
		}
		for _, w := range append([]string{besideNone}, phases...) {
			cfg.progress("%sbeside: a SQLite reader in another process beside writer %s ...", cfg.round(round), w)
			r, err := measureBeside(cfg, bdir, template, w, values, o.Time)
			if err != nil {
				return fmt.Errorf("bench: beside %s: %w", w, err)
			}
			rounds[w] = append(rounds[w], r)
		}
	}
	for _, w := range append([]string{besideNone}, writers...) {
		rs := rounds[w]
		res := BesideResult{Writer: w, Mode: rs[0].mode, Rounds: len(rs)}
		m := medianOf(rs, func(r besideRound) float64 { return r.reads.perSec() })
		res.ReadsPerSec, res.Reads = m.reads.perSec(), m.reads.Reads
		res.MinReads, res.MaxReads = rangeOf(rs, func(r besideRound) float64 { return r.reads.perSec() })
		if w != besideNone {
			commits := func(r besideRound) float64 { return float64(r.commits) / r.elapsed.Seconds() }
			res.CommitsPerSec = commits(medianOf(rs, commits))
			res.MinCommits, res.MaxCommits = rangeOf(rs, commits)
		}
		if p := rounds["pagoda"]; w != "pagoda" && w != besideNone && len(p) == len(rs) {
			ratios := make([]float64, len(rs))
			for i := range rs {
				ratios[i] = p[i].reads.perSec() / rs[i].reads.perSec()
			}
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

// measureBeside copies the template into a new directory under dir, opens
// writer's store on it (none: no writer), starts the reader (a child
// process with cfg.ChildCommand, else a goroutine of this process), and
// commits one-row transactions, keys after the file's, from the reader's
// cue until its result arrives. Then it checks the writer's rows.
func measureBeside(cfg *Config, dir, template, writer string, values FixtureOptions, d time.Duration) (r besideRound, err error) {
	pdir, err := os.MkdirTemp(dir, writer+"-")
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, removeAll(pdir)) }()
	path := filepath.Join(pdir, storeFile)
	if err := copyFile(template, path); err != nil {
		return r, err
	}
	settleDisk() // the copy's writes are not the writer's to sync
	var s Store
	if writer != besideNone {
		if s, err = NewStore(writer, cfg.PeerOptions); err != nil {
			return r, err
		}
		if err := s.Open(pdir, StoreOptions{}); err != nil {
			return r, fmt.Errorf("open: %w", err)
		}
		defer func() { err = errors.Join(err, s.Close()) }()
		r.mode = modeOf(s)
	}
	reader := startBesideReader(cfg.ChildCommand, path, values, d)
	defer reader.result() // the reader has ended before the file goes
	if err := reader.ready(); err != nil {
		return r, err
	}
	start := time.Now()
	v := make([]byte, 0, values.ValueSize)
	for s != nil && !reader.done() {
		k := int64(values.Rows + r.commits + 1)
		v = values.Value(v[:0], k)
		if err := s.Begin(); err != nil {
			return r, err
		}
		if err := s.Insert(k, v); err != nil {
			return r, fmt.Errorf("insert key %d: %w", k, err)
		}
		if err := s.Commit(); err != nil {
			return r, fmt.Errorf("commit: %w", err)
		}
		r.commits++
	}
	if r.reads, err = reader.result(); err != nil {
		return r, err
	}
	r.elapsed = time.Since(start)
	if s == nil {
		return r, nil
	}
	if err := s.Close(); err != nil {
		return r, fmt.Errorf("close: %w", err)
	}
	if err := s.Open(pdir, StoreOptions{}); err != nil {
		return r, fmt.Errorf("reopen: %w", err)
	}
	return r, countRows(s, values, values.Rows+r.commits)
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

// startBesideReader starts a reader of the file at path for d: a child
// process with command (pagoda bench child), else a goroutine.
func startBesideReader(command []string, path string, values FixtureOptions, d time.Duration) *besideReaderRun {
	r := &besideReaderRun{cue: make(chan struct{}, 1), end: make(chan struct{})}
	driver := besideReader()
	if command == nil {
		go func() {
			defer close(r.end)
			r.res, r.err = readBeside(path, driver, values, d, func() { r.cue <- struct{}{} })
		}()
		return r
	}
	args := append(command[1:len(command):len(command)], besideChild,
		"-path", path, "-driver", driver, "-rows", strconv.Itoa(values.Rows), "-time", d.String(),
		"-value-size", strconv.Itoa(values.ValueSize), "-seed", strconv.FormatUint(values.Seed, 10))
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

// readBeside opens the file at path with driver (mattn or modernc) as a
// peer of NewTxPeer with SQLite's default settings, checks every row (which
// also warms the caches), calls ready, then reads random rows, checking
// each value, for d.
func readBeside(path, driver string, values FixtureOptions, d time.Duration, ready func()) (res besideReads, err error) {
	res.Driver = driver
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
	rng := rand.New(rand.NewPCG(values.Seed, 0x626573696465)) // "beside"
	want := make([]byte, 0, values.ValueSize)
	ready()
	start := time.Now()
	deadline := start.Add(d)
	for ; res.Reads&15 != 0 || time.Now().Before(deadline); res.Reads++ {
		id := 1 + rng.Int64N(int64(values.Rows))
		v, err := p.Get(id)
		if err != nil {
			return res, fmt.Errorf("%s: get %d: %w", driver, id, err)
		}
		if want = values.Value(want[:0], id); !bytes.Equal(v, want) {
			return res, fmt.Errorf("%s: get %d: value %x, want %x", driver, id, v, want)
		}
	}
	res.Ns = time.Since(start).Nanoseconds()
	return res, nil
}

// runBesideChild is the main function of a reader process of the beside
// workload: it parses args as startBesideReader passes them, prints
// besideReady once warm, then the reads as JSON.
func runBesideChild(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("pagoda bench child beside", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		path, driver string
		rows, vsize  int
		seed         uint64
		d            time.Duration
	)
	fs.StringVar(&path, "path", "", "the SQLite file")
	fs.StringVar(&driver, "driver", "", "mattn or modernc")
	fs.IntVar(&rows, "rows", 0, "rows of the file")
	fs.DurationVar(&d, "time", 0, "how long to read")
	fs.IntVar(&vsize, "value-size", 0, "bytes per value")
	fs.Uint64Var(&seed, "seed", 0, "seed of the values")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("bench child beside: %w", err)
	}
	if fs.NArg() > 0 || path == "" || (driver != "mattn" && driver != "modernc") || rows < 1 || d <= 0 {
		return fmt.Errorf("bench child beside: usage: child beside -path FILE -driver mattn|modernc -rows N -time D [-value-size N -seed N]; an internal command of pagoda bench")
	}
	values := FixtureOptions{Rows: rows, ValueSize: vsize, Seed: seed}.withDefaults()
	bw := bufio.NewWriter(w)
	res, err := readBeside(path, driver, values, d, func() {
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
