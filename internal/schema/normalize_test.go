package schema

import (
	"errors"
	"testing"
)

// Expected texts are what sqlite3 3.40.1 stored in sqlite_schema.sql.
func TestNormalizeCreate(t *testing.T) {
	tests := []struct{ in, want string }{
		{"create table if not exists   Foo ( x int , y )", "CREATE TABLE Foo ( x int , y )"},
		{"CREATE TABLE main.t2(a)", "CREATE TABLE t2(a)"},
		{"CREATE TEMP TABLE t(a);", "CREATE TABLE t(a)"},
		{"create temporary table \"T\" (a)  ;  ", "CREATE TABLE \"T\" (a)"},
		{"CREATE TABLE t3c(a PRIMARY KEY) /*c*/ ;", "CREATE TABLE t3c(a PRIMARY KEY)"},
		{"CREATE TABLE t3d(a PRIMARY KEY)   ", "CREATE TABLE t3d(a PRIMARY KEY)"},
		// With table options, and for indexes, sqlite3 keeps everything up to the ";".
		{"CREATE TABLE t3b(a PRIMARY KEY) WITHOUT ROWID /*c*/ ;", "CREATE TABLE t3b(a PRIMARY KEY) WITHOUT ROWID /*c*/ "},
		{"CREATE TABLE t(a INT) STRICT", "CREATE TABLE t(a INT) STRICT"},
		{"CREATE INDEX i1 ON t2(a)  ", "CREATE INDEX i1 ON t2(a)  "},
		{"CREATE INDEX i2 ON t2(a) /*x*/ ;", "CREATE INDEX i2 ON t2(a) /*x*/ "},
		{"create unique index if not exists main.i3 on t2(a) where a>0  ", "CREATE UNIQUE INDEX i3 on t2(a) where a>0  "},
		{"CREATE\nINDEX\ti ON t(a);", "CREATE INDEX i ON t(a)"},
	}
	for _, tt := range tests {
		got, err := NormalizeCreate(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("NormalizeCreate(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestNormalizeCreateErrors(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"", ErrSyntax},
		{"SELECT 1", ErrSyntax},
		{"CREATE TABLE t(a); DROP TABLE t", ErrSyntax},
		{"CREATE TABLE t(a", ErrSyntax},
		{"CREATE TEMP INDEX i ON t(a)", ErrSyntax},
		{"CREATE VIEW v AS SELECT 1", ErrUnsupported},
		{"CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END", ErrUnsupported},
		{"CREATE VIRTUAL TABLE v USING fts5(a)", ErrUnsupported},
		{"CREATE TABLE t AS SELECT 1", ErrUnsupported},
	}
	for _, tt := range tests {
		got, err := NormalizeCreate(tt.in)
		if !errors.Is(err, tt.want) {
			t.Errorf("NormalizeCreate(%q) = %q, %v; want an error wrapping %v", tt.in, got, err, tt.want)
		}
	}
}
