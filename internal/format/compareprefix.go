package format

import "math"

// CompareRecordPrefix compares two records over their first n fields (all
// the fields both have when n <= 0), as CompareRecords does: it returns 0
// when those fields are equal, even if one record has fewer fields. Field i
// compares under k's collation and order for i. It is how the b-tree writer
// decides that two index entries are "the same" (a WITHOUT ROWID table
// compares its primary-key fields only).
func CompareRecordPrefix(a, b []byte, k *KeyInfo, n int) (int, error) {
	if n <= 0 {
		n = math.MaxInt
	}
	return compareFields(a, b, k, n)
}
