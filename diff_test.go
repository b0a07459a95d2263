package pagoda_test

// Differential tests against SQLite (modernc.org/sqlite): SQLite writes
// files with random schemas and data, pagoda reads them, and every table,
// index and bucket must read back row for row, value for value, with the
// storage classes SQLite reports.
//
// The generator is seeded. A failing subtest logs its seed; replay it with
//
//	go test -run 'TestDiff$' -seed=N .

import (
	"bytes"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/cmd/pagoda/command"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

var diffSeed = flag.Int64("seed", 0, "TestDiff: replay only this seed (default: the fixed seeds plus one time-based seed)")

// diffPageSizes are the page sizes the scenarios use; a seed's page size is
// diffPageSizes[seed mod 5], so the fixed seeds 1..5 cover all of them.
var diffPageSizes = []int{512, 1024, 4096, 8192, 65536}

func diffPageSize(seed int64) int {
	m := seed % int64(len(diffPageSizes))
	if m < 0 {
		m += int64(len(diffPageSizes))
	}
	return diffPageSizes[m]
}

func TestDiff(t *testing.T) {
	var seeds []int64
	if *diffSeed != 0 {
		seeds = []int64{*diffSeed}
	} else {
		seeds = []int64{1, 2, 3, 4, 5}
		if !testing.Short() {
			seeds = append(seeds, 6, 7, 8, 9, 10)
		}
		ts := time.Now().UnixNano()
		t.Logf("time-based seed: %d (replay: go test -run 'TestDiff$' -seed=%d .)", ts, ts)
		seeds = append(seeds, ts)
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("FAILED with seed %d (page size %d): replay with go test -run 'TestDiff$' -seed=%d .", seed, diffPageSize(seed), seed)
				}
			}()
			start := time.Now()
			g := newDiffGen(t, seed)
			path := g.build()
			built := time.Since(start)
			copyPath := filepath.Join(t.TempDir(), "sqlite-copy.db")
			sqltest.CopyFile(t, path, copyPath, false)
			st := compareWithSQLite(t, path, copyPath, g.buckets)
			t.Logf("page size %d: %d tables, %d indexes, %d rows, %d index entries, %d values over 2 pages, %d/%d interior table/index pages, %d free pages, %d pages; built in %v, compared in %v",
				g.pageSize, st.tables, st.indexes, st.rows, st.entries, st.bigValues, st.tableInterior, st.indexInterior, st.freePages, st.pages, built.Round(time.Millisecond), (time.Since(start) - built).Round(time.Millisecond))
			// The scenario must have produced what it is meant to cover.
			if st.pageSize != g.pageSize {
				t.Errorf("generator: page size %d, want %d", st.pageSize, g.pageSize)
			}
			if st.freePages == 0 {
				t.Errorf("generator: no freelist pages after the deletes")
			}
			if st.bigValues == 0 {
				t.Errorf("generator: no value spans several overflow pages")
			}
			if st.wrTables == 0 || st.indexes == 0 || st.buckets == 0 {
				t.Errorf("generator: %d WITHOUT ROWID tables, %d indexes, %d buckets", st.wrTables, st.indexes, st.buckets)
			}
			if st.tableInterior == 0 || st.indexInterior == 0 {
				t.Errorf("generator: %d table interior pages, %d index interior pages: the trees are too shallow", st.tableInterior, st.indexInterior)
			}
		})
	}
}

// TestDiffWALRandom runs TestDiff's generator in WAL mode: the schema and
// the first rows are checkpointed, everything after (ALTER TABLE, inserts,
// updates, deletes, DROP TABLE) sits in the WAL.
func TestDiffWALRandom(t *testing.T) {
	seeds := []int64{15, 14} // page sizes 512 and 65536
	if *diffSeed != 0 {
		seeds = []int64{*diffSeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("FAILED with seed %d (page size %d): replay with go test -run 'TestDiffWALRandom$' -seed=%d .", seed, diffPageSize(seed), seed)
				}
			}()
			g := newDiffGen(t, seed)
			path := g.buildWAL()
			copyPath := filepath.Join(t.TempDir(), "sqlite-copy.db")
			sqltest.CopyFile(t, path, copyPath, false)
			sqltest.CopyFile(t, path+"-wal", copyPath+"-wal", false)
			db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			err = db.View(func(tx *pagoda.Tx) error {
				h, err := tx.Header()
				if err == nil && h.WALFrames == 0 {
					t.Errorf("pagoda found no committed frames in the WAL")
				}
				return err
			})
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			st := compareWithSQLite(t, path, copyPath, g.buckets)
			if st.pageSize != g.pageSize {
				t.Errorf("generator: page size %d, want %d", st.pageSize, g.pageSize)
			}
			t.Logf("page size %d: %d tables, %d indexes, %d rows, %d index entries, %d free pages, %d pages",
				g.pageSize, st.tables, st.indexes, st.rows, st.entries, st.freePages, st.pages)
		})
	}
}

