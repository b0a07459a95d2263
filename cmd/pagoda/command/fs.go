package command

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
)

// newFSCmd builds the fs command group: a filesystem in the database's
// SQLite Archive table, as `sqlite3 -A` reads and writes it. The commands
// are in fs.go (ls, cat, rm, mkdir, put), fs_copy.go (add, extract) and
// fs_serve.go (serve).
func newFSCmd() *cli.Command {
	cmd := &cli.Command{
		Use:   "fs",
		Short: "A filesystem in the file: SQLite Archives (sqlite3 -A)",
		Long: `Store, list, read and extract a tree of files in a database's sqlar
table, the SQLite Archive that "sqlite3 FILE -A" creates and reads: each
command reads archives that sqlite3 made, and sqlite3 reads what they
write. PATHs inside the archive are relative to its root and use "/"
("." or no PATH is the root); a leading "/" or "./" is ignored, so that in
an archive made by "sqlite3 FILE -Ac ." (names "./a.txt", ...) a PATH is
given as sqlite3 -t lists it or without its "./", and what is written
there keeps the "./". A FILE without an archive (no sqlar table) is an
error, "no SQLite Archive in FILE", for the commands that read.`,
		Args: cli.NoArgs, // "pagoda fs nosuch" is an unknown command
		RunE: func(cmd *cli.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		newFSAddCmd(),
		newFSLsCmd(),
		newFSCatCmd(),
		newFSExtractCmd(),
		newFSRmCmd(),
		newFSMkdirCmd(),
		newFSPutCmd(),
		newFSServeCmd(),
	)
	return cmd
}

// fsView opens the database at path read-only and runs fn with an FS that
// reads in one read transaction (one snapshot), and with the command's
// buffered output, flushed at the end (also after an error). A database
// without an archive is "no SQLite Archive in FILE" (noArchive).
func fsView(cmd *cli.Command, path string, fn func(f *fsys.FS, out *output) error) error {
	return runView(cmd, path, func(tx *pagoda.Tx, out *output) error {
		f := fsys.New(tx.DB(), nil).In(tx)
		if err := f.Exists(); err != nil {
			return noArchive(path, err)
		}
		return fn(f, out)
	})
}

// noArchive words fsys.ErrNoArchive for the database at path; other
// errors are returned as they are.
func noArchive(path string, err error) error {
	if errors.Is(err, fsys.ErrNoArchive) {
		return &cmdError{msg: "no SQLite Archive in " + path, err: err}
	}
	return err
}

// fsUpdate opens the database at path for writing and runs fn with an FS
// that writes in one write transaction, committed if fn returns nil. With
// create, a missing file is created (and removed again if fn fails).
func fsUpdate(path string, create bool, opts *fsys.Options, fn func(f *fsys.FS) error) error {
	return update(path, create, func(tx *pagoda.Tx) error {
		return fn(fsys.New(tx.DB(), opts).In(tx))
	})
}

// openDB opens the database at path, reporting a missing file as "open
// FILE: no such file or directory", as view does.
func openDB(path string, opts *pagoda.Options) (*pagoda.DB, error) {
	db, err := pagoda.Open(path, opts)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == path {
			return nil, pe
		}
		return nil, err
	}
	return db, nil
}

// archivePath converts a PATH argument to a name in the archive: cleaned,
// without leading slashes, "." for the root. A name that climbs above the
// root ("..") is an error.
func archivePath(arg string) (string, error) {
	p := strings.TrimLeft(path.Clean(arg), "/")
	if p == "" {
		p = "."
	}
	if !fs.ValidPath(p) {
		return "", fmt.Errorf("invalid path %q: it leaves the archive's root", arg)
	}
	return p, nil
}

// fsError shortens the errors fsys returns for a path to "PATH: why", as
// ls or rm would say it; other errors are returned as they are.
func fsError(err error) error {
	var pe *fs.PathError
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	var why string
	switch {
	case errors.Is(err, fsys.ErrIsDir):
		why = "is a directory"
	case errors.Is(err, fsys.ErrNotDir):
		why = "not a directory"
	case errors.Is(err, fsys.ErrNotEmpty):
		why = "directory not empty"
	case errors.Is(err, fs.ErrNotExist):
		why = "no such file or directory"
	case errors.Is(err, fs.ErrExist):
		why = "file exists"
	default:
		return err
	}
	return &cmdError{msg: pe.Path + ": " + why, err: err}
}

