package pager

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// spillFixture is a rollback-journal database of about 90 pages.
func spillFixture(t *testing.T) string {
	t.Helper()
	path := makeDB(t, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)",
		"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<4000) INSERT INTO t SELECT i, printf('row-%05d-%s', i, hex(randomblob(30))) FROM c")
	if n := readHeader(t, path).DatabaseSize(); n < 64 {
		t.Fatalf("fixture: %d pages, want more than the cache's 16 times 3", n)
	}
	return path
}

// journalSegments counts the headers of journal b whose magic is written
// (synced segments), at the multiples of the sector size.
func journalSegments(b []byte) int {
	n := 0
	for off := 0; off+format.JournalSectorSize <= len(b); off += format.JournalSectorSize {
		if [8]byte(b[off:off+8]) == format.JournalMagic {
			n++
		}
	}
	return n
}

// spillTx begins a write transaction on p (whose cache holds 16 pages)
// that changes every old page but page 1 in three rounds (pgno%3), page 2
// again in each round, and allocates 40 new pages, settling after each
// round so that each spills. It returns the transaction and the pages as
// it wrote them.
func spillTx(t *testing.T, p *Pager) (*WriteTx, map[uint32][]byte) {
	t.Helper()
	w, err := p.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	n := w.PageCount()
	want := map[uint32][]byte{}
	change := func(pgno uint32, round int) {
		pg, err := w.Write(pgno)
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint32(pg[len(pg)-4:], uint32(round)<<24|pgno)
		want[pgno] = bytes.Clone(pg)
	}
	for round := range 3 {
		change(2, round)
		for pgno := uint32(3); pgno <= n; pgno++ {
			if int(pgno)%3 == round {
				change(pgno, round)
			}
		}
		for range 40 / 3 {
			pgno, pg, err := w.Allocate()
			if err != nil {
				t.Fatal(err)
			}
			copy(pg, fmt.Sprintf("new page %d", pgno))
			want[pgno] = bytes.Clone(pg)
		}
		if err := w.Settle(); err != nil {
			t.Fatalf("round %d: Settle: %v", round, err)
		}
		if w.Dirty() > p.spillPages() {
			t.Fatalf("round %d: %d pages in memory after Settle, the cache holds %d", round, w.Dirty(), p.spillPages())
		}
	}
	for pgno, pg := range want {
		got, err := w.Page(pgno)
		if err != nil || !bytes.Equal(got, pg) {
			t.Fatalf("page %d reads back otherwise after the spills (%v)", pgno, err)
		}
	}
	return w, want
}

