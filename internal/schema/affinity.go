package schema

// Affinity is a column's type affinity: how sqlite3 converts a value before
// storing it in the column (sqlite-format.md §4.2). Records written by pagoda
// must hold the storage class sqlite3 would have chosen, because
// PRAGMA integrity_check verifies it.
type Affinity uint8

const (
	AffinityBlob    Affinity = iota // "BLOB" or no declared type: store the value as given
	AffinityText                    // numbers are stored as their text rendering
	AffinityNumeric                 // well-formed numeric text becomes a number
	AffinityInteger                 // like NUMERIC (the distinction only matters for CAST)
	AffinityReal                    // like NUMERIC, but integers are read back as reals
)

var affinityNames = [...]string{
	AffinityBlob:    "BLOB",
	AffinityText:    "TEXT",
	AffinityNumeric: "NUMERIC",
	AffinityInteger: "INTEGER",
	AffinityReal:    "REAL",
}

// String returns the SQL name of the affinity ("BLOB", "TEXT", ...).
func (a Affinity) String() string {
	if int(a) < len(affinityNames) {
		return affinityNames[a]
	}
	return "Affinity(?)"
}

// AffinityOf returns the affinity of a declared column type by SQLite's rules
// (sqlite-format.md §4.2), the first matching rule winning:
//
//	contains "INT"                    INTEGER
//	contains "CHAR", "CLOB" or "TEXT" TEXT
//	contains "BLOB", or is empty      BLOB
//	contains "REAL", "FLOA" or "DOUB" REAL
//	otherwise                         NUMERIC
//
// Matching ignores ASCII case. declType is the type as sqlite3 keeps it (see
// Column.Type), e.g. "VARCHAR(10)".
func AffinityOf(declType string) Affinity {
	if declType == "" {
		return AffinityBlob
	}
	return affinityOfType(declType)
}

// affinityOfType is sqlite3AffinityType (src/build.c): a rolling four-byte
// window over the lower-cased text. Unlike AffinityOf it returns NUMERIC for
// "", which is what sqlite3 gives a column declared with an empty quoted type
// such as `x ""`.
func affinityOfType(t string) Affinity {
	const (
		kChar = 'c'<<24 | 'h'<<16 | 'a'<<8 | 'r'
		kClob = 'c'<<24 | 'l'<<16 | 'o'<<8 | 'b'
		kText = 't'<<24 | 'e'<<16 | 'x'<<8 | 't'
		kBlob = 'b'<<24 | 'l'<<16 | 'o'<<8 | 'b'
		kReal = 'r'<<24 | 'e'<<16 | 'a'<<8 | 'l'
		kFloa = 'f'<<24 | 'l'<<16 | 'o'<<8 | 'a'
		kDoub = 'd'<<24 | 'o'<<16 | 'u'<<8 | 'b'
		kInt  = 'i'<<16 | 'n'<<8 | 't'
	)
	aff := AffinityNumeric
	var h uint32
	for i := 0; i < len(t); i++ {
		h = h<<8 | uint32(lowerASCII(t[i]))
		switch {
		case h == kChar, h == kClob, h == kText:
			aff = AffinityText
		case h == kBlob && (aff == AffinityNumeric || aff == AffinityReal):
			aff = AffinityBlob
		case (h == kReal || h == kFloa || h == kDoub) && aff == AffinityNumeric:
			aff = AffinityReal
		case h&0x00FFFFFF == kInt:
			return AffinityInteger
		}
	}
	return aff
}
