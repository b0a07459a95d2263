package wal

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"github.com/pagodadb/pagoda/internal/vfs"
)

// The writer: a transaction's frames are appended after the last commit
// (Append, Flush), made durable and indexed (Commit), then published to
// readers (Publish); or forgotten (Rollback), or, when the commit failed,
// made invalid on disk (Spoil). The rules it keeps, 5 to 12, are in the
// package doc.

// frameBatch is how many frames Append writes per system call.
const frameBatch = 64

// BatchBytes is the size of the buffer Append batches frames of pageSize
// bytes in.
func BatchBytes(pageSize int) int { return frameBatch * (FrameHeaderSize + pageSize) }

// SetBuffer gives Append the buffer to batch frames in, of at least
// BatchBytes, so that the owner can use the same memory for batched writes
// of its own: it may whenever no frame is batched, that is before the
// first Append of a transaction and after the Flush, Commit or Rollback
// that ends a run of Appends. Without one, Append allocates its own.
func (w *File) SetBuffer(b []byte) { w.batch = b[:0:BatchBytes(w.pageSize)] }

// WriteBack sets whether Append asks the system to start writing each
// batch of frames it writes to the device (vfs.StartWriteback): on for
// the frames of a commit, whose sync follows them; off (the default) for
// a transaction's spills, whose frames may be written again before it.
func (w *File) WriteBack(on bool) { w.writeback = on }

// Pending returns the number of frames appended since the last commit.
func (w *File) Pending() int { return len(w.pending) }

// Restart starts the log over (rule 11): a header with the next salts, its
// frames from frame 1 over the old ones. The owner calls it when no frame is
// pending, when the log is not valid (a new WAL) or when every frame is in
// the database file and no reader reads the WAL.
func (w *File) Restart() error {
	var prev *Header
	if w.log.Valid {
		prev = &w.log.Header
	}
	// The salts need only differ from the last log's (SQLite draws them
	// from its PRNG); math/rand/v2's generator is seeded from the OS.
	h := nextHeader(prev, w.pageSize, rand.Uint32())
	var b [HeaderSize]byte
	h.Encode(b[:])
	if _, err := w.f.WriteAt(b[:], 0); err != nil {
		return err
	}
	// Old frames may follow the header: it must be durable before any new
	// frame is written over them, or a crash that kept a new frame but not
	// the new header would let the old header validate old frames (pages
	// older than the database file) up to the first new one. This is
	// SQLite's fix for its ticket ff5be73dee. A new, empty WAL has no old
	// frames.
	if len(w.m.Bytes()) > HeaderSize {
		if err := w.syncFile(); err != nil {
			return err
		}
	}
	w.unspoiled = 0 // stale frames have the old salts now
	// No reader reads the old frames: forget them.
	w.mu.Lock()
	w.log.Index.Reset()
	w.log.Header, w.log.Valid, w.log.PageSize = h, true, w.pageSize
	w.log.MaxFrame, w.log.DBSize = 0, 0
	w.log.Cksum1, w.log.Cksum2 = h.Cksum1, h.Cksum2
	w.backfill = 0
	w.mu.Unlock()
	return nil
}

// Append encodes page (page number pgno) as the next frame, continuing the
// checksum chain from the last commit through the frames appended since
// (rule 5). commit is the database size in pages on the commit frame, the
// last of a transaction, and 0 on the others. Frames are written frameBatch
// at a time; Flush and Commit write the rest. Append returns the frame's
// number.
func (w *File) Append(pgno uint32, page []byte, commit uint32) (uint32, error) {
	frameSize := FrameHeaderSize + w.pageSize
	if cap(w.batch) < BatchBytes(w.pageSize) {
		w.batch = make([]byte, 0, BatchBytes(w.pageSize))
	}
	if len(w.pending) == 0 {
		w.s0, w.s1 = w.log.Cksum1, w.log.Cksum2
	}
	n := w.log.MaxFrame + 1 + uint32(len(w.pending))
	if len(w.batch) == 0 {
		w.batchOff = FrameOffset(n, w.pageSize)
	}
	i := len(w.batch)
	w.batch = w.batch[:i+frameSize]
	copy(w.batch[i+FrameHeaderSize:], page)
	w.s0, w.s1 = EncodeFrame(w.batch[i:i+FrameHeaderSize], &w.log.Header, pgno, commit, w.batch[i+FrameHeaderSize:], w.s0, w.s1)
	w.pending = append(w.pending, pgno)
	if commit != 0 {
		w.dbSize = commit
	}
	if len(w.batch) == cap(w.batch) {
		off, size := w.batchOff, int64(len(w.batch))
		if err := w.writeBatch(); err != nil {
			return n, err
		}
		// More frames follow, then the commit's sync: the device can
		// write these meanwhile.
		if w.writeback && !w.noSync {
			vfs.StartWriteback(w.f, off, size)
		}
	}
	return n, nil
}

