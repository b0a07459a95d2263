package command

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

func TestDelete(t *testing.T) {
	path, sdb := fixture(t)
	sdb.Close() // pagoda writes only files that no other program has open
	for _, tc := range []struct {
		args  []string // after "delete FILE"
		query string   // what SQLite then reads
		want  [][]any
	}{
		{[]string{"b", "alpha"}, "SELECT CAST(key AS TEXT) FROM b ORDER BY key",
			[][]any{{""}, {"\x00"}, {"beta"}}},
		{[]string{"b", "--hex", "00"}, "SELECT CAST(key AS TEXT) FROM b ORDER BY key",
			[][]any{{""}, {"beta"}}},
		{[]string{"b", ""}, "SELECT CAST(key AS TEXT) FROM b ORDER BY key",
			[][]any{{"beta"}}},
		// ipk has an index and a UNIQUE constraint: integrity_check
		// compares them with the table.
		{[]string{"ipk", "5"}, "SELECT id, name FROM ipk ORDER BY id",
			[][]any{{int64(-3), "minus three"}, {int64(1), "one"}, {int64(9223372036854775807), "max"}}},
		{[]string{"ipk", "--", "-3"}, "SELECT id FROM ipk ORDER BY id",
			[][]any{{int64(1)}, {int64(9223372036854775807)}}},
		{[]string{"all_types", "2"}, "SELECT rowid FROM all_types ORDER BY rowid",
			[][]any{{int64(1)}, {int64(3)}, {int64(4)}, {int64(5)}, {int64(6)}}},
		{[]string{"all_types", "6"}, "SELECT rowid FROM all_types ORDER BY rowid", // overflow pages
			[][]any{{int64(1)}, {int64(3)}, {int64(4)}, {int64(5)}}},
		{[]string{"wr", "b"}, "SELECT k FROM wr ORDER BY k", [][]any{{"a"}, {"c"}}},
		{[]string{"wi", "7"}, "SELECT k FROM wi ORDER BY k", [][]any{{int64(-1)}}},
		{[]string{"wi", "--", "-1"}, "SELECT count(*) FROM wi", [][]any{{int64(0)}}},
	} {
		if out := mustRun(t, append([]string{"delete", path}, tc.args...)...); out != "" {
			t.Errorf("delete %q printed %q", tc.args, out)
		}
		if got := sqliteQuery(t, path, tc.query); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("after delete %q: %s = %q, want %q", tc.args, tc.query, got, tc.want)
		}
		integrityCheck(t, path)
	}
}

// TestDeleteKeyAffinity: the key of a WITHOUT ROWID table is an integer
// only for a column of INTEGER affinity; otherwise it is text, to which
// the column's affinity applies.
func TestDeleteKeyAffinity(t *testing.T) {
	path := filepath.Join(t.TempDir(), "aff.db")
	sqltest.Exec(t, path,
		`CREATE TABLE anyk(k PRIMARY KEY, v) WITHOUT ROWID`, // BLOB affinity: '12' and 12 differ
		`INSERT INTO anyk VALUES ('12', 'text'), (12, 'integer')`,
		`CREATE TABLE realk(k REAL PRIMARY KEY, v) WITHOUT ROWID`, // "2" is the real 2.0
		`INSERT INTO realk VALUES (2, 'two'), (2.5, 'two and a half')`,
		`CREATE TABLE textk(k TEXT PRIMARY KEY, v) WITHOUT ROWID`,
		`INSERT INTO textk VALUES ('007', 'bond'), ('7', 'seven')`,
	)
	mustRun(t, "delete", path, "anyk", "12")
	mustRun(t, "delete", path, "realk", "2")
	mustRun(t, "delete", path, "textk", "007")
	for query, want := range map[string][][]any{
		"SELECT typeof(k), v FROM anyk": {{"integer", "integer"}},
		"SELECT k, v FROM realk":        {{2.5, "two and a half"}},
		"SELECT k, v FROM textk":        {{"7", "seven"}},
	} {
		if got := sqliteQuery(t, path, query); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %q, want %q", query, got, want)
		}
	}
	integrityCheck(t, path)
}

func TestDeleteErrors(t *testing.T) {
	path, sdb := fixture(t)
	sdb.Close()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	for _, tt := range []struct {
		args []string
		is   error  // nil: any error
		msg  string // "": any message
	}{
		{[]string{"b", "gamma"}, pagoda.ErrNotFound, "b: key \"gamma\" not found"},
		{[]string{"b", "--hex", "ff"}, pagoda.ErrNotFound, "b: key \"ff\" not found"},
		{[]string{"ipk", "2"}, pagoda.ErrNotFound, "ipk: key \"2\" not found"},
		{[]string{"all_types", "7"}, pagoda.ErrNotFound, "all_types: key \"7\" not found"},
		{[]string{"wr", "d"}, pagoda.ErrNotFound, "wr: key \"d\" not found"},
		{[]string{"wi", "8"}, pagoda.ErrNotFound, "wi: key \"8\" not found"},
		{[]string{"nosuch", "1"}, pagoda.ErrNotFound, "no such table: nosuch"},
		{[]string{"ipk", "one"}, nil, `ipk: rowid "one" is not an integer`},
		{[]string{"b", "--hex", "zz"}, nil, ""},
		{[]string{"ipk"}, nil, ""},
	} {
		args := append([]string{"delete", path}, tt.args...)
		out, _, err := run(t, args...)
		if err == nil {
			t.Errorf("pagoda %s: no error", strings.Join(args, " "))
			continue
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("pagoda %s: error %v, want %v", strings.Join(args, " "), err, tt.is)
		}
		if tt.msg != "" && errorText(err) != tt.msg {
			t.Errorf("pagoda %s: error %q, want %q", strings.Join(args, " "), errorText(err), tt.msg)
		}
		if out != "" {
			t.Errorf("pagoda %s: printed %q", strings.Join(args, " "), out)
		}
	}
	if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, orig) {
		t.Errorf("failed deletes changed the file (err %v)", err)
	}

	// The exit code and stderr of a missing key.
	root := NewRoot()
	var o, e bytes.Buffer
	root.SetArgs([]string{"delete", path, "b", "gamma"})
	root.SetOut(&o)
	root.SetErr(&e)
	if code := execute(root); code != 1 || o.Len() != 0 || e.String() != "pagoda: b: key \"gamma\" not found\n" {
		t.Errorf("exit code %d, stdout %q, stderr %q", code, o.String(), e.String())
	}

	// delete never creates a file.
	if _, _, err := run(t, "delete", missing, "b", "k"); err == nil || err.Error() != "open "+missing+": no such file or directory" {
		t.Errorf("delete on a missing file: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("delete created %s", missing)
	}
}
