package check

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// pageSizes are the page sizes every fixture is built with: the smallest
// (deep trees, long overflow chains) and the default.
var pageSizes = []int{512, 4096}

// run checks an image, reading the schema itself (cat nil).
func run(t *testing.T, data []byte, opts *Options) []Problem {
	t.Helper()
	m := newMemPages(data)
	if m == nil {
		t.Fatal("invalid image header")
	}
	return Run(m, nil, opts)
}

func TestCleanFiles(t *testing.T) {
	for _, ps := range pageSizes {
		im := fixture(t, ps)
		if got := run(t, im.data, nil); len(got) != 0 {
			t.Errorf("%s: %d problems in a file SQLite made:\n%s", im.name, len(got), joinProblems(got))
		}
		if out, ok := sqliteIntegrity(t, im.data); ok && out != "ok" {
			t.Errorf("%s: the fixture itself is not ok for sqlite3: %s", im.name, out)
		}
		// The fixture has what the corruption tests need.
		if be32(im.data[36:]) == 0 {
			t.Errorf("%s: empty freelist", im.name)
		}
	}
}

func TestEmptyDatabase(t *testing.T) {
	if got := Run(&memPages{pageSize: 4096, usable: 4096}, nil, nil); got != nil {
		t.Errorf("empty file: %v", got)
	}
	path := filepath.Join(t.TempDir(), "one.db")
	sqltest.Exec(t, path, "PRAGMA user_version=1") // page 1 only, empty schema
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, data, nil); len(got) != 0 {
		t.Errorf("one-page file: %v", got)
	}
}

// A corruption is a targeted byte edit of a fixture image, and the problem
// it must produce: one on page `page` whose message contains `msg`.
type corruption struct {
	name   string
	damage func(t *testing.T, im *image, data []byte) (page uint32, msg string)
	// pageSize, when not 0, is the one fixture whose trees have the shape
	// the damage needs (three levels deep: the 512-byte pages').
	pageSize int
}

