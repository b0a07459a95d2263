package fsys_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
	"github.com/pagodadb/pagoda/internal/dbtest"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// A SQLite Archive in a UTF-16 database is refused with ErrUnsupported,
// reads and writes alike: the listing decodes names as UTF-8, and pagoda
// writes only UTF-8 databases.
func TestUTF16ArchiveRefused(t *testing.T) {
	for _, enc := range []string{"UTF-16le", "UTF-16be"} {
		t.Run(enc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.db")
			sqltest.Exec(t, path, "PRAGMA encoding='"+enc+"'",
				"CREATE TABLE sqlar(name TEXT PRIMARY KEY, mode INT, mtime INT, sz INT, data BLOB)",
				"INSERT INTO sqlar VALUES ('a.txt', 33188, 0, 3, 'abc')")
			db := dbtest.Open(t, path, nil)
			f := fsys.New(db, nil)
			if _, err := f.ReadFile("a.txt"); !errors.Is(err, pagoda.ErrUnsupported) {
				t.Errorf("ReadFile: %v, want ErrUnsupported", err)
			}
			if _, err := f.ReadDir("."); !errors.Is(err, pagoda.ErrUnsupported) {
				t.Errorf("ReadDir: %v, want ErrUnsupported", err)
			}
			if err := f.WriteFile("b.txt", []byte("x"), 0o644); !errors.Is(err, pagoda.ErrUnsupported) {
				t.Errorf("WriteFile: %v, want ErrUnsupported", err)
			}
		})
	}
}
