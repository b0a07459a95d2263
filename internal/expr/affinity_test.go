package expr

import (
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
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
