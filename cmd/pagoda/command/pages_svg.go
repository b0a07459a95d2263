package command

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/pagodadb/pagoda"
)

// The page map's geometry, in SVG user units (pixels).
const (
	svgCell    = 12 // a page's square, gap included
	svgGap     = 2
	svgMargin  = 16
	svgTitleH  = 28 // the title line
	svgLegendH = 18 // a legend line
	svgMinCols = 32
	svgMaxCols = 128
)

// Fixed colours of the kinds that belong to no table.
const (
	svgPage1    = "#222222"
	svgSchema   = "#555555"
	svgFreeLeaf = "#d9d9d9"
	svgFreeTrnk = "#a6a6a6"
	svgPtrMap   = "#ff8c00"
	svgLockByte = "#d00000"
	svgUnused   = "#ffffff"
)

// svgClass is one legend entry: the pages of one owner and kind.
type svgClass struct {
	label string
	fill  string
	pages int
}

// svgColour returns the i-th of a sequence of distinct hues (the golden
// angle apart), as #rrggbb; overflow pages take the same hue, lighter.
func svgColour(i int, overflow bool) string {
	h := math.Mod(float64(i)*137.508+200, 360)
	s, l := 0.65, 0.45
	if overflow {
		s, l = 0.55, 0.75
	}
	return hsl(h, s, l)
}

// hsl converts a colour from HSL (h in degrees, s and l in 0..1) to
// #rrggbb.
func hsl(h, s, l float64) string {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := l - c/2
	var r, g, b float64
	switch {
	case h < 60:
		r, g = c, x
	case h < 120:
		r, g = x, c
	case h < 180:
		g, b = c, x
	case h < 240:
		g, b = x, c
	case h < 300:
		r, b = x, c
	default:
		r, b = c, x
	}
	to := func(v float64) int { return int(math.Round((v + m) * 255)) }
	return fmt.Sprintf("#%02x%02x%02x", to(r), to(g), to(b))
}

// classify returns the legend label of a page: page 1, its tree's name,
// "NAME (overflow)", or its kind.
func classify(p pagoda.PageInfo) string {
	switch {
	case p.Pgno == 1:
		return "page 1 (header, sqlite_schema)"
	case p.Kind == "overflow":
		return p.Owner + " (overflow)"
	case p.Owner != "":
		return p.Owner
	}
	return p.Kind
}

// writePagesSVG draws pages as a grid, one square per page in page order,
// left to right and top to bottom, coloured by owner, with a title and a
// legend (each class with its page count). Each square has a <title> (a
// browser shows it on hover) and the id "pN".
func writePagesSVG(w io.Writer, file string, pageSize int, pages []pagoda.PageInfo, objects []pagoda.Object) error {
	n := len(pages)
	cols := min(svgMaxCols, max(svgMinCols, int(math.Ceil(math.Sqrt(float64(n)*2)))))
	rows := max(1, (n+cols-1)/cols)

	// Classes in legend order: page 1, the trees in schema order (each
	// followed by its overflow pages), then the kinds of no tree.
	classes := map[string]*svgClass{}
	var order []string
	add := func(label, fill string) {
		if classes[label] == nil {
			classes[label] = &svgClass{label: label, fill: fill}
			order = append(order, label)
		}
	}
	add(classify(pagoda.PageInfo{Pgno: 1}), svgPage1)
	add("sqlite_schema", svgSchema)
	add("sqlite_schema (overflow)", "#999999")
	hue := 0
	for _, o := range objects {
		if o.RootPage != 0 && (o.Type == "table" || o.Type == "index") {
			add(o.Name, svgColour(hue, false))
			add(o.Name+" (overflow)", svgColour(hue, true))
			hue++
		}
	}
	for _, k := range []struct{ label, fill string }{
		{"freelist trunk", svgFreeTrnk}, {"freelist leaf", svgFreeLeaf},
		{"pointer map", svgPtrMap}, {"lock-byte", svgLockByte}, {"unused", svgUnused},
	} {
		add(k.label, k.fill)
	}
	for _, p := range pages {
		c := classes[classify(p)]
		if c == nil { // an owner the schema does not list (a damaged file)
			add(classify(p), svgColour(hue, p.Kind == "overflow"))
			hue++
			c = classes[classify(p)]
		}
		c.pages++
	}
	var legend []*svgClass
	for _, label := range order {
		if c := classes[label]; c.pages > 0 {
			legend = append(legend, c)
		}
	}

	gridW := cols * svgCell
	width := max(gridW+2*svgMargin, 480)
	gridTop := svgMargin + svgTitleH
	legendTop := gridTop + rows*svgCell + svgMargin
	height := legendTop + len(legend)*svgLegendH + svgMargin

	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">
<title>%s</title>
<style>text { font-family: sans-serif; font-size: 12px; fill: #000000; } .t { font-size: 15px; font-weight: bold; } rect.u { stroke: #bbbbbb; stroke-width: 1; }</style>
<rect width="100%%" height="100%%" fill="#ffffff"/>
<text class="t" x="%d" y="%d">%s</text>
<g id="pages">
`, width, height, width, height, xmlText("pagoda pages: "+filepath.Base(file)), svgMargin, svgMargin+16,
		xmlText(fmt.Sprintf("%s: page size %d, %d pages", filepath.Base(file), pageSize, n)))
	size := svgCell - svgGap
	for i, p := range pages {
		x, y := svgMargin+(i%cols)*svgCell, gridTop+(i/cols)*svgCell
		c := classes[classify(p)]
		class := ""
		if c.fill == svgUnused {
			class = ` class="u"`
		}
		tip := fmt.Sprintf("page %d: %s", p.Pgno, p.Kind)
		if p.Owner != "" {
			tip += " of " + p.Owner
		}
		fmt.Fprintf(&b, `<rect id="p%d"%s x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
			p.Pgno, class, x, y, size, size, c.fill, xmlText(tip))
	}
	b.WriteString("</g>\n<g id=\"legend\">\n")
	for i, c := range legend {
		y := legendTop + i*svgLegendH
		class := ""
		if c.fill == svgUnused {
			class = ` class="u"`
		}
		plural := "s"
		if c.pages == 1 {
			plural = ""
		}
		fmt.Fprintf(&b, `<g class="entry"><rect%s x="%d" y="%d" width="%d" height="%d" fill="%s"/><text x="%d" y="%d">%s</text></g>`+"\n",
			class, svgMargin, y, size, size, c.fill, svgMargin+svgCell+6, y+size, xmlText(fmt.Sprintf("%s: %d page%s", c.label, c.pages, plural)))
	}
	b.WriteString("</g>\n</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// xmlText escapes s for XML text and attributes; bytes that are not UTF-8
// or not allowed in XML (control characters) become '?'.
func xmlText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r == 0xFFFD || r == 0xFFFE || r == 0xFFFF {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(s)
}
