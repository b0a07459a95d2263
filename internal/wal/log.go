package wal

import (
	"encoding/binary"
	"fmt"

	"github.com/pagodadb/pagoda/internal/format"
)

// Log is the committed content of a WAL: its header, the last commit frame
// and an index from page numbers to the frames that hold them.
type Log struct {
	Header   Header
	Valid    bool   // the header is valid; otherwise the log is empty
	PageSize int    // from the header (valid logs only)
	MaxFrame uint32 // last committed frame, 0 when nothing is committed
	DBSize   uint32 // database size in pages at MaxFrame
	// Cksum1, Cksum2 is the running checksum after MaxFrame (the header's
	// when MaxFrame is 0): where a writer continues the chain.
	Cksum1, Cksum2 uint32
	Index          Index
}

// Recover finds the committed prefix of the WAL image data (the whole file,
// typically mapped), following the validity rules in the package doc. An
// empty or invalid WAL yields a Log with MaxFrame 0 and no error; only an
// unknown format version is an error, or a page size other than
// dbPageSize in a log that commits frames of it. A valid header of
// another page size whose frames commit nothing (they were written with
// the database's, and their checksums chain from another header) is a log
// with nothing committed, as SQLite's recovery, which reads the frames by
// the header's page size, finds it; it is not Valid, so that a writer
// starts it again with its own page size.
func Recover(data []byte, dbPageSize int) (*Log, error) {
	l := &Log{}
	h, valid, err := parseHeader(data)
	if err != nil {
		return nil, err
	}
	if !valid {
		return l, nil
	}
	if int(h.PageSize) != dbPageSize {
		if other := recoverFrames(data, h); other.MaxFrame > 0 {
			return nil, &format.CorruptError{Offset: -1, Msg: fmt.Sprintf("WAL page size %d differs from database page size %d", h.PageSize, dbPageSize)}
		}
		return l, nil
	}
	return recoverFrames(data, h), nil
}

// recoverFrames is Recover of a WAL whose valid header is h.
func recoverFrames(data []byte, h Header) *Log {
	l := &Log{}
	l.Header, l.Valid, l.PageSize = h, true, int(h.PageSize)
	l.Cksum1, l.Cksum2 = h.Cksum1, h.Cksum2
	frameSize := int64(FrameHeaderSize + l.PageSize)
	s0, s1 := h.Cksum1, h.Cksum2
	be := binary.BigEndian
	bigEndian := h.BigEndian()
	var pending []uint32 // pages of frames after the last commit
	for n := uint32(1); ; n++ {
		off := FrameOffset(n, l.PageSize)
		if off+frameSize > int64(len(data)) || n == 0 {
			break
		}
		fh := data[off : off+FrameHeaderSize]
		pgno := be.Uint32(fh[frmOffPgno:])
		if pgno == 0 || be.Uint32(fh[frmOffSalt1:]) != h.Salt1 || be.Uint32(fh[frmOffSalt2:]) != h.Salt2 {
			break
		}
		s0, s1 = Checksum(fh[:frmCksumLen], s0, s1, bigEndian)
		s0, s1 = Checksum(data[off+FrameHeaderSize:off+frameSize], s0, s1, bigEndian)
		if s0 != be.Uint32(fh[frmOffCksum1:]) || s1 != be.Uint32(fh[frmOffCksum2:]) {
			break
		}
		pending = append(pending, pgno)
		if commit := be.Uint32(fh[frmOffCommit:]); commit != 0 {
			first := n - uint32(len(pending)) + 1
			for i, p := range pending {
				l.Index.Add(p, first+uint32(i))
			}
			pending = pending[:0]
			l.MaxFrame, l.DBSize = n, commit
			l.Cksum1, l.Cksum2 = s0, s1
		}
	}
	return l
}

// FrameData returns the page image of frame n within the WAL image data.
func (l *Log) FrameData(data []byte, n uint32) []byte {
	off := FrameOffset(n, l.PageSize) + FrameHeaderSize
	return data[off : off+int64(l.PageSize) : off+int64(l.PageSize)]
}
