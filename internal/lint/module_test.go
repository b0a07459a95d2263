package lint

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// peerModules are the modules a program importing pagoda must not get in
// its module graph: the benchmark's peers and their dependencies, and
// modules with cgo. They belong in bench/go.mod. A path ending in "/"
// stands for every module under it.
var peerModules = []string{
	"github.com/mattn/go-sqlite3", // cgo
	"modernc.org/",
	"go.etcd.io/bbolt",
	"github.com/boltdb/bolt",
	"github.com/cockroachdb/",
	"github.com/DataDog/zstd", // cgo, a dependency of pebble
	"github.com/prometheus/",
	"github.com/ncruces/",
	"zombiezen.com/go/sqlite",
	"crawshaw.io/sqlite", // cgo
	"github.com/glebarez/",
}

// requires returns the module paths that a go.mod's require directives
// name, on one line or in blocks.
func requires(gomod string) []string {
	var out []string
	inBlock := false
	for _, line := range strings.Split(gomod, "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case inBlock && f[0] == ")":
			inBlock = false
		case inBlock:
			out = append(out, f[0])
		case f[0] == "require" && len(f) > 1 && f[1] == "(":
			inBlock = true
		case f[0] == "require" && len(f) > 1:
			out = append(out, f[1])
		}
	}
	return out
}

// isPeerModule reports whether the module path is one of peerModules.
func isPeerModule(path string) bool {
	for _, p := range peerModules {
		if path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// TestModuleGraph fails when the library's go.mod requires a benchmark
// peer or a cgo module, or when a Go file of the library's module, tests
// included, imports one: every program that imports pagoda would get it
// in its module graph (go mod tidy reads the imports of its dependencies'
// tests). The peers are bench/'s; the tests reach SQLite through
// internal/sqltest's driver, which runs it in a process of its own
// (internal/sqltest/oracle, a module of its own).
func TestModuleGraph(t *testing.T) {
	root := repoRoot(t)
	src, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := requires(string(src))
	if len(reqs) == 0 {
		t.Fatal("go.mod: no require directive found")
	}
	for _, path := range reqs {
		if isPeerModule(path) {
			t.Errorf("go.mod requires %s, a benchmark peer or a cgo module, which would be in the module graph of every program importing pagoda: "+
				"a peer belongs in bench/go.mod, and the tests reach SQLite through internal/sqltest", path)
		}
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // a module of its own: bench/, the SQLite oracle
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if isPeerModule(p) || isPeerPackage(p) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s imports %s: a program importing pagoda would get it in its module graph (go mod tidy reads the tests' imports too); use internal/sqltest's \"sqlite\" driver for SQLite", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isPeerPackage reports whether an import path is a package of a peer
// module.
func isPeerPackage(path string) bool {
	for _, p := range peerModules {
		if strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

func TestRequires(t *testing.T) {
	gomod := "module m\n\nrequire a.org/x v1.0.0 // indirect\n\nrequire (\n\tb.org/y v1.2.0\n\t// c.org/z v1.0.0\n\tmodernc.org/libc v1.0.0 // indirect\n)\n\nreplace d.org/w => ../w\n"
	got := strings.Join(requires(gomod), " ")
	if want := "a.org/x b.org/y modernc.org/libc"; got != want {
		t.Errorf("requires = %q, want %q", got, want)
	}
	for path, peer := range map[string]bool{"modernc.org/sqlite": true, "github.com/mattn/go-sqlite3": true, "github.com/mattn/go-isatty": false,
		"github.com/cockroachdb/pebble": true, "go.etcd.io/bbolt": true, "golang.org/x/sys": false, "github.com/spf13/cobra": false} {
		if isPeerModule(path) != peer {
			t.Errorf("isPeerModule(%s) = %v, want %v", path, !peer, peer)
		}
	}
}
