package pager

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// A UTF-16 database opens, read-only or not, and is read; a write
// transaction is refused with ErrUnsupported before anything is written,
// and the file is left byte for byte as it was.
func TestUTF16OpensReadOnly(t *testing.T) {
	for _, enc := range []string{"UTF-16le", "UTF-16be"} {
		t.Run(enc, func(t *testing.T) {
			path := makeDB(t, "PRAGMA encoding='"+enc+"'", "CREATE TABLE t(a)", "INSERT INTO t VALUES ('x')")
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{true, false} {
				p, err := Open(path, Options{ReadOnly: ro})
				if err != nil {
					t.Fatalf("ReadOnly %v: Open: %v", ro, err)
				}
				s := p.Snapshot()
				pg1, err := s.Page(1)
				if err != nil || !format.IsUTF16(format.Header(pg1).TextEncoding()) {
					t.Errorf("page 1: %v, encoding %d", err, format.Header(pg1).TextEncoding())
				}
				s.Release()
				if !ro {
					w, err := p.BeginWrite()
					if err == nil {
						w.Rollback()
						t.Fatal("BeginWrite succeeded")
					}
					if !errors.Is(err, format.ErrUnsupported) || !strings.Contains(err.Error(), "pagoda writes only UTF-8 databases") {
						t.Errorf("BeginWrite: %v, want ErrUnsupported saying pagoda writes only UTF-8 databases", err)
					}
				}
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Error("the file changed")
			}
			if _, err := os.Stat(WALPath(path)); !os.IsNotExist(err) {
				t.Errorf("a WAL appeared: %v", err)
			}
		})
	}
}
