// Package bench holds pagoda's benchmark workloads and the peers they run
// against, shared by the testing.B benchmarks in this package and by the
// `pagoda bench` command, so that both measure exactly the same code.
//
// A [Fixture] is a SQLite file written by SQLite itself (mattn/go-sqlite3):
//
//	CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)
//
// with rowids 1..N and values of ValueSize reproducible random bytes, in WAL
// mode and fully checkpointed, plus a bbolt file holding the same rows (key:
// the rowid as 8 big-endian bytes). Fixtures are cached by their parameters
// under a directory the caller chooses.
//
// A [Peer] is one engine reading a fixture: pagoda, mattn/go-sqlite3 and
// modernc.org/sqlite (database/sql, prepared statements, one long read
// transaction each) and bbolt. Each peer uses the fastest idiomatic way its
// API offers, and every value is really fetched: lookups return the value
// bytes, scans hand every value to a callback.
//
// A [Workload] is a named timed loop over a peer (random point lookups by
// rowid, a full ordered scan). [Run] checks each peer against the fixture
// with [Verify], then measures every (workload, peer) pair with
// testing.Benchmark in one process, one peer after the other (optionally
// several rounds, keeping medians), and [Report.Print] prints ns/op,
// allocs/op and pagoda's ratio to each peer.
//
// A [Store] is one engine writing a store of its own: pagoda, mattn and
// modernc (CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB), WAL mode,
// prepared statements), bbolt and pebble (8-byte big-endian keys), every
// commit durable. The write workloads ([WriteWorkloads]: bulk loads in key
// order and in random order in one transaction, random inserts and deletes
// in transactions of 1,000, durable one-row commits) run on fresh stores in
// a directory that is removed afterwards; [WriteBench] generates the rows
// once and times each workload with its own clock, then checks the store,
// reopened, row by row, so that a peer that drops writes cannot win. The
// cache workload ([MeasureCache]) inserts, reads and deletes 500, 5,000
// and 50,000 keys, each (peer, size) in a child process ([RunChild]) whose
// peak memory is its own. pebble only writes and mattn-autocommit only
// reads; the workloads they lack are reported as skipped.
//
// Ratios between peers measured in the same run are the numbers to read;
// absolute times depend on the machine.
package bench
