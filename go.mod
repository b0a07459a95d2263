module github.com/pagodadb/pagoda

go 1.26.0

// The library and its CLI only: the benchmark and its peers are the
// module in bench/, and the tests reach SQLite (modernc.org/sqlite) in a
// process of its own, the module in internal/sqltest/oracle.
require (
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
)
