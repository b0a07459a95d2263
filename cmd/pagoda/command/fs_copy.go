package command

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda/fsys"
)

func newFSAddCmd() *cli.Command {
	var compress bool
	cmd := &cli.Command{
		Use:   "add FILE DIR",
		Short: "Store a directory's contents in the archive",
		Long: `Store everything below the local directory DIR in FILE's archive, with
names relative to DIR, as "cd DIR && sqlite3 FILE -Ac *" does (hidden
files included): DIR's entries at the archive's root, each file,
directory and symbolic link with its mode and modification time. Files
already in the archive are replaced; other entries stay. All is stored in
one transaction, or, after an error, nothing. FILE is created if it does
not exist; if it lies inside DIR, it is not stored. Sockets, pipes and
devices are skipped, with a warning.

A progress bar is shown on stderr when stderr is a terminal. At the end,
"added N entries (B bytes) to FILE" is printed.`,
		Args: cli.ExactArgs(2),
		RunE: func(cmd *cli.Command, args []string) error {
			file, dir := args[0], args[1]
			if st, err := os.Stat(dir); err != nil {
				return err
			} else if !st.IsDir() {
				return fmt.Errorf("%s: not a directory", dir)
			}
			src := sourceFS(file, dir, cmd.ErrOrStderr())
			var bar *progress
			var entries, stored int64
			opts := &fsys.Options{
				Compress: compress,
				Progress: func(name string, bytes int64) {
					entries, stored = entries+1, bytes
					if bar != nil {
						bar.Set64(bytes)
					}
				},
			}
			err := fsUpdate(file, true, opts, func(f *fsys.FS) error {
				if stderr := cmd.ErrOrStderr(); isTerminal(stderr) {
					total, err := treeBytes(src)
					if err != nil {
						return err
					}
					bar = newProgress(stderr, "adding", total)
				}
				err := f.CopyFS(src)
				if bar != nil {
					// The commit comes next: the bar goes, whatever the outcome.
					bar.Clear()
				}
				return fsError(err)
			})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "added %s (%d bytes) to %s\n", countEntries(entries), stored, file)
			return err
		},
	}
	cmd.Flags().BoolVar(&compress, "compress", false, "store file data zlib-compressed when that makes it smaller (as sqlite3 -A does)")
	return cmd
}

// countEntries returns "1 entry" or "N entries".
func countEntries(n int64) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

// sourceFS returns the tree below dir for add: os.DirFS(dir), without the
// database file and its -wal, -shm and -journal companions when file lies
// inside dir, and without entries an archive cannot hold (sockets, pipes,
// devices), which are reported once each on warn.
func sourceFS(file, dir string, warn io.Writer) fs.FS {
	s := &sourceDir{fsys: os.DirFS(dir), skip: make(map[string]bool), warn: warn}
	d, err1 := filepath.EvalSymlinks(dir)
	fd, err2 := filepath.EvalSymlinks(filepath.Dir(file))
	if err1 == nil && err2 == nil {
		d, err1 = filepath.Abs(d)
		fd, err2 = filepath.Abs(fd)
	}
	if err1 != nil || err2 != nil {
		return s
	}
	rel, err := filepath.Rel(d, filepath.Join(fd, filepath.Base(file)))
	if err != nil || !filepath.IsLocal(rel) {
		return s
	}
	rel = filepath.ToSlash(rel)
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		s.skip[rel+suffix] = true
	}
	return s
}

// sourceDir is a tree without some of its names: they are left out of
// directory listings, so fs.WalkDir, and thus FS.CopyFS, never meets them.
type sourceDir struct {
	fsys fs.FS
	skip map[string]bool // names left out silently
	warn io.Writer       // where names of other types are reported
}

