package pager

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/vfs"
	"github.com/pagodadb/pagoda/internal/wal"
)

// The wal-index: SQLite's -shm file, the shared memory through which the
// connections of every process that opens a WAL-mode database agree on
// its last commit, find pages in the WAL, and keep checkpoints from
// copying pages a reader still reads (wal.c's "WAL-INDEX FORMAT"). It is
// mapped read-write and shared (vfs.File.MapShared), never read with
// pread while others write it, and holds every field in the machine's
// byte order: it is transient, rebuilt from the WAL by the first
// connection (recover). This file is its one home: the layout, and the
// operations on it that wal.c performs; who calls them when, under which
// locks, is the protocol (doc.go, rules 14 to 22).
//
// The file is a sequence of 32 KiB regions, mapped one at a time, as
// sqlite3 grows it. Region 0 begins with the 136-byte header:
//
//	OFF  SIZE  FIELD
//	  0    48  WalIndexHdr, copy 0 (written second, read first)
//	 48    48  WalIndexHdr, copy 1 (written first, read second)
//	 96     4  nBackfill: the frames copied into the database file
//	100    20  aReadMark[0..4]: the read marks, 0xffffffff when unused
//	120     8  the lock bytes, locked with fcntl, never read or written:
//	           WRITE 120, CKPT 121, RECOVER 122, READ(0..4) 123..127
//	128     4  nBackfillAttempted: the frames a checkpoint began to copy
//	           (its first byte is also the lock byte DMS, 128)
//	132     4  unused
//
// WalIndexHdr (wal.c's struct of that name):
//
//	OFF  SIZE  FIELD
//	  0     4  iVersion: 3007000
//	  4     4  unused
//	  8     4  iChange: changed by each commit
//	 12     1  isInit: 1 once written
//	 13     1  bigEndCksum: the WAL's checksums read big-endian words
//	 14     2  szPage: the page size; 1 means 65536
//	 16     4  mxFrame: the last committed frame
//	 20     4  nPage: the database size in pages as of mxFrame
//	 24     8  aFrameCksum[2]: the WAL's running checksum after mxFrame
//	 32     8  aSalt[2]: the WAL header's salts, as its big-endian bytes
//	 40     8  aCksum[2]: the WAL checksum of bytes 0..39, computed on
//	           words in the machine's order
//
// Each region holds one hash block, which indexes 4096 frames (block 0,
// whose page array begins after the header, 4062):
//
//	OFF    SIZE   FIELD
//	0      16384  aPgno[4096] u32: the page of each frame of the block
//	              (block 0: aPgno[4062] from offset 136), 0 past the last
//	16384  16384  aHash[8192] u16: 1-based indexes into aPgno, 0 = empty
//
// Frame k (1-based) is in block 0 when k <= 4062, else in block
// 1+(k-4063)/4096. Page P's entries sit in aHash from slot (P*383)&8191
// on, linear probing; the table is at most half full. An entry is written
// page first, slot second, and never moved; a reader whose snapshot ends
// at frame K ignores entries past K, so it reads a block while a writer
// appends to it.
const (
	shmRegionSize = 32768 // WALINDEX_PGSZ: the unit the file grows and is mapped in
	shmPageSize   = 4096  // the file is extended by a byte in each page of this size
	shmHeaderSize = 136   // WALINDEX_HDR_SIZE

	shmOffHdr0              = 0
	shmOffHdr1              = 48
	shmOffBackfill          = 96
	shmOffReadMarks         = 100
	shmOffLocks             = 120
	shmOffBackfillAttempted = 128
	shmOffDMS               = 128 // the dead-man switch lock byte (os_unix.c's UNIX_SHM_DMS)

	shmReaders      = 5         // WAL_NREADER: read marks and READ locks
	readMarkNotUsed = 1<<32 - 1 // READMARK_NOT_USED

	walIndexHdrSize   = 48
	walIndexVersion   = 3007000 // WALINDEX_MAX_VERSION
	hdrOffVersion     = 0
	hdrOffUnused      = 4
	hdrOffChange      = 8
	hdrOffIsInit      = 12
	hdrOffBigEndCksum = 13
	hdrOffSzPage      = 14
	hdrOffMxFrame     = 16
	hdrOffNPage       = 20
	hdrOffFrameCksum  = 24
	hdrOffSalt        = 32
	hdrOffCksum       = 40 // the checksum covers the bytes before it

	hashPages      = 4096                        // HASHTABLE_NPAGE: frames per block
	hashPagesFirst = hashPages - shmHeaderSize/4 // HASHTABLE_NPAGE_ONE: frames of block 0
	hashSlots      = 2 * hashPages               // HASHTABLE_NSLOT
	hashPrime      = 383                         // HASHTABLE_HASH_1
	hashWord       = hashPages                   // the word of a block where aHash begins
	shmHeaderWords = shmHeaderSize / 4           // the word where block 0's aPgno begins
	hdrWords       = walIndexHdrSize / 4
)

