package inflate

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// compress makes a zlib stream of b at level, as sqlite3's sqlar does with
// zlib's compress (level 6, compress/zlib's default).
func compress(t testing.TB, b []byte, level int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zlib.NewWriterLevel(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// samples are inputs that exercise every kind of block and match:
// stored, fixed and dynamic codes, runs (distance 1), short periods
// (distances 2 to 7), the longest match, the farthest distance, and data
// that does not compress.
func samples(t testing.TB) map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 100_000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	words := []string{"select ", "from ", "where ", "sqlite ", "pagoda ", "archive ", "\n", "func ", "return "}
	var text bytes.Buffer
	for text.Len() < 200_000 {
		text.WriteString(words[r.IntN(len(words))])
	}
	far := make([]byte, 80_000)
	copy(far, random[:1000])
	copy(far[32768+500:], random[:1000]) // a match 32,768 back... and more
	periods := make([]byte, 0, 50_000)
	for p := 1; p <= 9; p++ {
		for i := range 5000 {
			periods = append(periods, byte('a'+i%p))
		}
	}
	src, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "compress", "flate", "*.go"))
	var gosrc []byte
	for _, f := range src {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		gosrc = append(gosrc, b...)
	}
	return map[string][]byte{
		"empty":   {},
		"one":     {'x'},
		"run":     bytes.Repeat([]byte{'z'}, 70_000),
		"periods": periods,
		"random":  random,
		"text":    text.Bytes(),
		"far":     far,
		"gosrc":   gosrc,
	}
}

// TestZlibRoundTrip inflates what compress/zlib deflates, at every level,
// Huffman-only (-2) and stored (0) included.
func TestZlibRoundTrip(t *testing.T) {
	for name, b := range samples(t) {
		for level := -2; level <= 9; level++ {
			z := compress(t, b, level)
			dst := make([]byte, len(b))
			if err := Zlib(dst, z); err != nil {
				t.Fatalf("%s, level %d: %v", name, level, err)
			}
			if !bytes.Equal(dst, b) {
				t.Fatalf("%s, level %d: the output differs", name, level)
			}
		}
	}
}

// TestZlibErrors: each rule's failure, with the error it names.
func TestZlibErrors(t *testing.T) {
	text := bytes.Repeat([]byte("pagoda and sqlite share a file. "), 200)
	z := compress(t, text, 6)
	flip := func(i int, mask byte) []byte {
		b := bytes.Clone(z)
		b[i] ^= mask
		return b
	}
	// A stream of a single block, after the header: bits, first in the
	// low bit of the first byte.
	stream := func(body ...byte) []byte { return append([]byte{0x78, 0x9c}, body...) }
	withSum := func(b []byte, out []byte) []byte {
		return binary.BigEndian.AppendUint32(b, adler32.Checksum(out))
	}
	stored := func(data []byte) []byte {
		b := stream(1) // final, stored
		b = binary.LittleEndian.AppendUint16(b, uint16(len(data)))
		b = binary.LittleEndian.AppendUint16(b, ^uint16(len(data)))
		return append(b, data...)
	}
	dict := []byte{0x78, 0xbb, 0, 0, 0, 1} // FDICT with the empty dictionary's id
	dict = append(dict, z[2:]...)
	tests := []struct {
		name string
		src  []byte
		size int
		want error
	}{
		{"whole", z, len(text), nil},
		{"trailing bytes", append(bytes.Clone(z), "after"...), len(text), nil},
		{"empty dictionary", dict, len(text), nil},
		{"no input", nil, 0, ErrEnds},
		{"one byte", z[:1], len(text), ErrEnds},
		{"method 7", flip(0, 0x0f), len(text), ErrHeader},
		{"window of 64 KiB", append([]byte{0x88, 0x98}, z[2:]...), len(text), ErrHeader},
		{"check bits", flip(1, 0x01), len(text), ErrHeader},
		{"a dictionary", []byte{0x78, 0xbb, 1, 2, 3, 4, 0, 0}, 0, ErrHeader},
		{"a dictionary cut short", []byte{0x78, 0xbb, 0, 0}, 0, ErrEnds},
		{"cut in the data", z[:len(z)/2], len(text), ErrEnds},
		{"cut in the checksum", z[:len(z)-2], len(text), ErrEnds},
		{"no checksum", z[:len(z)-4], len(text), ErrEnds},
		{"checksum", flip(len(z)-1, 1), len(text), ErrChecksum},
		{"buffer one short", z, len(text) - 1, ErrLong},
		{"buffer one long", z, len(text) + 1, ErrShort},
		{"reserved block type", stream(0x07), 0, ErrCorrupt},
		{"stored", withSum(stored([]byte("abc")), []byte("abc")), 3, nil},
		{"stored, LEN's complement wrong", func() []byte { b := stored([]byte("abc")); b[5] ^= 1; return b }(), 3, ErrCorrupt},
		{"stored, cut", stored([]byte("abc"))[:8], 3, ErrEnds},
		{"stored, past the buffer", withSum(stored([]byte("abc")), []byte("abc")), 2, ErrLong},
		// Fixed codes: literal 'a' (0x91, 8 bits 10010001), then a length
		// 3 (symbol 257, 7 bits 0000001) at distance 2 (code 00001):
		// nothing is 2 back.
		{"distance past the start", stream(fixedBits("1", "01", "10010001", "0000001", "00001", "0000000")...), 4, ErrCorrupt},
		// Fixed literal/length symbol 286 (8 bits 11000110).
		{"length symbol 286", stream(fixedBits("1", "01", "11000110")...), 1, ErrCorrupt},
		// Distance symbol 30 (5 bits 11110) after 'a', length 3.
		{"distance symbol 30", stream(fixedBits("1", "01", "10010001", "0000001", "11110")...), 4, ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := make([]byte, tc.size)
			err := Zlib(dst, tc.src)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Zlib = %v, want %v", err, tc.want)
			}
			ok := reference(tc.src, tc.size) != nil
			if ok != (tc.want == nil) {
				t.Errorf("compress/zlib accepts it: %v; pagoda's inflate: %v", ok, err)
			}
		})
	}
}

