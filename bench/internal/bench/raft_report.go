package bench

import "fmt"

// printRaft prints the raft workloads: what they do, then one row per
// (workload, store) with raftstore's speed-up over the store.
func (r *Report) printRaft(p *printer, rounds string) {
	o := r.Config.Raft.withDefaults()
	p.printf("raft: hashicorp/raft's log stores, each with its defaults, every StoreLogs durable: raftstore (pagoda, SyncFull),\n")
	p.printf("  raft-boltdb v2.3.0 (bbolt, an fsync per commit), raft-wal v0.4.0 (an fsync per append); entries of %s bytes,\n", group(int64(o.EntrySize)))
	p.printf("  term 1, AppendedAt set; every store is checked after each workload (first and last index, entries read back)%s\n", rounds)
	var docs [][]string
	for _, w := range RaftWorkloads {
		if !r.hasRaft(w.Name) {
			continue
		}
		doc := w.Doc
		switch w.Name {
		case "raft-store-1":
			doc = fmt.Sprintf(doc, group(int64(o.Store1)), group(int64(o.EntrySize)))
		case "raft-store-64":
			doc = fmt.Sprintf(doc, group(int64(o.Store64)))
		case "raft-getlog":
			doc = fmt.Sprintf(doc, group(int64(o.GetLogs)), group(int64(o.Truncate+o.Keep)))
		case "raft-truncate":
			doc = fmt.Sprintf(doc, group(int64(o.Truncate)))
		case "raft-apply":
			doc = fmt.Sprintf(doc, group(int64(o.Applies)))
		case "raft-apply-64":
			doc = fmt.Sprintf(doc, group(int64(8*o.Applies)))
		}
		docs = append(docs, []string{"  " + w.Name, doc})
	}
	p.table(docs, 2)
	p.printf("ns/op is per entry (store, truncate), per call (getlog) or per apply; per second is its inverse; the cluster's\n")
	p.printf("  state machine counts commands in memory; raft-apply* run raftstore and raft-boltdb\n\n")
	head := []string{"workload", "store", "ops", "ns/op", "min-max", "per second", "allocs/op", "raftstore speed-up", "file"}
	rows := [][]string{head}
	for _, res := range r.Raft {
		ratio := "-"
		if base, ok := r.findRaft(res.Workload, raftStorePeer); ok && res.Peer != raftStorePeer {
			ratio = ratioCell(res.ns(), base.ns(), 2)
		}
		file := "-"
		if res.FileSize > 0 {
			file = mb(res.FileSize)
		}
		rows = append(rows, []string{res.Workload, res.Peer, group(int64(res.Ops)), nsString(res.NsPerOp), nsSpan(res.ns()),
			group(int64(1e9/res.NsPerOp + 0.5)), allocString(res.allocs(), 1), ratio, file})
	}
	p.table(rows, 2)
}

func (r *Report) hasRaft(workload string) bool {
	for _, res := range r.Raft {
		if res.Workload == workload {
			return true
		}
	}
	return false
}

func (r *Report) findRaft(workload, peer string) (WriteResult, bool) {
	for _, res := range r.Raft {
		if res.Workload == workload && res.Peer == peer {
			return res, true
		}
	}
	return WriteResult{}, false
}

// raftTargets checks issue #32's bench targets on this run: raftstore's
// StoreLogs at batch sizes 1 and 64 at least 2x raft-boltdb v2 and at
// least as fast as raft-wal, in-run ratios (the median of the rounds'),
// with the cluster's applies shown beside.
func (r *Report) raftTargets() []string {
	var out []string
	const is = "issue #32: "
	for _, w := range []string{"raft-store-1", "raft-store-64"} {
		base, ok := r.findRaft(w, raftStorePeer)
		if !ok {
			continue
		}
		for _, peer := range []struct {
			name string
			want float64
		}{{raftBoltPeer, 2}, {raftWALPeer, 1}} {
			if res, ok := r.findRaft(w, peer.name); ok {
				x, fig := pairedFigure(res.ns(), base.ns())
				out = append(out, fmt.Sprintf(is+"%s: raftstore vs %s: %s faster, want >= %gx: %s", w, peer.name, fig, peer.want, verdict(x >= peer.want)))
			}
		}
	}
	for _, w := range []string{"raft-getlog", "raft-truncate", "raft-apply", "raft-apply-64"} {
		base, ok := r.findRaft(w, raftStorePeer)
		if !ok {
			continue
		}
		for _, res := range r.Raft {
			if res.Workload == w && res.Peer != raftStorePeer {
				_, fig := pairedFigure(res.ns(), base.ns())
				out = append(out, fmt.Sprintf(is+"%s: raftstore vs %s: %s faster (shown beside, no target)", w, res.Peer, fig))
			}
		}
	}
	return out
}
