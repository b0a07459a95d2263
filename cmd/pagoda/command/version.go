package command

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"
)

func init() { extraCommands = append(extraCommands, newVersionCommand) }

func newVersionCommand() *cli.Command {
	return &cli.Command{
		Use:   "version",
		Short: "Print pagoda's version, commit and Go version",
		Long: `Print the version of the pagoda module this command was built from
(a tag, a pseudo-version, or "(devel)" when built from a clone), the
commit it was built at and whether the tree had changes, and the Go
version. pagoda --version prints the same.`,
		Args: cli.NoArgs,
		RunE: func(cmd *cli.Command, args []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionText())
			return err
		},
	}
}

// versionText describes the build from its build info: "pagoda VERSION
// (commit REV[, modified], DATE) GOVERSION".
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "pagoda (no build info) " + runtime.Version()
	}
	return buildText(bi)
}

// buildText is versionText for the build info bi.
func buildText(bi *debug.BuildInfo) string {
	version := "(devel)"
	if bi.Main.Path == modulePath && bi.Main.Version != "" {
		version = bi.Main.Version
	} else {
		for _, d := range bi.Deps {
			if d.Path == modulePath { // pagoda built as another module's dependency
				version = d.Version
				if d.Replace != nil {
					version += " => " + d.Replace.Path
				}
			}
		}
	}
	var rev, when string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	out := "pagoda " + version
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += " (commit " + rev
		if modified {
			out += ", modified"
		}
		if when != "" {
			out += ", " + when
		}
		out += ")"
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	return out + " " + goVersion
}

// modulePath is pagoda's module path.
const modulePath = "github.com/pagodadb/pagoda"
