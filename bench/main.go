// Command bench is pagoda's benchmark: it runs the workloads of
// internal/bench against pagoda and its peers (mattn/go-sqlite3,
// modernc.org/sqlite, bbolt, pebble and the OS's filesystem) in one process
// run and prints the tables of BENCHMARKS.md. From the repository's root:
//
//	go run ./bench --quick
//
// It is a module of its own (github.com/pagodadb/pagoda/bench), so that the
// peers, mattn's cgo among them, stay out of the module graph of programs
// that import pagoda.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/pagodadb/pagoda/bench/internal/bench"
)

func main() {
	if err := newBenchCommand().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "pagoda bench: %v\n", err)
		os.Exit(1)
	}
}

// Settings of pagoda bench. Building the 1,000,000-row read files takes
// about 4 s on a 2-core machine (once; later runs reuse them). Every
// workload runs benchCount rounds, --quick too; --quick measures each read
// workload for 500 ms instead of 1 s, stops a bulk load after 5 s instead
// of 30 s (the slower peers' random loads then show a lower bound) and
// loads 500,000 rows in the memory workload instead of 10,000,000, but
// keeps every other size.
const (
	benchRows            = 1_000_000
	benchValueSize       = 100
	benchTime            = time.Second
	benchCount           = 3
	benchTargetCount     = 3 // rounds of what issue #28's targets compare, --quick too
	benchQuickTime       = 500 * time.Millisecond
	benchLoadLimit       = 30 * time.Second
	benchQuickLimit      = 5 * time.Second
	benchMemoryRows      = 10_000_000
	benchQuickMemoryRows = 500_000
	benchDirName         = "pagoda-bench"
	benchChildCommand    = "child"
	benchInserts         = 100_000
	benchCommits         = 300
	benchDefaultCaches   = "500,5000,50000"
	// The fs workloads: a generated tree of benchFSFiles files, GOROOT's
	// src and benchFSFiles blobs, each measurement for benchTime, or
	// benchFSQuickTime with --quick (about 20 s for the fs part).
	benchFSFiles     = 10_000
	benchFSQuickTime = 200 * time.Millisecond
	// The beside workload: a SQLite reader in a child process reads
	// copies of a file of benchBesideRows rows for benchBesideTime a
	// round, --quick too (its figures are targets, and the machine's
	// noise needs that long).
	benchBesideRows = 100_000
	benchBesideTime = 2 * time.Second
	// The raft workloads: 500 durable StoreLogs of one entry (200 of 64),
	// 100,000 entries truncated from a log of 110,000 (and as many GetLog),
	// 300 applies one at a time in a 3-node cluster (2,400 64 at a time):
	// about 15 s a round.
	benchRaftStores   = 500
	benchRaftTruncate = 100_000
	benchRaftApplies  = 300
)

