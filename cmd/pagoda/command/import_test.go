package command

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// runStdin runs the pagoda command line args in-process with stdin as its
// standard input.
func runStdin(t *testing.T, stdin string, args ...string) (stdout string, err error) {
	t.Helper()
	root := NewRoot()
	var o, e bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&o)
	root.SetErr(&e)
	err = root.Execute()
	if e.Len() != 0 {
		t.Errorf("pagoda %s wrote %q on stderr", strings.Join(args, " "), e.String())
	}
	return o.String(), err
}

// writeFile writes data to a new file in a temporary directory and
// returns its path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImportNewBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db") // the file is created too
	in := `["alpha","first"]
[{"blob":"00ff"},{"blob":""}]

["","empty key"]
["unicode ☃ 𝄞","quote \" backslash \\ newline \n"]
["pair \ud834\udd1e","U+FFFD itself � \ufffd escaped \\ud800 not an escape"]
[{"text_hex":"ff41"},"from text_hex"]
["alpha","second"]
`
	out, err := runStdin(t, in, "import", path, "kv")
	if err != nil {
		t.Fatal(err)
	}
	if out != "imported 7 rows into kv\n" {
		t.Errorf("import printed %q", out)
	}
	integrityCheck(t, path)
	// SQLite's view, and scan's.
	got := sqliteQuery(t, path, "SELECT hex(key), typeof(key), hex(value), typeof(value) FROM kv ORDER BY key")
	wantKV := [][2]string{
		{"", "empty key"}, {"\x00\xff", ""}, {"alpha", "second"},
		{"pair 𝄞", "U+FFFD itself \ufffd \ufffd escaped \\ud800 not an escape"},
		{"unicode ☃ 𝄞", "quote \" backslash \\ newline \n"}, {"\xffA", "from text_hex"},
	}
	var wantRows [][]any
	var wantScan string
	for _, kv := range wantKV {
		wantRows = append(wantRows, []any{hexUpper(kv[0]), "blob", hexUpper(kv[1]), "blob"})
		wantScan += fmt.Sprintf("[{\"blob\":%q},{\"blob\":%q}]\n", hex.EncodeToString([]byte(kv[0])), hex.EncodeToString([]byte(kv[1])))
	}
	if !reflect.DeepEqual(got, wantRows) {
		t.Errorf("SQLite reads kv as\n%q\nwant\n%q", got, wantRows)
	}
	if got := mustRun(t, "scan", path, "kv", "--json"); got != wantScan {
		t.Errorf("scan --json kv:\n%s\nwant\n%s", got, wantScan)
	}
	if got := mustRun(t, "get", path, "kv", "alpha"); got != "second\n" {
		t.Errorf("get kv alpha = %q", got)
	}

	// Importing into the bucket, which now exists, from a file.
	rows := writeFile(t, "more.jsonl", "[\"beta\",{\"blob\":\"0102\"}]\n[\"alpha\",\"third\"]") // no final newline
	if out := mustRun(t, "import", path, "kv", rows); out != "imported 2 rows into kv\n" {
		t.Errorf("import printed %q", out)
	}
	if got := mustRun(t, "get", path, "kv", "--hex", hex.EncodeToString([]byte("beta"))); got != "0102\n" {
		t.Errorf("get kv beta = %q", got)
	}
	if got := mustRun(t, "get", path, "kv", "alpha"); got != "third\n" {
		t.Errorf("get kv alpha = %q", got)
	}
	integrityCheck(t, path)
}

// allTypesSQL is a table for every storage class in every column type.
const allTypesSQL = `CREATE TABLE t(id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT UNIQUE, b BLOB, x)`

