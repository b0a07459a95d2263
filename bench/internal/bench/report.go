package bench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Print writes the report: for the read workloads, a table with one row
// per (workload, peer): ns/op (and, over several rounds, half the range as
// a percentage of it), ns/row for whole-table workloads, allocs/op, B/op,
// pagoda's speed-up over the peer (the peer's ns/op divided by pagoda's)
// and the size of the file the peer read; for the write workloads, the
// same per row or commit, with the total time and the size of the files
// written; for the cache workload, ns/op of each phase, the files and the
// peak memory, per size and peer; for the fs workloads, the trees and a
// table like the reads'; then the issue's targets, met or not.
func (r *Report) Print(w io.Writer) error {
	p := &printer{w: w}
	rounds := roundsNote(r.Config.Count)
	printed := false
	section := func(ok bool, print func()) {
		if !ok {
			return
		}
		if printed {
			p.printf("\n")
		}
		print()
		printed = true
	}
	section(r.Fixture != nil, func() { r.printReads(p, rounds) })
	section(len(r.FS) > 0, func() { r.printFS(p, rounds) })
	section(len(r.Writes) > 0, func() { r.printWrites(p, rounds) })
	section(len(r.Beside) > 0, func() { r.printBeside(p, rounds) })
	section(len(r.Cache) > 0, func() { r.printCache(p, rounds) })
	section(len(r.Memory) > 0, func() { r.printMemory(p) })
	section(len(r.MemoryRand) > 0, func() { r.printMemoryRand(p) })
	section(len(r.Raft) > 0, func() { r.printRaft(p, rounds) })
	lines := append(append(append(append(append(r.targets(), r.issue31Targets()...), r.memoryRandTargets()...), r.sharedTargets()...), r.fsTargets()...), r.raftTargets()...)
	if len(lines) > 0 {
		p.printf("\ntargets:\n")
		for _, l := range lines {
			p.printf("  %s\n", l)
		}
	}
	var phases []string
	for _, ph := range []struct {
		i    int
		name string
	}{{0, "reads"}, {4, "fs"}, {1, "writes"}, {5, "beside"}, {2, "cache"}, {3, "memory"}, {7, "memory-rand"}, {6, "raft"}} {
		if d := r.Phases[ph.i]; d > 0 {
			phases = append(phases, ph.name+" "+d.Round(100*time.Millisecond).String())
		}
	}
	p.printf("\ntotal %s", r.Elapsed.Round(100*time.Millisecond))
	if len(phases) > 1 {
		p.printf(" (%s)", strings.Join(phases, ", "))
	}
	p.printf("\n")
	return p.err
}

// skippedRow is a table row for a (workload, peer) pair that was skipped.
func skippedRow(head []string, first ...string) []string {
	row := append(first, "skipped")
	for len(row) < len(head) {
		row = append(row, "")
	}
	return row
}