// shmWord and putShmWord decode and encode a 32-bit field of the -shm file
// read or written with pread and pwrite: the read-only pager's read mark
// (shm.go), which does not map the file.
func shmWord(b []byte) uint32       { return binary.NativeEndian.Uint32(b) }
func putShmWord(b []byte, v uint32) { binary.NativeEndian.PutUint32(b, v) }

// nativeBigEndian says whether this machine stores words big-endian: the
// order of every field of the -shm file but the salts, and of the words
// its header checksum reads.
var nativeBigEndian = binary.NativeEndian.Uint16([]byte{0x12, 0x34}) == 0x1234

// walIndexHdr is one copy of WalIndexHdr, field by field as stored.
type walIndexHdr struct {
	version     uint32 // iVersion
	unused      uint32
	change      uint32 // iChange
	isInit      uint8
	bigEndCksum uint8
	szPage      uint16 // the page size; 1 means 65536 (pageSize)
	mxFrame     uint32
	nPage       uint32
	frameCksum  [2]uint32
	salt        [2]uint32 // salt-1 and salt-2 as the WAL header gives them
	cksum       [2]uint32
}

// decodeWalIndexHdr decodes b[:walIndexHdrSize].
func decodeWalIndexHdr(b []byte) walIndexHdr {
	b = b[:walIndexHdrSize]
	ne := binary.NativeEndian
	return walIndexHdr{
		version:     ne.Uint32(b[hdrOffVersion:]),
		unused:      ne.Uint32(b[hdrOffUnused:]),
		change:      ne.Uint32(b[hdrOffChange:]),
		isInit:      b[hdrOffIsInit],
		bigEndCksum: b[hdrOffBigEndCksum],
		szPage:      ne.Uint16(b[hdrOffSzPage:]),
		mxFrame:     ne.Uint32(b[hdrOffMxFrame:]),
		nPage:       ne.Uint32(b[hdrOffNPage:]),
		frameCksum:  [2]uint32{ne.Uint32(b[hdrOffFrameCksum:]), ne.Uint32(b[hdrOffFrameCksum+4:])},
		// wal.c copies the WAL header's salt bytes (memcpy) and compares
		// them with a frame's (memcmp): they keep the WAL's big-endian order.
		salt:  [2]uint32{binary.BigEndian.Uint32(b[hdrOffSalt:]), binary.BigEndian.Uint32(b[hdrOffSalt+4:])},
		cksum: [2]uint32{ne.Uint32(b[hdrOffCksum:]), ne.Uint32(b[hdrOffCksum+4:])},
	}
}

// encode writes h into b[:walIndexHdrSize], its checksum as h holds it.
func (h *walIndexHdr) encode(b []byte) {
	b = b[:walIndexHdrSize]
	ne := binary.NativeEndian
	ne.PutUint32(b[hdrOffVersion:], h.version)
	ne.PutUint32(b[hdrOffUnused:], h.unused)
	ne.PutUint32(b[hdrOffChange:], h.change)
	b[hdrOffIsInit] = h.isInit
	b[hdrOffBigEndCksum] = h.bigEndCksum
	ne.PutUint16(b[hdrOffSzPage:], h.szPage)
	ne.PutUint32(b[hdrOffMxFrame:], h.mxFrame)
	ne.PutUint32(b[hdrOffNPage:], h.nPage)
	ne.PutUint32(b[hdrOffFrameCksum:], h.frameCksum[0])
	ne.PutUint32(b[hdrOffFrameCksum+4:], h.frameCksum[1])
	binary.BigEndian.PutUint32(b[hdrOffSalt:], h.salt[0])
	binary.BigEndian.PutUint32(b[hdrOffSalt+4:], h.salt[1])
	ne.PutUint32(b[hdrOffCksum:], h.cksum[0])
	ne.PutUint32(b[hdrOffCksum+4:], h.cksum[1])
}

