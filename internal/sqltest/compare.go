package sqltest

import (
	"bytes"
	"database/sql"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// LoadSQL runs the SQL script on a new database at path, as `sqlite3 path <
// script` does: with the sqlite3 CLI when it is installed (its stderr must
// stay empty, as it does for a script without errors), else with the
// oracle, which runs the script as one Exec. It returns which ran it.
func LoadSQL(t testing.TB, path, script string) string {
	t.Helper()
	if cli, err := exec.LookPath("sqlite3"); err == nil {
		cmd := exec.Command(cli, path)
		cmd.Stdin = strings.NewReader(script)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Fatalf("sqlite3 %s < script: %v\n%s", path, err, stderr.Bytes())
		}
		return "sqlite3"
	}
	db := Open(t, path)
	if _, err := db.Exec(script); err != nil {
		t.Fatalf("SQLite: running the script on %s: %v", path, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return "the oracle (no sqlite3 CLI)"
}

// CompareDatabases fails t (with Errorf) unless the databases at a and b,
// as SQLite reads them, have the same schema (every object's type, name,
// table and SQL; root pages may differ) and the same rows in every table
// but virtual ones: row by row in rowid order (primary key order for
// WITHOUT ROWID tables), each value of the same storage class and equal
// (REALs by ==, so -0.0 equals 0.0). With rowids set, the rowids of rowid
// tables must be equal too; without it only their order counts, as when a
// dump gives rows new rowids. The sqlite_ tables are compared as any
// other, without their rowids, but for sqlite_stat4 (and the older
// stat2 and stat3): the query planner's samples, which only builds with
// SQLITE_ENABLE_STAT4 (such as the oracle's) make, and a dump leaves out
// for the others. It returns the number of rows compared.
func CompareDatabases(t testing.TB, a, b string, rowids bool) int {
	t.Helper()
	adb, bdb := Open(t, a), Open(t, b)
	defer adb.Close()
	defer bdb.Close()
	schema := "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT IN ('sqlite_stat2', 'sqlite_stat3', 'sqlite_stat4') ORDER BY type, name"
	as, bs := Values(t, adb, schema), Values(t, bdb, schema)
	if !reflect.DeepEqual(as, bs) {
		t.Errorf("schemas differ:\n%s: %q\n%s: %q", filepath.Base(a), as, filepath.Base(b), bs)
		return 0
	}
	n := 0
	for _, o := range as {
		name, sql := o[1].(string), ""
		if s, ok := o[3].(string); ok {
			sql = s
		}
		if o[0] != "table" || strings.HasPrefix(strings.ToUpper(sql), "CREATE VIRTUAL TABLE") {
			continue
		}
		var wr bool
		if err := adb.QueryRow("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?", name).Scan(&wr); err != nil {
			t.Fatalf("pragma_table_list(%q): %v", name, err)
		}
		q := "SELECT * FROM " + quoteIdent(name)
		if !wr {
			if rowids && !strings.HasPrefix(name, "sqlite_") {
				q = "SELECT _rowid_, * FROM " + quoteIdent(name)
			}
			q += " ORDER BY _rowid_"
		}
		ar, br := Values(t, adb, q), Values(t, bdb, q)
		if len(ar) != len(br) {
			t.Errorf("table %s: %d rows in %s, %d in %s", name, len(ar), filepath.Base(a), len(br), filepath.Base(b))
			continue
		}
		for i := range ar {
			if !reflect.DeepEqual(ar[i], br[i]) {
				t.Errorf("table %s, row %d of %d:\n%s: %s\n%s: %s", name, i+1, len(ar), filepath.Base(a), showRow(ar[i]), filepath.Base(b), showRow(br[i]))
				break
			}
		}
		n += len(ar)
	}
	return n
}

// quoteIdent quotes s as a SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// showRow renders a row with each value's Go type, so that TEXT "1" and
// INTEGER 1 read differently.
func showRow(row []any) string {
	parts := make([]string, len(row))
	for i, v := range row {
		parts[i] = fmt.Sprintf("%T(%q)", v, fmt.Sprint(v))
		if f, ok := v.(float64); ok {
			parts[i] = fmt.Sprintf("float64(%v)", f)
		}
	}
	return strings.Join(parts, ", ")
}

// Values runs q on db and returns its rows as the driver gives them: nil,
// int64, float64, string (TEXT) or []byte (BLOB) per column.
func Values(t testing.TB, db *sql.DB, q string, args ...any) [][]any {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("sqlite: %s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]any
	for rows.Next() {
		row, ptrs := make([]any, len(cols)), make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("sqlite: %s: %v", q, err)
	}
	return out
}
