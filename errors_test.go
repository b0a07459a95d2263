package pagoda_test

// The corrupt-file corpus: valid files made by SQLite, damaged in code
// (truncated, bit-flipped, zeroed pages, wrong header fields, cyclic
// overflow chains and trees, page kinds swapped, bad schema rows). For
// every variant pagoda must not panic or hang, and every error it returns
// must wrap ErrCorrupt or ErrUnsupported (or ErrNotFound where a lookup of
// something a scan listed legitimately misses in a tree whose order the
// damage broke). Deliberate structural damage must be reported as
// ErrCorrupt, naming the page where the damage is page-specific.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// ---------------------------------------------------------------------------
// Base files

type baseFile struct {
	name     string
	pageSize int
	data     []byte
	pages    []pagoda.PageInfo // as pagoda describes the valid file
	objects  []pagoda.Object
}

func (b *baseFile) npages() uint32 { return uint32(len(b.data) / b.pageSize) }

func (b *baseFile) page(data []byte, pgno uint32) []byte {
	return data[int(pgno-1)*b.pageSize : int(pgno)*b.pageSize]
}

func (b *baseFile) root(name string) uint32 {
	for _, o := range b.objects {
		if o.Name == name {
			return o.RootPage
		}
	}
	return 0
}

var (
	basesOnce sync.Once
	bases     []*baseFile
	basesErr  error
)

// baseStmts builds a file with a rowid table whose rows overflow, a
// multi-column index with long keys (deep, with overflowing interior
// cells), a WITHOUT ROWID table, a bucket, a small table without index,
// and a freelist. rows scales it.
func baseStmts(pageSize, rows int) []string {
	bodyLen := 3 * pageSize
	s := []string{
		fmt.Sprintf("PRAGMA page_size=%d", pageSize),
		"CREATE TABLE t1(id INTEGER PRIMARY KEY, name TEXT, body BLOB, r REAL)",
		"CREATE INDEX t1_name ON t1(name COLLATE NOCASE DESC, r)",
		"CREATE TABLE w(k TEXT, n INT, v, PRIMARY KEY(n, k DESC)) WITHOUT ROWID",
		"CREATE INDEX w_v ON w(v)",
		`CREATE TABLE "b"(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`,
		"CREATE TABLE plain(x, y)",
		"BEGIN",
		fmt.Sprintf(`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < %d)
			INSERT INTO t1(name, body, r) SELECT
				printf('%%s-%%d', substr('Name of a row, long enough to fill index pages quickly and some more', 1, 20 + (i*7) %% 50), i)
					|| CASE WHEN i %% 17 = 0 THEN zeroblob(%d) ELSE '' END,
				CASE WHEN i %% 5 = 0 THEN randomblob(%d) ELSE randomblob(i %% 40) END,
				i * 0.5
			FROM c`, rows, pageSize/2, bodyLen),
		fmt.Sprintf(`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < %d)
			INSERT INTO w SELECT 'key ' || i, i %% 7, CASE i %% 3 WHEN 0 THEN i WHEN 1 THEN 'v' || i ELSE NULL END FROM c`, rows/2),
		fmt.Sprintf(`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < %d)
			INSERT INTO "b" SELECT randomblob(4 + i %% 20), CASE WHEN i %% 9 = 0 THEN randomblob(%d) ELSE randomblob(i %% 50) END FROM c`, rows/2, 2*pageSize),
		"INSERT INTO plain VALUES (1, 'one'), (2, 'two'), (3, x'03')",
		"COMMIT",
		"DELETE FROM t1 WHERE id % 3 = 0",
		`DELETE FROM "b" WHERE length(value) % 4 = 1`,
	}
	return s
}

func loadBases(t testing.TB) []*baseFile {
	t.Helper()
	basesOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pagoda-corrupt-bases")
		if err != nil {
			basesErr = err
			return
		}
		defer os.RemoveAll(dir)
		for _, spec := range []struct {
			name           string
			pageSize, rows int
		}{
			{"small512", 512, 8},
			{"deep512", 512, 400},
			{"std4096", 4096, 300},
		} {
			path := filepath.Join(dir, spec.name+".db")
			sqltest.Exec(t, path, baseStmts(spec.pageSize, spec.rows)...)
			b := &baseFile{name: spec.name, pageSize: spec.pageSize}
			if b.data, err = os.ReadFile(path); err != nil {
				basesErr = err
				return
			}
			db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
			if err != nil {
				basesErr = fmt.Errorf("%s: pagoda cannot open the valid file: %w", spec.name, err)
				return
			}
			err = db.View(func(tx *pagoda.Tx) error {
				b.objects = tx.Objects()
				var err error
				b.pages, err = tx.Pages()
				return err
			})
			db.Close()
			if err != nil {
				basesErr = fmt.Errorf("%s: pagoda reads the valid file with an error: %w", spec.name, err)
				return
			}
			bases = append(bases, b)
		}
	})
	if basesErr != nil {
		t.Fatal(basesErr)
	}
	return bases
}

// ---------------------------------------------------------------------------
// The full read

type opErr struct {
	op, obj string
	err     error
}

func (e opErr) String() string { return fmt.Sprintf("%s(%s): %v", e.op, e.obj, e.err) }

type readReport struct {
	errs     []opErr
	panicked string // the panic value and stack
	timedOut bool
	rows     int
}

// maxSteps bounds every iteration: a cursor that keeps producing entries
// from a cyclic file is a hang too.
const maxSteps = 1 << 20