func TestImportAllTypes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "types.db")
	sqltest.Exec(t, path, allTypesSQL, `CREATE INDEX t_x ON t(x, i DESC)`)
	big := bytes.Repeat([]byte{0x00, 0x01, 0xfe, 0xff, 'a'}, 40_000) // 200 kB: overflow pages
	bigText := strings.Repeat("☃ snow, 𝄞 clef; ", 5_000)
	type row struct {
		json string // the line, as scan --json prints the row
		want []any  // the row as SQLite reads it
	}
	rows := []row{
		{`[1,null,null,null,null,null]`, []any{int64(1), nil, nil, nil, nil, nil}},
		{`[2,-9223372036854775808,0.1,"héllo \"quoted\" \\ back\nline 2 ☃ 𝄞",{"blob":"00ff10"},9223372036854775807]`,
			[]any{int64(2), int64(math.MinInt64), 0.1, "héllo \"quoted\" \\ back\nline 2 ☃ 𝄞", []byte{0, 0xff, 0x10}, int64(math.MaxInt64)}},
		{`[3,1.5,1e+300,"",{"blob":"07"},3.0]`, []any{int64(3), 1.5, 1e300, "", []byte{7}, 3.0}},
		{`[4,-1,-2.5e-300,"ctl\u0001\t\r` + "\x7f" + `",{"blob":"0000"},"text in x"]`, // scan escapes only < 0x20
			[]any{int64(4), int64(-1), -2.5e-300, "ctl\x01\t\r\x7f", []byte{0, 0}, "text in x"}},
		{`[5,0,1e999,{"text_hex":"ff41"},12,{"blob":"0102"}]`, []any{int64(5), int64(0), math.Inf(1), "\xffA", int64(12), []byte{1, 2}}},
		{`[6,7,-1e999,"big",{"blob":"` + hex.EncodeToString(big) + `"},"` + bigText + `"]`,
			[]any{int64(6), int64(7), math.Inf(-1), "big", big, bigText}},
		{`[-7,1e+100,12.0,"7",0.1,-0.5]`, []any{int64(-7), 1e100, 12.0, "7", 0.1, -0.5}},
		{`[9223372036854775807,null,null,"max",null,null]`, []any{int64(math.MaxInt64), nil, nil, "max", nil, nil}},
	}
	var in strings.Builder
	for _, r := range rows {
		in.WriteString(r.json + "\n")
	}
	if out, err := runStdin(t, in.String(), "import", path, "t"); err != nil || out != "imported 8 rows into t\n" {
		t.Fatalf("import: %q, %v", out, err)
	}
	integrityCheck(t, path)

	// SQLite reads what was meant.
	got := sqliteQuery(t, path, "SELECT id, i, r, s, b, x FROM t ORDER BY id")
	want := make([][]any, 0, len(rows))
	for _, r := range rows {
		want = append(want, r.want)
	}
	// In rowid order.
	want = append([][]any{want[6]}, append(want[:6:6], want[7])...)
	if len(got) != len(want) {
		t.Fatalf("SQLite reads %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("row %d: SQLite reads\n%.300q\nwant\n%.300q", i, got[i], want[i])
		}
	}
	// scan --json prints the lines back.
	var wantScan strings.Builder
	for _, i := range []int{6, 0, 1, 2, 3, 4, 5, 7} {
		wantScan.WriteString(rows[i].json + "\n")
	}
	if got := mustRun(t, "scan", path, "t", "--json"); got != wantScan.String() {
		t.Errorf("scan --json after import:\n%.2000s\nwant\n%.2000s", got, wantScan.String())
	}

	// A null rowid takes the next one, as in SQLite.
	sqltest.Exec(t, path, `DELETE FROM t WHERE id = 9223372036854775807`)
	if _, err := runStdin(t, "[null,1,null,\"next\",null,null]\n", "import", path, "t"); err != nil {
		t.Fatal(err)
	}
	if got := sqliteQuery(t, path, "SELECT id FROM t WHERE s = 'next'"); !reflect.DeepEqual(got, [][]any{{int64(7)}}) {
		t.Errorf("null rowid became %v, want 7", got)
	}
	integrityCheck(t, path)
}

