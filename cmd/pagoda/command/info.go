package command

import (
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func newInfoCmd() *cli.Command {
	return &cli.Command{
		Use:   "info FILE",
		Short: "Print the database header and the size of every table and index",
		Long: `Print the fields of the database header, then each table with its row
count (buckets marked) followed by its indexes with their entry counts.

A virtual table (FTS5, R*Tree, ...) shows "-": its rows are made by its
module, which pagoda does not run; the shadow tables where the module keeps
them are counted, and marked. Any other table or index that cannot be
counted shows "?"; its error is printed at the end and the exit code is 1.`,
		Args: cli.ExactArgs(1),
		RunE: func(cmd *cli.Command, args []string) error {
			return runView(cmd, args[0], func(tx *pagoda.Tx, out *output) error {
				h, err := tx.Header()
				if err != nil {
					return err
				}
				writeHeader(out, h)
				return writeTables(out, tx)
			})
		},
	}
}

// writeHeader prints the header fields, one "name: value" line each.
func writeHeader(out *output, h pagoda.HeaderInfo) {
	tw := tabwriter.NewWriter(out, 0, 8, 1, ' ', 0)
	line := func(name string, format string, a ...any) {
		fmt.Fprintf(tw, "%s:\t"+format+"\n", append([]any{name}, a...)...)
	}
	line("page size", "%d", h.PageSize)
	if h.PageCount == 0 {
		line("page count", "0 (empty database: no header yet)")
		tw.Flush()
		return
	}
	line("write format", "%d (%s)", h.WriteVersion, fileFormatName(h.WriteVersion))
	line("read format", "%d (%s)", h.ReadVersion, fileFormatName(h.ReadVersion))
	line("reserved bytes", "%d", h.ReservedBytes)
	line("change counter", "%d", h.ChangeCounter)
	line("database size in header", "%d pages", h.DatabaseSize)
	line("page count", "%d", h.PageCount)
	line("freelist trunk page", "%d", h.FreelistTrunk)
	line("freelist pages", "%d", h.FreelistCount)
	line("schema cookie", "%d", h.SchemaCookie)
	line("schema format", "%d", h.SchemaFormat)
	line("auto-vacuum", "%s", autoVacuumName(h.AutoVacuumRoot, h.IncrementalVacuum))
	line("text encoding", "%d (%s)", h.TextEncoding, textEncodingName(h.TextEncoding))
	line("user version", "%d", h.UserVersion)
	line("application id", "%d", h.ApplicationID)
	line("sqlite version", "%s", sqliteVersion(h.SQLiteVersion))
	line("wal frames", "%d", h.WALFrames)
	tw.Flush()
}

// writeTables prints each table with its row count and its indexes with
// their entry counts, in schema order. Counting errors are returned joined.
func writeTables(out *output, tx *pagoda.Tx) error {
	type row struct{ name, count, unit, kind string }
	var rows []row
	var errs []error
	count := func(n int64, err error) string {
		if err != nil {
			errs = append(errs, err)
			return "?"
		}
		return strconv.FormatInt(n, 10)
	}
	objs := tx.Objects()
	for _, o := range objs {
		if o.Type != "table" {
			continue
		}
		r := row{name: o.Name, count: "?", unit: "rows", kind: "table"}
		if o.RootPage == 0 && o.Module != "" {
			// No b-tree to count: the module makes the rows, from its
			// shadow tables, which are counted as tables.
			r.count, r.unit, r.kind = "-", "", "virtual table ("+o.Module+")"
			rows = append(rows, r)
			continue
		}
		if t, err := tx.Table(o.Name); err != nil {
			errs = append(errs, err)
		} else {
			if t.IsBucket() {
				r.kind = "bucket"
			} else if t.WithoutRowID() {
				r.kind = "table, without rowid"
			}
			if o.ShadowOf != "" {
				r.kind += ", shadow of " + o.ShadowOf
			}
			r.count = count(t.Count())
		}
		rows = append(rows, r)
		for _, ix := range objs {
			if ix.Type != "index" || ix.Table != o.Name {
				continue
			}
			r := row{name: "  " + ix.Name, count: "?", unit: "entries", kind: "index"}
			if x, err := tx.Index(ix.Name); err != nil {
				errs = append(errs, err)
			} else {
				r.count = count(x.Count())
			}
			rows = append(rows, r)
		}
	}
	wName, wCount := 0, 0
	for _, r := range rows {
		wName, wCount = max(wName, len(r.name)), max(wCount, len(r.count))
	}
	fmt.Fprintf(out, "\n%d tables\n", len(tx.TableNames()))
	var buf []byte
	for _, r := range rows {
		buf = fmt.Appendf(buf[:0], "  %-*s  %*s %-7s  %s\n", wName, r.name, wCount, r.count, r.unit, r.kind)
		out.Write(buf)
	}
	return errors.Join(errs...)
}

// fileFormatName names the header's read/write version bytes.
func fileFormatName(v int) string {
	switch v {
	case 1:
		return "legacy"
	case 2:
		return "wal"
	}
	return "unknown"
}

// textEncodingName names the header's text encoding.
func textEncodingName(e uint32) string {
	switch e {
	case 0:
		return "unset"
	case 1:
		return "utf8"
	case 2:
		return "utf16le"
	case 3:
		return "utf16be"
	}
	return "unknown"
}

// sqliteVersion renders SQLITE_VERSION_NUMBER (X*1000000 + Y*1000 + Z) as
// X.Y.Z.
func sqliteVersion(n uint32) string {
	if n == 0 {
		return "0 (unset)"
	}
	return fmt.Sprintf("%d.%d.%d (%d)", n/1000000, n/1000%1000, n%1000, n)
}

// autoVacuumName describes the auto-vacuum mode of header offsets 52 (the
// largest root page, non-zero in an auto-vacuum file) and 64 (incremental).
func autoVacuumName(largestRoot, incremental uint32) string {
	switch {
	case largestRoot == 0:
		return "none"
	case incremental != 0:
		return fmt.Sprintf("incremental (largest root page %d; pagoda reads it, does not write it)", largestRoot)
	}
	return fmt.Sprintf("full (largest root page %d; pagoda reads it, does not write it)", largestRoot)
}