// lsMode formats a file mode as ls -l does: the type (-, d, l, p, s, c,
// b), then rwx for owner, group and others, with s/S and t/T for setuid,
// setgid and sticky.
func lsMode(m fs.FileMode) string {
	b := []byte("?rwxrwxrwx")
	switch {
	case m.IsRegular():
		b[0] = '-'
	case m&fs.ModeDir != 0:
		b[0] = 'd'
	case m&fs.ModeSymlink != 0:
		b[0] = 'l'
	case m&fs.ModeNamedPipe != 0:
		b[0] = 'p'
	case m&fs.ModeSocket != 0:
		b[0] = 's'
	case m&fs.ModeCharDevice != 0:
		b[0] = 'c'
	case m&fs.ModeDevice != 0:
		b[0] = 'b'
	}
	for i := range 9 {
		if m&(1<<(8-i)) == 0 {
			b[i+1] = '-'
		}
	}
	special := func(i int, set bool, lower, upper byte) {
		if !set {
			return
		}
		if b[i] == 'x' {
			b[i] = lower
		} else {
			b[i] = upper
		}
	}
	special(3, m&fs.ModeSetuid != 0, 's', 'S')
	special(6, m&fs.ModeSetgid != 0, 's', 'S')
	special(9, m&fs.ModeSticky != 0, 't', 'T')
	return string(b)
}

func newFSLsCmd() *cli.Command {
	var long, recursive bool
	cmd := &cli.Command{
		Use:   "ls FILE [PATH]",
		Short: "List a directory of the archive",
		Long: `List the entries of directory PATH (the root if absent), one name per
line, sorted. A PATH that is a file lists that file.

With -R, everything below PATH is listed, each directory followed by its
contents, with names relative to PATH. With -l, each line is as ls -l
(and sqlite3 -Atv) prints it: mode, size, modification time (UTC), name,
and " -> TARGET" for a symbolic link, whose size is its target's length.`,
		Args: cli.RangeArgs(1, 2),
		RunE: func(cmd *cli.Command, args []string) error {
			name := "."
			if len(args) == 2 {
				var err error
				if name, err = archivePath(args[1]); err != nil {
					return err
				}
			}
			return fsView(cmd, args[0], func(f *fsys.FS, out *output) error {
				return fsError(fsList(f, out, name, long, recursive))
			})
		},
	}
	cmd.Flags().BoolVarP(&long, "long", "l", false, "print mode, size and modification time too")
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "list everything below PATH")
	return cmd
}

// fsList prints directory name of f (or file name) on out.
func fsList(f *fsys.FS, out *output, name string, long, recursive bool) error {
	fi, err := f.Stat(name)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		li, err := f.Lstat(name) // a symbolic link is listed as itself
		if err != nil {
			return err
		}
		return fsListEntry(f, out, name, name, fs.FileInfoToDirEntry(li), long)
	}
	if !recursive {
		entries, err := f.ReadDir(name)
		if err != nil {
			return err
		}
		for _, d := range entries {
			if err := fsListEntry(f, out, path.Join(name, d.Name()), d.Name(), d, long); err != nil {
				return err
			}
		}
		return nil
	}
	return fs.WalkDir(f, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == name {
			return err
		}
		rel := p
		if name != "." {
			rel = p[len(name)+1:]
		}
		return fsListEntry(f, out, p, rel, d, long)
	})
}

// fsListEntry prints one line of ls for d: shown, or with long its mode,
// size and time too. full is d's name in f.
func fsListEntry(f *fsys.FS, out *output, full, shown string, d fs.DirEntry, long bool) error {
	if !long {
		out.WriteString(shown)
		out.WriteString("\n")
		return out.err
	}
	fi, err := d.Info()
	if err != nil {
		return err
	}
	size, link := fi.Size(), ""
	if fi.IsDir() {
		size = 0
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := f.ReadLink(full)
		if err != nil {
			return err
		}
		size, link = int64(len(target)), " -> "+target
	}
	fmt.Fprintf(out, "%s %10d %s %s%s\n", lsMode(fi.Mode()), size,
		fi.ModTime().UTC().Format("2006-01-02 15:04"), shown, link)
	return out.err
}

func newFSCatCmd() *cli.Command {
	return &cli.Command{
		Use:   "cat FILE PATH...",
		Short: "Print the content of files in the archive",
		Long: `Write the content of each PATH to standard output, in order, following
symbolic links. Nothing is written if a PATH is missing or a directory.
Compressed files are inflated as they are written; a file whose data is
damaged, or does not inflate to its stored size, stops cat with an error
(a corrupt database) after the bytes before the damage.`,
		Args: cli.MinimumNArgs(2),
		RunE: func(cmd *cli.Command, args []string) error {
			names := make([]string, len(args)-1)
			for i, a := range args[1:] {
				var err error
				if names[i], err = archivePath(a); err != nil {
					return err
				}
			}
			return fsView(cmd, args[0], func(f *fsys.FS, out *output) error {
				// Check every PATH first, so that a missing one prints nothing.
				for _, name := range names {
					if fi, err := f.Stat(name); err != nil {
						return fsError(err)
					} else if fi.IsDir() {
						return fsError(&fs.PathError{Op: "read", Path: name, Err: fsys.ErrIsDir})
					}
				}
				for _, name := range names {
					if err := fsCat(f, out, name); err != nil {
						return fsError(err)
					}
				}
				return nil
			})
		},
	}
}