func (r *Report) printReads(p *printer, rounds string) {
	f := r.Fixture
	p.printf("pagoda bench: %s rows of %d-byte values; lookups cycle through %s random rowids; benchtime %s%s\n",
		group(int64(f.Rows)), f.ValueSize, group(lookupKeys), r.Config.Benchtime, rounds)
	if f.Built {
		p.printf("fixture: %s (built in %s, SQLite file written by %s)\n", f.Dir, f.BuildTime.Round(time.Millisecond), f.Builder)
	} else {
		p.printf("fixture: %s (cached)\n", f.Dir)
	}
	p.printf("files: SQLite %s (read by pagoda and the SQLite peers), bucket %s (the same rows in a pagoda bucket, written by SQLite:\n", mb(r.SQLiteSize), mb(r.BucketSize))
	p.printf("  %s, keys the rowids as 8 big-endian bytes; read by the -bucket workloads),\n", bucketSQL)
	p.printf("  bbolt %s (the same keys; written with bbolt's default fill percent, 0.5)\n", mb(r.BoltSize))
	var modes [][2]string
	for _, res := range r.Results {
		modes = append(modes, [2]string{res.Peer, res.Mode})
	}
	if m := modesLine(modes); m != "" {
		p.printf("pagoda opens the WAL-mode fixture writable: %s\n", m)
	}
	p.printf("mattn, modernc: database/sql, prepared statements, one read transaction, WAL; %s\n", r.sqliteSettings())
	p.printf("ncruces (go-sqlite3, SQLite in Wasm translated to Go), zombiezen (modernc's SQLite): their own Conn and Stmt\n")
	p.printf("  (no database/sql), the same statements, pragmas and transactions; zombiezen copies each value out\n")
	if slices.ContainsFunc(r.Results, func(res Result) bool { return res.Workload == "lookup-tx" }) {
		p.printf("lookup-tx: each lookup a read transaction of its own, the value copied out of it: pagoda View (Table, Get, Column),\n")
		p.printf("  bbolt View (Bucket, Get), mattn and modernc one query outside BEGIN, SQLite's implicit read transaction (BEGIN\n")
		p.printf("  is deferred: BEGIN, SELECT, COMMIT would be the same read transaction and two more statements)\n")
		p.printf("%s", r.targetRoundsNote("lookup-tx"))
	}
	if slices.Contains(r.Config.Peers, "mattn-autocommit") {
		p.printf("mattn-autocommit: database/sql, statements prepared on the *sql.DB, a transaction per query, WAL; SQLite defaults\n")
	}
	if slices.ContainsFunc(r.Results, func(res Result) bool { return res.Skipped }) {
		p.printf("skipped: peers that only write (pebble)\n")
	}
	p.printf("\n")

	head := []string{"workload", "peer", "ns/op", "ns/row", "allocs/op", "B/op", "pagoda speed-up", "file"}
	spread := slices.ContainsFunc(r.Results, func(res Result) bool { return len(res.ns()) > 1 })
	if spread {
		head = slices.Insert(head, 3, "min-max")
	}
	rows := [][]string{head}
	for _, res := range r.Results {
		if res.Skipped {
			rows = append(rows, skippedRow(head, res.Workload, res.Peer))
			continue
		}
		ratio := "-"
		if base, ok := r.find(res.Workload, "pagoda"); ok && res.Peer != "pagoda" && !base.Skipped {
			ratio = ratioCell(res.ns(), base.ns(), 1)
		}
		perRow := ""
		if res.NsPerRow > 0 {
			perRow = strconv.FormatFloat(res.NsPerRow, 'f', 1, 64)
		}
		row := []string{res.Workload, res.Peer, nsString(res.NsPerOp)}
		if spread {
			row = append(row, nsSpan(res.ns()))
		}
		rows = append(rows, append(row, perRow, allocString(res.allocs(), 0), allocString(res.RoundBytes, 0), ratio, mb(res.FileSize)))
	}
	p.table(rows, 2)
	if r.LookupFloorNs > 0 {
		p.printf("\nmemory floor: the SQLite file read from memory with no engine (mapped, as pagoda reads it)\n")
		p.printf("  lookup   one random page after another, four lines of each at once (a leaf's header and guessed cell): %s ns\n", nsString(r.LookupFloorNs))
		p.printf("  scan     every line of the file once, in order: %.1f ns/row\n", r.ScanFloorNs)
	}
}

// modesLine says which mode each pagoda peer of the (peer, mode) pairs ran
// in, as found at Open (see pagodaMode); "" when no pair has a mode.
func modesLine(pairs [][2]string) string {
	var peers []string
	found := map[string][]string{}
	for _, pm := range pairs {
		peer, mode := pm[0], pm[1]
		if mode == "" || slices.Contains(found[peer], mode) {
			continue
		}
		if found[peer] == nil {
			peers = append(peers, peer)
		}
		found[peer] = append(found[peer], mode)
	}
	var parts []string
	for _, peer := range peers {
		var ms []string
		for _, m := range found[peer] {
			switch m {
			case modeShared:
				ms = append(ms, "shared (a second connection opened the file beside it)")
			case modeExclusive:
				ms = append(ms, "exclusive (the file held EXCLUSIVE: a second connection could not open it)")
			default:
				ms = append(ms, m)
			}
		}
		parts = append(parts, peer+" "+strings.Join(ms, " and "))
	}
	return strings.Join(parts, "; ")
}

