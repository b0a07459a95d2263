package command

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func init() { extraCommands = append(extraCommands, newDeleteCommand) }

func newDeleteCommand() *cli.Command {
	var isHex bool
	cmd := &cli.Command{
		Use:   "delete FILE TABLE [--] KEY",
		Short: "Delete one row, or one bucket key",
		Long: `Delete the row of TABLE whose key is KEY, with its index entries.

KEY is the key for buckets (its bytes; hex with --hex), the rowid for rowid
tables, and the primary-key value for other WITHOUT ROWID tables (only
single-column primary keys): an integer if it parses as one and the column
has INTEGER affinity (its declared type contains "INT"), else text, to
which the column's affinity applies as in SQLite. A missing key is an
error. FILE must exist. A negative KEY is a key, not a flag: pagoda
delete app.db t -3.`,
		Args: cli.ExactArgs(3),
		RunE: func(cmd *cli.Command, args []string) error {
			return update(args[0], false, func(tx *pagoda.Tx) error {
				return deleteKey(tx, args[1], args[2], isHex)
			})
		},
	}
	cmd.Flags().BoolVar(&isHex, "hex", false, "buckets: KEY is given in hex")
	return cmd
}

func deleteKey(tx *pagoda.Tx, table, key string, isHex bool) error {
	t, err := openTable(tx, table)
	if err != nil {
		return err
	}
	notFound := func(err error) error {
		if errors.Is(err, pagoda.ErrNotFound) {
			return &cmdError{msg: t.Name() + ": key " + strconv.Quote(key) + " not found", err: err}
		}
		return err
	}
	switch {
	case t.IsBucket():
		k, err := parseKey(t, key, isHex)
		if err != nil {
			return err
		}
		b, err := tx.Bucket(t.Name())
		if err != nil {
			return err
		}
		// Bucket.Delete ignores missing keys; the command reports them.
		if _, err := b.Get(k.pk.([]byte)); err != nil {
			return notFound(err)
		}
		return b.Delete(k.pk.([]byte))
	case !t.WithoutRowID():
		k, err := parseKey(t, key, false)
		if err != nil {
			return err
		}
		return notFound(t.Delete(k.rowid))
	}
	pk, err := primaryKeyArg(t, key)
	if err != nil {
		return err
	}
	return notFound(t.DeleteKey(pk))
}

// primaryKeyArg converts s to the value of the single primary-key column
// of WITHOUT ROWID table t: an int64 if s parses as one and the column has
// INTEGER affinity, else the text s (the engine applies the column's
// affinity to it, as SQLite does to a text literal).
func primaryKeyArg(t *pagoda.Table, s string) (any, error) {
	var pk []pagoda.Column
	for _, c := range t.Columns() {
		if c.PrimaryKey {
			pk = append(pk, c)
		}
	}
	if len(pk) != 1 {
		return nil, fmt.Errorf("%s: primary key has %d columns; only single-column keys can be given on the command line", t.Name(), len(pk))
	}
	if strings.Contains(strings.ToUpper(pk[0].Type), "INT") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
	}
	return s, nil
}
