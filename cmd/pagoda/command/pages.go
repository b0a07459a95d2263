package command

import (
	"fmt"
	"os"
	"strconv"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func newPagesCmd() *cli.Command {
	var svgOut string
	cmd := &cli.Command{
		Use:   "pages FILE",
		Short: "Describe every page of the file",
		Long: `Print one line per page: its number, kind, cells and free bytes (b-tree
pages; "-" otherwise), "wal" when the page is served from the WAL, and the
table or index that owns it. Kinds: table leaf, table interior, index leaf,
index interior, overflow, freelist trunk, freelist leaf, pointer map (in an
auto-vacuum file), lock-byte, unused (reached by nothing).

--svg OUT.svg draws the file instead, as a picture that a browser opens:
one square per page, in page order, coloured by owner (page 1, each table
and index, the overflow pages of each in a lighter shade, freelist trunks
and leaves, pointer maps, the lock-byte page), with a legend counting each,
and a title giving the file, its page size and its page count. Hovering
over a square names its page.

A damaged tree does not stop the listing: every page is printed (or
drawn), then the errors, and the exit code is 1.`,
		Args: cli.ExactArgs(1),
		RunE: func(cmd *cli.Command, args []string) error {
			return runView(cmd, args[0], func(tx *pagoda.Tx, out *output) error {
				pages, err := tx.Pages()
				if svgOut == "" {
					writePages(out, pages)
					return err
				}
				f, ferr := os.OpenFile(svgOut, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
				if ferr != nil {
					return ferr
				}
				ferr = writePagesSVG(f, args[0], tx.DB().PageSize(), pages, tx.Objects())
				if cerr := f.Close(); ferr == nil {
					ferr = cerr
				}
				if ferr != nil {
					return ferr
				}
				fmt.Fprintf(out, "wrote %s: %d pages\n", svgOut, len(pages))
				return err
			})
		},
	}
	cmd.Flags().StringVar(&svgOut, "svg", "", "draw the pages into the SVG file `OUT.svg` instead")
	return cmd
}

// writePages prints pages as aligned columns under a header line.
func writePages(out *output, pages []pagoda.PageInfo) {
	wPage, wCells, wFree := len("PAGE"), len("CELLS"), len("FREE")
	if n := len(pages); n > 0 {
		wPage = max(wPage, len(strconv.FormatUint(uint64(pages[n-1].Pgno), 10)))
	}
	for _, p := range pages {
		wCells = max(wCells, len(strconv.Itoa(p.Cells)))
		wFree = max(wFree, len(strconv.Itoa(p.Free)))
	}
	const wKind = len("freelist trunk")
	fmt.Fprintf(out, "%*s  %-*s  %*s  %*s  %-3s  %s\n", wPage, "PAGE", wKind, "KIND", wCells, "CELLS", wFree, "FREE", "WAL", "OWNER")
	var buf []byte
	for _, p := range pages {
		cells, free, wal, owner := "-", "-", "-", "-"
		if isBTreeKind(p.Kind) {
			cells = strconv.Itoa(p.Cells)
		}
		if p.Free >= 0 {
			free = strconv.Itoa(p.Free)
		}
		if p.InWAL {
			wal = "wal"
		}
		if p.Owner != "" {
			owner = p.Owner
		}
		buf = fmt.Appendf(buf[:0], "%*d  %-*s  %*s  %*s  %-3s  %s\n", wPage, p.Pgno, wKind, p.Kind, wCells, cells, wFree, free, wal, owner)
		if _, err := out.Write(buf); err != nil {
			return
		}
	}
}

// isBTreeKind reports whether a PageInfo kind is a b-tree page.
func isBTreeKind(kind string) bool {
	switch kind {
	case "table leaf", "table interior", "index leaf", "index interior":
		return true
	}
	return false
}
