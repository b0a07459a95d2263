package sharetest

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"testing"

	"github.com/pagodadb/pagoda"
)

// A pagoda child is the test binary run with PAGODA_SHARE_CHILD set to its
// role; PAGODA_SHARE_PATH names the database, PAGODA_SHARE_ARGS holds its
// key=value arguments.
const (
	envChild = "PAGODA_SHARE_CHILD"
	envPath  = "PAGODA_SHARE_PATH"
	envArgs  = "PAGODA_SHARE_ARGS"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(envChild); role != "" {
		if err := child(role, os.Getenv(envPath), parseArgs(os.Getenv(envArgs))); err != nil {
			fmt.Printf("error %s: %v\n", role, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	code := m.Run()
	removeCLI()
	os.Exit(code)
}

// args are a child's arguments.
type args map[string]string

func parseArgs(s string) args {
	a := args{}
	for _, f := range strings.Fields(s) {
		k, v, _ := strings.Cut(f, "=")
		a[k] = v
	}
	return a
}

func (a args) int(k string, def int) int {
	if v, ok := a[k]; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			panic(fmt.Sprintf("argument %s=%q", k, v))
		}
		return n
	}
	return def
}

func (a args) ms(k string, def time.Duration) time.Duration {
	return time.Duration(a.int(k, int(def/time.Millisecond))) * time.Millisecond
}

// say prints one line in one write(2), so that lines of a child killed
// mid-write are never half there.
func say(format string, v ...any) {
	os.Stdout.WriteString(fmt.Sprintf(format, v...) + "\n")
}

func child(role, path string, a args) error {
	opts := &pagoda.Options{
		Timeout:         a.ms("timeout", 10*time.Second),
		CheckpointPages: a.int("cpages", 0),
		CacheSize:       a.int("cache", 0),
	}
	db, err := pagoda.Open(path, opts)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	switch role {
	case "writer":
		err = writer(db, a)
	case "reader":
		err = reader(db, a)
	case "check":
		err = checker(db)
	default:
		err = fmt.Errorf("no role %q", role)
	}
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	say("closed")
	return nil
}

// stdinClosed returns a flag set once standard input reaches its end.
func stdinClosed() *atomic.Bool {
	var done atomic.Bool
	go func() {
		var b [256]byte
		for {
			if _, err := os.Stdin.Read(b[:]); err != nil {
				done.Store(true)
				return
			}
		}
	}()
	return &done
}

// commands returns standard input's lines, closed at its end.
func commands() <-chan string {
	c := make(chan string)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			c <- sc.Text()
		}
		close(c)
	}()
	return c
}

var checkpointModes = []pagoda.CheckpointMode{pagoda.CheckpointPassive, pagoda.CheckpointFull, pagoda.CheckpointRestart, pagoda.CheckpointTruncate}

// writer commits transfers as writer who (argument who), n from 1: on its
// own until standard input ends, or driven (driven=1) by the lines it
// reads: "t" commits one, "c MODE" runs DB.Checkpoint(MODE) ("ckpt MODE
// REMAINING BUSY"). A transaction that finds the write lock taken past the
// timeout is tried again ("busy"). After a commit, with probability
// ckpt/1000, it runs a checkpoint of a random mode; a mode's ErrBusy is its
// outcome, not a failure.
func writer(db *pagoda.DB, a args) error {
	who := a["who"]
	r := rand.New(rand.NewPCG(uint64(a.int("seed", 1)), uint64(len(who))))
	padMax := a.int("pad", 2000)
	ckpt := a.int("ckpt", 0)
	pause := time.Duration(a.int("sleep", 0)) * time.Microsecond
	checkpoint := func(mode pagoda.CheckpointMode, after int64) error {
		left, err := db.Checkpoint(mode)
		if err != nil && !errors.Is(err, pagoda.ErrBusy) {
			return fmt.Errorf("checkpoint %d after %d: %w", mode, after, err)
		}
		say("ckpt %d %d %v", mode, left, err != nil)
		return nil
	}
	say("ready")
	var cmds <-chan string
	var stop *atomic.Bool
	if a["driven"] == "1" {
		cmds = commands()
	} else {
		stop = stdinClosed()
	}
	for n := int64(1); ; n++ {
		if cmds != nil {
			cmd, ok := <-cmds
			for ok && strings.HasPrefix(cmd, "c ") {
				mode, err := strconv.Atoi(cmd[2:])
				if err != nil {
					return fmt.Errorf("command %q", cmd)
				}
				if err := checkpoint(pagoda.CheckpointMode(mode), n-1); err != nil {
					return err
				}
				cmd, ok = <-cmds
			}
			if !ok {
				return nil
			}
			if cmd != "t" {
				return fmt.Errorf("command %q", cmd)
			}
		} else if stop.Load() {
			return nil
		}
		var seq int64
		for {
			err := db.Update(func(tx *pagoda.Tx) error {
				var err error
				seq, err = transfer(tx, r, who, n, padMax)
				return err
			})
			if err == nil {
				break
			}
			if errors.Is(err, pagoda.ErrBusy) {
				say("busy %v", err)
				continue
			}
			return fmt.Errorf("transfer %d: %w", n, err)
		}
		say("ack %s %d %d", who, n, seq)
		if ckpt > 0 && r.IntN(1000) < ckpt {
			if err := checkpoint(checkpointModes[r.IntN(len(checkpointModes))], n); err != nil {
				return err
			}
		}
		if pause > 0 {
			time.Sleep(pause)
		}
	}
}

