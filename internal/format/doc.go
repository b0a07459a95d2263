// Package format holds the byte layouts of the SQLite 3 database file: the
// 100-byte database header, b-tree pages and their cells, varints, payload
// and overflow arithmetic, records, and the order of index keys.
//
// Everything here is a pure function or a view over a []byte: nothing reads
// or writes a file, nothing copies a page (Defragment uses the caller's
// scratch), and the hot paths (Uvarint, the Page accessors, CellAt,
// RecordReader.Next, CompareRecords, the field.go shortcuts, and the page
// edits of pagewrite.go) do not allocate. Slices returned by a view
// (Cell.Local, Value.Bytes) alias the bytes they were decoded from and are
// valid only as long as those bytes are; copy them to keep them.
//
// The constants (offsets, sizes, page types, serial types, payload
// fractions, the 480-byte minimum usable size) are part of the file format
// that sqlite3 reads: changing any of them makes files unreadable by
// sqlite3 or by older versions of pagoda. The reference is
// shared/design/sqlite-format.md, sections 1 to 4 and 7.1.
//
// Bytes from disk are never trusted: a violation of the format is returned
// as a *CorruptError (page, offset, what is wrong) that wraps ErrCorrupt,
// never a panic. A valid file using a feature pagoda does not read (a newer
// read version, say) gives an error wrapping ErrUnsupported. Text of a
// UTF-16 database is stored, compared under BINARY and converted to UTF-8
// as SQLite does it (utf16.go, and ForEncoding in compare.go).
//
// Where each layout is drawn, next to the code that decodes it:
//
//	FILE              LAYOUT
//	header.go         database header (page 1, bytes 0..99): OFF/SIZE/FIELD table
//	page.go           b-tree page: header, cell pointer array, content area,
//	                  freeblocks; header at 100 on page 1, at 0 elsewhere
//	pagewrite.go      page edits: compact rebuild, insert and drop a cell,
//	                  the freeblock chain and fragment count kept exact,
//	                  defragmentation
//	cell.go           the four cell formats (table/index, leaf/interior)
//	cellwrite.go      their encoders; a cell owns at least 4 bytes
//	payload.go        local payload size X, M, K and overflow pages
//	freelist.go       freelist trunk page: next trunk, leaf count, leaves
//	ptrmap.go         pointer-map pages of auto-vacuum files: type, parent
//	varint.go         1..9-byte big-endian varint, 9th byte carries 8 bits
//	record.go         record header and serial types 0..13+
//	field.go          read-path shortcuts over records: CheckRecord once, then
//	                  Field/FieldBody and CompareKey without re-checking
//	compare.go        key order: NULL < numbers < TEXT < BLOB, collations, DESC
//	compareprefix.go  the same order over a key's first n fields
//	utf16.go          the text of UTF-16 databases: SQLite's conversions
//	errors.go         ErrCorrupt, ErrUnsupported, *CorruptError
//
// The page picture, for orientation (U = usable size, P = page size):
//
//	0 or 100      b-tree page header (8 bytes on leaves, 12 on interior pages)
//	then          cell pointer array, 2 bytes per cell, in key order
//	then          unallocated gap
//	contentStart  cells, freeblocks and fragments, in any physical order
//	U .. P-1      reserved bytes
package format
