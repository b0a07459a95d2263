package wal

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The worked examples of sqlite-format.md §8.2.
func TestHeaderChecksumExamples(t *testing.T) {
	tests := []struct {
		name, hdr    string
		want1, want2 uint32
	}{
		{"LE hand-built", "377f0682002de21800001000000000001122334455667788", 0x191a2524, 0x5979631e},
		{"BE hand-built", "377f0683002de21800001000000000001122334455667788", 0x27271a1b, 0x2366795c},
		{"written by sqlite3", "377f0682002de21800001000000000004cc7c2f01b38bc3a", 0xc5a9ca5f, 0xb84dda1f},
		{"P=512", "377f0682002de21800000200000000001122334455667788", 0x18fe2524, 0x594f631e},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustHex(t, tt.hdr)
			be := binary.BigEndian.Uint32(b) == MagicBE
			s0, s1 := Checksum(b, 0, 0, be)
			if s0 != tt.want1 || s1 != tt.want2 {
				t.Fatalf("checksum = %08x %08x, want %08x %08x", s0, s1, tt.want1, tt.want2)
			}
		})
	}
}

// Worked example 3: frame chaining with P = 512.
func TestFrameChecksumChain(t *testing.T) {
	s0, s1 := uint32(0x18fe2524), uint32(0x594f631e)
	s0, s1 = Checksum(mustHex(t, "0000000100000001"), s0, s1, false)
	if s0 != 0x734d8842 || s1 != 0xcd9ceb60 {
		t.Fatalf("after frame header: %08x %08x", s0, s1)
	}
	s0, s1 = Checksum(make([]byte, 512), s0, s1, false)
	if s0 != 0x5088905a || s1 != 0x4fe4398a {
		t.Fatalf("after page: %08x %08x", s0, s1)
	}
}

// TestChecksumModel: Checksum agrees with the algorithm as SQLite's
// walChecksumBytes states it, one word pair at a time, on random bytes of
// every length up to a page and a half (multiples of 8), in both byte
// orders, from random running sums.
func TestChecksumModel(t *testing.T) {
	model := func(b []byte, s0, s1 uint32, bigEndian bool) (uint32, uint32) {
		for i := 0; i+8 <= len(b); i += 8 {
			var x0, x1 uint32
			if bigEndian {
				x0, x1 = binary.BigEndian.Uint32(b[i:]), binary.BigEndian.Uint32(b[i+4:])
			} else {
				x0, x1 = binary.LittleEndian.Uint32(b[i:]), binary.LittleEndian.Uint32(b[i+4:])
			}
			s0 += x0 + s1
			s1 += x1 + s0
		}
		return s0, s1
	}
	r := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 6144)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for n := 0; n <= len(b); n += 8 {
		for _, be := range []bool{false, true} {
			s0, s1 := r.Uint32(), r.Uint32()
			g0, g1 := Checksum(b[:n], s0, s1, be)
			w0, w1 := model(b[:n], s0, s1, be)
			if g0 != w0 || g1 != w1 {
				t.Fatalf("%d bytes, big-endian %v: %08x %08x, want %08x %08x", n, be, g0, g1, w0, w1)
			}
		}
	}
}

// buildWAL writes a WAL image: frames given as (pgno, commit, fill byte).
type frame struct {
	pgno, commit uint32
	fill         byte
}

func buildWAL(pageSize int, magic uint32, frames []frame) []byte {
	h := Header{Magic: magic, Version: Version, PageSize: uint32(pageSize), Salt1: 0x11223344, Salt2: 0x55667788}
	b := make([]byte, HeaderSize)
	h.Encode(b)
	s0, s1 := h.Cksum1, h.Cksum2
	for _, f := range frames {
		fh := make([]byte, FrameHeaderSize)
		binary.BigEndian.PutUint32(fh[frmOffPgno:], f.pgno)
		binary.BigEndian.PutUint32(fh[frmOffCommit:], f.commit)
		binary.BigEndian.PutUint32(fh[frmOffSalt1:], h.Salt1)
		binary.BigEndian.PutUint32(fh[frmOffSalt2:], h.Salt2)
		page := make([]byte, pageSize)
		for i := range page {
			page[i] = f.fill
		}
		s0, s1 = Checksum(fh[:frmCksumLen], s0, s1, magic == MagicBE)
		s0, s1 = Checksum(page, s0, s1, magic == MagicBE)
		binary.BigEndian.PutUint32(fh[frmOffCksum1:], s0)
		binary.BigEndian.PutUint32(fh[frmOffCksum2:], s1)
		b = append(b, fh...)
		b = append(b, page...)
	}
	return b
}

