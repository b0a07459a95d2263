package format

import (
	"bytes"
	"fmt"
	"testing"
	"unicode/utf8"
)

// FuzzUTF16 converts any bytes both ways in both byte orders: never a
// panic; well-formed UTF-8 comes back unchanged from a round trip through
// UTF-16, and UTF-16 read back from UTF-8 is at most the input's length
// (an odd last byte dropped).
func FuzzUTF16(f *testing.F) {
	for _, s := range []string{"", "héllo 😀", "\xed\xa0\x80", "\xff\xfe", "a\x80b", "\xf4\x90\x80\x80", "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, enc := range []uint32{TextEncodingUTF16LE, TextEncodingUTF16BE} {
			u16 := UTF8ToUTF16(nil, b, enc)
			if len(u16)%2 != 0 {
				t.Fatalf("UTF8ToUTF16(%x) has odd length %d", b, len(u16))
			}
			back := UTF16ToUTF8(nil, u16, enc)
			if utf8.Valid(b) && !bytes.Equal(back, b) {
				t.Fatalf("enc %d: %q -> %x -> %q", enc, b, u16, back)
			}
			_ = UTF16ToUTF8(nil, b, enc)
		}
	})
}

// TestUTF8ToUTF16Stored: the UTF-8 of an unpaired surrogate, as
// UTF16ToUTF8 writes it, goes back to that code unit, where UTF8ToUTF16
// (SQLite's conversion of UTF-8) makes it U+FFFD; all else converts alike.
func TestUTF8ToUTF16Stored(t *testing.T) {
	for _, tc := range []struct {
		in, stored, plain string // UTF-8 in; UTF-16le out, hex
	}{
		{"\xed\xa0\xbd", "3dd8", "fdff"},          // U+D83D alone
		{"\xed\xb0\x80A", "00dc4100", "fdff4100"}, // U+DC00, then A
		{"A\xc3\xa9", "4100e900", "4100e900"},
		{"\xf0\x9f\x90\xbd", "3dd83ddc", "3dd83ddc"}, // U+1F43D: a pair
		{"\xc0\x80", "fdff", "fdff"},                 // an overlong NUL: U+FFFD either way
	} {
		if got := fmt.Sprintf("%x", UTF8ToUTF16Stored(nil, []byte(tc.in), TextEncodingUTF16LE)); got != tc.stored {
			t.Errorf("UTF8ToUTF16Stored(%x) = %s, want %s", tc.in, got, tc.stored)
		}
		if got := fmt.Sprintf("%x", UTF8ToUTF16(nil, []byte(tc.in), TextEncodingUTF16LE)); got != tc.plain {
			t.Errorf("UTF8ToUTF16(%x) = %s, want %s", tc.in, got, tc.plain)
		}
	}
	// Back and forth: what UTF16ToUTF8 made of an unpaired surrogate.
	u := []byte{0x3d, 0xd8} // U+D83D, little-endian
	if back := UTF8ToUTF16Stored(nil, UTF16ToUTF8(nil, u, TextEncodingUTF16LE), TextEncodingUTF16LE); string(back) != string(u) {
		t.Errorf("round trip of %x: %x", u, back)
	}
}
