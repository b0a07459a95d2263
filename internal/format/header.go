package format

import (
	"encoding/binary"
	"fmt"
)

// The database header: the first 100 bytes of page 1. All integers are
// big-endian.
//
//	OFF SIZE FIELD
//	  0   16 magic "SQLite format 3\0"
//	 16    2 page size (1 means 65536)
//	 18    1 file format write version (1 rollback, 2 WAL)
//	 19    1 file format read version  (1 rollback, 2 WAL)
//	 20    1 reserved bytes at the end of each page
//	 21    1 max embedded payload fraction (must be 64)
//	 22    1 min embedded payload fraction (must be 32)
//	 23    1 leaf payload fraction (must be 32)
//	 24    4 file change counter
//	 28    4 database size in pages
//	 32    4 first freelist trunk page
//	 36    4 total freelist pages
//	 40    4 schema cookie
//	 44    4 schema format number (1..4)
//	 48    4 default page cache size
//	 52    4 largest root page (auto-vacuum), 0 otherwise
//	 56    4 text encoding (1 UTF-8, 2 UTF-16le, 3 UTF-16be)
//	 60    4 user version
//	 64    4 incremental vacuum mode
//	 68    4 application id
//	 72   20 reserved for expansion, zero
//	 92    4 version-valid-for number
//	 96    4 SQLITE_VERSION_NUMBER of the last writer
const (
	HeaderSize = 100

	offMagic           = 0
	offPageSize        = 16
	offWriteVersion    = 18
	offReadVersion     = 19
	offReservedSpace   = 20
	offMaxPayloadFrac  = 21
	offMinPayloadFrac  = 22
	offLeafPayloadFrac = 23
	offChangeCounter   = 24
	offDatabaseSize    = 28
	OffFreelistTrunk   = 32 // exported, as the freelist's errors name them
	OffFreelistCount   = 36
	offSchemaCookie    = 40
	offSchemaFormat    = 44
	offDefaultCache    = 48
	offLargestRoot     = 52
	offTextEncoding    = 56
	offUserVersion     = 60
	offIncrVacuum      = 64
	offApplicationID   = 68
	offVersionValidFor = 92
	offSQLiteVersion   = 96

	// Magic is the header string every SQLite 3 database starts with.
	Magic = "SQLite format 3\x00"

	// Required payload fractions; any other value makes the file unreadable.
	maxPayloadFraction  = 64
	minPayloadFraction  = 32
	leafPayloadFraction = 32

	// MinPageSize and MaxPageSize bound the page size (a power of two).
	MinPageSize = 512
	MaxPageSize = 65536
	// MinUsableSize is the smallest usable page size SQLite accepts.
	MinUsableSize = 480

	// FileFormatLegacy and FileFormatWAL are the values of bytes 18 and 19.
	FileFormatLegacy = 1
	FileFormatWAL    = 2

	// The text encodings (offset 56). pagoda reads all three (see
	// utf16.go) and writes UTF-8 databases only.
	TextEncodingUTF8    = 1
	TextEncodingUTF16LE = 2
	TextEncodingUTF16BE = 3

	// SQLiteVersionNumber is what pagoda writes at offset 96 (3.40.1's form).
	SQLiteVersionNumber = 3040001
	// LockBytePage offset: the page holding file offset 2^30 is never used.
	lockByteOffset = 1 << 30
)

// Header is a view of the 100-byte database header. It must be at least
// HeaderSize bytes long; accessors read the bytes in place.
type Header []byte

func (h Header) u32(off int) uint32 { return binary.BigEndian.Uint32(h[off : off+4]) }
func (h Header) put32(off int, v uint32) {
	binary.BigEndian.PutUint32(h[off:off+4], v)
}

// PageSize returns the page size in bytes (the stored 1 means 65536).
func (h Header) PageSize() int {
	v := int(binary.BigEndian.Uint16(h[offPageSize:]))
	if v == 1 {
		return MaxPageSize
	}
	return v
}