// sqliteSettings describes the pragmas of the SQLite peers.
func (r *Report) sqliteSettings() string {
	if r.Config.SQLiteDefaults || len(SQLitePragmas) == 0 {
		return "SQLite defaults"
	}
	return strings.Join(SQLitePragmas, "; ")
}

func (r *Report) printWrites(p *printer, rounds string) {
	o := r.Config.Writes
	vs := r.Config.Fixture.withDefaults().ValueSize
	p.printf("writes: fresh stores of %d-byte values under keys 1..N: the rowids of %s\n", vs, storeTableSQL)
	p.printf("  (pagoda and the SQLite peers) or 8 big-endian bytes (bbolt bucket, pebble); each store is checked after each workload:\n")
	p.printf("  reopened, every row scanned, some looked up%s\n", rounds)
	p.printf("every commit durable: pagoda SyncFull; bbolt defaults; pebble defaults, Sync; mattn, modernc: database/sql,\n")
	p.printf("  prepared statements, BEGIN/COMMIT, %s; %s;\n", strings.Join(storePragmas, "; "), r.sqliteSettings())
	p.printf("  ncruces, zombiezen: the same through their own Conn and Stmt\n")
	var modes [][2]string
	for _, res := range r.Writes {
		modes = append(modes, [2]string{res.Peer, res.Mode})
	}
	if m := modesLine(modes); m != "" {
		p.printf("pagoda creates its stores in WAL mode: %s\n", m)
		p.printf("%s", r.targetRoundsNote("commit and commit-8"))
	}
	if names := r.writeNames(); names["load-seq"] {
		p.printf("bbolt sets FillPercent 1.0 for load-seq, as its documentation advises for append-only writes\n")
	}
	names := r.writeNames()
	var docs [][]string
	for _, wl := range WriteWorkloads {
		if !names[wl.Name] {
			continue
		}
		doc := wl.Doc
		switch wl.Name {
		case "load-seq":
			doc = fmt.Sprintf(doc, group(int64(o.LoadRows)))
		case "load-rand":
			if o.Limit > 0 {
				doc += fmt.Sprintf("; a load still running after %s is stopped (>=: a lower bound)", o.Limit)
			}
		case "insert":
			doc = fmt.Sprintf(doc, group(int64(o.InsertRows)), group(int64(o.TxRows)))
		case "delete":
			doc = fmt.Sprintf(doc, group(int64(o.deleteRows())), group(int64(o.TxRows)))
		case "commit":
			doc = fmt.Sprintf(doc, group(int64(o.Commits)))
		case "commit-8":
			doc = fmt.Sprintf("%s one-row transactions from %d goroutines at once, each durable: pagoda and bbolt with Batch, pebble Set with Sync,\n    SQLite on its one connection (it writes one transaction at a time)", group(int64(o.Commits)), commitGoroutines)
		}
		docs = append(docs, []string{"  " + wl.Name, doc})
	}
	p.table(docs, 2)
	p.printf("ns/op is per row (per commit for commit); allocs/op and B/op count the Go heap only (not C or manually\n")
	p.printf("managed memory); file: the store's files after Close\n\n")

	head := []string{"workload", "peer", "ops", "ns/op", "total", "allocs/op", "B/op", "pagoda speed-up", "file"}
	spread := slices.ContainsFunc(r.Writes, func(res WriteResult) bool { return len(res.ns()) > 1 })
	if spread {
		head = slices.Insert(head, 4, "min-max")
	}
	rows := [][]string{head}
	for _, res := range r.Writes {
		if res.Skipped {
			rows = append(rows, skippedRow(head, res.Workload, res.Peer))
			continue
		}
		ratio := "-"
		if base, ok := r.findWrite(res.Workload, "pagoda"); ok && res.Peer != "pagoda" {
			ratio = ratioString(res, base, 1)
		}
		ns, file := nsString(res.NsPerOp), mb(res.FileSize)
		if res.Stopped {
			ns, file = ">="+ns, "stopped"
		}
		row := []string{res.Workload, res.Peer, group(int64(res.Ops)), ns}
		if spread {
			row = append(row, nsSpan(res.ns()))
		}
		rows = append(rows, append(row, durString(res.Total), allocString(res.allocs(), 1),
			allocString(res.RoundBytes, 0), ratio, file))
	}
	p.table(rows, 2)
	first, width := true, 8
	for _, res := range r.Writes {
		if res.Peer == "pagoda" && res.FloorNs > 0 {
			width = max(width, len(res.Workload))
		}
	}
	for _, res := range r.Writes {
		if res.Peer != "pagoda" || res.FloorNs <= 0 {
			continue
		}
		if first {
			p.printf("\ndisk floor: pagoda's WAL bytes of the timed part written alone into a plain file, in as many\n")
			p.printf("  writes as it made commits, each followed by one fdatasync: what any engine writing those pages pays\n")
			first = false
		}
		if res.FloorRatio > 0 {
			p.printf("  %-*s a 4 KiB append and fdatasync per commit: floor %s ns/commit; pagoda's commits, interleaved with\n", width, res.Workload, nsString(res.FloorNs))
			_, fig := ratioFigure(res.FloorRatios)
			p.printf("  %*s the floor's appends in one loop on a second store, take %s the floor's time\n", width, "", fig)
			continue
		}
		_, fig := pairedFigure(res.ns(), res.RoundFloorNs)
		p.printf("  %-*s %s frames in %s commits: floor %s ns/%s, pagoda %s ns/%s (%s the floor)\n", width, res.Workload,
			group(int64(res.WALFrames)), group(int64(res.Commits)), nsString(res.FloorNs), res.Unit,
			nsString(res.NsPerOp), res.Unit, fig)
	}
}

