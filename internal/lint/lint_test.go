// Package lint holds tests that make the house rules executable: imports
// point only downward through the layers, unsafe appears only in the pager,
// nothing above internal/format decodes page bytes, and the engine uses no
// reflection, binary.Read/Write or global logging.
package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/pagodadb/pagoda"

// layers lists the engine's packages bottom-up; each may import only those
// before it (and the standard library and golang.org/x/sys).
var layers = []string{
	"internal/format",
	"internal/vfs",
	"internal/wal",
	"internal/pager",
	"internal/btree",
	"internal/schema",
	"internal/expr",
	"internal/check",
	".",
	"internal/inflate",
	"fsys",
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// sources parses the non-test Go files of a package directory.
func sources(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	out := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = f
	}
	return out
}

func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func TestImportsPointDown(t *testing.T) {
	root := repoRoot(t)
	for i, layer := range layers {
		allowed := map[string]bool{}
		for _, below := range layers[:i] {
			p := module
			if below != "." {
				p += "/" + below
			}
			allowed[p] = true
		}
		for name, f := range sources(t, filepath.Join(root, layer)) {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				switch {
				case isStdlib(path):
				case strings.HasPrefix(path, "golang.org/x/sys/"):
				case allowed[path]:
				default:
					t.Errorf("%s/%s imports %s: the engine imports only lower layers, the standard library and golang.org/x/sys", layer, name, path)
				}
			}
		}
	}
}

func TestForbiddenInEngine(t *testing.T) {
	root := repoRoot(t)
	for _, layer := range layers {
		for name, f := range sources(t, filepath.Join(root, layer)) {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				switch path {
				case "unsafe":
					if layer != "internal/pager" {
						t.Errorf("%s/%s imports unsafe: only internal/pager may", layer, name)
					}
				case "reflect", "log", "encoding/gob", "encoding/json":
					t.Errorf("%s/%s imports %s: not on the engine's paths", layer, name, path)
				}
			}
			src, err := os.ReadFile(filepath.Join(root, layer, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"binary.Read(", "binary.Write("} {
				if strings.Contains(string(src), bad) {
					t.Errorf("%s/%s uses %s: decode with binary.BigEndian on slices", layer, name, bad)
				}
			}
		}
	}
}

// byteOrderAllowed lists the engine's files above internal/format that may
// decode fields with encoding/binary's byte orders: internal/wal decodes the
// WAL's layout, which it draws, and pager/walindex.go the -shm file's, which
// it draws (shm.go reads its read marks through it); internal/inflate
// decodes zlib streams, no page of the database; fsys/read.go tests eight
// bytes at a time for ASCII in file names, no layout.
var byteOrderAllowed = map[string]bool{
	"internal/wal":               true,
	"internal/inflate":           true,
	"internal/pager/walindex.go": true,
	"fsys/read.go":               true,
}

// Nothing above internal/format parses page bytes: format draws and decodes
// every layout of the database file (sqlite-format.md), once.
func TestOneHomePerLayout(t *testing.T) {
	root := repoRoot(t)
	for _, layer := range layers[1:] {
		if byteOrderAllowed[layer] {
			continue
		}
		for name := range sources(t, filepath.Join(root, layer)) {
			if byteOrderAllowed[layer+"/"+name] {
				continue
			}
			src, err := os.ReadFile(filepath.Join(root, layer, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"binary.BigEndian", "binary.LittleEndian", "binary.NativeEndian"} {
				if strings.Contains(string(src), bad) {
					t.Errorf("%s/%s uses %s: decode page bytes in internal/format, which draws the layout", layer, name, bad)
				}
			}
		}
	}
}

// Every package has a doc comment on its role.
func TestPackageDocs(t *testing.T) {
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			return nil
		}
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, path, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		for name, pkg := range pkgs {
			documented := false
			for _, f := range pkg.Files {
				if f.Doc != nil && len(f.Doc.Text()) > 20 {
					documented = true
				}
			}
			if !documented {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("package %s (%s) has no doc comment", name, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// maxRootFileLines is where a file of the root package must be split.
const maxRootFileLines = 1000

// The root package is the public API, one concept a file: no file over
// maxRootFileLines lines, and each file (doc.go aside) declares an
// exported identifier or a method of an exported type, the concept it is
// about.
func TestRootFiles(t *testing.T) {
	root := repoRoot(t)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		path := filepath.Join(root, name)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(src), "\n"); n > maxRootFileLines {
			t.Errorf("%s has %d lines: split it (at most %d in the root package)", name, n, maxRootFileLines)
		}
		if name == "doc.go" {
			continue
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !declaresExported(f) {
			t.Errorf("%s declares nothing exported: the root package holds the API; put its code with the concept it serves, or in internal/", name)
		}
	}
}

// declaresExported reports whether f declares an exported identifier or a
// method of an exported type.
func declaresExported(f *ast.File) bool {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || recvExported(d.Recv)) {
				return true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						return true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

func recvExported(r *ast.FieldList) bool {
	t := r.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
