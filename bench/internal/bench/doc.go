// Package bench holds pagoda's benchmark workloads and the peers they run
// against, shared by the testing.B benchmarks in this package and by the
// bench command (the module's root, `go run ./bench`), so that both measure
// exactly the same code.
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
// transaction each), ncruces/go-sqlite3 and zombiezen.com/go/sqlite (the
// same through their own Conn and Stmt) and bbolt. Each peer uses the
// fastest idiomatic way its API offers, and every value is really fetched:
// lookups return the value bytes, scans hand every value to a callback.
// The fixture also holds the rows in a pagoda bucket (a second SQLite
// file) for the workloads of pagoda's bucket API and cursors, which run
// against bbolt only ([Workload].Variant, [Workload].Peers).
//
// Every workload runs Config.Count rounds; each figure reported is the
// median of its rounds with their range, and each ratio the median of the
// rounds' own ratios (figure.go's rules).
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
// peak memory is its own. The memory workload ([MeasureMemory]) loads
// rows in key order in one transaction, with a 32 MiB cache, and
// memory-rand ([MeasureMemoryRand], issue #31) 1,000,000 rows in random
// order with each engine's default options, each peer in a child process
// that reports its peak memory and checks its rows. pebble only writes and
// mattn-autocommit only reads; the workloads they lack are reported as
// skipped.
//
// The fs workloads ([FSWorkloads], issue #5) measure filesystems over a
// tree: pagoda's fsys (fsys.New over a SQLite Archive that fsys.CopyFS
// imported from the tree, uncompressed, into a fresh database, opened
// read-only; a snapshot per call, its read transaction renewed), os.DirFS on the tree itself
// (peer os, which takes part in the fs workloads only), and mattn and
// modernc reading the same archive through a small io/fs of this package
// (fs.ReadDirFS, fs.ReadFileFS, fs.StatFS over database/sql: one
// connection opened with mode=ro, prepared statements, each statement its
// own read transaction; ReadDir is one query per directory over the range
// of names under its prefix, direct children kept by SQLite; Stat and
// ReadFile one query by name; data returned as stored when sz equals its
// length, inflated otherwise). The trees ([FSTree]) are gen, generated
// and cached like fixtures ([GenTree]: 10,000 files of 1 to 16 KiB, half
// text and half random bytes, in 1,000 directories, four names deep),
// gosrc, $(go env GOROOT)/src ([SrcTree]; its workloads are reported
// skipped when it is missing), and blob, 10,000 files of 10 KiB random
// bytes in one directory ([BlobTree]). Every peer is first checked with
// [VerifyFS] (fs.WalkDir visits the same entries in the same order, every
// file reads back the same bytes, by CRC-32), then measured: fs-walk/gen
// and fs-walk/gosrc, one fs.WalkDir over the whole tree per op; fs-read/gen
// and fs-read/gosrc, fs.ReadFile of every regular file per op; fs-blob,
// SQLite's "35% faster than the filesystem" test, one 10 KiB blob per op
// in a fixed random order: pagoda with fs.ReadFile on the archive of the
// blob tree, os with os.ReadFile on the separate files, mattn and modernc
// with SELECT data FROM sqlar WHERE name = ? on the same archive (the
// sqlar table by name, not a key-value table by rowid). The archives are
// built at each run in a directory under the cache directory and removed
// afterwards; the report gives each tree's files, directories, bytes and
// disk usage beside its archive's size and import time.
//
// The shared mode (issue #28): peer pagoda opens its files writable, so in
// the shared mode on Linux (the -shm wal-index, beside sqlite3 and other
// processes), and peer pagoda-exclusive with Options.Exclusive; the default
// peers add pagoda-exclusive to lookup-tx (each lookup a read transaction
// of its own, [NewTxPeer]), commit and commit-8. The beside workload
// ([BesideWorkload]) has a SQLite reader in a child process read copies of
// one file in turn while pagoda and mattn commit into theirs. The targets
// of the shared mode compare in-run: lookup-tx of both modes interleaved,
// commit of both modes interleaved commit by commit, commit against the
// disk floor, commit-8 against commit, the reader beside pagoda against
// beside mattn; each is measured in Config.TargetCount rounds and reported
// as the median of its per-round ratios and their range.
//
// The raft workloads ([RaftWorkloads], issue #32) compare hashicorp/raft's
// log stores: raftstore against raft-boltdb v2 and raft-wal (StoreLogs,
// GetLog, head truncation) and, as the log store of a 3-node cluster in
// one process, against raft-boltdb.
//
// Ratios between peers measured in the same run are the numbers to read;
// absolute times depend on the machine.
package bench
