package command

import (
	"encoding/xml"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// svgDoc is the part of pages --svg output the tests read.
type svgDoc struct {
	XMLName xml.Name `xml:"svg"`
	Width   int      `xml:"width,attr"`
	Height  int      `xml:"height,attr"`
	Title   string   `xml:"title"`
	Texts   []string `xml:"text"`
	Groups  []struct {
		ID    string    `xml:"id,attr"`
		Rects []svgRect `xml:"rect"`
		Items []struct {
			Rect svgRect `xml:"rect"`
			Text string  `xml:"text"`
		} `xml:"g"`
	} `xml:"g"`
}

type svgRect struct {
	ID    string `xml:"id,attr"`
	X     int    `xml:"x,attr"`
	Y     int    `xml:"y,attr"`
	W     int    `xml:"width,attr"`
	Fill  string `xml:"fill,attr"`
	Title string `xml:"title"`
}

// svgFile makes a file with every kind of page (auto-vacuum adds pointer
// maps) and draws it; it returns the SVG's path, the parsed document and
// the pages listing.
func svgFile(t *testing.T, autoVacuum bool) (string, svgDoc, []pageLine) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "map <&>.db") // a name to escape
	av := "NONE"
	if autoVacuum {
		av = "INCREMENTAL"
	}
	sqltest.Exec(t, path,
		"PRAGMA page_size=512",
		"PRAGMA auto_vacuum="+av,
		`CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b BLOB)`,
		`CREATE INDEX ta ON t(a)`,
		`CREATE TABLE w(k PRIMARY KEY, v) WITHOUT ROWID`,
		`CREATE TABLE gone(x)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 300)
		 INSERT INTO t SELECT i, 'row ' || i, CASE WHEN i % 50 = 0 THEN randomblob(2000) ELSE x'01' END FROM n`,
		`INSERT INTO w SELECT id, a FROM t`,
		`INSERT INTO gone SELECT randomblob(300) FROM t LIMIT 60`,
		`DROP TABLE gone`,
	)
	out := filepath.Join(dir, "map.svg")
	list := parsePages(t, mustRun(t, "pages", path))
	if got := mustRun(t, "pages", "--svg", out, path); got != fmt.Sprintf("wrote %s: %d pages\n", out, len(list)) {
		t.Errorf("pages --svg printed %q", got)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc svgDoc
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the SVG is not well-formed XML: %v", err)
	}
	return out, doc, list
}

// TestPagesSVG checks the picture: well-formed XML, one square per page in
// page order, each coloured as the legend colours its owner, the legend
// counting each owner's pages as pages lists them, and the title.
func TestPagesSVG(t *testing.T) {
	for _, av := range []bool{false, true} {
		t.Run(fmt.Sprintf("auto-vacuum %v", av), func(t *testing.T) {
			_, doc, list := svgFile(t, av)
			var rects []svgRect
			legend := map[string]string{} // label -> fill
			counts := map[string]int{}    // label -> pages
			for _, g := range doc.Groups {
				switch g.ID {
				case "pages":
					rects = g.Rects
				case "legend":
					for _, e := range g.Items {
						label, n, ok := strings.Cut(e.Text, ": ")
						if !ok {
							t.Fatalf("legend entry %q", e.Text)
						}
						legend[label] = e.Rect.Fill
						counts[label], _ = strconv.Atoi(strings.Fields(n)[0])
					}
				}
			}
			if len(rects) != len(list) {
				t.Fatalf("%d squares for %d pages", len(rects), len(list))
			}
			want := map[string]int{}
			for i, p := range list {
				label := p.owner
				switch {
				case p.pgno == 1:
					label = "page 1 (header, sqlite_schema)"
				case p.kind == "overflow":
					label = p.owner + " (overflow)"
				case p.owner == "-":
					label = p.kind
				}
				want[label]++
				r := rects[i]
				if r.ID != "p"+strconv.Itoa(p.pgno) || !strings.HasPrefix(r.Title, fmt.Sprintf("page %d: %s", p.pgno, p.kind)) {
					t.Errorf("square %d: id %q, title %q; want page %d, %s", i, r.ID, r.Title, p.pgno, p.kind)
				}
				if fill, ok := legend[label]; !ok || fill != r.Fill {
					t.Errorf("page %d (%s): fill %s, the legend's %q is %s", p.pgno, label, r.Fill, label, fill)
				}
			}
			for label, n := range want {
				if counts[label] != n {
					t.Errorf("legend: %q has %d pages, pages lists %d", label, counts[label], n)
				}
			}
			if len(counts) != len(want) {
				t.Errorf("legend %v, pages lists %v", counts, want)
			}
			for _, must := range []string{"t", "ta", "w", "t (overflow)", "freelist leaf"} {
				if _, ok := legend[must]; !ok {
					t.Errorf("no legend entry %q: %v", must, counts)
				}
			}
			if _, ok := legend["pointer map"]; ok != av {
				t.Errorf("legend has pointer map: %v, want %v", ok, av)
			}
			title := fmt.Sprintf("map <&>.db: page size 512, %d pages", len(list))
			if len(doc.Texts) == 0 || doc.Texts[0] != title || doc.Title != "pagoda pages: map <&>.db" {
				t.Errorf("title %q, text %q; want %q", doc.Title, doc.Texts, title)
			}
			// Distinct owners have distinct colours.
			seen := map[string]string{}
			for label, fill := range legend {
				if other, dup := seen[fill]; dup {
					t.Errorf("%q and %q share the colour %s", label, other, fill)
				}
				seen[fill] = label
			}
		})
	}
}

// TestPagesSVGRender renders the picture with rsvg-convert and checks the
// PNG's size and the colour at the middle of some squares.
func TestPagesSVGRender(t *testing.T) {
	rsvg, err := exec.LookPath("rsvg-convert")
	if err != nil {
		t.Skip("rsvg-convert not installed (Debian package librsvg2-bin; .ci/run installs it): the SVG is not rendered")
	}
	svg, doc, _ := svgFile(t, true)
	pngPath := filepath.Join(t.TempDir(), "map.png")
	if out, err := exec.Command(rsvg, "-o", pngPath, svg).CombinedOutput(); err != nil {
		t.Fatalf("rsvg-convert: %v\n%s", err, out)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != doc.Width || b.Dy() != doc.Height {
		t.Errorf("rendered %v, the SVG says %dx%d", b, doc.Width, doc.Height)
	}
	checked := 0
	for _, g := range doc.Groups {
		for i, r := range g.Rects {
			if g.ID != "pages" || i%7 != 0 {
				continue
			}
			cr, cg, cb, _ := img.At(r.X+r.W/2, r.Y+r.W/2).RGBA()
			if got := fmt.Sprintf("#%02x%02x%02x", cr>>8, cg>>8, cb>>8); got != r.Fill {
				t.Errorf("square %s rendered %s, want %s", r.ID, got, r.Fill)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("%d squares checked", checked)
	}
}
