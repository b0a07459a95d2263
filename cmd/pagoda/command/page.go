package command

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func init() { extraCommands = append(extraCommands, newPageCmd) }

func newPageCmd() *cli.Command {
	return &cli.Command{
		Use:   "page FILE N",
		Short: "Decode one page, as bbolt page",
		Long: `Decode page N (1 to the file's page count): its kind and owner as pages
prints them, then by kind:

  b-tree pages   the page header (first freeblock, cell content offset,
                 fragmented bytes, right child), payload and unused bytes,
                 one line per cell (offset, left child, rowid, payload
                 length, bytes on the page, first overflow page, and the
                 record's values that lie on the page, as SQL literals,
                 control characters as '.', cut at 60 characters), then the freeblocks
  overflow       the next page of the chain and the bytes of the value
  freelist trunk the next trunk and the leaf pages it lists
  pointer map    one line per page it maps: type and parent
  lock-byte      the page that holds sqlite3's lock bytes, never written
  page 1         also holds the 100-byte database header (see info)`,
		Args: cli.ExactArgs(2),
		RunE: func(cmd *cli.Command, args []string) error {
			n, err := strconv.ParseUint(args[1], 10, 32)
			if err != nil {
				return fmt.Errorf("page number %q is not a positive integer", args[1])
			}
			return runView(cmd, args[0], func(tx *pagoda.Tx, out *output) error {
				d, err := tx.Page(uint32(n))
				if errors.Is(err, pagoda.ErrNotFound) {
					return &cmdError{msg: fmt.Sprintf("page %d is out of range: the file has pages 1 to %d", n, tx.PageCount()), err: err}
				}
				writePage(out, tx.PageCount(), &d)
				return err // a damaged file: what could be decoded is printed
			})
		},
	}
}

// writePage prints d.
func writePage(out *output, pageCount uint32, d *pagoda.PageDetail) {
	fmt.Fprintf(out, "page %d of %d: %s", d.Pgno, pageCount, d.Kind)
	if d.Owner != "" {
		fmt.Fprintf(out, " of %s", d.Owner)
	}
	if d.InWAL {
		fmt.Fprint(out, " (read from the WAL)")
	}
	fmt.Fprintln(out)
	if d.Pgno == 1 {
		fmt.Fprintln(out, "database header: bytes 0 to 99 (see pagoda info)")
	}
	switch d.Kind {
	case "table leaf", "table interior", "index leaf", "index interior":
		writeBtreePage(out, d)
	case "overflow":
		fmt.Fprintf(out, "next page: %s\npayload: %d bytes\nunused: %d bytes\n", pageRef(d.Next), d.Payload, d.Unused)
	case "freelist trunk":
		fmt.Fprintf(out, "next trunk: %s\nleaves: %d\n", pageRef(d.Next), len(d.Leaves))
		for i := 0; i < len(d.Leaves); i += 10 {
			parts := make([]string, 0, 10)
			for _, l := range d.Leaves[i:min(i+10, len(d.Leaves))] {
				parts = append(parts, strconv.FormatUint(uint64(l), 10))
			}
			fmt.Fprintf(out, "  %s\n", strings.Join(parts, " "))
		}
	case "freelist leaf":
		fmt.Fprintln(out, "a free page: its bytes mean nothing")
	case "pointer map":
		tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  PAGE\tTYPE\tPARENT")
		for _, e := range d.PtrMap {
			fmt.Fprintf(tw, "  %d\t%s\t%s\n", e.Pgno, e.Type, pageRef(e.Parent))
		}
		tw.Flush()
	case "lock-byte":
		fmt.Fprintln(out, "the lock-byte page: sqlite3 locks bytes of it and never writes it")
	case "unused":
		fmt.Fprintln(out, "reached by no b-tree and not on the freelist")
	}
}

// writeBtreePage prints a b-tree page's header, cells and freeblocks.
func writeBtreePage(out *output, d *pagoda.PageDetail) {
	fmt.Fprintf(out, "depth: %d\ncells: %d\nfirst freeblock: %d\ncell content: %d\nfragmented bytes: %d\n",
		d.Depth, d.Cells, d.FirstFreeblock, d.CellContent, d.Fragmented)
	if strings.HasSuffix(d.Kind, "interior") {
		fmt.Fprintf(out, "right child: %d\n", d.RightChild)
	}
	fmt.Fprintf(out, "payload: %d bytes\nunused: %d bytes\n", d.Payload, d.Unused)
	table, interior := strings.HasPrefix(d.Kind, "table"), strings.HasSuffix(d.Kind, "interior")
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	head := "  CELL\tOFFSET"
	if interior {
		head += "\tCHILD"
	}
	if table {
		head += "\tROWID"
	}
	if !(table && interior) {
		head += "\tPAYLOAD\tLOCAL\tOVERFLOW\tVALUES"
	}
	fmt.Fprintln(tw, head)
	var buf []byte
	for i, c := range d.CellList {
		buf = fmt.Appendf(buf[:0], "  %d\t%d", i, c.Offset)
		if interior {
			buf = fmt.Appendf(buf, "\t%d", c.Child)
		}
		if table {
			buf = fmt.Appendf(buf, "\t%d", c.Rowid)
		}
		if !(table && interior) {
			buf = fmt.Appendf(buf, "\t%d\t%d\t%s\t%s", c.Payload, c.Local, pageRef(c.Overflow), valuesSummary(c))
		}
		tw.Write(append(buf, '\n'))
	}
	tw.Flush()
	if len(d.Freeblocks) > 0 {
		parts := make([]string, len(d.Freeblocks))
		for i, f := range d.Freeblocks {
			parts[i] = fmt.Sprintf("%d+%d", f.Offset, f.Size)
		}
		fmt.Fprintf(out, "freeblocks (offset+size): %s\n", strings.Join(parts, " "))
	}
}

// valuesSummary renders a cell's values as SQL literals in parentheses
// (text quoted, its control characters and bytes that are not UTF-8 as
// '.'), cut at 60 characters; "..." marks values cut or left on overflow
// pages.
func valuesSummary(c pagoda.CellInfo) string {
	const width = 60
	var b []byte
	b = append(b, '(')
	for i, v := range c.Values {
		if i > 0 {
			b = append(b, ", "...)
		}
		if v.Type() == pagoda.TypeText {
			b = append(b, '\'')
			b = append(b, strings.ReplaceAll(v.Text(), "'", "''")...)
			b = append(b, '\'')
		} else {
			b = appendSQLValue(b, v)
		}
		if len(b) > width {
			break
		}
	}
	s := string(b)
	if len(s) > width {
		return printable(s[:width]) + "..."
	}
	if c.Overflow != 0 {
		return printable(s) + ", ...)"
	}
	return printable(s) + ")"
}

// printable replaces bytes that would upset a terminal (control
// characters, bytes that are not UTF-8) with '.'.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return '.'
		}
		return r
	}, strings.ToValidUTF8(s, "."))
}

// pageRef renders a page number, "-" for 0 (none).
func pageRef(p uint32) string {
	if p == 0 {
		return "-"
	}
	return strconv.FormatUint(uint64(p), 10)
}
