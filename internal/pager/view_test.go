package pager

import "testing"

// TestViews checks that AsString and AsBytes view the same bytes without
// copying them, empty and nil slices included.
func TestViews(t *testing.T) {
	page := []byte("a page of bytes")
	s := AsString(page[2:6])
	if s != "page" {
		t.Fatalf("AsString = %q", s)
	}
	b := AsBytes(s)
	if string(b) != "page" || len(b) != 4 || cap(b) != 4 {
		t.Fatalf("AsBytes = %q, len %d, cap %d", b, len(b), cap(b))
	}
	if &b[0] != &page[2] {
		t.Error("AsBytes copied the bytes")
	}
	for _, in := range [][]byte{nil, {}, page[3:3]} {
		if s := AsString(in); s != "" {
			t.Errorf("AsString(%v) = %q", in, s)
		}
		if b := AsBytes(AsString(in)); len(b) != 0 {
			t.Errorf("AsBytes of an empty view = %v", b)
		}
	}
	if got := testing.AllocsPerRun(100, func() { b = AsBytes(AsString(page)) }); got != 0 {
		t.Errorf("%v allocs per view", got)
	}
}