// reader reads the bank and checks every snapshot ("bad ..." and an error
// when one is wrong, or goes back in time): on its own until standard
// input ends, printing "reads N SEQ" now and then, each read transaction
// held open for hold ms; or driven=1, one command a line: "r" reads in a
// transaction of its own, "begin" opens one and holds it, "read" reads in
// it, "digest" hashes every row in it ("digest HEX"), "end" ends it; each
// read prints "state SUM SEQ ROWS".
func reader(db *pagoda.DB, a args) error {
	hold := a.ms("hold", 0)
	var last int64
	read := func(tx *pagoda.Tx) (bankState, error) {
		s, err := readBank(tx)
		if err != nil {
			return s, err
		}
		if err := s.check(); err != nil {
			say("bad %v", err)
			return s, err
		}
		if s.seq < last {
			err := fmt.Errorf("seq %d after %d: back in time", s.seq, last)
			say("bad %v", err)
			return s, err
		}
		last = s.seq
		return s, nil
	}
	say("ready")
	if a["driven"] == "1" {
		var held *pagoda.Tx
		for cmd := range commands() {
			var s bankState
			var err error
			switch cmd {
			case "r":
				err = db.View(func(tx *pagoda.Tx) error {
					s, err = read(tx)
					return err
				})
			case "begin":
				held, err = db.Begin(false)
				if err == nil {
					say("begun")
				}
				continue
			case "read":
				s, err = read(held)
			case "digest":
				var d uint64
				if d, err = digest(held); err == nil {
					say("digest %016x", d)
					continue
				}
			case "end":
				err = held.Rollback()
				held = nil
				say("ended")
				continue
			default:
				err = fmt.Errorf("command %q", cmd)
			}
			if err != nil {
				return err
			}
			say("state %d %d %d", s.sum, s.seq, s.rows)
		}
		if held != nil {
			held.Rollback()
		}
		return nil
	}
	stop := stdinClosed()
	reads := 0
	report := time.Now()
	for !stop.Load() {
		err := db.View(func(tx *pagoda.Tx) error {
			_, err := read(tx)
			if hold > 0 {
				time.Sleep(hold)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("read after %d reads: %w", reads, err)
		}
		reads++
		if time.Since(report) > 250*time.Millisecond {
			say("reads %d %d", reads, last)
			report = time.Now()
		}
	}
	say("reads %d %d", reads, last)
	return nil
}

// digest hashes every row of the bank's tables that tx reads, its rowid and
// its record's bytes: two reads of one snapshot give the same.
func digest(tx *pagoda.Tx) (uint64, error) {
	h := fnv.New64a()
	for _, name := range []string{"acct", "meta", "log"} {
		tb, err := tx.Table(name)
		if err != nil {
			return 0, err
		}
		for rowid, rec := range tb.All() {
			fmt.Fprintf(h, "%s %d %d:", name, rowid, len(rec.Raw()))
			h.Write(rec.Raw())
		}
		if err := tx.Err(); err != nil {
			return 0, err
		}
	}
	return h.Sum64(), nil
}

// checker runs DB.Check, then reads the bank and every writer's log in one
// read transaction: "state SUM SEQ ROWS", a line "log WHO ROWS MAX" per
// writer, "checked".
func checker(db *pagoda.DB) error {
	if err := db.Check(); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	return db.View(func(tx *pagoda.Tx) error {
		s, err := readBank(tx)
		if err != nil {
			return err
		}
		logs, err := readLogs(tx)
		if err != nil {
			return err
		}
		say("state %d %d %d", s.sum, s.seq, s.rows)
		for who, w := range logs {
			say("log %s %d %d", who, w.rows, w.max)
		}
		say("checked")
		return nil
	})
}
