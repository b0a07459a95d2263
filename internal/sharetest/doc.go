// Package sharetest holds the tests of pagoda's shared mode against the real
// thing: one live WAL-mode database file written and read at once by pagoda
// processes (the test binary run again as a child), by the sqlite3 shell and
// by Python's sqlite3 module (both SQLite's C library), with checkpoints of
// every mode from either side, processes killed with SIGKILL in the middle
// of their commits, and the -shm wal-index lost or zeroed. It has no code
// but its tests.
//
// The workload is a bank (bank_test.go): accounts whose balances add up to
// a constant, and a transaction that moves an amount between two of them,
// adds one to a sequence number and appends a log row naming its writer
// and the writer's count of commits (a UNIQUE index on both). Every
// snapshot, of any reader of either kind, must see the total, as many log
// rows as the sequence says, and a sequence that never goes back; a reader
// that begins after a commit was acknowledged must see it; and after every
// kill SQLite's integrity_check must pass and every writer's acknowledged
// commits must be in the log, without gaps, with at most the one it was
// committing when it died after them.
//
// The children (children_test.go): a pagoda process is the test binary with
// PAGODA_SHARE_CHILD naming its role (writer, reader, check); a Python
// process runs the script in python_test.go with a role of its own; the
// sqlite3 shell is driven line by line by the test. Each prints one line
// per event ("ack WHO N SEQ" once a commit has returned), and stops when
// its standard input closes: a pagoda or Python child then closes its
// connection, so that the last one out removes the WAL and the -shm.
//
// Tests skip, saying why, where the sqlite3 shell, Python or litestream is
// not installed (.ci/run installs the first two and tries the third), and
// where locks belong to the process rather than the open file (pagoda does
// not share a file there). The mixed soak runs briefly in every `go test`;
// longer by hand:
//
//	PAGODA_SHARE_SOAK=3m PAGODA_SHARE_PROCS=4 go test ./internal/sharetest -run Soak -v -timeout 30m
//
// PAGODA_SHARE_SEED=S replays a run's random choices (not its timing);
// PAGODA_SHARE_DEBUG=1 logs the children's lines; PAGODA_SHARE_KNOWN=1 runs
// the tests of known bugs not fixed yet, which otherwise skip.
package sharetest
