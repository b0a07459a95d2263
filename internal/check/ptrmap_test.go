package check

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// autoVacuumFile builds, with SQLite, an auto-vacuum file of page size ps
// in mode (FULL or INCREMENTAL) with overflow chains, several trees and,
// in INCREMENTAL mode, a freelist.
func autoVacuumFile(t *testing.T, ps int, mode string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "av.db")
	sqltest.Exec(t, path,
		fmt.Sprintf("PRAGMA page_size=%d", ps),
		"PRAGMA auto_vacuum="+mode,
		"CREATE TABLE t(a INTEGER PRIMARY KEY, b)",
		"CREATE INDEX tb ON t(b)",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<800) INSERT INTO t SELECT x, randomblob(x % (3*"+fmt.Sprint(ps)+")) FROM c",
		"CREATE TABLE u(x)",
		"INSERT INTO u VALUES (zeroblob(5000))",
		"DELETE FROM t WHERE a % 3 = 0")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPointerMap checks auto-vacuum files SQLite made, then the same with
// a pointer-map entry or the header's largest root page damaged: each
// damage is found on the page it concerns, as sqlite3's integrity_check
// finds it.
func TestPointerMap(t *testing.T) {
	for _, ps := range pageSizes {
		for _, mode := range []string{"FULL", "INCREMENTAL"} {
			name := fmt.Sprintf("%d-%s", ps, mode)
			data := autoVacuumFile(t, ps, mode)
			if be32(data[52:]) == 0 {
				t.Fatalf("%s: not an auto-vacuum file", name)
			}
			if got := run(t, data, nil); len(got) != 0 {
				t.Fatalf("%s: %d problems in a file SQLite made:\n%s", name, len(got), joinProblems(got))
			}
			if mode == "INCREMENTAL" && be32(data[36:]) == 0 {
				t.Errorf("%s: no free page", name)
			}
			// Page 3's entry (the first after the map page, page 2) and a
			// later one's parent.
			for _, tc := range []struct {
				what string
				page uint32
				edit func(d []byte)
			}{
				{"type", 3, func(d []byte) { d[ps] ^= 7 }},
				{"parent", 6, func(d []byte) { binary.BigEndian.PutUint32(d[ps+5*3+1:], 9999) }},
				{"largest root", 1, func(d []byte) { binary.BigEndian.PutUint32(d[52:], be32(d[52:])+1) }},
			} {
				d := append([]byte(nil), data...)
				tc.edit(d)
				got := run(t, d, nil)
				want := "pointer map"
				if tc.page == 1 {
					want = "largest root"
				}
				if !hasProblem(got, tc.page, want) {
					t.Errorf("%s: damaged %s: want a problem on page %d about the %s, got:\n%s", name, tc.what, tc.page, want, joinProblems(got))
				}
				if out, ok := sqliteIntegrity(t, d); ok && out == "ok" {
					t.Errorf("%s: damaged %s: sqlite3 says the file is ok", name, tc.what)
				}
			}
		}
	}
}

// TestPointerMapSchemaOnly: an auto-vacuum file whose tables were all
// dropped holds sqlite_schema alone, and its header's largest root page
// is 1, sqlite_schema's: SQLite passes it, and so does the check.
func TestPointerMapSchemaOnly(t *testing.T) {
	for _, mode := range []string{"FULL", "INCREMENTAL"} {
		path := filepath.Join(t.TempDir(), "empty.db")
		sqltest.Exec(t, path, "PRAGMA auto_vacuum="+mode, "CREATE TABLE t(a)", "DROP TABLE t")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if be32(data[52:]) != 1 {
			t.Fatalf("%s: largest root page %d, want 1", mode, be32(data[52:]))
		}
		if got := run(t, data, nil); len(got) != 0 {
			t.Errorf("%s: %d problems in a file SQLite passes:\n%s", mode, len(got), joinProblems(got))
		}
	}
}
