// Command bench is pagoda's benchmark: it runs the workloads of
// internal/bench against pagoda and its peers (mattn/go-sqlite3,
// modernc.org/sqlite, ncruces/go-sqlite3, zombiezen.com/go/sqlite, bbolt,
// pebble, the OS's filesystem, and raft-boltdb and raft-wal against
// raftstore) in one process run and prints the tables of BENCHMARKS.md. From the repository's root:
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
// about 10 s on a 2-core machine (once; later runs reuse them). Every
// workload runs benchCount rounds, --quick too; --quick measures each read
// workload for 500 ms instead of 1 s, stops a bulk load after 5 s instead
// of 30 s (the slower peers' random loads then show a lower bound), loads
// 500,000 rows in the memory workload instead of 10,000,000, and takes the
// benchQuick sizes for the others. memory-rand loads benchMemoryRandRows
// (issue #31's figure is for that size: pagoda takes about 4 s, mattn 10
// s on the project's 2-core machine), benchQuickMemoryRandRows with
// --quick, stopped after the bulk loads' limit.
const (
	benchRows             = 1_000_000
	benchValueSize        = 100
	benchTime             = time.Second
	benchCount            = 3
	benchTargetCount      = 3 // rounds of what issue #28's targets compare, --quick too
	benchQuickTime        = 500 * time.Millisecond
	benchLoadLimit        = 30 * time.Second
	benchQuickLimit       = 5 * time.Second
	benchMemoryRows       = 10_000_000
	benchQuickMemoryRows  = 500_000
	benchMemoryRandRows   = 1_000_000
	benchQuickMemRandRows = 250_000
	benchDirName          = "pagoda-bench"
	benchChildCommand     = "child"
	benchInserts          = 100_000
	benchCommits          = 300
	benchDefaultCaches    = "500,5000,50000"
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
	// --quick's sizes.
	benchQuickRows         = 250_000
	benchQuickInserts      = 50_000
	benchQuickRaftStores   = 200
	benchQuickRaftTruncate = 20_000
	benchQuickRaftApplies  = 100
)

