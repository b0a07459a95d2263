package fsys

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/inflate"
)

// Compressed data.
//
// A file whose data is not sz bytes long holds a zlib stream that must
// inflate to exactly sz bytes (sqlite3's sqlar_uncompress). sz is a claim:
// nothing is allocated by it that the data has not shown to be needed.
//
//  1. A claim no stream of the stored length can reach (deflate expands
//     at most maxInflate times) and a negative sz are ErrCorrupt before
//     anything is inflated.
//  2. An open file of up to wholeMax bytes inflates whole at its first
//     read, once, into a pooled buffer that Close gives back, in one call
//     of internal/inflate over its stored bytes: in place on the row's
//     page, or a pooled copy when they spill onto overflow pages (through
//     compress/zlib's reader instead when they are more than wholeMax
//     bytes): its reads,
//     at any offset and in any order, copy from it. A larger file
//     inflates as it is read, through an inflater (a zlib reader and its
//     input buffer, about 50 KiB, pooled) that it holds only while it is
//     part way through the stream: memory is bounded by that, whatever sz
//     says. Reading it before the stream's place inflates again from the
//     start.
//  3. The stream must end exactly at sz, with its checksum right. A stream
//     that ends early is ErrCorrupt when its end is met; one that goes on
//     past sz is ErrCorrupt at the read that would reach sz. Either way a
//     read that meets the damage returns none of its bytes, so the file
//     never yields its last byte unless the stream is whole and ends
//     there; a damaged file's reads all fail from then on. io.EOF comes
//     only once the stream is known to end at sz.
//  4. ReadFile (readAll) allocates sz at once when sz is at most
//     max(trustedSize, trustedRatio times the stored bytes): small files,
//     and large ones that deflate shrank no more than text usually is;
//     internal/inflate fills it in one call, as in rule 2. Beyond that it
//     starts there and doubles, capped at sz, as the stream
//     delivers; the copies cost little beside the inflating. A claim the
//     data does not back thus costs at most that start, or about four
//     times what the stream does inflate to (in all; the last buffer is at
//     most twice that).

// maxInflate bounds how far deflate expands its input: a deflate block
// codes at most 258 bytes in one bit, about 1032 to one.
const maxInflate = 1032

// ReadFile trusts a claim up to trustedSize bytes, or up to trustedRatio
// times the stored bytes (deflate shrinks text about three times).
const (
	trustedSize  = 1 << 20
	trustedRatio = 4
)

// inflater is a zlib reader and the input it reads: the compressed bytes
// in place when they lie whole on the row's page, else a buffer over the
// blob.
type inflater struct {
	zr io.ReadCloser // a zlib reader, Reset for each stream
	in bytes.Reader
	br *bufio.Reader
}

var inflaters = sync.Pool{New: func() any { return new(inflater) }}

// starts counts the streams start began, for the tests.
var starts atomic.Int64

// start returns an inflater reading b from its beginning.
func start(b *pagoda.Blob) (*inflater, error) {
	starts.Add(1)
	z := inflaters.Get().(*inflater)
	var src flate.Reader
	if whole := b.Bytes(); whole != nil {
		z.in.Reset(whole)
		src = &z.in
	} else {
		if _, err := b.Seek(0, io.SeekStart); err != nil {
			z.free()
			return nil, err
		}
		if z.br == nil {
			z.br = bufio.NewReader(b)
		} else {
			z.br.Reset(b)
		}
		src = z.br
	}
	var err error
	if z.zr == nil {
		z.zr, err = zlib.NewReader(src)
	} else {
		err = z.zr.(zlib.Resetter).Reset(src, nil)
	}
	if err != nil {
		z.free()
		return nil, err
	}
	return z, nil
}

// free gives z back to the pool, holding no page of the blob it read.
func (z *inflater) free() {
	z.in.Reset(nil)
	if z.br != nil {
		z.br.Reset(nil)
	}
	inflaters.Put(z)
}

// corrupt is damage in e's compressed data: what, and err (the zlib
// reader's) when it says more.
func corrupt(e *entry, what string, err error) error {
	if err != nil {
		what += ": " + err.Error()
	}
	return fmt.Errorf("fsys: compressed data of %q (sz %d) %s: %w", e.name, e.sz, what, pagoda.ErrCorrupt)
}

// streamErr classifies an error of the zlib reader met while doing what:
// damage in the stream (its format, its checksum, an early end) is
// ErrCorrupt; an error reading the blob (I/O, a damaged page, which is
// ErrCorrupt already) is returned as it is.
func streamErr(e *entry, what string, err error) error {
	var ce flate.CorruptInputError
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return corrupt(e, what, errors.New("the stream ends early"))
	case errors.As(err, &ce), errors.Is(err, zlib.ErrChecksum), errors.Is(err, zlib.ErrHeader), errors.Is(err, zlib.ErrDictionary):
		return corrupt(e, what, err)
	}
	return err
}