// The recovery outcomes of sqlite-format.md §8.4 with a 4-frame WAL:
// [p1, p2+commit] [p2+commit] [p2+commit].
func TestRecoverValidPrefix(t *testing.T) {
	const ps = 512
	frames := []frame{{1, 0, 0xa1}, {2, 2, 0xa2}, {2, 2, 0xb2}, {2, 2, 0xc2}}
	frameSize := FrameHeaderSize + ps
	for _, magic := range []uint32{MagicLE, MagicBE} {
		full := buildWAL(ps, magic, frames)
		tests := []struct {
			name   string
			mutate func([]byte) []byte
			max    uint32
			page2  byte // fill of page 2's visible version, 0 if none
		}{
			{"intact", func(b []byte) []byte { return b }, 4, 0xc2},
			{"last frame truncated", func(b []byte) []byte { return b[:len(b)-100] }, 3, 0xb2},
			{"bit flip in frame 3 page", func(b []byte) []byte { b[HeaderSize+2*frameSize+FrameHeaderSize+7] ^= 1; return b }, 2, 0xa2},
			{"bit flip in frame 2", func(b []byte) []byte { b[HeaderSize+frameSize+FrameHeaderSize+1] ^= 1; return b }, 0, 0},
			{"commit of frame 3 zeroed", func(b []byte) []byte {
				binary.BigEndian.PutUint32(b[HeaderSize+2*frameSize+frmOffCommit:], 0)
				return b
			}, 2, 0xa2},
			{"salt in header flipped", func(b []byte) []byte { b[hdrOffSalt1] ^= 1; return b }, 0, 0},
			{"short header", func(b []byte) []byte { return b[:20] }, 0, 0},
			{"only header", func(b []byte) []byte { return b[:HeaderSize] }, 0, 0},
			{"frame page number 0", func(b []byte) []byte {
				binary.BigEndian.PutUint32(b[HeaderSize+3*frameSize+frmOffPgno:], 0)
				return b
			}, 3, 0xb2},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				b := tt.mutate(append([]byte(nil), full...))
				l, err := Recover(b, ps)
				if err != nil {
					t.Fatal(err)
				}
				if l.MaxFrame != tt.max {
					t.Fatalf("MaxFrame = %d, want %d", l.MaxFrame, tt.max)
				}
				f := l.Index.Find(2, l.MaxFrame)
				if tt.page2 == 0 {
					if f != 0 {
						t.Fatalf("page 2 found in frame %d, want none", f)
					}
					return
				}
				if got := l.FrameData(b, f)[0]; got != tt.page2 {
					t.Fatalf("page 2 version %#x, want %#x", got, tt.page2)
				}
				if l.DBSize != 2 {
					t.Fatalf("DBSize = %d", l.DBSize)
				}
			})
		}
	}
}

func TestRecoverErrors(t *testing.T) {
	b := buildWAL(512, MagicLE, []frame{{1, 1, 1}})
	if _, err := Recover(b, 1024); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("page size mismatch: %v", err)
	}
	// A header of another page size over frames that commit nothing at
	// it: nothing is committed, and the log is not valid (a writer
	// restarts it).
	for _, frames := range [][]frame{nil, {{1, 0, 1}}} {
		b := buildWAL(512, MagicLE, frames)
		l, err := Recover(b, 1024)
		if err != nil || l.Valid || l.MaxFrame != 0 {
			t.Fatalf("page size mismatch, %d frames, none committed: %v, valid %v, max frame %d", len(frames), err, l.Valid, l.MaxFrame)
		}
	}
	h := Header{Magic: MagicLE, Version: 3007001, PageSize: 512}
	bad := make([]byte, HeaderSize)
	h.Encode(bad)
	if _, err := Recover(bad, 512); !errors.Is(err, format.ErrUnsupported) {
		t.Fatalf("bad version: %v", err)
	}
}

