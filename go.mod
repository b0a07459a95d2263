module github.com/pagodadb/pagoda

go 1.26.0

// The library and its CLI only: the benchmark and its peers are the
// module in bench/, and the tests' SQLite (modernc.org/sqlite) comes from
// it through go.work. Do not run go mod tidy here: it adds
// modernc.org/sqlite back (internal/lint's TestModuleGraph says so).
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

// internal/sqltest, imported by tests only, imports modernc.org/sqlite,
// which this module does not require: ./... leaves it out, so that
// GOWORK=off go build ./... builds the library with this go.mod alone.
ignore ./internal/sqltest
