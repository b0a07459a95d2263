package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// sqliteHeader is the header sqlite3 3.40.1 wrote for a fresh
// rollback-mode file after one CREATE TABLE (sqlite-format.md §1.1).
const sqliteHeaderHex = `
5351 4c69 7465 2066 6f72 6d61 7420 3300
1000 0101 0040 2020 0000 0001 0000 0002
0000 0000 0000 0000 0000 0001 0000 0004
0000 0000 0000 0000 0000 0001 0000 0000
0000 0000 0000 0000 0000 0000 0000 0000
0000 0000 0000 0000 0000 0000 0000 0001
002e 6301`

func sqliteHeader(t testing.TB) []byte {
	b := unhex(t, sqliteHeaderHex)
	if len(b) != HeaderSize {
		t.Fatalf("test header is %d bytes", len(b))
	}
	return b
}

// wantCorrupt checks that err wraps ErrCorrupt (and not ErrUnsupported) and
// that its *CorruptError names page pgno.
func wantCorrupt(t *testing.T, err error, pgno uint32) *CorruptError {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one wrapping ErrCorrupt")
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("error %q does not wrap ErrCorrupt", err)
	}
	if errors.Is(err, ErrUnsupported) {
		t.Errorf("error %q wraps ErrUnsupported too", err)
	}
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("error %q is not a *CorruptError", err)
	}
	if ce.Page != pgno {
		t.Errorf("error %q names page %d, want %d", err, ce.Page, pgno)
	}
	return ce
}

func wantUnsupported(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one wrapping ErrUnsupported")
	}
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("error %q does not wrap ErrUnsupported", err)
	}
	if errors.Is(err, ErrCorrupt) {
		t.Errorf("error %q wraps ErrCorrupt, want only ErrUnsupported", err)
	}
}

