package pagoda

import "github.com/pagodadb/pagoda/internal/pager"

// JournalMode is how a database is written: through a write-ahead log
// (WAL mode) or a rollback journal (sqlite3's default for files it
// creates), as sqlite3's PRAGMA journal_mode.
type JournalMode uint8

const (
	// JournalDefault keeps an existing file's mode: a rollback-journal
	// database stays one, a WAL-mode database stays one. A new file is a
	// WAL-mode database.
	JournalDefault = JournalMode(pager.JournalDefault)
	// JournalWAL writes through a WAL: a rollback-journal database
	// becomes a WAL-mode one at its first commit, for good, and a
	// writable DB then holds it EXCLUSIVE from Open to Close.
	JournalWAL = JournalMode(pager.JournalWAL)
	// JournalDelete writes through a rollback journal, <db>-journal,
	// deleted at each commit (journal_mode=DELETE): a new file is a
	// rollback-journal database, and Open converts a WAL-mode one as
	// sqlite3's PRAGMA journal_mode=DELETE does (its WAL copied into the
	// file and removed, header bytes 18 and 19 set to 1). That needs the
	// file alone: while another connection has it open, Open fails after
	// Options.Timeout with an error wrapping ErrBusy.
	JournalDelete = JournalMode(pager.JournalDelete)
)

// String returns the mode's name as sqlite3's PRAGMA journal_mode spells
// it ("default" for JournalDefault).
func (m JournalMode) String() string { return pager.JournalMode(m).String() }