// TestDiffWAL checks a file whose last transactions sit uncheckpointed in
// its WAL: pagoda must see exactly what SQLite sees.
func TestDiffWAL(t *testing.T) {
	seed := int64(42)
	if *diffSeed != 0 {
		seed = *diffSeed
	}
	r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	vg := &valueGen{r: r, bigProb: 0.02, pools: map[string][]any{}}
	mustExec := func(db *sql.DB, q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("sqlite: %s: %v", q, err)
		}
	}
	setup := func(db *sql.DB) {
		mustExec(db, `CREATE TABLE t1(id INTEGER PRIMARY KEY, a TEXT COLLATE NOCASE, b BLOB, c REAL, d)`)
		mustExec(db, `CREATE INDEX t1_ab ON t1(a DESC, d)`)
		mustExec(db, `CREATE TABLE w1(k TEXT, n INT, v, PRIMARY KEY(n, k DESC)) WITHOUT ROWID`)
		mustExec(db, `CREATE UNIQUE INDEX w1_v ON w1(v, k)`)
		mustExec(db, `CREATE TABLE "b"(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`)
		mustExec(db, "BEGIN")
		for i := 0; i < 150; i++ {
			mustExec(db, `INSERT INTO t1(a, b, c, d) VALUES(?, ?, ?, ?)`, vg.value("t1.a", "TEXT"), vg.value("t1.b", "BLOB"), vg.value("t1.c", "REAL"), vg.value("t1.d", ""))
			mustExec(db, `INSERT OR IGNORE INTO w1 VALUES(?, ?, ?)`, vg.notNull("w1.k", "TEXT"), vg.notNull("w1.n", "INT"), vg.value("w1.v", ""))
			mustExec(db, `INSERT OR IGNORE INTO "b" VALUES(?, ?)`, vg.blobKey(), vg.blobValue())
		}
		mustExec(db, `INSERT INTO t1(id, a, b) VALUES(?, ?, ?)`, 1000, strings.Repeat("overflow ", 3000), vg.bigBlob())
		mustExec(db, "COMMIT")
	}
	pending := func(db *sql.DB) {
		// Several transactions, each left in the WAL.
		for tx := 0; tx < 4; tx++ {
			mustExec(db, "BEGIN")
			for i := 0; i < 40; i++ {
				mustExec(db, `INSERT INTO t1(a, b, c, d) VALUES(?, ?, ?, ?)`, vg.value("t1.a", "TEXT"), vg.value("t1.b", "BLOB"), vg.value("t1.c", "REAL"), vg.value("t1.d", ""))
				mustExec(db, `INSERT OR IGNORE INTO "b" VALUES(?, ?)`, vg.blobKey(), vg.blobValue())
			}
			mustExec(db, `DELETE FROM t1 WHERE id % 7 = ?`, tx)
			mustExec(db, `DELETE FROM "b" WHERE length(key) % 5 = ?`, tx)
			mustExec(db, "COMMIT")
		}
		// Updates that move rows: new rowids, new primary keys.
		mustExec(db, `UPDATE OR IGNORE t1 SET id = id + 100000 WHERE id % 3 = 0`)
		mustExec(db, `UPDATE OR IGNORE w1 SET n = n + 1000000 WHERE typeof(n) = 'integer' AND n BETWEEN -1000 AND 1000`)
		mustExec(db, `UPDATE t1 SET b = ? WHERE id = 1000`, vg.bigBlob())
		mustExec(db, `DELETE FROM w1 WHERE typeof(v) = 'text'`)
		// A new table and index that exist only in the WAL.
		mustExec(db, `CREATE TABLE t2(x INTEGER, y TEXT, z DOUBLE)`)
		mustExec(db, `CREATE INDEX t2_yx ON t2(y COLLATE RTRIM, x DESC)`)
		mustExec(db, "BEGIN")
		for i := 0; i < 100; i++ {
			mustExec(db, `INSERT INTO t2 VALUES(?, ?, ?)`, vg.value("t2.x", "INTEGER"), vg.value("t2.y", "TEXT"), vg.value("t2.z", "DOUBLE"))
		}
		mustExec(db, "COMMIT")
		mustExec(db, `ALTER TABLE t2 ADD COLUMN extra TEXT DEFAULT 'dflt'`)
		mustExec(db, `INSERT INTO t2 VALUES(1, 'one', 1.0, 'not default')`)
	}
	path := sqltest.WithWALFunc(t, 1024, setup, pending)
	// The copy SQLite opens is made before anything reads path: SQLite's
	// read-write open checkpoints the WAL and deletes it.
	copyPath := filepath.Join(t.TempDir(), "sqlite-copy.db")
	sqltest.CopyFile(t, path, copyPath, false)
	sqltest.CopyFile(t, path+"-wal", copyPath+"-wal", false)

	// The WAL must matter: the main file alone lacks t2.
	mainOnly := filepath.Join(t.TempDir(), "main-only.db")
	sqltest.CopyFile(t, path, mainOnly, false)
	func() {
		db, err := pagoda.Open(mainOnly, &pagoda.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.View(func(tx *pagoda.Tx) error {
			if _, err := tx.Table("t2"); !errors.Is(err, pagoda.ErrNotFound) {
				t.Errorf("main file without its WAL: Table(t2) = %v, want ErrNotFound", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}()

	db, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *pagoda.Tx) error {
		h, err := tx.Header()
		if err != nil {
			return err
		}
		if h.WALFrames == 0 {
			t.Errorf("WAL case: pagoda found no committed frames in the WAL")
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	st := compareWithSQLite(t, path, copyPath, map[string]bool{"b": true})
	if st.tables < 4 {
		t.Errorf("WAL case: compared %d tables, want 4", st.tables)
	}
}

// ---------------------------------------------------------------------------
// Generator

type diffGen struct {
	t        *testing.T
	seed     int64
	r        *rand.Rand
	vg       *valueGen
	db       *sql.DB
	path     string
	pageSize int
	short    bool
	tables   []*gTable
	buckets  map[string]bool
	nIndex   int
	dropMe   *gTable
}

type gCol struct {
	name  string // unquoted
	typ   string // declared type
	coll  string // "", "NOCASE", "RTRIM", "BINARY"
	alias bool   // INTEGER PRIMARY KEY
	tblPK bool   // the alias is declared by a table-level PRIMARY KEY(col)
	added bool   // added by ALTER TABLE
}

type gTable struct {
	name   string
	cols   []*gCol
	wr     bool
	bucket bool
	pk     []int // WITHOUT ROWID primary key columns
	rows   int   // rows of the first insert, if not the scenario's random count
}

func newDiffGen(t *testing.T, seed int64) *diffGen {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5bd1e995))
	return &diffGen{
		t: t, seed: seed, r: r,
		vg:       &valueGen{r: r, bigProb: 0.004, pools: map[string][]any{}},
		pageSize: diffPageSize(seed),
		short:    testing.Short(),
		buckets:  map[string]bool{},
	}
}

func qi(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (g *diffGen) exec(q string, args ...any) {
	g.t.Helper()
	if _, err := g.db.Exec(q, args...); err != nil {
		g.t.Fatalf("seed %d: sqlite: %s: %v", g.seed, q, err)
	}
}

var declTypes = []string{"INTEGER", "INT", "TEXT", "VARCHAR(20)", "BLOB", "REAL", "DOUBLE", "NUMERIC", ""}

func (g *diffGen) pick(n int) int { return g.r.IntN(n) }

func (g *diffGen) colName(i int) string {
	if g.r.IntN(8) == 0 {
		return fmt.Sprintf("Col %d ü", i) // needs quoting
	}
	return fmt.Sprintf("c%d", i)
}

func (g *diffGen) randColl() string {
	switch g.r.IntN(6) {
	case 0:
		return "NOCASE"
	case 1:
		return "RTRIM"
	case 2:
		return "BINARY"
	}
	return ""
}

func colDef(c *gCol) string {
	s := qi(c.name)
	if c.typ != "" {
		s += " " + c.typ
	}
	if c.alias && !c.tblPK {
		s += " PRIMARY KEY"
	}
	if c.coll != "" {
		s += " COLLATE " + c.coll
	}
	return s
}

// rowidTable creates a rowid table of 1-8 columns.
func (g *diffGen) rowidTable(name string) *gTable {
	tb := &gTable{name: name}
	n := 1 + g.pick(8)
	aliasAt := -1
	if g.r.IntN(2) == 0 {
		aliasAt = g.pick(n)
	}
	var extra []string
	for i := 0; i < n; i++ {
		c := &gCol{name: g.colName(i), typ: declTypes[g.pick(len(declTypes))]}
		if i == aliasAt {
			c.typ, c.alias = "INTEGER", true
		} else if g.r.IntN(3) == 0 {
			c.coll = g.randColl()
		}
		tb.cols = append(tb.cols, c)
	}
	var defs []string
	for _, c := range tb.cols {
		d := colDef(c)
		if c.alias && g.r.IntN(4) == 0 {
			d += " AUTOINCREMENT"
		}
		if !c.alias && g.r.IntN(10) == 0 {
			d += " UNIQUE" // an automatic index
		}
		defs = append(defs, d)
	}
	if aliasAt < 0 && g.r.IntN(4) == 0 {
		// A table-level primary key: an automatic index, or the rowid
		// alias when the column is declared INTEGER.
		c := tb.cols[g.pick(n)]
		extra = append(extra, fmt.Sprintf("PRIMARY KEY(%s)", qi(c.name)))
		if strings.EqualFold(c.typ, "INTEGER") {
			c.alias, c.tblPK, c.coll = true, true, ""
		}
	}
	g.exec(fmt.Sprintf("CREATE TABLE %s(%s)", qi(name), strings.Join(append(defs, extra...), ", ")))
	return tb
}

// wrTable creates a WITHOUT ROWID table with a primary key of 1-3 columns
// in random order, some DESC.
func (g *diffGen) wrTable(name string) *gTable {
	tb := &gTable{name: name, wr: true}
	n := 1 + g.pick(6)
	for i := 0; i < n; i++ {
		c := &gCol{name: g.colName(i), typ: declTypes[g.pick(len(declTypes))]}
		if g.r.IntN(3) == 0 {
			c.coll = g.randColl()
		}
		tb.cols = append(tb.cols, c)
	}
	perm := g.r.Perm(n)
	npk := 1 + g.pick(min(3, n))
	tb.pk = perm[:npk]
	var defs []string
	for _, c := range tb.cols {
		defs = append(defs, colDef(c))
	}
	if npk == 1 && g.r.IntN(3) == 0 {
		defs[tb.pk[0]] += " PRIMARY KEY"
		if g.r.IntN(3) == 0 {
			defs[tb.pk[0]] += " DESC"
		}
	} else {
		var terms []string
		for _, ci := range tb.pk {
			term := qi(tb.cols[ci].name)
			if g.r.IntN(3) == 0 {
				term += " DESC"
			}
			terms = append(terms, term)
		}
		defs = append(defs, "PRIMARY KEY("+strings.Join(terms, ", ")+")")
	}
	g.exec(fmt.Sprintf("CREATE TABLE %s(%s) WITHOUT ROWID", qi(name), strings.Join(defs, ", ")))
	return tb
}

func (g *diffGen) bucketTable(name string) *gTable {
	g.exec(fmt.Sprintf(`CREATE TABLE %s(key BLOB PRIMARY KEY, value BLOB) STRICT, WITHOUT ROWID`, qi(name)))
	g.buckets[name] = true
	return &gTable{name: name, wr: true, bucket: true,
		cols: []*gCol{{name: "key", typ: "BLOB"}, {name: "value", typ: "BLOB"}}, pk: []int{0}}
}

// index creates an index of 1-3 terms, with collations and DESC.
func (g *diffGen) index(tb *gTable, unique bool, mustCol int) {
	n := 1 + g.pick(min(3, len(tb.cols)))
	perm := g.r.Perm(len(tb.cols))
	if mustCol >= 0 {
		i := slices.Index(perm, mustCol)
		perm[0], perm[i] = perm[i], perm[0]
	}
	var terms []string
	for _, ci := range perm[:n] {
		term := qi(tb.cols[ci].name)
		if coll := g.randColl(); coll != "" {
			term += " COLLATE " + coll
		}
		if g.r.IntN(3) == 0 {
			term += " DESC"
		}
		terms = append(terms, term)
	}
	g.nIndex++
	kw := "INDEX"
	if unique {
		kw = "UNIQUE INDEX"
	}
	g.exec(fmt.Sprintf("CREATE %s %s ON %s(%s)", kw, qi(fmt.Sprintf("ix%d_%s", g.nIndex, tb.name)), qi(tb.name), strings.Join(terms, ", ")))
}

func (g *diffGen) insertRows(tb *gTable, n int, forceBig bool) {
	if tb.bucket {
		for i := 0; i < n; i++ {
			v := g.vg.blobValue()
			if forceBig && i == 0 {
				v = g.vg.bigBlob()
			}
			k := g.vg.blobKey()
			if i == 1 {
				k = []byte{} // the empty key
			}
			g.exec(fmt.Sprintf(`INSERT OR IGNORE INTO %s VALUES(?, ?)`, qi(tb.name)), k, v)
		}
		return
	}
	var names, marks []string
	for _, c := range tb.cols {
		names = append(names, qi(c.name))
		marks = append(marks, "?")
	}
	q := fmt.Sprintf("INSERT OR IGNORE INTO %s(%s) VALUES(%s)", qi(tb.name), strings.Join(names, ", "), strings.Join(marks, ", "))
	explicitRowid := !tb.wr && !slices.ContainsFunc(tb.cols, func(c *gCol) bool { return c.alias })
	qr := fmt.Sprintf("INSERT OR IGNORE INTO %s(rowid, %s) VALUES(?, %s)", qi(tb.name), strings.Join(names, ", "), strings.Join(marks, ", "))
	for i := 0; i < n; i++ {
		args := make([]any, len(tb.cols))
		for j, c := range tb.cols {
			key := tb.name + "." + c.name
			switch {
			case c.alias:
				if g.r.IntN(5) == 0 {
					args[j] = int64(g.r.IntN(4000) - 1000)
				} else {
					args[j] = nil // next rowid
				}
			case tb.wr && slices.Contains(tb.pk, j):
				args[j] = g.vg.notNull(key, c.typ)
			default:
				args[j] = g.vg.value(key, c.typ)
			}
		}
		if forceBig && i < 2 {
			// Values that span several overflow pages at any page size.
			for tries := 0; tries < 10; tries++ {
				j := g.pick(len(tb.cols))
				if tb.cols[j].alias {
					continue
				}
				if i == 0 {
					args[j] = g.vg.bigText()
				} else {
					args[j] = g.vg.hugeBlob()
				}
				break
			}
		}
		if explicitRowid && g.r.IntN(6) == 0 {
			g.exec(qr, append([]any{int64(g.r.IntN(5000) - 2000)}, args...)...)
		} else {
			g.exec(q, args...)
		}
	}
}

// alterDefaults are the DEFAULT literals of TestDiff's ALTER TABLE ADD
// COLUMN: the common ones. TestDiffDefaults tries many more.
var alterDefaults = []string{
	"5", "-1", "0", "1", "'abc'", "'Hello  '", "1.5", "x'0102ff'", "NULL", "9223372036854775807",
	"-9223372036854775808", "'42'", "TRUE", "FALSE", "''", "x''", "+7", "'it''s'", "-0.5", "'  12  '",
	"2147483648", "x'00'", "",
}

// moreDefaults are DEFAULT literals whose evaluation by sqlite3 has
// subtleties (valueFromExpr in src/vdbemem.c): hex integers, float
// literals (a TEXT column keeps their spelling), unary minus and plus on
// strings, -0.0 in a REAL column, identifiers.
// (ALTER TABLE ADD COLUMN rejects parenthesized expressions.)
var moreDefaults = []string{
	"-2.5e10", "3.0", "1e3", "0x1F", "0x7fffffffff", "-0x10", "-0x7fffffffff", "007", "-2147483649",
	"1.0e+308", ".5", "5.", "'1e3'", "-'7'", "+'8'", "-0", "0.0", "-0.0", "1e400", "-1e400",
	"9223372036854775808", "-9223372036854775809", "abc", "-'abc'", "-'3.0'",
}

// TestDiffEdgeValues stores every edge value (integers at each width
// boundary, special reals, texts, blobs, numeric texts) in a column of
// every declared type, indexed, and in a WITHOUT ROWID key: deterministic
// coverage of what TestDiff draws at random (3.0 in a REAL column, -0.0,
// 2^53+1, MinInt64, ...).
func TestDiffEdgeValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edge.db")
	db := sqltest.Open(t, path)
	var cols, defs []string
	for i, typ := range declTypes {
		cols = append(cols, fmt.Sprintf("c%d", i))
		defs = append(defs, strings.TrimSpace(fmt.Sprintf("c%d %s", i, typ)))
	}
	stmts := []string{
		"PRAGMA page_size=1024",
		fmt.Sprintf("CREATE TABLE e(id INTEGER PRIMARY KEY, %s)", strings.Join(defs, ", ")),
		fmt.Sprintf("CREATE TABLE ew(k PRIMARY KEY, %s) WITHOUT ROWID", strings.Join(defs, ", ")),
		"CREATE INDEX e_multi ON e(c2 COLLATE NOCASE DESC, c5, c8 COLLATE RTRIM)",
	}
	for _, c := range cols {
		stmts = append(stmts, fmt.Sprintf("CREATE INDEX e_%s ON e(%s)", c, c), fmt.Sprintf("CREATE INDEX ew_%s ON ew(%s DESC)", c, c))
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var values []any
	for _, v := range boundaryInts {
		values = append(values, v)
	}
	for _, v := range specialReals {
		values = append(values, v)
	}
	for _, v := range append(slices.Clone(unicodeTexts), numericTexts...) {
		values = append(values, v)
	}
	values = append(values, nil, []byte{}, []byte{0}, []byte("blob"), "Trailing  ", "trailing", "TRAILING ", strings.Repeat("é", 3000), bytes1(7000))
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
	for i, v := range values {
		args := make([]any, len(cols))
		for j := range args {
			args[j] = v
		}
		if _, err := db.Exec(fmt.Sprintf("INSERT INTO e(%s) VALUES(%s)", strings.Join(cols, ", "), marks), args...); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(fmt.Sprintf("INSERT OR IGNORE INTO ew(k, %s) VALUES(?, %s)", strings.Join(cols, ", "), marks), append([]any{v}, args...)...); err != nil {
			t.Fatalf("value %d (%v): %v", i, v, err)
		}
	}
	db.Close()
	copyPath := filepath.Join(t.TempDir(), "sqlite-copy.db")
	sqltest.CopyFile(t, path, copyPath, false)
	st := compareWithSQLite(t, path, copyPath, nil)
	if st.rows < len(values)+len(values)/2 { // ew drops equal keys (0, 0.0, -0.0, ...)
		t.Errorf("only %d rows compared", st.rows)
	}
}

func bytes1(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 31)
	}
	return b
}

// TestDiffDefaults adds, after rows exist, a column of every declared type
// with every default literal: the old rows lack those fields, and pagoda
// must produce the value SQLite produces.
func TestDiffDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "defaults.db")
	db := sqltest.Open(t, path)
	for _, q := range []string{"CREATE TABLE d(id INTEGER PRIMARY KEY, a)", "INSERT INTO d(a) VALUES (1)",
		"CREATE TABLE dw(k PRIMARY KEY, a) WITHOUT ROWID", "INSERT INTO dw VALUES (1, 2)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	type added struct{ typ, lit string }
	var cols []added
	for _, typ := range declTypes {
		for _, lit := range append(slices.Clone(alterDefaults), moreDefaults...) {
			if lit == "" {
				continue
			}
			for _, table := range []string{"d", "dw"} {
				q := fmt.Sprintf("ALTER TABLE %s ADD COLUMN x%d %s DEFAULT %s", table, len(cols), typ, lit)
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			cols = append(cols, added{typ, lit})
		}
	}
	var sel []string
	for i := range cols {
		sel = append(sel, fmt.Sprintf("x%d", i))
	}
	want := map[string][]val{}
	for _, table := range []string{"d", "dw"} {
		rows := queryVals(t, db, fmt.Sprintf("SELECT %s FROM %s", selectList(sel), table))
		if len(rows) != 1 {
			t.Fatalf("%s: %d rows", table, len(rows))
		}
		want[table] = rows[0]
	}
	db.Close()

	pdb, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	var badD []string
	err = pdb.View(func(tx *pagoda.Tx) error {
		for _, table := range []string{"d", "dw"} {
			tb, err := tx.Table(table)
			if err != nil {
				return err
			}
			n := 0
			for _, rec := range tb.All() {
				n++
				if rec.Len() != 2+len(cols) {
					t.Fatalf("%s: %d columns, want %d", table, rec.Len(), 2+len(cols))
				}
				var bad []string
				for i, c := range cols {
					got := fromPagoda(rec.Column(2 + i))
					if w := want[table][i]; !got.equal(w) {
						bad = append(bad, fmt.Sprintf("  ADD COLUMN x %s DEFAULT %s: pagoda %v, SQLite %v", c.typ, c.lit, got, w))
					}
				}
				if len(bad) > 0 && table == "dw" && slices.Equal(bad, badD) {
					t.Errorf("BUG (as for table d): table dw (WITHOUT ROWID): the same %d defaults read wrong", len(bad))
				} else if len(bad) > 0 {
					t.Errorf("BUG (meta.go: defaultValue/metaForTable do not evaluate a DEFAULT as sqlite3's valueFromExpr "+
						"does, with the column's affinity): table %s: %d of %d defaults read wrong in a row older than the column:\n%s",
						table, len(bad), len(cols), strings.Join(bad, "\n"))
				}
				if table == "d" {
					badD = bad
				}
			}
			if n != 1 {
				t.Errorf("%s: %d rows, want 1", table, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (g *diffGen) alter(tb *gTable) {
	c := &gCol{name: fmt.Sprintf("x%d", len(tb.cols)), typ: declTypes[g.pick(len(declTypes))], added: true}
	if g.r.IntN(4) == 0 {
		c.coll = g.randColl()
	}
	d := colDef(c)
	if lit := alterDefaults[g.pick(len(alterDefaults))]; lit != "" {
		d += " DEFAULT " + lit
	}
	g.exec(fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s", qi(tb.name), d))
	tb.cols = append(tb.cols, c)
}

// rowKeys returns the rows' keys: rowids, or primary key values.
func (g *diffGen) rowKeys(tb *gTable) [][]any {
	var sel string
	if tb.wr {
		var names []string
		for _, ci := range tb.pk {
			names = append(names, qi(tb.cols[ci].name))
		}
		sel = strings.Join(names, ", ")
	} else {
		sel = "rowid"
	}
	rows := queryAll(g.t, g.db, fmt.Sprintf("SELECT %s FROM %s", sel, qi(tb.name)))
	return rows
}

func (g *diffGen) keyWhere(tb *gTable) string {
	if !tb.wr {
		return "rowid = ?"
	}
	var terms []string
	for _, ci := range tb.pk {
		terms = append(terms, qi(tb.cols[ci].name)+" = ?")
	}
	return strings.Join(terms, " AND ")
}

func (g *diffGen) deleteSome(tb *gTable) {
	frac := 0.3 + 0.2*g.r.Float64()
	q := fmt.Sprintf("DELETE FROM %s WHERE %s", qi(tb.name), g.keyWhere(tb))
	for _, k := range g.rowKeys(tb) {
		if g.r.Float64() < frac {
			g.exec(q, k...)
		}
	}
}

func (g *diffGen) updateSome(tb *gTable) {
	keys := g.rowKeys(tb)
	where := g.keyWhere(tb)
	for _, k := range keys {
		if g.r.IntN(10) != 0 {
			continue
		}
		j := g.pick(len(tb.cols))
		c := tb.cols[j]
		var v any
		switch {
		case tb.bucket && j == 0:
			v = g.vg.blobKey()
		case tb.bucket:
			v = g.vg.blobValue()
		case c.alias:
			v = int64(g.r.IntN(100000) + 10000) // moves the row
		case tb.wr && slices.Contains(tb.pk, j):
			v = g.vg.notNull(tb.name+"."+c.name, c.typ) // moves the row
		default:
			v = g.vg.value(tb.name+"."+c.name, c.typ)
		}
		g.exec(fmt.Sprintf("UPDATE OR IGNORE %s SET %s = ? WHERE %s", qi(tb.name), qi(c.name), where), append([]any{v}, k...)...)
	}
}

// extremes inserts rows at the ends of the rowid range. It runs after every
// insert that lets SQLite choose a rowid.
func (g *diffGen) extremes(tb *gTable) {
	alias := slices.IndexFunc(tb.cols, func(c *gCol) bool { return c.alias })
	for _, rowid := range []int64{math.MinInt64, math.MaxInt64, -1, 0, 1 << 40} {
		if g.r.IntN(2) == 0 {
			continue
		}
		var names, marks []string
		var args []any
		for j, c := range tb.cols {
			if j == alias {
				continue
			}
			names = append(names, qi(c.name))
			marks = append(marks, "?")
			args = append(args, g.vg.value(tb.name+"."+c.name, c.typ))
		}
		rcol := "rowid"
		if alias >= 0 {
			rcol = qi(tb.cols[alias].name)
		}
		g.exec(fmt.Sprintf("INSERT OR IGNORE INTO %s(%s) VALUES(%s)", qi(tb.name), strings.Join(append([]string{rcol}, names...), ", "), strings.Join(append([]string{"?"}, marks...), ", ")), append([]any{rowid}, args...)...)
	}
}

// build writes the scenario's database and returns its path.
func (g *diffGen) build() string {
	t := g.t
	g.path = filepath.Join(t.TempDir(), "diff.db")
	g.db = sqltest.Open(t, g.path)
	g.exec(fmt.Sprintf("PRAGMA page_size=%d", g.pageSize))
	g.createAndFill()
	g.churn()
	if err := g.db.Close(); err != nil {
		t.Fatal(err)
	}
	return g.path
}

// buildWAL writes the scenario in WAL mode: the tables and their first
// rows are checkpointed into the main file; ALTER TABLE, updates, inserts,
// deletes and the DROP stay in the -wal of the returned copy.
func (g *diffGen) buildWAL() string {
	g.path = sqltest.WithWALFunc(g.t, g.pageSize,
		func(db *sql.DB) { g.db = db; g.createAndFill() },
		func(db *sql.DB) { g.db = db; g.churn() })
	return g.path
}

func (g *diffGen) nRows() int {
	if g.short {
		return 15 + g.pick(30)
	}
	return 60 + g.pick(180)
}

// createAndFill creates the schema and inserts the first rows.
func (g *diffGen) createAndFill() {
	nRows := g.nRows
	nRowid, nWR, nBucket := 2+g.pick(3), 1+g.pick(2), 1+g.pick(2)
	for i := 0; i < nRowid; i++ {
		name := fmt.Sprintf("t%d", i)
		if i == 1 {
			name = "Tab le ü" // a name that needs quoting
		}
		g.tables = append(g.tables, g.rowidTable(name))
	}
	for i := 0; i < nWR; i++ {
		g.tables = append(g.tables, g.wrTable(fmt.Sprintf("w%d", i)))
	}
	for i := 0; i < nBucket; i++ {
		g.tables = append(g.tables, g.bucketTable(fmt.Sprintf("b%d", i)))
	}
	// Enough small rows for interior pages in the table and its index at
	// every page size (a 64 KiB leaf holds about 2,500 of them).
	g.exec(`CREATE TABLE bulk(id INTEGER PRIMARY KEY, a INT, b TEXT COLLATE NOCASE, c REAL)`)
	g.exec(`CREATE INDEX bulk_b ON bulk(b DESC, a)`)
	bulk := &gTable{name: "bulk", cols: []*gCol{{name: "id", typ: "INTEGER", alias: true}, {name: "a", typ: "INT"}, {name: "b", typ: "TEXT", coll: "NOCASE"}, {name: "c", typ: "REAL"}}}
	switch {
	case g.pageSize == 65536:
		bulk.rows = 6000 + g.pick(2000) // still over two leaves after the deletes
	case g.short && g.pageSize == 8192:
		bulk.rows = 2000
	case g.short:
		bulk.rows = 600
	default:
		bulk.rows = 3000 + g.pick(3000)
	}
	g.tables = append(g.tables, bulk)
	g.dropMe = g.rowidTable("dropme")
	g.exec("CREATE VIEW v0 AS SELECT * FROM t0")
	g.exec("CREATE TRIGGER tr0 AFTER DELETE ON t0 BEGIN SELECT 1; END")

	// UNIQUE indexes before the rows, so that OR IGNORE keeps them valid;
	// some plain ones too (built row by row rather than by sorting).
	for _, tb := range g.tables {
		if tb.bucket {
			continue
		}
		for k := g.pick(3); k > 0; k-- {
			g.index(tb, g.r.IntN(3) == 0, -1)
		}
	}
	g.exec("BEGIN")
	for _, tb := range append(slices.Clone(g.tables), g.dropMe) {
		n := nRows()
		if tb.rows > 0 {
			n = tb.rows
		}
		g.insertRows(tb, n, true)
	}
	g.exec("COMMIT")
}

// churn alters tables, inserts, updates, deletes and drops.
func (g *diffGen) churn() {
	t, nRows := g.t, g.nRows
	// Rows written before ALTER TABLE ADD COLUMN lack the new fields.
	for _, tb := range g.tables {
		if tb.bucket || g.r.IntN(2) == 0 {
			continue
		}
		for k := 1 + g.pick(2); k > 0; k-- {
			g.alter(tb)
		}
		if g.r.IntN(2) == 0 {
			g.index(tb, false, len(tb.cols)-1)
		}
	}
	g.exec("BEGIN")
	for _, tb := range g.tables {
		g.insertRows(tb, nRows()/2, false)
		g.updateSome(tb)
	}
	g.exec("COMMIT")
	// Indexes built from existing rows (SQLite sorts them).
	for _, tb := range g.tables {
		if !tb.bucket && g.r.IntN(2) == 0 {
			g.index(tb, false, -1)
		}
	}
	g.exec("BEGIN")
	for _, tb := range g.tables {
		if !tb.wr {
			g.extremes(tb)
		}
	}
	for _, tb := range g.tables {
		g.deleteSome(tb)
	}
	g.exec("COMMIT")
	if g.r.IntN(2) == 0 {
		g.exec("ANALYZE") // adds sqlite_stat1
	}
	g.exec("DROP TABLE dropme") // last: its pages stay on the freelist
	var ok string
	if err := g.db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("seed %d: SQLite's integrity_check of its own file: %q %v", g.seed, ok, err)
	}
}

// ---------------------------------------------------------------------------
// Values

type valueGen struct {
	r       *rand.Rand
	bigProb float64
	pools   map[string][]any // per column: repeated values, so that indexes have ties
}

var boundaryInts = []int64{
	0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769,
	1<<23 - 1, 1 << 23, -(1 << 23), -(1 << 23) - 1, 1<<31 - 1, 1 << 31, -(1 << 31), -(1 << 31) - 1,
	1<<47 - 1, 1 << 47, -(1 << 47), -(1 << 47) - 1, 1<<53 - 1, 1 << 53, 1<<53 + 1, -(1 << 53) - 1,
	math.MinInt64, math.MaxInt64, math.MinInt64 + 1, math.MaxInt64 - 1,
}

var specialReals = []float64{
	0.5, math.Copysign(0, -1), 0, 1e308, -1e308, 3.0, -3.0, 1 << 53, 1<<53 - 1, 1<<53 + 2, 1e-300,
	5e-324, math.MaxFloat64, math.Inf(1), math.Inf(-1), 1.5, -2.25, 9.223372036854775807e18,
	-9.223372036854775808e18, 0.1, 123456789.125, 42.0,
}

var unicodeTexts = []string{
	"héllo wörld", "日本語のテキスト", "🙂🚀 emoji", "Ünïcödé", "ß", "ǅ", "Ω≈ç√∫", "a\u0301", "\u00a0nbsp", "tab\there", "nul\x00inside",
}

var numericTexts = []string{"42", "-7", "3.0", " 12 ", "1e3", "0x10", "007", "+5", "9223372036854775808", "1.5e-3", "", " "}

func (vg *valueGen) shortText() string {
	const alpha = "aAbBzZ  éÉ日🙂_-"
	runes := []rune(alpha)
	n := vg.r.IntN(12)
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteRune(runes[vg.r.IntN(len(runes))])
	}
	s := sb.String()
	if vg.r.IntN(4) == 0 {
		s += strings.Repeat(" ", 1+vg.r.IntN(3)) // RTRIM ties
	}
	return s
}

func (vg *valueGen) caseVariant(s string) string {
	switch vg.r.IntN(4) {
	case 0:
		return strings.ToUpper(s)
	case 1:
		return strings.ToLower(s)
	case 2:
		return s + "  "
	}
	return s
}

// bigSize returns a size from 5 KB to 200 KB, log-uniform.
func (vg *valueGen) bigSize() int {
	return int(5000 * math.Pow(40, vg.r.Float64()))
}

func (vg *valueGen) bigText() string {
	n := vg.bigSize()
	var sb strings.Builder
	for sb.Len() < n {
		if vg.r.IntN(3) == 0 {
			sb.WriteString(unicodeTexts[vg.r.IntN(len(unicodeTexts))])
		} else {
			fmt.Fprintf(&sb, "line %d of a big text; ", sb.Len())
		}
	}
	return sb.String()
}

func (vg *valueGen) bigBlob() []byte {
	b := make([]byte, vg.bigSize())
	for i := range b {
		b[i] = byte(vg.r.Uint32())
	}
	return b
}

// hugeBlob returns a blob of 140 KB to 200 KB: more than two overflow
// pages even at page size 65536.
func (vg *valueGen) hugeBlob() []byte {
	b := make([]byte, 140000+vg.r.IntN(60001))
	for i := range b {
		b[i] = byte(vg.r.Uint32())
	}
	return b
}

func (vg *valueGen) randBlob(max int) []byte {
	b := make([]byte, vg.r.IntN(max+1))
	for i := range b {
		b[i] = byte(vg.r.Uint32())
	}
	return b
}

// fresh returns a random value of any storage class.
func (vg *valueGen) fresh() any {
	r := vg.r
	if r.Float64() < vg.bigProb {
		if r.IntN(2) == 0 {
			return vg.bigText()
		}
		return vg.bigBlob()
	}
	switch r.IntN(14) {
	case 0:
		return nil
	case 1, 2:
		return boundaryInts[r.IntN(len(boundaryInts))]
	case 3:
		return r.Int64() >> r.IntN(64)
	case 4:
		return specialReals[r.IntN(len(specialReals))]
	case 5:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	case 6:
		return unicodeTexts[r.IntN(len(unicodeTexts))]
	case 7:
		return numericTexts[r.IntN(len(numericTexts))]
	case 8, 9:
		return vg.shortText()
	case 10:
		return []byte{}
	case 11:
		return vg.randBlob(40)
	case 12:
		return ""
	default:
		return int64(r.IntN(200) - 100)
	}
}

// value returns a value for column key, often one seen before in that
// column (or a case/space variant of one), so that indexes have ties.
func (vg *valueGen) value(key, typ string) any {
	pool := vg.pools[key]
	if len(pool) > 0 && vg.r.IntN(5) < 2 {
		v := pool[vg.r.IntN(len(pool))]
		if s, ok := v.(string); ok {
			return vg.caseVariant(s)
		}
		return v
	}
	v := vg.fresh()
	if len(pool) < 12 {
		if s, ok := v.(string); !ok || len(s) < 100 {
			vg.pools[key] = append(pool, v)
		}
	}
	return v
}

func (vg *valueGen) notNull(key, typ string) any {
	for {
		if v := vg.value(key, typ); v != nil {
			return v
		}
	}
}

func (vg *valueGen) blobKey() []byte {
	switch vg.r.IntN(20) {
	case 0:
		return vg.randBlob(3000) // keys that overflow index pages
	case 1:
		return []byte{}
	}
	return vg.randBlob(24)
}

func (vg *valueGen) blobValue() []byte {
	if vg.r.Float64() < vg.bigProb*5 {
		return vg.bigBlob()
	}
	if vg.r.IntN(8) == 0 {
		return []byte{}
	}
	return vg.randBlob(300)
}

// ---------------------------------------------------------------------------
// Comparison

// val is a value with its storage class, comparable across SQLite and
// pagoda: integers exactly, reals bit for bit, texts and blobs byte for byte.
type val struct {
	typ pagoda.Type
	i   int64
	f   uint64
	b   string
}

func (v val) equal(w val) bool { return v == w }

func (v val) String() string {
	switch v.typ {
	case pagoda.TypeNull:
		return "NULL"
	case pagoda.TypeInteger:
		return fmt.Sprintf("int %d", v.i)
	case pagoda.TypeFloat:
		return fmt.Sprintf("real %v (%#x)", math.Float64frombits(v.f), v.f)
	case pagoda.TypeText:
		s := v.b
		if len(s) > 60 {
			s = fmt.Sprintf("%s... (%d bytes)", s[:40], len(v.b))
		}
		return fmt.Sprintf("text %q", s)
	case pagoda.TypeBlob:
		if len(v.b) > 30 {
			return fmt.Sprintf("blob %x... (%d bytes)", v.b[:20], len(v.b))
		}
		return fmt.Sprintf("blob x'%x'", v.b)
	}
	return fmt.Sprintf("invalid type %d", v.typ)
}

// arg returns the value as a database/sql argument.
func (v val) arg() any {
	switch v.typ {
	case pagoda.TypeInteger:
		return v.i
	case pagoda.TypeFloat:
		return math.Float64frombits(v.f)
	case pagoda.TypeText:
		return v.b
	case pagoda.TypeBlob:
		return []byte(v.b)
	}
	return nil
}

func fromPagoda(x pagoda.Value) val {
	switch x.Type() {
	case pagoda.TypeInteger:
		return val{typ: pagoda.TypeInteger, i: x.Int()}
	case pagoda.TypeFloat:
		return val{typ: pagoda.TypeFloat, f: math.Float64bits(x.Float())}
	case pagoda.TypeText, pagoda.TypeBlob:
		return val{typ: x.Type(), b: string(x.Blob())}
	case pagoda.TypeNull:
		return val{}
	}
	return val{typ: x.Type()}
}

func fromSQLite(t testing.TB, x any, typ string) val {
	t.Helper()
	switch typ {
	case "null":
		return val{}
	case "integer":
		return val{typ: pagoda.TypeInteger, i: x.(int64)}
	case "real":
		return val{typ: pagoda.TypeFloat, f: math.Float64bits(x.(float64))}
	case "text", "blob":
		var s string
		switch y := x.(type) {
		case string:
			s = y
		case []byte:
			s = string(y)
		case nil:
		default:
			t.Fatalf("sqlite returned %T for a %s", x, typ)
		}
		if typ == "text" {
			return val{typ: pagoda.TypeText, b: s}
		}
		return val{typ: pagoda.TypeBlob, b: s}
	}
	t.Fatalf("sqlite typeof = %q", typ)
	return val{}
}

func recordVals(rec pagoda.Record) []val {
	out := make([]val, rec.Len())
	for i := range out {
		out[i] = fromPagoda(rec.Column(i))
	}
	return out
}

// rowKey renders a row for use as a map key.
func rowKey(vs []val) string {
	var sb strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&sb, "%d:%d:%d:%d:%s|", v.typ, v.i, v.f, len(v.b), v.b)
	}
	return sb.String()
}

func rowString(vs []val) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func queryAll(t testing.TB, db *sql.DB, q string, args ...any) [][]any {
	t.Helper()
	return sqltest.Values(t, db, q, args...)
}

// queryVals runs a query whose columns come in (value, typeof(value)) pairs.
func queryVals(t testing.TB, db *sql.DB, q string, args ...any) [][]val {
	t.Helper()
	var out [][]val
	for _, r := range queryAll(t, db, q, args...) {
		vs := make([]val, len(r)/2)
		for i := range vs {
			vs[i] = fromSQLite(t, r[2*i], r[2*i+1].(string))
		}
		out = append(out, vs)
	}
	return out
}

// selectList renders exprs as "e1, typeof(e1), e2, typeof(e2), ...".
func selectList(exprs []string) string {
	var parts []string
	for _, e := range exprs {
		parts = append(parts, e, "typeof("+e+")")
	}
	return strings.Join(parts, ", ")
}

// xinfoField is a row of PRAGMA index_xinfo: one field of an index record.
type xinfoField struct {
	cid  int64
	name string
	desc bool
	coll string
	key  bool
}

func (f xinfoField) expr() string {
	if f.cid == -1 {
		return "rowid"
	}
	return qi(f.name)
}

func (f xinfoField) orderTerm() string {
	s := f.expr() + " COLLATE " + f.coll
	if f.desc {
		s += " DESC"
	}
	return s
}

func indexXinfo(t testing.TB, db *sql.DB, index string) []xinfoField {
	var out []xinfoField
	for _, r := range queryAll(t, db, "SELECT cid, name, desc, coll, key FROM pragma_index_xinfo(?) ORDER BY seqno", index) {
		f := xinfoField{cid: r[0].(int64), desc: r[2].(int64) != 0, key: r[4].(int64) != 0}
		if s, ok := r[1].(string); ok {
			f.name = s
		}
		if s, ok := r[3].(string); ok {
			f.coll = s
		}
		out = append(out, f)
	}
	return out
}

type diffStats struct {
	tables, wrTables, buckets, indexes int
	rows, entries                      int
	freePages, pages                   int
	bigValues                          int
	tableInterior, indexInterior       int
	pageSize                           int
}

func mustPages(t *testing.T, tx *pagoda.Tx) []pagoda.PageInfo {
	t.Helper()
	pages, err := tx.Pages()
	if err != nil {
		t.Errorf("Pages(): %v", err)
	}
	return pages
}

// compareWithSQLite opens pagodaPath with pagoda and sqlitePath (a copy of
// it) with SQLite and compares everything pagoda can read. buckets names
// the tables that are buckets.
func compareWithSQLite(t *testing.T, pagodaPath, sqlitePath string, buckets map[string]bool) diffStats {
	t.Helper()
	var st diffStats
	pdb, err := pagoda.Open(pagodaPath, &pagoda.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("pagoda.Open: %v", err)
	}
	defer pdb.Close()
	tx, err := pdb.Begin(false)
	if err != nil {
		t.Fatalf("pagoda Begin: %v", err)
	}
	defer tx.Rollback()
	// pagoda has its snapshot; now SQLite may open its own copy.
	sdb := sqltest.Open(t, sqlitePath)
	var integrity string
	if err := sdb.QueryRow("PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("SQLite integrity_check: %q %v", integrity, err)
	}

	// Database level.
	var pageSize, pageCount, freeCount int64
	sdb.QueryRow("PRAGMA page_size").Scan(&pageSize)
	sdb.QueryRow("PRAGMA page_count").Scan(&pageCount)
	sdb.QueryRow("PRAGMA freelist_count").Scan(&freeCount)
	if pdb.PageSize() != int(pageSize) {
		t.Errorf("PageSize = %d, SQLite says %d", pdb.PageSize(), pageSize)
	}
	for _, p := range mustPages(t, tx) {
		switch p.Kind {
		case "table interior":
			st.tableInterior++
		case "index interior":
			st.indexInterior++
		}
	}
	if tx.PageCount() != uint32(pageCount) {
		t.Errorf("PageCount = %d, SQLite says %d", tx.PageCount(), pageCount)
	}
	h, err := tx.Header()
	if err != nil {
		t.Fatalf("Header: %v", err)
	}
	if h.FreelistCount != uint32(freeCount) {
		t.Errorf("Header().FreelistCount = %d, SQLite says %d", h.FreelistCount, freeCount)
	}
	st.pages, st.freePages, st.pageSize = int(pageCount), int(freeCount), int(pageSize)
	pages, err := tx.Pages()
	if err != nil {
		t.Errorf("Pages() on a valid file: %v", err)
	}
	nFree := 0
	for _, p := range pages {
		switch p.Kind {
		case "freelist trunk", "freelist leaf":
			nFree++
		case "unused":
			t.Errorf("Pages(): page %d is unused in a file SQLite calls ok", p.Pgno)
		}
	}
	if nFree != int(freeCount) {
		t.Errorf("Pages(): %d freelist pages, SQLite says %d", nFree, freeCount)
	}

	// The schema, row for row.
	var want []pagoda.Object
	for _, r := range queryAll(t, sdb, "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema") {
		o := pagoda.Object{Type: r[0].(string), Name: r[1].(string), Table: r[2].(string), RootPage: uint32(r[3].(int64))}
		if s, ok := r[4].(string); ok {
			o.SQL = s
		}
		want = append(want, o)
	}
	if got := tx.Objects(); !slices.Equal(got, want) {
		t.Errorf("Objects():\n got %+v\nwant %+v", got, want)
	}
	var wantTables []string
	for _, o := range want {
		if o.Type == "table" {
			wantTables = append(wantTables, o.Name)
		}
	}
	if got := tx.TableNames(); !slices.Equal(got, wantTables) {
		t.Errorf("TableNames() = %q, want %q", got, wantTables)
	}

	for _, name := range wantTables {
		compareTable(t, tx, sdb, name, buckets[name], &st)
	}
	if err := tx.Err(); err != nil {
		t.Errorf("tx.Err() = %v", err)
	}
	return st
}

type prow struct {
	rowid int64
	vals  []val
}

func compareTable(t *testing.T, tx *pagoda.Tx, sdb *sql.DB, name string, isBucket bool, st *diffStats) {
	t.Helper()
	tb, err := tx.Table(name)
	if err != nil {
		t.Errorf("Table(%q): %v", name, err)
		return
	}
	st.tables++
	var wr bool
	if err := sdb.QueryRow("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?", name).Scan(&wr); err != nil {
		t.Fatal(err)
	}
	if tb.WithoutRowID() != wr {
		t.Errorf("table %q: WithoutRowID() = %v, SQLite says %v", name, tb.WithoutRowID(), wr)
		return
	}
	if wr {
		st.wrTables++
	}
	if tb.IsBucket() != isBucket {
		t.Errorf("table %q: IsBucket() = %v, want %v", name, tb.IsBucket(), isBucket)
	}

	// Columns.
	var cols []string
	var pkCols []bool
	for _, r := range queryAll(t, sdb, "SELECT name, type, pk FROM pragma_table_xinfo(?) ORDER BY cid", name) {
		cols = append(cols, r[0].(string))
		pkCols = append(pkCols, r[2].(int64) > 0)
		_ = r[1]
	}
	pcols := tb.Columns()
	if len(pcols) != len(cols) {
		t.Errorf("table %q: %d columns, SQLite says %d", name, len(pcols), len(cols))
		return
	}
	for i, c := range pcols {
		if c.Name != cols[i] || c.PrimaryKey != pkCols[i] {
			t.Errorf("table %q column %d: name %q pk %v, SQLite says %q pk %v", name, i, c.Name, c.PrimaryKey, cols[i], pkCols[i])
		}
	}
	exprs := make([]string, len(cols))
	for i, c := range cols {
		exprs[i] = qi(c)
	}

	// Every row, in order.
	var order []string
	var pkFields []xinfoField
	var wantRows []prow
	if wr {
		var pkIndex string
		if err := sdb.QueryRow("SELECT name FROM pragma_index_list(?) WHERE origin = 'pk'", name).Scan(&pkIndex); err != nil {
			t.Fatalf("table %q: its primary key index: %v", name, err)
		}
		for _, f := range indexXinfo(t, sdb, pkIndex) {
			if f.key {
				pkFields = append(pkFields, f)
				order = append(order, f.orderTerm())
			}
		}
		for _, vs := range queryVals(t, sdb, fmt.Sprintf("SELECT %s FROM %s ORDER BY %s", selectList(exprs), qi(name), strings.Join(order, ", "))) {
			wantRows = append(wantRows, prow{vals: vs})
		}
	} else {
		for _, vs := range queryVals(t, sdb, fmt.Sprintf("SELECT %s FROM %s ORDER BY rowid", selectList(append([]string{"rowid"}, exprs...)), qi(name))) {
			wantRows = append(wantRows, prow{rowid: vs[0].i, vals: vs[1:]})
		}
	}
	st.rows += len(wantRows)
	for _, r := range wantRows {
		for _, v := range r.vals {
			if len(v.b) > 2*pdbPageSize(tx) {
				st.bigValues++
			}
		}
	}

	var got []prow
	for rowid, rec := range tb.All() {
		got = append(got, prow{rowid, recordVals(rec)})
	}
	if err := tx.Err(); err != nil {
		t.Errorf("table %q: All(): %v", name, err)
		return
	}
	if !compareRows(t, fmt.Sprintf("table %q All()", name), got, wantRows, !wr) {
		return
	}
	if n, err := tb.Count(); err != nil || n != int64(len(wantRows)) {
		t.Errorf("table %q: Count() = %d, %v; SQLite has %d rows", name, n, err, len(wantRows))
	}

	// Backward.
	var back []prow
	c := tb.Cursor()
	for ok := c.Last(); ok; ok = c.Prev() {
		back = append(back, prow{c.Rowid(), recordVals(c.Record())})
	}
	if err := c.Err(); err != nil {
		t.Errorf("table %q: Last/Prev: %v", name, err)
	}
	slices.Reverse(back)
	compareRows(t, fmt.Sprintf("table %q Last/Prev (reversed)", name), back, wantRows, !wr)

	r := rand.New(rand.NewPCG(uint64(len(wantRows)), uint64(len(name))))
	if !wr {
		compareRowidAccess(t, tb, name, wantRows, r)
	} else {
		compareKeyAccess(t, tb, sdb, name, exprs, pkFields, wantRows, r)
	}

	// Indexes.
	var wantIdx []string
	for _, r := range queryAll(t, sdb, "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?", name) {
		wantIdx = append(wantIdx, r[0].(string))
	}
	if got := tb.Indexes(); !slices.Equal(got, wantIdx) {
		t.Errorf("table %q: Indexes() = %q, SQLite says %q", name, got, wantIdx)
	}
	for _, ixName := range wantIdx {
		compareIndex(t, tx, sdb, name, ixName, len(wantRows), st)
	}

	if isBucket {
		compareBucket(t, tx, sdb, name, st)
	}
}

func pdbPageSize(tx *pagoda.Tx) int { return tx.DB().PageSize() }

// compareRows reports the first difference between got and want.
func compareRows(t *testing.T, what string, got, want []prow, rowids bool) bool {
	t.Helper()
	for i := 0; i < len(got) && i < len(want); i++ {
		g, w := got[i], want[i]
		if rowids && g.rowid != w.rowid {
			t.Errorf("%s: row %d has rowid %d, SQLite %d", what, i, g.rowid, w.rowid)
			return false
		}
		if len(g.vals) != len(w.vals) {
			t.Errorf("%s: row %d (rowid %d) has %d values, SQLite %d", what, i, w.rowid, len(g.vals), len(w.vals))
			return false
		}
		var diffs []string
		for j := range g.vals {
			if !g.vals[j].equal(w.vals[j]) {
				diffs = append(diffs, fmt.Sprintf("column %d: pagoda %v, SQLite %v", j, g.vals[j], w.vals[j]))
			}
		}
		if len(diffs) > 0 {
			msg := fmt.Sprintf("%s: row %d (rowid %d): %s", what, i, w.rowid, strings.Join(diffs, "; "))
			if len(g.vals) <= 10 {
				msg += fmt.Sprintf("\n pagoda row %s\n SQLite row %s", rowString(g.vals), rowString(w.vals))
			}
			t.Error(msg)
			return false
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, SQLite %d", what, len(got), len(want))
		return false
	}
	return true
}

func compareRowidAccess(t *testing.T, tb *pagoda.Table, name string, rows []prow, r *rand.Rand) {
	t.Helper()
	ids := make([]int64, len(rows))
	byID := map[int64]int{}
	for i, row := range rows {
		ids[i] = row.rowid
		byID[row.rowid] = i
	}
	// Get of existing rows: enough of them, in a table of many, that the
	// transaction builds the table's leaf directory and Get reads rows by
	// their shape (recordCtx.shape).
	gets := max(40, min(len(rows), 2000))
	for k := 0; k < gets && len(rows) > 0; k++ {
		i := r.IntN(len(rows))
		if k < 2 {
			i = k * (len(rows) - 1) // the first and the last
		}
		rec, err := tb.Get(rows[i].rowid)
		if err != nil {
			t.Errorf("table %q: Get(%d): %v", name, rows[i].rowid, err)
			continue
		}
		if rec.Rowid() != rows[i].rowid {
			t.Errorf("table %q: Get(%d).Rowid() = %d", name, rows[i].rowid, rec.Rowid())
		}
		compareRows(t, fmt.Sprintf("table %q Get(%d)", name, rows[i].rowid), []prow{{rows[i].rowid, recordVals(rec)}}, rows[i:i+1], true)
	}
	// Missing rowids, and Seek to any rowid.
	probes := []int64{math.MinInt64, math.MaxInt64, 0, -1, 1}
	if len(ids) > 0 {
		lo, hi := ids[0], ids[len(ids)-1]
		if lo > math.MinInt64 {
			probes = append(probes, lo-1)
		}
		if hi < math.MaxInt64 {
			probes = append(probes, hi+1)
		}
		for k := 0; k < 30; k++ {
			probes = append(probes, ids[r.IntN(len(ids))]+int64(r.IntN(5))-2)
		}
	}
	for _, id := range probes {
		if _, ok := byID[id]; !ok {
			if _, err := tb.Get(id); !errors.Is(err, pagoda.ErrNotFound) {
				t.Errorf("table %q: Get(missing rowid %d) = %v, want ErrNotFound", name, id, err)
			}
		}
		want := sort.Search(len(ids), func(i int) bool { return ids[i] >= id })
		c := tb.Cursor()
		ok := c.SeekRowid(id)
		switch {
		case c.Err() != nil:
			t.Errorf("table %q: SeekRowid(%d): %v", name, id, c.Err())
		case want == len(ids) && ok:
			t.Errorf("table %q: SeekRowid(%d) found rowid %d, want the end", name, id, c.Rowid())
		case want < len(ids) && !ok:
			t.Errorf("table %q: SeekRowid(%d) found nothing, want rowid %d", name, id, ids[want])
		case want < len(ids) && c.Rowid() != ids[want]:
			t.Errorf("table %q: SeekRowid(%d) found rowid %d, want %d", name, id, c.Rowid(), ids[want])
		case want < len(ids):
			compareRows(t, fmt.Sprintf("table %q SeekRowid(%d)", name, id), []prow{{c.Rowid(), recordVals(c.Record())}}, rows[want:want+1], true)
			// Next after Seek continues in order.
			if want+1 < len(ids) {
				if !c.Next() || c.Rowid() != ids[want+1] {
					t.Errorf("table %q: SeekRowid(%d) then Next: rowid %d, want %d (err %v)", name, id, c.Rowid(), ids[want+1], c.Err())
				}
			}
		}
	}
	// Range.
	if len(ids) > 2 {
		from, to := ids[r.IntN(len(ids))], ids[r.IntN(len(ids))]
		if from > to {
			from, to = to, from
		}
		var got []int64
		for id := range tb.Range(from, to) {
			got = append(got, id)
		}
		var want []int64
		for _, id := range ids {
			if id >= from && id < to {
				want = append(want, id)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("table %q: Range(%d, %d) = %d rows, want %d", name, from, to, len(got), len(want))
		}
	}
}

// compareKeyAccess checks GetKey and SeekKey on a WITHOUT ROWID table.
func compareKeyAccess(t *testing.T, tb *pagoda.Table, sdb *sql.DB, name string, exprs []string, pk []xinfoField, rows []prow, r *rand.Rand) {
	t.Helper()
	pkVals := func(row prow) []any {
		out := make([]any, len(pk))
		for i, f := range pk {
			out[i] = row.vals[f.cid].arg()
		}
		return out
	}
	var order []string
	for _, f := range pk {
		order = append(order, f.orderTerm())
	}
	for k := 0; k < 30 && len(rows) > 0; k++ {
		i := r.IntN(len(rows))
		key := pkVals(rows[i])
		rec, err := tb.GetKey(key...)
		if err != nil {
			t.Errorf("table %q: GetKey(%s): %v", name, rowString(pkOf(rows[i], pk)), err)
		} else {
			compareRows(t, fmt.Sprintf("table %q GetKey", name), []prow{{0, recordVals(rec)}}, rows[i:i+1], false)
		}
		c := tb.Cursor()
		if !c.SeekKey(key...) {
			t.Errorf("table %q: SeekKey(%s) found nothing: %v", name, rowString(pkOf(rows[i], pk)), c.Err())
		} else {
			compareRows(t, fmt.Sprintf("table %q SeekKey(full key)", name), []prow{{0, recordVals(c.Record())}}, rows[i:i+1], false)
		}

		// A prefix seek lands on the first row at or after the first key
		// value, in the first key column's order.
		op := ">="
		if pk[0].desc {
			op = "<="
		}
		q := fmt.Sprintf("SELECT %s FROM %s WHERE %s %s ? COLLATE %s ORDER BY %s LIMIT 1", selectList(exprs), qi(name), pk[0].expr(), op, pk[0].coll, strings.Join(order, ", "))
		for _, probe := range []any{key[0], prefixVariant(r, key[0])} {
			want := queryVals(t, sdb, q, probe)
			c := tb.Cursor()
			ok := c.SeekKey(probe)
			if c.Err() != nil {
				t.Errorf("table %q: SeekKey(%v): %v", name, probe, c.Err())
				continue
			}
			if ok != (len(want) == 1) {
				t.Errorf("table %q: SeekKey(%s) found=%v, SQLite found %d rows", name, showArg(probe), ok, len(want))
				continue
			}
			if ok {
				compareRows(t, fmt.Sprintf("table %q SeekKey(%s)", name, showArg(probe)), []prow{{0, recordVals(c.Record())}}, []prow{{0, want[0]}}, false)
			}
		}

		// A key that is not there.
		missing := slices.Clone(key)
		missing[len(missing)-1] = missingVariant(key[len(key)-1])
		var where []string
		for _, f := range pk {
			where = append(where, f.expr()+" = ?")
		}
		var n int
		if err := sdb.QueryRow(fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", qi(name), strings.Join(where, " AND ")), missing...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if _, err := tb.GetKey(missing...); n == 0 && !errors.Is(err, pagoda.ErrNotFound) {
			t.Errorf("table %q: GetKey(missing key %v) = %v, want ErrNotFound", name, missing, err)
		} else if n > 0 && err != nil {
			t.Errorf("table %q: GetKey(%v) = %v, SQLite finds %d rows", name, missing, err, n)
		}
	}
}

func pkOf(row prow, pk []xinfoField) []val {
	out := make([]val, len(pk))
	for i, f := range pk {
		out[i] = row.vals[f.cid]
	}
	return out
}

func showArg(x any) string {
	switch v := x.(type) {
	case string:
		if len(v) > 40 {
			return fmt.Sprintf("%q...", v[:40])
		}
		return fmt.Sprintf("%q", v)
	case []byte:
		if len(v) > 20 {
			return fmt.Sprintf("x'%x'...", v[:20])
		}
		return fmt.Sprintf("x'%x'", v)
	}
	return fmt.Sprintf("%T(%v)", x, x)
}

// prefixVariant returns a value near x that may compare equal to it under
// a collation or an affinity: another case, trailing spaces, an integer as
// text or as a real.
func prefixVariant(r *rand.Rand, x any) any {
	switch v := x.(type) {
	case string:
		switch r.IntN(4) {
		case 0:
			return strings.ToUpper(v)
		case 1:
			return strings.ToLower(v)
		case 2:
			return v + "   "
		}
		return strings.TrimRight(v, " ")
	case int64:
		switch r.IntN(3) {
		case 0:
			return fmt.Sprint(v)
		case 1:
			return float64(v)
		}
		return v + 1
	case float64:
		if r.IntN(2) == 0 {
			return pagoda.FormatFloat(v)
		}
		return v / 2
	case []byte:
		return append(slices.Clone(v), 0)
	}
	return int64(0)
}

// missingVariant returns a value unlikely to be in the column.
func missingVariant(x any) any {
	switch v := x.(type) {
	case string:
		return v + "\x01missing"
	case []byte:
		return append(slices.Clone(v), 0xff, 0xfe, 0x01)
	case int64:
		return float64(v) + 0.25
	case float64:
		return v + 0.125
	}
	return []byte("missing")
}

func compareIndex(t *testing.T, tx *pagoda.Tx, sdb *sql.DB, table, name string, nRows int, st *diffStats) {
	t.Helper()
	ix, err := tx.Index(name)
	if err != nil {
		t.Errorf("Index(%q): %v", name, err)
		return
	}
	st.indexes++
	if ix.TableName() != table {
		t.Errorf("index %q: TableName() = %q, want %q", name, ix.TableName(), table)
	}
	fields := indexXinfo(t, sdb, name)
	var exprs, order []string
	for _, f := range fields {
		exprs = append(exprs, f.expr())
		order = append(order, f.orderTerm())
	}
	// Index entries are distinct (they end with the rowid or the rest of
	// the primary key), so ordering by every field is a total order: the
	// index's own order.
	q := fmt.Sprintf("SELECT %s FROM %s INDEXED BY %s ORDER BY %s", selectList(exprs), qi(table), qi(name), strings.Join(order, ", "))
	want := queryVals(t, sdb, q)
	var wantRows []prow
	for _, vs := range want {
		wantRows = append(wantRows, prow{vals: vs})
	}
	var got []prow
	c := ix.Cursor()
	rowidIndex := fields[len(fields)-1].cid == -1
	for ok := c.First(); ok; ok = c.Next() {
		vs := recordVals(c.Key())
		got = append(got, prow{vals: vs})
		if !bytes.Equal(c.Raw(), c.Key().Raw()) || len(c.Raw()) == 0 {
			t.Errorf("index %q: Raw() = %x, Key().Raw() = %x", name, c.Raw(), c.Key().Raw())
		}
		if rowidIndex && c.Rowid() != vs[len(vs)-1].i {
			t.Errorf("index %q: Rowid() = %d, entry ends with %v", name, c.Rowid(), vs[len(vs)-1])
		}
	}
	if err := c.Err(); err != nil {
		t.Errorf("index %q: cursor: %v", name, err)
		return
	}
	if c.Raw() != nil {
		t.Errorf("index %q: Raw() = %x past the last entry, want nil", name, c.Raw())
	}
	what := fmt.Sprintf("index %q (%s) full scan", name, strings.Join(order, ", "))
	if !compareRows(t, what, got, wantRows, false) {
		return
	}
	st.entries += len(got)
	if len(got) != nRows {
		t.Errorf("index %q: %d entries, the table has %d rows", name, len(got), nRows)
	}
	if n, err := ix.Count(); err != nil || n != int64(len(got)) {
		t.Errorf("index %q: Count() = %d, %v; want %d", name, n, err, len(got))
	}
	var back []prow
	for ok := c.Last(); ok; ok = c.Prev() {
		back = append(back, prow{vals: recordVals(c.Key())})
	}
	if err := c.Err(); err != nil {
		t.Errorf("index %q: Last/Prev: %v", name, err)
	}
	slices.Reverse(back)
	compareRows(t, what+" backward (reversed)", back, wantRows, false)

	// Prefix lookups, as sets against SQLite's WHERE, and as a run of the
	// full scan.
	pos := map[string]int{}
	for i, row := range got {
		pos[rowKey(row.vals)] = i
	}
	r := rand.New(rand.NewPCG(uint64(len(got)), uint64(len(name))))
	var probes [][]any
	for k := 0; k < 12 && len(got) > 0; k++ {
		row := got[r.IntN(len(got))]
		n := 1
		if len(fields) > 2 && r.IntN(3) == 0 {
			n = 2
		}
		p := make([]any, n)
		for i := range p {
			p[i] = row.vals[i].arg()
		}
		if k%3 == 1 {
			p[n-1] = prefixVariant(r, p[n-1])
		}
		if k%6 == 5 {
			p[n-1] = missingVariant(p[n-1])
		}
		probes = append(probes, p)
	}
	probes = append(probes, []any{nil}, []any{""}, []any{int64(0)}, []any{1e308}, []any{0.5}, []any{3.0}, []any{"3.0"}, []any{[]byte{}})
	for _, p := range probes {
		var where []string
		for i := range p {
			where = append(where, fmt.Sprintf("%s IS ? COLLATE %s", fields[i].expr(), fields[i].coll))
		}
		wantSet := queryVals(t, sdb, fmt.Sprintf("SELECT %s FROM %s WHERE %s", selectList(exprs), qi(table), strings.Join(where, " AND ")), p...)
		var gotRows [][]val
		for _, rec := range ix.Prefix(p...) {
			gotRows = append(gotRows, recordVals(rec))
		}
		if err := tx.Err(); err != nil {
			t.Errorf("index %q: Prefix(%v): %v", name, p, err)
			return
		}
		desc := make([]string, len(p))
		for i := range p {
			desc[i] = showArg(p[i])
		}
		what := fmt.Sprintf("index %q Prefix(%s)", name, strings.Join(desc, ", "))
		gk, wk := make([]string, len(gotRows)), make([]string, len(wantSet))
		for i := range gotRows {
			gk[i] = rowKey(gotRows[i])
		}
		for i := range wantSet {
			wk[i] = rowKey(wantSet[i])
		}
		slices.Sort(gk)
		slices.Sort(wk)
		if !slices.Equal(gk, wk) {
			t.Errorf("%s: %d entries, SQLite's WHERE finds %d", what, len(gk), len(wk))
			for _, row := range gotRows {
				t.Logf("  pagoda: %s", rowString(row))
			}
			for _, row := range wantSet {
				t.Logf("  sqlite: %s", rowString(row))
			}
			continue
		}
		if len(gotRows) > 0 {
			start, ok := pos[rowKey(gotRows[0])]
			for i := 0; ok && i < len(gotRows); i++ {
				ok = start+i < len(got) && rowKey(got[start+i].vals) == rowKey(gotRows[i])
			}
			if !ok {
				t.Errorf("%s: the entries are not a run of the full scan in index order", what)
			}
		}
	}
}

func compareBucket(t *testing.T, tx *pagoda.Tx, sdb *sql.DB, name string, st *diffStats) {
	t.Helper()
	b, err := tx.Bucket(name)
	if err != nil {
		t.Errorf("Bucket(%q): %v", name, err)
		return
	}
	st.buckets++
	type kv struct{ k, v string }
	var want []kv
	for _, r := range queryAll(t, sdb, fmt.Sprintf("SELECT key, value, typeof(key), typeof(value) FROM %s ORDER BY key", qi(name))) {
		if r[2] != "blob" || r[3] != "blob" {
			t.Fatalf("bucket %q holds a %v key / %v value", name, r[2], r[3])
		}
		k, _ := r[0].([]byte)
		v, _ := r[1].([]byte)
		want = append(want, kv{string(k), string(v)})
	}
	var got []kv
	for k, v := range b.All() {
		got = append(got, kv{string(k), string(v)})
	}
	if err := tx.Err(); err != nil {
		t.Errorf("bucket %q: All(): %v", name, err)
		return
	}
	if len(got) != len(want) {
		t.Errorf("bucket %q: All() gives %d pairs, SQLite %d", name, len(got), len(want))
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("bucket %q: All() pair %d: key %x (%d-byte value), SQLite key %x (%d-byte value)", name, i, abbrev(got[i].k), len(got[i].v), abbrev(want[i].k), len(want[i].v))
			return
		}
	}
	keys := map[string]bool{}
	for _, p := range want {
		keys[p.k] = true
		v, err := b.Get([]byte(p.k))
		if err != nil || string(v) != p.v {
			t.Errorf("bucket %q: Get(%x) = %d bytes, %v; want %d bytes", name, abbrev(p.k), len(v), err, len(p.v))
		}
	}
	r := rand.New(rand.NewPCG(uint64(len(want)), 7))
	var probes [][]byte
	probes = append(probes, []byte{}, []byte{0}, []byte{0xff, 0xff, 0xff, 0xff}, []byte("missing"))
	for _, p := range want {
		if r.IntN(8) == 0 {
			probes = append(probes, append([]byte(p.k), 0), []byte(p.k[:len(p.k)/2]))
		}
	}
	for _, k := range probes {
		if keys[string(k)] {
			continue
		}
		if v, err := b.Get(k); !errors.Is(err, pagoda.ErrNotFound) {
			t.Errorf("bucket %q: Get(missing key %x) = %d bytes, %v; want ErrNotFound", name, abbrev(string(k)), len(v), err)
		}
	}
	// Backward.
	c := b.Cursor()
	var back []kv
	for ok := c.Last(); ok; ok = c.Prev() {
		back = append(back, kv{string(c.Key()), string(c.Value())})
	}
	if err := c.Err(); err != nil {
		t.Errorf("bucket %q: Last/Prev: %v", name, err)
	}
	slices.Reverse(back)
	if !slices.Equal(back, want) {
		t.Errorf("bucket %q: Last/Prev gives %d pairs, not All() reversed", name, len(back))
	}
	// Ranges.
	for k := 0; k < 10; k++ {
		var from, to []byte
		if len(probes) > 0 && r.IntN(4) != 0 {
			from = probes[r.IntN(len(probes))]
		}
		if len(want) > 0 && r.IntN(4) != 0 {
			to = []byte(want[r.IntN(len(want))].k)
		}
		var got []string
		for k := range b.Range(from, to) {
			got = append(got, string(k))
		}
		q := fmt.Sprintf("SELECT key FROM %s WHERE (?1 IS NULL OR key >= ?1) AND (?2 IS NULL OR key < ?2) ORDER BY key", qi(name))
		var args [2]any
		if from != nil {
			args[0] = from
		}
		if to != nil {
			args[1] = to
		}
		var wantKeys []string
		for _, row := range queryAll(t, sdb, q, args[0], args[1]) {
			k, _ := row[0].([]byte)
			wantKeys = append(wantKeys, string(k))
		}
		if !slices.Equal(got, wantKeys) {
			t.Errorf("bucket %q: Range(%x, %x): %d keys, SQLite %d", name, abbrev(string(from)), abbrev(string(to)), len(got), len(wantKeys))
		}
	}
	if err := tx.Err(); err != nil {
		t.Errorf("bucket %q: %v", name, err)
	}
}

func abbrev(s string) []byte {
	if len(s) > 16 {
		return []byte(s[:16])
	}
	return []byte(s)
}

// TestDiffDump loads `pagoda dump` of each of TestDiff's databases into a
// new file with sqlite3 (pagoda dump a.db | sqlite3 b.db) and compares the
// two with SQLite: the same schema, and every table's rows, value for
// value, sqlite_sequence and sqlite_stat1 included. Odd seeds dump with
// --preserve-rowids, and their rowids must be equal too.
func TestDiffDump(t *testing.T) {
	seeds := []int64{1, 2, 3, 4, 5}
	if !testing.Short() {
		seeds = append(seeds, 6, 7, 8, 9, 10)
	}
	if *diffSeed != 0 {
		seeds = []int64{*diffSeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			g := newDiffGen(t, seed)
			path := g.build()
			preserve := seed%2 == 1
			args := []string{"dump", path}
			if preserve {
				args = []string{"dump", "--preserve-rowids", path}
			}
			root := command.NewRoot()
			var out, stderr bytes.Buffer
			root.SetArgs(args)
			root.SetOut(&out)
			root.SetErr(&stderr)
			if err := root.Execute(); err != nil || stderr.Len() > 0 {
				t.Fatalf("seed %d: pagoda %s: %v %s", seed, strings.Join(args, " "), err, stderr.Bytes())
			}
			loaded := filepath.Join(t.TempDir(), "loaded.db")
			by := sqltest.LoadSQL(t, loaded, out.String())
			sqltest.IntegrityCheck(t, loaded)
			n := sqltest.CompareDatabases(t, path, loaded, preserve)
			if n < 1000 {
				t.Errorf("seed %d: %d rows compared", seed, n)
			}
			t.Logf("page size %d: %d rows, dump of %d bytes loaded by %s", g.pageSize, n, out.Len(), by)
			if t.Failed() {
				t.Logf("FAILED with seed %d: replay with go test -run 'TestDiffDump$' -seed=%d .", seed, seed)
			}
		})
	}
}
