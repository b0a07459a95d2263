package wal

import (
	"encoding/binary"
	"fmt"

	"github.com/pagodadb/pagoda/internal/format"
)

const (
	// HeaderSize is the size of the WAL header.
	HeaderSize = 32
	// FrameHeaderSize is the size of each frame's header.
	FrameHeaderSize = 24

	// MagicLE and MagicBE name the byte order of the checksum words.
	MagicLE = 0x377f0682
	MagicBE = 0x377f0683
	// Version is the only WAL format version.
	Version = 3007000

	hdrOffMagic    = 0
	hdrOffVersion  = 4
	hdrOffPageSize = 8
	hdrOffSeq      = 12
	hdrOffSalt1    = 16
	hdrOffSalt2    = 20
	hdrOffCksum1   = 24
	hdrOffCksum2   = 28
	hdrCksumLen    = 24

	frmOffPgno   = 0
	frmOffCommit = 4
	frmOffSalt1  = 8
	frmOffSalt2  = 12
	frmOffCksum1 = 16
	frmOffCksum2 = 20
	frmCksumLen  = 8
)

// Header is a decoded WAL header.
type Header struct {
	Magic         uint32
	Version       uint32
	PageSize      uint32
	CheckpointSeq uint32
	Salt1, Salt2  uint32
	Cksum1        uint32
	Cksum2        uint32
}

// BigEndian reports whether checksum words are read big-endian.
func (h *Header) BigEndian() bool { return h.Magic == MagicBE }

// Encode writes the header into b[:HeaderSize], computing its checksum.
func (h *Header) Encode(b []byte) {
	be := binary.BigEndian
	be.PutUint32(b[hdrOffMagic:], h.Magic)
	be.PutUint32(b[hdrOffVersion:], h.Version)
	be.PutUint32(b[hdrOffPageSize:], h.PageSize)
	be.PutUint32(b[hdrOffSeq:], h.CheckpointSeq)
	be.PutUint32(b[hdrOffSalt1:], h.Salt1)
	be.PutUint32(b[hdrOffSalt2:], h.Salt2)
	h.Cksum1, h.Cksum2 = Checksum(b[:hdrCksumLen], 0, 0, h.BigEndian())
	be.PutUint32(b[hdrOffCksum1:], h.Cksum1)
	be.PutUint32(b[hdrOffCksum2:], h.Cksum2)
}

// Checksum continues the running checksum (s0, s1) over b, whose length
// must be a multiple of 8.
//
// Each step is s0 += x0 + s1; s1 += x1 + s0, with s1's written from the
// sums before both (s1 + x1 + s0 + s1 + x0), so that the two are computed
// side by side: a chain of two adds a step, not four.
func Checksum(b []byte, s0, s1 uint32, bigEndian bool) (uint32, uint32) {
	if bigEndian {
		for ; len(b) >= 8; b = b[8:] {
			x0, x1 := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
			t := s0 + s1
			s1 = t + (s1 + (x0 + x1))
			s0 = t + x0
		}
		return s0, s1
	}
	// Native (little-endian) order, the usual one: four steps an
	// iteration, each word pair one 8-byte load, so that the loop's own
	// work does not outweigh the chain.
	le := binary.LittleEndian
	for ; len(b) >= 32; b = b[32:] {
		w := b[:32]
		s0, s1 = checksumStep(s0, s1, le.Uint64(w))
		s0, s1 = checksumStep(s0, s1, le.Uint64(w[8:]))
		s0, s1 = checksumStep(s0, s1, le.Uint64(w[16:]))
		s0, s1 = checksumStep(s0, s1, le.Uint64(w[24:]))
	}
	for ; len(b) >= 8; b = b[8:] {
		s0, s1 = checksumStep(s0, s1, le.Uint64(b))
	}
	return s0, s1
}

// checksumStep is one step of Checksum over the word pair x holds in
// native order (the first word in its low half).
func checksumStep(s0, s1 uint32, x uint64) (uint32, uint32) {
	x0, x1 := uint32(x), uint32(x>>32)
	t := s0 + s1
	return t + x0, t + (s1 + (x0 + x1))
}

