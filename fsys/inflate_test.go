package fsys_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqlartest"
)

// TestInflateBomb reads a 1 GiB file stored in 1.3 MB (zeros) through an
// open file, by WriteTo and by Read: every byte comes, and the reads
// allocate less than a MiB (an inflater and a buffer), not the file.
func TestInflateBomb(t *testing.T) {
	db := dbtest.Open(t, "", nil)
	insertRows(t, db, true, []any{"bomb", int64(0o100644), int64(1e9), int64(sqlartest.BombSize), sqlartest.Bomb()})
	f := fsys.New(db, nil)
	if fi, err := f.Stat("bomb"); err != nil || fi.Size() != sqlartest.BombSize {
		t.Fatalf("Stat: %v, %v", fi, err)
	}
	for _, way := range readWays[:2] {
		var z sqlartest.Zeros
		var err error
		n := sqlartest.Allocated(func() {
			var fl fs.File
			if fl, err = f.Open("bomb"); err != nil {
				return
			}
			defer fl.Close()
			_, err = way.read(fl, &z)
		})
		if err != nil || z.N != sqlartest.BombSize || z.NonZero {
			t.Errorf("%s: %d bytes (all zero: %v), %v; want %d zeros", way.name, z.N, !z.NonZero, err, sqlartest.BombSize)
		}
		t.Logf("%s: %d bytes allocated", way.name, n)
		if n > 1<<20 {
			t.Errorf("%s allocated %d bytes reading a 1 GiB file", way.name, n)
		}
	}
}

