package format

// CompareRecordPrefix compares two records over their first n fields (all
// the fields both have when n <= 0), as CompareRecords does: it returns 0
// when those fields are equal, even if one record has fewer fields. Field i
// compares under k's collation and order for i. It is how the b-tree writer
// decides that two index entries are "the same" (a WITHOUT ROWID table
// compares its primary-key fields only).
func CompareRecordPrefix(a, b []byte, k *KeyInfo, n int) (int, error) {
	if n <= 0 {
		return CompareRecords(a, b, k)
	}
	ra, err := NewRecordReader(a)
	if err != nil {
		return 0, err
	}
	rb, err := NewRecordReader(b)
	if err != nil {
		return 0, err
	}
	for i := 0; i < n; i++ {
		va, oka, err := ra.Next()
		if err != nil {
			return 0, err
		}
		vb, okb, err := rb.Next()
		if err != nil {
			return 0, err
		}
		if !oka || !okb {
			return 0, nil
		}
		coll := CollBinary
		desc := false
		if k != nil {
			if i < len(k.Colls) {
				coll = k.Colls[i]
			}
			if i < len(k.Desc) {
				desc = k.Desc[i]
			}
		}
		if c := CompareValues(va, vb, coll); c != 0 {
			if desc {
				return -c, nil
			}
			return c, nil
		}
	}
	return 0, nil
}
