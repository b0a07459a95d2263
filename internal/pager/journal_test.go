package pager

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/vfs"
)

// hotJournalFixture is a database that SQLite was changing when it
// "crashed": the file holds uncommitted pages, the journal their originals.
func hotJournalFixture(t *testing.T, pageSize int) (crashed, committed string) {
	t.Helper()
	crashed, committed = sqltest.WithHotJournal(t, pageSize,
		[]string{
			"CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)",
			"CREATE INDEX tb ON t(b)",
			"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<1500) INSERT INTO t SELECT i, printf('committed-%05d-%s', i, hex(randomblob(20))) FROM c",
		},
		[]string{
			"UPDATE t SET b = 'UNCOMMITTED-' || a",
			"DELETE FROM t WHERE a % 3 = 0",
			// Grows the file past its committed size: the rollback
			// truncates it.
			"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<800) INSERT INTO t SELECT 10000+i, hex(randomblob(60)) FROM c",
		})
	a, b := readFile(t, crashed), readFile(t, committed)
	if bytes.Equal(a[:min(len(a), len(b))], b[:min(len(a), len(b))]) {
		t.Fatal("fixture: SQLite wrote no uncommitted page into the file; the test would prove nothing")
	}
	if len(a) <= len(b) && pageSize < 65536 {
		t.Fatalf("fixture: the uncommitted file (%d bytes) is not longer than the committed one (%d)", len(a), len(b))
	}
	j, ok := format.ParseJournal(readFile(t, crashed+"-journal"), pageSizeOr(pageSize))
	if !ok || len(j.Pages) == 0 {
		t.Fatalf("fixture: journal parses to %d pages, ok %v", len(j.Pages), ok)
	}
	return crashed, committed
}

func pageSizeOr(n int) int {
	if n == 0 {
		return 4096
	}
	return n
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// copyPair copies a database and its journal (when there is one) to a new
// directory.
func copyPair(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "c.db")
	sqltest.CopyFile(t, src, dst, false)
	sqltest.CopyFile(t, JournalPath(src), JournalPath(dst), true)
	return dst
}

// recoveredBySQLite returns the database file as SQLite leaves it after
// opening a copy of path and its journal, whether the journal is still
// there, and whether SQLite finds the result sound (a damaged journal may
// leave a damaged file).
func recoveredBySQLite(t *testing.T, path string) (data []byte, kept, sound bool) {
	t.Helper()
	cp := copyPair(t, path)
	db := sqltest.Open(t, cp)
	var res string
	err := db.QueryRow("PRAGMA integrity_check").Scan(&res)
	db.Close()
	_, serr := os.Stat(JournalPath(cp))
	return readFile(t, cp), serr == nil, err == nil && res == "ok"
}

type recoverer func(t *testing.T, path string) (data []byte, kept, sound bool)

// snapshotBytes reads every page of a read-only pager's snapshot.
func snapshotBytes(t *testing.T, p *Pager) []byte {
	t.Helper()
	s := p.Snapshot()
	defer s.Release()
	var out []byte
	for pgno := uint32(1); pgno <= s.PageCount(); pgno++ {
		pg, err := s.Page(pgno)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pg...)
	}
	return out
}

// checkJournalAgainstSQLite opens copies of path (and its journal) with
// SQLite, with a writable pager and with a read-only one, and requires the
// three to agree: the writable pager leaves the file as SQLite does and
// deletes the journal when SQLite does; the read-only pager reads those
// pages and changes neither file. It returns the read-only pager's count of
// journal records.
func checkJournalAgainstSQLite(t *testing.T, path string, oracle recoverer) int {
	t.Helper()
	want, kept, sound := oracle(t, path)

	w := copyPair(t, path)
	p, err := Open(w, Options{})
	switch {
	case err == nil:
		defer p.Close()
	case sound:
		t.Errorf("writable Open of a file SQLite recovers: %v", err)
	}
	// The rollback is done before Open validates what it left.
	if got := readFile(t, w); !bytes.Equal(got, want) {
		t.Errorf("writable Open left %d bytes, SQLite's recovery %d (equal prefix %v)", len(got), len(want), bytes.Equal(got[:min(len(got), len(want))], want[:min(len(got), len(want))]))
	}
	if _, err := os.Stat(JournalPath(w)); (err == nil) != kept {
		t.Errorf("journal kept by the writable pager: %v, by SQLite: %v", err == nil, kept)
	}

	r := copyPair(t, path)
	before, beforeJ := readFile(t, r), readFileOpt(r+"-journal")
	q, err := Open(r, Options{ReadOnly: true})
	if err != nil {
		if sound {
			t.Errorf("read-only Open of a file SQLite recovers: %v", err)
		}
		return -1
	}
	defer q.Close()
	// SQLite reads the pages its header counts (or the file's, where the
	// count is not valid); the rest of the file is past the database.
	n := len(want)
	if h := format.Header(want); len(want) >= format.HeaderSize && format.ValidateHeader(want) == nil && h.SizeIsValid() {
		n = min(n, int(h.DatabaseSize())*h.PageSize())
	}
	if got := snapshotBytes(t, q); !bytes.Equal(got, want[:n]) {
		t.Errorf("read-only pager reads %d bytes, SQLite's recovery left %d of %d", len(got), n, len(want))
	}
	if !bytes.Equal(readFile(t, r), before) || !bytes.Equal(readFileOpt(r+"-journal"), beforeJ) {
		t.Error("read-only Open changed the database or its journal")
	}
	return q.JournalRecords()
}

