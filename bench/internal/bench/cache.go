package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"time"
)

// The cache workload prices each engine's memory and speed at a few sizes:
// a fresh store gets keys inserted (TxRows per transaction, random order),
// read back (all of them, in another random order, in one read
// transaction) and deleted (TxRows per transaction, random order). It
// reports ns/op for each phase, the size of the store's files after the
// inserts and, when each (peer, size) runs in a child process of its own,
// the child's peak resident memory: everything the engine kept, Go heap,
// C heap (mattn) and mapped pages alike.

// CacheWorkload is the name of the cache workload.
const CacheWorkload = "cache"

// CacheResult is one measured (peer, keys) pair of the cache workload.
type CacheResult struct {
	Peer     string  `json:"peer"`
	Keys     int     `json:"keys"`
	Skipped  bool    `json:"skipped,omitempty"` // the peer has no store
	InsertNs float64 `json:"insert_ns"`         // per row, the median over rounds
	ReadNs   float64 `json:"read_ns"`
	DeleteNs float64 `json:"delete_ns"`
	// FileSize is the size of the store's files after the inserts, the
	// store open: database and WAL (and -shm), or pebble's directory.
	FileSize int64 `json:"file_size"`
	// MaxRSS is the peak resident memory of the child process, in bytes;
	// 0 when the pair ran in this process (no child) and it is unknown.
	MaxRSS int64 `json:"max_rss"`
	// Rounds are the results of each round, in round order, when this is
	// their median (medianCache).
	Rounds []CacheResult `json:"-"`
}

// noPeer is the peer name of a child that only prepares the keys and
// values and exits: the baseline of the memory column.
const noPeer = "none"

