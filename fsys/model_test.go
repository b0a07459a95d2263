package fsys_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// This file checks the FS against a model: a map from name to entry that
// encodes what each write method's doc comment promises. A seeded random
// sequence of writes runs on both; every error must match the model's, a
// failed write must leave the archive exactly as it was, and the trees are
// compared every few operations.

// mnode is what the model knows of one entry.
type mnode struct {
	mode   fs.FileMode // as Lstat reports it: type and permission bits
	lo, hi int64       // bounds of the mtime, equal once Chtimes set it
	data   []byte      // a regular file's content
	link   string      // a symbolic link's target
}

func (n *mnode) isDir() bool { return n.mode.IsDir() }

// model maps each full name (never "." or "") to its entry; the root is
// implicit.
type model map[string]*mnode

var modelRoot = &mnode{mode: fs.ModeDir | 0o755}

// modelFull converts a name valid for fs.ValidPath to the model's key ("" is
// the root).
func modelFull(name string) string {
	if name == "." {
		return ""
	}
	return name
}

func modelParent(full string) string {
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[:i]
	}
	return ""
}

func (m model) get(full string) (*mnode, bool) {
	if full == "" {
		return modelRoot, true
	}
	n, ok := m[full]
	return n, ok
}

// checkParent: the directory that would hold full must exist, and be a
// directory (a symbolic link is not one: writes do not follow links on
// the way). A file (or link) as the parent or further up the path is
// ErrNotDir, as POSIX's ENOTDIR; a missing directory ErrNotExist.
func (m model) checkParent(full string) error {
	n, ok := m.get(modelParent(full))
	switch {
	case !ok:
		return m.missing(full)
	case !n.isDir():
		return fsys.ErrNotDir
	}
	return nil
}

// missing says why full is missing: ErrNotDir when the deepest entry that
// exists on the way to it is not a directory.
func (m model) missing(full string) error {
	for p := modelParent(full); p != ""; p = modelParent(p) {
		if n, ok := m[p]; ok {
			if !n.isDir() {
				return fsys.ErrNotDir
			}
			break
		}
	}
	return fs.ErrNotExist
}

func (m model) hasChildren(full string) bool {
	for k := range m {
		if strings.HasPrefix(k, full+"/") {
			return true
		}
	}
	return false
}

// permBits keeps what a new entry takes of a Go mode: permissions, setuid,
// setgid and sticky.
func permBits(perm fs.FileMode) fs.FileMode {
	return perm & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// resolve looks full up as the FS promises to: following the symbolic
// links on the way to it, and full itself when follow is set, as a POSIX
// path walk does. A target is relative to the link's directory and may
// not leave the archive; a link that leaves it, dangles or loops does not
// exist, and a path through a file is ErrNotDir.
func (m model) resolve(full string, follow bool) (string, *mnode, error) {
	var parts []string
	if full != "" {
		parts = strings.Split(full, "/")
	}
	cur, links := "", 0
	for i := 0; i < len(parts); i++ {
		next := parts[i]
		if cur != "" {
			next = cur + "/" + parts[i]
		}
		n, ok := m[next]
		if !ok {
			return "", nil, fs.ErrNotExist
		}
		last := i == len(parts)-1
		if n.mode.Type() == fs.ModeSymlink && (follow || !last) {
			if links++; links >= 40 || n.link == "" || n.link[0] == '/' {
				return "", nil, fs.ErrNotExist
			}
			j := path.Join(cur, n.link)
			switch {
			case j == "..", strings.HasPrefix(j, "../"):
				return "", nil, fs.ErrNotExist
			case j == ".":
				parts = parts[i+1:]
			default:
				parts = append(strings.Split(j, "/"), parts[i+1:]...)
			}
			cur, i = "", -1
			continue
		}
		if !last && !n.isDir() {
			return "", nil, fsys.ErrNotDir
		}
		cur = next
	}
	n, _ := m.get(cur)
	return cur, n, nil
}

func (m model) writeFile(name string, data []byte, perm fs.FileMode, lo, hi int64) error {
	if !fs.ValidPath(name) || name == "." {
		return fs.ErrInvalid
	}
	if err := m.checkParent(name); err != nil {
		return err
	}
	mode := permBits(perm)
	if n, ok := m[name]; ok {
		switch {
		case n.isDir():
			return fsys.ErrIsDir
		case n.mode.Type() == 0:
			mode = n.mode // an existing file keeps its mode
		}
	}
	m[name] = &mnode{mode: mode, lo: lo, hi: hi, data: bytes.Clone(data)}
	return nil
}

func (m model) create(name string) error {
	if !fs.ValidPath(name) || name == "." {
		return fs.ErrInvalid
	}
	if err := m.checkParent(name); err != nil {
		return err
	}
	if n, ok := m[name]; ok && n.isDir() {
		return fsys.ErrIsDir
	}
	return nil
}

func (m model) mkdir(name string, perm fs.FileMode, lo, hi int64) error {
	switch {
	case !fs.ValidPath(name):
		return fs.ErrInvalid
	case name == ".":
		return fs.ErrExist
	}
	if err := m.checkParent(name); err != nil {
		return err
	}
	if _, ok := m[name]; ok {
		return fs.ErrExist
	}
	m[name] = &mnode{mode: fs.ModeDir | permBits(perm), lo: lo, hi: hi}
	return nil
}

func (m model) mkdirAll(name string, perm fs.FileMode, lo, hi int64) error {
	if !fs.ValidPath(name) {
		return fs.ErrInvalid
	}
	if name == "." {
		return nil
	}
	// Check the whole path before creating anything.
	parts := strings.Split(name, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		n, ok := m[p]
		if !ok {
			break
		}
		if !n.isDir() {
			return fsys.ErrNotDir
		}
	}
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		if _, ok := m[p]; !ok {
			m[p] = &mnode{mode: fs.ModeDir | permBits(perm), lo: lo, hi: hi}
		}
	}
	return nil
}

