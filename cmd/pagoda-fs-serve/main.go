// Command pagoda-fs-serve serves a SQLite Archive over HTTP: it is what
// `pagoda fs serve` runs, and takes the same arguments and flags
// (pagoda-fs-serve FILE --addr 127.0.0.1:8080). It is a command of its
// own so that pagoda, which every other use of the command line starts,
// does not link Go's HTTP server and network stack.
package main

import (
	"os"

	"github.com/pagodadb/pagoda/cmd/internal/serve"
	"github.com/pagodadb/pagoda/cmd/pagoda/command"
)

func main() {
	command.Serve = serve.Run
	os.Exit(command.ExecuteArgs(append([]string{"fs", "serve"}, os.Args[1:]...)))
}