// writeNames returns the set of write workloads in the report.
func (r *Report) writeNames() map[string]bool {
	names := map[string]bool{}
	for _, res := range r.Writes {
		names[res.Workload] = true
	}
	return names
}

func (r *Report) printMemory(p *printer) {
	rows := r.Config.Writes.MemoryRows
	p.printf("memory: a fresh store loads %s rows, keys in order, in one transaction; pagoda with CacheSize %s and the\n", group(int64(rows)), mb(MemoryCache))
	p.printf("  SQLite peers with a page cache of the same size; bbolt and pebble as they come%s\n", roundsNote(r.Config.Count))
	if r.Config.ChildCommand != nil {
		p.printf("each peer in a child process of its own: peak anon is its peak anonymous resident memory (heaps, Go's and\n")
		p.printf("  C's, and anonymous mappings: what it keeps, not the file pages it maps), max RSS its peak resident memory\n\n")
	} else {
		p.printf("peers ran in this process: no memory figures\n\n")
	}
	head := []string{"rows", "peer", "ns/row", "peak anon", "max RSS", "file"}
	out := [][]string{head}
	for _, res := range r.Memory {
		n := group(int64(res.Rows))
		if res.Skipped {
			out = append(out, skippedRow(head, n, res.Peer))
			continue
		}
		rounds := res.Rounds
		if len(rounds) == 0 {
			rounds = []MemoryResult{res}
		}
		var ns, anons, rsss []float64
		for _, x := range rounds {
			ns, anons, rsss = append(ns, x.NsPerRow), append(anons, float64(x.PeakAnon)), append(rsss, float64(x.MaxRSS))
		}
		mbf := func(x float64) string { return mb(int64(x)) }
		anon, rss := "-", "-"
		if res.PeakAnon > 0 {
			anon = figureString(anons, mbf)
		}
		if res.MaxRSS > 0 {
			rss = figureString(rsss, mbf)
		}
		out = append(out, []string{n, res.Peer, figureString(ns, nsString), anon, rss, mb(res.FileSize)})
	}
	p.table(out, 2)
}

