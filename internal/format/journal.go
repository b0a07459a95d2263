package format

import (
	"encoding/binary"
)

// The rollback journal (<db>-journal), as sqlite3's pager plays a hot one
// back (pager.c: pager_playback, readJournalHdr, pager_playback_one_page,
// readSuperJournal). Integers are big-endian.
//
// A journal is a run of segments. Each starts with a header at a multiple
// of the sector size, padded to one sector:
//
//	OFFSET SIZE FIELD
//	     0    8 magic d9 d5 05 f9 20 a1 63 d7
//	     8    4 nRec: records in the segment; 0xFFFFFFFF: up to the end
//	    12    4 nonce: the segment's checksum initializer
//	    16    4 database size in pages before the transaction
//	    20    4 sector size (first header only)
//	    24    4 page size (first header only; 0: the database's)
//
// and nRec page records follow it:
//
//	pgno (4) | the page as it was (page size) | checksum (4)
//
// where the checksum is the nonce plus the page's bytes at page size -200,
// -400, ... while the offset is positive. A multi-database transaction
// ends the journal with the name of its super-journal:
//
//	lock-byte page number (4) | name (n) | n (4) | checksum of name (4) | magic (8)
const (
	journalHdrNRec       = 8
	journalHdrNonce      = 12
	journalHdrDBSize     = 16
	journalHdrSectorSize = 20
	journalHdrPageSize   = 24
	// JournalHeaderSize is the bytes of a header that hold fields; the
	// header fills its sector.
	JournalHeaderSize = 28
	// journalRecordExtra is a record's bytes besides the page: its page
	// number and checksum.
	journalRecordExtra = 8
	// journalNRecToEnd is nRec for "records up to the end of the file"
	// (a journal written without syncs).
	journalNRecToEnd = 0xFFFFFFFF
	// journalMaxSector is sqlite3's MAX_SECTOR_SIZE.
	journalMaxSector = 0x10000
	// journalFirstSector is the sector size sqlite3's pager assumes
	// before it reads the first header (setSectorSize: unix files
	// report powersafe overwrite, which makes it 512): a journal shorter
	// than that has no first header for it, and the header's own sector
	// size counts only from the second one on.
	journalFirstSector = 512
	// journalSuperTrailer is the super-journal name's length, checksum and
	// magic at the end of the journal.
	journalSuperTrailer = 16
)

// JournalMagic opens every journal header.
var JournalMagic = [8]byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}

// JournalPage is a page as it was before the journal's transaction.
type JournalPage struct {
	Pgno uint32
	Data []byte // a view of the journal's bytes
}

// Journal is what a hot journal restores.
type Journal struct {
	// PageSize is the page size of the records (the first header's).
	PageSize int
	// DBPages is the database's size in pages before the transaction:
	// the file is truncated to it.
	DBPages uint32
	// Pages are the records to write back, in journal order: those of
	// the valid prefix, less pages past DBPages (which the truncation
	// drops).
	Pages []JournalPage
	// Super is the name of the super-journal of a transaction over
	// several databases, "" if none. When it names a file that does not
	// exist, the transaction committed: nothing is played back.
	Super string
}

// ParseJournal reads journal b as sqlite3 plays a hot journal back, with
// dbPageSize the database file's page size (used where the first header
// says 0). ok is false when b holds no valid first header: a journal
// shorter than 512 bytes, a wrong magic, or a page or sector size out of
// range. sqlite3 (readJournalHdr) takes such a header for one that was
// never synced, so the file was never written either: there is nothing to
// play back, not even the truncation, and it deletes the journal. Records
// stop at the first one that is incomplete, has page number 0 or the
// lock-byte page's, or fails its checksum, as sqlite3's do: what follows
// was never synced.
func ParseJournal(b []byte, dbPageSize int) (j Journal, ok bool) {
	if len(b) < journalFirstSector || [8]byte(b[:8]) != JournalMagic {
		return Journal{}, false
	}
	sector := int64(binary.BigEndian.Uint32(b[journalHdrSectorSize:]))
	pageSize := int64(binary.BigEndian.Uint32(b[journalHdrPageSize:]))
	if pageSize == 0 {
		pageSize = int64(dbPageSize)
	}
	if pageSize < MinPageSize || pageSize > MaxPageSize || pageSize&(pageSize-1) != 0 ||
		sector < 32 || sector > journalMaxSector || sector&(sector-1) != 0 {
		return Journal{}, false
	}
	j.PageSize = int(pageSize)
	j.DBPages = binary.BigEndian.Uint32(b[journalHdrDBSize:])
	j.Super = journalSuper(b)
	size := int64(len(b))
	recSize := pageSize + journalRecordExtra
	lockPage := LockBytePage(int(pageSize))
	for off := int64(0); ; {
		// The next header starts at the next sector boundary.
		off = (off + sector - 1) / sector * sector
		if off > 0 && (off+sector > size || [8]byte(b[off:off+8]) != JournalMagic) {
			return j, true
		}
		nRec := int64(binary.BigEndian.Uint32(b[off+journalHdrNRec:]))
		nonce := binary.BigEndian.Uint32(b[off+journalHdrNonce:])
		off += sector
		if nRec == journalNRecToEnd {
			nRec = (size - off) / recSize
		}
		for range nRec {
			if off+recSize > size {
				return j, true // a short read ends the playback
			}
			pgno := binary.BigEndian.Uint32(b[off:])
			page := b[off+4 : off+4+pageSize : off+4+pageSize]
			sum := binary.BigEndian.Uint32(b[off+4+pageSize:])
			off += recSize
			if pgno == 0 || pgno == lockPage {
				return j, true
			}
			if pgno > j.DBPages {
				continue // truncated away, its checksum unread (as sqlite3)
			}
			if journalChecksum(page, nonce) != sum {
				return j, true
			}
			j.Pages = append(j.Pages, JournalPage{Pgno: pgno, Data: page})
		}
	}
}

