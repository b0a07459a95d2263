package raftstore

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
)

// BenchmarkStoreLogs appends 256-byte entries, durably, in batches of 1
// and 64: go test -run '^$' -bench StoreLogs -count 3 ./raftstore. The
// issue's peer, raft-boltdb v2 (v2.3.1), cannot join this module: it
// imports github.com/hashicorp/go-metrics/compat, which go-metrics v0.7.0,
// the version raft v1.8.0 requires, no longer has.
func BenchmarkStoreLogs(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) raft.LogStore
	}{
		{"raftstore", func(b *testing.B) raft.LogStore {
			s, err := Open(filepath.Join(b.TempDir(), "raft.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
	}
	data := entryData(1, 256)
	for _, batch := range []int{1, 64} {
		for _, st := range stores {
			b.Run(fmt.Sprintf("batch=%d/%s", batch, st.name), func(b *testing.B) {
				s := st.open(b)
				logs := make([]*raft.Log, batch)
				for i := range logs {
					logs[i] = &raft.Log{Term: 1, Data: data}
				}
				next := uint64(1)
				b.SetBytes(int64(batch * len(data)))
				for b.Loop() {
					for _, l := range logs {
						l.Index = next
						next++
					}
					if err := s.StoreLogs(logs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(next-1), "ns/entry")
			})
		}
	}
}

// BenchmarkGetLog reads entries of a 10,000-entry log at random.
func BenchmarkGetLog(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "raft.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storeRange(b, s, 1, 10_000)
	var l raft.Log
	i := uint64(0)
	for b.Loop() {
		i = (i*7919 + 1) % 10_000
		if err := s.GetLog(i+1, &l); err != nil {
			b.Fatal(err)
		}
	}
}
