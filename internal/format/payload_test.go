package format

import "testing"

func TestPayloadLimits(t *testing.T) {
	// sqlite-format.md §3.1 table.
	for _, tc := range []struct {
		u                 int
		xTable, xIndex, m int
		perOverflowPage   int
	}{
		{4096, 4061, 1002, 489, 4092},
		{512, 477, 102, 39, 508},
		{65536, 65501, 16422, 8199, 65532},
	} {
		if got := MaxLocal(tc.u, true); got != tc.xTable {
			t.Errorf("MaxLocal(%d, table leaf) = %d, want %d", tc.u, got, tc.xTable)
		}
		if got := MaxLocal(tc.u, false); got != tc.xIndex {
			t.Errorf("MaxLocal(%d, index) = %d, want %d", tc.u, got, tc.xIndex)
		}
		if got := MinLocal(tc.u); got != tc.m {
			t.Errorf("MinLocal(%d) = %d, want %d", tc.u, got, tc.m)
		}
		if got := tc.u - OverflowPageHeaderSize; got != tc.perOverflowPage {
			t.Errorf("overflow bytes per page for U=%d = %d, want %d", tc.u, got, tc.perOverflowPage)
		}
	}
}

func TestLocalSizeVerified(t *testing.T) {
	// sqlite-format.md §3.1, parsed from sqlite3-written pages, U = 4096.
	for _, tc := range []struct {
		tree      string
		tableLeaf bool
		pl        int64
		l         int
		ovfl      int64
	}{
		{"table leaf", true, 4060, 4060, 0},
		{"table leaf", true, 5003, 911, 1},
		{"table leaf", true, 9004, 820, 2},
		{"table leaf", true, 20004, 3636, 4},
		{"index", false, 1001, 1001, 0},
		{"index", false, 1005, 489, 1},
		{"index", false, 5005, 913, 1},
		{"index interior", false, 9006, 822, 2},
	} {
		if got := LocalSize(tc.pl, 4096, tc.tableLeaf); got != tc.l {
			t.Errorf("%s: LocalSize(%d) = %d, want %d", tc.tree, tc.pl, got, tc.l)
		}
		if got := OverflowPages(tc.pl, 4096, tc.tableLeaf); got != tc.ovfl {
			t.Errorf("%s: OverflowPages(%d) = %d, want %d", tc.tree, tc.pl, got, tc.ovfl)
		}
	}
}

func TestLocalSizeBoundaries(t *testing.T) {
	// Hand-computed from the formulas for U = 4096 (X = 4061 / 1002,
	// M = 489, U-4 = 4092) and U = 512 (X = 477 / 102, M = 39, U-4 = 508).
	for _, tc := range []struct {
		u         int
		tableLeaf bool
		pl        int64
		l         int
		ovfl      int64
	}{
		{4096, true, 0, 0, 0},
		{4096, true, 4061, 4061, 0},              // X
		{4096, true, 4062, 489, 1},               // K = 489 + 3573 = 4062 > X => M
		{4096, true, 4092 + 489, 489, 1},         // K = M exactly, last page full
		{4096, true, 4092 + 489 + 3572, 4061, 1}, // K = X
		{4096, true, 4092 + 489 + 3573, 489, 2},  // K = X+1 => M
		{4096, false, 1002, 1002, 0},
		{4096, false, 1003, 489, 1}, // K = 1003 > 1002
		{4096, false, 489 + 4092 + 513, 1002, 1},
		{4096, false, 489 + 4092 + 514, 489, 2},
		{512, true, 477, 477, 0},
		{512, true, 478, 39, 1},             // K = 478 > 477
		{512, true, 39 + 508 + 438, 477, 1}, // K = X
		{512, true, 39 + 508 + 439, 39, 2},  // K = X+1
		{512, false, 102, 102, 0},
		{512, false, 103, 39, 1},
		{512, false, 39 + 508 + 63, 102, 1},
		{512, false, 1 << 20, 64, 2064}, // K = 39 + 1048537%508 = 39 + 25; 1048512 = 2064*508 overflow bytes
	} {
		if got := LocalSize(tc.pl, tc.u, tc.tableLeaf); got != tc.l {
			t.Errorf("U=%d tableLeaf=%v: LocalSize(%d) = %d, want %d", tc.u, tc.tableLeaf, tc.pl, got, tc.l)
		}
		if got := OverflowPages(tc.pl, tc.u, tc.tableLeaf); got != tc.ovfl {
			t.Errorf("U=%d tableLeaf=%v: OverflowPages(%d) = %d, want %d", tc.u, tc.tableLeaf, tc.pl, got, tc.ovfl)
		}
	}
}

// TestLocalSizeProperties checks, for every payload size up to 100000, the
// rules that define L without restating its formula: whole payloads up to
// X, at least M and at most X locally otherwise, and an overflow chain whose
// last page is full unless L fell back to M.
func TestLocalSizeProperties(t *testing.T) {
	for _, u := range []int{480, 512, 1024, 4096, 65536} {
		for _, tableLeaf := range []bool{true, false} {
			x, m, per := MaxLocal(u, tableLeaf), MinLocal(u), int64(u-4)
			for n := int64(0); n <= 100000; n++ {
				l := LocalSize(n, u, tableLeaf)
				ov := OverflowPages(n, u, tableLeaf)
				if n <= int64(x) {
					if l != int(n) || ov != 0 {
						t.Fatalf("U=%d leaf=%v n=%d: L=%d ovfl=%d, want all local", u, tableLeaf, n, l, ov)
					}
					continue
				}
				if l < m || l > x {
					t.Fatalf("U=%d leaf=%v n=%d: L=%d outside M..X = %d..%d", u, tableLeaf, n, l, m, x)
				}
				rest := n - int64(l)
				if ov < 1 || (ov-1)*per >= rest || ov*per < rest {
					t.Fatalf("U=%d leaf=%v n=%d: %d overflow pages for %d bytes", u, tableLeaf, n, ov, rest)
				}
				if l != m && rest%per != 0 {
					t.Fatalf("U=%d leaf=%v n=%d: L=%d != M but the last overflow page is not full", u, tableLeaf, n, l)
				}
				// Falling back to M (last page not full) is allowed only
				// when no local size in M..X would fill the last page.
				if l == m && rest%per != 0 {
					if k := int64(m) + (n-int64(m))%per; k <= int64(x) {
						t.Fatalf("U=%d leaf=%v n=%d: L=M although K=%d <= X", u, tableLeaf, n, k)
					}
				}
			}
		}
	}
}
