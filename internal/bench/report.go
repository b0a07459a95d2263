package bench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Print writes the report as a table: one row per (workload, peer), with
// ns/op (and, over several rounds, half the range as a percentage of it),
// ns/row for whole-table workloads, allocs/op, B/op, pagoda's speed-up over
// the peer (the peer's ns/op divided by pagoda's) and the size of the file
// the peer read; then the targets, met or missed.
func (r *Report) Print(w io.Writer) error {
	f := r.Fixture
	p := &printer{w: w}
	rounds := ""
	if r.Config.Count > 1 {
		rounds = fmt.Sprintf(", median of %d rounds", r.Config.Count)
	}
	p.printf("pagoda bench: %s rows of %d-byte values; lookups cycle through %s random rowids; benchtime %s%s\n",
		group(int64(f.Rows)), f.ValueSize, group(lookupKeys), r.Config.Benchtime, rounds)
	if f.Built {
		p.printf("fixture: %s (built in %s, SQLite file written by %s)\n", f.Dir, f.BuildTime.Round(time.Millisecond), f.Builder)
	} else {
		p.printf("fixture: %s (cached)\n", f.Dir)
	}
	p.printf("files: SQLite %s (read by pagoda, mattn, modernc), bbolt %s\n", mb(r.SQLiteSize), mb(r.BoltSize))
	settings := "SQLite defaults"
	if !r.Config.SQLiteDefaults && len(SQLitePragmas) > 0 {
		settings = strings.Join(SQLitePragmas, "; ")
	}
	p.printf("mattn, modernc: database/sql, prepared statements, one read transaction, WAL; %s\n", settings)
	if slices.Contains(r.Config.Peers, "mattn-autocommit") {
		p.printf("mattn-autocommit: database/sql, statements prepared on the *sql.DB, a transaction per query, WAL; SQLite defaults\n")
	}
	p.printf("\n")

	head := []string{"workload", "peer", "ns/op", "ns/row", "allocs/op", "B/op", "pagoda speed-up", "file"}
	spread := r.Config.Count > 1
	if spread {
		head = append(head[:3], append([]string{"spread"}, head[3:]...)...)
	}
	rows := [][]string{head}
	for _, res := range r.Results {
		ratio := "-"
		if base, ok := r.find(res.Workload, "pagoda"); ok && res.Peer != "pagoda" {
			ratio = fmt.Sprintf("%.1fx", res.NsPerOp/base.NsPerOp)
		}
		perRow := ""
		if res.NsPerRow > 0 {
			perRow = strconv.FormatFloat(res.NsPerRow, 'f', 1, 64)
		}
		row := []string{res.Workload, res.Peer, nsString(res.NsPerOp)}
		if spread {
			row = append(row, fmt.Sprintf("±%.0f%%", 50*(res.MaxNs-res.MinNs)/res.NsPerOp))
		}
		rows = append(rows, append(row, perRow, group(res.AllocsPerOp), group(res.BytesPerOp), ratio, mb(res.FileSize)))
	}
	p.table(rows, 2)

	if lines := r.targets(); len(lines) > 0 {
		p.printf("\ntargets:\n")
		for _, l := range lines {
			p.printf("  %s\n", l)
		}
	}
	p.printf("\ntotal %s\n", r.Elapsed.Round(100*time.Millisecond))
	return p.err
}

// Target checks the "done" criteria on this run: point lookups at
// least 10x faster than mattn, faster than bbolt, with 0 allocs/op; the full
// scan at least 1.8x faster than the fastest peer. Criteria whose peers were
// not measured are left out.
func (r *Report) targets() []string {
	var out []string
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	if pl, ok := r.find("lookup", "pagoda"); ok {
		if m, ok := r.find("lookup", "mattn"); ok {
			x := m.NsPerOp / pl.NsPerOp
			out = append(out, fmt.Sprintf("lookup vs mattn: %.1fx faster, want >= 10x: %s", x, verdict(x >= 10)))
		}
		if b, ok := r.find("lookup", "bbolt"); ok {
			x := b.NsPerOp / pl.NsPerOp
			out = append(out, fmt.Sprintf("lookup vs bbolt: %.2fx faster, want > 1x: %s", x, verdict(x > 1)))
		}
		out = append(out, fmt.Sprintf("lookup allocs/op: %d, want 0: %s", pl.AllocsPerOp, verdict(pl.AllocsPerOp == 0)))
	}
	if ps, ok := r.find("scan", "pagoda"); ok {
		var best *Result
		for i, res := range r.Results {
			if res.Workload == "scan" && res.Peer != "pagoda" && (best == nil || res.NsPerOp < best.NsPerOp) {
				best = &r.Results[i]
			}
		}
		if best != nil {
			x := best.NsPerOp / ps.NsPerOp
			out = append(out, fmt.Sprintf("scan vs fastest peer (%s): %.2fx faster, want >= 1.8x: %s", best.Peer, x, verdict(x >= 1.8)))
		}
	}
	return out
}

func (r *Report) find(workload, peer string) (Result, bool) {
	for _, res := range r.Results {
		if res.Workload == workload && res.Peer == peer {
			return res, true
		}
	}
	return Result{}, false
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// table prints rows in columns separated by two spaces, the first left
// columns left-aligned and the others right-aligned.
func (p *printer) table(rows [][]string, left int) {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	for _, row := range rows {
		var sb strings.Builder
		for i, c := range row {
			if i > 0 {
				sb.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(c))
			if i < left {
				sb.WriteString(c + pad)
			} else {
				sb.WriteString(pad + c)
			}
		}
		p.printf("%s\n", strings.TrimRight(sb.String(), " "))
	}
}

// nsString formats nanoseconds with digit grouping, one decimal below 100.
func nsString(ns float64) string {
	if ns < 100 {
		return strconv.FormatFloat(ns, 'f', 1, 64)
	}
	return group(int64(ns + 0.5))
}

// group formats n with commas between groups of three digits.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var sb strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			sb.WriteByte(',')
		}
		sb.WriteRune(c)
	}
	if neg {
		return "-" + sb.String()
	}
	return sb.String()
}

// mb formats a size in bytes as MB (10^6 bytes), or KB below a megabyte.
func mb(n int64) string {
	if n < 1_000_000 {
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
