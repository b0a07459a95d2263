package command

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pagodadb/pagoda/internal/bench"
)

func init() { extraCommands = append(extraCommands, newBenchCommand) }

// Settings of pagoda bench. Building the 1,000,000-row files takes about
// 2 s on a 2-core machine (once; later runs reuse them), so --quick keeps
// the full table and only measures for less time, in one round: about 8 s
// in all on that machine, against 30 s without it.
const (
	benchRows      = 1_000_000
	benchValueSize = 100
	benchTime      = time.Second
	benchCount     = 3
	benchQuickTime = 500 * time.Millisecond
	benchDirName   = "pagoda-bench"
)

func newBenchCommand() *cobra.Command {
	var (
		quick          bool
		rows           int
		dir            string
		peers          string
		count          int
		benchtime      time.Duration
		sqliteDefaults bool
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark pagoda against SQLite (mattn, modernc) and bbolt",
		Long: `Benchmark pagoda against mattn/go-sqlite3, modernc.org/sqlite and bbolt.

SQLite (mattn/go-sqlite3) writes a table CREATE TABLE t(id INTEGER PRIMARY
KEY, v BLOB) with rowids 1..N and 100-byte random values, in WAL mode; bbolt
gets the same rows under 8-byte big-endian keys. The files are cached under
--dir by their parameters. In one process, one peer after the other, every
peer is checked against the data and then measured: random point lookups by
rowid, and a full scan in rowid order reading every value. Without --quick
the peers are measured in 3 rounds and each number is the median.

The table gives ns/op, allocs/op and pagoda's speed-up over each peer (the
peer's ns/op divided by pagoda's), then the targets of the issue. Progress
goes to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := bench.Config{
				Dir:         dir,
				Fixture:     bench.FixtureOptions{Rows: rows, ValueSize: benchValueSize},
				Benchtime:   benchtime,
				Count:       count,
				PeerOptions: bench.PeerOptions{SQLiteDefaults: sqliteDefaults},
				Progress:    cmd.ErrOrStderr(),
			}
			mode := "full"
			if quick {
				mode = "quick"
			}
			if cfg.Benchtime == 0 {
				cfg.Benchtime = benchTime
				if quick {
					cfg.Benchtime = benchQuickTime
				}
			}
			if cfg.Count == 0 {
				cfg.Count = benchCount
				if quick {
					cfg.Count = 1
				}
			}
			for _, p := range strings.Split(peers, ",") {
				if p = strings.TrimSpace(p); p == "" {
					continue
				}
				if _, err := bench.NewPeer(p); err != nil {
					return err
				}
				cfg.Peers = append(cfg.Peers, p)
			}
			if len(cfg.Peers) == 0 {
				return fmt.Errorf("no peers to measure (--peers %q)", peers)
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
	fl.BoolVar(&quick, "quick", false, "measure for less time, in one round (the run takes seconds, not minutes)")
	fl.IntVar(&rows, "rows", benchRows, "rows in the table")
	fl.StringVar(&dir, "dir", filepath.Join(os.TempDir(), benchDirName), "directory caching the benchmark files")
	fl.StringVar(&peers, "peers", strings.Join(bench.PeerNames, ","), "comma-separated peers to measure")
	fl.IntVar(&count, "count", 0, "rounds over all peers, reporting medians (default 3, 1 with --quick)")
	fl.DurationVar(&benchtime, "benchtime", 0, "target time per measurement (default 1s, 500ms with --quick)")
	fl.BoolVar(&sqliteDefaults, "sqlite-defaults", false, "run mattn and modernc with SQLite's default settings (no mmap, 2 MB cache)")
	fl.MarkHidden("benchtime")
	return cmd
}