// fsCat copies file name of f to out.
func fsCat(f *fsys.FS, out *output, name string) error {
	fl, err := f.Open(name)
	if err != nil {
		return err
	}
	defer fl.Close()
	if fi, err := fl.Stat(); err != nil {
		return err
	} else if fi.IsDir() {
		return &fs.PathError{Op: "read", Path: name, Err: fsys.ErrIsDir}
	}
	_, err = io.Copy(out, fl)
	if out.err != nil {
		return out.err
	}
	return err
}

// archivePaths converts command-line paths to archive names.
func archivePaths(args []string) ([]string, error) {
	names := make([]string, len(args))
	for i, a := range args {
		var err error
		if names[i], err = archivePath(a); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// eachName applies op to each name in turn, stopping at the first error.
func eachName(names []string, op func(name string) error) error {
	for _, name := range names {
		if err := op(name); err != nil {
			return fsError(err)
		}
	}
	return nil
}

func newFSRmCmd() *cli.Command {
	var recursive bool
	cmd := &cli.Command{
		Use:   "rm FILE PATH...",
		Short: "Remove files or directories from the archive",
		Long: `Remove each PATH: a file, a symbolic link or an empty directory; with
-r, also a directory and everything below it. All are removed in one
transaction, or, after an error (a missing PATH, say), none. FILE must
exist.`,
		Args: cli.MinimumNArgs(2),
		RunE: func(cmd *cli.Command, args []string) error {
			names, err := archivePaths(args[1:])
			if err != nil {
				return err
			}
			for i, name := range names {
				if name == "." {
					return fmt.Errorf("%s: cannot remove the archive's root", args[1+i])
				}
			}
			return fsUpdate(args[0], false, nil, func(f *fsys.FS) error {
				return eachName(names, func(name string) error {
					if !recursive {
						return f.Remove(name)
					}
					if _, err := f.Lstat(name); err != nil {
						return err
					}
					return f.RemoveAll(name)
				})
			})
		},
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "remove directories and their contents")
	return cmd
}

func newFSMkdirCmd() *cli.Command {
	var parents bool
	cmd := &cli.Command{
		Use:   "mkdir FILE PATH...",
		Short: "Create directories in the archive",
		Long: `Create each directory PATH, mode 0755. Its parent must exist, unless -p is
given: then missing parents are created too, and an existing directory is
no error. FILE is created if it does not exist.`,
		Args: cli.MinimumNArgs(2),
		RunE: func(cmd *cli.Command, args []string) error {
			names, err := archivePaths(args[1:])
			if err != nil {
				return err
			}
			return fsUpdate(args[0], true, nil, func(f *fsys.FS) error {
				return eachName(names, func(name string) error {
					if parents {
						return f.MkdirAll(name, 0o755)
					}
					return f.Mkdir(name, 0o755)
				})
			})
		},
	}
	cmd.Flags().BoolVarP(&parents, "parents", "p", false, "create missing parents; no error if PATH exists")
	return cmd
}

func newFSPutCmd() *cli.Command {
	var compress bool
	cmd := &cli.Command{
		Use:   "put FILE PATH [SRC]",
		Short: "Store a local file, or standard input, as a file in the archive",
		Long: `Store the content of the local file SRC (standard input if it is absent
or "-") as file PATH of the archive, replacing any file there. From SRC,
PATH takes SRC's permissions and modification time; from standard input,
a new PATH gets mode 0644 and the current time. Missing parent
directories are created. FILE is created if it does not exist.`,
		Args: cli.RangeArgs(2, 3),
		RunE: func(cmd *cli.Command, args []string) error {
			name, err := archivePath(args[1])
			if err != nil {
				return err
			}
			if name == "." {
				return fmt.Errorf("%s: PATH must name a file", args[1])
			}
			var data []byte
			var src fs.FileInfo
			if len(args) == 3 && args[2] != "-" {
				if src, err = os.Stat(args[2]); err != nil {
					return err
				}
				if !src.Mode().IsRegular() {
					return fmt.Errorf("%s: not a regular file", args[2])
				}
				data, err = os.ReadFile(args[2])
			} else {
				data, err = io.ReadAll(cmd.InOrStdin())
			}
			if err != nil {
				return err
			}
			return fsUpdate(args[0], true, &fsys.Options{Compress: compress}, func(f *fsys.FS) error {
				if dir := path.Dir(name); dir != "." {
					if err := f.MkdirAll(dir, 0o755); err != nil {
						return fsError(err)
					}
				}
				if err := f.WriteFile(name, data, 0o644); err != nil {
					return fsError(err)
				}
				if src == nil {
					return nil
				}
				if err := f.Chmod(name, src.Mode().Perm()); err != nil {
					return fsError(err)
				}
				return fsError(f.Chtimes(name, time.Time{}, src.ModTime()))
			})
		},
	}
	cmd.Flags().BoolVar(&compress, "compress", false, "store the data zlib-compressed when that makes it smaller")
	return cmd
}