// fullRead opens path and reads everything there is: every table (All, a
// cursor both ways, Count, Get of listed rows), every index (cursor, Count,
// Prefix), every bucket (All, Get of listed keys), and Tx.Pages.
func fullRead(path string) (rep *readReport) {
	rep = &readReport{}
	defer func() {
		if p := recover(); p != nil {
			rep.panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
		}
	}()
	add := func(op, obj string, err error) {
		if err != nil {
			rep.errs = append(rep.errs, opErr{op, obj, err})
		}
	}
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		add("Open", "", err)
		return rep
	}
	defer db.Close()
	tx, err := db.Begin(false)
	if err != nil {
		add("Begin", "", err)
		return rep
	}
	defer tx.Rollback()
	_, err = tx.Header()
	add("Header", "", err)
	_, err = tx.Pages()
	add("Pages", "", err)

	touch := func(rec pagoda.Record) {
		for i := 0; i < rec.Len(); i++ {
			v := rec.Column(i)
			_ = v.Any()
			_ = v.String()
			_ = rec.Name(i)
		}
		rep.rows++
	}
	for _, name := range tx.TableNames() {
		tb, err := tx.Table(name)
		if err != nil {
			add("Table", name, err)
			continue
		}
		_, err = tb.Count()
		add("Count", name, err)
		n := 0
		before := tx.Err()
		for _, rec := range tb.All() {
			touch(rec)
			if n++; n > maxSteps {
				add("All", name, fmt.Errorf("HANG: more than %d rows", maxSteps))
				break
			}
		}
		if err := tx.Err(); err != before {
			add("All", name, err)
		}
		c := tb.Cursor()
		var rowids []int64
		var keys [][]any
		n = 0
		for ok := c.First(); ok && n <= maxSteps; ok = c.Next() {
			n++
			if len(rowids) < 64 {
				rowids = append(rowids, c.Rowid())
			}
			if tb.WithoutRowID() && len(keys) < 16 {
				// The first column of the key is enough for a prefix seek.
				keys = append(keys, []any{c.Record().Column(0).Any()})
			}
		}
		if n > maxSteps {
			add("Cursor.Next", name, fmt.Errorf("HANG: more than %d rows", maxSteps))
		}
		add("Cursor.Next", name, c.Err())
		n = 0
		for ok := c.Last(); ok && n <= maxSteps; ok = c.Prev() {
			n++
			touch(c.Record())
		}
		if n > maxSteps {
			add("Cursor.Prev", name, fmt.Errorf("HANG: more than %d rows", maxSteps))
		}
		add("Cursor.Prev", name, c.Err())
		if !tb.WithoutRowID() {
			for _, id := range rowids {
				_, err := tb.Get(id)
				add("Get-listed", name, err)
			}
			c := tb.Cursor()
			c.SeekRowid(middleRowid(rowids))
			add("SeekRowid", name, c.Err())
		} else {
			for _, k := range keys {
				c := tb.Cursor()
				c.SeekKey(k...)
				add("SeekKey", name, c.Err())
			}
		}
		for _, ixName := range tb.Indexes() {
			readIndex(tx, ixName, add, touch)
		}
		if tb.IsBucket() {
			b, err := tx.Bucket(name)
			if err != nil {
				add("Bucket", name, err)
				continue
			}
			var ks [][]byte
			n := 0
			before := tx.Err()
			for k, v := range b.All() {
				_ = v
				if len(ks) < 64 {
					ks = append(ks, slices.Clone(k))
				}
				if n++; n > maxSteps {
					add("Bucket.All", name, fmt.Errorf("HANG: more than %d keys", maxSteps))
					break
				}
			}
			if err := tx.Err(); err != before {
				add("Bucket.All", name, err)
			}
			for _, k := range ks {
				_, err := b.Get(k)
				add("Bucket.Get-listed", name, err)
			}
			_, err = b.Get([]byte("surely not a key \xff"))
			if !errors.Is(err, pagoda.ErrNotFound) {
				add("Bucket.Get-missing", name, err)
			}
		}
	}
	// Indexes whose table could not be read are still opened.
	for _, o := range tx.Objects() {
		if o.Type == "index" {
			if _, err := tx.Index(o.Name); err != nil {
				add("Index", o.Name, err)
			}
		}
	}
	return rep
}

func middleRowid(ids []int64) int64 {
	if len(ids) == 0 {
		return 0
	}
	return ids[len(ids)/2]
}

func readIndex(tx *pagoda.Tx, name string, add func(op, obj string, err error), touch func(pagoda.Record)) {
	ix, err := tx.Index(name)
	if err != nil {
		add("Index", name, err)
		return
	}
	_, err = ix.Count()
	add("Index.Count", name, err)
	c := ix.Cursor()
	var first []any
	n := 0
	for ok := c.First(); ok && n <= maxSteps; ok = c.Next() {
		n++
		touch(c.Key())
		if first == nil && c.Key().Len() > 0 {
			first = []any{c.Key().Column(0).Any()}
		}
	}
	if n > maxSteps {
		add("Index.Next", name, fmt.Errorf("HANG: more than %d entries", maxSteps))
	}
	add("Index.Next", name, c.Err())
	n = 0
	for ok := c.Last(); ok && n <= maxSteps; ok = c.Prev() {
		n++
	}
	add("Index.Prev", name, c.Err())
	if first != nil {
		n = 0
		for _, rec := range ix.Prefix(first...) {
			touch(rec)
			if n++; n > maxSteps {
				add("Index.Prefix", name, fmt.Errorf("HANG: more than %d entries", maxSteps))
				break
			}
		}
	}
}

