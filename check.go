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
// when it is sound, or a *CheckError listing every problem found, each
// naming its page. It checks what sqlite3's PRAGMA integrity_check checks,
// with its wording, and a little more: the schema's rows, every page used
// exactly once, each b-tree page's layout and key order, overflow chains,
// the freelist, every index against its table (a partial index must hold
// exactly the rows its WHERE clause takes), each row's record, NOT NULL,
// STRICT types and affinities, and the CHECK constraints and VIRTUAL
// columns pagoda evaluates (see Table.Insert and Record.Column). The
// package internal/check documents each rule.
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
	if err := db.holdOpen(); err != nil {
		return err
	}
	defer db.txs.RUnlock()
	var snap pager.Snapshot
	if err := db.pager.InitSnapshot(&snap); err != nil {
		return fmt.Errorf("pagoda: %w", err)
	}
	defer snap.Release()
	return checkResult(check.Run(&snap, nil, nil))
}

func checkResult(problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	return &CheckError{Problems: problems}
}
