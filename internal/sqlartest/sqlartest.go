// Package sqlartest makes SQLite Archives that attack their readers, for
// the tests of fsys and of the CLI's fs commands: names that leave the
// archive, links out of it, sizes (sz) that lie either way or are
// negative, and a zip bomb. SQLite writes them, through internal/sqltest's
// driver, as another tool would. It is imported by tests only.
package sqlartest

import (
	"bytes"
	"compress/zlib"
	"database/sql"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// Row is one row of the sqlar table.
type Row struct {
	Name  string
	Mode  int64
	Mtime int64
	Sz    int64
	Data  any // nil (NULL), []byte (a BLOB) or string (TEXT)
}

// st_mode values of sqlar rows.
const (
	File = 0o100644
	Dir  = 0o040755
	Link = 0o120777
)

// schema is the table sqlite3 -A creates.
const schema = "CREATE TABLE sqlar(name TEXT PRIMARY KEY, mode INT, mtime INT, sz INT, data BLOB)"

// Write creates the archive at path, with sqlite3's schema, holding rows:
// SQLite writes them. The file is then checked (dbtest.Check).
func Write(t testing.TB, path string, rows ...Row) {
	t.Helper()
	db := sqltest.Open(t, path)
	sqltest.Run(t, db, schema)
	insert(t, db, rows)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	dbtest.Check(t, path)
}

func insert(t testing.TB, db *sql.DB, rows []Row) {
	t.Helper()
	for _, r := range rows {
		if _, err := db.Exec("INSERT INTO sqlar VALUES (?, ?, ?, ?, ?)", r.Name, r.Mode, r.Mtime, r.Sz, r.Data); err != nil {
			t.Fatalf("sqlite: insert %q: %v", r.Name, err)
		}
	}
}

// Zlib returns data deflated at level as sqlar stores it.
func Zlib(data []byte, level int) []byte {
	var buf bytes.Buffer
	zw, err := zlib.NewWriterLevel(&buf, level)
	if err != nil {
		panic(err)
	}
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// BombSize is what Bomb inflates to: 1 GiB.
const BombSize = 1 << 30

var bomb = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
	zero := make([]byte, 1<<20)
	for range BombSize / len(zero) {
		zw.Write(zero)
	}
	zw.Close()
	return buf.Bytes()
})

// Bomb returns a zlib stream of BombSize zero bytes, about 1.3 MB long
// (824 to one). It is made once, a MiB at a time: nothing holds the
// inflated bytes.
func Bomb() []byte { return bomb() }

// Allocated returns the bytes of heap fn allocates (the growth of
// runtime.MemStats.TotalAlloc, so other goroutines' too).
func Allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Want is what reading a hostile row gives.
type Want int

const (
	// Reads: a regular file that reads as its Content.
	Reads Want = iota
	// Corrupt: a regular file whose data is damaged or whose sz lies.
	// It lists and stats (its size is the claim), but reading its data is
	// an error wrapping pagoda.ErrCorrupt, having yielded fewer than sz
	// bytes, and allocates nothing by the claim.
	Corrupt
	// BadLink: a symbolic link whose sz is neither -1 (sqlite3's) nor its
	// target's length. It lists and Lstats; following or reading it is
	// ErrCorrupt.
	BadLink
	// Invalid: a name that is not a path inside the archive. It is never
	// listed or extracted; opening it by name is fs.ErrInvalid.
	Invalid
	// Outside: a symbolic link that leaves the archive. Following it is
	// fs.ErrNotExist; extract recreates the link as it is and writes
	// nothing through it.
	Outside
	// Hidden: a file below a symbolic link. No listing shows it (listings
	// do not follow links), so nothing extracts it unless asked by name,
	// and then not through the link.
	Hidden
	// Directory: a directory row, whatever its sz says: sqlite3 stores 0,
	// and nothing reads a directory's data.
	Directory
)

// Case is one hostile row, what it does and what reading it gives.
type Case struct {
	Row
	Why     string
	Want    Want
	Content []byte // Reads: the file's content
	// Late: Corrupt, and the damage shows only after megabytes of good
	// data, where a server has started its response.
	Late bool
}

// text returns n bytes of text-like data, reproducibly.
func text(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	words := strings.Fields("archive zlib deflate sqlite page cell row name mode mtime size data")
	var b []byte
	for len(b) < n {
		b = append(b, words[r.IntN(len(words))]...)
		b = append(b, " \n"[r.IntN(2)])
	}
	return b[:n]
}

// random returns n incompressible bytes, reproducibly.
func random(n int, seed uint64) []byte {
	r := rand.NewChaCha8([32]byte{byte(seed)})
	b := make([]byte, n)
	r.Read(b)
	return b
}