// readWithTimeout runs fullRead in a goroutine: a variant that hangs fails
// instead of stalling the test binary.
func readWithTimeout(path string, d time.Duration) *readReport {
	done := make(chan *readReport, 1)
	go func() { done <- fullRead(path) }()
	select {
	case rep := <-done:
		return rep
	case <-time.After(d):
		return &readReport{timedOut: true}
	}
}

// allowedErr says whether err is an error pagoda may return for a damaged
// file: ErrCorrupt or ErrUnsupported; ErrNotFound only from a lookup of a
// row or key that a scan of the same tree listed, since damage that breaks
// the order of keys legitimately makes a search miss an entry a scan sees.
func allowedErr(e opErr) bool {
	if errors.Is(e.err, pagoda.ErrCorrupt) || errors.Is(e.err, pagoda.ErrUnsupported) {
		return true
	}
	return strings.HasSuffix(e.op, "-listed") && errors.Is(e.err, pagoda.ErrNotFound)
}

// ---------------------------------------------------------------------------
// Variants

type variant struct {
	name string
	data []byte
	// wantCorrupt: some error of the full read must wrap ErrCorrupt.
	wantCorrupt bool
	// wantPage: ... and a *CorruptError in some error names a page (nonzero).
	wantPage bool
	// wantPageNo: ... and names this page, the damaged one.
	wantPageNo uint32
	// wantErrIs: some error must wrap this instead (e.g. ErrUnsupported).
	wantErrIs error
	// onlyObject: errors may come only from operations on this object, and
	// one must (a bad schema row breaks that object only).
	onlyObject string
	// wantClean: the edit is no damage (sqlite3 reads the file without
	// complaint), so the full read must return no error at all.
	wantClean bool
}

func clone(b []byte) []byte { return slices.Clone(b) }

// btreeHdr returns the offset of a b-tree page's header in the page.
func btreeHdr(pgno uint32) int {
	if pgno == 1 {
		return 100
	}
	return 0
}

// rawChildren returns the child page numbers of an interior page with the
// offsets (in the page) where they are stored; the right child is last.
func rawChildren(page []byte, pgno uint32) (children []uint32, offs []int) {
	h := btreeHdr(pgno)
	typ := page[h]
	if typ != 2 && typ != 5 {
		return nil, nil
	}
	n := int(binary.BigEndian.Uint16(page[h+3:]))
	for i := 0; i < n; i++ {
		cp := int(binary.BigEndian.Uint16(page[h+12+2*i:]))
		if cp+4 > len(page) {
			return nil, nil
		}
		children = append(children, binary.BigEndian.Uint32(page[cp:]))
		offs = append(offs, cp)
	}
	children = append(children, binary.BigEndian.Uint32(page[h+8:]))
	offs = append(offs, h+8)
	return children, offs
}

func put32(b []byte, off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }

func (b *baseFile) pagesOf(kind, owner string) []uint32 {
	var out []uint32
	for _, p := range b.pages {
		if p.Kind == kind && (owner == "" || p.Owner == owner) {
			out = append(out, p.Pgno)
		}
	}
	return out
}

// overflowChains returns the base's overflow chains, each in chain order,
// read from the raw pages (a chain's head is the page no other overflow
// page points to).
func (b *baseFile) overflowChains() [][]uint32 {
	ovf := b.pagesOf("overflow", "")
	next := map[uint32]uint32{}
	pointed := map[uint32]bool{}
	for _, p := range ovf {
		n := binary.BigEndian.Uint32(b.page(b.data, p))
		next[p] = n
		if n != 0 {
			pointed[n] = true
		}
	}
	var chains [][]uint32
	for _, p := range ovf {
		if pointed[p] {
			continue
		}
		var c []uint32
		for q := p; q != 0 && len(c) <= len(ovf); q = next[q] {
			c = append(c, q)
		}
		chains = append(chains, c)
	}
	return chains
}

