package pager

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/wal"
)

// editWAL rewrites the WAL beside path: edit changes frame i (its 24-byte
// header and its page) for each frame, then every frame's checksum is
// computed again, so that recovery still accepts them all.
func editWAL(t *testing.T, path string, edit func(i int, hdr, page []byte)) {
	t.Helper()
	w, err := os.ReadFile(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	be := binary.BigEndian
	bigEndian := be.Uint32(w) == wal.MagicBE
	ps := int(be.Uint32(w[8:]))
	s0, s1 := be.Uint32(w[24:]), be.Uint32(w[28:])
	for i, off := 0, wal.HeaderSize; off+wal.FrameHeaderSize+ps <= len(w); i, off = i+1, off+wal.FrameHeaderSize+ps {
		hdr, page := w[off:off+wal.FrameHeaderSize], w[off+wal.FrameHeaderSize:off+wal.FrameHeaderSize+ps]
		edit(i, hdr, page)
		s0, s1 = wal.Checksum(hdr[:8], s0, s1, bigEndian)
		s0, s1 = wal.Checksum(page, s0, s1, bigEndian)
		be.PutUint32(hdr[16:], s0)
		be.PutUint32(hdr[20:], s1)
	}
	if err := os.WriteFile(path+"-wal", w, 0o644); err != nil {
		t.Fatal(err)
	}
}

// walWithPage1 is a WAL-mode file whose WAL holds a commit that writes
// page 1 (a new table) and grows the database.
func walWithPage1(t *testing.T) string {
	return sqltest.WithWAL(t,
		[]string{"CREATE TABLE t(a)", "INSERT INTO t VALUES (1)"},
		[]string{"CREATE TABLE u(b)", "INSERT INTO u SELECT randomblob(5000)"})
}

// A commit frame may give a size past the header's (valid) one: the
// database is the header's size, as SQLite's b-tree layer reads it, and
// SQLite passes the file. A size past every page the file and the WAL hold,
// with a header that does not vouch for its size, is corruption, not an
// allocation of billions of pages.
func TestWALCommitSize(t *testing.T) {
	t.Run("past the header's", func(t *testing.T) {
		path := walWithPage1(t)
		var want uint32
		editWAL(t, path, func(i int, hdr, page []byte) {
			if binary.BigEndian.Uint32(hdr) == 1 {
				want = format.Header(page).DatabaseSize()
			}
			if binary.BigEndian.Uint32(hdr[4:]) != 0 { // a commit frame
				binary.BigEndian.PutUint32(hdr[4:], 0xffffffff)
			}
		})
		db := sqltest.Open(t, path)
		var ic string
		var pages uint32
		if err := db.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
			t.Fatalf("SQLite: integrity_check %q, %v", ic, err)
		}
		if err := db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil || pages != want {
			t.Fatalf("SQLite: page_count %d (%v), want the header's %d", pages, err, want)
		}
		db.Close()
		p, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		s := p.Snapshot()
		defer s.Release()
		if s.PageCount() != want || want == 0 {
			t.Fatalf("PageCount %d, want the header's %d", s.PageCount(), want)
		}
	})
	t.Run("past every page, header not valid", func(t *testing.T) {
		path := walWithPage1(t)
		editWAL(t, path, func(i int, hdr, page []byte) {
			if binary.BigEndian.Uint32(hdr) == 1 {
				page[92] ^= 0xff // version-valid-for no longer the change counter
			}
			if binary.BigEndian.Uint32(hdr[4:]) != 0 {
				binary.BigEndian.PutUint32(hdr[4:], 0xffffffff)
			}
		})
		p, err := Open(path, Options{ReadOnly: true})
		if err == nil {
			p.Close()
			t.Fatal("opened a database of 2^32-1 pages")
		}
		var ce *format.CorruptError
		if !errors.As(err, &ce) || ce.Page != 1 {
			t.Fatalf("error %v, want a corruption error naming page 1", err)
		}
	})
}