// fixedBits packs fields, each written as a Huffman code is sent (its
// first bit first) into bytes, first bit in the low bit; the first two
// fields, BFINAL and BTYPE, are numbers sent low bit first.
func fixedBits(final, typ string, codes ...string) []byte {
	var out []byte
	var acc, n uint
	put := func(bit uint) {
		acc |= bit << n
		if n++; n == 8 {
			out = append(out, byte(acc))
			acc, n = 0, 0
		}
	}
	put(uint(final[0] - '0'))
	put(uint(typ[1] - '0')) // BTYPE's low bit first
	put(uint(typ[0] - '0'))
	for _, c := range codes {
		for i := range len(c) {
			put(uint(c[i] - '0'))
		}
	}
	if n > 0 {
		out = append(out, byte(acc))
	}
	return out
}

// TestZlibCodes: Huffman codes that are not complete, or are, at the
// edges of rule 2, in dynamic blocks built bit by bit.
func TestZlibCodes(t *testing.T) {
	// A dynamic block whose code length code gives lengths to symbols
	// 0..18 as cl (in clenOrder's order, 19 entries) and whose literal
	// code is then read from rest.
	tests := []struct {
		name string
		src  []byte
	}{
		{"oversubscribed code length code", dynamicHeader(0, 0, []uint8{1, 1, 1})},
		{"incomplete code length code", dynamicHeader(0, 0, []uint8{2, 2, 2})},
		{"HLIT past 286", dynamicHeader(30, 0, []uint8{1, 1})},
		{"HDIST past 30", dynamicHeader(0, 30, []uint8{1, 1})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Zlib(make([]byte, 10), tc.src)
			if err == nil {
				t.Fatal("Zlib accepted it")
			}
			if reference(tc.src, 10) != nil {
				t.Error("compress/zlib accepts it")
			}
		})
	}
}

