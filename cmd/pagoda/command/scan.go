package command

import (
	"fmt"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

type scanFlags struct {
	from    string
	hasFrom bool
	limit   int64
	json    bool
	hex     bool
	csv     bool
	header  bool
}

func newScanCmd() *cli.Command {
	var f scanFlags
	cmd := &cli.Command{
		Use:   "scan FILE TABLE",
		Short: "Print the rows of a table or bucket",
		Long: `Print the rows of TABLE in rowid order (key order for WITHOUT ROWID
tables and buckets).

Without --json, rows are printed as sqlite3's default list mode prints them:
columns separated by '|', NULL as nothing, REALs as sqlite3 renders them,
text and blobs as their raw bytes; a bucket prints key|value. With --hex,
blobs (a bucket's keys and values) are printed in hex.

--from starts at the first row whose key is >= K: a rowid for rowid tables,
the key for buckets (hex with --hex), or the primary-key value of other
WITHOUT ROWID tables (an integer if it parses as one, else text; only
single-column primary keys). --limit stops after N rows (0: no limit).

--header prints the column names first (sqlite3's .headers on), joined
by '|' (a bucket's: key|value).

` + csvScanHelp + `

` + jsonHelp,
		Args: cli.ExactArgs(2),
		RunE: func(cmd *cli.Command, args []string) error {
			f.hasFrom = cmd.Flags().Changed("from")
			if f.csv && f.json {
				return fmt.Errorf("--csv and --json cannot be used together")
			}
			if f.limit < 0 {
				return fmt.Errorf("--limit must not be negative")
			}
			return runView(cmd, args[0], func(tx *pagoda.Tx, out *output) error {
				return scan(tx, out, args[1], &f)
			})
		},
	}
	cmd.Flags().StringVar(&f.from, "from", "", "start at the first row whose rowid or key is >= `K`")
	cmd.Flags().Int64Var(&f.limit, "limit", 0, "print at most `N` rows (0: all)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print one JSON array per row")
	cmd.Flags().BoolVar(&f.hex, "hex", false, "--from is hex (buckets); blobs are printed in hex (list and CSV modes)")
	cmd.Flags().BoolVar(&f.csv, "csv", false, "print CSV with a header line, as sqlite3 -csv -header")
	cmd.Flags().BoolVar(&f.header, "header", false, "print the column names first (list mode)")
	return cmd
}

func scan(tx *pagoda.Tx, out *output, table string, f *scanFlags) error {
	t, err := openTable(tx, table)
	if err != nil {
		return err
	}
	c := t.Cursor()
	var ok bool
	switch {
	case !f.hasFrom:
		ok = c.First()
	default:
		k, err := parseKey(t, f.from, f.hex)
		if err != nil {
			return err
		}
		if t.WithoutRowID() {
			ok = c.SeekKey(k.pk)
		} else {
			ok = c.SeekRowid(k.rowid)
		}
	}
	var buf []byte
	if f.csv || (f.header && !f.json) {
		sep := byte('|')
		if f.csv {
			sep = ','
		}
		if _, err := out.Write(appendHeader(nil, t, sep)); err != nil {
			return err
		}
	}
	for n := int64(0); ok && (f.limit == 0 || n < f.limit); n++ {
		buf = buf[:0]
		switch {
		case f.json:
			buf = appendJSONRow(buf, c.Record())
		case f.csv:
			buf = appendCSVRow(buf, c.Record(), f.hex)
		default:
			buf = appendListRow(buf, c.Record(), f.hex)
		}
		if err := tx.Err(); err != nil {
			// A column that could not be read (malformed, or a generated
			// column pagoda does not compute): stop before its row, so
			// that no row is printed with a NULL that is not SQLite's.
			return err
		}
		if _, err := out.Write(buf); err != nil {
			return err
		}
		ok = c.Next()
	}
	return c.Err()
}