// checksum returns the checksum h's fields before aCksum call for: the
// WAL's checksum over them, words in the machine's order
// (walChecksumBytes with nativeCksum set).
func (h *walIndexHdr) checksum() [2]uint32 {
	var b [walIndexHdrSize]byte
	h.encode(b[:])
	s0, s1 := wal.Checksum(b[:hdrOffCksum], 0, 0, nativeBigEndian)
	return [2]uint32{s0, s1}
}

// valid reports whether h is a header as walIndexTryHdr accepts it:
// written (isInit) and with its checksum.
func (h *walIndexHdr) valid() bool { return h.isInit != 0 && h.cksum == h.checksum() }

// pageSize returns the page size szPage gives (walPagesize).
func (h *walIndexHdr) pageSize() int { return int(h.szPage&0xfe00) + int(h.szPage&1)<<16 }

// walIndexSzPage returns szPage for a page size of 512 to 65536.
func walIndexSzPage(pageSize int) uint16 { return uint16(pageSize&0xff00 | pageSize>>16) }

// walBlock is one 32 KiB region of the -shm file as 32-bit words: a hash
// block, region 0's after the header. The hash slots are 16-bit, two to a
// word; Go has no 16-bit atomics, so a slot is read and written through
// its word (slot, setSlot).
type walBlock [shmRegionSize / 4]uint32

// slotShift is where slot k&1 of a word sits in it: the slot at the lower
// address is the low half of a little-endian word.
var slotShift = func() [2]uint32 {
	if nativeBigEndian {
		return [2]uint32{16, 0}
	}
	return [2]uint32{0, 16}
}()

// walFramePage returns the block that indexes frame (1-based), as wal.c's
// walFramePage.
func walFramePage(frame uint32) int {
	return int((uint64(frame) + hashPages - hashPagesFirst - 1) / hashPages)
}

// walBlockZero returns the frame before block b's first (wal.c's iZero):
// slot value i of the block is frame walBlockZero(b)+i.
func walBlockZero(b int) uint32 {
	if b == 0 {
		return 0
	}
	return hashPagesFirst + uint32(b-1)*hashPages
}

// walHash returns the slot where page pgno's probe begins (walHash).
func walHash(pgno uint32) uint32 { return pgno * hashPrime & (hashSlots - 1) }

// pgnos returns block b's aPgno: the page of each frame of the block, 0
// past the last.
func (blk *walBlock) pgnos(b int) []uint32 {
	if b == 0 {
		return blk[shmHeaderWords:hashWord]
	}
	return blk[:hashWord]
}

// slot returns aHash[k].
func (blk *walBlock) slot(k uint32) uint32 {
	return atomic.LoadUint32(&blk[hashWord+k/2]) >> slotShift[k&1] & 0xffff
}

// setSlot sets aHash[k] to v (wal.c's AtomicStore of a u16), leaving the
// other slot of the word as it is.
func (blk *walBlock) setSlot(k, v uint32) {
	w, sh := &blk[hashWord+k/2], slotShift[k&1]
	for {
		old := atomic.LoadUint32(w)
		if atomic.CompareAndSwapUint32(w, old, old&^(0xffff<<sh)|v<<sh) {
			return
		}
	}
}

// append is walIndexAppend on block blk, block b of the index: frame holds
// page pgno. The first frame of a block clears it; an entry already there
// (a writer that died mid-transaction, or a rollback) makes it remove the
// block's entries from frame on first (walCleanupHash). A probe longer than
// the entries the block can hold means the block is corrupt.
func (blk *walBlock) append(b int, frame, pgno uint32) error {
	idx := frame - walBlockZero(b)
	pg := blk.pgnos(b)
	if idx == 1 {
		// No reader looks at a block before its first frame is committed.
		clear(blk[hashWord-len(pg):])
	}
	if atomic.LoadUint32(&pg[idx-1]) != 0 {
		blk.truncate(b, frame-1)
	}
	k, collide := walHash(pgno), idx
	for blk.slot(k) != 0 {
		if collide == 0 {
			return format.Corruptf(0, "-shm block %d: the probe for page %d passes %d entries", b, pgno, idx)
		}
		collide--
		k = (k + 1) & (hashSlots - 1)
	}
	atomic.StoreUint32(&pg[idx-1], pgno)
	blk.setSlot(k, idx)
	return nil
}