func (m model) remove(name string) error {
	if !fs.ValidPath(name) || name == "." {
		return fs.ErrInvalid
	}
	n, ok := m[name]
	switch {
	case !ok:
		return m.missing(name)
	case n.isDir() && m.hasChildren(name):
		return fsys.ErrNotEmpty
	}
	delete(m, name)
	return nil
}

func (m model) removeAll(name string) error {
	if !fs.ValidPath(name) || name == "." {
		return fs.ErrInvalid
	}
	for k := range m {
		if k == name || strings.HasPrefix(k, name+"/") {
			delete(m, k)
		}
	}
	return nil
}

func (m model) rename(from, to string) error {
	if !fs.ValidPath(from) || !fs.ValidPath(to) || from == "." || to == "." {
		return fs.ErrInvalid
	}
	if from == to {
		if _, ok := m[from]; !ok {
			return m.missing(from)
		}
		return nil
	}
	if strings.HasPrefix(to, from+"/") {
		return fs.ErrInvalid // a directory cannot move below itself
	}
	src, ok := m[from]
	if !ok {
		return m.missing(from)
	}
	if err := m.checkParent(to); err != nil {
		return err
	}
	if dst, ok := m[to]; ok {
		switch {
		case src.isDir() && !dst.isDir():
			return fsys.ErrNotDir
		case !src.isDir() && dst.isDir():
			return fsys.ErrIsDir
		case dst.isDir() && m.hasChildren(to):
			return fsys.ErrNotEmpty
		}
		delete(m, to)
	}
	moved := map[string]*mnode{}
	for k, n := range m {
		if k == from || strings.HasPrefix(k, from+"/") {
			moved[to+k[len(from):]] = n
			delete(m, k)
		}
	}
	maps.Copy(m, moved)
	return nil
}

// change applies fn to the entry name resolves to.
func (m model) change(name string, fn func(n *mnode)) error {
	if !fs.ValidPath(name) {
		return fs.ErrInvalid
	}
	full, n, err := m.resolve(modelFull(name), true)
	if err != nil {
		return err
	}
	if full == "" {
		return fs.ErrInvalid // the root has no row to change
	}
	c := *n
	fn(&c)
	m[full] = &c
	return nil
}

func (m model) symlink(target, name string, lo, hi int64) error {
	if !fs.ValidPath(name) || name == "." || target == "" {
		return fs.ErrInvalid
	}
	if err := m.checkParent(name); err != nil {
		return err
	}
	if _, ok := m[name]; ok {
		return fs.ErrExist
	}
	m[name] = &mnode{mode: fs.ModeSymlink | 0o777, lo: lo, hi: hi, link: target}
	return nil
}

