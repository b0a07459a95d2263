package command

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pagodadb/pagoda/cmd/pagoda/internal/cli"

	"github.com/pagodadb/pagoda"
)

func init() { extraCommands = append(extraCommands, newDumpCmd) }

func newDumpCmd() *cli.Command {
	var preserveRowids bool
	cmd := &cli.Command{
		Use:   "dump FILE",
		Short: "Print the database as SQL text, as sqlite3's .dump",
		Long: `Print the database as the SQL text that sqlite3's .dump prints, so that
"pagoda dump a.db | sqlite3 b.db" makes a database with the same schema and
rows: PRAGMA foreign_keys=OFF; BEGIN TRANSACTION; each table's CREATE
statement and one INSERT per row; sqlite_sequence and sqlite_stat1 rows;
then the indexes, views and triggers; COMMIT.

Values are written as .dump writes them: integers in decimal, NULL, blobs
as X'<hex>', text in quotes (a quote doubled; newlines and carriage
returns through replace(...,char(10)) and char(13)). Where .dump would
lose bytes, pagoda does not: text holding a NUL byte or bytes that are not
UTF-8 is written CAST(X'<hex>' AS TEXT); a REAL is written with the fewest
digits that read back as the same float (.dump writes 20 digits), integral
ones as 42.0, and the infinities as 1e999 and -1e999.

sqlite_stat4 (the query planner's samples, which ANALYZE writes in builds
with SQLITE_ENABLE_STAT4) is left out: no other build could load the
dump. When sqlite_sequence outlived its AUTOINCREMENT tables, a throwaway
AUTOINCREMENT table is created and dropped to make it.

As with .dump, rows of rowid tables without an INTEGER PRIMARY KEY get new
rowids, 1, 2, ... in rowid order, unless --preserve-rowids is given.
A virtual table is written into sqlite_schema under PRAGMA
writable_schema, its shadow tables as tables.`,
		Args: cli.ExactArgs(1),
		RunE: func(cmd *cli.Command, args []string) error {
			return runView(cmd, args[0], func(tx *pagoda.Tx, out *output) error {
				return dump(tx, out, preserveRowids)
			})
		},
	}
	cmd.Flags().BoolVar(&preserveRowids, "preserve-rowids", false, "keep the rowids of tables without an INTEGER PRIMARY KEY")
	return cmd
}

// dump writes tx's database as SQL text, in the order of sqlite3's .dump:
//
//  1. the tables in sqlite_schema order, sqlite_sequence last, each
//     followed by its rows (sqlite_sequence's after a DELETE, since the
//     inserts of AUTOINCREMENT tables fill it; sqlite_stat1's after
//     ANALYZE sqlite_schema, which creates it). sqlite_stat4, the query
//     planner's samples, is left out: only a build with SQLITE_ENABLE_STAT4
//     can create it, and no other (Debian's sqlite3 among them) could
//     load the dump, as it cannot load .dump's;
//  2. the indexes, triggers and views, in sqlite_schema order.
func dump(tx *pagoda.Tx, out *output, preserveRowids bool) error {
	out.WriteString("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")
	objs := tx.Objects()
	var tables []pagoda.Object
	var seq *pagoda.Object
	for i, o := range objs {
		switch {
		case o.Type != "table" || o.SQL == "":
		case o.Name == "sqlite_sequence":
			seq = &objs[i]
		default:
			tables = append(tables, o)
		}
	}
	if seq != nil {
		tables = append(tables, *seq)
	}
	writableSchema, autoincrement := false, false
	for _, o := range tables {
		lower := strings.ToLower(o.Name)
		switch {
		case lower == "sqlite_sequence":
			if !autoincrement {
				// Its AUTOINCREMENT tables were dropped: only such a
				// table's CREATE makes sqlite_sequence.
				maker := unusedName(objs, "pagoda_sequence_maker")
				out.WriteString("CREATE TABLE " + maker + "(x INTEGER PRIMARY KEY AUTOINCREMENT);\nDROP TABLE " + maker + ";\n")
			}
			out.WriteString("DELETE FROM sqlite_sequence;\n")
		case lower == "sqlite_stat1":
			out.WriteString("ANALYZE sqlite_schema;\n")
		case strings.HasPrefix(lower, "sqlite_"):
			continue
		case strings.HasPrefix(o.SQL, "CREATE VIRTUAL TABLE"):
			if !writableSchema {
				out.WriteString("PRAGMA writable_schema=ON;\n")
				writableSchema = true
			}
			out.WriteString("INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table',")
			out.WriteString(quoteSQL(o.Name) + "," + quoteSQL(o.Name) + ",0," + quoteSQL(o.SQL) + ");\n")
			continue
		case strings.HasPrefix(o.SQL, `CREATE TABLE "`) || strings.HasPrefix(o.SQL, "CREATE TABLE '"):
			out.WriteString("CREATE TABLE IF NOT EXISTS " + o.SQL[len("CREATE TABLE "):] + ";\n")
		default:
			out.WriteString(o.SQL + ";\n")
		}
		autoincrement = autoincrement || strings.Contains(strings.ToUpper(o.SQL), "AUTOINCREMENT")
		if err := dumpRows(tx, out, o.Name, preserveRowids); err != nil {
			return err
		}
	}
	for _, o := range objs {
		if o.SQL != "" && (o.Type == "index" || o.Type == "trigger" || o.Type == "view") {
			out.WriteString(o.SQL + ";\n")
		}
	}
	if writableSchema {
		out.WriteString("PRAGMA writable_schema=OFF;\n")
	}
	_, err := out.WriteString("COMMIT;\n")
	return err
}