// TestImportAtomic: a bad line stops the import with an error naming the
// line, and nothing of the import remains.
func TestImportAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "atomic.db")
	sqltest.Exec(t, path, allTypesSQL, `CREATE INDEX t_x ON t(x)`,
		`INSERT INTO t VALUES (1, 1, 1.5, 'one', x'01', 'x1'), (2, 2, 2.5, 'two', x'02', 'x2')`)
	before := mustRun(t, "scan", path, "t", "--json")
	tablesBefore := mustRun(t, "tables", path)
	good := "[10,10,null,\"ten\",null,null]\n[11,11,null,\"eleven\",{\"blob\":\"" + strings.Repeat("ab", 50_000) + "\"},null]\n\n"
	for _, tc := range []struct {
		table, bad string
		line       int
		msg        string   // in the error
		is         error    // nil: any error
		after      []string // more good lines after the bad one
	}{
		{"t", `[12,12,null,"twelve",null,null`, 4, "not JSON", nil, nil},
		{"t", `{"a":1}`, 4, "not a JSON array: an object", nil, nil},
		{"t", `[12,12,null,"twelve",null]`, 4, "has 6 columns, got 5 values", nil, nil},
		{"t", `[1,12,null,"twelve",null,null]`, 4, "UNIQUE constraint failed", pagoda.ErrExists, nil},
		{"t", `[12,12,null,"one",null,null]`, 4, "UNIQUE constraint failed", pagoda.ErrExists, nil},    // s is UNIQUE
		{"t", `[10,12,null,"twelve",null,null]`, 4, "UNIQUE constraint failed", pagoda.ErrExists, nil}, // rowid of line 1
		{"t", `["x",12,null,"twelve",null,null]`, 4, "datatype mismatch", nil, nil},
		{"t", `[12,true,null,"twelve",null,null]`, 4, "column 2: a boolean is not a column value", nil, nil},
		{"t", `[12,[1],null,"twelve",null,null]`, 4, "column 2: an array is not a column value", nil, nil},
		{"t", `[12,1,{"blob":"zz"},"twelve",null,null]`, 4, "column 3: blob: encoding/hex", nil, nil},
		{"t", `[12,1,{"blob":"00","x":1},"twelve",null,null]`, 4, "column 3: an object must be", nil, nil},
		{"t", `[12,99999999999999999999,null,"twelve",null,null]`, 4, "column 2: integer 99999999999999999999 does not fit in 64 bits", nil, nil},
		{"t", `[12,1,null,"twelve",null,null] [13]`, 4, "more after the row's array", nil, nil},
		{"t", `[12,1,null,"twelve",null,null]`, 5, "UNIQUE constraint failed", pagoda.ErrExists, []string{`[12,1,null,"twelve",null,null]`}},
		{"newbucket", `["k"]`, 4, "a bucket row is [key, value], got 1 values", nil, nil},
		{"newbucket", `["k",1]`, 4, "value: a number is not bytes", nil, nil},
		{"newbucket", `[null,"v"]`, 4, "key: null is not bytes", nil, nil},
		// Bytes that are not UTF-8 are refused, not stored as U+FFFD.
		{"newbucket", "[\"k\xff\",\"v\"]", 4, "invalid UTF-8 at column 4 (byte 0xff)", nil, nil},
		{"t", "[12,1,null,\"tw\xc3\",null,null]", 4, "invalid UTF-8 at column 15 (byte 0xc3)", nil, nil},
		{"t", "[12,1,null,\"\xed\xa0\x80\",null,null]", 4, "invalid UTF-8 at column 13", nil, nil}, // an encoded surrogate
		{"newbucket", `["k\ud800","v"]`, 4, "lone surrogate escape at column 4", nil, nil},
		{"newbucket", `["k","\udc00x"]`, 4, "lone surrogate escape at column 7", nil, nil},
		{"newbucket", `["k","\ud800\u0041"]`, 4, "lone surrogate escape at column 7", nil, nil},
	} {
		in := good + tc.bad + "\n" + strings.Join(tc.after, "\n")
		if tc.table != "t" {
			in = "[\"a\",\"b\"]\n[\"c\",{\"blob\":\"00\"}]\n\n" + tc.bad + "\n"
		}
		rows := writeFile(t, "rows.jsonl", in)
		out, _, err := run(t, "import", path, tc.table, rows)
		if err == nil {
			t.Errorf("import %s: no error", tc.bad)
			continue
		}
		prefix := fmt.Sprintf("%s line %d: ", rows, tc.line)
		if msg := errorText(err); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.msg) {
			t.Errorf("import %s: error %q, want %q...%q", tc.bad, msg, prefix, tc.msg)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("import %s: error %v, want %v", tc.bad, err, tc.is)
		}
		if out != "" {
			t.Errorf("import %s: printed %q", tc.bad, out)
		}
		if got := mustRun(t, "scan", path, "t", "--json"); got != before {
			t.Errorf("import %s changed t:\n%.500s", tc.bad, got)
		}
		if got := mustRun(t, "tables", path); got != tablesBefore {
			t.Errorf("import %s changed the tables:\n%s", tc.bad, got)
		}
	}
	integrityCheck(t, path)

	// A failed import into a new file leaves no file.
	newPath := filepath.Join(t.TempDir(), "new.db")
	if _, _, err := run(t, "import", newPath, "b", writeFile(t, "bad.jsonl", "[\"k\",\"v\"]\nnot json\n")); err == nil {
		t.Errorf("import of a bad line into a new file: no error")
	}
	if _, err := os.Stat(newPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed import left %s behind (%v)", newPath, err)
	}
	// Stdin is named "stdin".
	if _, err := runStdin(t, "[1]\n", "import", path, "t"); err == nil || !strings.HasPrefix(errorText(err), "stdin line 1: ") {
		t.Errorf("import from stdin: error %v", err)
	}
	// A missing input file.
	if _, _, err := run(t, "import", path, "t", filepath.Join(t.TempDir(), "missing.jsonl")); err == nil {
		t.Errorf("import from a missing file: no error")
	}
}