// walk lists the model's names in fs.WalkDir's order: depth first,
// siblings by name.
func (m model) walk() []string {
	kids := map[string][]string{}
	for k := range m {
		p := modelParent(k)
		kids[p] = append(kids[p], k)
	}
	var out []string
	var visit func(dir string)
	visit = func(dir string) {
		list := kids[dir]
		slices.Sort(list)
		for _, k := range list {
			out = append(out, k)
			if m[k].isDir() {
				visit(k)
			}
		}
	}
	visit("")
	return out
}

func (m model) clone() model {
	c := model{}
	for k, n := range m {
		cn := *n
		c[k] = &cn
	}
	return c
}

// mop is one write operation of a random sequence.
type mop struct {
	kind    string
	name    string
	to      string // Rename's new name, Symlink's target
	data    []byte
	perm    fs.FileMode
	mtime   time.Time
	between *mop // Create: an operation run between Create and Close
}

func (o *mop) String() string {
	s := ""
	switch o.kind {
	case "WriteFile", "Create":
		s = fmt.Sprintf("%s(%q, %d bytes, %v)", o.kind, o.name, len(o.data), o.perm)
	case "Mkdir", "MkdirAll", "Chmod":
		s = fmt.Sprintf("%s(%q, %v)", o.kind, o.name, o.perm)
	case "Rename":
		s = fmt.Sprintf("Rename(%q, %q)", o.name, o.to)
	case "Symlink":
		s = fmt.Sprintf("Symlink(%q, %q)", o.to, o.name)
	case "Chtimes":
		s = fmt.Sprintf("Chtimes(%q, %d (zero %v))", o.name, o.mtime.Unix(), o.mtime.IsZero())
	default:
		s = fmt.Sprintf("%s(%q)", o.kind, o.name)
	}
	if o.between != nil {
		s += " with " + o.between.String() + " before Close"
	}
	return s
}

// Names are drawn from a few elements so that operations collide; those
// after "d" sort between "d" and "d/" ('!', '-', '.' are below '/'), and
// "d0" just after "d/".
var modelElems = []string{"a", "d", "d.x", "d-y", "d!z", "d0"}

// modelGen draws random operations, leaning towards names that exist.
type modelGen struct {
	r *rand.Rand
	m model
}

func (g *modelGen) elem() string { return modelElems[g.r.IntN(len(modelElems))] }

func (g *modelGen) existing() (string, bool) {
	if len(g.m) == 0 {
		return "", false
	}
	keys := slices.Sorted(maps.Keys(g.m))
	return keys[g.r.IntN(len(keys))], true
}

func (g *modelGen) name() string {
	switch x := g.r.IntN(100); {
	case x < 40:
		if k, ok := g.existing(); ok {
			return k
		}
	case x < 75:
		// A new name in an existing directory (or below a file, or a link).
		if k, ok := g.existing(); ok && x < 65 {
			return k + "/" + g.elem()
		}
		return g.elem()
	case x < 95:
		n := g.elem()
		for range g.r.IntN(3) {
			n += "/" + g.elem()
		}
		return n
	case x < 97:
		return "."
	}
	return []string{"", "/a", "a/", "a//b", "./a", "a/../b", "d/.", "\xff"}[g.r.IntN(8)]
}

func (g *modelGen) data() []byte {
	switch x := g.r.IntN(10); {
	case x == 0:
		return []byte{}
	case x < 7:
		return randomBytes(g.r, 1+g.r.IntN(100), true)
	case x < 9:
		return bytes.Repeat(randomBytes(g.r, 1+g.r.IntN(20), true), 50+g.r.IntN(100))
	}
	return randomBytes(g.r, 2000+g.r.IntN(5000), false)
}

func (g *modelGen) perm() fs.FileMode {
	return []fs.FileMode{0o644, 0o600, 0o755, 0o700, 0o444, 0,
		fs.ModeSetuid | 0o755, fs.ModeSetgid | fs.ModeSticky | 0o777, fs.ModeDir | 0o750}[g.r.IntN(9)]
}

func (g *modelGen) mtime() time.Time {
	switch g.r.IntN(6) {
	case 0:
		return time.Time{} // left unchanged
	case 1:
		return time.Unix(1e9+g.r.Int64N(1e6), 999999999) // truncated to the second
	case 2:
		return time.Unix(-1-g.r.Int64N(1e8), 0)
	case 3:
		return time.Unix(0, 0)
	}
	return time.Unix(1e9+g.r.Int64N(1e9), 0)
}