// truncate is walCleanupHash: it removes the entries of block b for the
// frames after mxFrame, which is in the block. The entries it keeps stay
// where they are: each was probed past older entries only, so no probe for
// them passes a slot this empties.
func (blk *walBlock) truncate(b int, mxFrame uint32) {
	limit := mxFrame - walBlockZero(b)
	for k := range uint32(hashSlots) {
		if blk.slot(k) > limit {
			blk.setSlot(k, 0)
		}
	}
	pg := blk.pgnos(b)
	for i := int(limit); i < len(pg); i++ {
		atomic.StoreUint32(&pg[i], 0)
	}
}

// find returns the newest frame of block b in [minFrame, maxFrame] that
// holds page pgno, 0 when none does (one block's part of walFindFrame).
// Entries past maxFrame may be changing: they are skipped unread.
func (blk *walBlock) find(b int, pgno, minFrame, maxFrame uint32) (uint32, error) {
	zero, pg := walBlockZero(b), blk.pgnos(b)
	var found uint32
	collide := hashSlots
	for k := walHash(pgno); ; k = (k + 1) & (hashSlots - 1) {
		i := blk.slot(k)
		if i == 0 {
			return found, nil
		}
		if f := zero + i; f <= maxFrame && f >= minFrame {
			if int(i) > len(pg) {
				return 0, format.Corruptf(0, "-shm block %d: slot %d holds entry %d of %d", b, k, i, len(pg))
			}
			if atomic.LoadUint32(&pg[i-1]) == pgno {
				found = max(found, f)
			}
		}
		if collide == 0 {
			return 0, format.Corruptf(0, "-shm block %d: no empty slot in the probe for page %d", b, pgno)
		}
		collide--
	}
}

// walLock is one of the -shm file's lock bytes, numbered from WRITE as
// wal.c numbers them (WAL_WRITE_LOCK, ...).
type walLock int

// The locks.
const (
	walLockWrite   walLock = 0 // WAL_WRITE_LOCK: one writer
	walLockCkpt    walLock = 1 // WAL_CKPT_LOCK: one checkpointer (and recovery)
	walLockRecover walLock = 2 // WAL_RECOVER_LOCK: recovery is running
	walLockRead0   walLock = 3 // WAL_READ_LOCK(0); READ(i) is walLockRead(i)
)

// walLockRead returns READ(i), i in 0..4.
func walLockRead(i int) walLock { return walLockRead0 + walLock(i) }

// offset returns the lock's byte in the -shm file.
func (l walLock) offset() int64 { return shmOffLocks + int64(l) }

func (l walLock) String() string {
	switch {
	case l == walLockWrite:
		return "WRITE"
	case l == walLockCkpt:
		return "CKPT"
	case l == walLockRecover:
		return "RECOVER"
	case l >= walLockRead0 && l < walLockRead(shmReaders):
		return fmt.Sprintf("READ(%d)", l-walLockRead0)
	}
	return fmt.Sprintf("walLock(%d)", int(l))
}

// errNoRegion says that the -shm file does not hold a region yet: no
// writer has needed it.
var errNoRegion = errors.New("-shm region not allocated")

// shmRegionsPerMap is how many regions one mapping covers: one, unless the
// system's pages are larger than a region (os_unix.c's unixShmRegionPerMap).
var shmRegionsPerMap = max(1, os.Getpagesize()/shmRegionSize)

// walIndex is an open -shm file (doc.go, rules 14 to 22): its lock bytes
// and its mapped regions. The regions are mapped as they are first needed,
// each group once; a block handed out stays mapped until close. The
// methods may be called from several goroutines; what they read and
// write in the shared memory is ordered by the protocol's locks, and by
// atomic loads and stores where wal.c uses barriers or atomics.
type walIndex struct {
	fsys vfs.FS
	path string
	f    vfs.File

	blocks atomic.Pointer[[]*walBlock] // the mapped regions, in order

	mu   sync.Mutex // held while regions are mapped
	maps [][]byte   // the mappings, unmapped at close
}

// openWalIndex opens the -shm file of the database at dbPath, creating it
// with perm (the pager passes sidePerm, the database file's), and takes the
// dead-man switch as os_unix.c's unixLockSharedMemory does: when DMS can
// be locked exclusively no other connection has the file open, and this
// one, the first, empties it (first is then true: nothing in the file is
// valid, and the caller runs recover before anyone reads it); then DMS is
// held shared until close, so that no connection arriving later empties it
// again. While a first connection elsewhere empties the file, openWalIndex
// fails with an error wrapping ErrLocked: retry.
func openWalIndex(fsys vfs.FS, dbPath string, perm fs.FileMode) (x *walIndex, first bool, err error) {
	path := shmPath(dbPath)
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return nil, false, err
	}
	if first, err = takeDMS(f); err != nil {
		return nil, false, errors.Join(fmt.Errorf("%s: dead-man switch: %w", path, err), f.Close())
	}
	return &walIndex{fsys: fsys, path: path, f: f}, first, nil
}

