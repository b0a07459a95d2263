package pagoda

import (
	"errors"

	"github.com/pagodadb/pagoda/internal/format"
)

// Sentinel errors. Errors returned by pagoda wrap one of these where one
// applies; test with errors.Is.
var (
	// ErrNotFound: the key, row, bucket, table or index does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: the bucket, table, index or unique key already exists.
	ErrExists = errors.New("already exists")
	// ErrCorrupt: the file breaks a rule of the SQLite format. The error
	// in the chain is a *CorruptError naming the page.
	ErrCorrupt = format.ErrCorrupt
	// ErrReadOnly: a write was asked of a database opened read-only.
	ErrReadOnly = errors.New("attempt to write a readonly database")
	// ErrTxClosed: the transaction has already been committed or rolled back.
	ErrTxClosed = errors.New("transaction is closed")
	// ErrTxNotWritable: a write was asked of a read transaction.
	ErrTxNotWritable = errors.New("transaction is not writable")
	// ErrUnsupported: the file or the request uses a feature pagoda does
	// not implement (writing a UTF-16 database, virtual tables, expression
	// indexes, ...).
	ErrUnsupported = format.ErrUnsupported
	// ErrLocked: another process (or another DB of this process) holds a
	// lock on the database file that excludes this Open: see Open.
	ErrLocked = format.ErrLocked
	// ErrBusy: another connection to the database, in this process or
	// another (sqlite3, another DB), holds what a write transaction or a
	// checkpoint needs, and did not let go within Options.Timeout
	// (sqlite3's SQLITE_BUSY). Retry later.
	ErrBusy = format.ErrBusy
	// ErrTooBig: a value, key or row longer than SQLite's limit of
	// 1,000,000,000 bytes (SQLITE_MAX_LENGTH), which sqlite3 refuses to
	// read ("string or blob too big"). Writes refuse it before they write
	// anything; Check reports such a row in a file pagoda did not write.
	ErrTooBig = format.ErrTooBig
	// ErrCheckpoint: Close could not copy the WAL into the database file
	// (a full disk, say), after every commit was durable: they all stand,
	// in the WAL beside the file, which the next Open (pagoda's or
	// sqlite3's) reads and checkpoints. Free the space and open the file
	// again; nothing needs to be written again.
	ErrCheckpoint = format.ErrCheckpoint
)

// CorruptError says where a file is corrupt: page, byte offset and what is
// wrong. It unwraps to ErrCorrupt.
type CorruptError = format.CorruptError

// notFound is ErrNotFound with a message of its own, sqlite3's where it
// has one ("no such table: t").
type notFound struct{ msg string }

func (e *notFound) Error() string { return e.msg }
func (e *notFound) Unwrap() error { return ErrNotFound }

// noSuch returns the error for a missing kind of object (table, bucket,
// index) called name: "pagoda: no such table: name", wrapping ErrNotFound.
func noSuch(kind, name string) error {
	return &notFound{msg: "pagoda: no such " + kind + ": " + name}
}
