package schema

import "fmt"

// Collation is one of SQLite's built-in collating sequences, used to compare
// TEXT values in index keys (sqlite-format.md §7.1).
type Collation uint8

const (
	CollBinary Collation = iota // bytes.Compare on the UTF-8 text (the default)
	CollNoCase                  // like BINARY after folding ASCII A-Z to a-z
	CollRTrim                   // like BINARY, ignoring trailing spaces
	// CollOther is an application-defined collation (Android's LOCALIZED
	// and UNICODE, ...), whose name the column or term keeps (CollName).
	// sqlite3 reads such a table but refuses whatever needs the order
	// ("no such collation sequence"); so does pagoda: its rows read, and
	// nothing that compares its keys does.
	CollOther
)

var collationNames = [...]string{
	CollBinary: "BINARY",
	CollNoCase: "NOCASE",
	CollRTrim:  "RTRIM",
	CollOther:  "OTHER",
}

// String returns the collation's SQL name ("BINARY", "NOCASE" or "RTRIM").
func (c Collation) String() string {
	if int(c) < len(collationNames) {
		return collationNames[c]
	}
	return "Collation(?)"
}

// ParseCollation maps a collation name to a Collation, ignoring ASCII case.
// Any name other than BINARY, NOCASE and RTRIM (an application-defined
// collation) gives an error wrapping ErrUnsupported: the engine could not
// order keys by it.
func ParseCollation(name string) (Collation, error) {
	for i, n := range collationNames[:CollOther] {
		if eqFold(name, n) {
			return Collation(i), nil
		}
	}
	return CollBinary, fmt.Errorf("%w: collation %q", ErrUnsupported, name)
}

// collationOf is the collation of a COLLATE clause in a table or index
// definition: a built-in one, or CollOther and the name as written.
func collationOf(name string) (Collation, string) {
	if c, err := ParseCollation(name); err == nil {
		return c, ""
	}
	return CollOther, name
}

// sameCollation reports whether two terms have the same collation: the
// same built-in one, or application-defined ones of the same name.
func sameCollation(a, b IndexedColumn) bool {
	return a.Collation == b.Collation && (a.Collation != CollOther || eqFold(a.CollName, b.CollName))
}

// OtherCollation returns the name of the first application-defined
// collation among terms ("" if none): an order pagoda cannot compute.
func OtherCollation(terms []IndexedColumn) string {
	for _, c := range terms {
		if c.Collation == CollOther {
			return c.CollName
		}
	}
	return ""
}

// lowerASCII folds A-Z only, as sqlite3's sqlite3UpperToLower does.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// eqFold reports whether a and b are equal ignoring ASCII case. SQLite folds
// only ASCII letters in names (strings.EqualFold would also match, e.g., the
// Kelvin sign with 'k').
func eqFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

// foldKey returns name with ASCII letters lower-cased, for map keys.
func foldKey(name string) string {
	for i := 0; i < len(name); i++ {
		if 'A' <= name[i] && name[i] <= 'Z' {
			b := []byte(name)
			for j := i; j < len(b); j++ {
				b[j] = lowerASCII(b[j])
			}
			return string(b)
		}
	}
	return name
}

// OtherCollation returns the name of the first application-defined
// collation of t (a column's, or a key's), "" if none.
func (t *Table) OtherCollation() string {
	for _, c := range t.Columns {
		if c.Collation == CollOther {
			return c.CollName
		}
	}
	if n := OtherCollation(t.PrimaryKey); n != "" {
		return n
	}
	for _, k := range t.Constraints {
		if n := OtherCollation(k.Columns); n != "" {
			return n
		}
	}
	return ""
}

// OtherCollation returns the name of the first application-defined
// collation of the index's terms, "" if none.
func (ix *Index) OtherCollation() string { return OtherCollation(ix.Columns) }
