package pagoda

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pagodadb/pagoda/internal/check"
	"github.com/pagodadb/pagoda/internal/pager"
)

// Problem is one broken invariant found by Check: the page it is on (0
// when it belongs to no single page, such as a schema row that does not fit
// the others) and what is wrong. Its String method gives "page N: what".
type Problem = check.Problem

// CheckError is the error Check returns for a database with problems: all
// of them, up to a limit of 100 (the last Problem then says the report was
// cut short). It unwraps to ErrCorrupt.
type CheckError struct {
	Problems []Problem
}

// Error lists the problems, one per line, after a line counting them.
func (e *CheckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pagoda: check found %d problem", len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteByte('s')
	}
	b.WriteByte(':')
	for _, p := range e.Problems {
		b.WriteString("\n" + p.String())
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *CheckError) Unwrap() error { return ErrCorrupt }

// Check verifies the whole database as of the last commit and returns nil
// when it is sound, or a *CheckError listing every problem found. It checks
// what sqlite3's PRAGMA integrity_check checks at the b-tree level, and a
// little more:
//
//   - the schema: rows of sqlite_schema that do not fit together (an index
//     on a table or column that does not exist, two objects of one name),
//     and a table's or index's SQL that sqlite3 would not accept (cut
//     short, say), which sqlite3 reports as a malformed schema;
//   - every page is used exactly once: by a table or index b-tree, an
//     overflow chain or the freelist (the lock-byte page excepted);
//   - every b-tree page is well formed: type, cell pointers, cells,
//     freeblocks and the fragmented-byte count, no byte used twice, no empty
//     page below the root, all leaves at one depth;
//   - overflow chains have exactly the pages their payloads need;
//   - keys are in order: rowids across each table, entries (with their
//     rowid or primary-key tail) across each index, and UNIQUE indexes hold
//     no duplicate;
//   - the freelist is well formed and as long as the header says;
//   - every row of a table has exactly its entry in each of the table's
//     indexes, and the indexes have no other entries;
//   - every row's record is well formed (its header, and fields exactly
//     as long as the payload; the reserved serial types 10 and 11 read as
//     NULL in a rowid table's row, as sqlite3 reads them), a STRICT
//     table's values have their columns' types, and other tables' values
//     agree with their columns' affinities as integrity_check has it: no
//     number in a TEXT column ("NUMERIC value in t.a"), no text that reads
//     as a number in a NUMERIC, INTEGER or REAL one ("TEXT value in
//     t.a"), with SQLite 3.54's rules for which later problems of a row a
//     first one hides (see internal/check).
//
// A partial index must hold exactly the rows its WHERE clause takes (and
// integrity_check only checks that none is missing). Expression indexes
// and partial indexes whose WHERE clause pagoda does not evaluate (see
// Table.Insert) are not compared with their tables (pagoda cannot compute
// their keys); their pages are still checked. NOT NULL constraints are
// checked, and CHECK constraints when pagoda evaluates them (see
// Table.Insert), as integrity_check checks them.
//
// Check reads every page, so it takes time proportional to the file. It
// runs in its own read transaction and does not block writers. A database
// whose schema cannot be read is still checked, page by page.
func (db *DB) Check() error {
	tx, err := db.Begin(false)
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return db.checkWithoutCatalog()
		}
		return err
	}
	defer tx.Rollback()
	return checkResult(check.Run(&tx.snap, tx.cat, nil))
}

// checkWithoutCatalog checks the last committed state when the schema
// cannot be loaded (Begin failed on it): the checker reads what it can of
// sqlite_schema itself and reports what is wrong with it.
func (db *DB) checkWithoutCatalog() error {
	db.txs.RLock()
	defer db.txs.RUnlock()
	db.mu.Lock()
	closed := db.closed
	db.mu.Unlock()
	if closed {
		return fmt.Errorf("pagoda: database is closed: %w", ErrTxClosed)
	}
	var snap pager.Snapshot
	db.pager.InitSnapshot(&snap)
	defer snap.Release()
	return checkResult(check.Run(&snap, nil, nil))
}

func checkResult(problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	return &CheckError{Problems: problems}
}