func (s *sourceDir) Open(name string) (fs.File, error)      { return s.fsys.Open(name) }
func (s *sourceDir) Stat(name string) (fs.FileInfo, error)  { return fs.Stat(s.fsys, name) }
func (s *sourceDir) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(s.fsys, name) }
func (s *sourceDir) ReadLink(name string) (string, error)   { return fs.ReadLink(s.fsys, name) }
func (s *sourceDir) ReadFile(name string) ([]byte, error)   { return fs.ReadFile(s.fsys, name) }
func (s *sourceDir) ReadDir(name string) ([]fs.DirEntry, error) {
	list, err := fs.ReadDir(s.fsys, name)
	keep := list[:0]
	for _, d := range list {
		p := path.Join(name, d.Name())
		switch {
		case s.skip[p]:
			continue
		case d.Type()&^(fs.ModeDir|fs.ModeSymlink) != 0:
			// A socket, pipe or device: sqlar has no place for it.
			s.skip[p] = true
			fmt.Fprintf(s.warn, "pagoda: skipping %s: cannot store a file of type %s\n", p, lsMode(d.Type())[:1])
			continue
		}
		keep = append(keep, d)
	}
	return keep, err
}

var _ interface {
	fs.ReadDirFS
	fs.ReadFileFS
	fs.StatFS
	fs.ReadLinkFS
} = (*sourceDir)(nil)

// treeBytes returns the total size of the regular files in src.
func treeBytes(src fs.FS) (int64, error) {
	var total int64
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			total += fi.Size()
		}
		return err
	})
	return total, err
}

func newFSExtractCmd() *cli.Command {
	cmd := &cli.Command{
		Use:   "extract FILE DIR [PATH...]",
		Short: "Write the archive's files to a directory",
		Long: `Write every entry of FILE's archive, or those at or below the given PATHs,
under the local directory DIR (created if missing), with their archive
names, as "sqlite3 FILE -AxC DIR" does: files with their permissions and
modification times, directories (missing parents of a PATH are created
too), symbolic links as symbolic links. Existing files and links are
replaced. Directories get their permissions and times last, once their
contents are written. A name that would leave DIR is refused, and nothing
is written through a symbolic link that leads out of it. A file whose data is damaged, or does
not inflate to its stored size, stops extract with an error (a corrupt
database), and what was written of it is removed.

A progress bar is shown on stderr when stderr is a terminal. At the end,
"extracted N entries (B bytes) to DIR" is printed.`,
		Args: cli.MinimumNArgs(2),
		RunE: func(cmd *cli.Command, args []string) error {
			roots := []string{"."}
			if len(args) > 2 {
				roots = roots[:0]
				for _, a := range args[2:] {
					name, err := archivePath(a)
					if err != nil {
						return err
					}
					roots = append(roots, name)
				}
			}
			var n, written int64
			err := fsView(cmd, args[0], func(f *fsys.FS, _ *output) error {
				var err error
				n, written, err = fsExtract(f, args[1], roots, cmd.ErrOrStderr())
				return fsError(err)
			})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "extracted %s (%d bytes) to %s\n", countEntries(n), written, args[1])
			return err
		},
	}
	return cmd
}

// extractEntry is one entry to extract: its name in the archive and its
// metadata, symbolic links not followed.
type extractEntry struct {
	name string
	info fs.FileInfo
}

// extractList returns the entries at or below each of roots, each once,
// directories before their contents.
func extractList(f *fsys.FS, roots []string) (list []extractEntry, total int64, err error) {
	seen := make(map[string]bool)
	add := func(name string, fi fs.FileInfo) {
		if name == "." || seen[name] {
			return
		}
		seen[name] = true
		list = append(list, extractEntry{name, fi})
		if fi.Mode().IsRegular() {
			total += fi.Size()
		}
	}
	for _, root := range roots {
		fi, err := f.Lstat(root)
		if err != nil {
			return nil, 0, err
		}
		if !fi.IsDir() {
			add(root, fi)
			continue
		}
		err = fs.WalkDir(f, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err == nil {
				add(p, fi)
			}
			return err
		})
		if err != nil {
			return nil, 0, err
		}
	}
	return list, total, nil
}

