package command

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func TestAppendJSONFloat(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{3, "3.0"}, {0.1, "0.1"}, {-2.5, "-2.5"}, {1e300, "1e+300"}, {math.Copysign(0, -1), "-0.0"},
		{5e-324, "5e-324"}, {math.MaxFloat64, "1.7976931348623157e+308"}, {1e21, "1e+21"},
		{123456789012345678, "1.2345678901234568e+17"}, {1e20, "1e+20"}, {1234.5, "1234.5"}, {-7, "-7.0"},
		{math.Inf(1), "1e999"}, {math.Inf(-1), "-1e999"}, {math.NaN(), "null"},
	} {
		got := string(appendJSONFloat(nil, tc.f))
		if got != tc.want {
			t.Errorf("appendJSONFloat(%v) = %s, want %s", tc.f, got, tc.want)
		}
		var back float64
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			if !math.IsInf(tc.f, 0) && !math.IsNaN(tc.f) {
				t.Errorf("%s: %v", got, err)
			}
		} else if !math.IsNaN(tc.f) && back != tc.f {
			t.Errorf("%s parses as %v, want %v", got, back, tc.f)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	var all []byte
	for c := 0; c < 128; c++ {
		all = append(all, byte(c))
	}
	for _, s := range []string{"", "plain", `"\`, string(all), "héllo ☃ 𝄞 \u2028\u2029", "<&>"} {
		got := appendJSONString(nil, []byte(s))
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("%q: %s: %v", s, got, err)
		} else if back != s {
			t.Errorf("%q: round trip gives %q", s, back)
		}
	}
	if got := appendJSONString(nil, []byte("a\"b\\c\nd\x01")); !bytes.Equal(got, []byte(`"a\"b\\c\nd\u0001"`)) {
		t.Errorf("got %s", got)
	}
}
