package schema

import (
	"errors"
	"testing"
)

// The rules of sqlite-format.md §4.2 and SQLite's own examples; checked
// against sqlite3 3.40.1 by storing '1' in a column of each type.
func TestAffinityOf(t *testing.T) {
	tests := []struct {
		decl string
		want Affinity
	}{
		// Rule 1: contains "INT".
		{"INT", AffinityInteger}, {"INTEGER", AffinityInteger}, {"TINYINT", AffinityInteger},
		{"SMALLINT", AffinityInteger}, {"MEDIUMINT", AffinityInteger}, {"BIGINT", AffinityInteger},
		{"UNSIGNED BIG INT", AffinityInteger}, {"INT2", AffinityInteger}, {"INT8", AffinityInteger},
		{"int", AffinityInteger}, {"FLOATING POINT", AffinityInteger}, {"POINT", AffinityInteger},
		{"CHARINT", AffinityInteger}, {"BLOBINT", AffinityInteger},
		// Rule 2: "CHAR", "CLOB", "TEXT".
		{"CHARACTER(20)", AffinityText}, {"VARCHAR(255)", AffinityText}, {"VARYING CHARACTER(255)", AffinityText},
		{"NCHAR(55)", AffinityText}, {"NATIVE CHARACTER(70)", AffinityText}, {"NVARCHAR(100)", AffinityText},
		{"TEXT", AffinityText}, {"CLOB", AffinityText}, {"texT", AffinityText}, {"BLOBTEXT", AffinityText},
		{"DOUBLE CHAR", AffinityText},
		// Rule 3: "BLOB" or no type.
		{"BLOB", AffinityBlob}, {"", AffinityBlob}, {"xblobx", AffinityBlob}, {"REALBLOB", AffinityBlob},
		{"BLOBREAL", AffinityBlob},
		// Rule 4: "REAL", "FLOA", "DOUB".
		{"REAL", AffinityReal}, {"DOUBLE", AffinityReal}, {"DOUBLE PRECISION", AffinityReal},
		{"FLOAT", AffinityReal}, {"float8", AffinityReal},
		// Rule 5: anything else.
		{"NUMERIC", AffinityNumeric}, {"DECIMAL(10,5)", AffinityNumeric}, {"BOOLEAN", AffinityNumeric},
		{"DATE", AffinityNumeric}, {"DATETIME", AffinityNumeric}, {"STRING", AffinityNumeric},
		{"ANY", AffinityNumeric}, {"in t", AffinityNumeric},
		// Only ASCII letters fold: U+0131 (dotless i) upper-cases to 'I' in Unicode.
		{"\u0131NT", AffinityNumeric},
	}
	for _, tt := range tests {
		if got := AffinityOf(tt.decl); got != tt.want {
			t.Errorf("AffinityOf(%q) = %v, want %v", tt.decl, got, tt.want)
		}
	}
}

func TestAffinityString(t *testing.T) {
	for a, want := range map[Affinity]string{
		AffinityBlob: "BLOB", AffinityText: "TEXT", AffinityNumeric: "NUMERIC",
		AffinityInteger: "INTEGER", AffinityReal: "REAL", Affinity(99): "Affinity(?)",
	} {
		if got := a.String(); got != want {
			t.Errorf("Affinity(%d).String() = %q, want %q", a, got, want)
		}
	}
}

func TestParseCollation(t *testing.T) {
	for name, want := range map[string]Collation{
		"BINARY": CollBinary, "binary": CollBinary, "NoCase": CollNoCase, "rtrim": CollRTrim,
	} {
		got, err := ParseCollation(name)
		if err != nil || got != want {
			t.Errorf("ParseCollation(%q) = %v, %v; want %v", name, got, err, want)
		}
		if got.String() != want.String() {
			t.Errorf("String mismatch")
		}
	}
	for _, name := range []string{"", "klingon", "NOCASE ", "\u212Aase"} {
		if _, err := ParseCollation(name); !errors.Is(err, ErrUnsupported) {
			t.Errorf("ParseCollation(%q) = %v, want ErrUnsupported", name, err)
		}
	}
	if Collation(7).String() != "Collation(?)" {
		t.Errorf("bad String for an unknown collation")
	}
}