func (r *Report) printCache(p *printer, rounds string) {
	o := r.Config.Writes
	p.printf("cache: at each size a fresh store gets the keys inserted (random order, %s per transaction), each read once\n", group(int64(o.TxRows)))
	p.printf("  (random order, one read transaction), then all deleted (random order, %s per transaction)%s\n", group(int64(o.TxRows)), rounds)
	if r.Config.ChildCommand != nil {
		p.printf("each peer and size runs in a child process of its own; max RSS is its peak resident memory\n")
	} else {
		p.printf("peers and sizes ran in this process: no memory figures\n")
	}
	p.printf("file: the store's files after the inserts, store open (database, WAL and SQLite's -shm; pebble's directory)\n\n")
	head := []string{"keys", "peer", "insert ns/op", "read ns/op", "delete ns/op", "pagoda speed-up (i/r/d)", "file", "max RSS"}
	rows := [][]string{head}
	for _, res := range r.Cache {
		keys := group(int64(res.Keys))
		if res.Skipped {
			rows = append(rows, skippedRow(head, keys, res.Peer))
			continue
		}
		ratio := "-"
		if base, ok := r.findCache(res.Keys, "pagoda"); ok && res.Peer != "pagoda" {
			var parts []string
			for _, f := range []func(CacheResult) float64{cacheInsert, cacheRead, cacheDelete} {
				parts = append(parts, ratioCell(res.rounds(f), base.rounds(f), 1))
			}
			ratio = strings.Join(parts, " / ")
		}
		rss := "-"
		if res.MaxRSS > 0 {
			rss = mb(res.MaxRSS)
		}
		rows = append(rows, []string{keys, res.Peer, figureString(res.rounds(cacheInsert), nsString), figureString(res.rounds(cacheRead), nsString),
			figureString(res.rounds(cacheDelete), nsString), ratio, mb(res.FileSize), rss})
	}
	p.table(rows, 2)
	if len(r.CacheBaseline) > 0 {
		var parts []string
		for _, keys := range o.CacheKeys {
			if b, ok := r.CacheBaseline[keys]; ok && b > 0 {
				parts = append(parts, fmt.Sprintf("%s keys %s", group(int64(keys)), mb(b)))
			}
		}
		if len(parts) > 0 {
			p.printf("baseline max RSS of a child that only generates the keys and values: %s\n", strings.Join(parts, ", "))
		}
	}
}

// The cache workload's measures, for CacheResult.rounds.
func cacheInsert(r CacheResult) float64 { return r.InsertNs }
func cacheRead(r CacheResult) float64   { return r.ReadNs }
func cacheDelete(r CacheResult) float64 { return r.DeleteNs }

// rounds returns f of each round of r, in round order (r alone when it
// has no rounds).
func (r CacheResult) rounds(f func(CacheResult) float64) []float64 {
	if len(r.Rounds) == 0 {
		return []float64{f(r)}
	}
	out := make([]float64, len(r.Rounds))
	for i, x := range r.Rounds {
		out[i] = f(x)
	}
	return out
}

// targetRoundsNote says, when TargetCount makes more rounds than Count,
// that pagoda's rows of workloads (some of ModePeerWorkloads) have more:
// "" otherwise.
func (r *Report) targetRoundsNote(workloads string) string {
	if r.Config.TargetCount <= r.Config.Count {
		return ""
	}
	return fmt.Sprintf("pagoda and pagoda-exclusive in %s: median of %d rounds, for the targets (the other rows: %d)\n",
		workloads, r.Config.TargetCount, r.Config.Count)
}

// ratioString is pagoda's speed-up over res (res's ns/op over base's,
// paired round by round: the median and its spread) with prec decimals,
// marked as a bound when a load was stopped: ">=" when only the peer's
// was, "<=" when only pagoda's was, "?" when both were.
func ratioString(res, base WriteResult, prec int) string {
	x := ratioCell(res.ns(), base.ns(), prec)
	switch {
	case res.Stopped && base.Stopped:
		return "?"
	case res.Stopped:
		return ">=" + x
	case base.Stopped:
		return "<=" + x
	}
	return x
}

// sqlitePeers are the peers that are SQLite, in report order.
var sqlitePeers = []string{"mattn", "modernc", ncruces, zombiezen}