// MeasureCache runs the cache workload for peer with keys keys, in this
// process, in a new directory under dir that it removes afterwards. Its
// MaxRSS is 0.
func MeasureCache(dir, peer string, keys, txRows int, values FixtureOptions, popt PeerOptions) (res CacheResult, err error) {
	res = CacheResult{Peer: peer, Keys: keys}
	if txRows <= 0 {
		txRows = WriteOptions{}.withDefaults().TxRows
	}
	values = values.withDefaults()
	var s Store
	if peer != noPeer {
		if s, err = NewStore(peer, popt); err != nil {
			if Skipped(err) {
				res.Skipped = true
				return res, nil
			}
			return res, err
		}
	}
	d := newRowData(values, keys)
	inserts := shuffled(keys, values.Seed, saltInsert)
	reads := shuffled(keys, values.Seed, saltRead)
	deletes := shuffled(keys, values.Seed, saltDelete)
	if s == nil {
		return res, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	sdir, err := os.MkdirTemp(dir, peer+"-")
	if err != nil {
		return res, err
	}
	defer func() {
		if err = errors.Join(err, s.Close(), removeAll(sdir)); err != nil {
			err = fmt.Errorf("bench: %s: cache at %d keys: %w", peer, keys, err)
		}
	}()
	if err := s.Open(sdir, StoreOptions{}); err != nil {
		return res, fmt.Errorf("open: %w", err)
	}

	start := time.Now()
	if _, err := writeRows(s, d, inserts, txRows, false, time.Time{}); err != nil {
		return res, err
	}
	res.InsertNs = perOp(time.Since(start), keys)
	if res.FileSize, err = dirSize(sdir); err != nil {
		return res, err
	}
	want := newKeySet(keys, inserts)
	if err := checkRows(s, d, want); err != nil {
		return res, err
	}

	start = time.Now()
	if err := readAll(s, d, reads); err != nil {
		return res, err
	}
	res.ReadNs = perOp(time.Since(start), keys)

	start = time.Now()
	if _, err := writeRows(s, d, deletes, txRows, true, time.Time{}); err != nil {
		return res, err
	}
	res.DeleteNs = perOp(time.Since(start), keys)
	return res, checkRows(s, d, newKeySet(keys, nil))
}

func perOp(d time.Duration, ops int) float64 { return float64(d.Nanoseconds()) / float64(ops) }

// readAll looks up every key of keys in one read transaction and checks
// each value.
func readAll(s Store, d *rowData, keys []int64) (err error) {
	if err := s.BeginRead(); err != nil {
		return err
	}
	defer func() {
		if eerr := s.EndRead(); err == nil {
			err = eerr
		}
	}()
	for _, k := range keys {
		v, err := s.Get(k)
		if err != nil {
			return fmt.Errorf("get %d: %w", k, err)
		}
		if !bytes.Equal(v, d.value(k)) {
			return fmt.Errorf("get %d: value %x, want %x", k, v, d.value(k))
		}
	}
	return nil
}

// childArgs are the arguments of a child measuring one (peer, keys) pair,
// parsed by RunChild.
func childArgs(dir, peer string, keys, txRows int, rows FixtureOptions, popt PeerOptions) []string {
	rows = rows.withDefaults()
	return []string{
		"-dir", dir,
		"-peer", peer,
		"-keys", strconv.Itoa(keys),
		"-tx", strconv.Itoa(txRows),
		"-value-size", strconv.Itoa(rows.ValueSize),
		"-seed", strconv.FormatUint(rows.Seed, 10),
		"-sqlite-defaults=" + strconv.FormatBool(popt.SQLiteDefaults),
	}
}

// RunChild is the main function of a child process of the cache workload
// (pagoda bench child): it parses args as Run passes them, runs
// MeasureCache in a new directory under the -dir given, and writes the
// CacheResult as JSON to w, with MaxRSS the peak resident memory of the
// process (0 where the OS does not tell). With -memory-rows it runs the
// memory workload instead, with -memory-rand-rows (and -limit) the
// memory-rand workload; with the first argument beside, it is the reader
// of the beside workload.
func RunChild(args []string, w io.Writer) error {
	if len(args) > 0 && args[0] == besideChild {
		return runBesideChild(args[1:], w)
	}
	fs := flag.NewFlagSet("pagoda bench child", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		dir, peer            string
		keys, txRows, vsize  int
		seed                 uint64
		sqliteDefaults, help bool
		memoryRows           int
		memoryRandRows       int
		limit                time.Duration
	)
	fs.StringVar(&dir, "dir", os.TempDir(), "directory for the store")
	fs.StringVar(&peer, "peer", "", "peer to measure, or "+noPeer)
	fs.IntVar(&keys, "keys", 0, "keys")
	fs.IntVar(&txRows, "tx", 0, "rows per write transaction")
	fs.IntVar(&vsize, "value-size", 0, "bytes per value")
	fs.Uint64Var(&seed, "seed", 0, "seed of the values and orders")
	fs.BoolVar(&sqliteDefaults, "sqlite-defaults", false, "SQLite's default settings")
	fs.BoolVar(&help, "h", false, "help")
	fs.IntVar(&memoryRows, "memory-rows", 0, "run the memory workload with this many rows instead")
	fs.IntVar(&memoryRandRows, "memory-rand-rows", 0, "run the memory-rand workload with this many rows instead")
	fs.DurationVar(&limit, "limit", 0, "stop the memory-rand load after this long (0: never)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("bench child: %w", err)
	}
	if help || fs.NArg() > 0 || peer == "" || keys < 1 {
		return fmt.Errorf("bench child: usage: child -peer NAME -keys N [-dir D -tx N -value-size N -seed N -sqlite-defaults]; an internal command of pagoda bench")
	}
	if memoryRandRows > 0 {
		res, err := MeasureMemoryRand(dir, peer, memoryRandRows, FixtureOptions{ValueSize: vsize, Seed: seed}, limit)
		if err != nil {
			return err
		}
		return json.NewEncoder(w).Encode(res)
	}
	if memoryRows > 0 {
		res, err := MeasureMemory(dir, peer, memoryRows, FixtureOptions{ValueSize: vsize, Seed: seed}, PeerOptions{SQLiteDefaults: sqliteDefaults})
		if err != nil {
			return err
		}
		return json.NewEncoder(w).Encode(res)
	}
	res, err := MeasureCache(dir, peer, keys, txRows, FixtureOptions{ValueSize: vsize, Seed: seed}, PeerOptions{SQLiteDefaults: sqliteDefaults})
	if err != nil {
		return err
	}
	res.MaxRSS = maxRSS()
	return json.NewEncoder(w).Encode(res)
}

// runChild runs one (peer, keys) pair of the cache workload in a child
// process started with command (the program and its first arguments, to
// which childArgs are appended) and returns its result.
func runChild(command []string, dir, peer string, keys, txRows int, rows FixtureOptions, popt PeerOptions) (CacheResult, error) {
	args := append(command[1:len(command):len(command)], childArgs(dir, peer, keys, txRows, rows, popt)...)
	cmd := exec.Command(command[0], args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return CacheResult{}, fmt.Errorf("bench: %s: cache at %d keys: child process: %w\n%s", peer, keys, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var res CacheResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return CacheResult{}, fmt.Errorf("bench: %s: cache at %d keys: child output %q: %w", peer, keys, stdout.String(), err)
	}
	if res.Peer != peer || res.Keys != keys {
		return CacheResult{}, fmt.Errorf("bench: %s: cache at %d keys: child measured %s at %d keys", peer, keys, res.Peer, res.Keys)
	}
	return res, nil
}

// maxRSSUnit is the unit of Rusage.Maxrss: bytes on macOS, KiB elsewhere.
func maxRSSUnit() int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return 1
	}
	return 1024
}