// TestImportRoundTrip: scan --json of every fixture table, imported into
// a copy of its schema, gives the same scan --json output, and the same
// rows to SQLite.
func TestImportRoundTrip(t *testing.T) {
	path, sdb := fixture(t)
	sdb.Close()
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	var ddl []string
	for _, s := range fixtureSQL {
		if strings.HasPrefix(s, "CREATE") {
			ddl = append(ddl, s)
		}
	}
	sqltest.Exec(t, copyPath, ddl...)
	for _, table := range []string{"all_types", "ipk", "wr", "wi", "b", "sq"} {
		orig := mustRun(t, "scan", path, table, "--json")
		rows := writeFile(t, table+".jsonl", orig)
		want := fmt.Sprintf("imported %d rows into %s\n", strings.Count(orig, "\n"), table)
		if out := mustRun(t, "import", copyPath, table, rows); out != want {
			t.Errorf("import %s printed %q, want %q", table, out, want)
		}
		if got := mustRun(t, "scan", copyPath, table, "--json"); got != orig {
			t.Errorf("%s: scan --json of the copy:\n%.1000s\nwant\n%.1000s", table, got, orig)
		}
		integrityCheck(t, copyPath)
		query := "SELECT * FROM " + table + " ORDER BY rowid"
		if table == "wr" || table == "wi" || table == "b" {
			query = "SELECT * FROM " + table + " ORDER BY 1"
		}
		if got, want := sqliteQuery(t, copyPath, query), sqliteQuery(t, path, query); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: SQLite reads the copy as\n%.1000q\nwant\n%.1000q", table, got, want)
		}
	}
	// The index on ipk(name) was filled as SQLite fills it.
	q := "SELECT name FROM ipk INDEXED BY ipk_name ORDER BY name DESC"
	if got, want := sqliteQuery(t, copyPath, q), sqliteQuery(t, path, q); !reflect.DeepEqual(got, want) {
		t.Errorf("ipk_name: %q, want %q", got, want)
	}
}

// TestImportProgress runs an import through the progress bar that a
// terminal would show.
func TestImportProgress(t *testing.T) {
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
	if f, err := os.Open(os.DevNull); err == nil {
		if isTerminal(f) {
			t.Errorf("%s is a terminal", os.DevNull)
		}
		f.Close()
	}
	path := filepath.Join(t.TempDir(), "progress.db")
	var in strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&in, "[\"key %04d\",\"value %d\"]\n", i, i)
	}
	var barOut bytes.Buffer
	bar := newProgress(&barOut, "importing", int64(in.Len()))
	db, err := pagoda.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *pagoda.Tx) error {
		name, n, err := importRows(tx, "kv", &progressReader{r: strings.NewReader(in.String()), bar: bar}, "input")
		if err == nil && (name != "kv" || n != 1000) {
			err = fmt.Errorf("imported %d rows into %s", n, name)
		}
		return err
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(barOut.String(), "importing") {
		t.Errorf("progress bar output: %q", barOut.String())
	}
	if got := mustRun(t, "get", path, "kv", "key 0999"); got != "value 999\n" {
		t.Errorf("get kv 'key 0999' = %q", got)
	}
	integrityCheck(t, path)
}

// TestImportCheckpointFails: when the import's commit is durable but the
// checkpoint as the file closes fails (the disk filled up: simulated at
// closeDB, which the pager's TestCloseCheckpointFails covers for real),
// the command says the rows are imported and that the commit stands,
// exits 0, and leaves the file (a new one too) with every row.
func TestImportCheckpointFails(t *testing.T) {
	defer func(f func(*pagoda.DB) error) { closeDB = f }(closeDB)
	closeDB = func(db *pagoda.DB) error {
		if err := db.Close(); err != nil {
			return err
		}
		return fmt.Errorf("pagoda: close: %w: write %s: no space left on device", pagoda.ErrCheckpoint, db.Path())
	}
	path := filepath.Join(t.TempDir(), "new.db") // created by the import
	root := NewRoot()
	var o, e bytes.Buffer
	root.SetArgs([]string{"import", path, "kv", "-"})
	root.SetIn(strings.NewReader("[\"a\",\"1\"]\n[\"b\",\"2\"]\n"))
	root.SetOut(&o)
	root.SetErr(&e)
	if code := execute(root); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	if o.String() != "imported 2 rows into kv\n" {
		t.Errorf("stdout %q", o.String())
	}
	if msg := e.String(); !strings.HasPrefix(msg, "pagoda: warning: the commit stands") || !strings.Contains(msg, "no space left on device") {
		t.Errorf("stderr %q", msg)
	}
	closeDB = (*pagoda.DB).Close
	if got := mustRun(t, "get", path, "kv", "b"); got != "2\n" {
		t.Errorf("get kv b = %q after the warning", got)
	}
	integrityCheck(t, path)
}