// TestRollbackSpill (rules 41 to 43): a rollback-mode transaction whose
// changed pages exceed the cache writes their originals to the journal,
// in segments synced one by one, before it writes them into the database
// file, and holds no more than the cache in memory. Killed then (the files
// copied as they are), it leaves a hot journal that SQLite and pagoda
// both roll back to the file as it was; rolled back, the file is as it
// was, byte for byte, and the pager reads it so; committed, the file holds
// every page as the transaction wrote it. In every sync mode, and with
// locks held from Open to Close.
func TestRollbackSpill(t *testing.T) {
	template := spillFixture(t)
	type variant struct {
		sync      SyncMode
		exclusive bool // EXCLUSIVE from Open to Close, as where locks belong to the process
	}
	for _, v := range []variant{{SyncFull, false}, {SyncNormal, false}, {SyncOff, false}, {SyncFull, true}} {
		for _, commit := range []bool{false, true} {
			sync := v.sync
			t.Run(fmt.Sprintf("sync%d/exclusive=%v/commit=%v", sync, v.exclusive, commit), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "s.db")
				sqltest.CopyFile(t, template, path, false)
				before := readFile(t, path)
				p := mustOpen(t, path, Options{Sync: sync, CacheSize: 1, Exclusive: v.exclusive})
				defer p.Close()
				w, want := spillTx(t, p)
				defer w.Rollback() // before Close, when the test fails
				if s := p.Stats(); s.Spilled < 64 {
					t.Fatalf("%d pages spilled", s.Spilled)
				}
				if bytes.Equal(readFile(t, path)[:len(before)], before) {
					t.Fatal("nothing spilled into the database file")
				}
				j := readFile(t, JournalPath(path))
				segs := journalSegments(j)
				if sync != SyncOff && segs < 2 {
					t.Fatalf("%d synced journal segments after three spills", segs)
				}
				if parsed, ok := format.ParseJournal(j, 4096); !ok || len(parsed.Pages) != int(format.Header(before).DatabaseSize())-1 {
					t.Fatalf("the journal plays %d pages (ok %v), want every old page the spills wrote, once (%d)", len(parsed.Pages), ok, format.Header(before).DatabaseSize()-1)
				}
				// A crash now: SQLite and pagoda roll the copies back.
				got, kept, sound := recoveredBySQLite(t, path)
				if kept || !sound || !bytes.Equal(got, before) {
					t.Fatalf("SQLite's rollback of the journal a spill left: journal kept %v, sound %v, file as it was %v", kept, sound, bytes.Equal(got, before))
				}
				checkJournalAgainstSQLite(t, path, recoveredBySQLite)

				if !commit {
					w.Rollback()
					if !bytes.Equal(readFile(t, path), before) {
						t.Fatal("the file differs after the rollback of a transaction that spilled")
					}
					if got := snapshotBytes(t, p); !bytes.Equal(got, before) {
						t.Fatal("the pager reads otherwise after the rollback")
					}
					setUserVersion(t, p, 5) // the pager writes on
					if err := p.Close(); err != nil {
						t.Fatal(err)
					}
					checkRollbackFile(t, path, 5)
					return
				}
				if err := w.Commit(); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(JournalPath(path)); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("journal after the commit: %v", err)
				}
				s := p.Snapshot()
				defer s.Release()
				for pgno, pg := range want {
					got, err := s.Page(pgno)
					if err != nil || !bytes.Equal(got, pg) {
						t.Fatalf("page %d after the commit differs (%v)", pgno, err)
					}
				}
				h := format.Header(readFile(t, path)[:format.HeaderSize])
				if h.ReadVersion() != format.FileFormatLegacy || h.DatabaseSize() != s.PageCount() ||
					int64(h.DatabaseSize())*4096 != int64(len(readFile(t, path))) {
					t.Fatalf("header after the commit: format %d, %d pages, snapshot %d", h.ReadVersion(), h.DatabaseSize(), s.PageCount())
				}
			})
		}
	}
}