func newBenchCommand() *cobra.Command {
	var (
		quick          bool
		memoryRows     int
		rows           int
		dir            string
		peers          string
		workloads      string
		count          int
		rounds         int
		benchtime      time.Duration
		sqliteDefaults bool
		inserts        int
		commits        int
		cacheKeys      string
		limit          time.Duration
		fsFiles        int
		fsBlobs        int
		fsSrc          string
		besideRows     int
		targetCount    int
		besideTime     time.Duration
		raftStores     int
		raftTruncate   int
		raftApplies    int
	)
	cmd := &cobra.Command{
		Use:           "bench",
		SilenceUsage:  true,
		SilenceErrors: true,
		Short:         "Benchmark pagoda against SQLite (mattn, modernc), bbolt, pebble and the OS's filesystem",
		Long: `Benchmark pagoda against mattn/go-sqlite3, modernc.org/sqlite, bbolt and
pebble, in one process run, one peer after the other.

Reads (lookup, lookup-tx, scan). SQLite (mattn/go-sqlite3) writes a table
CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB) with rowids 1..N (--rows)
and 100-byte random values, in WAL mode; bbolt gets the same rows under
8-byte big-endian keys. The files are cached under --dir by their
parameters. Every peer is checked against the data, then measured: random
point lookups by rowid in one read transaction (lookup) and each in a read
transaction of its own, as a request handler reads (lookup-tx: pagoda
View, Table, Get, Column), and a full scan in rowid order reading every
value. pagoda opens the file writable, so in the shared mode (the
default: sqlite3 and other processes read and write beside it); peer
pagoda-exclusive, pagoda with Options.Exclusive, joins lookup-tx, commit
and commit-8 for the shared mode's targets, which compare the two. pebble
has no read workloads: its rows say skipped. Then the memory
floors: the SQLite file, mapped, read with no engine at all: one random
page after another with four lines of each loaded at once (what a
lookup's leaf costs from memory), and every line once in order (what a
scan's bytes cost); the targets quote them.

Writes (load-seq, load-rand, insert, delete, commit), each into fresh
stores under --dir that are removed afterwards, every commit durable
(SQLite in WAL mode with synchronous=FULL, bbolt's defaults, pebble.Sync,
pagoda's SyncFull), with the same values and keys (rowids of the table
above, or 8 big-endian bytes for bbolt and pebble):
  load-seq   --rows rows in one transaction, keys in order, timed from
             Begin to the end of Close (bbolt sets FillPercent 1.0, as its
             documentation advises for append-only writes)
  load-rand  the same, keys in random order; a load still running after
             --load-limit is stopped and its ns/row shown as a lower bound
             (bbolt's would take hours: it splits nodes only at commit)
  insert     --inserts random inserts, 1,000 per transaction
  delete     then deletes of a tenth of those keys, random order, 1,000
             per transaction
  commit     --commits one-row transactions
  commit-8   the same from 8 goroutines at once (pagoda and bbolt: Batch;
             pebble: Set with Sync; SQLite: its one connection in turn)
Each store is closed, reopened and checked (every row scanned, some looked
up) after each workload, so that no peer wins by dropping writes. Beside
pagoda's insert, delete and commit figures the report prints their disk
floor: the bytes pagoda wrote to its WAL (for commit, 4 KiB per commit),
written to a plain file with one fdatasync per commit and nothing else.

Beside (beside): a SQLite reader (mattn, SQLite's defaults) in a child
process reads random rows of three copies of a --beside-rows file, one
query per read, 20 ms on each copy in turn for --beside-time, while this
process commits a durable one-row transaction a millisecond into two of
them: pagoda into one, mattn (WAL, synchronous=FULL) into the other, the
third left alone. Its reads per second on each copy say what each writer
costs a sqlite3 process reading beside it.

Memory (memory): each peer, in a child process of its own, loads
--memory-rows rows (keys in order, one transaction) into a fresh store,
pagoda with CacheSize 32 MiB and SQLite with a 32 MiB page cache; the
table gives each one's peak anonymous memory (what the engine keeps, not
the file pages it maps) and peak resident memory.

Filesystems (fs-walk/gen, fs-walk/gosrc, fs-read/gen, fs-read/gosrc,
fs-blob; "fs", "fs-walk" and "fs-read" select groups): pagoda's fsys over
a SQLite Archive of a tree that fsys.CopyFS imports (uncompressed) into a
fresh database under --dir, against os.DirFS on the tree (peer os) and a
small io/fs over the same archive through database/sql (mattn, modernc:
prepared statements, one query per ReadDir), each checked first (same
entries, same bytes). The trees: gen, --fs-files files of 1 to 16 KiB
in about a tenth as many directories, four levels deep, generated once
and cached under --dir; gosrc, --fs-src ($(go env GOROOT)/src by
default; skipped when missing).
  fs-walk   fs.WalkDir over the whole tree; peer walkdir is fs.WalkDir
            alone, over os.DirFS's listings read beforehand: the floor
            of any FS's walk
  fs-read   fs.ReadFile of every regular file
  fs-blob   one random read of --fs-blobs blobs of 10 KiB, as in SQLite's
            "35% faster than the filesystem": pagoda fs.ReadFile on an
            archive of them, os.ReadFile on separate files, SQLite SELECT
            data FROM sqlar WHERE name = ?
The fs workloads run the peers that have a filesystem (pagoda, mattn,
modernc, os, walkdir) and skip the others; os and walkdir take part in
nothing else.

Cache (cache): at each size of --cache-keys, a fresh store gets the keys
inserted, each read once, then all deleted; each peer and size runs in a
child process of its own so that its peak memory (max RSS) is its own.

The tables give ns/op (per row, or per commit), allocs/op, pagoda's
speed-up over each peer (the peer's ns/op divided by pagoda's), file sizes
and memory, then the targets of the issues, met or NOT met. Every
workload runs --rounds rounds (3, --quick too), one peer after the other
in each round, and every figure is the median of its rounds, never the
best one, followed by its spread [min-max] (allocs/op's when the rounds
differ); every ratio, in the tables and in the targets, is computed per
round from the two figures of that round (in-run, paired) and then the
median of those ratios taken, with their range. --quick measures the
reads and the fs workloads for less time and stops bulk loads sooner, but
keeps every size. What the shared mode's targets compare (pagoda and
pagoda-exclusive in lookup-tx, commit and commit-8; beside) is measured in
--target-count rounds when that is more than --rounds. Progress goes to
stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := bench.Config{
				Dir:         dir,
				Fixture:     bench.FixtureOptions{Rows: rows, ValueSize: benchValueSize},
				Benchtime:   benchtime,
				Count:       rounds,
				TargetCount: targetCount,
				PeerOptions: bench.PeerOptions{SQLiteDefaults: sqliteDefaults},
				Writes:      bench.WriteOptions{LoadRows: rows, InsertRows: inserts, Commits: commits, Limit: limit, MemoryRows: memoryRows},
				FS:          bench.FSOptions{Files: fsFiles, Blobs: fsBlobs, SrcDir: fsSrc},
				Beside:      bench.BesideOptions{Rows: besideRows, Time: besideTime},
				Raft:        bench.RaftOptions{Store1: raftStores, Truncate: raftTruncate, Applies: raftApplies},
				Progress:    cmd.ErrOrStderr(),
			}
			if rows < 1 || inserts < 1 || commits < 1 || fsFiles < 1 || fsBlobs < 1 || besideRows < 1 || raftStores < 1 || raftTruncate < 1 || raftApplies < 1 {
				return fmt.Errorf("--rows, --inserts, --commits, --fs-files, --fs-blobs, --beside-rows and the --raft sizes must be positive")
			}
			mode := "full"
			if quick {
				mode = "quick"
			}
			if cfg.Benchtime == 0 {
				cfg.Benchtime = benchTime
				cfg.FS.Benchtime = benchTime
				if quick {
					cfg.Benchtime = benchQuickTime
					cfg.FS.Benchtime = benchFSQuickTime
				}
			}
			if cmd.Flags().Changed("count") && !cmd.Flags().Changed("rounds") {
				cfg.Count = count
			}
			if cfg.Count < 1 {
				return fmt.Errorf("--rounds must be positive (each figure is the median of its rounds)")
			}
			if cfg.TargetCount == 0 {
				cfg.TargetCount = benchTargetCount
			}
			if cfg.Writes.MemoryRows == 0 {
				cfg.Writes.MemoryRows = benchMemoryRows
				if quick {
					cfg.Writes.MemoryRows = benchQuickMemoryRows
				}
			}
			if cfg.Beside.Time == 0 {
				cfg.Beside.Time = benchBesideTime
			}
			if cfg.Writes.Limit == 0 {
				cfg.Writes.Limit = benchLoadLimit
				if quick {
					cfg.Writes.Limit = benchQuickLimit
				}
			}
			var err error
			if cfg.Peers, err = list(peers, "--peers"); err != nil {
				return err
			}
			if !cmd.Flags().Changed("peers") {
				cfg.Peers = nil // the defaults, with pagoda-exclusive where the modes are compared
			}
			for _, p := range cfg.Peers {
				if err := bench.KnownPeer(p); err != nil {
					return err
				}
			}
			if cfg.Workloads, err = list(workloads, "--workloads"); err != nil {
				return err
			}
			keys, err := list(cacheKeys, "--cache-keys")
			if err != nil {
				return err
			}
			for _, k := range keys {
				n, err := strconv.Atoi(k)
				if err != nil || n < 1 {
					return fmt.Errorf("--cache-keys: %q is not a positive number", k)
				}
				cfg.Writes.CacheKeys = append(cfg.Writes.CacheKeys, n)
			}
			// The cache workload measures each peer's memory in a child
			// process: this program again, running the hidden child
			// command. A test binary cannot be run so; the workload then
			// runs in this process and reports no memory.
			if !testing.Testing() {
				if exe, err := os.Executable(); err == nil {
					cfg.ChildCommand = []string{exe, benchChildCommand}
				}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "pagoda bench (%s): %d rows, benchtime %s, %d round(s)\n", mode, rows, cfg.Benchtime, cfg.Count)
			rep, err := bench.Run(cfg)
			if err != nil {
				return err
			}
			return rep.Print(cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&quick, "quick", false, "reads and fs workloads measured for less time, bulk loads stopped sooner and a smaller memory load, still --rounds rounds")
	fl.IntVar(&rows, "rows", benchRows, "rows in the read table and in each bulk load")
	fl.StringVar(&dir, "dir", filepath.Join(os.TempDir(), benchDirName), "directory caching the read files and holding the written stores")
	fl.StringVar(&peers, "peers", strings.Join(append(slices.Clone(bench.PeerNames), "pagoda-tx", "os", "walkdir"), ","), "comma-separated peers to measure (os: the fs workloads' os.DirFS; pagoda-tx: fsys in one read transaction; walkdir: fs.WalkDir over listings read beforehand)")
	fl.StringVar(&workloads, "workloads", strings.Join(bench.WorkloadNames(), ","), "comma-separated workloads to run")
	fl.IntVar(&inserts, "inserts", benchInserts, "random inserts of the insert workload (delete deletes a tenth of them)")
	fl.IntVar(&commits, "commits", benchCommits, "one-row transactions of the commit workload")
	fl.StringVar(&cacheKeys, "cache-keys", benchDefaultCaches, "comma-separated key counts of the cache workload")
	fl.IntVar(&memoryRows, "memory-rows", 0, "rows of the memory workload (default 10,000,000, 500,000 with --quick)")
	fl.DurationVar(&limit, "load-limit", 0, "time after which a bulk load is stopped (default 30s, 5s with --quick)")
	fl.IntVar(&fsFiles, "fs-files", benchFSFiles, "files in the generated tree of the fs workloads")
	fl.IntVar(&fsBlobs, "fs-blobs", benchFSFiles, "10 KiB blobs of fs-blob")
	fl.StringVar(&fsSrc, "fs-src", "", "the real tree of the fs workloads (default $(go env GOROOT)/src)")
	fl.IntVar(&besideRows, "beside-rows", benchBesideRows, "rows of the file the beside workload's reader reads")
	fl.DurationVar(&besideTime, "beside-time", 0, "how long the beside workload's reader reads in each round (default 2s)")
	fl.IntVar(&raftStores, "raft-stores", benchRaftStores, "StoreLogs calls of raft-store-1 (raft-store-64 makes 2/5 as many)")
	fl.IntVar(&raftTruncate, "raft-truncate", benchRaftTruncate, "entries raft-truncate deletes from the head of a log of 1.1 times as many (raft-getlog reads as many)")
	fl.IntVar(&raftApplies, "raft-applies", benchRaftApplies, "applies of raft-apply, one at a time (raft-apply-64 makes 8 times as many)")
	fl.IntVar(&rounds, "rounds", benchCount, "rounds over all peers: every figure is the median of its rounds, shown with their range [min-max], and every ratio the median of its per-round ratios")
	fl.IntVar(&count, "count", 0, "the old name of --rounds")
	fl.MarkHidden("count")
	fl.IntVar(&targetCount, "target-count", 0, "rounds of what the shared mode's targets compare (pagoda and pagoda-exclusive in lookup-tx, commit and commit-8; beside) when more than --rounds (default 3)")
	fl.DurationVar(&benchtime, "benchtime", 0, "target time per read and fs measurement (default 1s; 500ms for reads, 200ms for fs with --quick)")
	fl.BoolVar(&sqliteDefaults, "sqlite-defaults", false, "run mattn and modernc with SQLite's default settings (no mmap, 2 MB cache)")
	fl.MarkHidden("benchtime")
	cmd.AddCommand(newBenchChildCommand())
	return cmd
}

// list splits a comma-separated flag value, dropping empty items; an
// empty list is an error.
func list(s, flag string) ([]string, error) {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty list (%q)", flag, s)
	}
	return out, nil
}

// newBenchChildCommand is pagoda bench child, which pagoda bench runs in
// child processes to measure the cache workload of one peer at one size;
// the arguments are bench's own business (bench.RunChild).
func newBenchChildCommand() *cobra.Command {
	return &cobra.Command{
		Use:                benchChildCommand,
		Short:              "Measure one peer and size of the cache workload (internal to pagoda bench)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return bench.RunChild(args, cmd.OutOrStdout())
		},
	}
}