// SchemaFormat returns the schema format number as SQLite reads it: the
// field's low byte (sqlite3InitOne), 0 while the schema is empty.
func (h Header) SchemaFormat() uint32 { return h.u32(offSchemaFormat) & 0xff }

// TextEncoding returns the text encoding as SQLite reads it
// (sqlite3InitOne): 0 when the field is 0 (an empty schema, whose first
// table sets it), else its low two bits, 0 there meaning UTF-8.
func (h Header) TextEncoding() uint32 {
	v := h.u32(offTextEncoding)
	if v == 0 {
		return 0
	}
	if v &= 3; v == 0 {
		return TextEncodingUTF8
	}
	return v
}

// FormatFieldsSet reports whether the schema format field is set, which
// SQLite tests, whole, before its first CREATE sets it and the text
// encoding (sqlite3StartTable).
func (h Header) FormatFieldsSet() bool { return h.u32(offSchemaFormat) != 0 }

// SetPageSize stores a page size (65536 is stored as 1).
func (h Header) SetPageSize(n int) {
	if n == MaxPageSize {
		n = 1
	}
	binary.BigEndian.PutUint16(h[offPageSize:], uint16(n))
}

func (h Header) WriteVersion() byte        { return h[offWriteVersion] }
func (h Header) ReadVersion() byte         { return h[offReadVersion] }
func (h Header) ReservedSpace() int        { return int(h[offReservedSpace]) }
func (h Header) UsableSize() int           { return h.PageSize() - h.ReservedSpace() }
func (h Header) ChangeCounter() uint32     { return h.u32(offChangeCounter) }
func (h Header) DatabaseSize() uint32      { return h.u32(offDatabaseSize) }
func (h Header) FreelistTrunk() uint32     { return h.u32(OffFreelistTrunk) }
func (h Header) FreelistCount() uint32     { return h.u32(OffFreelistCount) }
func (h Header) SchemaCookie() uint32      { return h.u32(offSchemaCookie) }
func (h Header) DefaultCacheSize() uint32  { return h.u32(offDefaultCache) }
func (h Header) LargestRootPage() uint32   { return h.u32(offLargestRoot) }
func (h Header) UserVersion() uint32       { return h.u32(offUserVersion) }
func (h Header) IncrementalVacuum() uint32 { return h.u32(offIncrVacuum) }
func (h Header) ApplicationID() uint32     { return h.u32(offApplicationID) }
func (h Header) VersionValidFor() uint32   { return h.u32(offVersionValidFor) }
func (h Header) SQLiteVersion() uint32     { return h.u32(offSQLiteVersion) }

func (h Header) SetFileFormat(v byte)        { h[offWriteVersion], h[offReadVersion] = v, v }
func (h Header) SetChangeCounter(v uint32)   { h.put32(offChangeCounter, v) }
func (h Header) SetDatabaseSize(v uint32)    { h.put32(offDatabaseSize, v) }
func (h Header) SetFreelistTrunk(v uint32)   { h.put32(OffFreelistTrunk, v) }
func (h Header) SetFreelistCount(v uint32)   { h.put32(OffFreelistCount, v) }
func (h Header) SetSchemaCookie(v uint32)    { h.put32(offSchemaCookie, v) }
func (h Header) SetSchemaFormat(v uint32)    { h.put32(offSchemaFormat, v) }
func (h Header) SetTextEncoding(v uint32)    { h.put32(offTextEncoding, v) }
func (h Header) SetUserVersion(v uint32)     { h.put32(offUserVersion, v) }
func (h Header) SetApplicationID(v uint32)   { h.put32(offApplicationID, v) }
func (h Header) SetVersionValidFor(v uint32) { h.put32(offVersionValidFor, v) }
func (h Header) SetSQLiteVersion(v uint32)   { h.put32(offSQLiteVersion, v) }

// SizeIsValid reports whether the in-header database size may be trusted:
// it is nonzero and the change counter equals version-valid-for.
func (h Header) SizeIsValid() bool {
	return h.DatabaseSize() != 0 && h.ChangeCounter() == h.VersionValidFor()
}