var corruptions = []corruption{
	{name: "freelist leaf removed", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		// The last leaf of the first trunk drops off the list, and the
		// header's count with it: the page is used by nothing.
		trunk := im.page(d, be32(d[32:]))
		n := be32(trunk[4:])
		if n == 0 {
			t.Fatal("first trunk has no leaves")
		}
		leaf := be32(trunk[8+4*(n-1):])
		put32(trunk[4:], n-1)
		put32(d[36:], be32(d[36:])-1)
		return leaf, "never used"
	}},
	{name: "child pointer duplicated", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		p := findPage(t, im, d, im.roots["t"], func(p treePage) bool { return !p.typ.IsLeaf() && p.cells >= 2 })
		pg := parse(t, im, d, p.pgno)
		page := im.page(d, p.pgno)
		off0, off1 := be16(page[cellPointer(&pg, 0):]), be16(page[cellPointer(&pg, 1):])
		child0 := be32(page[off0:])
		put32(page[off1:], child0)
		return child0, "referenced twice"
	}},
	{name: "incremental vacuum without auto-vacuum", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		if be32(d[52:]) != 0 {
			t.Fatal("fixture: an auto-vacuum file")
		}
		put32(d[64:], 1)
		return 1, "incremental vacuum"
	}},
	{name: "freelist count", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		put32(d[36:], be32(d[36:])+1)
		return 1, "the freelist has"
	}},
	{name: "table cells swapped", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		p := findPage(t, im, d, im.roots["t"], func(p treePage) bool { return p.typ.IsLeaf() && p.cells >= 2 })
		pg := parse(t, im, d, p.pgno)
		swap16(im.page(d, p.pgno), cellPointer(&pg, 0), cellPointer(&pg, 1))
		return p.pgno, "out of order"
	}},
	{name: "index cells swapped", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		p := findPage(t, im, d, im.roots["t_name"], func(p treePage) bool { return p.typ.IsLeaf() && p.cells >= 2 })
		pg := parse(t, im, d, p.pgno)
		swap16(im.page(d, p.pgno), cellPointer(&pg, 0), cellPointer(&pg, 1))
		return p.pgno, "out of order"
	}},
	{name: "WITHOUT ROWID cells swapped", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		p := findPage(t, im, d, im.roots["w"], func(p treePage) bool { return p.typ.IsLeaf() && p.cells >= 2 })
		pg := parse(t, im, d, p.pgno)
		swap16(im.page(d, p.pgno), cellPointer(&pg, 0), cellPointer(&pg, 1))
		return p.pgno, "out of order"
	}},
	{name: "fragment byte", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		p := findPage(t, im, d, im.roots["t"], func(p treePage) bool { return p.typ.IsLeaf() && p.depth > 0 })
		im.page(d, p.pgno)[7] += 3
		return p.pgno, "fragmented bytes"
	}},
	{name: "overlapping cell pointer", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		p := findPage(t, im, d, im.roots["u"], func(p treePage) bool { return p.typ.IsLeaf() && p.cells >= 2 })
		pg := parse(t, im, d, p.pgno)
		page := im.page(d, p.pgno)
		copy(page[cellPointer(&pg, 1):], page[cellPointer(&pg, 0):cellPointer(&pg, 0)+2])
		return p.pgno, "overlaps"
	}},
	{name: "overflow chain cut short", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		for _, p := range treePages(t, im, d, im.roots["t"]) {
			if !p.typ.IsLeaf() {
				continue
			}
			pg := parse(t, im, d, p.pgno)
			for i := 0; i < pg.NCells; i++ {
				c, err := pg.Cell(i)
				if err != nil {
					t.Fatal(err)
				}
				if c.Overflow != 0 && format.OverflowPages(c.PayloadLen, im.pageSize, true) >= 2 {
					put32(im.page(d, c.Overflow), 0)
					return p.pgno, "overflow chain ends after 1 of its"
				}
			}
		}
		t.Fatal("no row with two overflow pages")
		return 0, ""
	}},
	{name: "wrong page type", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		p := findPage(t, im, d, im.roots["t"], func(p treePage) bool { return p.typ.IsLeaf() && p.depth > 0 })
		im.page(d, p.pgno)[0] = byte(format.PageIndexLeaf)
		return p.pgno, "index leaf page in a tree of table pages"
	}},
	{name: "freelist leaf in a tree", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		// A page of table t is also put on the freelist.
		p := findPage(t, im, d, im.roots["t"], func(p treePage) bool { return p.typ.IsLeaf() && p.depth > 0 })
		trunk := im.page(d, be32(d[32:]))
		n := be32(trunk[4:])
		put32(trunk[8+4*n:], p.pgno)
		put32(trunk[4:], n+1)
		put32(d[36:], be32(d[36:])+1)
		return p.pgno, "referenced twice"
	}},
	{name: "cycle to the root", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		root := im.roots["t"]
		p := findPage(t, im, d, root, func(p treePage) bool { return !p.typ.IsLeaf() && p.depth > 0 || !p.typ.IsLeaf() && p.cells > 0 })
		put32(im.page(d, p.pgno)[8:], root) // the right child
		return root, "referenced twice"
	}},
	{name: "empty leaf", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		p := findPage(t, im, d, im.roots["t"], func(p treePage) bool { return p.typ.IsLeaf() && p.depth > 0 })
		put16(im.page(d, p.pgno)[3:], 0)
		return p.pgno, "empty leaf below the root"
	}},
	{name: "freeblock in the gap", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		// A freeblock before the content area (in the unallocated gap).
		p := findPage(t, im, d, im.roots["t"], func(p treePage) bool {
			pg := parse(t, im, d, p.pgno)
			return p.typ.IsLeaf() && pg.ContentStart()-pg.CellPointerEnd() >= 8
		})
		pg := parse(t, im, d, p.pgno)
		page := im.page(d, p.pgno)
		fb := pg.ContentStart() - 8
		put16(page[fb:], 0)
		put16(page[fb+2:], 4)
		put16(page[1:], fb)
		return p.pgno, "free space corruption"
	}},
	{name: "leaves at two depths", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		// The root's first child, an interior page, is replaced by that
		// page's first child, a leaf: one leaf is now a level higher.
		for _, name := range []string{"t", "t_name", "w", "w_v"} {
			root := im.roots[name]
			pages := treePages(t, im, d, root)
			if len(pages) < 2 || pages[1].typ.IsLeaf() || pages[2].parent != pages[1].pgno || !pages[2].typ.IsLeaf() {
				continue
			}
			pg := parse(t, im, d, root)
			off, err := pg.CellOffset(0)
			if err != nil {
				t.Fatal(err)
			}
			put32(im.page(d, root)[off:], pages[2].pgno)
			return root, "child page depth differs"
		}
		t.Fatalf("%s: no tree three levels deep: the fixture must have one for this damage", im.name)
		return 0, ""
	}, pageSize: 512},
	{name: "rowid above its separator", damage: func(t *testing.T, im *image, d []byte) (uint32, string) {
		// The last rowid of a leftmost leaf moves past the separator above
		// it (keeping its 1-byte varint).
		p := findPage(t, im, d, im.roots["t"], func(p treePage) bool { return !p.typ.IsLeaf() && p.depth == 0 })
		parent := parse(t, im, d, p.pgno)
		child, err := parent.Child(0)
		if err != nil {
			t.Fatal(err)
		}
		sep, err := parent.TableInteriorKey(0)
		if err != nil {
			t.Fatal(err)
		}
		leaf := parse(t, im, d, child)
		if !leaf.Type.IsLeaf() || sep >= 126 {
			t.Fatalf("%s: leftmost child %d is not a leaf with small rowids: the fixture must have one for this damage", im.name, child)
		}
		off, err := leaf.CellOffset(leaf.NCells - 1)
		if err != nil {
			t.Fatal(err)
		}
		page := im.page(d, child)
		_, n := format.Uvarint(page[off:])
		if page[off+n] >= 0x80 {
			t.Fatal("rowid varint is not 1 byte")
		}
		page[off+n] = byte(sep + 1)
		return p.pgno, "separator"
	}},
}

