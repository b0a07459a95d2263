package command

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func init() { extraCommands = append(extraCommands, newStatsCmd) }

func newStatsCmd() *cli.Command {
	var asJSON bool
	cmd := &cli.Command{
		Use:   "stats FILE [TABLE]",
		Short: "Print the space each table and index takes, as bbolt stats and sqlite3_analyzer",
		Long: `Print one line per b-tree (sqlite_schema, each table, each index; with
TABLE, that table and its indexes) and then the file's totals:

  PAGES     pages of the tree: LEAF + INTERIOR + OVERFLOW
  DEPTH     levels from the root to the leaves
  ENTRIES   rows of a table, entries of an index (or WITHOUT ROWID table)
  PAYLOAD   bytes of keys and values, overflow pages included
  UNUSED    bytes that hold nothing: free space on b-tree pages, the tail of
            the last page of each overflow chain
  FILL      the share of the tree's bytes that are not unused:
            100 × (1 − UNUSED / (PAGES × page size))

PAYLOAD and UNUSED are SQLite's dbstat figures (sqlite3_analyzer's), summed
over the tree's pages. The totals give the file's pages, its freelist
pages, and, in an auto-vacuum file, its pointer-map pages.

--json prints one JSON object: page_size, pages, free_pages,
pointer_map_pages, lock_byte_pages, and trees, a list of objects with the
columns above in lower case, plus name, type ("table" or "index") and
table (the table an index belongs to).`,
		Args: cli.RangeArgs(1, 2),
		RunE: func(cmd *cli.Command, args []string) error {
			return runView(cmd, args[0], func(tx *pagoda.Tx, out *output) error {
				table := ""
				if len(args) == 2 {
					table = args[1]
				}
				st, err := collectStats(tx, table)
				if err != nil {
					return err
				}
				if asJSON {
					b, err := json.MarshalIndent(st, "", "  ")
					if err != nil {
						return err
					}
					out.Write(append(b, '\n'))
					return nil
				}
				writeStats(out, st)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON object")
	return cmd
}

// fileStats is what stats prints.
type fileStats struct {
	PageSize      int         `json:"page_size"`
	Pages         int         `json:"pages"`
	FreePages     int         `json:"free_pages"`
	PtrMapPages   int         `json:"pointer_map_pages"`
	LockBytePages int         `json:"lock_byte_pages"`
	Trees         []treeStats `json:"trees"`
}

// treeStats is one b-tree's line.
type treeStats struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Table    string  `json:"table"`
	Pages    int     `json:"pages"`
	Leaf     int     `json:"leaf"`
	Interior int     `json:"interior"`
	Overflow int     `json:"overflow"`
	Depth    int     `json:"depth"`
	Entries  int64   `json:"entries"`
	Payload  int64   `json:"payload"`
	Unused   int64   `json:"unused"`
	Fill     float64 `json:"fill"`
}

// collectStats sums tx.Pages() by owner, for every b-tree of the schema or,
// when table is not "", for that table and its indexes.
func collectStats(tx *pagoda.Tx, table string) (*fileStats, error) {
	h, err := tx.Header()
	if err != nil {
		return nil, err
	}
	pages, err := tx.Pages()
	if err != nil {
		return nil, err
	}
	st := &fileStats{PageSize: h.PageSize, Pages: len(pages)}
	trees := map[string]*treeStats{}
	var order []string
	add := func(name, typ, tbl string) {
		if _, ok := trees[name]; !ok {
			trees[name] = &treeStats{Name: name, Type: typ, Table: tbl}
			order = append(order, name)
		}
	}
	if table == "" {
		add("sqlite_schema", "table", "sqlite_schema")
	} else {
		t, err := openTable(tx, table)
		if err != nil {
			return nil, err
		}
		table = t.Name()
	}
	for _, o := range tx.Objects() {
		if o.RootPage == 0 || (o.Type != "table" && o.Type != "index") {
			continue
		}
		if table == "" || strings.EqualFold(o.Table, table) {
			add(o.Name, o.Type, o.Table)
		}
	}
	for _, p := range pages {
		switch p.Kind {
		case "freelist trunk", "freelist leaf":
			st.FreePages++
		case "pointer map":
			st.PtrMapPages++
		case "lock-byte":
			st.LockBytePages++
		}
		t := trees[p.Owner]
		if t == nil {
			continue
		}
		t.Pages++
		t.Payload += int64(p.Payload)
		t.Unused += int64(p.Unused)
		switch p.Kind {
		case "overflow":
			t.Overflow++
			continue
		case "table leaf", "index leaf":
			t.Leaf++
			t.Entries += int64(p.Cells)
		case "index interior":
			t.Interior++
			t.Entries += int64(p.Cells) // an index's interior cells are entries too
		default:
			t.Interior++
		}
		t.Depth = max(t.Depth, p.Depth+1)
	}
	for _, name := range order {
		t := trees[name]
		if t.Pages > 0 {
			t.Fill = 100 * (1 - float64(t.Unused)/float64(t.Pages*st.PageSize))
		}
		st.Trees = append(st.Trees, *t)
	}
	return st, nil
}

// writeStats prints st as aligned columns and a line of totals.
func writeStats(out *output, st *fileStats) {
	wName := len("NAME")
	for _, t := range st.Trees {
		wName = max(wName, len(t.Name))
	}
	tw := tabwriter.NewWriter(out, 0, 8, 0, ' ', tabwriter.AlignRight) // two spaces begin each column but the first
	fmt.Fprintf(tw, "%-*s\t  TYPE\t  PAGES\t  LEAF\t  INTERIOR\t  OVERFLOW\t  DEPTH\t  ENTRIES\t  PAYLOAD\t  UNUSED\t  FILL\t\n", wName, "NAME")
	for _, t := range st.Trees {
		fmt.Fprintf(tw, "%-*s\t  %s\t  %d\t  %d\t  %d\t  %d\t  %d\t  %d\t  %d\t  %d\t  %.1f%%\t\n",
			wName, t.Name, t.Type, t.Pages, t.Leaf, t.Interior, t.Overflow, t.Depth, t.Entries, t.Payload, t.Unused, t.Fill)
	}
	tw.Flush()
	fmt.Fprintf(out, "page size %d, %d pages, %d free pages", st.PageSize, st.Pages, st.FreePages)
	if st.PtrMapPages > 0 {
		fmt.Fprintf(out, ", %d pointer-map pages", st.PtrMapPages)
	}
	if st.LockBytePages > 0 {
		fmt.Fprintf(out, ", %d lock-byte page", st.LockBytePages)
	}
	fmt.Fprintln(out)
}
