package pager

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/vfs"
	"github.com/pagodadb/pagoda/internal/wal"
)

// The wal-index against SQLite: an index that sqlite3 built, read by
// walindex.go; indexes that walindex.go built, used by sqlite3.

// walIndexPageSize is the page size of the tests' databases: small, so
// that the WAL holds thousands of frames cheaply.
const walIndexPageSize = 1024

// walIndexRows is the size of walIndexWorkload's table, in rows.
const walIndexRows = 2000

// walIndexWorkload writes, through db (a WAL-mode connection that does not
// checkpoint), a table of walIndexRows rows of about 600 bytes in
// transactions of 500 rows, then rewrites a fortieth of them, rounds
// times: with 1 KiB pages, a row to a page, about 2000 + 50*rounds
// frames, every page rewritten many times.
func walIndexWorkload(t testing.TB, db *sql.DB, rounds int) {
	t.Helper()
	sqltest.Run(t, db, "PRAGMA synchronous=OFF", "CREATE TABLE t(id INTEGER PRIMARY KEY, tag TEXT, b BLOB)")
	for i := range walIndexRows / 500 {
		if _, err := db.Exec(`WITH RECURSIVE c(x) AS (SELECT ? UNION ALL SELECT x+1 FROM c WHERE x < ?)
			INSERT INTO t SELECT x, printf('row-%08d-old', x), randomblob(600) FROM c`, i*500+1, (i+1)*500); err != nil {
			t.Fatal(err)
		}
	}
	for r := range rounds {
		if _, err := db.Exec("UPDATE t SET b = randomblob(600) WHERE id % 40 = ?", r%40); err != nil {
			t.Fatal(err)
		}
	}
}

// walIndexFixture returns a database whose WAL sqlite3 wrote with
// walIndexWorkload (rounds rewrites), copied while sqlite3 had it open: no
// -shm file beside it, no connection open to it.
func walIndexFixture(t *testing.T, rounds int) string {
	t.Helper()
	if vfs.MapCopies {
		t.Skip("no shared memory without mmap")
	}
	return sqltest.WithWALFunc(t, walIndexPageSize, nil, func(db *sql.DB) { walIndexWorkload(t, db, rounds) })
}