// shmTruncSize is the size the first connection cuts the -shm file to.
const shmTruncSize = 3

// takeDMS takes DMS shared on f, first exclusively when it can, emptying
// the file then, and reports whether it could.
func takeDMS(f vfs.File) (first bool, err error) {
	err = f.LockRange(shmOffDMS, 1, true)
	if err != nil && !errors.Is(err, vfs.ErrLocked) {
		return false, err
	}
	if err == nil {
		// The first connection: whatever the file holds was left by
		// connections that are gone (and a crash may have torn it).
		// Any size short of a region reads as "no header". Not 0 but 3
		// bytes, as sqlite3 (a debugging aid there): ext4 flushes a file
		// truncated to 0 and written again when it is closed (its
		// auto_da_alloc), which cost each process that created and
		// removed a -shm file a write to disk, its blocks allocated and
		// freed: 0.3 ms of a 2.5 ms pagoda get.
		if err := f.Truncate(shmTruncSize); err != nil {
			return false, errors.Join(err, f.UnlockRange(shmOffDMS, 1))
		}
		first = true
	}
	// From exclusive, this replaces the lock in one step: no other
	// connection finds DMS free in between.
	return first, f.LockRange(shmOffDMS, 1, false)
}

// close unmaps the regions and closes the file, which releases its locks.
// With remove, which the last connection to the database passes (the one
// that could lock the database file exclusively, rule 22), the file is
// removed first, as unixShmUnmap does.
func (x *walIndex) close(remove bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	var errs []error
	x.blocks.Store(nil)
	for _, m := range x.maps {
		errs = append(errs, x.fsys.Unmap(m))
	}
	x.maps = nil
	if remove {
		errs = append(errs, x.fsys.Remove(x.path))
	}
	errs = append(errs, x.f.Close())
	return errors.Join(errs...)
}