// A snapshot taken at an earlier commit keeps seeing its versions.
func TestIndexSnapshots(t *testing.T) {
	var ix Index
	ix.Add(5, 1)
	ix.Add(6, 2)
	ix.Add(5, 3)
	ix.Add(5, 4)
	for _, tt := range []struct{ pg, max, want uint32 }{
		{5, 0, 0}, {5, 1, 1}, {5, 2, 1}, {5, 3, 3}, {5, 9, 4}, {6, 1, 0}, {6, 2, 2}, {7, 9, 0},
	} {
		if got := ix.Find(tt.pg, tt.max); got != tt.want {
			t.Errorf("Find(%d, %d) = %d, want %d", tt.pg, tt.max, got, tt.want)
		}
	}
	if ix.Len() != 4 {
		t.Fatalf("Len = %d", ix.Len())
	}
	ix.Reset()
	if ix.Find(5, 9) != 0 {
		t.Fatal("Reset kept frames")
	}
}

func FuzzRecover(f *testing.F) {
	f.Add(buildWAL(512, MagicLE, []frame{{1, 0, 1}, {2, 2, 2}}), 512)
	f.Add(buildWAL(512, MagicBE, []frame{{1, 1, 1}}), 512)
	f.Fuzz(func(t *testing.T, b []byte, ps int) {
		if !format.ValidPageSize(ps) {
			ps = 512
		}
		l, err := Recover(b, ps)
		if err != nil {
			return
		}
		l.Index.Pages(l.MaxFrame, func(pgno, frame uint32) {
			if frame > l.MaxFrame || pgno == 0 {
				t.Fatalf("page %d frame %d beyond max %d", pgno, frame, l.MaxFrame)
			}
			_ = l.FrameData(b, frame)
		})
	})
}

func BenchmarkChecksum(b *testing.B) {
	page := make([]byte, 4096)
	for i := range page {
		page[i] = byte(i * 7)
	}
	for _, be := range []bool{false, true} {
		b.Run(map[bool]string{false: "native", true: "big-endian"}[be], func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			var s0, s1 uint32
			for b.Loop() {
				s0, s1 = Checksum(page, s0, s1, be)
			}
		})
	}
}

// TestIndexModel checks Find against a model over three segments of
// frames whose pages are drawn from a few hot pages and many cold ones,
// at snapshots of every age.
func TestIndexModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ix Index
	var pages []uint32 // pages[f-1]: the page of frame f
	for f := uint32(1); f <= 3*segmentFrames+77; f++ {
		pg := uint32(1 + r.IntN(3)) // hot
		if r.IntN(3) == 0 {
			pg = uint32(10 + r.IntN(5000))
		}
		ix.Add(pg, f)
		pages = append(pages, pg)
	}
	for range 20000 {
		maxFrame := uint32(r.IntN(len(pages) + 3))
		pg := uint32(1 + r.IntN(3))
		if r.IntN(2) == 0 {
			pg = uint32(10 + r.IntN(5010))
		}
		var want uint32
		for f := min(maxFrame, uint32(len(pages))); f >= 1; f-- {
			if pages[f-1] == pg {
				want = f
				break
			}
		}
		if got := ix.Find(pg, maxFrame); got != want {
			t.Fatalf("Find(%d, %d) = %d, want %d", pg, maxFrame, got, want)
		}
	}
}

// BenchmarkIndexFind looks up a page that every commit changes (a root)
// in a full segment, at the last frame.
func BenchmarkIndexFind(b *testing.B) {
	var ix Index
	for f := uint32(1); f <= segmentFrames; f++ {
		pg := uint32(1)
		if f%4 != 0 {
			pg = 100 + f
		}
		ix.Add(pg, f)
	}
	for b.Loop() {
		if ix.Find(1, segmentFrames) == 0 {
			b.Fatal("not found")
		}
	}
}
