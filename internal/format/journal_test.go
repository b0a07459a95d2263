package format

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// journalBuilder writes rollback journals as sqlite3's pager lays them out.
type journalBuilder struct {
	b                  []byte
	pageSize, sector   int
	dbPages            uint32
	nonce              uint32
	countOff, nRecords int
}

func newJournal(pageSize, sector int, dbPages uint32) *journalBuilder {
	return &journalBuilder{pageSize: pageSize, sector: sector, dbPages: dbPages, countOff: -1}
}

// segment starts a segment whose header counts the records added after it.
func (j *journalBuilder) segment(nonce uint32) {
	j.end()
	for len(j.b)%j.sector != 0 {
		j.b = append(j.b, 0)
	}
	h := make([]byte, j.sector)
	copy(h, JournalMagic[:])
	binary.BigEndian.PutUint32(h[journalHdrNonce:], nonce)
	binary.BigEndian.PutUint32(h[journalHdrDBSize:], j.dbPages)
	binary.BigEndian.PutUint32(h[journalHdrSectorSize:], uint32(j.sector))
	binary.BigEndian.PutUint32(h[journalHdrPageSize:], uint32(j.pageSize))
	j.countOff, j.nRecords, j.nonce = len(j.b)+journalHdrNRec, 0, nonce
	j.b = append(j.b, h...)
}

func (j *journalBuilder) end() {
	if j.countOff >= 0 {
		binary.BigEndian.PutUint32(j.b[j.countOff:], uint32(j.nRecords))
	}
}

// record appends page pgno filled with fill, with its right checksum.
func (j *journalBuilder) record(pgno uint32, fill byte) []byte {
	page := bytes.Repeat([]byte{fill}, j.pageSize)
	page[j.pageSize-200] = fill + 1 // a byte the checksum reads
	j.b = binary.BigEndian.AppendUint32(j.b, pgno)
	j.b = append(j.b, page...)
	j.b = binary.BigEndian.AppendUint32(j.b, journalChecksum(page, j.nonce))
	j.nRecords++
	return page
}

func (j *journalBuilder) bytes() []byte {
	j.end()
	return j.b
}