// InitHeader fills h with the header of a new, empty WAL-mode database of
// the given page size whose file holds one page.
func InitHeader(h Header, pageSize int) {
	clear(h[:HeaderSize])
	copy(h, Magic)
	h.SetPageSize(pageSize)
	h.SetFileFormat(FileFormatWAL)
	h[offMaxPayloadFrac] = maxPayloadFraction
	h[offMinPayloadFrac] = minPayloadFraction
	h[offLeafPayloadFrac] = leafPayloadFraction
	h.SetChangeCounter(1)
	h.SetDatabaseSize(1)
	h.SetSchemaFormat(4)
	h.SetTextEncoding(TextEncodingUTF8)
	h.SetVersionValidFor(1)
	h.SetSQLiteVersion(SQLiteVersionNumber)
}

// ValidPageSize reports whether n is a legal SQLite page size.
func ValidPageSize(n int) bool {
	return n >= MinPageSize && n <= MaxPageSize && n&(n-1) == 0
}

// ValidateHeader checks the rules sqlite3 checks when it opens a database
// (magic, page size, payload fractions, usable size, read version, schema
// format), no more: sqlite3 reads a file whose read version is 0, or whose
// text encoding or schema format field has high bits set, and so does
// pagoda (TextEncoding, SchemaFormat). Errors wrap ErrCorrupt, or
// ErrUnsupported for a valid file that pagoda cannot read (a newer read
// version or schema format).
func ValidateHeader(b []byte) error {
	if err := ValidateLayout(b); err != nil {
		return err
	}
	h := Header(b)
	// A read version of 0 or 1 is rollback mode to SQLite (lockBtree).
	if rv := h.ReadVersion(); rv > FileFormatWAL {
		return fmt.Errorf("%w: file format read version %d", ErrUnsupported, rv)
	}
	// Every text encoding field reads as one (TextEncoding), and UTF-16
	// is read (the pager refuses to write it).
	if sf := h.SchemaFormat(); sf > 4 {
		return fmt.Errorf("%w: schema format %d", ErrUnsupported, sf)
	}
	return nil
}

// ValidateLayout is the part of ValidateHeader that says how to read the
// file's pages (magic, page size, payload fractions, usable size): what a
// pager needs of the file's own page 1 before it reads page 1 as a WAL
// may hold it, which SQLite then validates whole (a stale file header of
// a WAL-mode database is not the database's).
func ValidateLayout(b []byte) error {
	if len(b) < HeaderSize {
		return Corruptf(1, "file is %d bytes, shorter than the %d-byte database header", len(b), HeaderSize)
	}
	h := Header(b)
	if string(h[offMagic:offMagic+len(Magic)]) != Magic {
		return Corruptf(1, "file is not a database (bad magic: no \"SQLite format 3\" header)")
	}
	ps := h.PageSize()
	if !ValidPageSize(ps) {
		return CorruptAt(1, offPageSize, "invalid page size %d", binary.BigEndian.Uint16(h[offPageSize:]))
	}
	if h[offMaxPayloadFrac] != maxPayloadFraction || h[offMinPayloadFrac] != minPayloadFraction || h[offLeafPayloadFrac] != leafPayloadFraction {
		return CorruptAt(1, offMaxPayloadFrac, "payload fractions %d/%d/%d, want 64/32/32",
			h[offMaxPayloadFrac], h[offMinPayloadFrac], h[offLeafPayloadFrac])
	}
	if h.UsableSize() < MinUsableSize {
		return CorruptAt(1, offReservedSpace, "usable page size %d (page %d, reserved %d) below %d",
			h.UsableSize(), ps, h.ReservedSpace(), MinUsableSize)
	}
	return nil
}

// LockBytePage returns the page number holding the file's lock bytes
// (offset 2^30), which SQLite never uses.
func LockBytePage(pageSize int) uint32 {
	return uint32(lockByteOffset/pageSize) + 1
}
