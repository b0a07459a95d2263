package fsys_test

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
)

// TestReadsSeeEveryCommit: an FS's views keep their transactions between
// calls and renew them, keeping their place when nothing was committed;
// every call must still see every commit made before it, through this FS,
// another FS over the same DB, or the DB's own API, including one that
// drops and recreates the archive's table.
func TestReadsSeeEveryCommit(t *testing.T) {
	db := openDB(t, nil)
	f := fsys.New(db, nil)
	other := fsys.New(db, nil)
	names := func() []string {
		var out []string
		err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			out = append(out, p)
			return nil
		})
		must(t, err)
		return out
	}
	must(t, f.MkdirAll("a/b", 0o755))
	for i := range 40 {
		must(t, f.WriteFile(fmt.Sprintf("a/b/f%02d", i), []byte{byte(i)}, 0o644))
	}
	want := names()
	for i := range 40 {
		// A write through another FS, then reads through this one.
		name := fmt.Sprintf("a/g%02d", i)
		must(t, other.WriteFile(name, []byte(name), 0o644))
		got, err := f.ReadFile(name)
		if err != nil || string(got) != name {
			t.Fatalf("ReadFile(%s) after another FS wrote it = %q, %v", name, got, err)
		}
		want = append(want, name)
		slices.Sort(want)
		if got := names(); !slices.Equal(got, want) {
			t.Fatalf("walk after writing %s:\n got %v\nwant %v", name, got, want)
		}
		if i%10 == 9 {
			// The same names again with nothing committed in between:
			// the renewed views keep their places.
			if got := names(); !slices.Equal(got, want) {
				t.Fatalf("second walk after writing %s differs", name)
			}
		}
	}
	// An FS In a caller's read transaction that the caller renews: the
	// views must follow it to the new commit.
	tx, err := db.Begin(false)
	must(t, err)
	in := f.In(tx)
	for i := range 5 {
		name := fmt.Sprintf("a/h%02d", i)
		if _, err := in.Stat(name); !errorsIsNotExist(err) {
			t.Fatalf("Stat(%s) before it was written: %v", name, err)
		}
		must(t, other.WriteFile(name, []byte(name), 0o644))
		if _, err := in.Stat(name); !errorsIsNotExist(err) {
			t.Fatalf("Stat(%s) in the old snapshot: %v", name, err)
		}
		if same, err := tx.Renew(); err != nil || same {
			t.Fatalf("Renew after a commit = %v, %v", same, err)
		}
		if got, err := in.ReadFile(name); err != nil || string(got) != name {
			t.Fatalf("ReadFile(%s) In a renewed transaction = %q, %v", name, got, err)
		}
	}
	must(t, tx.Rollback())
	// The table dropped and made again outside fsys: stale handles in the
	// pooled views must not be used.
	must(t, db.Update(func(tx *pagoda.Tx) error {
		return tx.DropTable(fsys.TableName)
	}))
	if _, err := f.Stat("a"); !errorsIsNotExist(err) {
		t.Fatalf("Stat after the table was dropped: %v", err)
	}
	must(t, other.WriteFile("z", []byte("z"), 0o644))
	if got := names(); !slices.Equal(got, []string{".", "z"}) {
		t.Fatalf("walk of the new archive: %v", got)
	}
}

func errorsIsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// TestRenewBesideWriter: readers list and read beside a writer that keeps
// rewriting every file of a directory in one transaction, with checkpoints
// every few commits; each call must find the whole directory and read whole
// files, whichever commit it sees (run it with -race).
func TestRenewBesideWriter(t *testing.T) {
	db := openDB(t, &pagoda.Options{CheckpointPages: 8})
	f := fsys.New(db, nil)
	const files = 20
	write := func(round int) {
		must(t, db.Update(func(tx *pagoda.Tx) error {
			in := f.In(tx)
			for i := range files {
				if err := in.WriteFile(fmt.Sprintf("d/f%02d", i), fmt.Appendf(nil, "round %d file %d", round, i), 0o644); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	must(t, f.Mkdir("d", 0o755))
	write(0)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for round := 1; ; round++ {
			select {
			case <-stop:
				return
			default:
			}
			write(round)
		}
	}()
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			start := db.Stats().Commits
			for i := 0; i < 100 || db.Stats().Commits < start+30; i++ {
				ents, err := f.ReadDir("d")
				if err != nil || len(ents) != files {
					t.Errorf("reader %d: ReadDir = %d entries, %v", r, len(ents), err)
					return
				}
				for k := range files {
					data, err := f.ReadFile(fmt.Sprintf("d/f%02d", k))
					var round, file int
					if err == nil {
						_, err = fmt.Sscanf(string(data), "round %d file %d", &round, &file)
					}
					if err != nil || file != k {
						t.Errorf("reader %d, pass %d: d/f%02d = %q, %v", r, i, k, data, err)
						return
					}
				}
			}
		}()
	}
	readers.Wait()
	close(stop)
	wg.Wait()
}
