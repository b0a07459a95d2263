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
	where := "in another process"
	if r.Config.ChildCommand == nil {
		where = "in this process (no child command)"
	}
	pace := "as fast as it can"
	if o.Interval > 0 {
		pace = fmt.Sprintf("one every %s (commit i at i*%s)", o.Interval, o.Interval)
	}
	p.printf("beside: a SQLite reader (%s, SQLite's C code with its defaults) %s reads random rows of copies of a\n", besideReader(), where)
	p.printf("  %s-row WAL-mode file that SQLite wrote, one query per read, each its own read transaction, %s on each copy in\n", group(int64(o.Rows)), o.Slice)
	p.printf("  turn for %s, while this process commits durable one-row transactions into the copies, each writer into its own,\n", o.Time)
	p.printf("  all at once, %s: %s\n", pace, strings.Join(writers, "; "))
	p.printf("the reader checks every value; each writer's rows are checked after, and its copy (DB.Check, integrity_check)%s\n", besideRounds(r.besideCount(), rounds))
	p.printf("\n")
	head := []string{"writer", "mode", "reads/s", "min-max", "commits/s", "min-max", "reads beside pagoda / beside writer"}
	rows := [][]string{head}
	for _, res := range r.Beside {
		span := func(lo, hi float64, prec int) string {
			if res.Rounds <= 1 {
				return ""
			}
			return rangeString(lo, hi, prec)
		}
		commits, cspan := "-", ""
		if res.Writer != besideNone {
			commits, cspan = group(int64(res.CommitsPerSec+0.5)), span(res.MinCommits, res.MaxCommits, 0)
		}
		ratio := "-"
		if res.Ratio > 0 {
			ratio = fmt.Sprintf("%.2fx", res.Ratio)
			if res.Rounds > 1 {
				ratio += " (" + span(res.MinRatio, res.MaxRatio, 2) + ")"
			}
		}
		mode := res.Mode
		if mode == "" {
			mode = "-"
		}
		rows = append(rows, []string{res.Writer, mode, group(int64(res.ReadsPerSec + 0.5)), span(res.MinReads, res.MaxReads, 0), commits, cspan, ratio})
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