// fsExtract writes the entries at or below roots of f under dir, with a
// progress bar on stderr when it is a terminal. It returns the number of
// entries and of file bytes written.
func fsExtract(f *fsys.FS, dir string, roots []string, stderr io.Writer) (n, written int64, err error) {
	list, total, err := extractList(f, roots)
	if err != nil {
		return 0, 0, err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return 0, 0, err
	}
	// Every write goes through root, which refuses names (and symbolic
	// links already on disk) that lead out of dir.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, 0, err
	}
	defer root.Close()
	var bar *progress
	if isTerminal(stderr) {
		bar = newProgress(stderr, "extracting", total)
		defer func() {
			bar.Clear()
		}()
	}
	var dirs []extractEntry
	for _, e := range list {
		local := filepath.FromSlash(e.name)
		if !fs.ValidPath(e.name) || !filepath.IsLocal(local) {
			return n, written, fmt.Errorf("refusing to extract %q: it would leave %s", e.name, dir)
		}
		if parent := filepath.Dir(local); parent != "." {
			if err := root.MkdirAll(parent, 0o777); err != nil {
				return n, written, err
			}
		}
		mode := e.info.Mode()
		switch {
		case mode.IsDir():
			err = extractDir(root, local)
			dirs = append(dirs, e)
		case mode&fs.ModeSymlink != 0:
			var target string
			if target, err = f.ReadLink(e.name); err == nil {
				if err = clearPath(root, local); err == nil {
					err = root.Symlink(target, local)
				}
			}
		case mode.IsRegular():
			var w int64
			w, err = extractFile(f, root, e, bar)
			written += w
		default:
			fmt.Fprintf(stderr, "pagoda: skipping %s: cannot extract a file of type %s\n", e.name, lsMode(mode)[:1])
			continue
		}
		if err != nil {
			return n, written, err
		}
		n++
	}
	// Directories last, deepest first: their permissions (which may forbid
	// writing into them) and times (which writing into them changed).
	for i := len(dirs) - 1; i >= 0; i-- {
		e := dirs[i]
		local := filepath.FromSlash(e.name)
		if err := root.Chmod(local, e.info.Mode().Perm()); err != nil {
			return n, written, err
		}
		if err := root.Chtimes(local, time.Time{}, e.info.ModTime()); err != nil {
			return n, written, err
		}
	}
	return n, written, nil
}

// extractDir creates directory local, writable by its owner until the
// second pass of extract sets its permissions. An existing directory is
// made writable the same way.
func extractDir(root *os.Root, local string) error {
	err := root.Mkdir(local, 0o700)
	if errors.Is(err, fs.ErrExist) {
		fi, lerr := root.Lstat(local)
		if lerr != nil || !fi.IsDir() {
			return err
		}
		return root.Chmod(local, fi.Mode().Perm()|0o700)
	}
	return err
}

// clearPath removes what is at local in root, so that an entry can take
// its place; a directory there is an error.
func clearPath(root *os.Root, local string) error {
	fi, err := root.Lstat(local)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return &fs.PathError{Op: "extract", Path: filepath.Join(root.Name(), local), Err: errors.New("a directory is in the way")}
	}
	return root.Remove(local)
}

// extractFile writes regular file e of f at its name in root, with its
// permissions and modification time, and returns the bytes written.
func extractFile(f *fsys.FS, root *os.Root, e extractEntry, bar *progress) (int64, error) {
	local := filepath.FromSlash(e.name)
	if err := clearPath(root, local); err != nil {
		return 0, err
	}
	in, err := f.Open(e.name)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := root.OpenFile(local, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	var w io.Writer = out
	if bar != nil {
		w = io.MultiWriter(out, bar)
	}
	n, err := io.Copy(w, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// A file cut short (its data damaged, say) is not left behind to
		// pass for the whole.
		root.Remove(local)
		return n, err
	}
	if err := root.Chmod(local, e.info.Mode().Perm()); err != nil {
		return n, err
	}
	return n, root.Chtimes(local, time.Time{}, e.info.ModTime())
}