func readFileOpt(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// TestHotJournalLikeSQLite: a database left mid-transaction with a hot
// journal reads, and is rolled back, exactly as SQLite recovers it.
func TestHotJournalLikeSQLite(t *testing.T) {
	for _, ps := range []int{512, 4096, 65536} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			crashed, committed := hotJournalFixture(t, ps)
			if n := checkJournalAgainstSQLite(t, crashed, recoveredBySQLite); n == 0 {
				t.Error("the read-only pager read no page from the journal")
			}
			// SQLite's recovery gives the committed file back.
			if got, _, sound := recoveredBySQLite(t, crashed); !sound || !bytes.Equal(got, readFile(t, committed)) {
				t.Errorf("SQLite's recovery is not the committed file (sound %v)", sound)
			}
		})
	}
}

// TestJournalVariantsLikeSQLite: damaged, torn, zeroed and multi-database
// journals, each opened as SQLite opens it.
func TestJournalVariantsLikeSQLite(t *testing.T) {
	crashed, _ := hotJournalFixture(t, 1024)
	jr := readFile(t, JournalPath(crashed))
	const sector = 512 // what SQLite writes here (the fixture checks)
	if binary.BigEndian.Uint32(jr[20:]) != sector {
		t.Fatalf("journal sector size %d", binary.BigEndian.Uint32(jr[20:]))
	}
	recSize := 1024 + 8
	super := func(name string) []byte {
		// lock-byte page number | name | length | checksum | magic
		var b []byte
		b = binary.BigEndian.AppendUint32(b, format.LockBytePage(1024))
		b = append(b, name...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(name)))
		var sum uint32
		for _, c := range []byte(name) {
			sum += uint32(c)
		}
		b = binary.BigEndian.AppendUint32(b, sum)
		return append(b, format.JournalMagic[:]...)
	}
	// Names of the form sqlite3 gives super-journals (-mj, nine hex
	// digits, the third last 9): SQLite 3.54 takes any other for a
	// damaged record and rolls back.
	existing := filepath.Join(t.TempDir(), "v.db-mj01234A9BC")
	if err := os.WriteFile(existing, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "v.db-mj0123459ab")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	variants := []struct {
		name    string
		edit    func([]byte) []byte
		records bool // the read-only pager reads pages from the journal
	}{
		{"as left", func(b []byte) []byte { return b }, true},
		{"torn in its last record", func(b []byte) []byte { return b[:len(b)-recSize/2] }, true},
		{"a late byte flipped", func(b []byte) []byte { b[len(b)-recSize/2] ^= 0x55; return b }, true},
		{"a first record's page flipped", func(b []byte) []byte { b[sector+4+1024-200] ^= 0x55; return b }, false},
		{"first count 0xFFFFFFFF", func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 0xFFFFFFFF); return b }, true},
		{"first count 0", func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 0); return b }, false},
		{"zeroed header (PERSIST)", func(b []byte) []byte { clear(b[:28]); return b }, false},
		{"bad magic", func(b []byte) []byte { b[1] ^= 0xff; return b }, false},
		{"garbage", func(b []byte) []byte { return []byte{1, 2, 3} }, false},
		// A journal naming a super-journal that is gone belongs to a
		// transaction that committed: not hot (fileformat2.html, "hot
		// journals").
		{"super-journal gone", func(b []byte) []byte { return append(b, super(filepath.Join(t.TempDir(), "v.db-mjABCDEF9AB"))...) }, false},
		{"super-journal present", func(b []byte) []byte { return append(b, super(existing)...) }, true},
		// An empty super-journal is one that does not exist to sqlite3
		// (unixAccess: a regular file of 0 bytes is absent).
		{"super-journal empty", func(b []byte) []byte { return append(b, super(empty)...) }, false},
		// A name of another form is a damaged record to SQLite 3.54
		// (sqlite3 3.40 does not test the form): rolled back.
		{"super-journal name of another form", func(b []byte) []byte { return append(b, super(filepath.Join(t.TempDir(), "gone"))...) }, true},
		{"empty", func(b []byte) []byte { return nil }, false},
		// sqlite3 reads a first header only from a journal of 512 bytes
		// or more (its sector size before it reads one), and takes one
		// with a page or sector size out of range for one never synced:
		// it deletes the journal and leaves the file as it is, longer
		// than the journal's original size.
		{"shorter than a sector", func(b []byte) []byte { return b[:100] }, false},
		{"one byte short of a sector", func(b []byte) []byte { return b[:sector-1] }, false},
		{"bad sector size", func(b []byte) []byte { binary.BigEndian.PutUint32(b[20:], 1000); return b }, false},
		{"sector size too large", func(b []byte) []byte { binary.BigEndian.PutUint32(b[20:], 1<<17); return b }, false},
		{"bad page size", func(b []byte) []byte { binary.BigEndian.PutUint32(b[24:], 1000); return b }, false},
		// A whole first sector and no record: the file is truncated to
		// the original size, as the header's sector size is larger than
		// the journal (its records would start past its end).
		{"header only", func(b []byte) []byte { return b[:sector] }, false},
		{"sector past the end", func(b []byte) []byte { binary.BigEndian.PutUint32(b[20:], 1<<16); return b }, false},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "v.db")
			sqltest.CopyFile(t, crashed, path, false)
			if err := os.WriteFile(JournalPath(path), v.edit(bytes.Clone(jr)), 0o644); err != nil {
				t.Fatal(err)
			}
			if n := checkJournalAgainstSQLite(t, path, recoveredBySQLite); (n > 0) != v.records {
				t.Errorf("read-only pager read %d journal pages, want some: %v", n, v.records)
			}
		})
	}
}