// target returns a symbolic link's target for a link called link: a
// relative path to an existing entry, or something odd.
func (g *modelGen) target(link string) string {
	up := strings.Repeat("../", strings.Count(link, "/"))
	switch x := g.r.IntN(10); {
	case x < 5:
		if k, ok := g.existing(); ok {
			return up + k
		}
		return g.elem()
	case x < 7:
		return g.elem()
	case x == 7:
		return path.Base(link) // a loop
	}
	return []string{"..", "../a", "/a", "./d", "d/", "a//b", "../../../a", ".", "d/../d0", "\xff"}[g.r.IntN(10)]
}

func (g *modelGen) op(nested bool) *mop {
	o := &mop{}
	switch x := g.r.IntN(100); {
	case x < 18:
		o.kind, o.name, o.data, o.perm = "WriteFile", g.name(), g.data(), g.perm()
	case x < 26:
		o.kind, o.name, o.data, o.perm = "Create", g.name(), g.data(), g.perm()
		if !nested && g.r.IntN(3) == 0 {
			o.between = g.op(true)
		}
	case x < 38:
		o.kind, o.name, o.perm = "Mkdir", g.name(), g.perm()
	case x < 46:
		o.kind, o.name, o.perm = "MkdirAll", g.name(), g.perm()
	case x < 56:
		o.kind, o.name = "Remove", g.name()
	case x < 60:
		o.kind, o.name = "RemoveAll", g.name()
	case x < 75:
		o.kind, o.name = "Rename", g.name()
		switch y := g.r.IntN(10); {
		case y == 0:
			o.to = o.name
		case y == 1:
			o.to = o.name + "/" + g.elem()
		default:
			o.to = g.name()
		}
	case x < 81:
		o.kind, o.name, o.perm = "Chmod", g.name(), g.perm()
	case x < 90:
		o.kind, o.name, o.mtime = "Chtimes", g.name(), g.mtime()
	default:
		o.kind, o.name = "Symlink", g.name()
		o.to = g.target(o.name)
		if g.r.IntN(30) == 0 {
			o.to = ""
		}
	}
	if nested && o.kind == "Create" {
		o.kind = "WriteFile"
	}
	return o
}

// modelRun applies operations to an FS and to the model.
type modelRun struct {
	t   *testing.T
	db  *pagoda.DB
	tx  *pagoda.Tx // the caller's transaction the FS writes in, or nil
	f   *fsys.FS
	m   model
	log []string
	// outcomes counts operations by kind and error, for the test's log.
	outcomes map[string]int
}

func (r *modelRun) fatalf(format string, args ...any) {
	r.t.Helper()
	from := max(0, len(r.log)-15)
	r.t.Fatalf("%s\nlast operations:\n\t%s\narchive rows:\n\t%s", fmt.Sprintf(format, args...),
		strings.Join(r.log[from:], "\n\t"), strings.Join(archiveRows(r.t, r.db, r.tx), "\n\t"))
}

// archiveRows lists the sqlar rows as "rowid name mode mtime sz", for
// failure messages.
func archiveRows(t testing.TB, db *pagoda.DB, tx *pagoda.Tx) []string {
	var out []string
	read := func(tx *pagoda.Tx) error {
		tab, err := tx.Table("sqlar")
		if err != nil {
			return err
		}
		c := tab.Cursor()
		for ok := c.First(); ok; ok = c.Next() {
			rec := c.Record()
			out = append(out, fmt.Sprintf("%d %q %o %d %d", c.Rowid(), rec.Column(0).Text(), rec.Column(1).Int(), rec.Column(2).Int(), rec.Column(3).Int()))
		}
		return c.Err()
	}
	var err error
	if tx != nil {
		err = read(tx)
	} else {
		err = db.View(read)
	}
	if err != nil {
		out = append(out, err.Error())
	}
	return out
}

// modelSentinels are the errors an operation may fail with, most specific
// first (ErrIsDir and ErrNotEmpty wrap fs.ErrExist, ErrNotDir wraps
// fs.ErrInvalid).
var modelSentinels = []error{fsys.ErrIsDir, fsys.ErrNotDir, fsys.ErrNotEmpty, fs.ErrNotExist, fs.ErrExist, fs.ErrInvalid}