// TestRollbackSpillBusy (rule 41): a spill waits for readers up to
// Options.Timeout, its own transaction's snapshots aside, then fails with
// ErrBusy and writes nothing into the database file; rolled back, the
// transaction leaves no journal.
func TestRollbackSpillBusy(t *testing.T) {
	requireOFD(t)
	path := spillFixture(t)
	before := readFile(t, path)
	p := mustOpen(t, path, Options{CacheSize: 1, Timeout: 50 * time.Millisecond})
	defer p.Close()
	other := holder(t, path)
	if err := other.Lock(vfs.LockShared); err != nil {
		t.Fatal(err)
	}
	w, err := p.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	var own Snapshot // the transaction's own, as the root's Tx holds one
	if err := w.InitSnapshot(&own); err != nil {
		t.Fatal(err)
	}
	for pgno := uint32(2); pgno < 40; pgno++ {
		pg, err := w.Write(pgno)
		if err != nil {
			t.Fatal(err)
		}
		pg[len(pg)-1] ^= 0xff
	}
	if err := w.Settle(); !errors.Is(err, ErrBusy) {
		t.Fatalf("a spill beside another reader: %v, want ErrBusy", err)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("a busy spill wrote the database file")
	}
	own.Release()
	w.Rollback()
	if _, err := os.Stat(JournalPath(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("journal after the rollback: %v", err)
	}
	other.Unlock()
	// Without the other reader the spill goes through beside the
	// transaction's own snapshot.
	w, err = p.BeginWrite()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.InitSnapshot(&own); err != nil {
		t.Fatal(err)
	}
	for pgno := uint32(2); pgno < 40; pgno++ {
		if _, err := w.Write(pgno); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Settle(); err != nil {
		t.Fatalf("a spill beside the transaction's own snapshot: %v", err)
	}
	if canLock(other, vfs.LockShared) {
		t.Fatal("a spilled transaction lets readers in: want EXCLUSIVE held")
	}
	own.Release()
	w.Rollback()
	if !canLock(other, vfs.LockExclusive) {
		t.Fatal("locks held after the rollback")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	checkRollbackFile(t, path, 0)
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("the file differs after rollbacks")
	}
}

// TestRollbackSpillFails (rules 39, 43): a spill whose write into the
// database file fails after pages went in leaves a transaction that can
// only roll back, and its rollback plays the journal back; when that fails
// too (the disk fails on), the journal stays hot and the pager's next
// snapshot, the disk working again, rolls it back first. The file is as it
// was, for the pager and for SQLite.
func TestRollbackSpillFails(t *testing.T) {
	template := spillFixture(t)
	before := readFile(t, template)
	// spill changes the pages 2..40 of a copy at path, through fsys, and
	// settles: one spill, whose database writes are runs of one page.
	spill := func(path string, fsys *vfs.Fault) (*Pager, *WriteTx, error) {
		sqltest.CopyFile(t, template, path, false)
		p := mustOpen(t, path, Options{FS: fsys, CacheSize: 1})
		w, err := p.BeginWrite()
		if err != nil {
			t.Fatal(err)
		}
		for pgno := uint32(2); pgno <= 40; pgno += 2 {
			pg, err := w.Write(pgno)
			if err != nil {
				t.Fatal(err)
			}
			pg[len(pg)-1] ^= 0xff
		}
		return p, w, w.Settle()
	}
	// The clean run says which operation is the spill's second write
	// into the database file: the first is in by then.
	clean := vfs.NewFault(vfs.OS)
	cleanPath := filepath.Join(t.TempDir(), "clean.db")
	at, writes := -1, 0
	clean.OnOp = func(op vfs.Op) {
		if op.Kind == vfs.OpWrite && op.Name == cleanPath {
			if writes++; writes == 2 {
				at = op.Index
			}
		}
	}
	p, w, err := spill(cleanPath, clean)
	if err != nil || at < 0 || p.Stats().Spilled == 0 {
		t.Fatalf("clean spill: %v, database write at %d, %d spilled", err, at, p.Stats().Spilled)
	}
	w.Rollback()
	p.Close()
	for _, kind := range []vfs.FaultKind{vfs.FaultOnce, vfs.FaultForever} {
		path := filepath.Join(t.TempDir(), "f.db")
		fsys := vfs.NewFault(vfs.OS)
		fsys.Inject(kind, at)
		p, w, err := spill(path, fsys)
		if !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("%s: Settle: %v, want the injected fault", kind, err)
		}
		if bytes.Equal(readFile(t, path), before) {
			t.Fatalf("%s: the test proves nothing: no page of the spill is in the file", kind)
		}
		w.Rollback()
		if kind == vfs.FaultForever {
			if hot := readFile(t, JournalPath(path)); len(hot) == 0 || hot[0] == 0 {
				t.Fatal("the playback failed and the journal is not hot")
			}
			fsys.Inject(vfs.NoFault, 0) // the disk works again
		}
		if got := snapshotBytes(t, p); !bytes.Equal(got, before) {
			t.Fatalf("%s: the pager reads a changed database after the failed spill", kind)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(readFile(t, path), before) {
			t.Fatalf("%s: the file differs after the failed spill", kind)
		}
		checkRollbackFile(t, path, 0)
	}
}