// dynamicHeader is a zlib header and a final dynamic block's header with
// HLIT and HDIST as given and the code length code's lengths cl (in
// transmission order), then zero bits.
func dynamicHeader(hlit, hdist uint, cl []uint8) []byte {
	var out []byte
	var acc uint64
	var n uint
	put := func(v uint64, bits uint) {
		acc |= v << n
		n += bits
		for n >= 8 {
			out = append(out, byte(acc))
			acc >>= 8
			n -= 8
		}
	}
	put(1, 1)
	put(2, 2)
	put(uint64(hlit), 5)
	put(uint64(hdist), 5)
	put(uint64(max(4, len(cl))-4), 4) // HCLEN: at least 4 lengths
	for i := range max(4, len(cl)) {
		v := uint64(0)
		if i < len(cl) {
			v = uint64(cl[i])
		}
		put(v, 3)
	}
	put(0, 64)
	return append([]byte{0x78, 0x9c}, out...)
}

// reference is compress/zlib's verdict: the stream inflated to exactly
// size bytes and ended there with its checksum right (what fsys asked of
// compress/zlib before this package), or nil.
func reference(src []byte, size int) []byte {
	zr, err := zlib.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil
	}
	var one [1]byte
	for range 3 {
		n, err := zr.Read(one[:])
		switch {
		case n != 0:
			return nil
		case err == io.EOF:
			return out
		case err != nil:
			return nil
		}
	}
	return nil
}

// FuzzZlib holds Zlib to compress/zlib's verdict on any input: the same
// acceptance at the size compress/zlib inflates the input to (and one
// byte either side), and the same bytes.
func FuzzZlib(f *testing.F) {
	for _, b := range samples(f) {
		if len(b) > 4096 {
			b = b[:4096]
		}
		for _, level := range []int{-2, 0, 1, 6, 9} {
			z := compress(f, b, level)
			f.Add(z)
			if len(z) > 8 {
				f.Add(z[:len(z)-5])
				c := bytes.Clone(z)
				c[len(c)/2] ^= 0x10
				f.Add(c)
			}
		}
	}
	f.Add([]byte{0x78, 0x9c, 0x07})
	f.Fuzz(func(t *testing.T, src []byte) {
		// The size compress/zlib reaches, at most 256 KiB (larger inputs make
		// each run slow to minimize).
		n := 0
		if zr, err := zlib.NewReader(bytes.NewReader(src)); err == nil {
			m, _ := io.Copy(io.Discard, io.LimitReader(zr, 256<<10))
			n = int(m)
		}
		for _, size := range []int{n - 1, n, n + 1} {
			if size < 0 {
				continue
			}
			want := reference(src, size)
			dst := make([]byte, size)
			err := Zlib(dst, src)
			switch {
			case want == nil && err == nil:
				t.Fatalf("size %d: Zlib accepts what compress/zlib refuses", size)
			case want != nil && err != nil:
				t.Fatalf("size %d: Zlib refuses what compress/zlib accepts: %v", size, err)
			case want != nil && !bytes.Equal(dst, want):
				t.Fatalf("size %d: the output differs from compress/zlib's", size)
			}
		}
	})
}

// BenchmarkZlib inflates Go's compress/flate sources, deflated at zlib's
// default level as sqlite3 -Ac does: each file as a stream of its own (an
// archive's shape) and all of them as one stream, against compress/zlib
// reading the same streams into the same buffers (its reader reused with
// Reset, as fsys did): go test -bench Zlib ./internal/inflate
func BenchmarkZlib(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "compress", "flate", "*.go"))
	var texts, zs [][]byte
	var all []byte
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		texts = append(texts, text)
		zs = append(zs, compress(b, text, 6))
		all = append(all, text...)
	}
	shapes := []struct {
		name  string
		texts [][]byte
		zs    [][]byte
	}{
		{"files", texts, zs},
		{"stream", [][]byte{all}, [][]byte{compress(b, all, 6)}},
	}
	for _, sh := range shapes {
		dsts := make([][]byte, len(sh.texts))
		n := 0
		for i, t := range sh.texts {
			dsts[i] = make([]byte, len(t))
			n += len(t)
		}
		b.Run(sh.name+"/pagoda", func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				for i, z := range sh.zs {
					if err := Zlib(dsts[i], z); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(sh.name+"/compress-zlib", func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			var zr io.ReadCloser
			br := new(bytes.Reader)
			for b.Loop() {
				for i, z := range sh.zs {
					br.Reset(z)
					var err error
					if zr == nil {
						zr, err = zlib.NewReader(br)
					} else {
						err = zr.(zlib.Resetter).Reset(br, nil)
					}
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.ReadFull(zr, dsts[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
