package command

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func init() { extraCommands = append(extraCommands, newPutCommand) }

func newPutCommand() *cli.Command {
	var isHex bool
	cmd := &cli.Command{
		Use:   "put FILE BUCKET [--] KEY VALUE",
		Short: "Set the value of a key in a bucket",
		Long: `Set KEY to VALUE in BUCKET, replacing any previous value.

FILE is created (in WAL mode) if it does not exist, and BUCKET if there is
no table of that name; a table that is not a bucket is an error. KEY and
VALUE are taken as their bytes; with --hex both are given in hex, as get
--hex prints them. An empty argument is the empty key or value. Give
arguments starting with "-" after "--": pagoda put app.db b -- -k -v.`,
		Args: cli.ExactArgs(4),
		RunE: func(cmd *cli.Command, args []string) error {
			key, value := []byte(args[2]), []byte(args[3])
			if isHex {
				var err error
				if key, err = hex.DecodeString(args[2]); err != nil {
					return fmt.Errorf("key %q is not hex: %v", args[2], err)
				}
				if value, err = hex.DecodeString(args[3]); err != nil {
					return fmt.Errorf("value %q is not hex: %v", args[3], err)
				}
			}
			return update(args[0], true, func(tx *pagoda.Tx) error {
				b, err := tx.CreateBucketIfNotExists(args[1])
				if err != nil {
					return err
				}
				return b.Put(key, value)
			})
		},
	}
	cmd.Flags().BoolVar(&isHex, "hex", false, "KEY and VALUE are given in hex")
	return cmd
}

// update opens the database at path for writing and runs fn in a write
// transaction, which is committed if fn returns nil and rolled back
// otherwise; then it closes the database, which checkpoints the WAL. A
// missing file is an error, unless create is set: then it is created, and
// removed again if the transaction fails, so that a failed command leaves
// nothing behind.
func update(path string, create bool, fn func(tx *pagoda.Tx) error) (err error) {
	_, statErr := os.Stat(path)
	if statErr != nil {
		var pe *fs.PathError
		if !create || !errors.Is(statErr, fs.ErrNotExist) {
			if errors.As(statErr, &pe) {
				pe.Op = "open" // "open FILE: no such file or directory", as the read commands say
			}
			return statErr
		}
		_, walErr := os.Stat(path + "-wal")
		defer func() {
			if err != nil && !committed(err) {
				os.Remove(path)
				if errors.Is(walErr, fs.ErrNotExist) {
					os.Remove(path + "-wal")
				}
			}
		}()
	}
	db, err := pagoda.Open(path, &pagoda.Options{JournalMode: journalMode, Timeout: lockWait})
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == path {
			return pe
		}
		return err
	}
	err = db.Update(fn)
	if cerr := closeDB(db); err == nil && cerr != nil {
		if errors.Is(cerr, pagoda.ErrCheckpoint) {
			return &warning{msg: "the commit stands, in " + path + "-wal, but " + errorText(cerr) +
				"; the next command to open " + path + " (or sqlite3) checkpoints it", err: cerr}
		}
		err = cerr
	}
	return err
}

// closeDB closes a database that update wrote (tests fail its checkpoint).
var closeDB = (*pagoda.DB).Close

// warning is an error after which the command's work is done all the
// same (a commit whose checkpoint at close failed): Execute prints it as a
// warning and the exit status is 0.
type warning struct {
	msg string
	err error
}

func (w *warning) Error() string { return w.msg }
func (w *warning) Unwrap() error { return w.err }

// committed reports whether err is a warning: the work was done.
func committed(err error) bool {
	var w *warning
	return errors.As(err, &w)
}
