package pager_test

// The fault-injection crash loop: a workload of write transactions runs
// through a vfs.Fault, once cleanly to count its I/O operations, then once
// per operation index k (all of them with PAGODA_CRASH_ALL=1, else 100
// spread evenly, 15 with -short) and fault kind:
//
//	crash         operation k and all after it fail: the process dies
//	              there.
//	fail-once     operation k fails; the workload goes on committing.
//	fail-forever  every write, sync, truncation, creation, removal and
//	              directory sync from k on fails; the workload goes on
//	              trying.
//
// The fail kinds then close the pager, and the files are checked as they
// are (as another process would find them). For every kind, the files are
// then rewritten three times, from the same moment, to what a power loss
// could leave (vfs.CrashMode): nothing that was not synced, a prefix of the
// unsynced writes and a torn one, and any subset of their sectors; each is
// checked.
//
// The workload (run) starts from a SQLite-made table of 30 rows; 40
// transactions insert, update and delete rows through internal/btree, some
// large enough to spill past a 16-page cache, some freeing many pages; a
// checkpoint comes every 40 WAL frames; a snapshot is held across some
// commits (partial checkpoints); halfway the pager is closed and opened
// again.
//
// After each, the pager reopens the files with the real file system and the
// test checks that:
//
//  1. they open, and the state is exactly that after some transaction u:
//     the last one whose Commit returned nil, or one after it whose Commit
//     returned an error (a commit that fails because the disk does is in
//     doubt, as one interrupted by a crash): never an earlier state (a
//     lost commit), and never a failed transaction that a later successful
//     commit followed. Transaction j writes j into the header's
//     user_version field, so u is read there; the rows (a table whose
//     values are derived from the transaction that wrote them) must equal
//     the model's after u;
//  2. every page is as it was when u committed in the workload (a hash of
//     the page images, free-list leaves excepted, whose content is
//     meaningless), and internal/check finds no broken invariant;
//  3. the reopened pager commits one more transaction and closes cleanly;
//  4. SQLite (modernc.org/sqlite), opening a copy of the files as found,
//     says PRAGMA integrity_check is ok and sees the same user_version and
//     row count.
//
// The test lives in package pager_test because it drives the pager through
// internal/btree (so that the file is a real SQLite database) and checks it
// with internal/check, which imports the pager.

import (
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/check"
	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/pager"
	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/vfs"
)

const (
	crashPageSize = 512
	crashTxs      = 40
	crashRoot     = 2 // root page of table t in the template
	crashSeed     = 20240611
	crashRows0    = 30 // rows the template starts with
)

// crashOptions are the workload's pager options: small pages, a cache of
// 16 pages (so big transactions spill, to the WAL and past the end of the
// file), and a checkpoint every 40 frames.
func crashOptions(fsys vfs.FS) pager.Options {
	return pager.Options{PageSize: crashPageSize, CacheSize: 16 * crashPageSize, CheckpointPages: 40, FS: fsys}
}

// rows is the model of table t: rowid to value.
type rows map[int64][]byte

// crashValue is the value transaction j writes in row rowid: j and rowid,
// then bytes derived from them.
func crashValue(j int, rowid int64, n int) []byte {
	b := make([]byte, max(n, 12))
	binary.BigEndian.PutUint32(b, uint32(j))
	binary.BigEndian.PutUint64(b[4:], uint64(rowid))
	for i := 12; i < len(b); i++ {
		b[i] = byte(j*131 + int(rowid)*7 + i)
	}
	return b
}

type rowOp struct {
	del   bool
	rowid int64
	val   []byte
}

// planTx returns the changes of transaction j to a table whose rows are m.
// Every ninth deletes about half the rows (freeing many pages, overflow
// chains included); every fifth otherwise inserts 40 rows of 300 to 700
// bytes (more pages than the cache holds); the others insert one to four
// rows (a quarter of them large enough for overflow pages), update up to
// two and delete up to two.
func planTx(j int, m rows) []rowOp {
	rng := rand.New(rand.NewPCG(crashSeed, uint64(j)))
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var ops []rowOp
	switch {
	case j%9 == 0:
		for _, k := range keys {
			if rng.IntN(2) == 0 {
				ops = append(ops, rowOp{del: true, rowid: k})
			}
		}
	case j%5 == 0:
		for i := range 40 {
			r := int64(j*1000 + i)
			ops = append(ops, rowOp{rowid: r, val: crashValue(j, r, 300+rng.IntN(400))})
		}
	default:
		size := func() int {
			if rng.IntN(4) == 0 {
				return 600 + rng.IntN(1500)
			}
			return 20 + rng.IntN(200)
		}
		for i := range 1 + rng.IntN(4) {
			r := int64(j*1000 + i)
			ops = append(ops, rowOp{rowid: r, val: crashValue(j, r, size())})
		}
		rng.Shuffle(len(keys), func(a, b int) { keys[a], keys[b] = keys[b], keys[a] })
		nu, nd := rng.IntN(3), rng.IntN(3)
		for i, k := range keys {
			switch {
			case i < nu:
				ops = append(ops, rowOp{rowid: k, val: crashValue(j, k, size())})
			case i < nu+nd:
				ops = append(ops, rowOp{del: true, rowid: k})
			}
		}
	}
	return ops
}