func TestCorruptions(t *testing.T) {
	for _, ps := range pageSizes {
		im := fixture(t, ps)
		for _, tc := range corruptions {
			if tc.pageSize != 0 && tc.pageSize != ps {
				continue
			}
			t.Run(im.name+"/"+tc.name, func(t *testing.T) {
				data := im.clone()
				page, msg := tc.damage(t, im, data)
				got := run(t, data, nil)
				if !hasProblem(got, page, msg) {
					t.Errorf("want a problem on page %d containing %q, got:\n%s", page, msg, joinProblems(got))
				}
				if len(got) > DefaultMaxProblems+1 {
					t.Errorf("%d problems, more than the cap", len(got))
				}
				if out, ok := sqliteIntegrity(t, data); ok && out == "ok" {
					t.Errorf("sqlite3 says the damaged file is ok")
				}
				t.Logf("%d problems:\n%s", len(got), joinProblems(got))
			})
		}
	}
}

func TestProblemCap(t *testing.T) {
	im := fixture(t, 512)
	data := im.clone()
	// Every leaf of table t gets a wrong fragment count.
	for _, p := range treePages(t, im, data, im.roots["t"]) {
		if p.typ.IsLeaf() {
			im.page(data, p.pgno)[7]++
		}
	}
	const max = 5
	got := run(t, data, &Options{MaxProblems: max})
	if len(got) != max+1 || !strings.Contains(got[max].Msg, "too many problems") {
		t.Errorf("want %d problems and a last one saying it stopped, got:\n%s", max, joinProblems(got))
	}
}

// TestRandomDamage flips random bytes of a small image: the checker must
// neither panic nor hang, whatever it reports.
func TestRandomDamage(t *testing.T) {
	im := fixture(t, 512)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		data := im.clone()
		for range 1 + rng.IntN(20) {
			data[100+rng.IntN(len(data)-100)] ^= byte(1 + rng.IntN(255))
		}
		got := run(t, data, &Options{MaxProblems: 50})
		if len(got) > 51 {
			t.Fatalf("round %d: %d problems", round, len(got))
		}
	}
}

func TestProblemString(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{Page: 7, Msg: "never used"}, "page 7: never used"},
		{Problem{Msg: "index i: root page 0"}, "index i: root page 0"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%#v: %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestFormatKey(t *testing.T) {
	rec := format.AppendRecord(nil, []format.Value{
		format.NullValue(), format.IntValue(-3), format.FloatValue(2.5),
		format.TextValue([]byte("it's\n")), format.BlobValue([]byte{0, 0xab}),
	})
	if got, want := formatKey(rec, 0), `(NULL, -3, 2.5, "it's\n", x'00ab')`; got != want {
		t.Errorf("formatKey = %s, want %s", got, want)
	}
}

func hasProblem(ps []Problem, page uint32, msg string) bool {
	for _, p := range ps {
		if p.Page == page && strings.Contains(p.Msg, msg) {
			return true
		}
	}
	return false
}

func joinProblems(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("\t" + p.String() + "\n")
	}
	return b.String()
}

// sqliteIntegrity runs the sqlite3 CLI's PRAGMA integrity_check on a copy
// of data; ok is false when the CLI is not installed.
func sqliteIntegrity(t *testing.T, data []byte) (out string, ok bool) {
	t.Helper()
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Log("sqlite3 CLI not installed: integrity_check not compared")
		return "", false
	}
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := exec.Command(bin, "-readonly", path, "PRAGMA integrity_check").CombinedOutput()
	return strings.TrimSpace(string(b)), true
}

// TestDeepTree chains interior pages deeper than btree.MaxDepth: the walk
// stops there and says so.
func TestDeepTree(t *testing.T) {
	const pageSize, chain = 512, 30
	path := filepath.Join(t.TempDir(), "deep.db")
	sqltest.Exec(t, path, "PRAGMA page_size=512", "CREATE TABLE t(x)") // t's root is page 2
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data[:pageSize], make([]byte, chain*pageSize)...)
	for p := 2; p <= chain+1; p++ {
		// A table interior page: type 5, no freeblock, one cell (at the
		// end of the page: child 0, rowid p), content start, no fragments,
		// right child p+1; the last page is an empty leaf.
		pg := data[(p-1)*pageSize : p*pageSize]
		if p == chain+1 {
			pg[0] = byte(format.PageTableLeaf)
			put16(pg[5:], pageSize)
			continue
		}
		pg[0] = byte(format.PageTableInterior)
		put16(pg[3:], 1)
		put16(pg[5:], pageSize-5)
		put32(pg[8:], uint32(p+1))
		put16(pg[12:], pageSize-5)
		put32(pg[pageSize-5:], 0)
		pg[pageSize-1] = byte(p)
	}
	got := run(t, data, nil)
	if !hasProblem(got, 21, "deeper than 20 levels") || !hasProblem(got, 2, "a child pointer is page 0, outside 1..31") {
		t.Errorf("want page 21 deeper than 20 levels, page 2 with a child pointer to page 0, got:\n%s", joinProblems(got))
	}
}