// TestInflateReadAtSeek reads a compressed file at random offsets, forward
// and back, through ReadAt (from several goroutines too), Seek and Read,
// and WriteTo from the middle: each read gives the bytes at its offset.
func TestInflateReadAtSeek(t *testing.T) {
	db := dbtest.Open(t, "", nil)
	content := benchText(300 << 10)
	f := fsys.New(db, &fsys.Options{Compress: true})
	must(t, f.WriteFile("f", content, 0o644))
	fl, err := f.Open("f")
	must(t, err)
	defer fl.Close()
	ra, sk := fl.(io.ReaderAt), fl.(io.ReadSeeker)
	r := rand.New(rand.NewPCG(7, 7))
	size := len(content)
	for range 40 {
		off, n := r.IntN(size+10), r.IntN(40<<10)
		p := make([]byte, n)
		got, err := ra.ReadAt(p, int64(off))
		want := content[min(off, size):min(off+n, size)]
		if !bytes.Equal(p[:got], want) || (got < n) != (err == io.EOF) || (err != nil && err != io.EOF) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d", n, off, got, err, len(want))
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			p := make([]byte, 1000)
			for i := range 10 {
				off := (g*7919 + i*31337) % (size - len(p))
				if n, err := ra.ReadAt(p, int64(off)); n != len(p) || err != nil || !bytes.Equal(p, content[off:off+len(p)]) {
					t.Errorf("goroutine %d: ReadAt at %d: %d, %v", g, off, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, off := range []int64{int64(size) / 2, 10, int64(size) - 5, 0} {
		if _, err := sk.Seek(off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		p := make([]byte, 100)
		n, err := io.ReadFull(sk, p)
		if want := content[off:min(off+100, int64(size))]; !bytes.Equal(p[:n], want) {
			t.Errorf("Read after Seek(%d): %d bytes, %v", off, n, err)
		}
	}
	if _, err := sk.Seek(int64(size)/3, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if n, err := fl.(io.WriterTo).WriteTo(&buf); err != nil || !bytes.Equal(buf.Bytes(), content[size/3:]) || n != int64(size-size/3) {
		t.Errorf("WriteTo from a third: %d, %v", n, err)
	}
	if n, err := sk.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("Read at the end: %d, %v", n, err)
	}
}

// TestInflateLies reads files whose compressed data inflates to more or
// fewer bytes than their sz, or is damaged, at every offset a reader may
// start from: each read fails with ErrCorrupt as soon as the damage is
// known, and no read yields the byte at sz-1 or any past it; a file that
// claims less than its stream fails at the read that reaches sz, even
// straight after Open (ReadAt at the end, Seek to the end then Read).
func TestInflateLies(t *testing.T) {
	db := dbtest.Open(t, "", nil)
	content := benchText(100 << 10)
	z := zlibBytes(content)
	truncated := z[:len(z)/2]
	size := int64(len(content))
	lies := []struct {
		name string
		sz   int64
		data []byte
	}{
		{"long", size - 1000, z},  // the stream goes past sz
		{"long1", size - 1, z},    // by one byte
		{"short", size + 1000, z}, // the stream ends before sz
		{"short1", size + 1, z},
		{"truncated", size, truncated},
		{"empty", 0, z},
	}
	for _, l := range lies {
		insertRows(t, db, false, []any{l.name, int64(0o100644), int64(1e9), l.sz, l.data})
	}
	f := fsys.New(db, nil)
	for _, l := range lies {
		t.Run(l.name, func(t *testing.T) {
			for _, off := range []int64{0, l.sz / 2, l.sz - 1, l.sz, l.sz + 10} {
				if off < 0 {
					continue
				}
				fl, err := f.Open(l.name)
				if err != nil {
					// Damage known at Open is as good.
					if !errors.Is(err, pagoda.ErrCorrupt) {
						t.Errorf("Open: %v", err)
					}
					continue
				}
				ra := fl.(io.ReaderAt)
				var got int64
				p := make([]byte, 8<<10)
				for {
					n, err := ra.ReadAt(p, off+got)
					if !bytes.Equal(p[:n], content[min(off+got, size):min(off+got+int64(n), size)]) {
						t.Errorf("ReadAt at %d gives bytes the stream does not hold there", off+got)
					}
					got += int64(n)
					if off+got >= l.sz && n > 0 {
						t.Errorf("from %d: yielded bytes up to %d, sz %d", off, off+got, l.sz)
					}
					if err == nil {
						continue
					}
					if !errors.Is(err, pagoda.ErrCorrupt) {
						t.Errorf("from %d: after %d bytes: %v, want ErrCorrupt", off, got, err)
					}
					break
				}
				fl.Close()
			}
			// Seek to the end, then Read: the claim is checked first.
			fl, err := f.Open(l.name)
			if err != nil {
				return
			}
			if _, err := fl.(io.Seeker).Seek(0, io.SeekEnd); err != nil {
				t.Fatal(err)
			}
			if n, err := fl.Read(make([]byte, 10)); n != 0 || !errors.Is(err, pagoda.ErrCorrupt) {
				t.Errorf("Read at the end: %d, %v; want ErrCorrupt", n, err)
			}
			fl.Close()
		})
	}
}

// TestInflateReadFileAllocates: ReadFile allocates a compressed file's sz
// once when the data makes it plausible (inflate.go, rule 4), and grows
// as the stream delivers when it does not: a claim the stream does not
// back costs a few times what the stream inflates to, not the claim.
func TestInflateReadFileAllocates(t *testing.T) {
	db := dbtest.Open(t, "", nil)
	text := benchText(4 << 20)
	zeros := make([]byte, 16<<20)
	zText, zZeros := zlibBytes(text), zlibBytes(zeros)
	insertRows(t, db, true,
		[]any{"text", int64(0o100644), int64(1e9), int64(len(text)), zText},
		[]any{"zeros", int64(0o100644), int64(1e9), int64(len(zeros)), zZeros},
		// 16 KiB of zlib that inflates to 16 MiB, claiming a GiB.
		[]any{"lie", int64(0o100644), int64(1e9), int64(maxInflate * len(zZeros)), zZeros},
	)
	f := fsys.New(db, nil)
	for _, c := range []struct {
		name    string
		size    int
		atMost  uint64
		corrupt bool
	}{
		{"text", len(text), uint64(len(text)) + 1<<20, false},      // sz once
		{"zeros", len(zeros), 2*uint64(len(zeros)) + 1<<20, false}, // 1 MiB doubled up to sz
		{"lie", 0, 4*uint64(len(zeros)) + 1<<20, true},             // doubled past what the stream holds
	} {
		var data []byte
		var err error
		n := sqlartest.Allocated(func() { data, err = f.ReadFile(c.name) })
		t.Logf("%s: %d bytes allocated (%d stored)", c.name, n, len(zText))
		switch {
		case c.corrupt && !errors.Is(err, pagoda.ErrCorrupt):
			t.Errorf("%s: %v, want ErrCorrupt", c.name, err)
		case !c.corrupt && (err != nil || len(data) != c.size):
			t.Errorf("%s: %d bytes, %v", c.name, len(data), err)
		}
		if n > c.atMost {
			t.Errorf("%s: allocated %d bytes, more than %d", c.name, n, c.atMost)
		}
	}
}

// maxInflate is fsys's bound on a zlib stream's expansion.
const maxInflate = 1032

// TestInflateOnce: an open compressed file of up to 1 MiB inflates once,
// at its first read, whatever its reads do after (ReadAt backward, Seek
// and Read again, WriteTo from the start), and gives the right bytes; a
// larger one inflates as it is read, so reading it backward starts its
// stream again. Reading the whole small file again, through a new Open,
// allocates no new buffer for it (the buffers are pooled).
func TestInflateOnce(t *testing.T) {
	db := dbtest.Open(t, "", nil)
	small, large := benchText(300<<10), benchText(1<<20+100<<10)
	f := fsys.New(db, &fsys.Options{Compress: true})
	must(t, f.WriteFile("small", small, 0o644))
	must(t, f.WriteFile("large", large, 0o644))
	read := func(name string, content []byte) int64 {
		t.Helper()
		before := fsys.Starts()
		fl, err := f.Open(name)
		must(t, err)
		defer fl.Close()
		ra := fl.(io.ReaderAt)
		buf := make([]byte, 64<<10)
		for off := int64(len(content)) - int64(len(buf)); off > -int64(len(buf)); off -= int64(len(buf)) {
			off := max(off, 0)
			n, err := ra.ReadAt(buf, off)
			if (err != nil && err != io.EOF) || !bytes.Equal(buf[:n], content[off:off+int64(n)]) {
				t.Fatalf("%s: ReadAt(%d): %d bytes, %v", name, off, n, err)
			}
			if off == 0 {
				break
			}
		}
		var out bytes.Buffer
		if _, err := fl.(io.WriterTo).WriteTo(&out); err != nil || !bytes.Equal(out.Bytes(), content) {
			t.Fatalf("%s: WriteTo: %d bytes, %v", name, out.Len(), err)
		}
		return fsys.Starts() - before
	}
	if n := read("small", small); n != 1 {
		t.Errorf("a 300 KiB file inflated %d times, want once", n)
	}
	if n := read("large", large); n < 10 {
		t.Errorf("a 1.1 MiB file read backward in 64 KiB pieces inflated %d times: it should stream (and start again)", n)
	}
	// A sync.Pool is best effort: a collection can empty it, and a buffer
	// put on one processor is not seen from another's private slot. So the
	// collector is off while it is measured, and the least of a few tries
	// counts; without pooling, every try allocates the whole buffer.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var err error
	n := uint64(math.MaxUint64)
	for range 5 {
		read("small", small) // the pool has a buffer now
		n = min(n, sqlartest.Allocated(func() {
			var fl fs.File
			if fl, err = f.Open("small"); err == nil {
				_, err = io.Copy(io.Discard, fl)
				fl.Close()
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
	}
	if n > 200<<10 {
		t.Errorf("reading a 300 KiB file again allocated %d bytes: its buffer should come from the pool", n)
	}
}
