package expr

import (
	"bytes"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/schema"
)

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		kind format.Kind
	}{
		{"42", true, format.KindInt}, {" -7 ", true, format.KindInt}, {"+3", true, format.KindInt},
		{"4.5", true, format.KindFloat}, {"1e3", true, format.KindFloat}, {".5", true, format.KindFloat}, {"5.", true, format.KindFloat},
		{"9223372036854775808", true, format.KindFloat}, {"", false, 0}, {"abc", false, 0}, {"1e", false, 0},
		{"0x10", false, 0}, {"1 2", false, 0}, {"-", false, 0}, {".", false, 0},
	}
	for _, tt := range tests {
		v, ok := parseNumber(tt.in)
		if ok != tt.ok || (ok && v.Kind != tt.kind) {
			t.Errorf("parseNumber(%q) = %v %v, want %v %v", tt.in, v.Kind, ok, tt.kind, tt.ok)
		}
	}
}

// TestAffinityChanges: where AffinityChanges says a column's affinity
// leaves a kind alone, ApplyAffinity returns every value of it unchanged.
func TestAffinityChanges(t *testing.T) {
	values := []format.Value{
		format.NullValue(),
		format.IntValue(0), format.IntValue(-7), format.IntValue(1 << 60),
		format.FloatValue(0), format.FloatValue(2.5), format.FloatValue(3), format.FloatValue(-1e300),
		format.TextValue([]byte("12")), format.TextValue([]byte(" 1.5e3 ")), format.TextValue([]byte("abc")), format.TextValue(nil),
		format.BlobValue([]byte("12")), format.BlobValue(nil),
	}
	affs := []schema.Affinity{schema.AffinityBlob, schema.AffinityText, schema.AffinityNumeric, schema.AffinityInteger, schema.AffinityReal}
	for _, a := range affs {
		for _, v := range values {
			if AffinityChanges(v.Kind, a) {
				continue
			}
			got := ApplyAffinity(v, a)
			if !bytes.Equal(format.AppendRecord(nil, []format.Value{got}), format.AppendRecord(nil, []format.Value{v})) {
				t.Errorf("affinity %v: %v became %v, yet AffinityChanges said it stays", a, v, got)
			}
		}
	}
}
