// Command pagoda inspects pagoda (SQLite 3) database files.
package main

import (
	"os"

	"github.com/pagodadb/pagoda/cmd/pagoda/command"
)

func main() { os.Exit(command.Execute()) }
