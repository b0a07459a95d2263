package check

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// indexSQL builds a rowid table with a NOCASE/DESC index and a WITHOUT
// ROWID table with a secondary index, with distinct names ('Nm007') so that
// a test can find a row's text in the file.
var indexSQL = []string{
	"CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, n INT)",
	"CREATE INDEX t_name ON t(name COLLATE NOCASE, n DESC)",
	"CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID",
	"CREATE INDEX w_v ON w(v)",
	`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 200)
		INSERT INTO t SELECT i, printf('Nm%03d', i), i % 10 FROM c`,
	`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 200)
		INSERT INTO w SELECT printf('k%03d', i), i % 7 FROM c`,
}

// withoutIndex runs stmts on the database at path while SQLite does not know
// index exists: its sqlite_schema row is taken out (PRAGMA writable_schema)
// and put back afterwards, so the statements change the table and not the
// index. It returns the index's root page.
func withoutIndex(t *testing.T, path, index string, stmts ...string) uint32 {
	t.Helper()
	db := sqltest.Open(t, path)
	var typ, name, tbl, sql string
	var root uint32
	row := db.QueryRow("SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema WHERE name = ?", index)
	if err := row.Scan(&typ, &name, &tbl, &root, &sql); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"PRAGMA writable_schema=ON", "DELETE FROM sqlite_schema WHERE name = '" + index + "'"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	db.Close()
	sqltest.Exec(t, path, stmts...)
	db = sqltest.Open(t, path)
	if _, err := db.Exec("PRAGMA writable_schema=ON"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO sqlite_schema VALUES (?, ?, ?, ?, ?)", typ, name, tbl, root, sql); err != nil {
		t.Fatal(err)
	}
	db.Close()
	return root
}

// want is a problem a test expects: on page (0: any page) with msg in it.
type want struct {
	page uint32
	msg  string
}

func TestIndexEntries(t *testing.T) {
	for _, tc := range []struct {
		name string
		// damage changes the file at path and returns the problems it
		// must cause.
		damage       func(t *testing.T, path string) []want
		sqliteMisses bool // sqlite3 3.40's integrity_check does not see it
	}{
		{name: "row without its entry", damage: func(t *testing.T, path string) []want {
			root := withoutIndex(t, path, "t_name", "INSERT INTO t VALUES (1000, 'zz', 4)")
			return []want{
				{root, `no entry ("zz", 4, 1000) for row 1000 of table t`},
				{root, "has 200 entries, table t has 201 rows"},
			}
		}},
		{name: "entry without its row", damage: func(t *testing.T, path string) []want {
			root := withoutIndex(t, path, "t_name", "DELETE FROM t WHERE id = 50")
			return []want{
				{0, `entry ("Nm050", 0, 50) matches no row of table t`},
				{root, "has 200 entries, table t has 199 rows"},
			}
		}},
		{name: "WITHOUT ROWID row without its entry", damage: func(t *testing.T, path string) []want {
			root := withoutIndex(t, path, "w_v", "INSERT INTO w VALUES ('new', 99)")
			return []want{{root, `no entry (99, "new") for a row of table w`}}
		}},
		{name: "WITHOUT ROWID entry without its row", damage: func(t *testing.T, path string) []want {
			withoutIndex(t, path, "w_v", "DELETE FROM w WHERE k = 'k010'")
			return []want{{0, `entry (3, "k010") matches no row of table w`}}
		}},
		{name: "entry differs in case", sqliteMisses: true, damage: func(t *testing.T, path string) []want {
			// The row's name changes case in the table only: the NOCASE
			// index finds the entry, which no longer spells the row's value.
			// sqlite3 3.40 seeks the entry under NOCASE and says ok.
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			im := &image{name: "index", pageSize: newMemPages(data).pageSize, data: data}
			i := -1
			for _, p := range treePages(t, im, data, 2) { // t's root
				pg := parse(t, im, data, p.pgno)
				for c := 0; c < pg.NCells && p.typ.IsLeaf(); c++ {
					if rowid, err := pg.TableLeafRowid(c); err == nil && rowid == 17 {
						off, _ := pg.CellOffset(c)
						i = int(p.pgno-1)*im.pageSize + off + bytes.Index(pg.Data[off:], []byte("Nm017"))
					}
				}
			}
			if i < 0 {
				t.Fatal("row 17 not found")
			}
			copy(data[i:], "NM017")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			return []want{{0, `index t_name: entry ("Nm017", 7, 17) differs from ("NM017", 7, 17), the key of row 17 of table t`}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "index.db")
			sqltest.Exec(t, path, indexSQL...)
			wants := tc.damage(t, path)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := run(t, data, nil)
			for _, w := range wants {
				found := false
				for _, p := range got {
					found = found || (w.page == 0 || p.Page == w.page) && strings.Contains(p.Msg, w.msg)
				}
				if !found {
					t.Errorf("want a problem on page %d containing %q, got:\n%s", w.page, w.msg, joinProblems(got))
				}
			}
			if out, ok := sqliteIntegrity(t, data); ok && out == "ok" && !tc.sqliteMisses {
				t.Errorf("sqlite3 says the damaged file is ok")
			}
			t.Logf("%d problems:\n%s", len(got), joinProblems(got))
		})
	}
}
