package raftstore

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/pagodadb/pagoda"
)

// TestStableContract: Set/Get and SetUint64/GetUint64 round-trip on a new
// and on a reopened store, and an absent key is an error whose text is
// exactly "not found", which raft compares.
func TestStableContract(t *testing.T) {
	for _, reopened := range []bool{false, true} {
		name := "New"
		if reopened {
			name = "Reopened"
		}
		t.Run(name, func(t *testing.T) {
			s := openStore(t, "", nil)
			for _, k := range []string{"CurrentTerm", "LastVoteCand"} {
				if _, err := s.Get([]byte(k)); err == nil || err.Error() != "not found" || !errors.Is(err, pagoda.ErrNotFound) {
					t.Errorf("Get(%s) of an absent key: %v, want the text \"not found\"", k, err)
				}
				if v, err := s.GetUint64([]byte(k)); err == nil || err.Error() != "not found" || v != 0 {
					t.Errorf("GetUint64(%s) of an absent key: %d, %v", k, v, err)
				}
			}
			pairs := map[string][]byte{
				"LastVoteCand":   []byte("node-2"),
				"empty":          {},
				"nil":            nil, // stored as empty: a bucket holds no NULL
				"\x00binary\xff": bytes.Repeat([]byte{0xfe}, 10_000),
				"overwritten":    []byte("first"),
			}
			for k, v := range pairs {
				if err := s.Set([]byte(k), v); err != nil {
					t.Fatal(err)
				}
			}
			pairs["overwritten"] = []byte("second")
			if err := s.Set([]byte("overwritten"), pairs["overwritten"]); err != nil {
				t.Fatal(err)
			}
			nums := map[string]uint64{"CurrentTerm": 7, "LastVoteTerm": math.MaxUint64, "zero": 0}
			for k, v := range nums {
				if err := s.SetUint64([]byte(k), v); err != nil {
					t.Fatal(err)
				}
			}
			if reopened {
				s = reopen(t, s, nil)
			}
			for k, want := range pairs {
				got, err := s.Get([]byte(k))
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("Get(%q) = %.20q, %v; want %.20q", k, got, err, want)
				}
			}
			for k, want := range nums {
				if got, err := s.GetUint64([]byte(k)); err != nil || got != want {
					t.Errorf("GetUint64(%q) = %d, %v; want %d", k, got, err, want)
				}
			}
			// Get's slice is the caller's: changing it changes nothing stored.
			got, _ := s.Get([]byte("LastVoteCand"))
			got[0] = 'X'
			if again, _ := s.Get([]byte("LastVoteCand")); string(again) != "node-2" {
				t.Errorf("Get after changing the slice it returned: %q", again)
			}
			if _, err := s.GetUint64([]byte("LastVoteCand")); !errors.Is(err, pagoda.ErrCorrupt) {
				t.Errorf("GetUint64 of a 6-byte value: %v, want ErrCorrupt", err)
			}
		})
	}
}
