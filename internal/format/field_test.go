package format

import (
	"strings"
	"testing"
)

// TestRecordFits: records of short serial types fit, as CheckRecord passes
// them; one a byte short, a reserved type, or a serial type of three bytes
// or more does not (CheckRecord answers for the last).
func TestRecordFits(t *testing.T) {
	fits := [][]byte{
		rec(NullValue(), BlobValue(make([]byte, 100))),
		rec(IntValue(0), IntValue(1), IntValue(-1), IntValue(1<<40), FloatValue(2.5), txt("abc"), BlobValue(nil)),
		rec(txt(strings.Repeat("x", 8000))),
		rec(),
	}
	for _, r := range fits {
		if _, err := CheckRecord(r); err != nil {
			t.Fatalf("% x: %v", r[:min(8, len(r))], err)
		}
		if !RecordFits(r) {
			t.Errorf("RecordFits(% x...) = false", r[:min(8, len(r))])
		}
		if len(r) > 1 && RecordFits(r[:len(r)-1]) {
			t.Errorf("RecordFits(% x...) of a record a byte short = true", r[:min(8, len(r))])
		}
	}
	long := rec(txt(strings.Repeat("x", 9000))) // a serial type of three bytes
	if _, err := CheckRecord(long); err != nil || RecordFits(long) {
		t.Errorf("a record with a three-byte serial type: CheckRecord %v, RecordFits %v", err, RecordFits(long))
	}
	for _, bad := range [][]byte{{2, 10}, {2, 11}, {0}, {0x80}, {3, 0x80, 0x01}, {5, 1, 1}} {
		if RecordFits(bad) {
			t.Errorf("RecordFits(% x) = true", bad)
		}
	}
}