// editSchema applies SQL to a copy of the base through SQLite with
// writable_schema, the way a buggy tool would damage sqlite_schema.
func editSchema(t *testing.T, b *baseFile, stmts ...string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edit.db")
	if err := os.WriteFile(path, b.data, 0o644); err != nil {
		t.Fatal(err)
	}
	sqltest.Exec(t, path, append([]string{"PRAGMA writable_schema=ON"}, stmts...)...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// structuralVariants derives the deliberate damages from base b.
func structuralVariants(t *testing.T, b *baseFile) []variant {
	t.Helper()
	ps := b.pageSize
	n := b.npages()
	var vs []variant
	addV := func(v variant) {
		v.name = b.name + "/" + v.name
		vs = append(vs, v)
	}

	// Truncation: inside the header, inside page 1, at and around page
	// boundaries, mid-file, one byte short.
	for _, off := range []int{1, 16, 50, 99, 100, 101, ps / 2, ps - 1, ps, ps + 1, 2*ps + 7, len(b.data) / 2, len(b.data) - ps, len(b.data) - 1} {
		if off <= 0 || off >= len(b.data) {
			continue
		}
		addV(variant{name: fmt.Sprintf("truncate@%d", off), data: clone(b.data[:off]), wantCorrupt: true})
	}

	// Zeroed pages. A zeroed b-tree page has page type 0; a zeroed
	// overflow page ends its chain early unless it is the chain's last
	// page; a zeroed freelist trunk loses its leaves. A freelist leaf's
	// content is meaningless, so zeroing it is no damage at all.
	lastOvf := map[uint32]bool{}
	for _, c := range b.overflowChains() {
		lastOvf[c[len(c)-1]] = true
	}
	for _, p := range b.pages {
		d := clone(b.data)
		clear(b.page(d, p.Pgno))
		v := variant{name: fmt.Sprintf("zero-page-%d(%s %s)", p.Pgno, p.Kind, p.Owner), data: d}
		switch {
		case p.Kind == "freelist leaf":
			v.wantClean = true
		case p.Kind == "overflow" && lastOvf[p.Pgno]:
			// Only content changes.
		case p.Kind == "freelist trunk":
			// Seen as a freelist shorter than the header's count.
			v.wantCorrupt, v.wantPage = true, true
		default:
			v.wantCorrupt, v.wantPage, v.wantPageNo = true, true, p.Pgno
		}
		addV(v)
	}

	// Header fields.
	hdr := func(name string, wantCorrupt bool, wantErr error, f func(h []byte)) {
		d := clone(b.data)
		f(d[:100])
		addV(variant{name: "header-" + name, data: d, wantCorrupt: wantCorrupt, wantPage: wantCorrupt, wantErrIs: wantErr})
	}
	hdr("magic", true, nil, func(h []byte) { h[0] = 'X' })
	hdr("page-size-1000", true, nil, func(h []byte) { binary.BigEndian.PutUint16(h[16:], 1000) })
	hdr("page-size-256", true, nil, func(h []byte) { binary.BigEndian.PutUint16(h[16:], 256) })
	hdr("page-size-0", true, nil, func(h []byte) { binary.BigEndian.PutUint16(h[16:], 0) })
	hdr("page-size-65536", true, nil, func(h []byte) { binary.BigEndian.PutUint16(h[16:], 1) })
	hdr("page-size-double", true, nil, func(h []byte) { binary.BigEndian.PutUint16(h[16:], uint16(2*ps)) })
	hdr("page-size-half", true, nil, func(h []byte) {
		binary.BigEndian.PutUint16(h[16:], uint16(ps/2))
	})
	hdr("db-size-beyond-file", true, nil, func(h []byte) { put32(h, 28, n+5) })
	hdr("db-size-huge", true, nil, func(h []byte) { put32(h, 28, 0x7fffffff) })
	hdr("db-size-half", true, nil, func(h []byte) { put32(h, 28, n/2) })
	hdr("freelist-count-plus-3", true, nil, func(h []byte) { put32(h, 36, binary.BigEndian.Uint32(h[36:])+3) })
	hdr("freelist-count-minus-1", true, nil, func(h []byte) { put32(h, 36, binary.BigEndian.Uint32(h[36:])-1) })
	hdr("freelist-trunk-out-of-range", true, nil, func(h []byte) { put32(h, 32, n+10) })
	hdr("freelist-trunk-is-table-root", true, nil, func(h []byte) { put32(h, 32, b.root("t1")) })
	hdr("freelist-trunk-is-page-1", true, nil, func(h []byte) { put32(h, 32, 1) })
	// sqlite3 answers a schema format above 4 with "unsupported file
	// format": a newer format, not a broken one. ErrUnsupported it is.
	hdr("schema-format-0x99", false, pagoda.ErrUnsupported, func(h []byte) { put32(h, 44, 0x99) })
	hdr("schema-format-5", false, pagoda.ErrUnsupported, func(h []byte) { put32(h, 44, 5) })
	hdr("read-version-3", false, pagoda.ErrUnsupported, func(h []byte) { h[19] = 3 })
	// Edits sqlite3 accepts: the full read must not fail.
	clean := func(name string, f func(h []byte)) {
		d := clone(b.data)
		f(d[:100])
		addV(variant{name: "header-" + name, data: d, wantClean: true})
	}
	clean("schema-format-1", func(h []byte) { put32(h, 44, 1) })
	clean("user-version", func(h []byte) { put32(h, 60, 0xdeadbeef) })
	clean("application-id", func(h []byte) { put32(h, 68, 0x12345678) })
	clean("change-counter-stale", func(h []byte) { put32(h, 24, binary.BigEndian.Uint32(h[24:])+1) }) // db size then comes from the file size
	clean("stale-size-and-counter", func(h []byte) { put32(h, 28, n+100); put32(h, 92, binary.BigEndian.Uint32(h[92:])-1) })
	clean("write-version-wal", func(h []byte) { h[18], h[19] = 2, 2 })
	clean("default-cache-size", func(h []byte) { put32(h, 48, 12345) })
	// Fields sqlite3 reads by their low bits: it opens these files (a
	// read version of 0 is rollback mode, an encoding with high bits set
	// is its low two bits).
	clean("read-version-0", func(h []byte) { h[19] = 0 })
	clean("text-encoding-high-bits", func(h []byte) { put32(h, 56, 0xff000001) })
	clean("text-encoding-4", func(h []byte) { put32(h, 56, 4) })
	clean("schema-format-high-bits", func(h []byte) { put32(h, 44, 0x104) })
	hdr("schema-format-0x105", false, pagoda.ErrUnsupported, func(h []byte) { put32(h, 44, 0x105) })
	// A UTF-8 file relabeled UTF-16: it opens and its text reads as UTF-16,
	// its schema as garbage (sqlite3: malformed database schema). The read
	// must not panic or hang; TestUTF16Relabeled checks that Check finds it.
	hdr("text-encoding-utf16le", false, nil, func(h []byte) { put32(h, 56, 2) })
	hdr("text-encoding-7", false, nil, func(h []byte) { put32(h, 56, 7) }) // UTF-16be to sqlite3
	hdr("reserved-bytes-max", true, nil, func(h []byte) { h[20] = byte(min(255, ps-480+1)) })
	hdr("payload-fraction", true, nil, func(h []byte) { h[21] = 65 })
	if ps > 512 {
		// Cells now reach into the reserved region.
		hdr("reserved-bytes-64", true, nil, func(h []byte) { h[20] = 64 })
	}

	// Freelist trunk damage.
	if trunks := b.pagesOf("freelist trunk", ""); len(trunks) > 0 {
		tr := trunks[0]
		d := clone(b.data)
		put32(b.page(d, tr), 4, uint32(ps)) // leaf count too big
		addV(variant{name: "freelist-leaf-count-too-big", data: d, wantCorrupt: true, wantPage: true})
		d = clone(b.data)
		put32(b.page(d, tr), 0, tr) // next trunk is itself
		addV(variant{name: "freelist-trunk-cycle", data: d, wantCorrupt: true, wantPage: true})
		if binary.BigEndian.Uint32(b.page(b.data, tr)[4:]) > 0 {
			d = clone(b.data)
			put32(b.page(d, tr), 8, b.root("t1")) // a leaf that is a live b-tree page
			addV(variant{name: "freelist-leaf-is-table-root", data: d, wantCorrupt: true, wantPage: true})
			d = clone(b.data)
			put32(b.page(d, tr), 8, n+3)
			addV(variant{name: "freelist-leaf-out-of-range", data: d, wantCorrupt: true, wantPage: true})
		}
	} else {
		t.Fatalf("%s: the base file has no freelist", b.name)
	}

	// Cyclic overflow chains.
	chains := b.overflowChains()
	var long []uint32
	for _, c := range chains {
		if len(c) > len(long) {
			long = c
		}
	}
	if len(long) < 3 {
		t.Fatalf("%s: the base file has no overflow chain of 3 pages or more (%d chains)", b.name, len(chains))
	}
	d := clone(b.data)
	put32(b.page(d, long[1]), 0, long[0]) // second page points back to the first
	addV(variant{name: fmt.Sprintf("overflow-cycle-%d-%d", long[0], long[1]), data: d, wantCorrupt: true, wantPage: true})
	d = clone(b.data)
	put32(b.page(d, long[len(long)-1]), 0, long[0]) // last page points to the head
	addV(variant{name: fmt.Sprintf("overflow-tail-to-head-%d", long[len(long)-1]), data: d, wantCorrupt: true, wantPage: true})
	d = clone(b.data)
	put32(b.page(d, long[0]), 0, long[0]) // a page pointing to itself
	addV(variant{name: fmt.Sprintf("overflow-self-%d", long[0]), data: d, wantCorrupt: true, wantPage: true})
	d = clone(b.data)
	put32(b.page(d, long[0]), 0, 1)
	addV(variant{name: "overflow-to-page-1", data: d, wantCorrupt: true, wantPage: true})
	d = clone(b.data)
	put32(b.page(d, long[0]), 0, n+7)
	addV(variant{name: "overflow-out-of-range", data: d, wantCorrupt: true, wantPage: true})
	d = clone(b.data)
	put32(b.page(d, long[0]), 0, 0) // chain cut short
	addV(variant{name: "overflow-cut-short", data: d, wantCorrupt: true, wantPage: true})

	// Tree cycles: a child pointer back to the root, from the root and
	// from a deeper interior page; and a child pointer to page 1.
	for _, tree := range []string{"t1", "t1_name", "w", "b"} {
		root := b.root(tree)
		kids, offs := rawChildren(b.page(b.data, root), root)
		if len(kids) == 0 {
			if b.name == "deep512" && (tree == "t1" || tree == "t1_name") {
				t.Fatalf("%s: %s's root %d is not an interior page", b.name, tree, root)
			}
			continue
		}
		d := clone(b.data)
		put32(b.page(d, root), offs[len(offs)-1], root)
		addV(variant{name: fmt.Sprintf("tree-cycle-%s-root-right-child", tree), data: d, wantCorrupt: true, wantPage: true})
		d = clone(b.data)
		put32(b.page(d, root), offs[0], root)
		addV(variant{name: fmt.Sprintf("tree-cycle-%s-root-left-child", tree), data: d, wantCorrupt: true, wantPage: true})
		d = clone(b.data)
		put32(b.page(d, root), offs[0], 1)
		addV(variant{name: fmt.Sprintf("tree-child-is-page-1-%s", tree), data: d, wantCorrupt: true, wantPage: true})
		d = clone(b.data)
		put32(b.page(d, root), offs[0], kids[len(kids)-1]) // two pointers to one child
		addV(variant{name: fmt.Sprintf("tree-child-twice-%s", tree), data: d, wantCorrupt: true, wantPage: true})
		deep := false
		for _, k := range kids {
			gk, goffs := rawChildren(b.page(b.data, k), k)
			if len(gk) == 0 {
				continue
			}
			d := clone(b.data)
			put32(b.page(d, k), goffs[len(goffs)-1], root)
			addV(variant{name: fmt.Sprintf("tree-cycle-%s-page-%d-to-root", tree, k), data: d, wantCorrupt: true, wantPage: true})
			d = clone(b.data)
			put32(b.page(d, k), goffs[0], k)
			addV(variant{name: fmt.Sprintf("tree-cycle-%s-page-%d-to-itself", tree, k), data: d, wantCorrupt: true, wantPage: true})
			deep = true
			break
		}
		if !deep && b.name == "deep512" && (tree == "t1" || tree == "t1_name") {
			t.Fatalf("%s: %s has no interior page below its root", b.name, tree)
		}
	}

	// A page's type changed to another kind.
	for _, ch := range []struct {
		kind     string
		owner    string
		from, to byte
	}{
		{"table leaf", "t1", 13, 10}, {"table leaf", "t1", 13, 5}, {"table leaf", "t1", 13, 2},
		{"table interior", "t1", 5, 2}, {"table interior", "t1", 5, 13}, {"table interior", "t1", 5, 10},
		{"index leaf", "t1_name", 10, 13}, {"index leaf", "t1_name", 10, 2}, {"index leaf", "t1_name", 10, 5},
		{"index interior", "t1_name", 2, 5}, {"index interior", "t1_name", 2, 10}, {"index interior", "t1_name", 2, 13},
		{"index leaf", "w", 10, 13}, {"index leaf", "b", 10, 13}, {"table leaf", "sqlite_schema", 13, 10},
		{"table leaf", "t1", 13, 0}, {"table leaf", "t1", 13, 1}, {"table leaf", "t1", 13, 0xff},
	} {
		ps := b.pagesOf(ch.kind, ch.owner)
		if len(ps) == 0 {
			continue
		}
		p := ps[len(ps)/2]
		d := clone(b.data)
		pg := b.page(d, p)
		if pg[btreeHdr(p)] != ch.from {
			t.Fatalf("%s: page %d is a %s but its type byte is %d", b.name, p, ch.kind, pg[btreeHdr(p)])
		}
		pg[btreeHdr(p)] = ch.to
		addV(variant{name: fmt.Sprintf("page-%d-type-%d-to-%d(%s %s)", p, ch.from, ch.to, ch.kind, ch.owner), data: d, wantCorrupt: true, wantPage: true, wantPageNo: p})
	}

	// sqlite_schema rows.
	schemaV := func(name string, v variant, stmts ...string) {
		v.name, v.data = "schema-"+name, editSchema(t, b, stmts...)
		addV(v)
	}
	schemaV("rootpage-out-of-range", variant{wantCorrupt: true, wantPage: true, onlyObject: "t1"},
		"UPDATE sqlite_schema SET rootpage = 99999 WHERE name = 't1'")
	schemaV("rootpage-negative", variant{wantCorrupt: true, onlyObject: "t1"},
		"UPDATE sqlite_schema SET rootpage = -5 WHERE name = 't1'")
	schemaV("rootpage-0", variant{wantCorrupt: true, onlyObject: "plain"},
		"UPDATE sqlite_schema SET rootpage = 0 WHERE name = 'plain'")
	schemaV("rootpage-text", variant{wantCorrupt: true, onlyObject: "plain"},
		"UPDATE sqlite_schema SET rootpage = 'three' WHERE name = 'plain'")
	schemaV("rootpage-is-index-root", variant{wantCorrupt: true, wantPage: true},
		"UPDATE sqlite_schema SET rootpage = (SELECT rootpage FROM sqlite_schema WHERE name = 't1_name') WHERE name = 'plain'")
	schemaV("rootpage-is-page-1", variant{wantCorrupt: true, wantPage: true},
		"UPDATE sqlite_schema SET rootpage = 1 WHERE name = 'plain'")
	schemaV("index-rootpage-out-of-range", variant{wantCorrupt: true, wantPage: true, onlyObject: "t1_name"},
		"UPDATE sqlite_schema SET rootpage = 99999 WHERE name = 't1_name'")
	schemaV("garbage-table-sql", variant{wantCorrupt: true, onlyObject: "plain"},
		"UPDATE sqlite_schema SET sql = 'CREATE TABLE plain(garbage(((' WHERE name = 'plain'")
	schemaV("garbage-not-sql", variant{wantCorrupt: true, onlyObject: "plain"},
		"UPDATE sqlite_schema SET sql = 'this is not SQL at all '';' WHERE name = 'plain'")
	schemaV("null-table-sql", variant{wantCorrupt: true, onlyObject: "plain"},
		"UPDATE sqlite_schema SET sql = NULL WHERE name = 'plain'")
	schemaV("garbage-index-sql", variant{wantCorrupt: true, onlyObject: "t1_name"},
		"UPDATE sqlite_schema SET sql = 'CREATE INDEX t1_name ON t1(((' WHERE name = 't1_name'")
	schemaV("index-on-missing-column", variant{wantCorrupt: true, onlyObject: "w_v"},
		"UPDATE sqlite_schema SET sql = 'CREATE INDEX w_v ON w(nosuchcolumn)' WHERE name = 'w_v'")
	return vs
}

// bitFlipVariants flips one to three bits of one page, at seeded random
// positions, perPage times for every page (every every-th page when
// every > 1).
func bitFlipVariants(b *baseFile, r *rand.Rand, perPage, every int) []variant {
	var vs []variant
	for p := uint32(1); p <= b.npages(); p++ {
		if p > 1 && r.IntN(every) != 0 {
			continue
		}
		for k := 0; k < perPage; k++ {
			d := clone(b.data)
			pg := b.page(d, p)
			var where []string
			for f := 1 + r.IntN(3); f > 0; f-- {
				off := r.IntN(len(pg))
				if r.IntN(3) == 0 {
					// Favour the page header and cell pointers, where a
					// flip changes structure rather than content.
					off = btreeHdr(p) + r.IntN(min(len(pg)-btreeHdr(p), 40))
				}
				bit := byte(1) << r.IntN(8)
				pg[off] ^= bit
				where = append(where, fmt.Sprintf("%d^%#x", off, bit))
			}
			vs = append(vs, variant{name: fmt.Sprintf("%s/flip-page-%d@%s", b.name, p, strings.Join(where, ",")), data: d})
		}
	}
	return vs
}

// checkVariant writes the variant to disk, reads it fully and checks the
// rules; it returns the report for statistics.
func checkVariant(t *testing.T, dir string, i int, v variant) *readReport {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("v%04d.db", i))
	if err := os.WriteFile(path, v.data, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := readWithTimeout(path, 20*time.Second)
	switch {
	case rep.timedOut:
		t.Errorf("%s: HANG: the full read did not finish in 20s", v.name)
		return rep
	case rep.panicked != "":
		t.Errorf("%s: PANIC: %s", v.name, rep.panicked)
		return rep
	}
	var corrupt, named, namedExact bool
	var other error
	for _, e := range rep.errs {
		if strings.Contains(e.err.Error(), "HANG:") {
			t.Errorf("%s: %s", v.name, e)
			continue
		}
		if !allowedErr(e) {
			t.Errorf("%s: error wraps none of ErrCorrupt, ErrUnsupported (or ErrNotFound for a listed key): %s", v.name, e)
		}
		if errors.Is(e.err, pagoda.ErrCorrupt) {
			corrupt = true
			var ce *pagoda.CorruptError
			if errors.As(e.err, &ce) && ce.Page != 0 {
				named = true
				namedExact = namedExact || ce.Page == v.wantPageNo
			}
		}
		if v.wantErrIs != nil && errors.Is(e.err, v.wantErrIs) {
			other = e.err
		}
		if v.onlyObject != "" && e.obj != v.onlyObject && e.obj != "" {
			t.Errorf("%s: the damage is in %q's schema row, but %s fails too", v.name, v.onlyObject, e)
		}
	}
	if v.wantCorrupt && !corrupt {
		t.Errorf("%s: deliberate damage, but no error wraps ErrCorrupt; errors: %v", v.name, rep.errs)
	}
	if v.wantPage && corrupt && !named {
		t.Errorf("%s: page-specific damage, but no *CorruptError names a page; errors: %v", v.name, rep.errs)
	}
	if v.wantPageNo != 0 && corrupt && !namedExact {
		t.Errorf("%s: no *CorruptError names the damaged page %d; errors: %v", v.name, v.wantPageNo, rep.errs)
	}
	if v.wantClean && len(rep.errs) > 0 {
		t.Errorf("%s: the edit is no damage (sqlite3 reads such a file), but the full read fails: %v", v.name, rep.errs)
	}
	if v.wantErrIs != nil && other == nil {
		t.Errorf("%s: want an error wrapping %v; errors: %v", v.name, v.wantErrIs, rep.errs)
	}
	if v.onlyObject != "" {
		found := false
		for _, e := range rep.errs {
			if e.obj == v.onlyObject {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no operation on %q failed; errors: %v", v.name, v.onlyObject, rep.errs)
		}
	}
	os.Remove(path)
	return rep
}

func TestCorruptValidBases(t *testing.T) {
	// The bases themselves read without any error, so that every error
	// a variant produces comes from its damage.
	dir := t.TempDir()
	for i, b := range loadBases(t) {
		rep := checkVariant(t, dir, i, variant{name: b.name, data: b.data})
		if len(rep.errs) != 0 {
			t.Errorf("%s: the valid file reads with errors: %v", b.name, rep.errs)
		}
		if rep.rows == 0 {
			t.Errorf("%s: the full read saw no rows", b.name)
		}
	}
}

func TestCorruptStructural(t *testing.T) {
	dir := t.TempDir()
	i := 0
	for _, b := range loadBases(t) {
		for _, v := range structuralVariants(t, b) {
			checkVariant(t, dir, i, v)
			i++
		}
	}
	t.Logf("%d structural variants", i)
}

func TestCorruptBitFlips(t *testing.T) {
	seed := uint64(20240601)
	if *diffSeed != 0 {
		seed = uint64(*diffSeed)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	dir := t.TempDir()
	i, withErr := 0, 0
	for _, b := range loadBases(t) {
		// About 600 variants in all: every page of the small bases, a
		// quarter of the pages of deep512 (513 pages).
		per := map[string]int{"small512": 6, "deep512": 1, "std4096": 1}[b.name]
		every := map[string]int{"small512": 1, "deep512": 4, "std4096": 1}[b.name]
		if testing.Short() {
			per, every = max(1, per/2), every*2
		}
		for _, v := range bitFlipVariants(b, r, per, every) {
			if rep := checkVariant(t, dir, i, v); len(rep.errs) > 0 {
				withErr++
			}
			i++
		}
	}
	t.Logf("%d bit-flip variants (seed %d), %d of them reported errors", i, seed, withErr)
}

// FuzzOpenRead writes the input as a database file, opens it and reads
// everything: no panic, no hang, only the contract's errors.
func FuzzOpenRead(f *testing.F) {
	for _, b := range loadBases(f) {
		if b.pageSize == 512 && len(b.data) <= 64<<10 {
			f.Add(b.data)
		}
	}
	f.Add([]byte{})
	f.Add([]byte("SQLite format 3\x00"))
	// One file per process, rewritten for each input: cheaper than a
	// directory per input, which matters when the engine minimizes.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.db")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rep := readWithTimeout(path, 10*time.Second)
		if rep.timedOut {
			t.Fatalf("HANG: the full read did not finish in 10s")
		}
		if rep.panicked != "" {
			t.Fatalf("PANIC: %s", rep.panicked)
		}
		for _, e := range rep.errs {
			if strings.Contains(e.err.Error(), "HANG:") || !allowedErr(e) {
				t.Errorf("%s", e)
			}
		}
	})
}

// TestErrorMessages: what users read. Each error has one "pagoda: " prefix
// (a bare sentinel none), names no internal package, names the file, table
// or key it is about, and uses sqlite3's wording where sqlite3 has one.
func TestErrorMessages(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.db")
	db := dbtest.Open(t, path, &pagoda.Options{Timeout: 0})
	if err := db.Update(func(tx *pagoda.Tx) error {
		if _, err := tx.CreateBucket("b"); err != nil {
			return err
		}
		_, err := tx.CreateTable("CREATE TABLE t(id INTEGER PRIMARY KEY, x TEXT UNIQUE)")
		if err != nil {
			return err
		}
		tb, _ := tx.Table("t")
		_, err = tb.Insert(1, "one")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database, just text\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	exclusive := filepath.Join(dir, "ex.db")
	held := dbtest.Open(t, exclusive, &pagoda.Options{Exclusive: true})
	_ = held

	type tc struct {
		name string
		err  error
		is   error
		want []string // in the message
	}
	var cases []tc
	add := func(name string, err error, is error, want ...string) {
		cases = append(cases, tc{name, err, is, want})
	}
	_, err := pagoda.Open(notDB, nil)
	add("open a file that is not a database", err, pagoda.ErrCorrupt, notDB, "file is not a database")
	_, err = pagoda.Open(exclusive, &pagoda.Options{Timeout: 0})
	add("open a file another DB holds", err, pagoda.ErrLocked, exclusive, "database is locked")
	ro := dbtest.Open(t, path, &pagoda.Options{ReadOnly: true})
	add("write to a read-only DB", ro.Update(func(tx *pagoda.Tx) error { return nil }), pagoda.ErrReadOnly, "attempt to write a readonly database")

	w, err := db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	other := dbtest.Open(t, path, &pagoda.Options{Timeout: 0})
	_, err = other.Begin(true)
	add("a second writer", err, pagoda.ErrBusy, path, "database is busy")
	w.Rollback()

	err = db.View(func(tx *pagoda.Tx) error {
		_, err := tx.Table("nope")
		add("no such table", err, pagoda.ErrNotFound, "no such table: nope")
		_, err = tx.Bucket("nope")
		add("no such bucket", err, pagoda.ErrNotFound, "no such bucket: nope")
		b, _ := tx.Bucket("b")
		// Get of a missing key returns ErrNotFound itself: a lookup
		// allocates nothing, found or not (the CLI names the key).
		_, err = b.Get([]byte("missing-key"))
		add("a missing key", err, pagoda.ErrNotFound, "not found")
		tb, _ := tx.Table("t")
		_, err = tb.Get(42)
		add("a missing rowid", err, pagoda.ErrNotFound, "not found")
		add("a write in a read transaction", b.Put([]byte("k"), nil), pagoda.ErrTxNotWritable)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *pagoda.Tx) error {
		_, err := tx.CreateBucket("b")
		add("a bucket that exists", err, pagoda.ErrExists, `"b"`, "already exists")
		tb, _ := tx.Table("t")
		_, err = tb.Insert(nil, "one")
		add("a UNIQUE violation", err, pagoda.ErrExists, "UNIQUE constraint failed: t.x")
		_, err = tx.CreateTable("CREATE TABLE t(a)")
		add("a table that exists", err, pagoda.ErrExists, "t")
		_, err = tx.CreateTable("CREATE TABLE")
		add("a syntax error", err, nil, "syntax")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := db.Begin(false)
	tx.Rollback()
	add("a closed transaction", tx.Rollback(), pagoda.ErrTxClosed, "transaction is closed")
	add("a backup onto a file", db.Backup(path), pagoda.ErrExists, path, "already exists")

	internal := regexp.MustCompile(`\b(pager|wal|btree|schema|format|vfs|expr|check):`)
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		msg := c.err.Error()
		if c.is != nil && !errors.Is(c.err, c.is) {
			t.Errorf("%s: %q does not wrap %v", c.name, msg, c.is)
		}
		if n := strings.Count(msg, "pagoda:"); n > 1 || (n == 1 && !strings.HasPrefix(msg, "pagoda: ")) {
			t.Errorf("%s: %q: %d pagoda: prefixes", c.name, msg, n)
		}
		if m := internal.FindString(msg); m != "" {
			t.Errorf("%s: %q names an internal package (%s)", c.name, msg, m)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q does not say %q", c.name, msg, w)
			}
		}
	}
}