// parseHeader decodes b's header. valid is false when the log must be
// treated as empty (rule 1); err is set for an unknown version (rule 2).
func parseHeader(b []byte) (h Header, valid bool, err error) {
	if len(b) < HeaderSize {
		return h, false, nil
	}
	be := binary.BigEndian
	h = Header{
		Magic:         be.Uint32(b[hdrOffMagic:]),
		Version:       be.Uint32(b[hdrOffVersion:]),
		PageSize:      be.Uint32(b[hdrOffPageSize:]),
		CheckpointSeq: be.Uint32(b[hdrOffSeq:]),
		Salt1:         be.Uint32(b[hdrOffSalt1:]),
		Salt2:         be.Uint32(b[hdrOffSalt2:]),
		Cksum1:        be.Uint32(b[hdrOffCksum1:]),
		Cksum2:        be.Uint32(b[hdrOffCksum2:]),
	}
	if h.Magic != MagicLE && h.Magic != MagicBE {
		return h, false, nil
	}
	if !format.ValidPageSize(int(h.PageSize)) {
		return h, false, nil
	}
	s0, s1 := Checksum(b[:hdrCksumLen], 0, 0, h.BigEndian())
	if s0 != h.Cksum1 || s1 != h.Cksum2 {
		return h, false, nil
	}
	if h.Version != Version {
		return h, false, fmt.Errorf("%w: WAL format version %d (want %d)", format.ErrUnsupported, h.Version, Version)
	}
	return h, true, nil
}

// PageSizeOf returns the page size that WAL header b (its first HeaderSize
// bytes) gives, 0 when the header is not valid: the page size SQLite reads
// the WAL's frames by, whatever the database file's header says.
func PageSizeOf(b []byte) int {
	h, valid, err := parseHeader(b)
	if !valid || err != nil {
		return 0
	}
	return int(h.PageSize)
}

// FrameOffset returns the file offset of frame n (1-based) for a page size.
func FrameOffset(n uint32, pageSize int) int64 {
	return HeaderSize + int64(n-1)*int64(FrameHeaderSize+pageSize)
}

// EncodeFrame fills the 24-byte frame header fh for page image page (page
// number pgno; commit is the database size in pages for a commit frame, 0
// otherwise), continuing the running checksum (s0, s1) of the log whose
// header is h, and returns the checksum after this frame.
//
//	OFF SIZE FIELD
//	  0    4 page number
//	  4    4 database size after commit (commit frames), else 0
//	  8    4 salt-1, copied from the header
//	 12    4 salt-2, copied from the header
//	 16    4 checksum-1 over the header's first 8 bytes, then the page
//	 20    4 checksum-2
func EncodeFrame(fh []byte, h *Header, pgno, commit uint32, page []byte, s0, s1 uint32) (uint32, uint32) {
	be := binary.BigEndian
	be.PutUint32(fh[frmOffPgno:], pgno)
	be.PutUint32(fh[frmOffCommit:], commit)
	be.PutUint32(fh[frmOffSalt1:], h.Salt1)
	be.PutUint32(fh[frmOffSalt2:], h.Salt2)
	s0, s1 = Checksum(fh[:frmCksumLen], s0, s1, h.BigEndian())
	s0, s1 = Checksum(page, s0, s1, h.BigEndian())
	be.PutUint32(fh[frmOffCksum1:], s0)
	be.PutUint32(fh[frmOffCksum2:], s1)
	return s0, s1
}

// nextHeader returns the header of the next generation of a log whose
// current header is prev (nil, or the zero Header, for a new log):
// checkpoint sequence and salt-1 advance, salt-2 is salt2 (random), and the
// byte order is the little-endian one SQLite uses on common hardware.
func nextHeader(prev *Header, pageSize int, salt2 uint32) Header {
	h := Header{Magic: MagicLE, Version: Version, PageSize: uint32(pageSize), Salt2: salt2}
	if prev != nil && prev.Magic != 0 {
		h.CheckpointSeq = prev.CheckpointSeq + 1
		h.Salt1 = prev.Salt1 + 1
	} else {
		h.Salt1 = salt2*2654435761 + 1
	}
	return h
}
