package command

import (
	"fmt"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func init() { extraCommands = append(extraCommands, newBackupCommand, newCompactCommand) }

func newBackupCommand() *cli.Command {
	return &cli.Command{
		Use:   "backup FILE DEST",
		Short: "Write a consistent copy of the database to a new file",
		Long: `Write a consistent copy of FILE, as of its last commit, to DEST: every
page, with the changes still in FILE's WAL in place, so DEST needs no
WAL. DEST must not exist; it appears complete or not at all. FILE is
only read.`,
		Args: cli.ExactArgs(2),
		RunE: func(cmd *cli.Command, args []string) error {
			db, err := pagoda.Open(args[0], &pagoda.Options{ReadOnly: true, Timeout: lockWait})
			if err != nil {
				return err
			}
			defer db.Close()
			if err := db.Backup(args[1]); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: backed up to %s\n", args[0], args[1])
			return err
		},
	}
}

func newCompactCommand() *cli.Command {
	return &cli.Command{
		Use:   "compact FILE DEST",
		Short: "Write a dense copy of the database to a new file",
		Long: `Write a dense copy of FILE to DEST: every table and index copied in key
order into full pages, no free pages, the schema and the header's user
version and application id kept. DEST must not exist; it appears
complete or not at all. FILE is only read. Prints both sizes in pages.`,
		Args: cli.ExactArgs(2),
		RunE: func(cmd *cli.Command, args []string) error {
			db, err := pagoda.Open(args[0], &pagoda.Options{ReadOnly: true, Timeout: lockWait})
			if err != nil {
				return err
			}
			defer db.Close()
			if err := db.Compact(args[1]); err != nil {
				return err
			}
			before, err := header(db)
			if err != nil {
				return err
			}
			out, err := pagoda.Open(args[1], &pagoda.Options{ReadOnly: true, Timeout: lockWait})
			if err != nil {
				return err
			}
			defer out.Close()
			after, err := header(out)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: %d pages (%d free) compacted to %s: %d pages\n",
				args[0], before.PageCount, before.FreelistCount, args[1], after.PageCount)
			return err
		},
	}
}

// header returns the header of db's last commit.
func header(db *pagoda.DB) (h pagoda.HeaderInfo, err error) {
	err = db.View(func(tx *pagoda.Tx) error {
		h, err = tx.Header()
		return err
	})
	return h, err
}