// journalChecksum is a record's checksum of page.
func journalChecksum(page []byte, nonce uint32) uint32 {
	sum := nonce
	for i := len(page) - 200; i > 0; i -= 200 {
		sum += uint32(page[i])
	}
	return sum
}

// journalSuper returns the super-journal name that ends journal b, or ""
// when there is none or it is not valid, as SQLite 3.54's readSuperJournal
// has it (the transaction is then rolled back): a length of 1 to
// journalMaxSuperName bytes, the checksum (the name's bytes subtracted as
// C's signed chars, as sqlite3 added them), the magic, and a name of the
// form sqlite3 gives super-journals (isSuperJournalName). The name is read
// as a C string: up to its first NUL.
func journalSuper(b []byte) string {
	n := int64(len(b))
	if n < journalSuperTrailer || [8]byte(b[n-8:]) != JournalMagic {
		return ""
	}
	l := int64(binary.BigEndian.Uint32(b[n-16:]))
	if l == 0 || l > n-journalSuperTrailer || l >= journalMaxSuperName {
		return ""
	}
	sum := binary.BigEndian.Uint32(b[n-12:])
	name := b[n-16-l : n-16]
	for _, c := range name {
		sum -= uint32(int32(int8(c)))
	}
	if sum != 0 {
		return ""
	}
	for i, c := range name {
		if c == 0 {
			name = name[:i]
			break
		}
	}
	if !isSuperJournalName(name) {
		return ""
	}
	return string(name)
}

// journalMaxSuperName bounds a super-journal name's length: unix's
// mxPathname (512) and its NUL.
const journalMaxSuperName = 512 + 1

// isSuperJournalName reports whether name has the form of the
// super-journals sqlite3 makes (pager.c: pagerIsSuperJrnlName): "-mj" and
// nine hex digits at its end, the third last being '9'. SQLite 3.54 takes
// any other name for a damaged record, which the rollback ignores.
func isSuperJournalName(name []byte) bool {
	n := len(name)
	if n < 12 || string(name[n-12:n-9]) != "-mj" || name[n-3] != '9' {
		return false
	}
	for _, c := range name[n-9:] {
		if !isHexDigit(c) {
			return false
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// The writer's side, as sqlite3's pager writes a journal (pager.c:
// writeJournalHdr, pagerAddPageToRollbackJournal, syncJournal).

// JournalSectorSize is the sector size sqlite3's pager writes journals with
// on unix (setSectorSize: 512 where files report powersafe overwrite): the
// first header fills that many bytes.
const JournalSectorSize = journalFirstSector

// JournalNRecToEnd is the record count of a header written final at once,
// without syncs (writeJournalHdr under synchronous=OFF): the records run to
// the end of the file.
const JournalNRecToEnd = journalNRecToEnd

// JournalRecordSize is the bytes of one record of a page of pageSize bytes.
func JournalRecordSize(pageSize int) int { return pageSize + journalRecordExtra }

// PutJournalHeader writes the first header of a journal into hdr
// (JournalSectorSize bytes): the nonce, the database's size in pages
// before the transaction, the sector and page sizes, and zeros elsewhere.
// The magic and the record count stay zero, as writeJournalHdr leaves them
// when the journal is synced: until PutJournalCount writes them, no
// rollback takes the journal for one to play.
func PutJournalHeader(hdr []byte, nonce, dbPages uint32, pageSize int) {
	_ = hdr[JournalSectorSize-1]
	clear(hdr[:JournalSectorSize])
	binary.BigEndian.PutUint32(hdr[journalHdrNonce:], nonce)
	binary.BigEndian.PutUint32(hdr[journalHdrDBSize:], dbPages)
	binary.BigEndian.PutUint32(hdr[journalHdrSectorSize:], JournalSectorSize)
	binary.BigEndian.PutUint32(hdr[journalHdrPageSize:], uint32(pageSize))
}

// PutJournalCount writes the magic and the record count nRec into the
// first 12 bytes of a header (syncJournal's zHeader), which make the
// journal one a rollback plays.
func PutJournalCount(b []byte, nRec uint32) {
	_ = b[journalHdrNonce-1]
	copy(b, JournalMagic[:])
	binary.BigEndian.PutUint32(b[journalHdrNRec:], nRec)
}

// PutJournalRecord writes the record of page pgno, whose content before the
// transaction is page, into b (JournalRecordSize(len(page)) bytes), its
// checksum started from the header's nonce.
func PutJournalRecord(b []byte, pgno uint32, page []byte, nonce uint32) {
	n := len(page)
	_ = b[n+journalRecordExtra-1]
	binary.BigEndian.PutUint32(b, pgno)
	copy(b[4:], page)
	binary.BigEndian.PutUint32(b[4+n:], journalChecksum(page, nonce))
}
