package expr

import (
	"encoding/json"
	"testing"
)

// FuzzJSONValid: jsonValid agrees with encoding/json's validator (RFC 8259
// too) on any input within SQLite's nesting limit, and refuses nesting
// past it.
func FuzzJSONValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,true,null,"\u00e9\n"]}`, "[1,]", `"\q"`, "-0.0E+1", " [ ] ", "01", `{"a" 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := json.Valid(b)
		if want {
			depth, deepest := 0, 0
			inString := false
			for i := 0; i < len(b); i++ {
				switch c := b[i]; {
				case inString && c == '\\':
					i++
				case c == '"':
					inString = !inString
				case inString:
				case c == '[' || c == '{':
					depth++
					deepest = max(deepest, depth)
				case c == ']' || c == '}':
					depth--
				}
			}
			want = deepest <= jsonMaxDepth
		}
		if got := jsonValid(b); got != want {
			t.Fatalf("jsonValid(%q) = %v, want %v", b, got, want)
		}
	})
}
