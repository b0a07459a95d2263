package pager

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
	"github.com/pagodadb/pagoda/internal/wal"
)

// openTestIndex opens the -shm file of a new database path in a new
// directory, closed when the test ends.
func openTestIndex(t *testing.T) (x *walIndex, dbPath string) {
	t.Helper()
	dbPath = filepath.Join(t.TempDir(), "x.db")
	x, first, err := openWalIndex(vfs.OS, dbPath, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if !first {
		t.Fatal("the only connection to a new -shm file is not the first")
	}
	t.Cleanup(func() { x.close(false) })
	return x, dbPath
}

// TestWalIndexFirstEmpties: the first connection cuts a -shm file left by
// others to 3 bytes, as sqlite3 does, whatever it held: short of a
// region, it reads as no header. (Not to 0: ext4 writes out a file cut to
// 0 and written again when it is closed.)
func TestWalIndexFirstEmpties(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "x.db")
	if err := os.WriteFile(shmPath(dbPath), make([]byte, 2*shmRegionSize), 0o644); err != nil {
		t.Fatal(err)
	}
	x, first, err := openWalIndex(vfs.OS, dbPath, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer x.close(false)
	if !first {
		t.Fatal("the only connection is not the first")
	}
	st, err := os.Stat(shmPath(dbPath))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != shmTruncSize {
		t.Errorf("-shm of %d bytes after the first connection took it, want %d", st.Size(), shmTruncSize)
	}
	if _, err := x.block(0, false); !errors.Is(err, errNoRegion) {
		t.Errorf("block 0 of the emptied file: %v, want errNoRegion", err)
	}
}

// joinTestIndex opens the -shm file of dbPath beside a connection that has
// it open, which makes this one not the first: the file is used as it is.
// It is closed when the test ends.
func joinTestIndex(t *testing.T, dbPath string) *walIndex {
	t.Helper()
	x, first, err := openWalIndex(vfs.OS, dbPath, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.close(false) })
	if first {
		t.Fatal("beside an open connection, openWalIndex found itself the first (and emptied the file)")
	}
	return x
}

// TestWalIndexHdrEncoding: a header round-trips through its 48 bytes, the
// checksum covers exactly the first 40, and the page size takes szPage's
// form (65536 as 1).
func TestWalIndexHdrEncoding(t *testing.T) {
	h := walIndexHdr{
		version: walIndexVersion, unused: 0x01020304, change: 7, isInit: 1, bigEndCksum: 0,
		szPage: walIndexSzPage(4096), mxFrame: 12345, nPage: 77,
		frameCksum: [2]uint32{0xdeadbeef, 0x01234567}, salt: [2]uint32{0x11223344, 0x55667788},
	}
	h.cksum = h.checksum()
	var b [walIndexHdrSize]byte
	h.encode(b[:])
	if got := decodeWalIndexHdr(b[:]); got != h {
		t.Fatalf("round trip: %+v, want %+v", got, h)
	}
	if !h.valid() {
		t.Fatal("a header with its checksum is not valid")
	}
	// The salts keep the WAL header's byte order (wal.c copies its bytes).
	if string(b[hdrOffSalt:hdrOffSalt+8]) != "\x11\x22\x33\x44\x55\x66\x77\x88" {
		t.Errorf("salt bytes % x, want the WAL header's big-endian order", b[hdrOffSalt:hdrOffSalt+8])
	}
	for i := range hdrOffCksum {
		c := b
		c[i] ^= 0x40
		if d := decodeWalIndexHdr(c[:]); d.valid() {
			t.Errorf("byte %d changed: the checksum still matches", i)
		}
	}
	notInit := h
	notInit.isInit = 0
	notInit.cksum = notInit.checksum()
	if notInit.valid() {
		t.Error("a header with isInit 0 is valid")
	}
	for ps := 512; ps <= 65536; ps *= 2 {
		sz := walIndexSzPage(ps)
		if want := uint16(ps); ps == 65536 && sz != 1 || ps < 65536 && sz != want {
			t.Errorf("szPage(%d) = %#x", ps, sz)
		}
		if got := (&walIndexHdr{szPage: sz}).pageSize(); got != ps {
			t.Errorf("page size of szPage %#x = %d, want %d", sz, got, ps)
		}
	}
}