// unusedName returns name, or name followed by a number, whichever no
// object of the schema has.
func unusedName(objs []pagoda.Object, name string) string {
	for i := 1; ; i++ {
		free := true
		for _, o := range objs {
			free = free && !strings.EqualFold(o.Name, name)
		}
		if free {
			return name
		}
		name = strings.TrimRight(name, "0123456789") + strconv.Itoa(i)
	}
}

// dumpRows writes one INSERT statement per row of the table called name.
// Generated columns are left out: SQLite computes them.
func dumpRows(tx *pagoda.Tx, out *output, name string, preserveRowids bool) error {
	t, err := tx.Table(name)
	if err != nil {
		return err
	}
	cols := t.Columns()
	var stored []int
	nPK, alias := 0, false // alias: the INTEGER PRIMARY KEY, which is the rowid
	for i, c := range cols {
		if !c.Generated {
			stored = append(stored, i)
		}
		if c.PrimaryKey {
			nPK++
			alias = strings.EqualFold(c.Type, "INTEGER")
		}
	}
	alias = alias && nPK == 1
	// sqlite3 names the rowid by the first of these that no column has.
	rowidName := ""
	if preserveRowids && !t.WithoutRowID() && !alias {
		for _, cand := range []string{"rowid", "_rowid_", "oid"} {
			if !hasColumn(cols, cand) {
				rowidName = cand
				break
			}
		}
	}
	prefix := "INSERT INTO " + quoteIdent(name)
	if rowidName != "" {
		names := []string{rowidName}
		for _, i := range stored {
			names = append(names, quoteIdent(cols[i].Name))
		}
		prefix += "(" + strings.Join(names, ",") + ")"
	}
	prefix += " VALUES("
	c := t.Cursor()
	var buf []byte
	for ok := c.First(); ok; ok = c.Next() {
		rec := c.Record()
		buf = append(buf[:0], prefix...)
		if rowidName != "" {
			buf = strconv.AppendInt(buf, c.Rowid(), 10)
			buf = append(buf, ',')
		}
		for k, i := range stored {
			if k > 0 {
				buf = append(buf, ',')
			}
			buf = appendSQLValue(buf, rec.Column(i))
		}
		buf = append(buf, ");\n"...)
		if err := tx.Err(); err != nil {
			return err // a column that could not be read: no row with a NULL that is not SQLite's
		}
		if _, err := out.Write(buf); err != nil {
			return err
		}
	}
	return c.Err()
}

// hasColumn reports whether cols has a column called name.
func hasColumn(cols []pagoda.Column, name string) bool {
	for _, c := range cols {
		if strings.EqualFold(c.Name, name) {
			return true
		}
	}
	return false
}

// appendSQLValue appends v as a SQL literal that reads back as the same
// value (see the dump command's help).
func appendSQLValue(dst []byte, v pagoda.Value) []byte {
	switch v.Type() {
	case pagoda.TypeInteger:
		return strconv.AppendInt(dst, v.Int(), 10)
	case pagoda.TypeFloat:
		return appendSQLReal(dst, v.Float())
	case pagoda.TypeText:
		b := v.Blob()
		if !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0 {
			dst = append(dst, "CAST(X'"...)
			dst = hex.AppendEncode(dst, b)
			return append(dst, "' AS TEXT)"...)
		}
		return appendSQLText(dst, string(b))
	case pagoda.TypeBlob:
		dst = append(dst, "X'"...)
		dst = hex.AppendEncode(dst, v.Blob())
		return append(dst, '\'')
	}
	return append(dst, "NULL"...)
}