// errClass names the sentinel err wraps.
func errClass(err error) string {
	if err == nil {
		return "nil"
	}
	for _, s := range modelSentinels {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return "unexpected error: " + err.Error()
}

// checkErr checks that got is the error the model wants, as a
// *fs.PathError for op on name.
func (r *modelRun) checkErr(what, op, name string, got, want error) {
	r.t.Helper()
	if errClass(got) != errClass(want) {
		r.fatalf("%s: got error %v (%s), want %s", what, got, errClass(got), errClass(want))
	}
	if got == nil {
		return
	}
	pe, ok := got.(*fs.PathError)
	if !ok {
		r.fatalf("%s: error %v is a %T, not a *fs.PathError", what, got, got)
	}
	if pe.Op != op || pe.Path != name {
		r.fatalf("%s: error %v has Op %q Path %q, want %q %q", what, got, pe.Op, pe.Path, op, name)
	}
}

// digest returns a hash of the whole database as the FS sees it: the
// schema, every row and every index entry.
func (r *modelRun) digest() string {
	r.t.Helper()
	return dbDigest(r.t, r.db, r.tx)
}

// dbDigest hashes the schema, rows and index entries of db, read in tx or
// in a read transaction of its own when tx is nil.
func dbDigest(t testing.TB, db *pagoda.DB, tx *pagoda.Tx) string {
	t.Helper()
	h := sha256.New()
	read := func(tx *pagoda.Tx) error {
		for _, o := range tx.Objects() {
			fmt.Fprintf(h, "%s %s %s %d %q\n", o.Type, o.Name, o.Table, o.RootPage, o.SQL)
			switch o.Type {
			case "table":
				tab, err := tx.Table(o.Name)
				if err != nil {
					return err
				}
				c := tab.Cursor()
				for ok := c.First(); ok; ok = c.Next() {
					fmt.Fprintf(h, "%d %x\n", c.Rowid(), c.Record().Raw())
				}
				if err := c.Err(); err != nil {
					return err
				}
			case "index":
				ix, err := tx.Index(o.Name)
				if err != nil {
					return err
				}
				c := ix.Cursor()
				for ok := c.First(); ok; ok = c.Next() {
					fmt.Fprintf(h, "%x\n", c.Key().Raw())
				}
				if err := c.Err(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var err error
	if tx != nil {
		err = read(tx)
	} else {
		err = db.View(read)
	}
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// step runs o on the FS and the model and compares the outcomes.
func (r *modelRun) step(o *mop) {
	r.t.Helper()
	r.log = append(r.log, o.String())
	what := o.String()
	before := r.digest()
	lo := time.Now().Unix()
	var got, want error
	op, name := "", o.name
	switch o.kind {
	case "WriteFile":
		op, got = "write", r.f.WriteFile(o.name, o.data, o.perm)
		want = r.m.writeFile(o.name, o.data, o.perm, lo, time.Now().Unix())
	case "Create":
		w, err := r.f.Create(o.name, o.perm)
		r.checkErr(what+": Create", "create", o.name, err, r.m.create(o.name))
		if err != nil {
			if r.outcomes != nil {
				r.outcomes["Create: "+errClass(err)]++
			}
			if r.digest() != before {
				r.fatalf("%s: failed, but changed the archive", what)
			}
			return
		}
		if o.between != nil {
			r.step(o.between)
			before = r.digest()
		}
		for rest := o.data; len(rest) > 0; {
			n := min(len(rest), 1+len(rest)/3)
			if k, err := w.Write(rest[:n]); k != n || err != nil {
				r.fatalf("%s: Write = %d, %v", what, k, err)
			}
			rest = rest[n:]
		}
		lo = time.Now().Unix()
		op, got = "write", w.Close()
		want = r.m.writeFile(o.name, o.data, o.perm, lo, time.Now().Unix())
		if err := w.Close(); !errors.Is(err, fs.ErrClosed) {
			r.fatalf("%s: second Close = %v, want fs.ErrClosed", what, err)
		}
	case "Mkdir":
		op, got = "mkdir", r.f.Mkdir(o.name, o.perm)
		want = r.m.mkdir(o.name, o.perm, lo, time.Now().Unix())
	case "MkdirAll":
		op, got = "mkdir", r.f.MkdirAll(o.name, o.perm)
		want = r.m.mkdirAll(o.name, o.perm, lo, time.Now().Unix())
	case "Remove":
		op, got = "remove", r.f.Remove(o.name)
		want = r.m.remove(o.name)
	case "RemoveAll":
		op, got = "removeall", r.f.RemoveAll(o.name)
		want = r.m.removeAll(o.name)
	case "Rename":
		op, got = "rename", r.f.Rename(o.name, o.to)
		want = r.m.rename(o.name, o.to)
	case "Chmod":
		op, got = "chmod", r.f.Chmod(o.name, o.perm)
		want = r.m.change(o.name, func(n *mnode) { n.mode = n.mode.Type() | permBits(o.perm) })
	case "Chtimes":
		op, got = "chtimes", r.f.Chtimes(o.name, time.Unix(5, 0), o.mtime)
		want = r.m.change(o.name, func(n *mnode) {
			if !o.mtime.IsZero() {
				n.lo, n.hi = o.mtime.Unix(), o.mtime.Unix()
			}
		})
	case "Symlink":
		op, got = "symlink", r.f.Symlink(o.to, o.name)
		want = r.m.symlink(o.to, o.name, lo, time.Now().Unix())
	default:
		r.fatalf("unknown operation %s", o.kind)
	}
	r.checkErr(what, op, name, got, want)
	if r.outcomes != nil {
		r.outcomes[o.kind+": "+errClass(got)]++
	}
	if got != nil && r.digest() != before {
		r.fatalf("%s: failed with %v, but changed the archive", what, got)
	}
}

// compareTree checks that f holds exactly the model's entries: names in
// walk order, types, modes, sizes, mtimes, content, link targets, and what
// the links resolve to.
func compareTree(t *testing.T, f *fsys.FS, m model, fatalf func(string, ...any)) {
	t.Helper()
	var walked []string
	err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			if !d.IsDir() {
				fatalf("the root is not a directory")
			}
			return nil
		}
		walked = append(walked, p)
		n, ok := m[p]
		if !ok {
			return nil // reported below
		}
		if d.Name() != path.Base(p) || d.Type() != n.mode.Type() {
			fatalf("%s: entry %v, want type %v", p, d, n.mode.Type())
		}
		info, err := d.Info()
		if err != nil {
			fatalf("%s: Info: %v", p, err)
		}
		li, err := f.Lstat(p)
		if err != nil {
			fatalf("%s: Lstat: %v", p, err)
		}
		size := int64(len(n.data))
		for _, fi := range []fs.FileInfo{info, li} {
			mt := fi.ModTime().Unix()
			if fi.Name() != path.Base(p) || fi.Mode() != n.mode || fi.Size() != size || mt < n.lo || mt > n.hi {
				fatalf("%s: name %q mode %v size %d mtime %d, want %v %d in [%d, %d]", p, fi.Name(), fi.Mode(), fi.Size(), mt, n.mode, size, n.lo, n.hi)
			}
		}
		switch n.mode.Type() {
		case 0:
			data, err := f.ReadFile(p)
			if err != nil || !bytes.Equal(data, n.data) {
				fatalf("%s: ReadFile = %d bytes, %v; want %d bytes", p, len(data), err, len(n.data))
			}
			fl, err := f.Open(p)
			if err != nil {
				fatalf("%s: Open: %v", p, err)
			}
			data, err = io.ReadAll(fl)
			fl.Close()
			if err != nil || !bytes.Equal(data, n.data) {
				fatalf("%s: Open and read = %d bytes, %v; want %d bytes", p, len(data), err, len(n.data))
			}
		case fs.ModeSymlink:
			target, err := f.ReadLink(p)
			if err != nil || target != n.link {
				fatalf("%s: ReadLink = %q, %v; want %q", p, target, err, n.link)
			}
			// Stat and ReadFile follow the link.
			tp, tn, werr := m.resolve(p, true)
			fi, err := f.Stat(p)
			if errClass(err) != errClass(werr) || err == nil && (fi.Mode() != tn.mode || fi.Name() != path.Base(p)) {
				fatalf("%s: Stat = %v, %v; want %v (%v)", p, fi, err, werr, tn)
			}
			data, err := f.ReadFile(p)
			switch {
			case werr != nil:
			case tn.isDir():
				werr = fsys.ErrIsDir
			case !bytes.Equal(data, tn.data):
				fatalf("%s: ReadFile through the link = %d bytes, want %d", p, len(data), len(tn.data))
			}
			if errClass(err) != errClass(werr) {
				fatalf("%s: ReadFile through the link: %v, want %v", p, err, werr)
			}
			if werr == nil && tn.isDir() {
				compareThroughLink(t, f, m, p, tp, fatalf)
			}
		}
		return nil
	})
	if err != nil {
		fatalf("WalkDir: %v", err)
	}
	if want := m.walk(); !slices.Equal(walked, want) {
		fatalf("WalkDir visits\n\t%q\nwant\n\t%q", walked, want)
	}
}

// compareThroughLink checks a directory reached through link, a symbolic
// link to directory dir: its listing, and each entry named through the
// link (the link is on the way, not at the end).
func compareThroughLink(t *testing.T, f *fsys.FS, m model, link, dir string, fatalf func(string, ...any)) {
	t.Helper()
	var want []string
	for k := range m {
		if modelParent(k) == dir {
			want = append(want, path.Base(k))
		}
	}
	slices.Sort(want)
	list, err := f.ReadDir(link)
	if err != nil {
		fatalf("ReadDir(%q) through the link: %v", link, err)
	}
	var got []string
	for _, d := range list {
		got = append(got, d.Name())
	}
	if !slices.Equal(got, want) {
		fatalf("ReadDir(%q) through the link to %q = %q, want %q", link, dir, got, want)
	}
	for _, name := range want {
		p, full := link+"/"+name, name
		if dir != "" {
			full = dir + "/" + name
		}
		n := m[full]
		li, err := f.Lstat(p)
		if err != nil || li.Mode() != n.mode || li.Name() != name {
			fatalf("Lstat(%q) through a link: %v, %v; want mode %v", p, li, err, n.mode)
		}
		_, tn, werr := m.resolve(full, true)
		fi, err := f.Stat(p)
		if errClass(err) != errClass(werr) || err == nil && fi.Mode() != tn.mode {
			fatalf("Stat(%q) through a link = %v, %v; want %v (%v)", p, fi, err, werr, tn)
		}
		if n.mode.Type() == 0 {
			if data, err := f.ReadFile(p); err != nil || !bytes.Equal(data, n.data) {
				fatalf("ReadFile(%q) through a link = %d bytes, %v; want %d bytes", p, len(data), err, len(n.data))
			}
		}
		if n.mode.Type() == fs.ModeSymlink {
			if target, err := f.ReadLink(p); err != nil || target != n.link {
				fatalf("ReadLink(%q) through a link = %q, %v; want %q", p, target, err, n.link)
			}
		}
	}
}

// modelVariant says how a run uses transactions.
type modelVariant int

const (
	ownTx      modelVariant = iota // each write commits on its own
	inTxCommit                     // every write in one caller's transaction, committed
	inTxAbort                      // the same, rolled back
)

// modelSeeds adds seeds to TestModel for a longer search:
// go test -run TestModel -modelseeds 500 ./fsys
var modelSeeds = flag.Int("modelseeds", 0, "extra seeds for each variant of TestModel")

func TestModel(t *testing.T) {
	extra := func(first uint64) []uint64 {
		var s []uint64
		for i := range uint64(*modelSeeds) {
			s = append(s, first+i*3)
		}
		return s
	}
	for _, c := range []struct {
		name    string
		variant modelVariant
		sqlite3 bool // start from the table as sqlite3 makes it, without the listing index
		seeds   []uint64
	}{
		{"own", ownTx, false, append([]uint64{1, 2, 3, 4, 5, 6}, extra(100)...)},
		{"in-tx-commit", inTxCommit, false, append([]uint64{7, 8, 9}, extra(101)...)},
		{"in-tx-rollback", inTxAbort, false, append([]uint64{10, 11, 12}, extra(102)...)},
		{"sqlite3-table", ownTx, true, append([]uint64{13, 14}, extra(103)...)},
		{"sqlite3-table-in-tx", inTxCommit, true, append([]uint64{15, 16}, extra(104)...)},
	} {
		for _, seed := range c.seeds {
			compress := seed%2 == 1
			t.Run(fmt.Sprintf("%s/seed=%d/compress=%v", c.name, seed, compress), func(t *testing.T) {
				runModel(t, c.variant, c.sqlite3, seed, 300, compress)
			})
		}
	}
}

func runModel(t *testing.T, variant modelVariant, sqlite3 bool, seed uint64, ops int, compress bool) {
	dbPath := filepath.Join(t.TempDir(), "a.db")
	db := dbtest.Open(t, dbPath, nil)
	var schema []pagoda.Object
	if sqlite3 {
		insertRows(t, db, false)
		db.View(func(tx *pagoda.Tx) error { schema = tx.Objects(); return nil })
	}
	f := fsys.New(db, &fsys.Options{Compress: compress})
	rng := rand.New(rand.NewPCG(seed, 99))
	r := &modelRun{t: t, db: db, f: f, m: model{}, outcomes: map[string]int{}}
	g := &modelGen{r: rng, m: r.m}

	// The transaction variants start from an archive with some entries,
	// except for one seed in two, which starts from an empty database.
	if variant != ownTx && seed%2 == 0 {
		for range ops / 4 {
			r.step(g.op(false))
		}
	}
	var tx *pagoda.Tx
	var beforeTx model
	var beforeDigest string
	var beforeBytes []byte
	if variant != ownTx {
		beforeTx, beforeDigest, beforeBytes = r.m.clone(), r.digest(), snapshotBytes(t, db)
		var err error
		if tx, err = db.Begin(true); err != nil {
			t.Fatal(err)
		}
		// On failure, end the transaction before Close waits for it.
		defer tx.Rollback()
		r.tx, r.f = tx, f.In(tx)
	}
	for i := range ops {
		r.step(g.op(false))
		if i%7 == 6 {
			compareTree(t, r.f, r.m, r.fatalf)
		}
	}
	compareTree(t, r.f, r.m, r.fatalf)
	var counts []string
	for _, k := range slices.Sorted(maps.Keys(r.outcomes)) {
		counts = append(counts, fmt.Sprintf("%s %d", k, r.outcomes[k]))
	}
	t.Logf("%d entries; operations:\n\t%s", len(r.m), strings.Join(counts, "\n\t"))

	switch variant {
	case inTxAbort:
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		r.tx, r.f, r.m = nil, f, beforeTx
		if d := r.digest(); d != beforeDigest {
			t.Fatal("the archive changed, though the transaction was rolled back")
		}
		if !bytes.Equal(snapshotBytes(t, db), beforeBytes) {
			t.Fatal("the database file changed, though the transaction was rolled back")
		}
		compareTree(t, f, r.m, r.fatalf)
	case inTxCommit:
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		r.tx, r.f = nil, f
		compareTree(t, f, r.m, r.fatalf)
	}

	// Dangling and looping links fail fstest's Open checks: remove them.
	for _, k := range slices.Sorted(maps.Keys(r.m)) {
		if n, ok := r.m[k]; ok && n.mode.Type() == fs.ModeSymlink {
			if _, _, err := r.m.resolve(k, true); err != nil {
				r.step(&mop{kind: "Remove", name: k})
			}
		}
	}
	if err := fstest.TestFS(f, r.m.walk()...); err != nil {
		t.Fatal(err)
	}
	if sqlite3 {
		// The FS adds no index to an archive it did not create.
		var now []pagoda.Object
		db.View(func(tx *pagoda.Tx) error { now = tx.Objects(); return nil })
		if !slices.Equal(now, schema) {
			t.Errorf("the schema changed from %v to %v", schema, now)
		}
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	checkSQLite(t, dbPath, len(r.m))

	// Reopened, the archive is the same.
	db2, err := pagoda.Open(dbPath, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	r.db = db2
	compareTree(t, fsys.New(db2, nil), r.m, r.fatalf)
}

// snapshotBytes returns the database's pages as of the last commit.
func snapshotBytes(t testing.TB, db *pagoda.DB) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := db.View(func(tx *pagoda.Tx) error {
		_, err := tx.WriteTo(&buf)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkSQLite opens the closed database file with SQLite: integrity_check
// must say ok, and sqlar must hold rows rows (when rows >= 0).
func checkSQLite(t *testing.T, dbPath string, rows int) {
	t.Helper()
	sdb := sqltest.Open(t, dbPath)
	defer sdb.Close()
	var ok string
	if err := sdb.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("SQLite integrity_check: %q, %v", ok, err)
	}
	if rows < 0 {
		return
	}
	var n int
	if err := sdb.QueryRow("SELECT count(*) FROM sqlar").Scan(&n); err != nil && rows > 0 {
		t.Fatal(err)
	}
	if n != rows {
		t.Fatalf("SQLite counts %d rows in sqlar, want %d", n, rows)
	}
}
