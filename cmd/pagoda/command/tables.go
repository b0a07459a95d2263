package command

import (
	"github.com/spf13/cobra"

	"github.com/pagodadb/pagoda"
)

func newTablesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "tables FILE",
		Short: "List the tables, one name per line",
		Long:  "List the names of the tables (buckets included), one per line, in schema order.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