// copyWithWAL copies a database and its WAL into a new directory; with
// walBytes set, the copy's WAL holds those bytes instead.
func copyWithWAL(t *testing.T, src string, walBytes []byte) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy.db")
	sqltest.CopyFile(t, src, dst, false)
	if walBytes == nil {
		walBytes = readFile(t, wal.Path(src))
	}
	if err := os.WriteFile(wal.Path(dst), walBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// recoverLog returns the committed log of WAL image data, read as sqlite3's
// recovery reads it, with the page size its header gives.
func recoverLog(t *testing.T, data []byte) *wal.Log {
	t.Helper()
	log, err := wal.Recover(data, wal.PageSizeOf(data))
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// sqliteTable returns the rows of table t and the user version as SQLite
// reads them from path, and the connection it read them with, which stays
// open until the test ends.
func sqliteTable(t *testing.T, path string) ([]string, *sql.DB) {
	t.Helper()
	db := sqltest.Open(t, path)
	rows := sqltest.Rows(t, db, "SELECT id, tag, hex(b) FROM t ORDER BY id")
	rows = append(rows, sqltest.Rows(t, db, "PRAGMA user_version")...)
	return rows, db
}

// cliSummary is what the sqlite3 shell reads of the table and the file.
const cliSummary = "SELECT count(*), sum(length(b)), group_concat(tag, ','), sum(unicode(b)) FROM t; PRAGMA user_version; PRAGMA integrity_check;"

// checkCLI compares what the sqlite3 shell, another SQLite (the system's,
// in C) in another process, reads from path with what it reads from ref,
// when it is installed.
func checkCLI(t *testing.T, path, ref string) {
	t.Helper()
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Log("the sqlite3 shell is not installed: only modernc.org/sqlite read the file")
		return
	}
	got, ok := runSQLite(t, bin, path, cliSummary)
	want, okRef := runSQLite(t, bin, ref, cliSummary)
	if !ok || !okRef || got != want {
		t.Errorf("the sqlite3 shell reads %.200q (ok %v) through the index, %.200q (ok %v) from the reference", got, ok, want, okRef)
	}
}

// holdShared holds SHARED on the database file at path until the test
// ends, as every connection to a WAL-mode file does (rule 14): a sqlite3
// connection that closes then is not the last, and neither checkpoints
// nor removes the WAL and the -shm file.
func holdShared(t *testing.T, path string) {
	t.Helper()
	f, err := vfs.OS.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Lock(vfs.LockShared); err != nil {
		t.Fatal(err)
	}
}

// recoverIndex opens path's -shm file, which must be new to it (no other
// connection), and rebuilds it from log holding recovery's locks (rule
// 18), which it releases but WRITE when keepWrite is set. The index stays
// open, holding DMS shared, until the test ends.
func recoverIndex(t *testing.T, path string, log *wal.Log, keepWrite bool) (*walIndex, walIndexHdr) {
	t.Helper()
	x, first, err := openWalIndex(vfs.OS, path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.close(false) })
	if !first {
		t.Fatal("another connection holds the -shm file")
	}
	if err := x.lock(walLockWrite, 1, true); err != nil {
		t.Fatal(err)
	}
	if err := x.lock(walLockCkpt, 2, true); err != nil { // CKPT, RECOVER
		t.Fatal(err)
	}
	h, err := x.recover(log, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.unlock(walLockCkpt, 2); err != nil {
		t.Fatal(err)
	}
	if !keepWrite {
		if err := x.unlock(walLockWrite, 1); err != nil {
			t.Fatal(err)
		}
	}
	return x, h
}

// checkIndexFinds compares findFrame with wal's own index of log for every
// page of the log, in windows [1, max] for max at each window given (and
// the log's last frame), and [min, last] for min at each.
func checkIndexFinds(t *testing.T, x *walIndex, log *wal.Log, bounds []uint32) {
	t.Helper()
	last := log.MaxFrame
	bad := 0
	check := func(p, lo, hi uint32) {
		want := log.Index.Find(p, hi)
		if want < lo {
			want = 0
		}
		if got, err := x.findFrame(p, lo, hi); err != nil || got != want {
			if bad++; bad <= 10 {
				t.Errorf("page %d in frames [%d, %d]: the -shm index finds %d (%v), the WAL's %d", p, lo, hi, got, err, want)
			}
		}
	}
	for p := uint32(1); p <= log.DBSize; p++ {
		check(p, 1, last)
		for _, b := range bounds {
			if b >= 1 && b <= last {
				check(p, 1, b)
				check(p, b, last)
			}
		}
	}
}

// blockBounds returns frames at and around the hash blocks' edges.
func blockBounds() []uint32 {
	var out []uint32
	for b := 1; b <= 4; b++ {
		z := walBlockZero(b)
		out = append(out, z-1, z, z+1)
	}
	return out
}

// TestWalIndexReadsSQLite: the -shm file of a live sqlite3 connection,
// opened beside it (its DMS lock makes this connection not the first: the
// file is used as it is), holds the header the WAL gives (mxFrame, nPage,
// the last commit's checksum, the salts, the page size, the byte order)
// with a checksum walindex.go computes alike, and finds for every page,
// in windows across the block edges, the frame that wal's own index of
// the WAL finds; after a sqlite3 checkpoint it reads the nBackfill sqlite3
// wrote.
func TestWalIndexReadsSQLite(t *testing.T) {
	if vfs.MapCopies {
		t.Skip("no shared memory without mmap")
	}
	path := filepath.Join(t.TempDir(), "live.db")
	db := sqltest.Open(t, path)
	sqltest.Run(t, db, fmt.Sprintf("PRAGMA page_size=%d", walIndexPageSize), "PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0")
	walIndexWorkload(t, db, 220)

	x := joinTestIndex(t, path) // sqlite3 holds DMS shared
	h, ok, err := x.readHdr()
	if !ok || err != nil {
		t.Fatalf("sqlite3's header does not read as valid: %+v, %v", h, err)
	}
	log := recoverLog(t, readFile(t, wal.Path(path)))
	want := walIndexHdr{
		version: walIndexVersion, change: h.change, isInit: 1,
		szPage: walIndexSzPage(walIndexPageSize), mxFrame: log.MaxFrame, nPage: log.DBSize,
		frameCksum: [2]uint32{log.Cksum1, log.Cksum2}, salt: [2]uint32{log.Header.Salt1, log.Header.Salt2},
	}
	if log.Header.BigEndian() {
		want.bigEndCksum = 1
	}
	want.cksum = want.checksum()
	if h != want {
		t.Errorf("sqlite3's header\n\t%+v\nthe WAL's\n\t%+v", h, want)
	}
	if h.mxFrame <= walBlockZero(2) {
		t.Fatalf("the WAL holds %d frames: fewer than three hash blocks", h.mxFrame)
	}
	t.Logf("%d frames, %d pages, %d hash blocks", h.mxFrame, h.nPage, walFramePage(h.mxFrame)+1)
	checkIndexFinds(t, x, log, append(blockBounds(), h.mxFrame/3, h.mxFrame/2))

	info, err := x.ckptInfo()
	if err != nil {
		t.Fatal(err)
	}
	if n := info.nBackfill(); n != 0 {
		t.Errorf("nBackfill %d before any checkpoint", n)
	}
	var busy, frames, done int
	if err := db.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &done); err != nil {
		t.Fatal(err)
	}
	if uint32(done) != h.mxFrame || info.nBackfill() != h.mxFrame || info.nBackfillAttempted() != h.mxFrame {
		t.Errorf("after a checkpoint of %d of %d frames: nBackfill %d, nBackfillAttempted %d", done, h.mxFrame, info.nBackfill(), info.nBackfillAttempted())
	}
}