// Target checks the issue's "done" criteria on this run. Reads: point
// lookups at least 10x faster than mattn, faster than bbolt, with 0
// allocs/op; the full scan at least 1.8x faster than the fastest peer.
// Writes: the bulk load in key order at least 3x faster than the fastest
// SQLite driver and than bbolt, and faster than pebble, into a file no
// larger than SQLite's; random inserts and deletes at least 5x faster than
// each SQLite driver and bbolt (pebble shown beside); a durable one-row
// commit at least as fast as mattn's. Criteria whose peers were not
// measured are left out.
func (r *Report) targets() []string {
	var out []string
	if pl, ok := r.find("lookup", "pagoda"); ok && !pl.Skipped {
		if m, ok := r.find("lookup", "mattn"); ok && !m.Skipped {
			x, fig := pairedFigure(m.ns(), pl.ns())
			t := fmt.Sprintf("lookup vs mattn: %s faster, want >= 10x: %s", fig, verdict(x >= 10))
			if r.LookupFloorNs > 0 && x < 10 {
				t += fmt.Sprintf(" (10x needs %s ns; the memory floor is %s)", nsString(m.NsPerOp/10), nsString(r.LookupFloorNs))
			}
			out = append(out, t)
		}
		if b, ok := r.find("lookup", "bbolt"); ok && !b.Skipped {
			x, fig := pairedFigure(b.ns(), pl.ns())
			out = append(out, fmt.Sprintf("lookup vs bbolt: %s faster, want > 1x: %s", fig, verdict(x > 1)))
		}
		out = append(out, fmt.Sprintf("lookup allocs/op: %s, want 0: %s", allocString(pl.allocs(), 0), verdict(pl.AllocsPerOp == 0)))
	}
	if ps, ok := r.find("scan", "pagoda"); ok && !ps.Skipped {
		var best *Result
		for i, res := range r.Results {
			if res.Workload == "scan" && res.Peer != "pagoda" && !res.Skipped && (best == nil || res.NsPerOp < best.NsPerOp) {
				best = &r.Results[i]
			}
		}
		if best != nil {
			x, fig := pairedFigure(best.ns(), ps.ns())
			t := fmt.Sprintf("scan vs fastest peer (%s): %s faster, want >= 1.8x: %s", best.Peer, fig, verdict(x >= 1.8))
			if r.ScanFloorNs > 0 {
				t += fmt.Sprintf(" (the memory floor allows %.1fx)", best.NsPerOp/float64(r.Fixture.Rows)/r.ScanFloorNs)
			}
			out = append(out, t)
		}
	}
	if base, ok := r.findWrite("load-seq", "pagoda"); ok {
		if sq, ok := r.fastestWrite("load-seq", sqlitePeers...); ok {
			out = append(out, writeTarget("load-seq", base, sq, "fastest SQLite driver ("+sq.Peer+")", 3))
		}
		if b, ok := r.findWrite("load-seq", "bbolt"); ok {
			out = append(out, writeTarget("load-seq", base, b, "bbolt", 3))
		}
		if pb, ok := r.findWrite("load-seq", "pebble"); ok {
			out = append(out, writeTarget("load-seq", base, pb, "pebble", 0))
		}
	}
	for _, wl := range []string{"insert", "delete"} {
		base, ok := r.findWrite(wl, "pagoda")
		if !ok {
			continue
		}
		for _, peer := range append(slices.Clone(sqlitePeers), "bbolt") {
			if res, ok := r.findWrite(wl, peer); ok {
				t := writeTarget(wl, base, res, peer, 5)
				if need := res.NsPerOp / 5; base.FloorNs > 0 && medianFloat(pairedRatios(res.ns(), base.ns())) < 5 {
					t += fmt.Sprintf(" (5x needs %s ns/row; the disk floor is %s)", nsString(need), nsString(base.FloorNs))
				}
				out = append(out, t)
			}
		}
		if pb, ok := r.findWrite(wl, "pebble"); ok {
			out = append(out, fmt.Sprintf("%s vs pebble: %s faster (shown beside, no target)", wl, ratioString(pb, base, 2)))
		}
	}
	if base, ok := r.findWrite("load-seq", "pagoda"); ok && !base.Stopped {
		var smallest *WriteResult
		for i, res := range r.Writes {
			if res.Workload == "load-seq" && slices.Contains(sqlitePeers, res.Peer) && !res.Skipped && !res.Stopped &&
				(smallest == nil || res.FileSize < smallest.FileSize) {
				smallest = &r.Writes[i]
			}
		}
		if smallest != nil {
			out = append(out, fmt.Sprintf("load-seq file: pagoda %s, SQLite (%s) %s, want no larger: %s",
				mb(base.FileSize), smallest.Peer, mb(smallest.FileSize), verdict(base.FileSize <= smallest.FileSize)))
		}
	}
	if base, ok := r.findWrite("commit", "pagoda"); ok {
		if m, ok := r.findWrite("commit", "mattn"); ok {
			out = append(out, writeTarget("commit", base, m, "mattn (WAL, synchronous=FULL)", 1))
			if x := m.PagodaRatio; x > 0 {
				_, fig := ratioFigure(m.PagodaRatios)
				out = append(out, fmt.Sprintf("commit vs mattn, interleaved commit by commit: %s faster, want >= 1x: %s", fig, verdict(x >= 1)))
			}
		}
	}
	for _, res := range r.Memory {
		if res.Peer != "pagoda" || res.Skipped || res.PeakAnon == 0 {
			continue
		}
		note := ""
		if res.Rows < 10_000_000 {
			note = " (the issue's figure is for 10,000,000 rows: run without --quick)"
		}
		out = append(out, fmt.Sprintf("memory: pagoda's peak anonymous memory loading %s rows with CacheSize %s: %s, want < %s: %s%s",
			group(int64(res.Rows)), mb(MemoryCache), mb(res.PeakAnon), mb(MemoryLimit), verdict(res.PeakAnon < MemoryLimit), note))
	}
	if base, ok := r.findWrite("commit-8", "pagoda"); ok {
		for _, peer := range []string{"mattn", "bbolt"} {
			if res, ok := r.findWrite("commit-8", peer); ok {
				out = append(out, fmt.Sprintf("commit-8 vs %s: %s faster (shown beside, no target)", peer, ratioString(res, base, 2)))
			}
		}
	}
	return out
}

