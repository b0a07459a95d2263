package crash

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
)

// The writer process. The test binary runs it when PAGODA_CRASH_CHILD
// names a database; PAGODA_CRASH_CONFIG carries the rest.
const (
	envChild  = "PAGODA_CRASH_CHILD"
	envConfig = "PAGODA_CRASH_CONFIG"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(envChild); path != "" {
		if err := child(path, os.Getenv(envConfig)); err != nil {
			fmt.Fprintf(os.Stderr, "crash writer: %v\n", err)
			os.Exit(3)
		}
		os.Exit(0) // not reached: the writer runs until killed
	}
	os.Exit(m.Run())
}

// childConfig is what a writer run is told.
type childConfig struct {
	seed     uint64 // the workload
	runSeed  uint64 // the writer's own choices (checkpoints, reopens)
	pageSize int    // of the database, when the writer creates it
	cache    int    // Options.CacheSize (0: default)
	ckpt     int    // Options.CheckpointPages (0: default)
	sync     pagoda.SyncMode
	journal  pagoda.JournalMode // Options.JournalMode
}

func (c childConfig) String() string {
	return fmt.Sprintf("%d %d %d %d %d %d %d", c.seed, c.runSeed, c.pageSize, c.cache, c.ckpt, c.sync, c.journal)
}

func parseConfig(s string) (childConfig, error) {
	f := strings.Fields(s)
	if len(f) != 7 {
		return childConfig{}, fmt.Errorf("bad %s %q", envConfig, s)
	}
	var n [7]uint64
	for i := range f {
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return childConfig{}, fmt.Errorf("bad %s %q: %v", envConfig, s, err)
		}
		n[i] = v
	}
	return childConfig{seed: n[0], runSeed: n[1], pageSize: int(n[2]), cache: int(n[3]), ckpt: int(n[4]), sync: pagoda.SyncMode(n[5]), journal: pagoda.JournalMode(n[6])}, nil
}

// child opens the database, finds the last committed transaction, prints
// "ready K", then commits transactions K+1, K+2, ... printing a line that
// starts with k once its Commit has returned nil. It returns only on an
// error.
func child(path, config string) error {
	cfg, err := parseConfig(config)
	if err != nil {
		return err
	}
	opts := &pagoda.Options{
		Sync:            cfg.sync,
		PageSize:        cfg.pageSize,
		CacheSize:       cfg.cache,
		CheckpointPages: cfg.ckpt,
		JournalMode:     cfg.journal,
	}
	db, err := pagoda.Open(path, opts)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	var k int64
	if err := db.View(func(tx *pagoda.Tx) error {
		k, err = metaK(tx)
		return err
	}); err != nil {
		return fmt.Errorf("read k: %w", err)
	}
	m := newModel(cfg.seed)
	m.advance(k)
	// One write(2) per line: a pipe write this small is atomic, so the
	// parent never sees half a number.
	if _, err := os.Stdout.WriteString("ready " + strconv.FormatInt(k, 10) + "\n"); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(cfg.runSeed, 1))
	line := make([]byte, 0, 64)
	var prev pagoda.Stats
	for {
		ops := m.step()
		k := m.k
		if err := db.Update(func(tx *pagoda.Tx) error { return apply(tx, k, ops) }); err != nil {
			return fmt.Errorf("transaction %d: %w", k, err)
		}
		// "k spilled checkpoints": the pages this transaction spilled
		// before its commit and the checkpoints its commit ran.
		s := db.Stats()
		line = strconv.AppendInt(line[:0], k, 10)
		line = append(line, ' ')
		line = strconv.AppendUint(line, s.Spilled-prev.Spilled, 10)
		line = append(line, ' ')
		line = strconv.AppendUint(line, s.Checkpoints-prev.Checkpoints, 10)
		line = append(line, '\n')
		prev = s
		if _, err := os.Stdout.Write(line); err != nil {
			return err
		}
		switch p := r.IntN(100); {
		case p < 3:
			if _, err := db.Checkpoint(pagoda.CheckpointPassive); err != nil {
				return fmt.Errorf("checkpoint after %d: %w", k, err)
			}
			prev = db.Stats()
		case p < 5:
			// Close checkpoints and removes the WAL; a kill may land in
			// the middle of it, or in the Open that follows.
			if err := db.Close(); err != nil {
				return fmt.Errorf("close after %d: %w", k, err)
			}
			if db, err = pagoda.Open(path, opts); err != nil {
				return fmt.Errorf("reopen after %d: %w", k, err)
			}
			prev = pagoda.Stats{}
		}
	}
}
