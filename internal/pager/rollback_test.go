package pager

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// rollbackDB makes a rollback-journal database with sqlite3's default
// settings (journal_mode=DELETE): a table of 200 rows over several pages.
func rollbackDB(t *testing.T) string {
	t.Helper()
	path := makeDB(t, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)",
		"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<200) INSERT INTO t SELECT i, printf('row-%05d-%s', i, hex(randomblob(30))) FROM c")
	if v := readHeader(t, path).ReadVersion(); v != format.FileFormatLegacy {
		t.Fatalf("fixture: read version %d, want a rollback-journal file", v)
	}
	return path
}

// checkRollbackFile requires the file at path to be a rollback-journal
// database with no -wal and no -journal beside it, that SQLite finds
// sound, in journal_mode=delete, with user_version uv.
func checkRollbackFile(t *testing.T, path string, uv uint32) {
	t.Helper()
	h := readHeader(t, path)
	if h.ReadVersion() != format.FileFormatLegacy || h.WriteVersion() != format.FileFormatLegacy {
		t.Fatalf("file format %d/%d, want 1/1 (rollback journal)", h.WriteVersion(), h.ReadVersion())
	}
	if h.ChangeCounter() != h.VersionValidFor() {
		t.Fatalf("change counter %d, version-valid-for %d", h.ChangeCounter(), h.VersionValidFor())
	}
	for _, sfx := range []string{"-wal", "-journal"} {
		if _, err := os.Stat(path + sfx); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s beside the database: %v", sfx, err)
		}
	}
	sqltest.IntegrityCheck(t, path)
	if m := sqltest.One(t, path, "PRAGMA journal_mode"); m != "delete" {
		t.Fatalf("SQLite: journal_mode %s", m)
	}
	if got := sqltest.One(t, path, "PRAGMA user_version"); got != strconv.Itoa(int(uv)) {
		t.Fatalf("SQLite: user_version %s, want %d", got, uv)
	}
}

