package format

// Text in a UTF-16 database.
//
// The header's text encoding (offset 56) says how every TEXT value of the
// file is stored: UTF-8 (1), UTF-16le (2) or UTF-16be (3), sqlite_schema's
// name, tbl_name and sql included. Index and WITHOUT ROWID keys hold the
// text as stored, so under BINARY (memcmp) a UTF-16 file's keys are in the
// order of their UTF-16 bytes. pagoda reads such files and hands out UTF-8;
// the conversions below are SQLite's own (sqlite3VdbeMemTranslate in
// utf.c), malformed input included, so that a value reads as sqlite3 reads
// it:
//
//   - UTF-16 to UTF-8: an odd last byte is dropped. A code unit in
//     D800..DFFF (either half of a surrogate pair) that is not the last one
//     is combined with the unit after it, whatever that unit is:
//     c = (c2&0x3FF) + (c&0x3F)<<10 + ((c&0x3C0)+0x40)<<10. So a lone high
//     surrogate swallows the character after it, and a lone low surrogate
//     too. A surrogate that is the last unit is written as the three bytes
//     UTF-8 would give its value (ED A0 80 for D800): no U+FFFD is made.
//   - UTF-8 to UTF-16: a lead byte C0..FF takes every continuation byte
//     (80..BF) after it, however many; a result below 0x80 (an overlong
//     form) or in D800..DFFF becomes U+FFFD; a stray continuation byte is
//     the code unit of its own value; above FFFF a surrogate pair is
//     written from the value's low 20 bits.

// IsUTF16 reports whether the header's text encoding enc is UTF-16.
func IsUTF16(enc uint32) bool { return enc == TextEncodingUTF16LE || enc == TextEncodingUTF16BE }

// UTF16ToUTF8 appends to dst the UTF-8 form of the UTF-16 text src (little
// endian when enc is TextEncodingUTF16LE, else big endian), converted as
// SQLite converts it (see above).
func UTF16ToUTF8(dst, src []byte, enc uint32) []byte {
	src = src[:len(src)&^1]
	le := enc == TextEncodingUTF16LE
	unit := func(i int) uint32 {
		if le {
			return uint32(src[i]) | uint32(src[i+1])<<8
		}
		return uint32(src[i])<<8 | uint32(src[i+1])
	}
	for i := 0; i < len(src); {
		c := unit(i)
		i += 2
		if c >= 0xD800 && c < 0xE000 && i < len(src) {
			c2 := unit(i)
			i += 2
			c = c2&0x3FF + (c&0x3F)<<10 + ((c&0x3C0)+0x40)<<10
		}
		dst = appendUTF8(dst, c)
	}
	return dst
}

// appendUTF8 is SQLite's WRITE_UTF8: c in 1 to 4 bytes, surrogates as any
// other value.
func appendUTF8(dst []byte, c uint32) []byte {
	switch {
	case c < 0x80:
		return append(dst, byte(c))
	case c < 0x800:
		return append(dst, 0xC0+byte(c>>6&0x1F), 0x80+byte(c&0x3F))
	case c < 0x10000:
		return append(dst, 0xE0+byte(c>>12&0x0F), 0x80+byte(c>>6&0x3F), 0x80+byte(c&0x3F))
	}
	return append(dst, 0xF0+byte(c>>18&0x07), 0x80+byte(c>>12&0x3F), 0x80+byte(c>>6&0x3F), 0x80+byte(c&0x3F))
}

// utf8Trans1 is SQLite's sqlite3Utf8Trans1: the value bits of a UTF-8 lead
// byte C0..FF.
var utf8Trans1 = [64]byte{
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00,
}

// UTF8ToUTF16 appends to dst the UTF-16 form (byte order by enc, as for
// UTF16ToUTF8) of the UTF-8 text src, converted as SQLite converts it (see
// above).
func UTF8ToUTF16(dst, src []byte, enc uint32) []byte { return utf8ToUTF16(dst, src, enc, false) }

// UTF8ToUTF16Stored is UTF8ToUTF16 for text that UTF16ToUTF8 read from a
// UTF-16 database: a surrogate encoded in three bytes, as UTF16ToUTF8
// writes one that is not paired, turns back into that code unit, where
// UTF8ToUTF16 makes it U+FFFD. SQLite never converts such text (it stays
// in the database's encoding); this undoes pagoda's conversion.
func UTF8ToUTF16Stored(dst, src []byte, enc uint32) []byte { return utf8ToUTF16(dst, src, enc, true) }

// utf8ToUTF16 is UTF8ToUTF16, and UTF8ToUTF16Stored when stored.
func utf8ToUTF16(dst, src []byte, enc uint32, stored bool) []byte {
	le := enc == TextEncodingUTF16LE
	put := func(dst []byte, u uint32) []byte {
		if le {
			return append(dst, byte(u), byte(u>>8))
		}
		return append(dst, byte(u>>8), byte(u))
	}
	for i := 0; i < len(src); {
		c := uint32(src[i])
		i++
		if c >= 0xC0 {
			c = uint32(utf8Trans1[c-0xC0])
			for i < len(src) && src[i]&0xC0 == 0x80 {
				c = c<<6 + uint32(src[i]&0x3F)
				i++
			}
			if c < 0x80 || c&0xFFFFF800 == 0xD800 && !stored {
				c = 0xFFFD
			}
		}
		if c <= 0xFFFF {
			dst = put(dst, c)
			continue
		}
		hi := 0xD800 + (c-0x10000)>>18&0x03<<8 + (c>>10&0x3F + (c-0x10000)>>10&0xC0)
		lo := 0xDC00 + c>>8&0x03<<8 + c&0xFF
		dst = put(dst, hi)
		dst = put(dst, lo)
	}
	return dst
}
