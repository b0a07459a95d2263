package command

import (
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func newGetCmd() *cli.Command {
	var isHex bool
	cmd := &cli.Command{
		Use:   "get FILE TABLE [--] KEY",
		Short: "Print one row, or one bucket value",
		Long: `Print the row of TABLE whose key is KEY.

KEY is the rowid for rowid tables, the key for buckets, and the primary-key
value for other WITHOUT ROWID tables (an integer if it parses as one, else
text; only single-column primary keys). A row is printed as one JSON array,
as scan --json prints it. A bucket's value is printed raw, followed by a
newline; with --hex, KEY is given in hex and the value is printed in hex.
A negative KEY is a key, not a flag: pagoda get app.db t -3.

` + jsonHelp,
		Args: cli.ExactArgs(3),
		RunE: func(cmd *cli.Command, args []string) error {
			return runView(cmd, args[0], func(tx *pagoda.Tx, out *output) error {
				return get(tx, out, args[1], args[2], isHex)
			})
		},
	}
	cmd.Flags().BoolVar(&isHex, "hex", false, "buckets: KEY is hex and the value is printed in hex")
	return cmd
}

func get(tx *pagoda.Tx, out *output, table, key string, isHex bool) error {
	t, err := openTable(tx, table)
	if err != nil {
		return err
	}
	k, err := parseKey(t, key, isHex)
	if err != nil {
		return err
	}
	notFound := func(err error) error {
		if errors.Is(err, pagoda.ErrNotFound) {
			return &cmdError{msg: t.Name() + ": key " + strconv.Quote(key) + " not found", err: err}
		}
		return err
	}
	if t.IsBucket() {
		b, err := tx.Bucket(t.Name())
		if err != nil {
			return err
		}
		v, err := b.Get(k.pk.([]byte))
		if err != nil {
			return notFound(err)
		}
		if isHex {
			out.Write(hex.AppendEncode(nil, v))
		} else {
			out.Write(v)
		}
		out.WriteString("\n")
		return nil
	}
	var rec pagoda.Record
	if t.WithoutRowID() {
		rec, err = t.GetKey(k.pk)
	} else {
		rec, err = t.Get(k.rowid)
	}
	if err != nil {
		return notFound(err)
	}
	row := appendJSONRow(nil, rec)
	if err := tx.Err(); err != nil {
		return err // a column that could not be read: no row with a NULL that is not SQLite's
	}
	out.Write(row)
	return nil
}
