package command

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func init() { extraCommands = append(extraCommands, newCheckCommand) }

func newCheckCommand() *cli.Command {
	return &cli.Command{
		Use:   "check FILE",
		Short: "Verify every page, key and index entry of the database",
		Long: `Verify the database the way sqlite3's PRAGMA integrity_check does: every
page used exactly once (b-trees, overflow chains, freelist), every b-tree
page well formed, keys in order, overflow chains and the freelist of the
right length, and every table row with exactly its entry in each index.

Prints "ok" when the database is sound. Otherwise prints each problem on
its own line ("page N: what is wrong"), at most 100, and exits with
status 1.`,
		Args: cli.ExactArgs(1),
		RunE: func(cmd *cli.Command, args []string) error {
			path := args[0]
			db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true, Timeout: lockWait})
			if err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) && pe.Path == path {
					return pe
				}
				return err
			}
			defer db.Close()
			err = db.Check()
			var ce *pagoda.CheckError
			if !errors.As(err, &ce) {
				if err != nil {
					return err
				}
				_, err := fmt.Fprintln(cmd.OutOrStdout(), "ok")
				return err
			}
			out := newOutput(cmd)
			for _, p := range ce.Problems {
				out.WriteString(p.String() + "\n")
			}
			if err := out.Flush(); err != nil {
				return err
			}
			n := len(ce.Problems)
			msg := fmt.Sprintf("%s: %d problems found", path, n)
			if n == 1 {
				msg = fmt.Sprintf("%s: 1 problem found", path)
			}
			return &cmdError{msg: msg, err: err}
		},
	}
}
