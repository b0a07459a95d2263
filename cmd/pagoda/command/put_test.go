package command

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

// integrityCheck runs SQLite's PRAGMA integrity_check on the file at path,
// which must answer "ok".
func integrityCheck(t *testing.T, path string) {
	t.Helper()
	sdb := sqltest.Open(t, path)
	defer sdb.Close()
	rows := sqliteRows(t, sdb, "PRAGMA integrity_check")
	if len(rows) != 1 || rows[0][0] != "ok" {
		t.Errorf("%s: integrity_check says %v", filepath.Base(path), rows)
	}
}

// hexUpper is s in hex as SQLite's hex() prints it.
func hexUpper(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }

// sqliteQuery opens path with SQLite, runs query and closes the file.
func sqliteQuery(t *testing.T, path, query string) [][]any {
	t.Helper()
	sdb := sqltest.Open(t, path)
	defer sdb.Close()
	return sqliteRows(t, sdb, query)
}

func TestPut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	steps := []struct {
		put []string // args after "put FILE"
		get []string // args after "get FILE"
		out string
	}{
		{[]string{"b", "alpha", "first value"}, []string{"b", "alpha"}, "first value\n"},
		{[]string{"b", "alpha", "second value"}, []string{"b", "alpha"}, "second value\n"},
		{[]string{"b", "--hex", "00ff", "000102"}, []string{"b", "--hex", "00ff"}, "000102\n"},
		{[]string{"b", "--hex", "6b", ""}, []string{"b", "k"}, "\n"},
		{[]string{"b", "", "empty key"}, []string{"b", "--hex", ""}, "656d707479206b6579\n"},
		{[]string{"b", "--", "-k", "dash"}, []string{"b", "--", "-k"}, "dash\n"},
		{[]string{"b", "unicode ☃", "𝄞 line\nnext"}, []string{"b", "unicode ☃"}, "𝄞 line\nnext\n"},
		{[]string{"other", "k", "v"}, []string{"other", "k"}, "v\n"},
	}
	for _, s := range steps {
		if out := mustRun(t, append([]string{"put", path}, s.put...)...); out != "" {
			t.Errorf("put %q printed %q", s.put, out)
		}
		if got := mustRun(t, append([]string{"get", path}, s.get...)...); got != s.out {
			t.Errorf("after put %q: get %q = %q, want %q", s.put, s.get, got, s.out)
		}
		integrityCheck(t, path)
	}
	// hex() and typeof(): the driver reads an empty blob as nil.
	got := sqliteQuery(t, path, "SELECT hex(key), typeof(key), hex(value), typeof(value) FROM b ORDER BY key")
	var want [][]any
	for _, kv := range [][2]string{
		{"", "empty key"}, {"\x00\xff", "\x00\x01\x02"}, {"-k", "dash"}, {"alpha", "second value"},
		{"k", ""}, {"unicode ☃", "𝄞 line\nnext"},
	} {
		want = append(want, []any{hexUpper(kv[0]), "blob", hexUpper(kv[1]), "blob"})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SQLite reads b as\n%q\nwant\n%q", got, want)
	}
	if tables := mustRun(t, "tables", path); !strings.Contains(tables, "b") || !strings.Contains(tables, "other") {
		t.Errorf("tables:\n%s", tables)
	}
}

func TestPutErrors(t *testing.T) {
	path, sdb := fixture(t)
	sdb.Close()
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		is   error // nil: any error
	}{
		{[]string{"put", path, "ipk", "1", "x"}, pagoda.ErrUnsupported}, // not a bucket
		{[]string{"put", path, "sqlite_b", "k", "v"}, pagoda.ErrUnsupported},
		{[]string{"put", path, "b", "--hex", "zz", "00"}, nil},
		{[]string{"put", path, "b", "--hex", "00", "abc"}, nil},
		{[]string{"put", path, "b", "k"}, nil},
		{[]string{"put", filepath.Join(dir, "hex.db"), "b", "--hex", "0", "00"}, nil},
		{[]string{"put", filepath.Join(dir, "nodir", "x.db"), "b", "k", "v"}, nil},
	} {
		out, _, err := run(t, tt.args...)
		if err == nil {
			t.Errorf("pagoda %s: no error", strings.Join(tt.args, " "))
			continue
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("pagoda %s: error %v, want %v", strings.Join(tt.args, " "), err, tt.is)
		}
		if out != "" {
			t.Errorf("pagoda %s: printed %q", strings.Join(tt.args, " "), out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "hex.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed put left hex.db behind: %v", err)
	}
	integrityCheck(t, path)

	// The write commands leave a file that is not a database as it is.
	notDB := filepath.Join(dir, "not.db")
	junk := bytes.Repeat([]byte("this is not a SQLite database\n"), 200)
	if err := os.WriteFile(notDB, junk, 0o644); err != nil {
		t.Fatal(err)
	}
	rows := filepath.Join(dir, "rows.jsonl")
	if err := os.WriteFile(rows, []byte(`["k","v"]`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"put", notDB, "b", "k", "v"}, {"delete", notDB, "b", "k"}, {"import", notDB, "b", rows},
	} {
		if out, _, err := run(t, args...); err == nil || out != "" {
			t.Errorf("pagoda %s: out %q, err %v; want an error", strings.Join(args, " "), out, err)
		}
	}
	if b, err := os.ReadFile(notDB); err != nil || !bytes.Equal(b, junk) {
		t.Errorf("not.db changed (err %v)", err)
	}
	if _, err := os.Stat(notDB + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("not.db-wal: %v", err)
	}
}
