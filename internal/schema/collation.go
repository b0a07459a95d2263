package schema

import "fmt"

// Collation is one of SQLite's built-in collating sequences, used to compare
// TEXT values in index keys (sqlite-format.md §7.1).
type Collation uint8

const (
	CollBinary Collation = iota // bytes.Compare on the UTF-8 text (the default)
	CollNoCase                  // like BINARY after folding ASCII A-Z to a-z
	CollRTrim                   // like BINARY, ignoring trailing spaces
)

var collationNames = [...]string{
	CollBinary: "BINARY",
	CollNoCase: "NOCASE",
	CollRTrim:  "RTRIM",
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
	for i, n := range collationNames {
		if eqFold(name, n) {
			return Collation(i), nil
		}
	}
	return CollBinary, fmt.Errorf("%w: collation %q", ErrUnsupported, name)
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
