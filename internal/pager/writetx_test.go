package pager

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// query runs a one-value query with SQLite on a copy of the database and its
// WAL, as a crash would leave them, so the test's pager stays undisturbed.
func query(t *testing.T, path, q string) string {
	t.Helper()
	dir := t.TempDir()
	cp := filepath.Join(dir, "copy.db")
	sqltest.CopyFile(t, path, cp, false)
	sqltest.CopyFile(t, WALPath(path), WALPath(cp), true)
	db := sqltest.Open(t, cp)
	defer db.Close()
	var s string
	if err := db.QueryRow(q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

func setUserVersion(t *testing.T, p *Pager, v uint32) {
	t.Helper()
	w, err := p.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	pg, err := w.Write(1)
	if err != nil {
		t.Fatal(err)
	}
	format.Header(pg).SetUserVersion(v)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestCreateNew(t *testing.T) {
	for _, ps := range []int{512, 4096, 65536} {
		path := filepath.Join(t.TempDir(), "new.db")
		p, err := Open(path, Options{PageSize: ps})
		if err != nil {
			t.Fatal(err)
		}
		if got := query(t, path, "PRAGMA integrity_check"); got != "ok" {
			t.Fatalf("page size %d: integrity_check = %q", ps, got)
		}
		if got := query(t, path, "PRAGMA journal_mode"); got != "wal" {
			t.Errorf("page size %d: journal_mode = %q", ps, got)
		}
		if got := query(t, path, "PRAGMA page_size"); got != itoa(ps) {
			t.Errorf("page_size = %s, want %d", got, ps)
		}
		setUserVersion(t, p, 7)
		if got := query(t, path, "PRAGMA user_version"); got != "7" {
			t.Errorf("user_version after commit = %s", got)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(WALPath(path)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("WAL left after Close: %v", err)
		}
		if got := query(t, path, "PRAGMA user_version"); got != "7" {
			t.Errorf("user_version after checkpoint = %s", got)
		}
	}
}

func itoa(n int) string {
	b := []byte{}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestSnapshotIsolation checks that a snapshot keeps seeing the state it
// began with across commits and checkpoints.
func TestSnapshotIsolation(t *testing.T) {
	path := makeDB(t, "CREATE TABLE t(a)", "INSERT INTO t VALUES (1)")
	p, err := Open(path, Options{CheckpointPages: -1, JournalMode: JournalWAL})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	old := p.Snapshot()
	setUserVersion(t, p, 1)
	mid := p.Snapshot()
	setUserVersion(t, p, 2)
	if _, err := p.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	setUserVersion(t, p, 3)
	uv := func(s *Snapshot) uint32 {
		pg, err := s.Page(1)
		if err != nil {
			t.Fatal(err)
		}
		return format.Header(pg).UserVersion()
	}
	now := p.Snapshot()
	if uv(old) != 0 || uv(mid) != 1 || uv(now) != 3 {
		t.Fatalf("user versions %d %d %d, want 0 1 3", uv(old), uv(mid), uv(now))
	}
	old.Release()
	mid.Release()
	if _, err := p.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	if uv(now) != 3 {
		t.Fatal("snapshot changed by checkpoint")
	}
	now.Release()
	// With no reader, the next commit restarts the WAL.
	if _, err := p.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	setUserVersion(t, p, 4)
	if p.WALFrames() != 1 {
		t.Errorf("WAL has %d frames after restart, want 1", p.WALFrames())
	}
	if got := query(t, path, "PRAGMA user_version"); got != "4" {
		t.Errorf("user_version = %s", got)
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	path := makeDB(t, "CREATE TABLE t(a)")
	p, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.BeginWrite(); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("BeginWrite on read-only: %v", err)
	}
}

// TestReopenContinuesWAL commits, copies the files as a crash would leave
// them, reopens the copy and commits again on top of the recovered WAL.
func TestReopenContinuesWAL(t *testing.T) {
	path := makeDB(t, "CREATE TABLE t(a)")
	p, err := Open(path, Options{CheckpointPages: -1, JournalMode: JournalWAL})
	if err != nil {
		t.Fatal(err)
	}
	setUserVersion(t, p, 5)
	cp := filepath.Join(t.TempDir(), "crash.db")
	sqltest.CopyFile(t, path, cp, false)
	sqltest.CopyFile(t, WALPath(path), WALPath(cp), false)
	p.Close()
	q, err := Open(cp, Options{CheckpointPages: -1})
	if err != nil {
		t.Fatal(err)
	}
	if q.WALFrames() != 1 {
		t.Fatalf("recovered %d frames", q.WALFrames())
	}
	setUserVersion(t, q, 6)
	if q.WALFrames() != 2 {
		t.Fatalf("after commit %d frames", q.WALFrames())
	}
	if got := query(t, cp, "PRAGMA user_version"); got != "6" {
		t.Fatalf("user_version = %s", got)
	}
	q.Close()
	if got := query(t, cp, "PRAGMA integrity_check"); got != "ok" {
		t.Fatal(got)
	}
}

// TestFailedCommitLeavesNoTrace injects a failing write and a failing sync
// into commits: the commit reports the error, the state stays as before,
// a later commit succeeds, and recovery from the files (as after a crash)
// sees exactly the commits that succeeded.
func TestFailedCommitLeavesNoTrace(t *testing.T) {
	for _, fault := range []string{"write", "sync"} {
		t.Run(fault, func(t *testing.T) {
			path := makeDB(t, "CREATE TABLE t(a)")
			fsys := vfs.NewFault(vfs.OS)
			p, err := Open(path, Options{CheckpointPages: -1, FS: fsys})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			setUserVersion(t, p, 1)
			switch fault {
			case "write":
				fsys.Inject(vfs.FaultForever, fsys.Ops(), vfs.OpWrite)
			case "sync":
				fsys.Inject(vfs.FaultForever, fsys.Ops(), vfs.OpSync)
			}
			w, _ := p.BeginWrite()
			pg, _ := w.Write(1)
			format.Header(pg).SetUserVersion(2)
			_, _, _ = w.Allocate() // grow the file too
			err = w.Commit()
			fsys.Inject(vfs.NoFault, 0)
			if !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("Commit with a failing %s: %v", fault, err)
			}
			s := p.Snapshot()
			pg1, _ := s.Page(1)
			if uv := format.Header(pg1).UserVersion(); uv != 1 || s.PageCount() != 2 {
				t.Fatalf("after the failed commit: user_version %d, %d pages", uv, s.PageCount())
			}
			s.Release()
			if got := query(t, path, "PRAGMA user_version"); got != "1" {
				t.Fatalf("recovered user_version %s after a failed commit", got)
			}
			setUserVersion(t, p, 3)
			if got := query(t, path, "PRAGMA user_version"); got != "3" {
				t.Fatalf("user_version %s after the next commit", got)
			}
			if got := query(t, path, "PRAGMA integrity_check"); got != "ok" {
				t.Fatal(got)
			}
		})
	}
}

func TestStatsOneSyncPerCommit(t *testing.T) {
	path := makeDB(t, "CREATE TABLE t(a)")
	p, err := Open(path, Options{CheckpointPages: -1, JournalMode: JournalWAL})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	setUserVersion(t, p, 1) // creates the WAL: syncs its directory once
	before := p.Stats()
	for i := range 10 {
		setUserVersion(t, p, uint32(i+2))
	}
	after := p.Stats()
	if c, s := after.Commits-before.Commits, after.Syncs-before.Syncs; c != 10 || s != 10 {
		t.Fatalf("10 commits: %d commits counted, %d syncs", c, s)
	}
}

// TestSpill: a transaction larger than the cache budget spills to the WAL,
// reads its spilled pages back, and commits (or rolls back) as a whole.
func TestSpill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spill.db")
	p, err := Open(path, Options{PageSize: 512, CacheSize: 16 * 512, CheckpointPages: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	fill := func(rollback bool, tag byte) {
		w, err := p.BeginWrite()
		if err != nil {
			t.Fatal(err)
		}
		var pages []uint32
		for i := range 100 {
			pg, b, err := w.Allocate()
			if err != nil {
				t.Fatal(err)
			}
			b[0], b[1] = tag, byte(i)
			pages = append(pages, pg)
			if err := w.Settle(); err != nil {
				t.Fatal(err)
			}
			if w.Dirty() > 16 {
				t.Fatalf("%d dirty pages over a budget of 16", w.Dirty())
			}
		}
		for i, pg := range pages { // spilled pages read back, and change again
			b, err := w.Write(pg)
			if err != nil {
				t.Fatal(err)
			}
			if b[0] != tag || b[1] != byte(i) {
				t.Fatalf("page %d read back as %x %x", pg, b[0], b[1])
			}
			b[2] = tag
			if err := w.Settle(); err != nil {
				t.Fatal(err)
			}
		}
		if rollback {
			w.Rollback()
			return
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	fill(false, 7)
	s := p.Snapshot()
	if s.PageCount() != 101 {
		t.Fatalf("%d pages", s.PageCount())
	}
	for pg := uint32(2); pg <= 101; pg++ {
		b, _ := s.Page(pg)
		if b[0] != 7 || b[1] != byte(pg-2) || b[2] != 7 {
			t.Fatalf("page %d: %x", pg, b[:3])
		}
	}
	s.Release()
	frames := p.WALFrames()
	fill(true, 9) // spills, then rolls back
	if p.WALFrames() != frames {
		t.Fatal("a rolled-back spill was committed")
	}
	// A crash now: the spilled frames of the rolled-back transaction must
	// not be recovered.
	cp := snapshotCopy(t, path)
	q, err := Open(cp, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	qs := q.Snapshot()
	if qs.PageCount() != 101 {
		t.Fatalf("recovered %d pages", qs.PageCount())
	}
	b, _ := qs.Page(50)
	if b[0] != 7 {
		t.Fatal("recovered a rolled-back page")
	}
	qs.Release()
	q.Close()
	fill(false, 3) // the next transaction overwrites the dead frames
	cp = snapshotCopy(t, path)
	q, err = Open(cp, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	qs = q.Snapshot()
	defer qs.Release()
	if b, _ := qs.Page(150); b[0] != 3 || qs.PageCount() != 201 {
		t.Fatalf("after recovery: page 150 tag %d, %d pages", b[0], qs.PageCount())
	}
}

func snapshotCopy(t *testing.T, path string) string {
	cp := filepath.Join(t.TempDir(), "copy.db")
	sqltest.CopyFile(t, path, cp, false)
	sqltest.CopyFile(t, WALPath(path), WALPath(cp), true)
	return cp
}

// TestFailedCommitNeverReturns: a commit whose WAL sync fails reports the
// error, and the transaction stays gone after Close and a power loss,
// whatever part of the unsynced writes reached the disk. Its frames may
// have reached the disk, so spoil must make its zeroed frame header
// durable; when spoil's own sync fails, Close tries again.
func TestFailedCommitNeverReturns(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault vfs.FaultKind
	}{
		{"sync fails once", vfs.FaultOnce},
		{"syncs fail until Close", vfs.FaultForever},
	} {
		t.Run(c.name, func(t *testing.T) {
			template := makeDB(t, "CREATE TABLE t(a)")
			for seed := range uint64(16) {
				path := filepath.Join(t.TempDir(), "f.db")
				sqltest.CopyFile(t, template, path, false)
				fsys := vfs.NewFault(vfs.OS)
				fsys.SkipSync = true
				p, err := Open(path, Options{FS: fsys, CheckpointPages: -1})
				if err != nil {
					t.Fatal(err)
				}
				setUserVersion(t, p, 1)
				fsys.Inject(c.fault, fsys.Ops(), vfs.OpSync)
				w, _ := p.BeginWrite()
				pg, _ := w.Write(1)
				format.Header(pg).SetUserVersion(2)
				for range 3 {
					if _, b, err := w.Allocate(); err != nil {
						t.Fatal(err)
					} else {
						b[0] = 0x0d // an empty table leaf, as far as page 2 goes
					}
				}
				if err := w.Commit(); !errors.Is(err, vfs.ErrInjected) {
					t.Fatalf("Commit with a failing sync: %v", err)
				}
				fsys.Inject(vfs.NoFault, 0)
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
				for _, mode := range []vfs.CrashMode{vfs.CrashPrefix, vfs.CrashTorn, vfs.CrashReorder} {
					if err := fsys.Crash(mode, seed); err != nil {
						t.Fatal(err)
					}
					q, err := Open(path, Options{ReadOnly: true})
					if err != nil {
						t.Fatalf("%s crash, seed %d: %v", mode, seed, err)
					}
					s := q.Snapshot()
					pg1, _ := s.Page(1)
					uv := format.Header(pg1).UserVersion()
					s.Release()
					q.Close()
					if uv != 1 {
						t.Fatalf("%s crash, seed %d: user_version %d, want 1: the failed commit came back", mode, seed, uv)
					}
				}
			}
		})
	}
}

// TestWALRestartCrash: the first commit after a checkpoint restarts the
// WAL over its old frames. If a crash kept some of the new frames but not
// the new header, the old header would validate old frames up to the
// first new one: a committed state older than the database file. So the
// new header is synced before any frame is written over old ones (as
// sqlite3 does since its ticket ff5be73dee).
func TestWALRestartCrash(t *testing.T) {
	template := makeDB(t, "CREATE TABLE t(a)")
	for seed := range uint64(64) {
		path := filepath.Join(t.TempDir(), "r.db")
		sqltest.CopyFile(t, template, path, false)
		fsys := vfs.NewFault(vfs.OS)
		fsys.SkipSync = true
		p, err := Open(path, Options{FS: fsys, CheckpointPages: -1})
		if err != nil {
			t.Fatal(err)
		}
		for v := range uint32(5) { // five commits of one frame each
			setUserVersion(t, p, v+1)
		}
		if _, err := p.Checkpoint(CheckpointPassive); err != nil {
			t.Fatal(err)
		}
		// The process dies at the restarting commit's first sync.
		fsys.Inject(vfs.FaultCrash, fsys.Ops(), vfs.OpSync)
		w, _ := p.BeginWrite()
		pg, _ := w.Write(1)
		format.Header(pg).SetUserVersion(6)
		for range 4 {
			if _, _, err := w.Allocate(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(); !errors.Is(err, vfs.ErrCrashed) {
			t.Fatalf("Commit: %v, want a crash", err)
		}
		p.Close()
		if err := fsys.Crash(vfs.CrashReorder, seed); err != nil {
			t.Fatal(err)
		}
		q, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		s := q.Snapshot()
		pg1, _ := s.Page(1)
		uv := format.Header(pg1).UserVersion()
		s.Release()
		q.Close()
		if uv != 5 && uv != 6 {
			t.Fatalf("seed %d: recovered user_version %d, want 5 (or 6)", seed, uv)
		}
	}
}

// TestSyncNormalWALDirectory: with SyncNormal the first sync of a new WAL
// (at a checkpoint) syncs its directory entry too. Otherwise, after a WAL
// that Close removed (without syncing the directory), a crash could bring
// the old WAL back in place of the new one, and replay its old frames over
// the newer pages the checkpoint wrote.
func TestSyncNormalWALDirectory(t *testing.T) {
	path := makeDB(t, "CREATE TABLE t(a)")
	fsys := vfs.NewFault(vfs.OS)
	fsys.SkipSync = true
	p, err := Open(path, Options{FS: fsys, CheckpointPages: -1, JournalMode: JournalWAL})
	if err != nil {
		t.Fatal(err)
	}
	setUserVersion(t, p, 1)           // SyncFull: the WAL is durable, directory entry too
	if err := p.Close(); err != nil { // checkpoint, then the WAL is removed
		t.Fatal(err)
	}
	p, err = Open(path, Options{FS: fsys, CheckpointPages: -1, Sync: SyncNormal, JournalMode: JournalWAL})
	if err != nil {
		t.Fatal(err)
	}
	setUserVersion(t, p, 2)
	setUserVersion(t, p, 3)
	if _, err := p.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if err := fsys.Crash(vfs.CrashDrop, 0); err != nil {
		t.Fatal(err)
	}
	wantRecoveredUserVersion(t, path, 3)
}

// readHeader opens the database at path read-only and returns a copy of
// its header as the pager reads it (page 1 in the WAL or the file).
func readHeader(t *testing.T, path string) format.Header {
	t.Helper()
	q, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	s := q.Snapshot()
	defer s.Release()
	pg1, err := s.Page(1)
	if err != nil {
		t.Fatal(err)
	}
	return format.Header(bytes.Clone(pg1[:format.HeaderSize]))
}

// wantRecoveredUserVersion opens the database at path read-only, after a
// crash, and checks the user_version it recovers (set by checkpointed
// commits in the tests that call it).
func wantRecoveredUserVersion(t *testing.T, path string, want uint32) {
	t.Helper()
	if uv := readHeader(t, path).UserVersion(); uv != want {
		t.Fatalf("recovered user_version %d, want %d (checkpointed)", uv, want)
	}
}

// TestSnapshotAcrossWALRestart: a snapshot that reads the database file
// alone (every frame checkpointed) lets the WAL restart beneath it; the
// new generation's frames are numbered from 1 again, and checkpoints must
// not copy them over the pages it reads while it lives. Its mark, the
// frame it read up to in the old generation, must not let them through.
func TestSnapshotAcrossWALRestart(t *testing.T) {
	path := makeDB(t, "CREATE TABLE t(a)", "INSERT INTO t VALUES (1)")
	p, err := Open(path, Options{CheckpointPages: -1, JournalMode: JournalWAL})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for v := range uint32(5) { // frames 1..5 in the WAL
		setUserVersion(t, p, 10+v)
	}
	if _, err := p.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	s := p.Snapshot() // reads the file alone, user_version 14
	defer s.Release()
	uv := func() uint32 {
		pg, err := s.Page(1)
		if err != nil {
			t.Fatal(err)
		}
		return format.Header(pg).UserVersion()
	}
	setUserVersion(t, p, 99) // restarts the WAL: frame 1 of the new generation
	if p.WALFrames() != 1 {
		t.Fatalf("WAL has %d frames: want a restart", p.WALFrames())
	}
	if _, err := p.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	if got := uv(); got != 14 {
		t.Fatalf("the snapshot reads user_version %d after a checkpoint of the restarted WAL, want 14", got)
	}
	s.Release()
	if _, err := p.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	if got := query(t, path, "PRAGMA user_version"); got != "99" {
		t.Errorf("user_version = %s after the reader left, want 99", got)
	}
}

// BenchmarkCommit: write transactions that change n pages of a 1,000-page
// database, then commit, with SyncOff (a disk's syncs would swamp the
// pager's own cost). "spill" changes 256 pages with a cache of 16, spilling
// them to the WAL as it goes (Settle). Auto-checkpoints run as configured
// by default, so their cost is part of the figure.
func BenchmarkCommit(b *testing.B) {
	const dbPages = 1000
	for _, bc := range []struct {
		name  string
		pages int
		cache int // pages; 0: the default budget
	}{
		{"pages=1", 1, 0},
		{"pages=16", 16, 0},
		{"pages=256", 256, 0},
		{"spill", 256, 16},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{Sync: SyncOff, CacheSize: bc.cache * DefaultPageSize})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			w, err := p.BeginWrite()
			if err != nil {
				b.Fatal(err)
			}
			for range dbPages - 1 {
				if _, _, err := w.Allocate(); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Commit(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			next := 0
			for b.Loop() {
				w, err := p.BeginWrite()
				if err != nil {
					b.Fatal(err)
				}
				for range bc.pages {
					pg, err := w.Write(uint32(2 + next%(dbPages-1)))
					if err != nil {
						b.Fatal(err)
					}
					next++
					pg[100]++
					if err := w.Settle(); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Commit(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestHeaderFields: SchemaChanged bumps the schema cookie and gives a
// database without a table schema format 4 and UTF-8, once;
// SetApplicationFields sets the user version and application ID.
func TestHeaderFields(t *testing.T) {
	p := mustOpen(t, filepath.Join(t.TempDir(), "h.db"), Options{})
	defer p.Close()
	for round := 1; round <= 2; round++ {
		w, err := p.BeginWrite()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.SchemaChanged(); err != nil {
			t.Fatal(err)
		}
		if err := w.SetApplicationFields(uint32(round), 0xABCD); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		pg1, err := p.Snapshot().Page(1)
		if err != nil {
			t.Fatal(err)
		}
		h := format.Header(pg1)
		if h.SchemaCookie() != uint32(round) || h.SchemaFormat() != 4 || h.TextEncoding() != format.TextEncodingUTF8 ||
			h.UserVersion() != uint32(round) || h.ApplicationID() != 0xABCD {
			t.Errorf("round %d: cookie %d, schema format %d, encoding %d, user version %d, application ID %#x",
				round, h.SchemaCookie(), h.SchemaFormat(), h.TextEncoding(), h.UserVersion(), h.ApplicationID())
		}
	}
}

// TestSpillBoundsResident (rule 45): a write transaction larger than its
// cache that reads its pages back, spilled into the database file, into
// the WAL, or (rollback mode) written into the file, keeps few of the
// file's pages in the process's resident set, where reads through the
// mappings would add up to the whole file; and reads every page as it
// wrote it.
func TestSpillBoundsResident(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps"); err != nil {
		t.Skip("needs Linux's /proc/self/smaps to see the resident set")
	}
	const cache, pages = 64, 4096 // 256 KiB of cache, 16 MiB of pages
	limit := int64(pages * 4096 / 4)
	// readBack reads every page of all twice, each with tag at byte 2,
	// and checks the resident bytes of the files at paths.
	readBack := func(t *testing.T, w *WriteTx, all []uint32, tag byte, paths ...string) {
		t.Helper()
		for round := range 2 {
			for i, pg := range all {
				b, err := w.Page(pg)
				if err != nil {
					t.Fatal(err)
				}
				if b[0] != byte(i) || b[1] != byte(i>>8) || b[2] != tag {
					t.Fatalf("round %d: page %d read back as %x, want %02x%02x%02x", round, pg, b[:3], byte(i), byte(i>>8), tag)
				}
			}
		}
		for _, path := range paths {
			if rss := mappedRSS(t, path); rss > limit {
				t.Fatalf("%s: %d KiB resident after reading %d KiB back, want at most %d KiB", filepath.Base(path), rss>>10, pages*4, limit>>10)
			}
		}
	}
	// rewrite sets tag at byte 2 of every page of all, with spills.
	rewrite := func(t *testing.T, w *WriteTx, all []uint32, tag byte) {
		t.Helper()
		for _, pg := range all {
			b, err := w.Write(pg)
			if err != nil {
				t.Fatal(err)
			}
			b[2] = tag
			if err := w.Settle(); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("wal", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "resident.db")
		p := mustOpen(t, path, Options{PageSize: 4096, CacheSize: cache * 4096, CheckpointPages: -1})
		defer p.Close()
		w := mustBeginWrite(t, p)
		defer func() { w.Rollback() }() // the one open when the test fails, before Close
		var all []uint32
		for i := range pages { // new pages: spilled straight into the file
			pg, b, err := w.Allocate()
			if err != nil {
				t.Fatal(err)
			}
			b[0], b[1], b[2] = byte(i), byte(i>>8), 1
			all = append(all, pg)
			if err := w.Settle(); err != nil {
				t.Fatal(err)
			}
		}
		readBack(t, w, all, 1, path)
		rewrite(t, w, all, 2) // in the same transaction: over the file's
		readBack(t, w, all, 2, path, WALPath(path))
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		w = mustBeginWrite(t, p)
		rewrite(t, w, all, 3) // committed pages: spilled into the WAL
		readBack(t, w, all, 3, path, WALPath(path))
		rewrite(t, w, all, 4) // spilled again: their frames written over
		readBack(t, w, all, 4, path, WALPath(path))
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		s := p.Snapshot()
		defer s.Release()
		for i, pg := range all {
			if b, _ := s.Page(pg); b[0] != byte(i) || b[1] != byte(i>>8) || b[2] != 4 {
				t.Fatalf("page %d after commit: %x", pg, b[:3])
			}
		}
	})
	t.Run("rollback", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "resident.db")
		sqltest.Exec(t, path, "PRAGMA page_size=4096", "PRAGMA journal_mode=DELETE", "CREATE TABLE t(v)",
			fmt.Sprintf("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<%d) INSERT INTO t SELECT zeroblob(3500) FROM c", pages))
		p := mustOpen(t, path, Options{CacheSize: cache * 4096})
		defer p.Close()
		w := mustBeginWrite(t, p)
		defer w.Rollback()
		var all []uint32
		for pg := uint32(3); pg < w.PageCount() && len(all) < pages; pg++ {
			b, err := w.Write(pg)
			if err != nil {
				t.Fatal(err)
			}
			i := len(all)
			b[0], b[1], b[2] = byte(i), byte(i>>8), 5
			all = append(all, pg)
			if err := w.Settle(); err != nil {
				t.Fatal(err)
			}
		}
		if len(all) < pages*3/4 {
			t.Fatalf("%d pages", len(all))
		}
		readBack(t, w, all, 5, path)
	})
}

// mappedRSS returns the bytes of the file at path that the process's
// mappings hold resident, from /proc/self/smaps.
func mappedRSS(t *testing.T, path string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-"):
			in = len(f) >= 6 && f[len(f)-1] == path
		case in && len(f) == 3 && f[0] == "Rss:":
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total += n << 10
		}
	}
	return total
}

// hintFS is the OS's file system whose files count the writeback hints
// they take (vfs.StartWriteback), by file name.
type hintFS struct {
	vfs.FS
	mu    *sync.Mutex
	hints map[string]int
}

type hintFile struct {
	vfs.File
	fs hintFS
}

func (h hintFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := h.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return hintFile{f, h}, nil
}

func (f hintFile) StartWriteback(off, n int64) {
	f.fs.mu.Lock()
	f.fs.hints[filepath.Base(f.Name())]++
	f.fs.mu.Unlock()
}

func (h hintFS) count(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hints[name]
}

// TestWriteBackHints: a commit's frames and a checkpoint's pages are
// handed to the system to write back as they are written, ahead of their
// sync; a transaction's spills, which it may write again before its
// commit, are not.
// mustBeginWrite begins p's write transaction.
func mustBeginWrite(t *testing.T, p *Pager) *WriteTx {
	t.Helper()
	w, err := p.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWriteBackHints(t *testing.T) {
	const pages = 1000
	h := hintFS{FS: vfs.OS, mu: new(sync.Mutex), hints: map[string]int{}}
	path := filepath.Join(t.TempDir(), "hints.db")
	p := mustOpen(t, path, Options{FS: h, PageSize: 4096, CacheSize: 256 * 4096, CheckpointPages: -1})
	defer p.Close()
	write := func(fill byte, all []uint32) []uint32 {
		t.Helper()
		w := mustBeginWrite(t, p)
		defer w.Rollback()
		fresh := all == nil
		for i := range pages {
			var b []byte
			var err error
			if fresh {
				var pg uint32
				pg, b, err = w.Allocate()
				all = append(all, pg)
			} else {
				b, err = w.Write(all[i])
			}
			if err != nil {
				t.Fatal(err)
			}
			b[0] = fill
			if err := w.Settle(); err != nil {
				t.Fatal(err)
			}
		}
		if !fresh && !w.spilled() { // new pages spill into the file (rule 11)
			t.Fatal("the transaction did not spill into the WAL")
		}
		if n := h.count(filepath.Base(WALPath(path))); n != 0 {
			t.Fatalf("%d writeback hints for the WAL before the commit, from spills", n)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		return all
	}
	all := write(1, nil)
	before := h.count(filepath.Base(path))
	write(2, all) // committed pages: spilled into the WAL, then committed there
	if n := h.count(filepath.Base(WALPath(path))); n == 0 {
		t.Error("no writeback hint for the WAL at a commit of more than a batch of frames")
	}
	if n := h.count(filepath.Base(path)); n != before {
		t.Errorf("%d writeback hints for the database file from a transaction, want none", n-before)
	}
	if _, err := p.Checkpoint(CheckpointPassive); err != nil {
		t.Fatal(err)
	}
	if n := h.count(filepath.Base(path)); n == before {
		t.Error("no writeback hint for the database file from a checkpoint of 1000 pages")
	}
	s := p.Snapshot()
	defer s.Release()
	for _, pg := range all {
		if b, _ := s.Page(pg); b[0] != 2 {
			t.Fatalf("page %d after the checkpoint: %x", pg, b[0])
		}
	}

	// Rollback mode: the commit writes its pages into the file after the
	// journal's sync, and hints them.
	rpath := filepath.Join(t.TempDir(), "hints-rollback.db")
	sqltest.Exec(t, rpath, "PRAGMA page_size=4096", "PRAGMA journal_mode=DELETE", "CREATE TABLE t(v)")
	r := mustOpen(t, rpath, Options{FS: h, CacheSize: 4096 * 4096})
	defer r.Close()
	w := mustBeginWrite(t, r)
	defer w.Rollback()
	for range pages {
		if _, b, err := w.Allocate(); err != nil {
			t.Fatal(err)
		} else {
			b[0] = 3
		}
	}
	if n := h.count(filepath.Base(rpath)); n != 0 {
		t.Fatalf("%d writeback hints for a rollback-mode file before its commit", n)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := h.count(filepath.Base(rpath)); n == 0 {
		t.Error("no writeback hint for a rollback-mode file at a commit of 1000 pages")
	}
}

// TestSpillKeepsCleanCopies: a spill keeps some of the pages it wrote as
// clean copies, interior pages first, up to half the copies' limit (a
// cache's worth over cleanFraction), which they never pass (rule 45), so
// that reading them again reads no file; and Write makes a clean copy the
// changed page, reading nothing either.
func TestSpillKeepsCleanCopies(t *testing.T) {
	const cache, pages = 64, 400
	limit := cache / cleanFraction
	var reads int
	fault := vfs.NewFault(vfs.OS)
	fault.OnOp = func(op vfs.Op) {
		if op.Kind == vfs.OpRead {
			reads++
		}
	}
	path := filepath.Join(t.TempDir(), "keep.db")
	p := mustOpen(t, path, Options{FS: fault, PageSize: 4096, CacheSize: cache * 4096, CheckpointPages: -1})
	defer p.Close()
	w := mustBeginWrite(t, p)
	defer w.Rollback()
	// Every tenth page an interior page of a table b-tree, the others
	// leaves, each tagged with its index at bytes 1-2.
	var all []uint32
	from, to := -1, -1 // the pages the last spill wrote: all[from:to]
	for i := range pages {
		pg, b, err := w.Allocate()
		if err != nil {
			t.Fatal(err)
		}
		b[0] = byte(format.PageTableLeaf)
		if i%10 == 0 {
			b[0] = byte(format.PageTableInterior)
		}
		b[1], b[2] = byte(i), byte(i>>8)
		all = append(all, pg)
		spilled := p.Stats().Spilled
		if err := w.Settle(); err != nil {
			t.Fatal(err)
		}
		if p.Stats().Spilled > spilled {
			from, to = to, i+1
			if from < 0 {
				from = 0
			}
		}
		if n := w.p.wstate.nClean; n > limit {
			t.Fatalf("%d clean copies after page %d, over the limit of %d", n, i, limit)
		}
	}
	if to < 0 {
		t.Fatal("the transaction did not spill")
	}
	// The last spill's interior pages are held, and some of its leaves:
	// reading them reads no file.
	kept, interiorKept, interiorSpilled := 0, 0, 0
	for i, pg := range all {
		if i >= from && i < to && i%10 == 0 {
			interiorSpilled++
		}
		s := w.pages.get(pg)
		if s == nil || s.clean == nil || pg == 1 {
			continue
		}
		if i < from || i >= to {
			t.Errorf("page %d holds a clean copy, but the last spill did not write it", pg)
		}
		kept++
		if i%10 == 0 {
			interiorKept++
		}
		before := reads
		b, err := w.Page(pg)
		if err != nil {
			t.Fatal(err)
		}
		if reads != before {
			t.Fatalf("page %d, a clean copy, was read from the file", pg)
		}
		if b[1] != byte(i) || b[2] != byte(i>>8) {
			t.Fatalf("page %d's clean copy holds %x, want index %d", pg, b[1:3], i)
		}
	}
	if want := min(interiorSpilled, limit/2); interiorKept != want || kept != limit/2 {
		t.Errorf("%d clean copies, %d of them interior pages; want %d, %d (the last spill wrote %d interior pages)",
			kept, interiorKept, limit/2, want, interiorSpilled)
	}
	// Reading the earlier leaves back passes the limit: the oldest copies
	// go first, the interior pages last.
	for i, pg := range all[:from] {
		if i%10 == 0 {
			continue
		}
		b, err := w.Page(pg)
		if err != nil {
			t.Fatal(err)
		}
		if b[1] != byte(i) || b[2] != byte(i>>8) {
			t.Fatalf("page %d read back holds %x, want index %d", pg, b[1:3], i)
		}
		if err := w.Settle(); err != nil {
			t.Fatal(err)
		}
		if n := w.p.wstate.nClean; n > limit {
			t.Fatalf("%d clean copies reading page %d back, over the limit of %d", n, pg, limit)
		}
	}
	for i, pg := range all[from:to] {
		if s := w.pages.get(pg); (from+i)%10 == 0 && (s == nil || s.clean == nil) && interiorKept <= limit/2 {
			t.Errorf("interior page %d lost its clean copy to reads of leaves", pg)
		}
	}
	// Write takes a clean copy as the changed page, reading nothing.
	for i, pg := range all {
		s := w.pages.get(pg)
		if s == nil || s.clean == nil {
			continue
		}
		before, dirty := reads, w.Dirty()
		b, err := w.Write(pg)
		if err != nil {
			t.Fatal(err)
		}
		if reads != before || w.Dirty() != dirty+1 || b[1] != byte(i) || b[2] != byte(i>>8) {
			t.Fatalf("Write of page %d, a clean copy: %d reads, dirty %d -> %d, holds %x", pg, reads-before, dirty, w.Dirty(), b[1:3])
		}
		b[3] = 0xee
		break
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	s := p.Snapshot()
	defer s.Release()
	for i, pg := range all {
		b, err := s.Page(pg)
		if err != nil {
			t.Fatal(err)
		}
		if b[1] != byte(i) || b[2] != byte(i>>8) {
			t.Fatalf("page %d after commit holds index %x, want %d", pg, b[1:3], i)
		}
	}
}
