// Package pagoda is an embedded storage engine in pure Go whose one file is
// a SQLite 3 database: sqlite3 opens what pagoda writes and pagoda reads
// what sqlite3 wrote.
//
// Open a database and read it in a transaction:
//
//	db, err := pagoda.Open("app.db", &pagoda.Options{ReadOnly: true})
//	...
//	err = db.View(func(tx *pagoda.Tx) error {
//		users, err := tx.Table("users")
//		if err != nil {
//			return err
//		}
//		rec, err := users.Get(42)          // by rowid
//		...
//		name := rec.Column(1).Text()
//		...
//	})
//
// Two data models share the file:
//
//   - Buckets: key/value tables, CREATE TABLE "<name>"(key BLOB PRIMARY
//     KEY, value BLOB) STRICT, WITHOUT ROWID, with Get and ordered cursors.
//   - Tables: any SQLite table, read by rowid (or primary key) with
//     zero-copy Records, and their indexes, with prefix seeks.
//
// # Lifetimes
//
// A transaction sees one snapshot of the database: the last commit before it
// began. Slices returned by Get, by cursors and by Records point into the
// database's memory map (or into a buffer assembled for a value that spills
// onto overflow pages); they are valid until the transaction ends and must
// not be modified. Copy them to keep them longer.
//
// # Errors
//
// Errors wrap the sentinels ErrNotFound, ErrExists, ErrCorrupt, ErrReadOnly,
// ErrTxClosed, ErrTxNotWritable, ErrUnsupported, ErrLocked, ErrBusy,
// ErrTooBig and ErrCheckpoint; test them with errors.Is. A corrupt file yields a *CorruptError that names the page.
// No input file, however malformed, makes pagoda panic, hang, or write.
//
// # Status
//
// This release reads any SQLite database, including the committed
// transactions in a -wal file left beside it and the rollback of a hot
// journal. A UTF-16 database (PRAGMA encoding) is read as sqlite3 reads
// it, its text handed out as UTF-8 (see Record), and never written:
// pagoda writes UTF-8 databases only. VIRTUAL generated columns are
// computed (see Record.Column); a table whose collation is the
// application's own reads, but is neither sought by such a key nor
// written (see Object and ErrUnsupported); virtual tables are listed
// (Object.Module), their shadow tables read. It writes the tables whose
// constraints and indexes it can keep, and refuses the others with
// ErrUnsupported (the README lists which).
package pagoda