// appendSQLReal appends f as a REAL literal: the shortest decimal that
// parses back to f, with a ".0" where it would read as an integer, in
// exponent form where printf's %g would use one (exponent below -4 or
// above 19); integral values that fit in 64 bits as sqlite3 writes them
// (42.0, and 0.0 for -0.0); the infinities as 1e999 and -1e999, which SQLite
// reads as infinities. NaN, which SQLite never stores, is NULL.
func appendSQLReal(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NULL"...)
	case math.IsInf(f, 1):
		return append(dst, "1e999"...)
	case math.IsInf(f, -1):
		return append(dst, "-1e999"...)
	case f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63:
		dst = strconv.AppendInt(dst, int64(f), 10)
		return append(dst, ".0"...)
	}
	e := strconv.AppendFloat(nil, f, 'e', -1, 64)
	i := strings.LastIndexByte(string(e), 'e')
	exp, _ := strconv.Atoi(string(e[i+1:]))
	if exp < -4 || exp > 19 {
		mant := e[:i]
		dst = append(dst, mant...)
		if strings.IndexByte(string(mant), '.') < 0 {
			dst = append(dst, ".0"...)
		}
		return append(dst, e[i:]...)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
	if strings.IndexByte(string(dst[start:]), '.') < 0 {
		dst = append(dst, ".0"...)
	}
	return dst
}

// appendSQLText appends s as sqlite3's .dump quotes text: in single
// quotes, each quote doubled, and each newline or carriage return written
// as a marker that replace() turns back into char(10) or char(13). The
// marker is \n (\r), or \012 (\015) when the text holds the first, or
// (\n1), (\n2), ... when it holds both.
func appendSQLText(dst []byte, s string) []byte {
	nl, cr := strings.IndexByte(s, '\n') >= 0, strings.IndexByte(s, '\r') >= 0
	var nlMark, crMark string
	if nl {
		dst = append(dst, "replace("...)
		nlMark = unusedMarker(s, `\n`, `\012`)
	}
	if cr {
		dst = append(dst, "replace("...)
		crMark = unusedMarker(s, `\r`, `\015`)
	}
	dst = append(dst, '\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			dst = append(dst, '\'', '\'')
		case '\n':
			dst = append(dst, nlMark...)
		case '\r':
			dst = append(dst, crMark...)
		default:
			dst = append(dst, c)
		}
	}
	dst = append(dst, '\'')
	if cr {
		dst = append(dst, ",'"+crMark+"',char(13))"...)
	}
	if nl {
		dst = append(dst, ",'"+nlMark+"',char(10))"...)
	}
	return dst
}

// unusedMarker returns a or b, whichever s does not hold, else the first
// of (a1), (a2), ... that it does not hold.
func unusedMarker(s, a, b string) string {
	if !strings.Contains(s, a) {
		return a
	}
	if !strings.Contains(s, b) {
		return b
	}
	for i := 0; ; i++ {
		if m := "(" + a + strconv.Itoa(i) + ")"; !strings.Contains(s, m) {
			return m
		}
	}
}

// quoteSQL quotes s as a SQL string literal.
func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// quoteIdent returns name as sqlite3 writes an identifier: as it is when
// it is a letter or '_' followed by letters, digits and '_', and not a
// keyword; otherwise in double quotes, each double quote doubled.
func quoteIdent(name string) string {
	plain := name != "" && !sqlKeywords()[strings.ToUpper(name)]
	for i := 0; i < len(name) && plain; i++ {
		c := name[i]
		plain = c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9'
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// sqlKeywords returns SQLite's 147 keywords (sqlite3_keyword_name), built
// on first use: only dump needs them.
var sqlKeywords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(`ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC ATTACH
		AUTOINCREMENT BEFORE BEGIN BETWEEN BY CASCADE CASE CAST CHECK COLLATE COLUMN COMMIT
		CONFLICT CONSTRAINT CREATE CROSS CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP
		DATABASE DEFAULT DEFERRABLE DEFERRED DELETE DESC DETACH DISTINCT DO DROP EACH ELSE END
		ESCAPE EXCEPT EXCLUDE EXCLUSIVE EXISTS EXPLAIN FAIL FILTER FIRST FOLLOWING FOR FOREIGN
		FROM FULL GENERATED GLOB GROUP GROUPS HAVING IF IGNORE IMMEDIATE IN INDEX INDEXED
		INITIALLY INNER INSERT INSTEAD INTERSECT INTO IS ISNULL JOIN KEY LAST LEFT LIKE LIMIT
		MATCH MATERIALIZED NATURAL NO NOT NOTHING NOTNULL NULL NULLS OF OFFSET ON OR ORDER
		OTHERS OUTER OVER PARTITION PLAN PRAGMA PRECEDING PRIMARY QUERY RAISE RANGE RECURSIVE
		REFERENCES REGEXP REINDEX RELEASE RENAME REPLACE RESTRICT RETURNING RIGHT ROLLBACK ROW
		ROWS SAVEPOINT SELECT SET TABLE TEMP TEMPORARY THEN TIES TO TRANSACTION TRIGGER UNBOUNDED
		UNION UNIQUE UPDATE USING VACUUM VALUES VIEW VIRTUAL WHEN WHERE WINDOW WITH WITHOUT`) {
		m[k] = true
	}
	return m
})
