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