func TestHeaderAccessorsOnSQLiteHeader(t *testing.T) {
	h := Header(sqliteHeader(t))
	if err := ValidateHeader(h); err != nil {
		t.Fatalf("ValidateHeader(sqlite3 header) = %v", err)
	}
	for _, tc := range []struct {
		name      string
		got, want uint64
	}{
		{"PageSize", uint64(h.PageSize()), 4096},
		{"WriteVersion", uint64(h.WriteVersion()), 1},
		{"ReadVersion", uint64(h.ReadVersion()), 1},
		{"ReservedSpace", uint64(h.ReservedSpace()), 0},
		{"UsableSize", uint64(h.UsableSize()), 4096},
		{"ChangeCounter", uint64(h.ChangeCounter()), 1},
		{"DatabaseSize", uint64(h.DatabaseSize()), 2},
		{"FreelistTrunk", uint64(h.FreelistTrunk()), 0},
		{"FreelistCount", uint64(h.FreelistCount()), 0},
		{"SchemaCookie", uint64(h.SchemaCookie()), 1},
		{"SchemaFormat", uint64(h.SchemaFormat()), 4},
		{"DefaultCacheSize", uint64(h.DefaultCacheSize()), 0},
		{"LargestRootPage", uint64(h.LargestRootPage()), 0},
		{"TextEncoding", uint64(h.TextEncoding()), TextEncodingUTF8},
		{"UserVersion", uint64(h.UserVersion()), 0},
		{"IncrementalVacuum", uint64(h.IncrementalVacuum()), 0},
		{"ApplicationID", uint64(h.ApplicationID()), 0},
		{"VersionValidFor", uint64(h.VersionValidFor()), 1},
		{"SQLiteVersion", uint64(h.SQLiteVersion()), 3040001},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	if !h.SizeIsValid() {
		t.Errorf("SizeIsValid = false, want true (size 2, counter 1 == valid-for 1)")
	}
}

func TestHeaderFieldOffsets(t *testing.T) {
	// Give every 4-byte field a distinct value through raw bytes, then read
	// it back through the accessors: catches swapped offsets.
	h := Header(make([]byte, HeaderSize))
	fields := []struct {
		off int
		get func() uint32
	}{
		{24, h.ChangeCounter}, {28, h.DatabaseSize}, {32, h.FreelistTrunk},
		{36, h.FreelistCount}, {40, h.SchemaCookie},
		{48, h.DefaultCacheSize}, {52, h.LargestRootPage},
		{60, h.UserVersion}, {64, h.IncrementalVacuum}, {68, h.ApplicationID},
		{92, h.VersionValidFor}, {96, h.SQLiteVersion},
	}
	for i, f := range fields {
		binary.BigEndian.PutUint32(h[f.off:], 0x01020300+uint32(i))
	}
	for i, f := range fields {
		if got := f.get(); got != 0x01020300+uint32(i) {
			t.Errorf("field at offset %d reads %#x, want %#x", f.off, got, 0x01020300+uint32(i))
		}
	}
	// The schema format and text encoding read as SQLite reads them: the
	// low byte, the low two bits.
	binary.BigEndian.PutUint32(h[44:], 0x01020303)
	binary.BigEndian.PutUint32(h[56:], 0x01020302)
	if h.SchemaFormat() != 3 || h.TextEncoding() != 2 {
		t.Errorf("fields at 44 and 56 read as %d and %d, want 3 and 2", h.SchemaFormat(), h.TextEncoding())
	}
	h[18], h[19], h[20] = 7, 8, 9
	if h.WriteVersion() != 7 || h.ReadVersion() != 8 || h.ReservedSpace() != 9 {
		t.Errorf("bytes 18/19/20 read as %d/%d/%d", h.WriteVersion(), h.ReadVersion(), h.ReservedSpace())
	}
}

func TestHeaderSetters(t *testing.T) {
	h := Header(make([]byte, HeaderSize))
	sets := []struct {
		off int
		set func(uint32)
	}{
		{24, h.SetChangeCounter}, {28, h.SetDatabaseSize}, {32, h.SetFreelistTrunk},
		{36, h.SetFreelistCount}, {40, h.SetSchemaCookie}, {44, h.SetSchemaFormat},
		{56, h.SetTextEncoding}, {60, h.SetUserVersion}, {68, h.SetApplicationID},
		{92, h.SetVersionValidFor}, {96, h.SetSQLiteVersion},
	}
	for i, s := range sets {
		want := 0xA0B0C000 + uint32(i)
		s.set(want)
		if got := binary.BigEndian.Uint32(h[s.off:]); got != want {
			t.Errorf("setter for offset %d wrote %#x, want %#x", s.off, got, want)
		}
	}
	h.SetFileFormat(FileFormatWAL)
	if h[18] != 2 || h[19] != 2 {
		t.Errorf("SetFileFormat(2) wrote %d/%d", h[18], h[19])
	}
	for _, ps := range []int{512, 1024, 4096, 32768, 65536} {
		h.SetPageSize(ps)
		if got := h.PageSize(); got != ps {
			t.Errorf("SetPageSize(%d): PageSize() = %d", ps, got)
		}
	}
	h.SetPageSize(65536)
	if h[16] != 0 || h[17] != 1 {
		t.Errorf("SetPageSize(65536) stored % x, want 00 01", h[16:18])
	}
}

func TestSizeIsValid(t *testing.T) {
	h := Header(sqliteHeader(t))
	h.SetChangeCounter(5)
	if h.SizeIsValid() {
		t.Errorf("SizeIsValid with counter 5 != valid-for 1")
	}
	h.SetVersionValidFor(5)
	if !h.SizeIsValid() {
		t.Errorf("SizeIsValid with counter 5 == valid-for 5 is false")
	}
	h.SetDatabaseSize(0)
	if h.SizeIsValid() {
		t.Errorf("SizeIsValid with size 0")
	}
}

func TestInitHeader(t *testing.T) {
	// InitHeader must equal the sqlite3 header except for what differs by
	// design: WAL mode (18/19 = 2), one page, no schema yet (cookie 0).
	want := sqliteHeader(t)
	want[18], want[19] = 2, 2
	binary.BigEndian.PutUint32(want[28:], 1)
	binary.BigEndian.PutUint32(want[40:], 0)
	got := bytes.Repeat([]byte{0xEE}, HeaderSize+10)
	InitHeader(got, 4096)
	if !bytes.Equal(got[:HeaderSize], want) {
		t.Errorf("InitHeader(4096):\n got % x\nwant % x", got[:HeaderSize], want)
	}
	if !bytes.Equal(got[HeaderSize:], bytes.Repeat([]byte{0xEE}, 10)) {
		t.Errorf("InitHeader wrote past byte 100")
	}
	if err := ValidateHeader(got); err != nil {
		t.Errorf("ValidateHeader(InitHeader(4096)) = %v", err)
	}
	for _, ps := range []int{512, 65536} {
		h := make([]byte, HeaderSize)
		InitHeader(h, ps)
		if err := ValidateHeader(h); err != nil {
			t.Errorf("ValidateHeader(InitHeader(%d)) = %v", ps, err)
		}
		if Header(h).PageSize() != ps {
			t.Errorf("InitHeader(%d): PageSize = %d", ps, Header(h).PageSize())
		}
	}
}

func TestValidPageSize(t *testing.T) {
	for n := -1; n <= 1<<18; n++ {
		want := false
		for p := 512; p <= 65536; p *= 2 {
			if n == p {
				want = true
			}
		}
		if got := ValidPageSize(n); got != want {
			t.Fatalf("ValidPageSize(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestValidateHeaderAccepts(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(h []byte)
	}{
		{"sqlite3 header", func(h []byte) {}},
		{"WAL mode", func(h []byte) { h[18], h[19] = 2, 2 }},
		{"page size 512", func(h []byte) { binary.BigEndian.PutUint16(h[16:], 512) }},
		{"page size 32768", func(h []byte) { binary.BigEndian.PutUint16(h[16:], 32768) }},
		{"page size 65536 stored as 1", func(h []byte) { binary.BigEndian.PutUint16(h[16:], 1) }},
		{"usable exactly 480", func(h []byte) { binary.BigEndian.PutUint16(h[16:], 512); h[20] = 32 }},
		{"reserved 255 on 1024", func(h []byte) { binary.BigEndian.PutUint16(h[16:], 1024); h[20] = 255 }},
		{"empty schema: encoding 0, format 0", func(h []byte) {
			binary.BigEndian.PutUint32(h[56:], 0)
			binary.BigEndian.PutUint32(h[44:], 0)
		}},
		{"longer than 100 bytes", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := sqliteHeader(t)
			if tc.mod == nil {
				h = append(h, make([]byte, 4000)...)
			} else {
				tc.mod(h)
			}
			if err := ValidateHeader(h); err != nil {
				t.Errorf("ValidateHeader = %v, want nil", err)
			}
		})
	}
	h := Header(sqliteHeader(t))
	h[20] = 32
	binary.BigEndian.PutUint16(h[16:], 512)
	if h.UsableSize() != 480 {
		t.Errorf("UsableSize = %d, want 480", h.UsableSize())
	}
}

func TestValidateHeaderRejects(t *testing.T) {
	pageSize := func(raw uint16) func(h []byte) {
		return func(h []byte) { binary.BigEndian.PutUint16(h[16:], raw) }
	}
	corrupt := []struct {
		name    string
		mod     func(h []byte) []byte
		wantOff int // expected CorruptError.Offset; -1 = unknown
		wantMsg string
	}{
		{"short: 99 bytes", func(h []byte) []byte { return h[:99] }, -1, "shorter"},
		{"empty", func(h []byte) []byte { return nil }, -1, "shorter"},
		{"bad magic first byte", func(h []byte) []byte { h[0] = 's'; return h }, -1, "magic"},
		{"magic without NUL", func(h []byte) []byte { h[15] = ' '; return h }, -1, "magic"},
		{"page size 0", adapt(pageSize(0)), 16, "page size 0"},
		{"page size 100", adapt(pageSize(100)), 16, "page size 100"},
		{"page size 256", adapt(pageSize(256)), 16, "page size 256"},
		{"page size 513", adapt(pageSize(513)), 16, "page size 513"},
		{"page size 3", adapt(pageSize(3)), 16, "page size 3"},
		{"page size 2 (131072 >> 16)", adapt(pageSize(2)), 16, "page size 2"},
		{"page size 131072 truncated to 16 bits", adapt(func(h []byte) { Header(h).SetPageSize(131072) }), 16, "page size 0"},
		{"page size 0xffff", adapt(pageSize(0xffff)), 16, "page size 65535"},
		{"max fraction 65", adapt(func(h []byte) { h[21] = 65 }), 21, "64/32/32"},
		{"min fraction 33", adapt(func(h []byte) { h[22] = 33 }), 21, "64/32/32"},
		{"leaf fraction 31", adapt(func(h []byte) { h[23] = 31 }), 21, "64/32/32"},
		{"fractions zero", adapt(func(h []byte) { h[21], h[22], h[23] = 0, 0, 0 }), 21, "64/32/32"},
		{"usable 479", adapt(func(h []byte) { binary.BigEndian.PutUint16(h[16:], 512); h[20] = 33 }), 20, "usable page size 479"},
		{"usable 257", adapt(func(h []byte) { binary.BigEndian.PutUint16(h[16:], 512); h[20] = 255 }), 20, "usable page size 257"},
	}
	for _, tc := range corrupt {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateHeader(tc.mod(sqliteHeader(t)))
			ce := wantCorrupt(t, err, 1)
			if ce.Offset != tc.wantOff {
				t.Errorf("error %q has offset %d, want %d", err, ce.Offset, tc.wantOff)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tc.wantMsg)
			}
			if !strings.Contains(err.Error(), "page 1") {
				t.Errorf("error %q does not name page 1", err)
			}
		})
	}
	unsupported := []struct {
		name string
		mod  func(h []byte)
	}{
		{"read version 3", func(h []byte) { h[19] = 3 }},
		{"read version 255", func(h []byte) { h[19] = 255 }},
		{"schema format 5", func(h []byte) { binary.BigEndian.PutUint32(h[44:], 5) }},
		{"schema format 0x105", func(h []byte) { binary.BigEndian.PutUint32(h[44:], 0x105) }},
	}
	for _, tc := range unsupported {
		t.Run(tc.name, func(t *testing.T) {
			h := sqliteHeader(t)
			tc.mod(h)
			wantUnsupported(t, ValidateHeader(h))
		})
	}
	// Fields sqlite3 reads by their low bits (sqlite3InitOne, lockBtree):
	// each header opens, with the encoding and format SQLite reads.
	for _, c := range []struct {
		name     string
		off      int
		v        uint32
		enc, sf  uint32
		readVers byte
	}{
		{"read version 0", 16, 0, TextEncodingUTF8, 4, 0},
		{"text encoding 4", 56, 4, TextEncodingUTF8, 4, 1},
		{"text encoding 7", 56, 7, TextEncodingUTF16BE, 4, 1},
		{"text encoding 0x100", 56, 0x100, TextEncodingUTF8, 4, 1},
		{"text encoding 0xff000002", 56, 0xff000002, TextEncodingUTF16LE, 4, 1},
		{"schema format 0x104", 44, 0x104, TextEncodingUTF8, 4, 1},
		{"schema format 0x100", 44, 0x100, TextEncodingUTF8, 0, 1},
	} {
		h := sqliteHeader(t)
		if c.off == 16 {
			h[19] = 0
		} else {
			binary.BigEndian.PutUint32(h[c.off:], c.v)
		}
		hh := Header(h)
		if err := ValidateHeader(h); err != nil || hh.TextEncoding() != c.enc || hh.SchemaFormat() != c.sf || hh.ReadVersion() != c.readVers {
			t.Errorf("%s: %v, encoding %d, schema format %d, read version %d; want encoding %d, format %d, read version %d",
				c.name, err, hh.TextEncoding(), hh.SchemaFormat(), hh.ReadVersion(), c.enc, c.sf, c.readVers)
		}
	}
	// UTF-16 databases are read (the pager refuses to write them).
	for _, enc := range []uint32{TextEncodingUTF16LE, TextEncodingUTF16BE} {
		h := sqliteHeader(t)
		binary.BigEndian.PutUint32(h[56:], enc)
		if err := ValidateHeader(h); err != nil {
			t.Errorf("text encoding %d: %v", enc, err)
		}
	}
}

