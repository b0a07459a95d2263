package format

// FieldsEnd returns where the body of field n-1 of a record ends: the
// length of the record's prefix that holds its header's length, its
// first n serial types and their bodies. head is a prefix of the record
// (Table.Head's), long enough to hold the header's length and those n
// serial types; the bodies may lie past it. ok is false when it is not,
// when the record has fewer than n fields, or when the header is
// malformed as far as it goes.
//
//	record: header length (varint) | serial type per field (varints) | bodies in order
func FieldsEnd(head []byte, n int) (end int64, ok bool) {
	h, pos := Uvarint(head)
	if pos == 0 || h < uint64(pos) || h > 1<<31 {
		return 0, false
	}
	end = int64(h)
	for range n {
		if uint64(pos) >= h || pos >= len(head) {
			return 0, false // fewer fields, or the header goes on past head
		}
		t, m := Uvarint(head[pos:])
		if m == 0 {
			return 0, false
		}
		size, ok := SerialTypeSize(t)
		if !ok || size > 1<<31 {
			return 0, false
		}
		pos += m
		end += size
	}
	return end, uint64(pos) <= h
}
