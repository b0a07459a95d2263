package pagoda

import (
	"errors"
	"fmt"
	"io"

	"github.com/pagodadb/pagoda/internal/btree"
	"github.com/pagodadb/pagoda/internal/format"
)

// Blob reads one TEXT or BLOB value of one row in place, in pieces: the
// incremental I/O that sqlite3_blob_open gives SQLite's users. A value that
// spills onto overflow pages is read page by page straight into the
// caller's buffer, never assembled; reading forward costs one page per page
// of data. A Blob is valid until its transaction ends (in a write
// transaction, until the transaction's next change). It is not safe for
// concurrent use.
type Blob struct {
	p     btree.Payload
	value []byte // the value, when it comes from a column DEFAULT
	off   int64  // the value's offset in the payload
	n     int64  // its length
	typ   Type
	pos   int64 // for Read and Seek
}

// OpenBlob opens column (in declaration order) of the row with the given
// rowid for reading. The column must hold TEXT, a BLOB or NULL (which reads
// as empty); other types, the INTEGER PRIMARY KEY column and generated
// columns are an error wrapping ErrUnsupported. A missing row is
// ErrNotFound.
func (t *Table) OpenBlob(rowid int64, column int) (*Blob, error) {
	if !t.ok() { // check, inlined
		if err := t.recheck(); err != nil {
			return nil, err
		}
	}
	if t.WithoutRowID() {
		return nil, fmt.Errorf("pagoda: table %q is WITHOUT ROWID: OpenBlob needs a rowid: %w", t.Name(), ErrUnsupported)
	}
	m := &t.meta.rec
	if column < 0 || column >= len(m.Field) {
		return nil, fmt.Errorf("pagoda: table %q has no column %d: %w", t.Name(), column, ErrNotFound)
	}
	if column == m.Alias || m.Field[column] < 0 {
		return nil, fmt.Errorf("pagoda: table %q: column %q is not stored as text or a blob: %w", t.Name(), m.names[column], ErrUnsupported)
	}
	var p btree.Payload
	local, pgno, st := t.find(rowid)
	switch st {
	case btree.FindFound:
		p = btree.LocalPayload(pgno, local)
	case btree.FindAbsent:
		return nil, fmt.Errorf("pagoda: table %q row %d: %w", t.Name(), rowid, ErrNotFound)
	default:
		// The row spills (FindRowid left the cursor on it), or a page is
		// out of shape and the cursor's search reports it.
		if st == btree.FindUnsure && !t.cur.SeekRowid(rowid) {
			if err := t.cur.Err(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("pagoda: table %q row %d: %w", t.Name(), rowid, ErrNotFound)
		}
		var err error
		if p, err = t.cur.PayloadRef(); err != nil {
			return nil, err
		}
		pg, _ := t.cur.Page()
		pgno = pg.Pgno
	}
	b := &Blob{p: p}
	found, err := b.locate(m.Field[column], pgno)
	if err != nil {
		return nil, format.Corruptf(pgno, "table %q row %d: %s", t.Name(), rowid, corruptMsg(err))
	}
	if !found { // the row predates ALTER TABLE ADD COLUMN
		b.setValue(valueOf(m.Defaults[column]))
	}
	if b.typ != TypeText && b.typ != TypeBlob && b.typ != TypeNull {
		return nil, fmt.Errorf("pagoda: table %q row %d: column %q holds %s, not text or a blob: %w", t.Name(), rowid, m.names[column], b.typ, ErrUnsupported)
	}
	return b, nil
}

// recordHeaderMax bounds the record header read to find a field: a varint
// for the header length and one per field, SQLite's column limit of 32767
// fields at most 9 bytes each.
const recordHeaderMax = 9 + 32767*9

// locate finds stored field f in the record header: its offset, length and
// type. found is false when the record has fewer fields.
//
//	record: header length (varint) | serial type per field (varints) | bodies in order
func (b *Blob) locate(f int, pgno uint32) (found bool, err error) {
	hdr := b.p.Local()
	var lenBuf [9]byte
	if len(hdr) < len(lenBuf) && int64(len(hdr)) < b.p.Len() {
		n, err := b.p.ReadAt(lenBuf[:], 0)
		if err != nil {
			return false, err
		}
		hdr = lenBuf[:n]
	}
	h, n := format.Uvarint(hdr)
	if n == 0 || h < uint64(n) || h > uint64(b.p.Len()) || h > recordHeaderMax {
		return false, errors.New("record header length out of range")
	}
	if int64(len(b.p.Local())) >= int64(h) {
		hdr = b.p.Local()[:h]
	} else { // a header longer than the local part: rare, read it whole
		hdr = make([]byte, h)
		if _, err := b.p.ReadAt(hdr, 0); err != nil {
			return false, err
		}
	}
	pos, body := n, int64(h)
	for i := 0; ; i++ {
		if pos >= len(hdr) {
			return false, nil
		}
		t, m := format.Uvarint(hdr[pos:])
		if m == 0 {
			return false, errors.New("record header ends inside a serial type")
		}
		size, ok := format.SerialTypeSize(t)
		if !ok {
			return false, errors.New("reserved serial type in record")
		}
		if size > b.p.Len()-body {
			return false, errors.New("record body shorter than its header says")
		}
		pos += m
		if i < f {
			body += size
			continue
		}
		b.off, b.n = body, size
		switch {
		case t == 0:
			b.typ, b.n = TypeNull, 0
		case t >= 12 && t&1 == 1:
			b.typ = TypeText
		case t >= 12:
			b.typ = TypeBlob
		case t == 7:
			b.typ = TypeFloat
		default:
			b.typ = TypeInteger
		}
		return true, nil
	}
}

// setValue makes the blob read v (a column default).
func (b *Blob) setValue(v Value) {
	b.typ, b.off = v.Type(), 0
	b.value = v.Blob()
	b.n = int64(len(b.value))
}

// noBytes is what Bytes returns for an empty value: empty, not nil.
var noBytes = []byte{}

// Len returns the value's length in bytes.
func (b *Blob) Len() int64 { return b.n }

// Type returns the value's type: TypeText, TypeBlob or TypeNull.
func (b *Blob) Type() Type { return b.typ }

// Bytes returns the whole value without copying when it is stored whole on
// the row's b-tree page (or is a default), and nil when it spills onto
// overflow pages: read it with ReadAt then. The slice is valid as long as
// the Blob.
func (b *Blob) Bytes() []byte {
	if b.value != nil {
		return b.value[:len(b.value):len(b.value)]
	}
	if b.n == 0 {
		return noBytes
	}
	local := b.p.Local()
	if end := b.off + b.n; end <= int64(len(local)) {
		return local[b.off:end:end]
	}
	return nil
}

// ReadAt implements io.ReaderAt.
func (b *Blob) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("pagoda: Blob.ReadAt: negative offset")
	}
	if off >= b.n {
		return 0, io.EOF
	}
	want := len(p)
	p = p[:min(int64(len(p)), b.n-off)]
	var n int
	var err error
	if b.value != nil {
		n = copy(p, b.value[off:])
	} else {
		n, err = b.p.ReadAt(p, b.off+off)
	}
	if err == nil && n < want {
		err = io.EOF
	}
	return n, err
}

// Read implements io.Reader.
func (b *Blob) Read(p []byte) (int, error) {
	if b.pos >= b.n {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n, err := b.ReadAt(p, b.pos)
	b.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// Seek implements io.Seeker.
func (b *Blob) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += b.pos
	case io.SeekEnd:
		offset += b.n
	default:
		return b.pos, errors.New("pagoda: Blob.Seek: invalid whence")
	}
	if offset < 0 {
		return b.pos, errors.New("pagoda: Blob.Seek: negative position")
	}
	b.pos = offset
	return offset, nil
}

// WriteTo implements io.WriterTo: it writes the value page by page, with
// no copy beyond what w makes.
func (b *Blob) WriteTo(w io.Writer) (int64, error) {
	if b.pos >= b.n {
		return 0, nil
	}
	if whole := b.Bytes(); whole != nil {
		n, err := w.Write(whole[b.pos:])
		b.pos += int64(n)
		return int64(n), err
	}
	var buf [8192]byte
	var total int64
	for b.pos < b.n {
		n, err := b.ReadAt(buf[:], b.pos)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			b.pos += int64(m)
			total += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if err != nil && err != io.EOF {
			return total, err
		}
	}
	return total, nil
}