// What streamErr says of a stream that fails at its start, or later.
const (
	notZlib = "is not a zlib stream"
	notSize = "does not inflate to its size"
)

// checkClaim applies rule 1 to file e, whose data is stored bytes long:
// it errs when sz is negative, or when compressed data (stored != sz)
// cannot inflate to it.
func checkClaim(e *entry, stored int64) error {
	switch {
	case e.sz < 0:
		return fmt.Errorf("fsys: %q has a negative size (sz %d): %w", e.name, e.sz, pagoda.ErrCorrupt)
	case stored != e.sz && e.sz > maxInflate*stored+64:
		return corrupt(e, fmt.Sprintf("is %d bytes: no zlib stream that short inflates that far", stored), nil)
	}
	return nil
}

// ends reads past the sz bytes of z's stream: it must end there (rule 3).
func (z *inflater) ends(e *entry) error {
	var one [1]byte
	for range 3 { // a Read may return nothing and no error
		switch n, err := z.zr.Read(one[:]); {
		case n != 0:
			return corrupt(e, "inflates past its size", nil)
		case err == io.EOF:
			return nil
		case err != nil:
			return streamErr(e, "does not end at its size", err)
		}
	}
	return corrupt(e, "does not end at its size", nil)
}

// readAll returns the whole of e's compressed data b, inflated (rule 4).
func readAll(b *pagoda.Blob, e *entry) ([]byte, error) {
	stored := b.Len()
	if err := checkClaim(e, stored); err != nil {
		return nil, err
	}
	if e.sz <= max(trustedSize, trustedRatio*stored) && inPlace(b) {
		out := make([]byte, e.sz)
		if err := inflateInto(out, b, e); err != nil {
			return nil, err
		}
		return out, nil
	}
	z, err := start(b)
	if err != nil {
		return nil, streamErr(e, notZlib, err)
	}
	defer z.free()
	out := make([]byte, min(e.sz, max(trustedSize, trustedRatio*stored)))
	n := 0
	for {
		m, err := io.ReadFull(z.zr, out[n:])
		if n += m; err != nil {
			return nil, streamErr(e, notSize, err)
		}
		if int64(n) == e.sz {
			break
		}
		// The claim goes on: grow by what the stream has shown, to sz.
		grown := make([]byte, min(e.sz, 2*int64(n)))
		copy(grown, out)
		out = grown
	}
	if err := z.ends(e); err != nil {
		return nil, err
	}
	return out, nil
}

// inflateInto inflates e's compressed data b into out, which it must fill
// exactly (rules 2 to 4), in one call of internal/inflate: on the bytes in
// place when they lie whole on the row's page, else on a pooled copy (b
// is at most wholeMax bytes: see inPlace).
func inflateInto(out []byte, b *pagoda.Blob, e *entry) error {
	starts.Add(1)
	src := b.Bytes()
	if src == nil {
		in := wholeBuf(b.Len())
		defer freeWholeBuf(in)
		src = (*in)[:b.Len()]
		if _, err := b.ReadAt(src, 0); err != nil {
			return err
		}
	}
	switch err := inflate.Zlib(out, src); {
	case err == nil:
		return nil
	case errors.Is(err, inflate.ErrHeader):
		return corrupt(e, notZlib, nil)
	case errors.Is(err, inflate.ErrLong):
		return corrupt(e, "inflates past its size", nil)
	default:
		return corrupt(e, notSize, err)
	}
}

// inPlace reports whether inflateInto takes b: stored bytes on the row's
// page, or few enough to copy into a pooled buffer. Larger ones stream
// through compress/zlib, which holds 50 KiB of them at a time.
func inPlace(b *pagoda.Blob) bool {
	return b.Len() <= wholeMax || b.Bytes() != nil
}

// wholeMax is the largest file an open file inflates whole (rule 2): as
// much as ReadFile trusts a claim with.
const wholeMax = trustedSize

// wholeBufs pools the buffers of files inflated whole, by size class:
// class k holds buffers of wholeMin<<k bytes.
const wholeMin = 4 << 10

var wholeBufs [21 - 12 + 1]sync.Pool // 4 KiB .. 1 MiB

// wholeBuf returns a pooled buffer of at least n <= wholeMax bytes.
func wholeBuf(n int64) *[]byte {
	k := 0
	for int64(wholeMin)<<k < n {
		k++
	}
	if b, ok := wholeBufs[k].Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, wholeMin<<k)
	return &b
}