func applyModel(m rows, ops []rowOp) rows {
	n := make(rows, len(m)+len(ops))
	for k, v := range m {
		n[k] = v
	}
	for _, op := range ops {
		if op.del {
			delete(n, op.rowid)
		} else {
			n[op.rowid] = op.val
		}
	}
	return n
}

// applyTx makes transaction j's changes through the b-tree layer.
func applyTx(w *pager.WriteTx, j int, ops []rowOp) error {
	for _, op := range ops {
		var err error
		if op.del {
			_, err = btree.TableDelete(w, crashRoot, op.rowid)
		} else {
			rec := format.AppendRecord(nil, []format.Value{format.NullValue(), format.BlobValue(op.val)})
			_, err = btree.TableInsert(w, crashRoot, op.rowid, rec)
		}
		if err == nil {
			err = w.Settle()
		}
		if err != nil {
			return err
		}
	}
	pg, err := w.Write(1)
	if err != nil {
		return err
	}
	format.Header(pg).SetUserVersion(uint32(j))
	return nil
}

// digest is a hash of table rows, in rowid order.
func digest(m rows) [32]byte {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := sha256.New()
	var b [16]byte
	for _, k := range keys {
		binary.BigEndian.PutUint64(b[:], uint64(k))
		binary.BigEndian.PutUint64(b[8:], uint64(len(m[k])))
		h.Write(b[:])
		h.Write(m[k])
	}
	return [32]byte(h.Sum(nil))
}

// readTable reads table t of a snapshot into a model.
func readTable(s *pager.Snapshot) (rows, error) {
	m := rows{}
	var c btree.Cursor
	c.Init(s, crashRoot, true, nil)
	for ok := c.First(); ok; ok = c.Next() {
		rowid, payload, _, err := c.Entry()
		if err != nil {
			return nil, err
		}
		v, ok, err := format.RecordField(payload, 1)
		if err != nil || !ok || v.Kind != format.KindBlob {
			return nil, fmt.Errorf("row %d: bad record (%v)", rowid, err)
		}
		m[rowid] = slices.Clone(v.Bytes)
	}
	return m, c.Err()
}

// pageHash hashes the page count and every page of a snapshot but the
// free-list leaves.
func pageHash(s *pager.Snapshot) ([32]byte, error) {
	leaves := map[uint32]bool{}
	if err := pager.WalkFreelist(s, func(pgno uint32, trunk bool) error {
		if !trunk {
			leaves[pgno] = true
		}
		return nil
	}); err != nil {
		return [32]byte{}, err
	}
	h := sha256.New()
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], s.PageCount())
	h.Write(b[:])
	for pg := uint32(1); pg <= s.PageCount(); pg++ {
		if leaves[pg] {
			h.Write([]byte("free"))
			continue
		}
		data, err := s.Page(pg)
		if err != nil {
			return [32]byte{}, err
		}
		h.Write(data)
	}
	return [32]byte(h.Sum(nil)), nil
}

// crashRun is what one run of the workload did.
type crashRun struct {
	openErr  error
	acked    []int            // transactions whose Commit returned nil, in order
	failed   []int            // transactions whose Commit returned an error
	models   map[int]rows     // the rows after each transaction attempted (0: the template's)
	pages    map[int][32]byte // the page hash after each acknowledged commit
	closeErr error
	// inProcess is the first time the pager itself, after a commit,
	// showed rows other than the model's.
	inProcess error
}

func (r *crashRun) lastAcked() int {
	if len(r.acked) == 0 {
		return 0
	}
	return r.acked[len(r.acked)-1]
}