// block returns region i, mapping it and the regions before it if they
// are not mapped yet. A file too short to hold it is extended when extend
// is set, as unixShmMap extends it: a zero byte is written at the end of
// each missing 4 KiB page, so that no page of a mapped region is a hole
// (a page that the file system could fail to allocate when first touched,
// a SIGBUS). Only a writer extends the file (rule 16): another connection
// extending it at the same time could write a zero over what that writer
// just stored. Without extend, a region the file does not hold is
// errNoRegion.
func (x *walIndex) block(i int, extend bool) (*walBlock, error) {
	if p := x.blocks.Load(); p != nil && i < len(*p) {
		return (*p)[i], nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var blocks []*walBlock
	if p := x.blocks.Load(); p != nil {
		blocks = *p
	}
	if i < len(blocks) {
		return blocks[i], nil
	}
	n := (i/shmRegionsPerMap + 1) * shmRegionsPerMap
	need := int64(n) * shmRegionSize
	size, err := x.f.Size()
	if err != nil {
		return nil, err
	}
	if size < need {
		if !extend {
			return nil, errNoRegion
		}
		var zero [1]byte
		for pg := size / shmPageSize; pg < need/shmPageSize; pg++ {
			if _, err := x.f.WriteAt(zero[:], pg*shmPageSize+shmPageSize-1); err != nil {
				return nil, fmt.Errorf("extend %s: %w", x.path, err)
			}
		}
	}
	grown := slices.Grow(slices.Clone(blocks), n-len(blocks))
	defer func() { x.blocks.Store(&grown) }()
	for len(grown) < n {
		m, err := x.f.MapShared(int64(len(grown))*shmRegionSize, shmRegionsPerMap*shmRegionSize)
		if err != nil {
			return nil, fmt.Errorf("map %s: %w", x.path, err)
		}
		x.maps = append(x.maps, m)
		for j := range shmRegionsPerMap {
			grown = append(grown, (*walBlock)(unsafe.Pointer(&m[j*shmRegionSize])))
		}
	}
	return grown[i], nil
}

// loadHdr reads the header copy at word w of region 0 into b, word by
// word with atomic loads.
func (blk *walBlock) loadHdr(w int, b *[walIndexHdrSize]byte) {
	for i := range hdrWords {
		binary.NativeEndian.PutUint32(b[4*i:], atomic.LoadUint32(&blk[w+i]))
	}
}

// storeHdr writes b as the header copy at word w of region 0, word by word
// with atomic stores.
func (blk *walBlock) storeHdr(w int, b *[walIndexHdrSize]byte) {
	for i := range hdrWords {
		atomic.StoreUint32(&blk[w+i], binary.NativeEndian.Uint32(b[4*i:]))
	}
}

// hdrWordsEqual reports whether both copies of the header are, word for
// word, the words of h's encoding (raw): the header is the one the caller
// last read or wrote, unchanged, with no decoding and no checksum to
// compute (walIndexTryHdr's memcmp against the connection's copy).
func (x *walIndex) hdrWordsEqual(raw *[hdrWords]uint32) bool {
	p := x.blocks.Load()
	if p == nil || len(*p) == 0 {
		return false
	}
	blk := (*p)[0]
	for i := range hdrWords {
		if atomic.LoadUint32(&blk[shmOffHdr0/4+i]) != raw[i] {
			return false
		}
	}
	for i := range hdrWords {
		if atomic.LoadUint32(&blk[shmOffHdr1/4+i]) != raw[i] {
			return false
		}
	}
	return true
}

// words returns h's encoding as native words, what hdrWordsEqual compares.
func (h *walIndexHdr) words() (w [hdrWords]uint32) {
	var b [walIndexHdrSize]byte
	h.encode(b[:])
	for i := range w {
		w[i] = binary.NativeEndian.Uint32(b[4*i:])
	}
	return w
}

// readHdr reads the header as walIndexTryHdr does: copy 0, then copy 1
// (Go's atomics are sequentially consistent: the loads of copy 0 happen
// before those of copy 1, the barrier wal.c puts between them). ok is
// false when the copies differ (a writer is between them: read again), or
// when isInit is 0 or the checksum fails (a torn or absent header: recover,
// holding WRITE, rule 18), or when the file holds no region yet. A valid
// header of another version is an error wrapping ErrUnsupported, as sqlite3
// refuses it (SQLITE_CANTOPEN). Any connection may read it, holding no
// lock (rule 15).
func (x *walIndex) readHdr() (h walIndexHdr, ok bool, err error) {
	blk, err := x.block(0, false)
	if errors.Is(err, errNoRegion) {
		return h, false, nil
	}
	if err != nil {
		return h, false, err
	}
	var c0, c1 [walIndexHdrSize]byte
	blk.loadHdr(shmOffHdr0/4, &c0)
	blk.loadHdr(shmOffHdr1/4, &c1)
	if c0 != c1 {
		return h, false, nil
	}
	h = decodeWalIndexHdr(c0[:])
	if !h.valid() {
		return h, false, nil
	}
	if h.version != walIndexVersion {
		return h, false, fmt.Errorf("%s: %w: wal-index version %d (want %d)", x.path, format.ErrUnsupported, h.version, walIndexVersion)
	}
	return h, true, nil
}

// torn reports whether the header's two copies differ (a writer between
// its stores, or one that died there), as opposed to a header never
// written or not valid.
func (x *walIndex) torn() bool {
	blk, err := x.block(0, false)
	if err != nil {
		return false
	}
	var c0, c1 [walIndexHdrSize]byte
	blk.loadHdr(shmOffHdr0/4, &c0)
	blk.loadHdr(shmOffHdr1/4, &c1)
	return c0 != c1
}

// writeHdr writes h as walIndexWriteHdr does: isInit and the version set,
// the checksum computed, then copy 1, then copy 0 (a reader between the
// two sees copies that differ and reads again). It returns the header as
// written. iChange is the caller's: a commit changes it (rule 17). The
// caller holds WRITE, or recovery's locks (rules 16, 18).
func (x *walIndex) writeHdr(h walIndexHdr) (walIndexHdr, error) {
	blk, err := x.block(0, true)
	if err != nil {
		return h, err
	}
	h.isInit, h.version = 1, walIndexVersion
	h.cksum = h.checksum()
	var b [walIndexHdrSize]byte
	h.encode(b[:])
	blk.storeHdr(shmOffHdr1/4, &b)
	blk.storeHdr(shmOffHdr0/4, &b)
	return h, nil
}

// walCkptInfo is the WalCkptInfo of a mapped -shm file: nBackfill, the
// read marks and nBackfillAttempted, each read and written atomically
// (wal.c's AtomicLoad and AtomicStore). Who may change which is rule 19.
type walCkptInfo struct{ blk *walBlock }

// ckptInfo returns the file's WalCkptInfo, valid until close: errNoRegion
// before region 0 exists (before any header was written).
func (x *walIndex) ckptInfo() (walCkptInfo, error) {
	blk, err := x.block(0, false)
	return walCkptInfo{blk}, err
}

func (c walCkptInfo) nBackfill() uint32 { return atomic.LoadUint32(&c.blk[shmOffBackfill/4]) }

func (c walCkptInfo) setNBackfill(n uint32) { atomic.StoreUint32(&c.blk[shmOffBackfill/4], n) }

// readMark returns aReadMark[i], i in 0..4.
func (c walCkptInfo) readMark(i int) uint32 {
	return atomic.LoadUint32(&c.blk[shmOffReadMarks/4+i])
}

// setReadMark sets aReadMark[i] to m.
func (c walCkptInfo) setReadMark(i int, m uint32) {
	atomic.StoreUint32(&c.blk[shmOffReadMarks/4+i], m)
}

func (c walCkptInfo) nBackfillAttempted() uint32 {
	return atomic.LoadUint32(&c.blk[shmOffBackfillAttempted/4])
}

func (c walCkptInfo) setNBackfillAttempted(n uint32) {
	atomic.StoreUint32(&c.blk[shmOffBackfillAttempted/4], n)
}

// lock takes n lock bytes from l, shared or exclusive, without waiting:
// one held elsewhere fails with an error wrapping ErrLocked (sqlite3's
// SQLITE_BUSY). A lock this index holds on the same bytes is replaced, so
// the caller keeps to wal.c's discipline itself: through no lock between
// shared and exclusive, and shared locks one byte at a time.
func (x *walIndex) lock(l walLock, n int, exclusive bool) error {
	if err := x.f.LockRange(l.offset(), int64(n), exclusive); err != nil {
		return fmt.Errorf("%s lock %s (%d): %w", x.path, l, n, err)
	}
	return nil
}

// unlock releases n lock bytes from l.
func (x *walIndex) unlock(l walLock, n int) error {
	if err := x.f.UnlockRange(l.offset(), int64(n)); err != nil {
		return fmt.Errorf("%s unlock %s (%d): %w", x.path, l, n, err)
	}
	return nil
}

// appendFrame records that frame holds page pgno (walIndexAppend): frames
// are appended in order, each after the last committed frame or the
// frames of the transaction appended before it. It extends the file as the
// frames reach a new region. The caller holds WRITE (rule 16).
func (x *walIndex) appendFrame(frame, pgno uint32) error {
	if frame == 0 || pgno == 0 {
		return fmt.Errorf("wal-index entry for frame %d, page %d", frame, pgno)
	}
	b := walFramePage(frame)
	blk, err := x.block(b, true)
	if err != nil {
		return err
	}
	if err := blk.append(b, frame, pgno); err != nil {
		return fmt.Errorf("%s: %w", x.path, err)
	}
	return nil
}

// truncateFrames removes the entries of the frames after mxFrame from the
// block that holds mxFrame (walCleanupHash, after a rollback of frames that
// were appended but not committed); later blocks are cleared when a frame
// first reaches them. The caller holds WRITE (rule 16).
func (x *walIndex) truncateFrames(mxFrame uint32) error {
	if mxFrame == 0 {
		return nil
	}
	b := walFramePage(mxFrame)
	blk, err := x.block(b, false)
	if errors.Is(err, errNoRegion) {
		return nil // a region never written holds no entry
	}
	if err != nil {
		return err
	}
	blk.truncate(b, mxFrame)
	return nil
}

// findFrame returns the newest frame in [minFrame, maxFrame] that holds
// page pgno, 0 when none does (walFindFrame): blocks are searched from
// maxFrame's down to minFrame's, and the first block with a match has the
// newest. maxFrame is the reader's snapshot (its header's mxFrame) and
// minFrame the first frame not yet in the database file (nBackfill+1 as
// the reader found it); the caller holds a READ lock whose mark is at most
// maxFrame, or WRITE (rule 20).
func (x *walIndex) findFrame(pgno, minFrame, maxFrame uint32) (uint32, error) {
	if maxFrame == 0 {
		return 0, nil
	}
	minFrame = max(minFrame, 1)
	for b := walFramePage(maxFrame); b >= walFramePage(minFrame); b-- {
		blk, err := x.block(b, false)
		if errors.Is(err, errNoRegion) {
			return 0, format.Corruptf(0, "%s holds no block for frame %d", x.path, maxFrame)
		}
		if err != nil {
			return 0, err
		}
		f, err := blk.find(b, pgno, minFrame, maxFrame)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", x.path, err)
		}
		if f != 0 {
			return f, nil
		}
	}
	return 0, nil
}