// TestWalIndexHdrShared: a header written to the mapped file reads back; a
// torn write (the copies differ), isInit 0, a wrong checksum and a file
// without region 0 read as not valid; a valid header of another version is
// ErrUnsupported.
func TestWalIndexHdrShared(t *testing.T) {
	x, _ := openTestIndex(t)
	if _, ok, err := x.readHdr(); ok || err != nil {
		t.Fatalf("empty -shm: ok=%v, %v; want not valid", ok, err)
	}
	want, err := x.writeHdr(walIndexHdr{change: 3, mxFrame: 9, nPage: 4, szPage: walIndexSzPage(1024), salt: [2]uint32{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, err := x.readHdr(); !ok || err != nil || got != want {
		t.Fatalf("readHdr = %+v, %v, %v; want %+v", got, ok, err, want)
	}
	blk, err := x.block(0, false)
	if err != nil {
		t.Fatal(err)
	}
	store := func(copy int, h walIndexHdr) {
		var b [walIndexHdrSize]byte
		h.encode(b[:])
		blk.storeHdr(copy*hdrWords, &b)
	}
	torn := want
	torn.mxFrame++
	torn.cksum = torn.checksum()
	store(1, torn) // a writer between its two copies
	if _, ok, _ := x.readHdr(); ok {
		t.Error("copies that differ read as valid")
	}
	store(0, torn)
	if got, ok, _ := x.readHdr(); !ok || got != torn {
		t.Error("the writer's finished header does not read back")
	}
	bad := torn
	bad.cksum[1]++
	store(1, bad)
	store(0, bad)
	if _, ok, _ := x.readHdr(); ok {
		t.Error("a wrong checksum reads as valid")
	}
	future := torn
	future.version++
	future.cksum = future.checksum()
	store(1, future)
	store(0, future)
	if _, _, err := x.readHdr(); !errors.Is(err, format.ErrUnsupported) {
		t.Errorf("version %d: %v, want ErrUnsupported", future.version, err)
	}
}

// walModel is the index's model: the frames of each page, in order.
type walModel map[uint32][]uint32

// find returns the newest frame of pgno in [minFrame, maxFrame], 0 if none.
func (m walModel) find(pgno, minFrame, maxFrame uint32) uint32 {
	fs := m[pgno]
	i := sort.Search(len(fs), func(i int) bool { return fs[i] > maxFrame })
	if i == 0 || fs[i-1] < minFrame {
		return 0
	}
	return fs[i-1]
}

// truncate forgets the frames after mxFrame.
func (m walModel) truncate(mxFrame uint32) {
	for p, fs := range m {
		i := sort.Search(len(fs), func(i int) bool { return fs[i] > mxFrame })
		m[p] = fs[:i]
	}
}

// appendFrames appends frames from..to to x and m, frame f holding page
// pageOf(f).
func appendFrames(t *testing.T, x *walIndex, m walModel, from, to uint32, pageOf func(uint32) uint32) {
	t.Helper()
	for f := from; f <= to; f++ {
		p := pageOf(f)
		if err := x.appendFrame(f, p); err != nil {
			t.Fatalf("append frame %d (page %d): %v", f, p, err)
		}
		m[p] = append(m[p], f)
	}
}

// checkFind compares x's findFrame with the model for every page in pages
// and every window [min, max] given.
func checkFind(t *testing.T, x *walIndex, m walModel, pages []uint32, windows [][2]uint32) {
	t.Helper()
	bad := 0
	for _, w := range windows {
		for _, p := range pages {
			got, err := x.findFrame(p, w[0], w[1])
			if want := m.find(p, w[0], w[1]); err != nil || got != want {
				if bad++; bad < 10 {
					t.Errorf("find page %d in [%d, %d] = %d, %v; want %d", p, w[0], w[1], got, err, want)
				}
			}
		}
	}
}

// collidingPages returns n pages whose probes all begin at slot k.
func collidingPages(k uint32, n int) []uint32 {
	var first uint32
	for p := uint32(1); ; p++ {
		if walHash(p) == k {
			first = p
			break
		}
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = first + uint32(i)*hashSlots // 383 is odd: p and p+8192 share a slot
	}
	return out
}

// TestWalIndexHashBlocks: frames across the block boundaries (4062 | 4063,
// 4062+4096 | +1, ...) are found as the model finds them, in every window,
// with pages rewritten often and probes that collide and wrap around the
// table's end; the file grows region by region with no hole, and a block
// handed out stays valid as others are mapped.
func TestWalIndexHashBlocks(t *testing.T) {
	x, _ := openTestIndex(t)
	wrap := collidingPages(hashSlots-2, 6) // probes pass the table's end
	same := collidingPages(walHash(7), 40) // 7 and 39 others
	pageOf := func(f uint32) uint32 {
		switch {
		case f%13 == 0:
			return wrap[f/13%uint32(len(wrap))]
		case f%5 == 0:
			return same[f/5%uint32(len(same))]
		}
		return 1 + f*7919%997
	}
	m := walModel{}
	appendFrames(t, x, m, 1, 100, pageOf)
	blk0, err := x.block(0, false)
	if err != nil {
		t.Fatal(err)
	}
	last := uint32(hashPagesFirst + 2*hashPages + 300) // into block 3
	appendFrames(t, x, m, 101, last, pageOf)
	pages := slices.Concat(wrap, same)
	for p := uint32(1); p <= 1000; p++ {
		pages = append(pages, p)
	}
	b1, b2 := uint32(hashPagesFirst), uint32(hashPagesFirst+hashPages)
	checkFind(t, x, m, pages, [][2]uint32{
		{1, last}, {1, 1}, {1, b1 - 1}, {1, b1}, {1, b1 + 1}, {1, b2}, {1, b2 + 1},
		{b1, b2}, {b1 + 1, b2}, {b1 + 1, last}, {b2 + 1, last}, {b2, b2}, {last, last},
		{0, 0}, {5, 4},
	})
	if got := atomicPgno(blk0, 0, 100); got != pageOf(100) {
		t.Errorf("block 0, mapped before the file grew, reads page %d for frame 100, want %d", got, pageOf(100))
	}
	st, err := os.Stat(x.path)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(4 * shmRegionSize); st.Size() != want {
		t.Errorf("-shm of %d bytes for 4 blocks, want %d", st.Size(), want)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Blocks*512 < st.Size() {
		t.Errorf("-shm of %d bytes has %d allocated: holes", st.Size(), sys.Blocks*512)
	}
}

// atomicPgno reads the page of frame f of block b.
func atomicPgno(blk *walBlock, b int, f uint32) uint32 {
	return blk.pgnos(b)[f-walBlockZero(b)-1]
}

// TestWalIndexRollback: truncateFrames removes the entries after a frame,
// in its block, and a block past it is cleared when a frame first reaches
// it again; entries that a writer left after the last commit (it died
// mid-transaction) are removed by the next writer's first append, as
// walIndexAppend's walCleanupHash does.
func TestWalIndexRollback(t *testing.T) {
	x, _ := openTestIndex(t)
	m := walModel{}
	old := func(f uint32) uint32 { return 1 + f%50 }
	appendFrames(t, x, m, 1, 5000, old) // into block 1
	for _, mx := range []uint32{4700, 4100, 4000} {
		if err := x.truncateFrames(mx); err != nil {
			t.Fatal(err)
		}
		m.truncate(mx)
		checkFind(t, x, m, pagesUpTo(60), [][2]uint32{{1, mx}})
	}
	// Block 1 keeps entries for 4063..4100: the next frame there clears it.
	newer := func(f uint32) uint32 { return 100 + f%30 }
	appendFrames(t, x, m, 4001, 4300, newer)
	checkFind(t, x, m, pagesUpTo(130), [][2]uint32{{1, 4300}, {1, 4062}, {4063, 4300}})

	// A dead writer's frames 4301..4400, not committed: the next writer
	// appends from 4301 over them.
	dead := walModel{}
	appendFrames(t, x, dead, 4301, 4400, func(f uint32) uint32 { return 500 + f%7 })
	appendFrames(t, x, m, 4301, 4310, newer)
	checkFind(t, x, m, pagesUpTo(510), [][2]uint32{{1, 4310}, {1, 4400}})
	blk, err := x.block(1, false)
	if err != nil {
		t.Fatal(err)
	}
	for f := uint32(4311); f <= 4400; f++ {
		if p := atomicPgno(blk, 1, f); p != 0 {
			t.Fatalf("the dead writer's frame %d still holds page %d", f, p)
		}
	}
	for k := range uint32(hashSlots) {
		if i := blk.slot(k); i > 4310-walBlockZero(1) {
			t.Fatalf("slot %d still holds the dead writer's entry %d", k, i)
		}
	}
}

func pagesUpTo(n uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(i) + 1
	}
	return out
}

// TestWalIndexCorrupt: a block whose slots are all taken fails an append
// and a lookup with ErrCorrupt instead of probing forever, as does a slot
// that names an entry past the block's page array.
func TestWalIndexCorrupt(t *testing.T) {
	x, _ := openTestIndex(t)
	appendFrames(t, x, walModel{}, 1, 10, func(f uint32) uint32 { return f })
	blk, err := x.block(0, false)
	if err != nil {
		t.Fatal(err)
	}
	for k := range uint32(hashSlots) {
		if blk.slot(k) == 0 {
			blk.setSlot(k, 1)
		}
	}
	if err := x.appendFrame(11, 3); !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("append to a full table: %v, want ErrCorrupt", err)
	}
	if _, err := x.findFrame(12345, 1, 10); !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("find in a full table: %v, want ErrCorrupt", err)
	}
	x2, _ := openTestIndex(t)
	appendFrames(t, x2, walModel{}, 1, hashPagesFirst+5, func(f uint32) uint32 { return f })
	blk, _ = x2.block(0, false)
	blk.setSlot(walHash(5), hashPagesFirst+3) // frame 4065 is in block 1, not 0
	if _, err := x2.findFrame(5, 1, hashPagesFirst+5); !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("a slot past block 0's pages: %v, want ErrCorrupt", err)
	}
}