// crashEnv is shared by the runs of one test.
type crashEnv struct {
	// journal: the template is a rollback-journal database, which the
	// workload writes through its journal (rollback.go); else WAL mode.
	journal  bool
	template string // the database the workload starts from
	model0   rows
	ops      []vfs.Op // the clean run's operations
	ref      *crashRun
}

// newCrashEnv makes the template with SQLite: a WAL-mode database (a
// rollback-journal one with journal) of 512-byte pages with table t (root
// page 2) holding crashRows0 rows.
func newCrashEnv(t *testing.T, journal bool) *crashEnv {
	env := &crashEnv{journal: journal, template: filepath.Join(t.TempDir(), "template.db"), model0: rows{}}
	mode := "PRAGMA journal_mode=WAL"
	if journal {
		mode = "PRAGMA journal_mode=DELETE"
	}
	stmts := []string{
		fmt.Sprintf("PRAGMA page_size=%d", crashPageSize),
		mode,
		"CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)",
	}
	for r := int64(1); r <= crashRows0; r++ {
		v := crashValue(0, r, 40+int(r)*23)
		env.model0[r] = v
		stmts = append(stmts, fmt.Sprintf("INSERT INTO t VALUES(%d, x'%x')", r, v))
	}
	sqltest.Exec(t, env.template, stmts...)
	if _, err := os.Stat(pager.WALPath(env.template)); err == nil {
		t.Fatal("SQLite left a WAL beside the template")
	}
	return env
}

// copyTemplate puts a fresh copy of the template in a new directory.
func (env *crashEnv) copyTemplate(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "crash.db")
	sqltest.CopyFile(t, env.template, path, false)
	return path
}

// run runs the workload on path through fsys. Halfway it closes the pager
// and opens it again (Close checkpoints and removes the WAL, the next
// commit creates another), and from time to time it holds a snapshot
// across a few commits, so that checkpoints stop short of the WAL's end.
func (env *crashEnv) run(path string, fsys *vfs.Fault, retryOpen bool) *crashRun {
	r := &crashRun{models: map[int]rows{0: env.model0}, pages: map[int][32]byte{}}
	open := func() (*pager.Pager, error) {
		p, err := pager.Open(path, crashOptions(fsys))
		if err != nil && retryOpen {
			p, err = pager.Open(path, crashOptions(fsys))
		}
		return p, err
	}
	p, err := open()
	if err != nil {
		r.openErr = err
		return r
	}
	var reader *pager.Snapshot
	cur := env.model0
	for j := 1; j <= crashTxs && !fsys.Crashed(); j++ {
		// A snapshot held across commits keeps a rollback-journal
		// database's commits out (they wait for it): WAL mode only.
		if j%7 == 3 && reader == nil && !env.journal {
			reader = p.Snapshot()
		}
		if j%7 == 6 && reader != nil {
			reader.Release()
			reader = nil
		}
		if j == crashTxs/2 {
			if reader != nil {
				reader.Release()
				reader = nil
			}
			p.Close()
			if p, err = open(); err != nil {
				return r
			}
		}
		w, err := p.BeginWrite()
		if err != nil {
			break
		}
		ops := planTx(j, cur)
		next := applyModel(cur, ops)
		r.models[j] = next
		if err := applyTx(w, j, ops); err != nil {
			w.Rollback()
			continue
		}
		if err := w.Commit(); err != nil {
			r.failed = append(r.failed, j)
			continue
		}
		r.acked = append(r.acked, j)
		cur = next
		s := p.Snapshot()
		if h, err := pageHash(s); err == nil {
			r.pages[j] = h
		}
		// A read transaction of a shared database takes a lock of the
		// -shm file: on a disk that fails, it may fail, never read wrong.
		if got, err := readTable(s); r.inProcess == nil && (err != nil && !errors.Is(err, vfs.ErrCrashed) && !errors.Is(err, vfs.ErrInjected) || err == nil && digest(got) != digest(next)) {
			r.inProcess = fmt.Errorf("after commit %d the pager reads other rows than the model's (%v)", j, err)
		}
		s.Release()
	}
	if reader != nil {
		reader.Release()
	}
	r.closeErr = p.Close()
	return r
}

