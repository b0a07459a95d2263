package bench

import (
	"fmt"
	"slices"
)

// sharedTargets checks issue #28's speed targets for the shared mode (peer
// pagoda) on this run, each as the median of per-round ratios with their
// range:
//
//  1. lookup-tx: pagoda's time per lookup at most 1.2x pagoda-exclusive's,
//     the two interleaved (see interleavedViews; the table's figures, one
//     mode after the other, are shown beside);
//  2. commit: pagoda's one-row durable commits within 1.1x of
//     pagoda-exclusive's, the two interleaved commit by commit on fresh
//     stores (see interleavedCommits);
//  3. commit: pagoda's commits at most 1.3x a bare 4 KiB append and
//     fdatasync, interleaved commit by commit (see interleavedFloor);
//  4. commit-8: pagoda's commits per second from 8 goroutines (Batch) at
//     least 5x one goroutine's, both of the same round
//     (pagoda-exclusive's shown beside);
//  5. beside: a SQLite reader in another process reads no slower beside a
//     pagoda writer than beside a SQLite writer (mattn: WAL,
//     synchronous=FULL), the two of the same round.
//
// Criteria whose peers were not measured are left out.
func (r *Report) sharedTargets() []string {
	var out []string
	if s, ok := r.find("lookup-tx", "pagoda"); ok && !s.Skipped {
		if x, ok := r.find("lookup-tx", pagodaExclusive); ok && !x.Skipped {
			_, seq := ratioFigure(perRound(s.ns(), x.ns(), func(s, x float64) float64 { return s / x }))
			if len(r.LookupTxRatios) > 0 {
				m, fig := ratioFigure(r.LookupTxRatios)
				out = append(out, fmt.Sprintf("lookup-tx shared vs exclusive, interleaved %d lookups at a time: %s the exclusive mode's time per lookup, want <= 1.2x: %s",
					interleavedSlice, fig, verdict(m <= 1.2)))
				out = append(out, fmt.Sprintf("  (the table's, one mode after the other: %s, %s against %s ns)", seq, nsString(s.NsPerOp), nsString(x.NsPerOp)))
			} else {
				m, _ := ratioFigure(perRound(s.ns(), x.ns(), func(s, x float64) float64 { return s / x }))
				out = append(out, fmt.Sprintf("lookup-tx shared vs exclusive: %s the exclusive mode's time per lookup (%s against %s ns), want <= 1.2x: %s",
					seq, nsString(s.NsPerOp), nsString(x.NsPerOp), verdict(m <= 1.2)))
			}
		}
	}
	if x, ok := r.findWrite("commit", pagodaExclusive); ok && len(x.PagodaRatios) > 0 {
		// PagodaRatios are the exclusive mode's time over the shared one's.
		inv := make([]float64, len(x.PagodaRatios))
		for i, v := range x.PagodaRatios {
			inv[i] = 1 / v
		}
		m, fig := ratioFigure(inv)
		out = append(out, fmt.Sprintf("commit shared vs exclusive, interleaved commit by commit: %s the exclusive mode's time, want <= 1.1x: %s", fig, verdict(m <= 1.1)))
	}
	if s, ok := r.findWrite("commit", "pagoda"); ok && len(s.FloorRatios) > 0 {
		m, fig := ratioFigure(s.FloorRatios)
		out = append(out, fmt.Sprintf("commit (shared) vs a bare fdatasync of 4 KiB appended, interleaved: %s its time, want <= 1.3x: %s", fig, verdict(m <= 1.3)))
	}
	for _, peer := range []string{"pagoda", pagodaExclusive} {
		eight, ok8 := r.findWrite("commit-8", peer)
		one, ok1 := r.findWrite("commit", peer)
		if !ok8 || !ok1 {
			continue
		}
		m, fig := ratioFigure(perRound(one.ns(), eight.ns(), func(one, eight float64) float64 { return one / eight }))
		if peer == "pagoda" {
			out = append(out, fmt.Sprintf("commit-8 vs commit (pagoda, shared, Batch): %s the commits per second, want >= 5x: %s", fig, verdict(m >= 5)))
		} else {
			out = append(out, fmt.Sprintf("commit-8 vs commit (pagoda-exclusive, Batch): %s the commits per second (shown beside, no target)", fig))
		}
	}
	for _, res := range r.Beside {
		if len(res.Ratios) == 0 {
			continue
		}
		m, fig := ratioFigure(res.Ratios)
		out = append(out, fmt.Sprintf("beside: a SQLite reader's reads/s beside pagoda over beside %s: %s, want >= 1x: %s", res.Writer, fig, verdict(m >= 1)))
	}
	return out
}

// m2 formats a ratio with two decimals (ratioNum).
func m2(x float64) string { return ratioNum(x, 2) }

// perRound returns f of the rounds' figures a[i] and b[i], over the rounds
// both have.
func perRound(a, b []float64, f func(a, b float64) float64) []float64 {
	out := make([]float64, min(len(a), len(b)))
	for i := range out {
		out[i] = f(a[i], b[i])
	}
	return out
}

// ratioFigure returns the median of the ratios xs (the lower middle one
// for an even count) and says it: "1.05x (median of 3 rounds,
// 0.98-1.10)", or "1.05x (1 round)".
func ratioFigure(xs []float64) (float64, string) {
	if len(xs) == 0 {
		return 0, "no rounds"
	}
	m := medianOf(xs, identity)
	if len(xs) == 1 {
		return m, fmt.Sprintf("%sx (1 round)", ratioNum(m, 2))
	}
	return m, fmt.Sprintf("%sx (median of %d rounds, %s-%s)", m2(m), len(xs), m2(slices.Min(xs)), m2(slices.Max(xs)))
}