func TestParseJournal(t *testing.T) {
	const ps, sector = 1024, 512
	j := newJournal(ps, sector, 10)
	j.segment(7)
	p3 := j.record(3, 0xa3)
	p1 := j.record(1, 0xa1)
	j.segment(99)      // a second segment, with its own nonce
	j.record(12, 0xbb) // past the original size: skipped
	p5 := j.record(5, 0xa5)
	full := j.bytes()

	got, ok := ParseJournal(full, ps)
	if !ok {
		t.Fatal("ParseJournal: not ok")
	}
	if got.PageSize != ps || got.DBPages != 10 || got.Super != "" {
		t.Fatalf("got page size %d, %d pages, super %q", got.PageSize, got.DBPages, got.Super)
	}
	want := []JournalPage{{3, p3}, {1, p1}, {5, p5}}
	if len(got.Pages) != len(want) {
		t.Fatalf("%d pages, want %d", len(got.Pages), len(want))
	}
	for i, w := range want {
		if got.Pages[i].Pgno != w.Pgno || !bytes.Equal(got.Pages[i].Data, w.Data) {
			t.Errorf("page %d: %d, want %d", i, got.Pages[i].Pgno, w.Pgno)
		}
	}

	recSize := ps + journalRecordExtra
	pagesOf := func(b []byte) []uint32 {
		t.Helper()
		j, ok := ParseJournal(b, ps)
		if !ok {
			t.Fatal("ParseJournal: not ok")
		}
		var out []uint32
		for _, p := range j.Pages {
			out = append(out, p.Pgno)
		}
		return out
	}
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(full)) }
	cases := []struct {
		name string
		b    []byte
		want []uint32
	}{
		{"whole", full, []uint32{3, 1, 5}},
		{"torn last record", full[:len(full)-10], []uint32{3, 1}},
		{"bad checksum stops", edit(func(b []byte) []byte { b[sector+recSize+4+ps-200]++; return b }), []uint32{3}},
		{"page 0 stops", edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[sector+recSize:], 0); return b }), []uint32{3}},
		{"lock-byte page stops", edit(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[sector:], LockBytePage(ps))
			return b
		}), nil},
		{"second header zeroed", edit(func(b []byte) []byte {
			h := (sector + 2*recSize + sector - 1) / sector * sector // the next sector boundary
			clear(b[h : h+8])
			return b
		}), []uint32{3, 1}},
		{"count to the end", edit(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[journalHdrNRec:], 0xFFFFFFFF)
			return b[:sector+2*recSize]
		}), []uint32{3, 1}},
		{"count 0", edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[journalHdrNRec:], 0); return b }), nil},
	}
	for _, c := range cases {
		if got := pagesOf(c.b); !equalU32(got, c.want) {
			t.Errorf("%s: pages %v, want %v", c.name, got, c.want)
		}
	}

	// Not a journal to play: no first header as sqlite3 reads one. It
	// deletes such a journal without truncating the file.
	short := edit(func(b []byte) []byte { return b[:journalFirstSector-1] })
	notPlayed := [][]byte{nil, {1, 2, 3}, make([]byte, 600), edit(func(b []byte) []byte { b[0] ^= 1; return b }), short}
	// A first header with a bad page or sector size was never synced.
	for _, off := range []int{journalHdrPageSize, journalHdrSectorSize} {
		for _, v := range []uint32{1000, 16, 1 << 17} {
			notPlayed = append(notPlayed, edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[off:], v); return b }))
		}
	}
	for i, b := range notPlayed {
		if j, ok := ParseJournal(b, ps); ok || len(j.Pages) != 0 {
			t.Errorf("journal %d (%d bytes): ok %v, %d pages; want not ok", i, len(b), ok, len(j.Pages))
		}
	}
	// 512 bytes are a first header even where the header's sector is
	// larger: the truncation is played, and there are no records.
	big := edit(func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[journalHdrSectorSize:], 4096)
		return b[:journalFirstSector]
	})
	if j, ok := ParseJournal(big, ps); !ok || len(j.Pages) != 0 || j.DBPages != 10 {
		t.Errorf("512 bytes of a 4096-byte sector: ok %v, %d pages, size %d; want ok, 0 pages, size 10", ok, len(j.Pages), j.DBPages)
	}
	// Page size 0 is the database's.
	b := edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[journalHdrPageSize:], 0); return b })
	if got := pagesOf(b); !equalU32(got, []uint32{3, 1, 5}) {
		t.Errorf("page size 0: %v", got)
	}
}