// TestWalIndexRecoverForSQLite: the index that recover builds from a WAL
// sqlite3 wrote (with no -shm and no connection) is, byte for byte, the
// one sqlite3's own recovery builds from a copy; and a sqlite3 connection
// that opens the file while the index is held open (DMS shared) uses it
// without rebuilding it (the header's iChange, set to a value sqlite3's
// recovery would not write, is still there after) and reads exactly what
// SQLite alone reads from the copy, integrity_check ok; so does the sqlite3
// shell.
func TestWalIndexRecoverForSQLite(t *testing.T) {
	crashed := walIndexFixture(t, 220)
	ref := copyWithWAL(t, crashed, nil)
	refRows, _ := sqliteTable(t, ref) // sqlite3 recovers ref's index and keeps it open
	refShm := readFile(t, shmPath(ref))

	log := recoverLog(t, readFile(t, wal.Path(crashed)))
	x, h := recoverIndex(t, crashed, log, false)
	if ours := readFile(t, shmPath(crashed)); !bytes.Equal(ours, refShm) {
		t.Errorf("the recovered -shm differs from sqlite3's: %s", shmDiff(ours, refShm))
	}
	if err := x.lock(walLockWrite, 1, true); err != nil {
		t.Fatal(err)
	}
	h.change = 0x5eed
	h, err := x.writeHdr(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.unlock(walLockWrite, 1); err != nil {
		t.Fatal(err)
	}

	holdShared(t, crashed)
	rows, _ := sqliteTable(t, crashed)
	if !slices.Equal(rows, refRows) {
		t.Errorf("through the recovered index sqlite3 reads %d rows that differ from the %d it reads alone", len(rows), len(refRows))
	}
	sqltest.IntegrityCheck(t, crashed)
	checkCLI(t, crashed, ref)
	if got, ok, err := x.readHdr(); !ok || err != nil || got != h {
		t.Errorf("after sqlite3 read, the header is %+v (%v, %v), not the one written: sqlite3 rebuilt the index", got, ok, err)
	}
}

// shmDiff describes where two -shm images first differ.
func shmDiff(a, b []byte) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d bytes, %d bytes", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			where := "hash block"
			switch {
			case i < shmOffHdr1:
				where = "header copy 0"
			case i < shmOffBackfill:
				where = "header copy 1"
			case i < shmHeaderSize:
				where = "checkpoint info"
			}
			return fmt.Sprintf("offset %d (%s, region %d): %#x, %#x", i, where, i/shmRegionSize, a[i], b[i])
		}
	}
	return "no difference"
}