// TestWalIndexLocks: the dead-man switch makes the first connection the
// one that empties the file and no other; the lock bytes exclude as
// sqlite3's do; recover sets the read marks whose locks are free and
// leaves the one another connection holds.
func TestWalIndexLocks(t *testing.T) {
	requireOFD(t)
	a, dbPath := openTestIndex(t)
	if _, err := a.writeHdr(walIndexHdr{mxFrame: 1}); err != nil {
		t.Fatal(err)
	}
	b := joinTestIndex(t, dbPath)
	if _, ok, _ := b.readHdr(); !ok {
		t.Fatal("the second connection emptied the file")
	}
	if err := a.lock(walLockWrite, 1, true); err != nil {
		t.Fatal(err)
	}
	if err := b.lock(walLockWrite, 1, true); !errors.Is(err, ErrLocked) {
		t.Errorf("a second writer: %v, want ErrLocked", err)
	}
	if err := b.lock(walLockRead(2), 1, false); err != nil {
		t.Fatal(err)
	}
	if err := a.lock(walLockRead(2), 1, false); err != nil {
		t.Errorf("two readers of one slot: %v", err)
	}
	if err := a.unlock(walLockRead(2), 1); err != nil {
		t.Fatal(err)
	}
	if err := a.lock(walLockCkpt, 2, true); err != nil { // CKPT, RECOVER
		t.Fatal(err)
	}
	info, err := a.ckptInfo()
	if err != nil {
		t.Fatal(err)
	}
	for i := range shmReaders {
		info.setReadMark(i, 1000+uint32(i))
	}
	log := &wal.Log{Valid: true, Header: wal.Header{Magic: wal.MagicLE, Salt1: 5, Salt2: 6}}
	h, err := a.recover(log, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint32{0, readMarkNotUsed, 1002, readMarkNotUsed, readMarkNotUsed}
	for i, w := range want {
		if got := info.readMark(i); got != w {
			t.Errorf("aReadMark[%d] = %#x after recovery, want %#x", i, got, w)
		}
	}
	if h.mxFrame != 0 || h.salt != [2]uint32{5, 6} || h.szPage != 0 || info.nBackfill() != 0 || info.nBackfillAttempted() != 0 {
		t.Errorf("recovery of a log with nothing committed: %+v, nBackfill %d, attempted %d", h, info.nBackfill(), info.nBackfillAttempted())
	}
	if err := a.unlock(walLockWrite, 3); err != nil {
		t.Fatal(err)
	}
	if err := b.lock(walLockWrite, 1, true); err != nil {
		t.Errorf("WRITE once the first writer let go: %v", err)
	}
	if err := a.close(false); err != nil {
		t.Fatal(err)
	}
	if err := b.close(true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(shmPath(dbPath)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("close(remove) left the -shm file: %v", err)
	}
}

// FuzzWalIndexHdr: any 48 bytes decode to a header that encodes back to
// them, and are valid exactly when isInit is set and the checksum of the
// first 40 bytes, on native words, is the last 8.
func FuzzWalIndexHdr(f *testing.F) {
	h := walIndexHdr{version: walIndexVersion, change: 1, isInit: 1, szPage: walIndexSzPage(65536), mxFrame: 4063, nPage: 2, salt: [2]uint32{9, 8}}
	h.cksum = h.checksum()
	var b [walIndexHdrSize]byte
	h.encode(b[:])
	f.Add(b[:])
	f.Add(make([]byte, walIndexHdrSize))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < walIndexHdrSize {
			return
		}
		h := decodeWalIndexHdr(in)
		var out [walIndexHdrSize]byte
		h.encode(out[:])
		if string(out[:]) != string(in[:walIndexHdrSize]) {
			t.Fatalf("% x encodes back as % x", in[:walIndexHdrSize], out)
		}
		s0, s1 := wal.Checksum(in[:hdrOffCksum], 0, 0, nativeBigEndian)
		if want := in[hdrOffIsInit] != 0 && h.cksum == [2]uint32{s0, s1}; h.valid() != want {
			t.Fatalf("valid() = %v, want %v", h.valid(), want)
		}
		h.isInit = 1
		h.cksum = h.checksum()
		if !h.valid() {
			t.Fatal("a header with its checksum set is not valid")
		}
	})
}