// writeTarget checks that pagoda (base) is at least want times faster than
// res at workload (want 0: faster, any margin).
func writeTarget(workload string, base, res WriteResult, vs string, want float64) string {
	x, fig := pairedFigure(res.ns(), base.ns())
	wantStr, met := fmt.Sprintf(">= %gx", want), x >= want
	if want == 0 {
		wantStr, met = "> 1x", x > 1
	}
	v := verdict(met)
	switch {
	case res.Stopped && base.Stopped:
		v = "undecided (both stopped at the time limit)"
	case res.Stopped && !met:
		v = "undecided (" + res.Peer + " stopped at the time limit)"
	case base.Stopped && met:
		v = "undecided (pagoda stopped at the time limit)"
	}
	switch {
	case res.Stopped && base.Stopped:
		fig = "? " + fig
	case res.Stopped:
		fig = ">=" + fig
	case base.Stopped:
		fig = "<=" + fig
	}
	return fmt.Sprintf("%s vs %s: %s faster, want %s: %s", workload, vs, fig, wantStr, v)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func (r *Report) findWrite(workload, peer string) (WriteResult, bool) {
	for _, res := range r.Writes {
		if res.Workload == workload && res.Peer == peer && !res.Skipped {
			return res, true
		}
	}
	return WriteResult{}, false
}

// fastestWrite returns the fastest result of workload among peers.
func (r *Report) fastestWrite(workload string, peers ...string) (WriteResult, bool) {
	var best WriteResult
	found := false
	for _, peer := range peers {
		if res, ok := r.findWrite(workload, peer); ok && (!found || res.NsPerOp < best.NsPerOp) {
			best, found = res, true
		}
	}
	return best, found
}

func (r *Report) findCache(keys int, peer string) (CacheResult, bool) {
	for _, res := range r.Cache {
		if res.Keys == keys && res.Peer == peer && !res.Skipped {
			return res, true
		}
	}
	return CacheResult{}, false
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

// durString formats a duration with three significant digits or so.
func durString(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}
