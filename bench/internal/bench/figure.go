package bench

import (
	"fmt"
	"math"
	"strconv"
)

// How the report states a figure measured over rounds:
//
//  1. A figure is the median of the rounds' values (the lower middle one
//     for an even count), never the best round, and is printed with its
//     spread, the smallest and largest of the rounds: "2,469 [2,401-2,530]".
//  2. A ratio between two peers is computed round by round, each from the
//     two figures of one round (paired, in-run), and then the median of
//     those ratios is taken: not the ratio of two medians.
//  3. One round prints the figure alone.

// medianFloat is the median of xs (the lower middle one for an even
// count); 0 for none.
func medianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return medianOf(xs, identity)
}

// pairedRatios returns num[i]/den[i] for the rounds both have, in round
// order (rule 2).
func pairedRatios(num, den []float64) []float64 {
	return perRound(num, den, func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	})
}

// spanString is " [lo-hi]" of xs, each formatted by f; "" for fewer than
// two values, or when quiet is set and lo and hi read the same.
func spanString(xs []float64, f func(float64) string, quiet bool) string {
	if len(xs) < 2 {
		return ""
	}
	lo, hi := rangeOf(xs, identity)
	if quiet && f(lo) == f(hi) {
		return ""
	}
	return " [" + f(lo) + "-" + f(hi) + "]"
}

// figureString is the median of xs with its spread (rule 1), formatted by
// f.
func figureString(xs []float64, f func(float64) string) string {
	if len(xs) == 0 {
		return "-"
	}
	return f(medianFloat(xs)) + spanString(xs, f, false)
}

// ratioCell is pagoda's speed-up over a peer, paired round by round (rule
// 2): the median of peer[i]/pagoda[i] and its spread, with prec decimals.
func ratioCell(peer, pagoda []float64, prec int) string {
	xs := pairedRatios(peer, pagoda)
	if len(xs) == 0 {
		return "-"
	}
	f := func(x float64) string { return ratioNum(x, prec) }
	return f(medianFloat(xs)) + "x" + spanString(xs, f, false)
}

// ratioNum formats a ratio with prec decimals, or with two significant
// digits when that would show less (0.0037, not 0.00).
func ratioNum(x float64, prec int) string {
	if x != 0 && x < 10/math.Pow10(prec) {
		return strconv.FormatFloat(x, 'g', 2, 64)
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// pairedFigure returns the median of the paired ratios num[i]/den[i] and
// says it as ratioFigure does: "2.31x (median of 3 rounds, 2.10-2.52)".
func pairedFigure(num, den []float64) (float64, string) {
	return ratioFigure(pairedRatios(num, den))
}

// allocString is a count per operation over rounds: the median, and its
// spread when the rounds differ.
func allocString(xs []float64, prec int) string {
	f := func(x float64) string {
		if prec == 0 {
			return group(int64(x + 0.5))
		}
		return strconv.FormatFloat(x, 'f', prec, 64)
	}
	if len(xs) == 0 {
		return "-"
	}
	return f(medianFloat(xs)) + spanString(xs, f, true)
}

// nsSpan is the spread column of a table: "[lo-hi]" of ns/op over rounds,
// "" for one round.
func nsSpan(xs []float64) string {
	s := spanString(xs, nsString, false)
	if s == "" {
		return ""
	}
	return s[1:]
}

// roundsNote is the report's phrase for rounds figures: "; median of 3
// rounds [min-max]", or "" for one round.
func roundsNote(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf("; median of %d rounds [min-max], ratios paired round by round", n)
}

// orOne is xs, or the single figure x when there are no rounds (a result
// made by hand).
func orOne(xs []float64, x float64) []float64 {
	if len(xs) == 0 {
		return []float64{x}
	}
	return xs
}

// ns returns ns/op of each round (orOne).
func (r Result) ns() []float64      { return orOne(r.RoundNs, r.NsPerOp) }
func (r WriteResult) ns() []float64 { return orOne(r.RoundNs, r.NsPerOp) }
func (r FSResult) ns() []float64    { return orOne(r.RoundNs, r.NsPerOp) }

// allocs returns allocs/op of each round (orOne).
func (r Result) allocs() []float64      { return orOne(r.RoundAllocs, float64(r.AllocsPerOp)) }
func (r WriteResult) allocs() []float64 { return orOne(r.RoundAllocs, r.AllocsPerOp) }
func (r FSResult) allocs() []float64    { return orOne(r.RoundAllocs, float64(r.AllocsPerOp)) }
