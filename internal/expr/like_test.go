package expr

import (
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// TestLikeBacktracking: a pattern of many % against a long text that does
// not match ends at once, as SQLite's patternCompare does, rather than
// trying every way to split the text.
func TestLikeBacktracking(t *testing.T) {
	text := format.TextValue([]byte(strings.Repeat("a", 5000)))
	pat := format.TextValue([]byte(strings.Repeat("%a", 40) + "%b"))
	if r, ok := like(text, pat, format.Value{}, false); !ok || r {
		t.Errorf("like = %v, %v; want false, true", r, ok)
	}
	pat = format.TextValue([]byte(strings.Repeat("%a", 40) + "%"))
	if r, ok := like(text, pat, format.Value{}, false); !ok || !r {
		t.Errorf("like = %v, %v; want true, true", r, ok)
	}
}
