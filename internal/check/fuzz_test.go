package check

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pagodadb/pagoda/internal/sqltest"
)

// maxFuzzPages bounds the images the fuzz target checks, to keep each run
// short.
const maxFuzzPages = 256

// fuzzSeeds are small databases (512-byte pages, a dozen pages or so) with
// a table and its indexes, a WITHOUT ROWID table, a row and an index key
// that overflow, and a freelist.
var fuzzSeeds = [][]string{
	{
		"PRAGMA page_size=512",
		"CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b)",
		"CREATE INDEX t_a ON t(a COLLATE NOCASE DESC, b)",
		"CREATE TABLE w(k PRIMARY KEY, v UNIQUE) WITHOUT ROWID",
		"CREATE TABLE junk(x)",
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 40)
			INSERT INTO t SELECT i, printf('Row%d', i), CASE WHEN i = 7 THEN randomblob(1500) ELSE i END FROM c`,
		`INSERT INTO w VALUES (1, 'one'), (2, printf('%.200c', 'x')), (3, NULL)`,
		"INSERT INTO junk SELECT randomblob(400) FROM t LIMIT 8",
		"DELETE FROM junk",
		"DELETE FROM t WHERE id % 5 = 0",
	},
	{
		// Typed columns that are not STRICT, for the affinity checks: a
		// mutation may turn a text into a numeric one, a type into 10.
		"PRAGMA page_size=512",
		"CREATE TABLE a(id INTEGER PRIMARY KEY, i INT NOT NULL, t TEXT, r REAL, n NUMERIC, v AS (i + 1) VIRTUAL, x)",
		"INSERT INTO a(id, i, t, r, n, x) VALUES (1, 1, 'one', 1.5, 'n1', NULL), (2, 2, 'x2', 2.5, x'02', 'q'), (3, 3, NULL, NULL, 'abc', 3)",
		"ALTER TABLE a ADD COLUMN d INT DEFAULT 'abc'",
		"CREATE TABLE aw(k TEXT PRIMARY KEY, v INT, w TEXT) WITHOUT ROWID",
		"INSERT INTO aw VALUES ('a', 1, 'b'), ('b', NULL, 'c'), ('c1', 3, 'd')",
	},
	{
		"PRAGMA page_size=512",
		`CREATE TABLE "b"(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`,
		"INSERT INTO b VALUES (x'01', x'02'), (x'0102', zeroblob(700))",
	},
}

// FuzzCheck runs the checker on mutated database images: it must never
// panic, hang or exceed its problem cap, whatever the bytes.
func FuzzCheck(f *testing.F) {
	for i, stmts := range fuzzSeeds {
		path := filepath.Join(f.TempDir(), "seed.db")
		sqltest.Exec(f, path, stmts...)
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		if got := Run(newMemPages(data), nil, nil); len(got) != 0 {
			f.Fatalf("seed %d: %v", i, got)
		}
		f.Add(data)
		// A damaged variant: page 2's header and cell pointers scrambled.
		bad := append([]byte(nil), data...)
		for j := 512; j < 560 && j < len(bad); j++ {
			bad[j] ^= byte(j)
		}
		f.Add(bad)
	}
	const maxProblems = 20
	f.Fuzz(func(t *testing.T, data []byte) {
		m := newMemPages(data)
		if m == nil || m.PageCount() > maxFuzzPages {
			return
		}
		if got := Run(m, nil, &Options{MaxProblems: maxProblems}); len(got) > maxProblems+1 {
			t.Fatalf("%d problems, more than the cap", len(got))
		}
	})
}