var hostile = sync.OnceValue(func() []Case {
	small, smallZ := text(10<<10, 1), Zlib(text(10<<10, 1), zlib.DefaultCompression)
	short := Zlib(text(1000, 2), zlib.DefaultCompression)
	long := Zlib(text(100<<10, 3), zlib.DefaultCompression)
	badSum := bytes.Clone(smallZ)
	badSum[len(badSum)-1] ^= 1
	// A zlib header over noise: old readers checked the header, then
	// allocated the claim.
	noise := append([]byte{0x78, 0x9c}, random(1<<20, 4)...)
	// The audit's case: 40 MiB of data, stored blocks of a real stream,
	// claiming 1032 times that (41 GiB), which the ratio check let by.
	lie := Zlib(random(40<<20, 5), zlib.NoCompression)
	evil := []byte("evil\n")
	return []Case{
		{Row{"ok.txt", File, 1e9, 6, "hello\n"}, "a file stored as it is", Reads, []byte("hello\n"), false},
		{Row{"zok.txt", File, 1e9, int64(len(small)), smallZ}, "a compressed file", Reads, small, false},
		{Row{"../up.txt", File, 1e9, 5, evil}, "a name above the root", Invalid, nil, false},
		{Row{"/abs.txt", File, 1e9, 5, evil}, "an absolute name", Invalid, nil, false},
		{Row{"a/../../b.txt", File, 1e9, 5, evil}, "a name that climbs out", Invalid, nil, false},
		{Row{"c/./d.txt", File, 1e9, 5, evil}, "a name with a dot", Invalid, nil, false},
		{Row{"e//f.txt", File, 1e9, 5, evil}, "a name with an empty element", Invalid, nil, false},
		{Row{"g\xff.txt", File, 1e9, 5, evil}, "a name that is not UTF-8", Invalid, nil, false},
		{Row{"out", Link, 1e9, -1, "../../outside"}, "a link above the root", Outside, nil, false},
		{Row{"abs", Link, 1e9, -1, "/nonexistent-sqlartest/passwd"}, "a link to an absolute path", Outside, nil, false},
		{Row{"out/evil.txt", File, 1e9, 5, evil}, "a file below a link out", Hidden, nil, false},
		{Row{"short.txt", File, 1e9, 1032 * int64(len(short)), short}, "sz 1032 times the stream, which inflates to 1000 bytes", Corrupt, nil, false},
		{Row{"short1.txt", File, 1e9, int64(len(small)) + 1, smallZ}, "sz one more than the stream inflates to", Corrupt, nil, false},
		{Row{"long.txt", File, 1e9, 50 << 10, long}, "sz half of what the stream inflates to", Corrupt, nil, false},
		{Row{"long1.txt", File, 1e9, int64(len(small)) - 1, smallZ}, "sz one less than the stream inflates to", Corrupt, nil, false},
		{Row{"zero.txt", File, 1e9, 0, Zlib([]byte("not empty"), zlib.DefaultCompression)}, "sz 0 over a stream of 9 bytes", Corrupt, nil, false},
		{Row{"badsum.txt", File, 1e9, int64(len(small)), badSum}, "a stream whose checksum is wrong", Corrupt, nil, false},
		{Row{"noise.bin", File, 1e9, 1032 * int64(len(noise)), noise}, "a zlib header over 1 MiB of noise, sz 1032 times that (1 GiB)", Corrupt, nil, false},
		{Row{"lie41g.bin", File, 1e9, 1032 * int64(len(lie)), lie}, "a 40 MiB stream claiming 1032 times that (41 GiB)", Corrupt, nil, true},
		{Row{"negative.txt", File, 1e9, -5, "abc"}, "a negative sz", Corrupt, nil, false},
		{Row{"negnull.txt", File, 1e9, -1, nil}, "a negative sz and no data", Corrupt, nil, false},
		{Row{"nodata.txt", File, 1e9, 10, nil}, "sz 10 and no data", Corrupt, nil, false},
		{Row{"dirsz", Dir, 1e9, 41 << 30, nil}, "a directory claiming 41 GiB", Directory, nil, false},
		{Row{"linksz", Link, 1e9, 41 << 30, "ok.txt"}, "a link claiming 41 GiB", BadLink, nil, false},
	}
})

// Hostile returns the hostile rows (made once; do not change them).
func Hostile() []Case { return hostile() }

// WriteHostile writes the archive of Hostile's rows at path.
func WriteHostile(t testing.TB, path string) []Case {
	t.Helper()
	cases := Hostile()
	rows := make([]Row, len(cases))
	for i, c := range cases {
		rows[i] = c.Row
	}
	Write(t, path, rows...)
	return cases
}

// Zeros is a writer that counts the bytes written to it and notes whether
// any is not 0: what a reader of Bomb's file must write.
type Zeros struct {
	N       int64
	NonZero bool
}

var zeroChunk = make([]byte, 64<<10)

func (z *Zeros) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		k := min(len(rest), len(zeroChunk))
		if !bytes.Equal(rest[:k], zeroChunk[:k]) {
			z.NonZero = true
		}
		rest = rest[k:]
	}
	z.N += int64(len(p))
	return len(p), nil
}
