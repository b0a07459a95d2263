// Package command implements the pagoda command-line tool: one file per
// subcommand, each going through pagoda's public API only.
package command

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

// lockWait is how long a command waits for a lock that another connection
// holds: as sqlite3's .timeout, so that a command started beside a writer
// committing, or a last connection closing (which holds the file while it
// checkpoints), does not fail at once with "database is locked".
const lockWait = 5 * time.Second

// extraCommands holds constructors of subcommands that register themselves
// from their own files (in an init func), such as check.
var extraCommands []func() *cli.Command

// NewRoot builds the pagoda command and its subcommands. Commands write
// their output to cmd.OutOrStdout(); errors are returned, not printed (see
// Execute).
func NewRoot() *cli.Command {
	root := &cli.Command{
		Use:   "pagoda",
		Short: "Inspect pagoda (SQLite 3) database files",
		Long: `Inspect pagoda (SQLite 3) database files.

Commands wait up to 5 s for a lock another connection holds (sqlite3's
.timeout), then fail with "database is locked" or "database is busy".

Exit status: 0 on success; 1 after an error, printed as "pagoda: <error>".
A command that writes commits all its changes or none. When its commit is
durable but the checkpoint as it closes the file fails (a full disk, say),
it prints "pagoda: warning: the commit stands..." and exits 0: the changes
are in FILE-wal, which the next program to open FILE (pagoda or sqlite3)
reads and checkpoints.`,
	}
	journalMode = pagoda.JournalDefault
	root.PersistentFlags().Var(journalModeFlag{&journalMode}, "journal-mode",
		"how commands that write do it: `MODE` is default (a file keeps its journal mode; a new file is WAL), wal, or delete (a rollback journal, sqlite3's default mode: for new files too, and a WAL-mode file converts when nothing else has it open)")
	root.AddCommand(
		newInfoCmd(),
		newTablesCmd(),
		newSchemaCmd(),
		newGetCmd(),
		newScanCmd(),
		newPagesCmd(),
		newFSCmd(),
	)
	for _, c := range extraCommands {
		root.AddCommand(c())
	}
	version := root.Flags().BoolP("version", "v", false, "print pagoda's version (as pagoda version does)")
	root.RunE = func(cmd *cli.Command, args []string) error {
		if *version {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionText())
			return err
		}
		return cmd.Help()
	}
	withUsage(root)
	root.SetFlagErrorFunc(func(c *cli.Command, err error) error {
		return &usageError{err: err, cmd: c}
	})
	return root
}

// journalMode is the --journal-mode flag's value, for the commands that
// write (update).
var journalMode pagoda.JournalMode

// journalModeFlag parses --journal-mode.
type journalModeFlag struct{ m *pagoda.JournalMode }

func (f journalModeFlag) String() string {
	if f.m == nil || *f.m == pagoda.JournalDefault {
		return "" // no "(default default)" in the help
	}
	return f.m.String()
}

func (f journalModeFlag) Set(s string) error {
	for _, m := range []pagoda.JournalMode{pagoda.JournalDefault, pagoda.JournalWAL, pagoda.JournalDelete} {
		if strings.EqualFold(s, m.String()) {
			*f.m = m
			return nil
		}
	}
	return fmt.Errorf("journal mode %q: want default, wal or delete", s)
}

func (f journalModeFlag) Type() string { return "mode" }

// usageError is an error in a command's arguments or flags: Execute
// prints the command's usage line after it.
type usageError struct {
	err error
	cmd *cli.Command
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// withUsage makes the argument checks of c and its subcommands return
// usageErrors.
func withUsage(c *cli.Command) {
	for _, sub := range c.Commands() {
		withUsage(sub)
	}
	if c.Args == nil {
		return
	}
	check := c.Args
	c.Args = func(cmd *cli.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{err: err, cmd: cmd}
		}
		return nil
	}
}

// Execute runs the command line in os.Args and returns the process exit
// code: 0, or 1 after printing "pagoda: <error>" on stderr. A command whose
// work was done but for a warning (a commit that stands although the
// checkpoint at close failed) prints "pagoda: warning: <warning>" and
// returns 0.
func Execute() int { return ExecuteArgs(os.Args[1:]) }

// ExecuteArgs is Execute with the command line args.
func ExecuteArgs(args []string) int {
	root := NewRoot()
	root.SetArgs(args)
	return execute(root)
}

// execute runs root and reports its error on root's error stream.
func execute(root *cli.Command) int {
	err := root.Execute()
	switch {
	case err == nil:
		return 0
	case committed(err):
		fmt.Fprintf(root.ErrOrStderr(), "pagoda: warning: %s\n", errorText(err))
		return 0
	}
	fmt.Fprintf(root.ErrOrStderr(), "pagoda: %s\n", errorText(err))
	var u *usageError
	if errors.As(err, &u) {
		fmt.Fprintf(root.ErrOrStderr(), "Usage: %s\nRun '%s --help' for more.\n", u.cmd.UseLine(), u.cmd.CommandPath())
	}
	return 1
}

// errorText is err's message without the "pagoda: " prefixes that engine
// errors carry, since Execute adds one.
func errorText(err error) string {
	s := err.Error()
	for strings.HasPrefix(s, "pagoda: ") {
		s = s[len("pagoda: "):]
	}
	return s
}

// cmdError is an error whose message is msg and which wraps err, so that
// errors.Is still sees the engine's sentinel behind a short message.
type cmdError struct {
	msg string
	err error
}

func (e *cmdError) Error() string { return e.msg }
func (e *cmdError) Unwrap() error { return e.err }

// view opens the database at path read-only and runs fn in a read
// transaction.
func view(path string, fn func(tx *pagoda.Tx) error) error {
	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true, Timeout: lockWait})
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == path {
			return pe // "open FILE: no such file or directory", without the engine's second "open FILE"
		}
		return err
	}
	defer db.Close()
	return db.View(fn)
}

// openTable returns the table called name, with a short message when it
// does not exist.
func openTable(tx *pagoda.Tx, name string) (*pagoda.Table, error) {
	t, err := tx.Table(name)
	if errors.Is(err, pagoda.ErrNotFound) {
		return nil, &cmdError{msg: "no such table: " + name, err: err}
	}
	return t, err
}

// output is a buffered writer over a command's output that remembers the
// first write error.
type output struct {
	w   *bufio.Writer
	err error
}

func newOutput(cmd *cli.Command) *output {
	return &output{w: bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)}
}

func (o *output) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	o.err = err
	return n, err
}

func (o *output) WriteString(s string) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.WriteString(s)
	o.err = err
	return n, err
}

// Flush flushes the buffer and returns the first write error.
func (o *output) Flush() error {
	if o.err == nil {
		o.err = o.w.Flush()
	}
	return o.err
}

var _ io.StringWriter = (*output)(nil)

// runView opens the database at path read-only and runs fn in a read
// transaction with the command's buffered output, which it flushes (also
// after an error, so that what fn printed comes before the error).
func runView(cmd *cli.Command, path string, fn func(tx *pagoda.Tx, out *output) error) error {
	out := newOutput(cmd)
	err := view(path, func(tx *pagoda.Tx) error { return fn(tx, out) })
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}
