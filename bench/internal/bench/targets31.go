package bench

import (
	"fmt"
	"slices"
)

// issue31Targets checks issue #31's targets on this run, each an in-run
// ratio: the median of the rounds' ratios, with their range.
//
//  1. lookup-tx (a View per lookup): pagoda at least 2x bbolt, with 0
//     allocs/op.
//  2. lookup (one read transaction): pagoda at least 5x bbolt, 3x at
//     10,000,000 rows or more.
//  3. The bucket API within 1.2x of the table API: pagoda's
//     lookup-bucket over its lookup, lookup-tx-bucket over lookup-tx.
//  4. Full scans, table and bucket, cursor and iterator (scan,
//     scan-cursor, scan-bucket, scan-cursor-bucket): at least 1.5x bbolt.
//  5. Random inserts and deletes in transactions of 1,000 (insert,
//     delete, insert-bucket, delete-bucket): at most 1.5x pagoda's disk
//     floor, and at least 4x mattn and 3x bbolt.
//
// Criteria whose peers were not measured are left out.
func (r *Report) issue31Targets() []string {
	var out []string
	const is = "issue #31: "
	if p, ok := r.find("lookup-tx", "pagoda"); ok && !p.Skipped {
		if b, ok := r.find("lookup-tx", "bbolt"); ok && !b.Skipped {
			x, fig := pairedFigure(b.ns(), p.ns())
			out = append(out, fmt.Sprintf(is+"lookup-tx vs bbolt: %s faster, want >= 2x: %s", fig, verdict(x >= 2)))
		}
		out = append(out, fmt.Sprintf(is+"lookup-tx allocs/op: %s, want 0: %s", allocString(p.allocs(), 0), verdict(p.AllocsPerOp == 0)))
	}
	if p, ok := r.find("lookup", "pagoda"); ok && !p.Skipped && r.Fixture != nil {
		if b, ok := r.find("lookup", "bbolt"); ok && !b.Skipped {
			want := 5.0
			if r.Fixture.Rows >= 10_000_000 {
				want = 3
			}
			x, fig := pairedFigure(b.ns(), p.ns())
			out = append(out, fmt.Sprintf(is+"lookup vs bbolt at %s rows: %s faster, want >= %gx: %s", group(int64(r.Fixture.Rows)), fig, want, verdict(x >= want)))
		}
	}
	for _, w := range [][2]string{{"lookup-bucket", "lookup"}, {"lookup-tx-bucket", "lookup-tx"}} {
		b, ok1 := r.find(w[0], "pagoda")
		t, ok2 := r.find(w[1], "pagoda")
		if ok1 && ok2 && !b.Skipped && !t.Skipped {
			x, fig := pairedFigure(b.ns(), t.ns())
			out = append(out, fmt.Sprintf(is+"%s vs %s (pagoda's bucket API vs its table API): %s the table's time, want <= 1.2x: %s", w[0], w[1], fig, verdict(x <= 1.2)))
		}
	}
	for _, w := range []string{"scan", "scan-cursor", "scan-bucket", "scan-cursor-bucket"} {
		p, ok1 := r.find(w, "pagoda")
		b, ok2 := r.find(w, "bbolt")
		if ok1 && ok2 && !p.Skipped && !b.Skipped {
			x, fig := pairedFigure(b.ns(), p.ns())
			out = append(out, fmt.Sprintf(is+"%s vs bbolt: %s faster, want >= 1.5x: %s", w, fig, verdict(x >= 1.5)))
		}
	}
	for _, w := range []string{"insert", "delete", "insert-bucket", "delete-bucket"} {
		p, ok := r.findWrite(w, "pagoda")
		if !ok {
			continue
		}
		if p.FloorNs > 0 {
			x, fig := pairedFigure(p.ns(), orOne(p.RoundFloorNs, p.FloorNs))
			out = append(out, fmt.Sprintf(is+"%s: pagoda %s its disk floor's time, want <= 1.5x: %s", w, fig, verdict(x <= 1.5)))
		}
		for _, peer := range []string{"mattn", "bbolt"} {
			want := 4.0
			if peer == "bbolt" {
				want = 3
			}
			if res, ok := r.findWrite(w, peer); ok {
				out = append(out, is+writeTarget(w, p, res, peer, want))
			}
		}
	}
	return slices.Clip(out)
}
