package pagoda

import (
	"math"
	"testing"
)

// The renderings sqlite3 3.40.1 printed for the same values.
func TestFormatFloatLikeSQLite(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{1e300, "1.0e+300"}, {1e-5, "1.0e-05"}, {1e15, "1.0e+15"}, {3.0, "3.0"}, {0.1, "0.1"},
		{123456789012345678.0, "1.23456789012346e+17"}, {-2.5e-7, "-2.5e-07"}, {1.0 / 3, "0.333333333333333"},
		{1e16, "1.0e+16"}, {100.0, "100.0"}, {-0.5, "-0.5"}, {0, "0.0"}, {math.Copysign(0, -1), "0.0"},
		{math.Inf(1), "Inf"}, {math.Inf(-1), "-Inf"},
	}
	for _, tt := range tests {
		if got := FormatFloat(tt.f); got != tt.want {
			t.Errorf("FormatFloat(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		kind Type
	}{
		{"42", true, TypeInteger}, {" -7 ", true, TypeInteger}, {"+3", true, TypeInteger},
		{"4.5", true, TypeFloat}, {"1e3", true, TypeFloat}, {".5", true, TypeFloat}, {"5.", true, TypeFloat},
		{"9223372036854775808", true, TypeFloat}, {"", false, 0}, {"abc", false, 0}, {"1e", false, 0},
		{"0x10", false, 0}, {"1 2", false, 0}, {"-", false, 0}, {".", false, 0},
	}
	for _, tt := range tests {
		v, ok := parseNumber(tt.in)
		if ok != tt.ok || (ok && Type(v.Kind) != tt.kind) {
			t.Errorf("parseNumber(%q) = %v %v, want %v %v", tt.in, v.Kind, ok, tt.kind, tt.ok)
		}
	}
}