// TestWalIndexSnapshotForSQLite: sqlite3 reads the snapshot the index
// publishes, not the WAL's last commit: an index recovered from a prefix
// of the WAL (an earlier commit) makes sqlite3 read exactly what it reads
// alone from the WAL cut at that commit.
func TestWalIndexSnapshotForSQLite(t *testing.T) {
	crashed := walIndexFixture(t, 220)
	data := readFile(t, wal.Path(crashed))
	full := recoverLog(t, data)
	cut := wal.FrameOffset(full.MaxFrame/2, walIndexPageSize)
	early := recoverLog(t, data[:cut])
	if early.MaxFrame == 0 || early.MaxFrame >= full.MaxFrame {
		t.Fatalf("no earlier commit: %d of %d frames", early.MaxFrame, full.MaxFrame)
	}
	refEarly := copyWithWAL(t, crashed, data[:wal.FrameOffset(early.MaxFrame+1, walIndexPageSize)])
	refRows, _ := sqliteTable(t, refEarly)
	finalRows, _ := sqliteTable(t, copyWithWAL(t, crashed, nil))
	if slices.Equal(refRows, finalRows) {
		t.Fatal("the earlier commit reads as the last: the test would prove nothing")
	}

	recoverIndex(t, crashed, early, false)
	holdShared(t, crashed)
	rows, _ := sqliteTable(t, crashed)
	if !slices.Equal(rows, refRows) {
		t.Errorf("sqlite3 does not read the index's snapshot (frame %d of %d): same as the last commit: %v", early.MaxFrame, full.MaxFrame, slices.Equal(rows, finalRows))
	}
	sqltest.IntegrityCheck(t, crashed)
	checkCLI(t, crashed, refEarly)
}

