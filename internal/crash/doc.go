// Package crash holds pagoda's crash test: a writing process is killed with
// SIGKILL at random moments, hundreds of times over one database file, and
// after every kill the file must be sound (db.Check, and SQLite's own
// PRAGMA integrity_check on copies) and hold exactly the transactions whose
// Commit returned nil, plus at most the one whose Commit was in progress.
// Nothing committed may be lost.
//
// The test binary re-executes itself as the writer (TestMain looks for the
// PAGODA_CRASH_CHILD variable). The writer runs an endless loop of
// transactions; transaction k applies a change that is a pure function of
// the seed, k and the state after k-1 (inserts, updates and deletes in a
// rowid table with a TEXT index and a UNIQUE index, blobs from 0 bytes to
// several pages so that overflow chains are made and freed, puts and
// deletes in a bucket, a scratch table created and dropped, and a meta row
// holding k), and prints k on stdout once Commit returns nil. The parent
// replays the same generator into a Go map model, so it knows the exact
// contents the file must have after any number of transactions, and
// compares every row and every bucket pair after every kill. The writer's
// options vary from run to run: a 64 KiB cache so that big transactions
// spill pages before their commit, a small CheckpointPages so that
// checkpoints happen every few commits, explicit checkpoints, Close
// followed by Open again in the middle of the loop, and now and then
// SyncNormal or SyncOff, which promise the same after a crash of the
// process. The page size (512 to 65536) is chosen once per run.
//
// TestCrashJournal does the same on a rollback-journal file (the writer
// opens it with JournalDelete): kills land mid-commit and mid-spill, and
// after every kill the sqlite3 CLI opens a copy with its hot journal,
// rolls it back, and must find integrity_check ok, journal_mode delete and
// the transaction pagoda found. TestCrashSQLiteWriter is the reverse: a C
// SQLite writer (Python's sqlite3 module, a 16-page cache so that it
// spills) killed mid-transaction, and pagoda opening the file, rolling
// back its hot journal, and finding the last acknowledged transaction or
// the next, whole.
//
// Only process crashes are simulated: what a kill leaves is what the kernel
// holds in its page cache, so this does not test fsync ordering against
// power loss.
//
// Knobs (environment variables):
//
//	PAGODA_CRASH_KILLS=N   run N kills (default 150, 20 with -short; the
//	                       journal's test 40 and 10, the SQLite writer's
//	                       12 and 4, N/4 with the variable)
//	PAGODA_CRASH_SEED=S    use seed S (printed by every run and by every
//	                       failure) for the data, the writer's options and
//	                       the kill delays
//
// For a longer run by hand:
//
//	PAGODA_CRASH_KILLS=2000 go test ./internal/crash -run Crash -count=1 -v -timeout 1h
//
// A seed replays the same transactions and the same sequence of options
// and delays, but not the same kill points: where a kill lands depends on
// the scheduler. A failure keeps the database and its WAL in a directory
// whose path it prints.
package crash
