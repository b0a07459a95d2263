package bench

import (
	"fmt"
	"strings"
)

// printBeside prints the beside workload: the reader's reads per second
// beside each writer, the writer's commits per second, and the reads
// beside pagoda over the reads beside each other writer.
func (r *Report) printBeside(p *printer, rounds string) {
	o := r.Config.Beside.withDefaults()
	var writers []string
	for _, res := range r.Beside {
		writers = append(writers, besideWriterDoc(res.Writer))
	}
	p.printf("beside: a SQLite reader (%s, SQLite's C code with its defaults) in another process reads random rows of a\n", besideReader())
	p.printf("  %s-row WAL-mode file that SQLite wrote, one query per read, each its own read transaction, for %s, while\n", group(int64(o.Rows)), o.Time)
	p.printf("  this process commits durable one-row transactions into the file: %s;\n", strings.Join(writers, "; "))
	p.printf("  a fresh copy of the file for each writer; the reader checks every value, each writer's rows are checked after%s\n", besideRounds(r.besideCount(), rounds))
	if r.Config.ChildCommand == nil {
		p.printf("  (the reader ran in this process, not a child: a test run)\n")
	}
	p.printf("\n")
	head := []string{"writer", "mode", "reads/s", "spread", "commits/s", "spread", "reads beside pagoda / beside writer"}
	rows := [][]string{head}
	for _, res := range r.Beside {
		commits, cspread := "-", ""
		if res.Writer != besideNone {
			commits, cspread = group(int64(res.CommitsPerSec+0.5)), rangeString(res.MinCommits, res.MaxCommits, 0)
		}
		ratio := "-"
		if res.Ratio > 0 {
			ratio = fmt.Sprintf("%.2fx (%s)", res.Ratio, rangeString(res.MinRatio, res.MaxRatio, 2))
		}
		mode := res.Mode
		if mode == "" {
			mode = "-"
		}
		rows = append(rows, []string{res.Writer, mode, group(int64(res.ReadsPerSec + 0.5)), rangeString(res.MinReads, res.MaxReads, 0), commits, cspread, ratio})
	}
	p.table(rows, 2)
}

// besideCount is the number of rounds of the beside workload.
func (r *Report) besideCount() int {
	if len(r.Beside) == 0 {
		return 0
	}
	return r.Beside[0].Rounds
}

// besideRounds says how many rounds the beside figures are the median of.
func besideRounds(n int, rounds string) string {
	if n > 1 {
		return fmt.Sprintf("; median of %d rounds, spread min-max", n)
	}
	return rounds
}

// rangeString formats the range lo-hi with prec decimals (digit groups
// when prec is 0).
func rangeString(lo, hi float64, prec int) string {
	if prec == 0 {
		return group(int64(lo+0.5)) + "-" + group(int64(hi+0.5))
	}
	return fmt.Sprintf("%.*f-%.*f", prec, lo, prec, hi)
}

// besideTargets checks issue #28's target for the beside workload: a
// SQLite reader no slower beside a pagoda writer than beside a SQLite
// writer, both in the same run.
func (r *Report) besideTargets() []string {
	var out []string
	for _, res := range r.Beside {
		if res.Ratio <= 0 {
			continue
		}
		out = append(out, fmt.Sprintf("beside: a SQLite reader's reads/s beside pagoda over beside %s: %.2fx (%s), want >= 1x: %s",
			res.Writer, res.Ratio, spreadOf(res.Rounds, res.MinRatio, res.MaxRatio), verdict(res.Ratio >= 1)))
	}
	return out
}

// spreadOf says what a ratio is the median of: n rounds, ranging lo-hi.
func spreadOf(n int, lo, hi float64) string {
	if n <= 1 {
		return "1 round"
	}
	return fmt.Sprintf("median of %d rounds, %.2f-%.2f", n, lo, hi)
}