// Overwrite writes page over the page of frame n, one this transaction
// appended and wrote before for the same page (not one still batched) (a page the owner spilled
// once and changed again), instead of appending another: a transaction's
// frames are bounded by the pages it changes, as SQLite's are. The frames
// from n on no longer match their checksums; Commit computes them again
// (rule 5), as SQLite's walRewriteChecksums does.
func (w *File) Overwrite(n, pgno uint32, page []byte) error {
	first := w.log.MaxFrame + 1
	if n < first || int(n-first) >= len(w.pending) || w.pending[n-first] != pgno || len(w.batch) > 0 && FrameOffset(n, w.pageSize) >= w.batchOff {
		return fmt.Errorf("%s: frame %d is not a flushed frame of page %d of the transaction", w.path, n, pgno)
	}
	if _, err := w.f.WriteAt(page[:w.pageSize], FrameOffset(n, w.pageSize)+FrameHeaderSize); err != nil {
		return err
	}
	if w.recksum == 0 || n < w.recksum {
		w.recksum = n
	}
	return nil
}

// rechecksum computes the checksums of the pending frames again from
// w.recksum on, reading them back through the mapping (Flush has mapped
// them), and writes the frame headers that change. The running checksum
// then ends at the last frame's.
func (w *File) rechecksum() error {
	first := w.log.MaxFrame + 1
	s0, s1 := w.log.Cksum1, w.log.Cksum2
	if w.recksum > first {
		// The frame before is unchanged: its checksum stands.
		hdr := w.m.Bytes()[FrameOffset(w.recksum-1, w.pageSize):][:FrameHeaderSize]
		s0, s1 = binary.BigEndian.Uint32(hdr[frmOffCksum1:]), binary.BigEndian.Uint32(hdr[frmOffCksum2:])
	}
	data := w.m.Bytes()
	var buf [FrameHeaderSize]byte
	for n := w.recksum; n < first+uint32(len(w.pending)); n++ {
		off := FrameOffset(n, w.pageSize)
		copy(buf[:], data[off:off+FrameHeaderSize])
		page := data[off+FrameHeaderSize : off+FrameHeaderSize+int64(w.pageSize)]
		pgno, commit := binary.BigEndian.Uint32(buf[frmOffPgno:]), binary.BigEndian.Uint32(buf[frmOffCommit:])
		s0, s1 = EncodeFrame(buf[:], &w.log.Header, pgno, commit, page, s0, s1)
		if _, err := w.f.WriteAt(buf[:], off); err != nil {
			return err
		}
	}
	w.s0, w.s1, w.recksum = s0, s1, 0
	return nil
}

// walChunk is how far ahead of its frames the WAL file is extended with
// zeros (preallocate).
const walChunk = 1 << 20

// preallocate makes the file reach end at least, extended with zeros to a
// multiple of walChunk past it when it is shorter: a commit then writes
// over blocks the file has, and its sync carries no change of the file's
// size (on Linux file systems such a sync costs about twice an overwrite's).
// Zeros past the last frame are no frame (a page number of 0 ends
// recovery, rule 3), as the stale frames a WAL keeps after a restart are
// none: sqlite3 and Litestream read such a file as they read any.
func (w *File) preallocate(end int64) error {
	if end <= w.allocated {
		return nil
	}
	size, err := w.f.Size()
	if err != nil {
		return err
	}
	if size < end {
		target := (end + walChunk - 1) / walChunk * walChunk
		var zero [64 << 10]byte
		for off := size; off < target; {
			n := int(min(int64(len(zero)), target-off))
			if _, err := w.f.WriteAt(zero[:n], off); err != nil {
				return err
			}
			off += int64(n)
		}
		size = target
	}
	w.allocated = size
	return nil
}

// writeBatch writes the frames batched.
func (w *File) writeBatch() error {
	if err := w.preallocate(w.batchOff + int64(len(w.batch))); err != nil {
		w.batch = w.batch[:0]
		return err
	}
	_, err := w.f.WriteAt(w.batch, w.batchOff)
	w.batch = w.batch[:0]
	return err
}

// Flush writes the frames still batched and maps every frame appended, so
// that Frame reads them back (rule 6).
func (w *File) Flush() error {
	if len(w.batch) > 0 {
		if err := w.writeBatch(); err != nil {
			return err
		}
	}
	end := FrameOffset(w.log.MaxFrame+uint32(len(w.pending))+1, w.pageSize)
	if err := w.m.Grow(w.f, int(end), w.mu); err != nil {
		return fmt.Errorf("map %s: %w", w.path, err)
	}
	return nil
}