// verify checks the files at path against run r (see the file comment);
// ref supplies page hashes for transactions r did not acknowledge but the
// clean run did (the one in flight at a crash). With strict, no failed
// commit may be recovered, even the last. SQLite reads a copy of the files
// as found, made in directory tmp (it may rewrite them).
func (env *crashEnv) verify(path, tmp string, r, ref *crashRun, strict bool) error {
	cp := filepath.Join(tmp, "copy.db")
	for _, sfx := range []string{"", "-wal", "-journal"} {
		b, err := os.ReadFile(path + sfx)
		if err != nil {
			if sfx != "" && os.IsNotExist(err) {
				continue
			}
			return err
		}
		if err := os.WriteFile(cp+sfx, b, 0o644); err != nil {
			return err
		}
	}

	p, err := pager.Open(path, crashOptions(nil))
	if err != nil {
		return fmt.Errorf("reopen: %w", err)
	}
	defer p.Close()
	s := p.Snapshot()
	pg1, err := s.Page(1)
	if err != nil {
		s.Release()
		return err
	}
	u := int(format.Header(pg1).UserVersion())
	if env.journal {
		// A rollback-journal database stays one, with no WAL.
		if v := format.Header(pg1).ReadVersion(); v != format.FileFormatLegacy || p.WALFrames() != 0 {
			s.Release()
			return fmt.Errorf("state %d: read version %d, %d WAL frames: the rollback-journal database changed mode", u, v, p.WALFrames())
		}
	}
	last := r.lastAcked()
	if u != last && (strict || !(u > last && slices.Contains(r.failed, u))) {
		s.Release()
		return fmt.Errorf("recovered the state after transaction %d; the last acknowledged commit is %d (acknowledged %v, failed %v)", u, last, r.acked, r.failed)
	}
	got, err := readTable(s)
	if err != nil {
		s.Release()
		return fmt.Errorf("state %d: reading table t: %w", u, err)
	}
	if digest(got) != digest(r.models[u]) {
		s.Release()
		return fmt.Errorf("state %d: table t has %d rows, the model %d, and they differ", u, len(got), len(r.models[u]))
	}
	want, ok := r.pages[u]
	if !ok {
		want, ok = ref.pages[u]
	}
	if ok {
		h, err := pageHash(s)
		if err != nil {
			s.Release()
			return fmt.Errorf("state %d: %w", u, err)
		}
		if h != want {
			s.Release()
			return fmt.Errorf("state %d: the pages differ from those the commit wrote", u)
		}
	}
	if probs := check.Run(s, nil, nil); len(probs) > 0 {
		s.Release()
		return fmt.Errorf("state %d: check: %v", u, probs)
	}
	s.Release()

	// The recovered database takes a new commit.
	w, err := p.BeginWrite()
	if err != nil {
		return err
	}
	ops := planTx(crashTxs+1, got)
	if err := applyTx(w, crashTxs+1, ops); err != nil {
		w.Rollback()
		return fmt.Errorf("writing after recovery: %w", err)
	}
	if err := w.Commit(); err != nil {
		return fmt.Errorf("commit after recovery: %w", err)
	}
	s = p.Snapshot()
	after, err := readTable(s)
	s.Release()
	if err != nil || digest(after) != digest(applyModel(got, ops)) {
		return fmt.Errorf("the commit after recovery reads back wrong (%v)", err)
	}
	if err := p.Close(); err != nil {
		return fmt.Errorf("close after recovery: %w", err)
	}

	// SQLite agrees.
	db, err := sql.Open("sqlite", cp)
	if err != nil {
		return err
	}
	defer db.Close()
	var ic string
	var uv, n int
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
		return fmt.Errorf("state %d: SQLite: integrity_check %q, %v", u, ic, err)
	}
	if err := db.QueryRow("PRAGMA user_version").Scan(&uv); err != nil || uv != u {
		return fmt.Errorf("state %d: SQLite recovers user_version %d (%v)", u, uv, err)
	}
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != len(got) {
		return fmt.Errorf("state %d: SQLite counts %d rows, pagoda %d (%v)", u, n, len(got), err)
	}
	return nil
}