// TestRollbackKeepsMode (rules 32, 36 to 38): commits to a rollback-journal
// file leave it one, with the change counter, version-valid-for and page
// count moved as sqlite3 moves them, in every sync mode; a new file with
// JournalDelete is one; JournalWAL converts one, and JournalDelete back.
func TestRollbackKeepsMode(t *testing.T) {
	for _, sync := range []SyncMode{SyncFull, SyncNormal, SyncOff} {
		path := rollbackDB(t)
		before := readHeader(t, path).ChangeCounter()
		p := mustOpen(t, path, Options{Sync: sync})
		for v := uint32(1); v <= 3; v++ {
			setUserVersion(t, p, v)
		}
		if p.WALFrames() != 0 || p.Stats().Commits != 3 {
			t.Fatalf("sync %d: %d WAL frames, %d commits", sync, p.WALFrames(), p.Stats().Commits)
		}
		if res, err := p.Checkpoint(CheckpointTruncate); err != nil || res != (CheckpointResult{}) {
			t.Fatalf("Checkpoint in rollback mode: %+v, %v", res, err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if c := readHeader(t, path).ChangeCounter(); c != before+3 {
			t.Fatalf("sync %d: change counter %d after 3 commits from %d", sync, c, before)
		}
		checkRollbackFile(t, path, 3)
	}

	path := filepath.Join(t.TempDir(), "new.db")
	p := mustOpen(t, path, Options{JournalMode: JournalDelete, PageSize: 1024})
	setUserVersion(t, p, 7)
	p.Close()
	checkRollbackFile(t, path, 7)
	if ps := readHeader(t, path).PageSize(); ps != 1024 {
		t.Fatalf("page size %d", ps)
	}

	p = mustOpen(t, path, Options{JournalMode: JournalWAL})
	setUserVersion(t, p, 8)
	p.Close()
	if v := readHeader(t, path).ReadVersion(); v != format.FileFormatWAL {
		t.Fatalf("JournalWAL: read version %d", v)
	}
	p = mustOpen(t, path, Options{JournalMode: JournalDelete})
	setUserVersion(t, p, 9)
	p.Close()
	checkRollbackFile(t, path, 9)
}

// TestRollbackConvert (rule 44): JournalDelete makes a WAL-mode database a
// rollback-journal one at Open, its WAL's commits copied into the file:
// SQLite then reads it in journal_mode=delete, sound, every page as it
// was but for the header's mode and counters. While another connection
// has it open, Open fails with ErrBusy and changes nothing.
func TestRollbackConvert(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	sqltest.Exec(t, src, "PRAGMA journal_mode=WAL", "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)",
		"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<2000) INSERT INTO t SELECT i, printf('row-%05d', i) FROM c")
	// A WAL with commits in it: the writer's state when it crashed.
	p := mustOpen(t, src, Options{CheckpointPages: -1})
	for v := uint32(1); v <= 3; v++ {
		setUserVersion(t, p, v)
	}
	w, err := p.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	for pgno := uint32(2); pgno <= w.PageCount(); pgno++ {
		if _, err := w.Write(pgno); err != nil { // a frame each, as it was
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if p.WALFrames() == 0 {
		t.Fatal("fixture: no frame in the WAL")
	}
	path := filepath.Join(dir, "c.db")
	sqltest.CopyFile(t, src, path, false)
	sqltest.CopyFile(t, WALPath(src), WALPath(path), false)
	crashedWAL := readFile(t, WALPath(src))
	p.Close()
	ro := mustOpen(t, path, Options{ReadOnly: true})
	want := snapshotBytes(t, ro)
	ro.Close()

	requireOFD(t)
	other := mustOpen(t, path, Options{})
	before := readFile(t, path)
	start := time.Now()
	if _, err := Open(path, Options{JournalMode: JournalDelete, Timeout: 100 * time.Millisecond}); !errors.Is(err, ErrBusy) || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("JournalDelete beside another connection: %v after %v, want ErrBusy after the timeout", err, time.Since(start))
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("a refused conversion changed the file")
	}
	other.Close() // checkpoints: the WAL goes
	// Again with the WAL as the crash left it, and nobody else.
	if err := os.WriteFile(WALPath(path), crashedWAL, 0o644); err != nil {
		t.Fatal(err)
	}
	p = mustOpen(t, path, Options{JournalMode: JournalDelete})
	got := snapshotBytes(t, p)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	checkRollbackFile(t, path, 3)
	if len(got) != len(want) || !bytes.Equal(got[100:], want[100:]) {
		t.Fatalf("after the conversion the pager reads %d bytes, before %d", len(got), len(want))
	}
	h, hw := format.Header(got), format.Header(want)
	if h.ChangeCounter() != hw.ChangeCounter()+1 || h.DatabaseSize() != hw.DatabaseSize() {
		t.Fatalf("header after the conversion: counter %d (before %d), %d pages (before %d)", h.ChangeCounter(), hw.ChangeCounter(), h.DatabaseSize(), hw.DatabaseSize())
	}
	if n := sqltest.One(t, path, "SELECT count(*) FROM t"); n != "2000" {
		t.Fatalf("SQLite counts %s rows", n)
	}
}

// holder is another handle on the database file, as another connection
// holds its locks.
func holder(t *testing.T, path string) vfs.File {
	t.Helper()
	f, err := vfs.OS.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func canLock(f vfs.File, l vfs.LockLevel) bool {
	err := f.Lock(l)
	f.Unlock()
	return err == nil
}

// TestRollbackLocks (rules 33, 35, 36): the pager holds nothing between
// transactions, SHARED while a snapshot lives (one for all of them), and
// RESERVED in a write transaction; a commit waits up to Timeout for
// readers, its own and others', then fails with ErrBusy, the file and the
// transaction's effects untouched and the journal gone.
func TestRollbackLocks(t *testing.T) {
	requireOFD(t)
	path := rollbackDB(t)
	p := mustOpen(t, path, Options{Timeout: 100 * time.Millisecond})
	other := holder(t, path)
	if !canLock(other, vfs.LockExclusive) {
		t.Fatal("an idle pager holds a lock")
	}
	s1, s2 := p.Snapshot(), p.Snapshot()
	if canLock(other, vfs.LockExclusive) || !canLock(other, vfs.LockReserved) {
		t.Fatal("a snapshot: want SHARED held")
	}
	s1.Release()
	if canLock(other, vfs.LockExclusive) {
		t.Fatal("one of two snapshots released: SHARED must stay")
	}
	s2.Release()
	if !canLock(other, vfs.LockExclusive) {
		t.Fatal("snapshots released: the lock must go")
	}

	w, err := p.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	if canLock(other, vfs.LockReserved) || !canLock(other, vfs.LockShared) {
		t.Fatal("a write transaction: want RESERVED held, readers let in")
	}
	w.Rollback()
	if !canLock(other, vfs.LockExclusive) {
		t.Fatal("after Rollback the lock must go")
	}

	before := readFile(t, path)
	commit := func(v uint32) error {
		w, err := p.BeginWrite()
		if err != nil {
			return err
		}
		pg, _ := w.Write(1)
		format.Header(pg).SetUserVersion(v)
		return w.Commit()
	}
	// Another connection reads: the commit waits, then gives up.
	if err := other.Lock(vfs.LockShared); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = commit(1)
	if !errors.Is(err, ErrBusy) || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("commit beside another reader: %v after %v, want ErrBusy after the timeout", err, time.Since(start))
	}
	// The commit held PENDING while it waited, and let it go.
	if err := other.Unlock(); err != nil {
		t.Fatal(err)
	}
	if !canLock(other, vfs.LockExclusive) {
		t.Fatal("a failed commit left a lock")
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("a busy commit changed the file")
	}
	if _, err := os.Stat(JournalPath(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a busy commit left its journal: %v", err)
	}
	// A snapshot of this pager holds the file too.
	s := p.Snapshot()
	if err := commit(2); !errors.Is(err, ErrBusy) {
		t.Fatalf("commit beside this pager's snapshot: %v, want ErrBusy", err)
	}
	s.Release()
	// A reader that leaves within the timeout lets it through.
	if err := other.Lock(vfs.LockShared); err != nil {
		t.Fatal(err)
	}
	left := make(chan struct{})
	time.AfterFunc(30*time.Millisecond, func() { other.Unlock(); close(left) })
	if err := commit(3); err != nil {
		t.Fatalf("commit after the reader left: %v", err)
	}
	<-left
	// Another connection writing: BeginWrite waits, then ErrBusy.
	if err := other.Lock(vfs.LockReserved); err != nil {
		t.Fatal(err)
	}
	if _, err := p.BeginWrite(); !errors.Is(err, ErrBusy) {
		t.Fatalf("BeginWrite beside another writer: %v, want ErrBusy", err)
	}
	// Another connection committing (EXCLUSIVE): snapshots wait, then
	// ErrBusy.
	if err := other.Lock(vfs.LockExclusive); err != nil {
		t.Fatal(err)
	}
	if err := p.InitSnapshot(&Snapshot{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("a snapshot beside another's EXCLUSIVE: %v, want ErrBusy", err)
	}
	other.Unlock()
	p.Close()
	checkRollbackFile(t, path, 3)
}

// TestRollbackLearnsCommits (rule 34): a snapshot sees what another
// connection committed since the pager last looked (another pager, and
// sqlite3), the page count included, and RenewSnapshot says whether
// anything was.
func TestRollbackLearnsCommits(t *testing.T) {
	requireOFD(t)
	path := rollbackDB(t)
	p := mustOpen(t, path, Options{Timeout: time.Second})
	q := mustOpen(t, path, Options{Timeout: time.Second})
	ro := mustOpen(t, path, Options{ReadOnly: true, Timeout: time.Second})
	uv := func(p *Pager) uint32 {
		s := p.Snapshot()
		defer s.Release()
		pg, err := s.Page(1)
		if err != nil {
			t.Fatal(err)
		}
		return format.Header(pg).UserVersion()
	}
	var s Snapshot
	if err := ro.InitSnapshot(&s); err != nil {
		t.Fatal(err)
	}
	if same := renew(t, ro, &s); !same {
		t.Fatal("RenewSnapshot with nothing committed: not the same")
	}
	s.Release()
	setUserVersion(t, p, 11)
	if uv(q) != 11 || uv(ro) != 11 {
		t.Fatalf("after p's commit q reads %d, the read-only pager %d", uv(q), uv(ro))
	}
	if same := renew(t, ro, &s); same {
		t.Fatal("RenewSnapshot after another pager's commit: the same")
	}
	s.Release()
	setUserVersion(t, q, 12)
	if uv(p) != 12 {
		t.Fatalf("after q's commit p reads %d", uv(p))
	}
	s1 := p.Snapshot()
	n := s1.PageCount()
	s1.Release()
	sqltest.Exec(t, path, "INSERT INTO t SELECT a+1000, b||b||b FROM t", "PRAGMA user_version=13")
	s2 := p.Snapshot()
	if s2.PageCount() <= n {
		t.Fatalf("after sqlite3 grew the file p's snapshot has %d pages, before %d", s2.PageCount(), n)
	}
	s2.Release()
	if uv(p) != 13 || uv(ro) != 13 {
		t.Fatalf("after sqlite3's commit p reads %d, the read-only pager %d", uv(p), uv(ro))
	}
	setUserVersion(t, p, 14) // over sqlite3's pages
	for _, x := range []*Pager{p, q, ro} {
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
	}
	checkRollbackFile(t, path, 14)
	if got := sqltest.One(t, path, "SELECT count(*) FROM t"); got != "400" {
		t.Fatalf("SQLite counts %s rows", got)
	}
}

// TestRollbackHotJournalWhileOpen (rule 34): a connection that crashed
// mid-commit while the pager was open (the file holds uncommitted pages,
// the journal their originals) is rolled back by the pager's next
// snapshot, writable, or read through, read-only; both then read what
// sqlite3's own recovery gives.
func TestRollbackHotJournalWhileOpen(t *testing.T) {
	requireOFD(t)
	crashed, committed := hotJournalFixture(t, 0)
	want, _, _ := recoveredBySQLite(t, crashed)
	for _, readOnly := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "h.db")
		sqltest.CopyFile(t, committed, path, false)
		p := mustOpen(t, path, Options{ReadOnly: readOnly})
		s := p.Snapshot()
		s.Release()
		// The crash, in place (the pager's mapping sees the file).
		if err := os.WriteFile(path, readFile(t, crashed), 0o644); err != nil {
			t.Fatal(err)
		}
		sqltest.CopyFile(t, JournalPath(crashed), JournalPath(path), false)
		got := snapshotBytes(t, p)
		n := min(len(want), int(format.Header(want).DatabaseSize())*format.Header(want).PageSize())
		if !bytes.Equal(got, want[:n]) {
			t.Fatalf("read-only %v: the snapshot after the crash reads %d bytes, unlike SQLite's recovery (%d)", readOnly, len(got), len(want))
		}
		_, jerr := os.Stat(JournalPath(path))
		if readOnly != (jerr == nil) {
			t.Fatalf("read-only %v: journal still there: %v", readOnly, jerr == nil)
		}
		if readOnly && p.JournalRecords() == 0 {
			t.Fatal("the read-only pager read no record of the journal")
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if !readOnly {
			checkRollbackFile(t, path, readHeader(t, path).UserVersion())
		}
	}
}

// TestRollbackFailedCommitRollsBack (rule 39): a commit whose write into
// the database file fails after some pages went in is rolled back from
// its journal at once; when that fails too, the journal stays and the
// next snapshot rolls it back before it reads. Nothing of the transaction
// is seen, by the pager or by SQLite.
func TestRollbackFailedCommitRollsBack(t *testing.T) {
	template := rollbackDB(t)
	// commit changes the odd pages (runs of one page: a write each) in a
	// copy of the template, through fsys.
	commit := func(path string, fsys *vfs.Fault) (*Pager, error) {
		sqltest.CopyFile(t, template, path, false)
		p := mustOpen(t, path, Options{FS: fsys})
		w, err := p.BeginWrite()
		if err != nil {
			t.Fatal(err)
		}
		for pgno := uint32(1); pgno <= w.PageCount(); pgno += 2 {
			pg, err := w.Write(pgno)
			if err != nil {
				t.Fatal(err)
			}
			if pgno == 1 {
				format.Header(pg).SetUserVersion(99)
			} else {
				pg[len(pg)-1] ^= 0xff
			}
		}
		return p, w.Commit()
	}
	// The clean run says which operation is the database file's second
	// write: page 1 is in the file by then.
	clean := vfs.NewFault(vfs.OS)
	cleanPath := filepath.Join(t.TempDir(), "clean.db")
	at := -1
	clean.OnOp = func(op vfs.Op) {
		if at < 0 && op.Kind == vfs.OpWrite && op.Name == cleanPath && op.Off > 0 {
			at = op.Index
		}
	}
	p, err := commit(cleanPath, clean)
	if err != nil || at < 0 {
		t.Fatalf("clean commit: %v, database write at %d", err, at)
	}
	p.Close()
	before := readFile(t, template)
	for _, kind := range []vfs.FaultKind{vfs.FaultOnce, vfs.FaultForever} {
		path := filepath.Join(t.TempDir(), "f.db")
		fsys := vfs.NewFault(vfs.OS)
		fsys.Inject(kind, at)
		p, err := commit(path, fsys)
		if !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("%s: commit: %v, want the injected fault", kind, err)
		}
		if kind == vfs.FaultForever {
			// The rollback failed too: the journal stays, hot.
			if _, err := os.Stat(JournalPath(path)); err != nil {
				t.Fatalf("the rollback failed and the journal is gone: %v", err)
			}
			if bytes.Equal(readFile(t, path)[:4096], before[:4096]) {
				t.Fatal("the test proves nothing: page 1 of the transaction is not in the file")
			}
			fsys.Inject(vfs.NoFault, 0) // the disk works again
		}
		if got := snapshotBytes(t, p); !bytes.Equal(got, before) {
			t.Fatalf("%s: the pager reads a changed database after a failed commit", kind)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(readFile(t, path), before) {
			t.Fatalf("%s: the file differs after a failed commit", kind)
		}
		checkRollbackFile(t, path, 0)
	}
}