// TestStaleJournalBesideEmptyFile: a journal beside an empty database
// belongs to another file: deleted, and the new database is created.
func TestStaleJournalBesideEmptyFile(t *testing.T) {
	crashed, _ := hotJournalFixture(t, 4096)
	path := filepath.Join(t.TempDir(), "e.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sqltest.CopyFile(t, JournalPath(crashed), JournalPath(path), false)
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.JournalRecords() != 0 {
		t.Error("read-only pager read a stale journal")
	}
	r.Close()
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := os.Stat(JournalPath(path)); err == nil {
		t.Error("stale journal kept")
	}
}

// TestHugeJournalIsMapped: a hot journal is mapped, not read into memory:
// a legitimate one can be as large as the database, and a damaged one
// (here, sparse zeros after its records) much larger. Reading a 4 GiB
// journal whole was a 4 GiB allocation.
func TestHugeJournalIsMapped(t *testing.T) {
	if vfs.MapCopies {
		t.Skip("File.Map copies the file on this platform")
	}
	crashed, committed := hotJournalFixture(t, 4096)
	const size = 4 << 30
	for _, readOnly := range []bool{true, false} {
		t.Run(fmt.Sprint("read-only=", readOnly), func(t *testing.T) {
			path := copyPair(t, crashed)
			if err := os.Truncate(JournalPath(path), size); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			p, err := Open(path, Options{ReadOnly: readOnly})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("Open allocated %d bytes for a %d-byte journal", grew, int64(size))
			}
			want := readFile(t, committed)
			if readOnly {
				if got := snapshotBytes(t, p); !bytes.Equal(got, want) {
					t.Errorf("read-only pager reads %d bytes, the committed file has %d", len(got), len(want))
				}
				return
			}
			if got := readFile(t, path); !bytes.Equal(got, want) {
				t.Errorf("rolled back to %d bytes, the committed file has %d", len(got), len(want))
			}
		})
	}
}