func TestJournalSuper(t *testing.T) {
	j := newJournal(512, 512, 4)
	j.segment(1)
	j.record(2, 9)
	base := j.bytes()
	// trailer is the super-journal record of name, its checksum off by
	// sumDelta; signed sums the bytes as C's signed chars, as sqlite3 does.
	trailer := func(name string, sumDelta uint32, signed bool) []byte {
		b := binary.BigEndian.AppendUint32(nil, LockBytePage(512))
		b = append(b, name...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(name)))
		var sum uint32
		for _, c := range []byte(name) {
			if signed {
				sum += uint32(int32(int8(c)))
			} else {
				sum += uint32(c)
			}
		}
		b = binary.BigEndian.AppendUint32(b, sum+sumDelta)
		return append(b, JournalMagic[:]...)
	}
	const valid = "/tmp/db-mj01234A9BC"
	for _, c := range []struct {
		name, want string
		tail       []byte
	}{
		{"none", "", nil},
		{"named", valid, trailer(valid, 0, true)},
		{"NUL-terminated", valid, trailer(valid+"\x00\x00", 0, true)},
		{"bad checksum", "", trailer(valid, 1, true)},
		{"non-ASCII, signed checksum", "/tmp/\u00e9-mj0123459ab", trailer("/tmp/\u00e9-mj0123459ab", 0, true)},
		{"non-ASCII, unsigned checksum", "", trailer("/tmp/\u00e9-mj0123459ab", 0, false)},
		// SQLite 3.54 takes a name of another form for a damaged record.
		{"not a super-journal's name", "", trailer("/tmp/x", 0, true)},
		{"no -mj", "", trailer("/tmp/db-xx01234A9BC", 0, true)},
		{"third last not 9", "", trailer("/tmp/db-mj01234A8BC", 0, true)},
		{"not hex", "", trailer("/tmp/db-mj01234G9BC", 0, true)},
		{"too long", "", trailer("/"+strings.Repeat("d", 600)+"-mj01234A9BC", 0, true)},
	} {
		j, ok := ParseJournal(append(bytes.Clone(base), c.tail...), 512)
		if !ok || j.Super != c.want || len(j.Pages) != 1 {
			t.Errorf("%s: super %q, %d pages, %v; want %q", c.name, j.Super, len(j.Pages), ok, c.want)
		}
	}
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzParseJournal: any bytes parse without a panic into pages that a
// playback may write: numbered within the original size, never 0 or the
// lock-byte page, each a whole page.
func FuzzParseJournal(f *testing.F) {
	j := newJournal(512, 512, 6)
	j.segment(5)
	j.record(2, 1)
	j.record(4, 2)
	j.segment(6)
	j.record(1, 3)
	f.Add(j.bytes(), 512)
	f.Add([]byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}, 4096)
	f.Fuzz(func(t *testing.T, b []byte, dbPageSize int) {
		j, ok := ParseJournal(b, dbPageSize)
		if !ok {
			if len(j.Pages) != 0 {
				t.Fatal("pages from a journal that is not played")
			}
			return
		}
		if !ValidPageSize(j.PageSize) {
			t.Fatalf("page size %d", j.PageSize)
		}
		for _, p := range j.Pages {
			if p.Pgno == 0 || p.Pgno > j.DBPages || p.Pgno == LockBytePage(j.PageSize) || len(p.Data) != j.PageSize {
				t.Fatalf("page %d of %d bytes (size %d, %d pages)", p.Pgno, len(p.Data), j.PageSize, j.DBPages)
			}
		}
	})
}

// TestJournalWriter: a journal written by PutJournalHeader, PutJournalRecord
// and PutJournalCount is byte for byte the builder's (sqlite3's layout), and
// ParseJournal plays it back; before the count is written it is no journal
// to play, as sqlite3's is not between writeJournalHdr and syncJournal.
func TestJournalWriter(t *testing.T) {
	for _, ps := range []int{512, 4096, 65536} {
		ref := newJournal(ps, JournalSectorSize, 7)
		ref.segment(0xdeadbeef)
		var pages [][]byte
		for i, pg := range []uint32{3, 1, 7} {
			pages = append(pages, ref.record(pg, byte(i+1)))
		}
		want := ref.bytes()

		got := make([]byte, JournalSectorSize+3*JournalRecordSize(ps))
		PutJournalHeader(got, 0xdeadbeef, 7, ps)
		for i, pg := range []uint32{3, 1, 7} {
			off := JournalSectorSize + i*JournalRecordSize(ps)
			PutJournalRecord(got[off:off+JournalRecordSize(ps)], pg, pages[i], 0xdeadbeef)
		}
		if _, ok := ParseJournal(got, ps); ok {
			t.Fatalf("page size %d: a journal without its count parses", ps)
		}
		PutJournalCount(got, 3)
		if !bytes.Equal(got, want) {
			t.Fatalf("page size %d: the written journal differs from sqlite3's layout", ps)
		}
		j, ok := ParseJournal(got, ps)
		if !ok || j.DBPages != 7 || j.PageSize != ps || len(j.Pages) != 3 {
			t.Fatalf("page size %d: parsed %+v, ok %v", ps, j, ok)
		}
		for i, p := range j.Pages {
			if !bytes.Equal(p.Data, pages[i]) {
				t.Fatalf("page size %d: record %d differs", ps, i)
			}
		}
		PutJournalCount(got, JournalNRecToEnd)
		if j, ok := ParseJournal(got, ps); !ok || len(j.Pages) != 3 {
			t.Fatalf("page size %d: count to the end: %d pages, ok %v", ps, len(j.Pages), ok)
		}
	}
}