// A hot journal whose header gives a database size past the header's (a
// damaged "original size"): the rollback's database is the header's size,
// as SQLite reads it after its own rollback.
func TestHotJournalSizePastHeader(t *testing.T) {
	crashed, committed := hotJournalFixture(t, 4096)
	j := readFile(t, crashed+"-journal")
	binary.BigEndian.PutUint32(j[16:], 0xffffffff) // the journal header's original size
	if err := os.WriteFile(crashed+"-journal", j, 0o644); err != nil {
		t.Fatal(err)
	}
	want := format.Header(readFile(t, committed)).DatabaseSize()
	p, err := Open(crashed, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Snapshot()
	if s.PageCount() != want {
		t.Fatalf("PageCount %d, want the committed header's %d", s.PageCount(), want)
	}
	s.Release()
	p.Close()
	// A writable pager plays it back to the header's size, not to 2^32-1
	// pages: the file is the committed one, byte for byte.
	p, err = Open(crashed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if !bytes.Equal(readFile(t, crashed), readFile(t, committed)) {
		t.Fatalf("the played-back file (%d bytes) is not the committed one (%d bytes)", len(readFile(t, crashed)), len(readFile(t, committed)))
	}
}

// A hot journal whose header gives a size past every page the file, the
// journal and the freelist hold, where the database header's size is not
// valid to bound it (a damaged "original size"): the pages past the file
// that the journal does not hold could only be free pages, so the size
// is corruption, not a database of 2^32-1 pages.
func TestHotJournalSizePastEveryPage(t *testing.T) {
	crashed, _ := hotJournalFixture(t, 4096)
	j := readFile(t, crashed+"-journal")
	binary.BigEndian.PutUint32(j[16:], 0xffffffff) // the journal header's original size
	// Page 1 as the rollback leaves it, its version-valid-for changed so
	// that its size is not valid: in the journal if it holds page 1 (byte
	// 92 is not one a record's checksum samples), else in the file.
	const versionValidFor = 92
	parsed, ok := format.ParseJournal(j, 4096)
	if !ok {
		t.Fatal("fixture: journal not ok")
	}
	inJournal := false
	for _, pg := range parsed.Pages {
		if at := bytes.Index(j, pg.Data); pg.Pgno == 1 && at > 0 {
			j[at+versionValidFor] ^= 0xff
			inJournal = true
		}
	}
	if err := os.WriteFile(crashed+"-journal", j, 0o644); err != nil {
		t.Fatal(err)
	}
	if !inJournal {
		db := readFile(t, crashed)
		db[versionValidFor] ^= 0xff
		if err := os.WriteFile(crashed, db, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Read-only, and writable: a playback would grow the file to 16 TiB.
	// Either refuses, and leaves both files as they were.
	dbBefore, jBefore := readFile(t, crashed), readFile(t, crashed+"-journal")
	for _, ro := range []bool{true, false} {
		p, err := Open(crashed, Options{ReadOnly: ro})
		if err == nil {
			n := p.Snapshot().PageCount()
			p.Close()
			t.Fatalf("read-only %v: opened a database of %d pages", ro, n)
		}
		var ce *format.CorruptError
		if !errors.As(err, &ce) || ce.Page != 1 {
			t.Fatalf("read-only %v: error %v, want a corruption error naming page 1", ro, err)
		}
		if !bytes.Equal(readFile(t, crashed), dbBefore) || !bytes.Equal(readFile(t, crashed+"-journal"), jBefore) {
			t.Fatalf("read-only %v: the refused rollback changed the files", ro)
		}
	}
}

// A WAL whose valid header gives another page size than the database's,
// its frames written with the database's: their checksums chain from
// another header, so SQLite's recovery commits none and reads the file
// alone. So does the pager, read-only and writable, and a writer starts
// the WAL again with its own page size. It was ErrCorrupt.
func TestWALHeaderOtherPageSize(t *testing.T) {
	path := walWithPage1(t)
	w := readFile(t, path+"-wal")
	be := binary.BigEndian
	ps := be.Uint32(w[8:])
	be.PutUint32(w[8:], ps/2)
	s0, s1 := wal.Checksum(w[:24], 0, 0, be.Uint32(w) == wal.MagicBE)
	be.PutUint32(w[24:], s0)
	be.PutUint32(w[28:], s1)
	if err := os.WriteFile(path+"-wal", w, 0o644); err != nil {
		t.Fatal(err)
	}
	file := readFile(t, path)
	want := file[:int(format.Header(file).DatabaseSize())*int(ps)]

	cp := copyPair(t, path)
	sqltest.CopyFile(t, path+"-wal", cp+"-wal", false)
	db := sqltest.Open(t, cp)
	got := sqltest.Rows(t, db, "SELECT name FROM sqlite_schema")
	if len(got) != 1 || got[0] != "t" {
		t.Fatalf("fixture: SQLite reads tables %v, want t alone (the WAL ignored)", got)
	}
	db.Close()

	for _, readOnly := range []bool{true, false} {
		cp := copyPair(t, path)
		sqltest.CopyFile(t, path+"-wal", cp+"-wal", false)
		p, err := Open(cp, Options{ReadOnly: readOnly})
		if err != nil {
			t.Fatalf("read-only %v: %v", readOnly, err)
		}
		if got := snapshotBytes(t, p); !bytes.Equal(got, want) {
			t.Errorf("read-only %v: reads %d bytes, the file's %d", readOnly, len(got), len(want))
		}
		if !readOnly {
			setUserVersion(t, p, 7)
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			db := sqltest.Open(t, cp)
			var ic string
			if err := db.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
				t.Errorf("after a commit: integrity_check %q, %v", ic, err)
			}
			db.Close()
			continue
		}
		p.Close()
	}
}

// The file's own header of a WAL-mode database is stale once the WAL holds
// page 1: SQLite validates page 1 as the WAL has it, so a file header of
// read version 3 (which alone would be a newer format) opens. The pager
// takes only the page layout from the file's header. It was
// ErrUnsupported.
func TestWALStaleFileHeaderVersion(t *testing.T) {
	path := walWithPage1(t)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{3, 3}, 18); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cp := copyPair(t, path)
	sqltest.CopyFile(t, path+"-wal", cp+"-wal", false)
	db := sqltest.Open(t, cp)
	want := sqltest.Rows(t, db, "SELECT name FROM sqlite_schema ORDER BY name")
	db.Close()
	if len(want) != 2 {
		t.Fatalf("fixture: SQLite reads tables %v, want t and u", want)
	}
	if h := readHeader(t, path); h.ReadVersion() != format.FileFormatWAL {
		t.Fatalf("page 1 has read version %d, want the WAL's 2", h.ReadVersion())
	}
}

// shrunkInWAL is a WAL-mode file whose WAL holds commits that grew the
// database and then one (a VACUUM) that shrank it: frames of pages past
// the last commit's size.
func shrunkInWAL(t *testing.T) string {
	const rows = "INSERT INTO t SELECT NULL, randomblob(900) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<300) SELECT i FROM c)"
	return sqltest.WithWAL(t,
		[]string{"CREATE TABLE t(a INTEGER PRIMARY KEY, b)", "INSERT INTO t VALUES (1, 'one')", rows},
		[]string{rows, "DELETE FROM t WHERE a > 1", "VACUUM"})
}

// A checkpoint copies no page past the last commit's size, and leaves the
// file that size once the whole WAL is in it, as sqlite3's does: the file
// of a WAL whose VACUUM shrank the database ends where the database ends,
// byte for byte what sqlite3's checkpoint leaves. It was left at the
// largest size, and a frame of a damaged page number grew the file to that
// page (a sparse file of 256 GiB and more).
func TestCheckpointPastLastCommit(t *testing.T) {
	t.Run("VACUUM in the WAL", func(t *testing.T) {
		path := shrunkInWAL(t)
		want := copyPair(t, path)
		sqltest.CopyFile(t, path+"-wal", want+"-wal", false)
		db := sqltest.Open(t, want)
		if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		wantBytes := readFile(t, want)
		if n := len(readFile(t, path)); n <= len(wantBytes) {
			t.Fatalf("fixture: the file (%d bytes) is not longer than the checkpointed one (%d)", n, len(wantBytes))
		}
		p, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Checkpoint(CheckpointPassive); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, path); !bytes.Equal(got, wantBytes) {
			t.Errorf("checkpointed file of %d bytes, sqlite3's %d", len(got), len(wantBytes))
		}
		setUserVersion(t, p, 3) // commits and reads go on over the shorter file
		// The file grows again, not as far as it went before: the pages
		// read back from it are those written.
		w, err := p.BeginWrite()
		if err != nil {
			t.Fatal(err)
		}
		var grown []uint32
		for range 50 {
			pgno, data, err := w.Allocate()
			if err != nil {
				t.Fatal(err)
			}
			data[100] = byte(pgno)
			grown = append(grown, pgno)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Checkpoint(CheckpointPassive); err != nil {
			t.Fatal(err)
		}
		s := p.Snapshot()
		for _, pgno := range grown {
			if pg, err := s.Page(pgno); err != nil || pg[100] != byte(pgno) {
				t.Fatalf("page %d after the file grew again: %v, byte %d", pgno, err, pg[100])
			}
		}
		s.Release()
		setUserVersion(t, p, 3)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if h := readHeader(t, path); h.UserVersion() != 3 || int64(h.DatabaseSize())*int64(h.PageSize()) != int64(len(readFile(t, path))) {
			t.Errorf("after a commit: user_version %d, %d pages in a file of %d bytes", h.UserVersion(), h.DatabaseSize(), len(readFile(t, path)))
		}
	})
	t.Run("a frame's page number damaged", func(t *testing.T) {
		path := walWithPage1(t)
		editWAL(t, path, func(i int, hdr, page []byte) {
			if i == 1 && binary.BigEndian.Uint32(hdr) != 1 {
				binary.BigEndian.PutUint32(hdr, 0x10000000)
			}
		})
		p, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := p.Snapshot()
		n := s.PageCount()
		s.Release()
		setUserVersion(t, p, 3)           // a WAL this pager wrote to,
		if err := p.Close(); err != nil { // Close checkpoints
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() != int64(n)*4096 {
			t.Errorf("checkpointed file of %d bytes, the database has %d pages of 4096", fi.Size(), n)
		}
	})
}

// A WAL-mode file whose own page 1 is damaged or cut short reads when the
// WAL holds page 1, by the WAL header's page size, as SQLite reads it:
// SQLite never looks at the file's page 1 then. A writer's checkpoint
// writes page 1 back into the file. It was ErrCorrupt.
func TestWALHoldsPage1OfDamagedFile(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"cut to 100 bytes", func(b []byte) []byte { return b[:100] }},
		{"bad magic", func(b []byte) []byte { b[11] ^= 0xff; return b }},
		{"bad payload fraction", func(b []byte) []byte { b[21] = 96; return b }},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := sqltest.WithWAL(t, nil, []string{
				"CREATE TABLE t(a INTEGER PRIMARY KEY, b)",
				"INSERT INTO t SELECT NULL, randomblob(300) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<50) SELECT i FROM c)",
			})
			if err := os.WriteFile(path, c.damage(readFile(t, path)), 0o644); err != nil {
				t.Fatal(err)
			}
			cp := copyPair(t, path)
			sqltest.CopyFile(t, path+"-wal", cp+"-wal", false)
			db := sqltest.Open(t, cp)
			var ic string
			var pages uint32
			if err := db.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
				t.Fatalf("fixture: SQLite: integrity_check %q, %v", ic, err)
			}
			if err := db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
				t.Fatal(err)
			}
			db.Close()
			if h := readHeader(t, path); h.DatabaseSize() != pages {
				t.Errorf("read-only: %d pages, SQLite %d", h.DatabaseSize(), pages)
			}
			p, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			setUserVersion(t, p, 5)
			if err := p.Close(); err != nil { // checkpoints page 1 into the file
				t.Fatal(err)
			}
			db = sqltest.Open(t, path)
			if err := db.QueryRow("PRAGMA integrity_check").Scan(&ic); err != nil || ic != "ok" {
				t.Errorf("after a commit: integrity_check %q, %v", ic, err)
			}
			db.Close()
		})
	}
}