func newBenchCommand() *cobra.Command {
	var (
		quick          bool
		memoryRows     int
		memoryRandRows int
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
		Short:         "Benchmark pagoda against SQLite (mattn, modernc, ncruces, zombiezen), bbolt, pebble, raft's log stores and the OS's filesystem",
		Long: `Benchmark pagoda against mattn/go-sqlite3, modernc.org/sqlite, the
cgo-free ncruces/go-sqlite3 and zombiezen.com/go/sqlite, bbolt and pebble
(and, in the raft workloads, raft-boltdb and raft-wal), in one process run,
one peer after the other.

Reads (lookup, lookup-tx, lookup-bucket, lookup-tx-bucket, scan,
scan-cursor, scan-bucket, scan-cursor-bucket). SQLite (mattn/go-sqlite3)
writes a table CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB) with rowids
1..N (--rows) and 100-byte random values, in WAL mode, and a second file
with the same rows in a pagoda bucket (CREATE TABLE "t"(key BLOB PRIMARY
KEY, value BLOB) STRICT, WITHOUT ROWID, keys the rowids as 8 big-endian
bytes); bbolt gets the same keys and values, written with its default
fill percent (0.5: the fixture is a bbolt file as an application with
default settings writes it; load-seq below sets 1.0, as bbolt advises
for append-only loads). The files are cached under --dir by their
parameters, and are built one row at a time: --rows 10000000 --workloads
lookup measures 10,000,000 rows in constant memory (about 4 GB of disk).
Every peer is checked against the data, then measured:
  lookup              random point lookups by rowid in one read transaction
  lookup-tx           each in a read transaction of its own, as a request
                      handler reads (pagoda View, Table, Get, Column)
  lookup-bucket       pagoda's bucket API (Bucket.Get) against bbolt's
  lookup-tx-bucket    the same, a View per lookup
  scan                a full scan in rowid order reading every value
                      (pagoda: Table.All, its iterator)
  scan-cursor         pagoda's table cursor (First, Next, Record) against
                      bbolt's cursor
  scan-bucket         the bucket's iterator (Bucket.All) against bbolt's
                      cursor
  scan-cursor-bucket  the bucket's cursor (First, Next, Value) against
                      bbolt's cursor
The -bucket and -cursor workloads run pagoda and bbolt only. mattn and
modernc read through database/sql, ncruces and zombiezen through their own
Conn and Stmt (ncruces's database/sql driver registers the name
"sqlite3", as mattn's does, so the two cannot share a binary), all with
the same statements and pragmas. pagoda opens the files writable, so in
the shared mode (the default: sqlite3 and other processes read and write
beside it); peer pagoda-exclusive, pagoda with Options.Exclusive, joins
lookup-tx, commit and commit-8 for the shared mode's targets, which
compare the two. pebble has no read workloads: its rows say skipped.
Then the memory floors: the SQLite file, mapped, read with no engine at
all: one random page after another with four lines of each loaded at once
(what a lookup's leaf costs from memory), and every line once in order
(what a scan's bytes cost); the targets quote them.

Writes (load-seq, load-rand, insert, delete, insert-bucket,
delete-bucket, commit, commit-8), each into fresh stores under --dir that
are removed afterwards, every commit durable (SQLite in WAL mode with
synchronous=FULL, bbolt's defaults, pebble.Sync, pagoda's SyncFull), with
the same values and keys (rowids of the table above, or 8 big-endian
bytes for bbolt and pebble):
  load-seq   --rows rows in one transaction, keys in order, timed from
             Begin to the end of Close (bbolt sets FillPercent 1.0, as its
             documentation advises for append-only writes; pebble flushes
             its memtable before Close, inside the timing, so that its
             rows are in sstables as the others' are in their files)
  load-rand  the same, keys in random order; a load still running after
             --load-limit is stopped and its ns/row shown as a lower bound
             (bbolt's would take hours: it splits nodes only at commit)
  insert     --inserts random inserts, 1,000 per transaction
  delete     then deletes of a tenth of those keys, random order, 1,000
             per transaction
  insert-bucket, delete-bucket
             the same through pagoda's bucket API (Bucket.Put, Delete),
             against bbolt and pebble
  commit     --commits one-row transactions
  commit-8   the same from 8 goroutines at once (pagoda and bbolt: Batch;
             pebble: Set with Sync; SQLite: its one connection in turn)
Each store is closed, reopened and checked (every row scanned, some looked
up) after each workload, so that no peer wins by dropping writes. Beside
pagoda's insert, delete and commit figures the report prints their disk
floor: the bytes pagoda wrote to its WAL (for commit, 4 KiB per commit),
written to a plain file with one fdatasync per commit and nothing else.

Raft (raft selects them all; issue #32): hashicorp/raft's log stores,
pagoda's raftstore against raft-boltdb v2.3.0 and raft-wal v0.4.0, each
with its defaults (every StoreLogs durable), entries of 256 bytes:
  raft-store-1   --raft-stores StoreLogs of one entry into a fresh store
                 of each, the three stores interleaved call by call (so
                 that they meet the disk in the same state: its sync
                 latency drifts more than the stores differ)
  raft-store-64  2/5 as many StoreLogs of 64 entries, the same way
  raft-getlog    random GetLog from a log of 1.1 x --raft-truncate entries
  raft-truncate  DeleteRange of its first --raft-truncate entries (head
                 truncation after a snapshot); the file size after it
  raft-apply     a 3-node cluster in this process (raft.NewInmemTransport,
                 a counting state machine) with raftstore or raft-boltdb as
                 each node's log and stable store: --raft-applies Apply
                 through the leader, one at a time
  raft-apply-64  8 times as many, 64 in flight at a time
raft-boltdb is v2.3.0: v2.3.1 imports go-metrics/compat, which the
go-metrics raft v1.8.0 requires (v0.7.0) no longer has; v2.3.0 is the same
code with armon/go-metrics. Every store is checked after each workload.

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

Memory in random order (memory-rand; issue #31): the same, but
--memory-rand-rows rows (1,000,000; 250,000 with --quick, whose target
lines say so) with keys in random
order (a permutation computed key by key, so that no array of keys counts
in the child's memory; the same order for every peer), and each engine
with its default options: pagoda with a nil *Options (CacheSize 64 MiB),
SQLite in WAL mode with synchronous=FULL and its default cache (2 MB, no
mmap), bbolt and pebble as they come (pebble flushed before Close). The
table gives the load's time (Begin to the end of Close), ns/row, peak
anonymous and resident memory, and the files' size after Close; a load
still running after --load-limit (30s, 5s with --quick) is stopped and
rolled back, its figures lower bounds (bbolt's: it splits nodes only at
commit). Each child reopens its store and checks every key and some
values. Targets: pagoda's peak RSS under 200 MiB, its file no larger than
SQLite's.

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
reads and the fs workloads for less time, stops bulk loads sooner, and
makes the sizes smaller (unless given): 250,000 rows, 50,000 inserts, a
500,000-row memory load, a 250,000-row memory-rand load, 200
StoreLogs, 20,000 entries truncated, 100 applies. What the shared mode's
targets compare (pagoda and pagoda-exclusive in lookup-tx, commit and
commit-8; beside) is measured in --target-count rounds when that is more
than --rounds. Progress goes to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if quick {
				// Smaller sizes, unless given: still 3 rounds of everything.
				for _, q := range []struct {
					flag string
					v    *int
					n    int
				}{{"rows", &rows, benchQuickRows}, {"inserts", &inserts, benchQuickInserts}, {"raft-stores", &raftStores, benchQuickRaftStores},
					{"raft-truncate", &raftTruncate, benchQuickRaftTruncate}, {"raft-applies", &raftApplies, benchQuickRaftApplies},
					{"memory-rand-rows", &memoryRandRows, benchQuickMemRandRows}} {
					if !cmd.Flags().Changed(q.flag) {
						*q.v = q.n
					}
				}
			}
			cfg := bench.Config{
				Dir:         dir,
				Fixture:     bench.FixtureOptions{Rows: rows, ValueSize: benchValueSize},
				Benchtime:   benchtime,
				Count:       rounds,
				TargetCount: targetCount,
				PeerOptions: bench.PeerOptions{SQLiteDefaults: sqliteDefaults},
				Writes:      bench.WriteOptions{LoadRows: rows, InsertRows: inserts, Commits: commits, Limit: limit, MemoryRows: memoryRows, MemoryRandRows: memoryRandRows},
				FS:          bench.FSOptions{Files: fsFiles, Blobs: fsBlobs, SrcDir: fsSrc},
				Beside:      bench.BesideOptions{Rows: besideRows, Time: besideTime},
				Raft:        bench.RaftOptions{Store1: raftStores, Truncate: raftTruncate, Applies: raftApplies},
				Progress:    cmd.ErrOrStderr(),
			}
			if rows < 1 || memoryRandRows < 1 || inserts < 1 || commits < 1 || fsFiles < 1 || fsBlobs < 1 || besideRows < 1 || raftStores < 1 || raftTruncate < 1 || raftApplies < 1 {
				return fmt.Errorf("--rows, --memory-rand-rows, --inserts, --commits, --fs-files, --fs-blobs, --beside-rows and the --raft sizes must be positive")
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
			cfg.Writes.MemoryRandLimit = cfg.Writes.Limit
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
	fl.BoolVar(&quick, "quick", false, "smaller sizes (unless given), reads and fs workloads measured for less time, bulk loads stopped sooner: still --rounds rounds of every workload")
	fl.IntVar(&rows, "rows", benchRows, "rows in the read table and in each bulk load")
	fl.StringVar(&dir, "dir", filepath.Join(os.TempDir(), benchDirName), "directory caching the read files and holding the written stores")
	fl.StringVar(&peers, "peers", strings.Join(append(slices.Clone(bench.PeerNames), "pagoda-tx", "pagoda-sqlite3", "os", "walkdir"), ","), "comma-separated peers to measure (os: the fs workloads' os.DirFS; pagoda-tx: fsys in one read transaction; pagoda-sqlite3: fsys over the archive sqlite3 -Ac . made; walkdir: fs.WalkDir over listings read beforehand)")
	fl.StringVar(&workloads, "workloads", strings.Join(bench.WorkloadNames(), ","), "comma-separated workloads to run")
	fl.IntVar(&inserts, "inserts", benchInserts, "random inserts of the insert workload (delete deletes a tenth of them)")
	fl.IntVar(&commits, "commits", benchCommits, "one-row transactions of the commit workload")
	fl.StringVar(&cacheKeys, "cache-keys", benchDefaultCaches, "comma-separated key counts of the cache workload")
	fl.IntVar(&memoryRows, "memory-rows", 0, "rows of the memory workload (default 10,000,000, 500,000 with --quick)")
	fl.IntVar(&memoryRandRows, "memory-rand-rows", benchMemoryRandRows, "rows of the memory-rand workload (250,000 with --quick)")
	fl.DurationVar(&limit, "load-limit", 0, "time after which a bulk load (memory-rand's too) is stopped (default 30s, 5s with --quick)")
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