// freeWholeBuf gives b back to its pool.
func freeWholeBuf(b *[]byte) {
	k := 0
	for wholeMin<<k < len(*b) {
		k++
	}
	wholeBufs[k].Put(b)
}

// stream is an open file's compressed data, inflated whole at its first
// read or as it is read (rules 2 and 3). It is used under its File's
// lock.
type stream struct {
	blob  *pagoda.Blob
	e     *entry
	z     *inflater // while part way through the stream
	pos   int64     // how far z has inflated
	ended bool      // the stream is known to end at sz
	err   error     // the damage found: every read returns it
	whole *[]byte   // a file of up to wholeMax bytes, inflated
}

// inflateWhole inflates a file of up to wholeMax bytes into s.whole, once,
// and checks that its stream ends there.
func (s *stream) inflateWhole() error {
	if s.whole != nil {
		return nil
	}
	b := wholeBuf(s.e.sz)
	var err error
	if inPlace(s.blob) {
		err = inflateInto((*b)[:s.e.sz], s.blob, s.e)
	} else {
		err = s.inflateStream((*b)[:s.e.sz])
	}
	if err != nil {
		freeWholeBuf(b)
		return s.fail(err)
	}
	s.whole, s.ended = b, true
	return nil
}

// inflateStream inflates a file whose stored bytes are too many to copy
// whole (inPlace) into out, through compress/zlib, and checks that its
// stream ends there.
func (s *stream) inflateStream(out []byte) error {
	z, err := start(s.blob)
	if err != nil {
		return streamErr(s.e, notZlib, err)
	}
	defer z.free()
	if _, err = io.ReadFull(z.zr, out); err != nil {
		return streamErr(s.e, notSize, err)
	}
	return z.ends(s.e) // rule 3: nothing is read of a damaged file
}

// close gives back what s holds.
func (s *stream) close() {
	s.release()
	if s.whole != nil {
		freeWholeBuf(s.whole)
		s.whole = nil
	}
}

// fail notes err, the stream's damage, and lets the inflater go.
func (s *stream) fail(err error) error {
	s.err = err
	s.release()
	return err
}

// release gives the inflater back.
func (s *stream) release() {
	if s.z != nil {
		s.z.free()
		s.z = nil
	}
}

// seek places the inflater at offset off, at most sz: from the start again
// when off is behind it, inflating and dropping the bytes before off.
func (s *stream) seek(off int64) error {
	if s.z == nil || off < s.pos {
		s.release()
		z, err := start(s.blob)
		if err != nil {
			return s.fail(streamErr(s.e, notZlib, err))
		}
		s.z, s.pos = z, 0
	}
	if off > s.pos {
		n, err := io.CopyN(io.Discard, s.z.zr, off-s.pos)
		s.pos += n
		if err != nil {
			return s.fail(streamErr(s.e, notSize, err))
		}
	}
	return nil
}

// end checks, once, that the stream ends at sz.
func (s *stream) end() error {
	if s.ended {
		return nil
	}
	if err := s.seek(s.e.sz); err != nil {
		return err
	}
	if err := s.z.ends(s.e); err != nil {
		return s.fail(err)
	}
	s.ended = true
	s.release()
	return nil
}

// readAt implements io.ReaderAt for the inflated data.
func (s *stream) readAt(p []byte, off int64) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	sz := s.e.sz
	if sz <= wholeMax {
		if err := s.inflateWhole(); err != nil {
			return 0, err
		}
		if off >= sz {
			return 0, io.EOF
		}
		n := copy(p, (*s.whole)[off:sz])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	if off >= sz {
		if err := s.end(); err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	if err := s.seek(off); err != nil {
		return 0, err
	}
	q := p[:min(int64(len(p)), sz-off)]
	n, err := io.ReadFull(s.z.zr, q)
	s.pos += int64(n)
	if err != nil {
		return 0, s.fail(streamErr(s.e, notSize, err))
	}
	if s.pos == sz {
		if err := s.end(); err != nil {
			return 0, err
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// copyBufs are WriteTo's buffers.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// writeTo writes the inflated data from offset off to w.
func (s *stream) writeTo(w io.Writer, off int64) (int64, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.e.sz <= wholeMax {
		if err := s.inflateWhole(); err != nil {
			return 0, err
		}
		if off >= s.e.sz {
			return 0, nil
		}
		n, err := w.Write((*s.whole)[off:s.e.sz])
		return int64(n), err
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	var total int64
	for {
		n, err := s.readAt(*bp, off)
		if n > 0 {
			m, werr := w.Write((*bp)[:n])
			total += int64(m)
			off += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}