// crashIndices returns the operation indices to fault for the kind-th
// fault kind: every one with PAGODA_CRASH_ALL=1, else n spread evenly,
// shifted per kind so that the kinds between them cover more indices.
func crashIndices(total, n, kind, kinds int) []int {
	if os.Getenv("PAGODA_CRASH_ALL") == "1" || n >= total {
		out := make([]int, total)
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for i := range n {
		k := (i*total + kind*total/(n*kinds)) / n
		if len(out) == 0 || out[len(out)-1] != k {
			out = append(out, k)
		}
	}
	return out
}

func TestCrashLoop(t *testing.T) { crashLoop(t, newCrashEnv(t, false), 100) }

// TestCrashLoopJournal is the crash loop over a rollback-journal database
// (rollback.go, rules 36 to 39): the journal written, synced, its count
// made valid, the pages written, the journal deleted, each crashed at and
// failed at, and every state a power loss could leave after it recovered
// from the journal as sqlite3 recovers it.
func TestCrashLoopJournal(t *testing.T) { crashLoop(t, newCrashEnv(t, true), 60) }

func crashLoop(t *testing.T, env *crashEnv, n int) {
	// The clean run: count the operations, keep them for messages.
	fsys := vfs.NewFault(vfs.OS)
	fsys.OnOp = func(op vfs.Op) { env.ops = append(env.ops, op) }
	path := env.copyTemplate(t)
	env.ref = env.run(path, fsys, false)
	if env.ref.openErr != nil || env.ref.closeErr != nil || len(env.ref.acked) != crashTxs {
		t.Fatalf("clean run: open %v, close %v, %d of %d commits", env.ref.openErr, env.ref.closeErr, len(env.ref.acked), crashTxs)
	}
	if err := env.verify(path, t.TempDir(), env.ref, env.ref, true); err != nil {
		t.Fatalf("clean run: %v", err)
	}
	perKind := map[vfs.OpKind]int{}
	for _, op := range env.ops {
		perKind[op.Kind]++
	}
	var parts []string
	for k := vfs.OpOpen; k <= vfs.OpSyncDir; k++ {
		if perKind[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", perKind[k], k))
		}
	}
	total := len(env.ops)
	t.Logf("workload: %d transactions, %d operations: %s", crashTxs, total, strings.Join(parts, ", "))

	kinds := []vfs.FaultKind{vfs.FaultCrash, vfs.FaultOnce, vfs.FaultForever}
	modes := []vfs.CrashMode{vfs.CrashDrop, vfs.CrashTorn, vfs.CrashReorder}
	if testing.Short() {
		n = 15
	}
	var runs, verifies, doubtful atomic.Int64
	start := time.Now()
	for ki, kind := range kinds {
		t.Run(kind.String(), func(t *testing.T) {
			t.Parallel()
			for _, k := range crashIndices(total, n, ki, len(kinds)) {
				fsys := vfs.NewFault(vfs.OS)
				fsys.SkipSync = true
				fsys.Inject(kind, k)
				path := env.copyTemplate(t)
				r := env.run(path, fsys, kind == vfs.FaultOnce)
				runs.Add(1)
				where := fmt.Sprintf("%s at operation %d (%s)", kind, k, env.ops[k])
				if r.inProcess != nil {
					t.Errorf("%s: %v", where, r.inProcess)
				}
				if len(r.failed) > 0 && r.failed[len(r.failed)-1] > r.lastAcked() {
					doubtful.Add(1)
				}
				// One failed operation is always undone (spoil works): a
				// commit that fails once must never come back.
				strict := kind == vfs.FaultOnce
				if kind == vfs.FaultCrash {
					if !fsys.Crashed() {
						t.Fatalf("%s: the run never reached the operation", where)
					}
				} else {
					// The files as the failing disk left them, as another
					// process would find them now.
					asIs := filepath.Join(t.TempDir(), "asis.db")
					sqltest.CopyFile(t, path, asIs, false)
					sqltest.CopyFile(t, pager.WALPath(path), pager.WALPath(asIs), true)
					sqltest.CopyFile(t, pager.JournalPath(path), pager.JournalPath(asIs), true)
					verifies.Add(1)
					if err := env.verify(asIs, t.TempDir(), r, env.ref, strict); err != nil {
						t.Errorf("%s, no crash: %v", where, err)
					}
				}
				// The states a power loss could leave now, each verified
				// (and written to) in turn, from the same moment.
				for mi, mode := range modes {
					seed := uint64(k)*16 + uint64(ki)*4 + uint64(mi)
					if err := fsys.Crash(mode, seed); err != nil {
						t.Fatal(err)
					}
					verifies.Add(1)
					if err := env.verify(path, t.TempDir(), r, env.ref, strict); err != nil {
						t.Errorf("%s, crash (%s, seed %d): %v", where, mode, seed, err)
					}
				}
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("%d runs, %d recovered states verified, %d runs ending with a commit in doubt (in flight at the crash, or failed with none after it), in %v",
			runs.Load(), verifies.Load(), doubtful.Load(), time.Since(start).Round(time.Millisecond))
	})
}