// framePage returns the page that frame f holds, as the index gives it
// (aPgno). The caller holds a read mark or WRITE covering f.
func (x *walIndex) framePage(f uint32) (uint32, error) {
	b := walFramePage(f)
	blk, err := x.block(b, false)
	if err != nil {
		return 0, err
	}
	pg := atomic.LoadUint32(&blk.pgnos(b)[f-walBlockZero(b)-1])
	if pg == 0 {
		return 0, format.Corruptf(0, "%s: no page for frame %d", x.path, f)
	}
	return pg, nil
}

// recover rebuilds the index from log, the WAL's committed log as
// wal.Recover finds it (read with the page size the WAL's header gives,
// as sqlite3's recovery reads it), as walIndexRecover does: every frame
// up to the last commit is indexed, block by block, each built in private
// memory and copied in word by word where it differs, so that a reader
// still reading an entry it needs never sees it change (recovery rebuilds
// the same entries in the same slots); then the header (mxFrame, nPage,
// the last commit frame's checksum, the WAL's salts and byte order, the
// page size: all zero but the salts and byte order when nothing is
// committed; iChange 0, as wal.c starts recovery from a zeroed header) is
// written, nBackfill set to 0 and nBackfillAttempted to mxFrame. Each read
// mark i of 1..4 is set, holding READ(i) exclusively for the moment:
// aReadMark[1] to mxFrame (unused when it is 0), the others unused; a mark
// whose lock another connection holds is left alone. aReadMark[0] is 0.
// It returns the header written.
//
// wal.c also indexes the valid frames after the last commit; recover does
// not: no reader looks past mxFrame, and the next writer's first append
// clears what it finds there.
//
// The caller holds WRITE, CKPT and RECOVER exclusively and no READ lock
// (rule 18).
func (x *walIndex) recover(log *wal.Log, held func(i int) bool) (walIndexHdr, error) {
	var h walIndexHdr
	if log.Valid {
		if log.Header.BigEndian() {
			h.bigEndCksum = 1
		}
		h.salt = [2]uint32{log.Header.Salt1, log.Header.Salt2}
	}
	if log.MaxFrame > 0 {
		h.mxFrame, h.nPage = log.MaxFrame, log.DBSize
		h.szPage = walIndexSzPage(log.PageSize)
		h.frameCksum = [2]uint32{log.Cksum1, log.Cksum2}
		private := new(walBlock)
		for b := 0; b <= walFramePage(log.MaxFrame); b++ {
			last := min(log.MaxFrame, walBlockZero(b+1))
			for f := walBlockZero(b) + 1; f <= last; f++ {
				if err := private.append(b, f, log.Index.PageOf(f)); err != nil {
					return h, fmt.Errorf("%s: %w", x.path, err)
				}
			}
			shared, err := x.block(b, true)
			if err != nil {
				return h, err
			}
			shared.copyFrom(private, b)
		}
	}
	h, err := x.writeHdr(h)
	if err != nil {
		return h, err
	}
	info, err := x.ckptInfo()
	if err != nil {
		return h, err
	}
	info.setNBackfill(0)
	info.setNBackfillAttempted(h.mxFrame)
	info.setReadMark(0, 0)
	for i := 1; i < shmReaders; i++ {
		if held != nil && held(i) {
			continue // the caller's own reader: its mark stays
		}
		err := x.lock(walLockRead(i), 1, true)
		if errors.Is(err, ErrLocked) {
			continue
		}
		if err != nil {
			return h, err
		}
		mark := uint32(readMarkNotUsed)
		if i == 1 && h.mxFrame != 0 {
			mark = h.mxFrame
		}
		info.setReadMark(i, mark)
		if err := x.unlock(walLockRead(i), 1); err != nil {
			return h, err
		}
	}
	return h, nil
}

// copyFrom copies block b of private into blk, the shared block, word by
// word, storing only the words that differ (SQLite's
// SQLITE_SAFER_WALINDEX_RECOVERY copy): a word a reader may be reading is
// either left alone or not in use.
func (blk *walBlock) copyFrom(private *walBlock, b int) {
	start := hashWord - len(blk.pgnos(b))
	for i := start; i < len(blk); i++ {
		if atomic.LoadUint32(&blk[i]) != private[i] {
			atomic.StoreUint32(&blk[i], private[i])
		}
	}
}