// TestWalIndexPagodaFramesForSQLite: frames that pagoda's WAL writer
// (wal.File) appends after sqlite3's, indexed by appendFrame and published
// by writeHdr (rule 17), are what sqlite3 reads through the index: a row
// changed in place and the user version, the rest as before; and the index
// finds every page where wal's own index of the grown WAL does.
func TestWalIndexPagodaFramesForSQLite(t *testing.T) {
	crashed := walIndexFixture(t, 120)
	refRows, _ := sqliteTable(t, copyWithWAL(t, crashed, nil))

	var mu sync.Mutex
	w, err := wal.Open(vfs.OS, wal.Path(crashed), wal.Options{PageSize: walIndexPageSize, Lock: &mu})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	log := w.Log()
	x, h := recoverIndex(t, crashed, log, true) // WRITE kept: this connection writes
	dbFile := readFile(t, crashed)
	latest := func(p uint32) []byte {
		f, err := x.findFrame(p, 1, h.mxFrame)
		if err != nil {
			t.Fatal(err)
		}
		if f != 0 {
			return slices.Clone(w.Frame(f))
		}
		return slices.Clone(dbFile[(p-1)*walIndexPageSize : p*walIndexPageSize])
	}
	type change struct {
		pgno uint32
		page []byte
	}
	page1 := latest(1)
	binary.BigEndian.PutUint32(page1[60:], 4242) // the user version
	changes := []change{{1, page1}}
	want := slices.Clone(refRows)
	for _, id := range []int{42, 1999} {
		old := fmt.Sprintf("row-%08d-old", id)
		for p := uint32(2); p <= h.nPage; p++ {
			if pg := latest(p); bytes.Contains(pg, []byte(old)) {
				copy(pg[bytes.Index(pg, []byte(old)):], strings.Replace(old, "old", "new", 1))
				changes = append(changes, change{p, pg})
				want[id-1] = strings.Replace(want[id-1], old, strings.Replace(old, "old", "new", 1), 1)
				break
			}
		}
	}
	if len(changes) != 3 {
		t.Fatalf("found the pages of %d rows of 2", len(changes)-1)
	}
	want[len(want)-1] = "4242"
	for i, c := range changes {
		var commit uint32
		if i == len(changes)-1 {
			commit = h.nPage
		}
		if _, err := w.Append(c.pgno, c.page, commit); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	w.Publish()
	mu.Unlock()
	for f := h.mxFrame + 1; f <= log.MaxFrame; f++ {
		if err := x.appendFrame(f, log.Index.PageOf(f)); err != nil {
			t.Fatal(err)
		}
	}
	h.mxFrame, h.nPage, h.frameCksum = log.MaxFrame, log.DBSize, [2]uint32{log.Cksum1, log.Cksum2}
	h.change++
	if h, err = x.writeHdr(h); err != nil {
		t.Fatal(err)
	}
	if err := x.unlock(walLockWrite, 1); err != nil {
		t.Fatal(err)
	}
	checkIndexFinds(t, x, log, []uint32{log.MaxFrame - 3, log.MaxFrame - 2})

	holdShared(t, crashed)
	rows, _ := sqliteTable(t, crashed)
	if !slices.Equal(rows, want) {
		for i := range min(len(rows), len(want)) {
			if rows[i] != want[i] {
				t.Errorf("row %d: sqlite3 reads %.80q, want %.80q", i, rows[i], want[i])
			}
		}
		t.Fatalf("sqlite3 does not read pagoda's frames through the index (%d rows, want %d)", len(rows), len(want))
	}
	sqltest.IntegrityCheck(t, crashed)
	if got, ok, err := x.readHdr(); !ok || err != nil || got != h {
		t.Errorf("after sqlite3 read, the header is %+v (%v, %v): sqlite3 rebuilt the index", got, ok, err)
	}
}

// TestWalIndexInvalidHeaderForSQLite: a header that walIndexTryHdr refuses
// (a wrong checksum, copies that differ as a torn write leaves them,
// isInit 0) makes sqlite3 rebuild the index rather than trust it: though
// the header claims an earlier commit, sqlite3 reads the WAL's last one,
// and leaves a valid header with its mxFrame.
func TestWalIndexInvalidHeaderForSQLite(t *testing.T) {
	fixture := walIndexFixture(t, 120)
	data := readFile(t, wal.Path(fixture))
	full := recoverLog(t, data)
	early := recoverLog(t, data[:wal.FrameOffset(full.MaxFrame/2, walIndexPageSize)])
	finalRows, _ := sqliteTable(t, copyWithWAL(t, fixture, nil))
	for _, tc := range []struct {
		name   string
		damage func(h walIndexHdr) (copy0, copy1 walIndexHdr)
	}{
		{"checksum", func(h walIndexHdr) (walIndexHdr, walIndexHdr) { h.cksum[0]++; return h, h }},
		{"torn", func(h walIndexHdr) (walIndexHdr, walIndexHdr) {
			h1 := h
			h1.mxFrame = full.MaxFrame // copy 1 written, copy 0 not yet
			h1.cksum = h1.checksum()
			return h, h1
		}},
		{"not init", func(h walIndexHdr) (walIndexHdr, walIndexHdr) {
			h.isInit = 0
			h.cksum = h.checksum()
			return h, h
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := copyWithWAL(t, fixture, nil)
			x, h := recoverIndex(t, path, early, false)
			blk, err := x.block(0, false)
			if err != nil {
				t.Fatal(err)
			}
			c0, c1 := tc.damage(h)
			var b0, b1 [walIndexHdrSize]byte
			c0.encode(b0[:])
			c1.encode(b1[:])
			blk.storeHdr(shmOffHdr1/4, &b1)
			blk.storeHdr(shmOffHdr0/4, &b0)
			if _, ok, _ := x.readHdr(); ok {
				t.Fatal("the damaged header reads as valid")
			}
			holdShared(t, path)
			rows, _ := sqliteTable(t, path)
			if !slices.Equal(rows, finalRows) {
				t.Errorf("sqlite3 trusted the damaged header: it does not read the WAL's last commit")
			}
			sqltest.IntegrityCheck(t, path)
			got, ok, err := x.readHdr()
			if !ok || err != nil || got.mxFrame != full.MaxFrame {
				t.Errorf("after sqlite3's recovery the header is %+v (%v, %v), want mxFrame %d", got, ok, err, full.MaxFrame)
			}
			checkIndexFinds(t, x, full, nil)
		})
	}
}