// Commit ends a transaction whose commit frame Append wrote (rule 7): it
// flushes the frames, mapping them, and when sync is set syncs the WAL,
// which is the commit point. Nothing after it fails: the frames are
// indexed, and Publish then makes them the log's. When Commit fails, the
// owner spoils the transaction (Spoil).
func (w *File) Commit(sync bool) error {
	// The frames are mapped before the commit point: nothing may fail
	// after it, or a commit that reported an error would be durable.
	if err := w.Flush(); err != nil {
		return err
	}
	if w.recksum != 0 {
		if err := w.rechecksum(); err != nil {
			return err
		}
	}
	if sync {
		if err := w.sync(); err != nil {
			return err
		}
	}
	// The commit point is passed: the failed commit these frames
	// overwrote can never come back.
	w.unspoiled = 0
	if !sync {
		w.durable = false
	}
	first := w.log.MaxFrame + 1
	for i, pgno := range w.pending {
		w.log.Index.Add(pgno, first+uint32(i))
	}
	return nil
}

// Publish makes the frames that Commit committed the log's (rule 7): its
// MaxFrame moves to their commit frame, and readers from now on see them.
// The owner calls it holding its lock (Options.Lock), so that it publishes
// its own view of the commit in the same step. It returns the number of
// frames published.
func (w *File) Publish() uint32 {
	n := uint32(len(w.pending))
	w.log.MaxFrame += n
	w.log.DBSize, w.log.Cksum1, w.log.Cksum2 = w.dbSize, w.s0, w.s1
	w.pending = w.pending[:0]
	return n
}

// Rollback forgets the frames appended since the last commit (rule 8): the
// next transaction writes its own over them.
func (w *File) Rollback() {
	w.pending = w.pending[:0]
	w.batch = w.batch[:0]
	w.recksum = 0
}

// Spoil makes the frames of a transaction whose commit failed with cause
// invalid (rule 9), and returns cause: a frame with page number 0 ends
// recovery, so a transaction whose commit failed cannot reappear after a
// reopen or a crash. The zeroed frame header is synced (unless NoSync): the
// frames may have reached the disk even though their sync failed.
//
// When Spoil itself fails, the transaction may sit whole and valid in the
// WAL past the last commit. No reader of the log reads it: the next commit
// writes its own frames over it, from the same frame on, with a checksum
// chain that leaves any stale frame after them invalid; RetrySpoil tries
// again meanwhile. A crash before either may bring it back: a commit that
// reports an error because the disk fails is, as a commit interrupted by a
// crash, in doubt.
func (w *File) Spoil(cause error) error {
	_ = w.erase(w.log.MaxFrame + 1)
	return cause
}

// RetrySpoil tries again to make invalid the frames of a failed commit that
// Spoil could not; it does nothing when there are none.
func (w *File) RetrySpoil() error {
	if w.unspoiled == 0 {
		return nil
	}
	return w.erase(w.unspoiled)
}

// erase zeroes the header of frame first and syncs it, recording in
// unspoiled whether that failed.
func (w *File) erase(first uint32) error {
	var zero [FrameHeaderSize]byte
	_, err := w.f.WriteAt(zero[:], FrameOffset(first, w.pageSize))
	if err == nil {
		err = w.syncFile()
	}
	if err != nil {
		w.unspoiled = first
	} else if w.unspoiled == first {
		w.unspoiled = 0
	}
	return err
}

// SyncCommitted makes the committed frames durable, as a checkpoint needs
// before it copies them into the database file (rule 10): it syncs the WAL
// unless this File synced every commit (a WAL found at Open may hold frames
// that its writer never synced, and commits without sync leave theirs
// unsynced).
func (w *File) SyncCommitted() error {
	if w.durable || w.noSync {
		return nil
	}
	return w.sync()
}

// sync syncs the file and, the first time, its directory entry (rule 7): a
// WAL whose creation is not durable could vanish in a crash, or one that its
// owner removed could come back in its place. (sqlite3 syncs the directory
// at the first sync of a new WAL as well.)
func (w *File) sync() error {
	if w.noSync {
		return nil
	}
	if err := w.syncFile(); err != nil {
		return err
	}
	w.durable = true
	if w.dirSynced {
		return nil
	}
	w.count()
	if err := w.fsys.SyncDir(filepath.Dir(w.path)); err != nil {
		return err
	}
	w.dirSynced = true
	return nil
}

// syncFile syncs the file unless NoSync, and counts it.
func (w *File) syncFile() error {
	if w.noSync {
		return nil
	}
	w.count()
	return w.f.Sync()
}

// count counts a sync.
func (w *File) count() {
	w.mu.Lock()
	w.syncs++
	w.mu.Unlock()
}

// Truncate cuts the file to 0 bytes (sqlite3's checkpoint in TRUNCATE
// mode): the log is then empty and not valid, and the next commit starts
// it over (Restart). No frame may be pending, and no reader may read the
// log. The file's size is made durable unless NoSync.
func (w *File) Truncate() error {
	w.allocated = 0
	if err := w.f.Truncate(0); err != nil {
		return err
	}
	w.mu.Lock()
	w.m.Truncate(0, nopLocker{})
	w.log.Index.Reset()
	w.log.Valid, w.log.MaxFrame, w.log.DBSize = false, 0, 0
	w.backfill = 0
	w.mu.Unlock()
	w.unspoiled = 0
	return w.syncFile()
}
