package command

import (
	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func newTablesCmd() *cli.Command {
	return &cli.Command{
		Use:   "tables FILE",
		Short: "List the tables, one name per line",
		Long:  "List the names of the tables (buckets included), one per line, in schema order.",
		Args:  cli.ExactArgs(1),
		RunE: func(cmd *cli.Command, args []string) error {
			return runView(cmd, args[0], func(tx *pagoda.Tx, out *output) error {
				for _, name := range tx.TableNames() {
					out.WriteString(name)
					out.WriteString("\n")
				}
				return nil
			})
		},
	}
}
