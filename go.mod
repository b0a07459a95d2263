module github.com/pagodadb/pagoda

go 1.26.0

// The library and its CLI only: the benchmark and its peers are the
// module in bench/, and the tests reach SQLite (modernc.org/sqlite) in a
// process of its own, the module in internal/sqltest/oracle.
require (
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/spf13/cobra v1.10.2
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
)