func adapt(f func(h []byte)) func(h []byte) []byte {
	return func(h []byte) []byte { f(h); return h }
}

func TestLockBytePage(t *testing.T) {
	for _, tc := range []struct {
		ps   int
		want uint32
	}{
		{4096, 262145}, // Appendix A
		{512, 2097153},
		{1024, 1048577},
		{65536, 16385},
	} {
		if got := LockBytePage(tc.ps); got != tc.want {
			t.Errorf("LockBytePage(%d) = %d, want %d", tc.ps, got, tc.want)
		}
		// The page must contain file offset 2^30 and 2^30+511.
		start := int64(tc.want-1) * int64(tc.ps)
		if start > 1<<30 || start+int64(tc.ps) < 1<<30+512 {
			t.Errorf("page %d of size %d spans %d..%d, missing the lock bytes", tc.want, tc.ps, start, start+int64(tc.ps))
		}
	}
}

func TestCorruptErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{Corruptf(0, "wal frame %d", 3), "database is corrupt: wal frame 3"},
		{Corruptf(7, "bad %s", "thing"), "database is corrupt: page 7: bad thing"},
		{CorruptAt(7, 12, "bad"), "database is corrupt: page 7 offset 12: bad"},
	} {
		if tc.err.Error() != tc.want {
			t.Errorf("Error() = %q, want %q", tc.err.Error(), tc.want)
		}
		if !errors.Is(tc.err, ErrCorrupt) {
			t.Errorf("%q does not wrap ErrCorrupt", tc.err)
		}
	}
}
