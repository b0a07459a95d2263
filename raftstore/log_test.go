package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/internal/sqltest"
)

type raftLog = raft.Log

// entry is the entry at index i of the tests' logs: every field a function
// of i, so that a reader knows what each index must hold.
func entry(i uint64) *raft.Log {
	l := &raft.Log{
		Index:      i,
		Term:       i/100 + 1,
		Type:       raft.LogType(i % 6),
		Data:       entryData(i, 256),
		AppendedAt: time.Unix(1_700_000_000+int64(i), int64(i%1000)*1000),
	}
	if i%7 == 0 {
		l.Extensions = []byte(fmt.Sprintf("ext-%d", i))
	}
	return l
}

// entryData is n bytes that depend on i.
func entryData(i uint64, n int) []byte {
	b := make([]byte, n)
	x := i*0x9E3779B97F4A7C15 + 1
	for j := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[j] = byte(x)
	}
	return b
}

func makeLogs(lo, hi uint64) []*raft.Log {
	var logs []*raft.Log
	for i := lo; i <= hi; i++ {
		logs = append(logs, entry(i))
	}
	return logs
}

// storeRange stores entries lo to hi, 64 to a StoreLogs call.
func storeRange(t testing.TB, s *Store, lo, hi uint64) {
	t.Helper()
	for i := lo; i <= hi; i += 64 {
		if err := s.StoreLogs(makeLogs(i, min(i+63, hi))); err != nil {
			t.Fatal(err)
		}
	}
}

// sameLog reports how got differs from want ("" when equal): the times by
// Equal, nil and empty slices told apart.
func sameLog(got, want *raft.Log) string {
	switch {
	case got.Index != want.Index || got.Term != want.Term || got.Type != want.Type:
		return fmt.Sprintf("index/term/type %d/%d/%v, want %d/%d/%v", got.Index, got.Term, got.Type, want.Index, want.Term, want.Type)
	case !bytes.Equal(got.Data, want.Data) || (got.Data == nil) != (want.Data == nil):
		return fmt.Sprintf("data %.40q (nil %v), want %.40q (nil %v)", got.Data, got.Data == nil, want.Data, want.Data == nil)
	case !bytes.Equal(got.Extensions, want.Extensions) || (got.Extensions == nil) != (want.Extensions == nil):
		return fmt.Sprintf("extensions %q, want %q", got.Extensions, want.Extensions)
	case !got.AppendedAt.Equal(want.AppendedAt) || got.AppendedAt.IsZero() != want.AppendedAt.IsZero():
		return fmt.Sprintf("appended at %v, want %v", got.AppendedAt, want.AppendedAt)
	}
	return ""
}

// checkRange fails t unless the log is exactly entries lo to hi (empty
// when lo > hi): FirstIndex, LastIndex, every entry, and not one beside.
func checkRange(t testing.TB, s *Store, lo, hi uint64) {
	t.Helper()
	first, err := s.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	last, err := s.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	wantFirst, wantLast := lo, hi
	if lo > hi {
		wantFirst, wantLast = 0, 0
	}
	if first != wantFirst || last != wantLast {
		t.Fatalf("FirstIndex, LastIndex = %d, %d; want %d, %d", first, last, wantFirst, wantLast)
	}
	for _, i := range []uint64{lo - 1, hi + 1} {
		if i == 0 && lo <= hi {
			continue
		}
		if err := s.GetLog(i, new(raft.Log)); err != raft.ErrLogNotFound {
			t.Errorf("GetLog(%d) beside the log: %v, want raft.ErrLogNotFound", i, err)
		}
	}
	for i := lo; i <= hi; i++ {
		var got raft.Log
		if err := s.GetLog(i, &got); err != nil {
			t.Fatalf("GetLog(%d): %v", i, err)
		}
		if d := sameLog(&got, entry(i)); d != "" {
			t.Fatalf("GetLog(%d): %s", i, d)
		}
	}
}

// TestLogContract runs each rule raft relies on against a new store, and
// against a store closed and opened again between its writes and reads.
func TestLogContract(t *testing.T) {
	rules := []struct {
		name string
		run  func(t *testing.T, s *Store, settle func(*Store) *Store)
	}{
		{"Empty", func(t *testing.T, s *Store, settle func(*Store) *Store) {
			s = settle(s)
			checkRange(t, s, 1, 0)
			if err := s.GetLog(0, new(raft.Log)); err != raft.ErrLogNotFound {
				t.Errorf("GetLog(0): %v", err)
			}
			if err := s.GetLog(math.MaxUint64, new(raft.Log)); err != raft.ErrLogNotFound {
				t.Errorf("GetLog(MaxUint64): %v", err)
			}
		}},
		{"RoundTrip", func(t *testing.T, s *Store, settle func(*Store) *Store) {
			logs := []*raft.Log{
				{Index: 1}, // nil data, extensions, zero time
				{Index: 2, Term: 1, Data: []byte{}, Extensions: []byte{}}, // empty, not nil
				{Index: 3, Term: math.MaxUint64, Type: raft.LogConfiguration, Data: []byte("cfg"), AppendedAt: time.Now()},
				{Index: 4, Term: 1 << 63, Type: raft.LogType(255), Data: entryData(4, 100_000), Extensions: entryData(5, 5000)}, // overflow pages
				{Index: 5, Term: 2, Type: raft.LogBarrier, AppendedAt: time.Date(3000, 1, 2, 3, 4, 5, 6, time.UTC)},             // past int64 nanoseconds
				{Index: 6, Term: 2, Type: raft.LogNoop, AppendedAt: time.Date(1, 1, 1, 0, 0, 0, 1, time.FixedZone("x", 3600))},
				{Index: 7, Term: 2, Data: []byte("text\x00with nul")},
			}
			if err := s.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
			s = settle(s)
			for _, want := range logs {
				var got raft.Log
				if err := s.GetLog(want.Index, &got); err != nil {
					t.Fatalf("GetLog(%d): %v", want.Index, err)
				}
				if d := sameLog(&got, want); d != "" {
					t.Errorf("GetLog(%d): %s", want.Index, d)
				}
			}
		}},
		{"FirstLast", func(t *testing.T, s *Store, settle func(*Store) *Store) {
			storeRange(t, s, 1, 100)
			if err := s.StoreLog(entry(101)); err != nil {
				t.Fatal(err)
			}
			s = settle(s)
			checkRange(t, s, 1, 101)
		}},
		{"Replace", func(t *testing.T, s *Store, settle func(*Store) *Store) {
			storeRange(t, s, 1, 10)
			l := entry(5)
			l.Data = []byte("replaced")
			if err := s.StoreLog(l); err != nil {
				t.Fatal(err)
			}
			s = settle(s)
			var got raft.Log
			if err := s.GetLog(5, &got); err != nil || string(got.Data) != "replaced" {
				t.Errorf("GetLog(5) after StoreLog replaced it: %q, %v", got.Data, err)
			}
		}},
		{"OneCommit", func(t *testing.T, s *Store, settle func(*Store) *Store) {
			before := s.DB().Stats()
			storeRange(t, s, 1, 64)
			if err := s.StoreLog(entry(65)); err != nil {
				t.Fatal(err)
			}
			after := s.DB().Stats()
			if n := after.Commits - before.Commits; n != 2 {
				t.Errorf("StoreLogs of 64 entries then StoreLog: %d commits, want 2", n)
			}
			// An entry raftstore refuses fails the whole call: nothing of
			// the batch is stored.
			bad := append(makeLogs(66, 70), &raft.Log{Index: math.MaxInt64 + 1})
			if err := s.StoreLogs(bad); !errors.Is(err, pagoda.ErrUnsupported) {
				t.Errorf("StoreLogs with an index past int64: %v, want ErrUnsupported", err)
			}
			s = settle(s)
			checkRange(t, s, 1, 65)
		}},
		{"DeleteHead", func(t *testing.T, s *Store, settle func(*Store) *Store) {
			storeRange(t, s, 1, 300)
			if err := s.DeleteRange(0, 120); err != nil {
				t.Fatal(err)
			}
			s = settle(s)
			checkRange(t, s, 121, 300)
		}},
		{"DeleteTail", func(t *testing.T, s *Store, settle func(*Store) *Store) {
			storeRange(t, s, 1, 300)
			if err := s.DeleteRange(251, math.MaxUint64); err != nil {
				t.Fatal(err)
			}
			s = settle(s)
			checkRange(t, s, 1, 250)
			storeRange(t, s, 251, 260) // raft appends again after a conflict
			s = settle(s)
			checkRange(t, s, 1, 260)
		}},
		{"DeleteMiddle", func(t *testing.T, s *Store, settle func(*Store) *Store) {
			storeRange(t, s, 1, 30)
			if err := s.DeleteRange(11, 20); err != nil {
				t.Fatal(err)
			}
			s = settle(s)
			first, _ := s.FirstIndex()
			last, _ := s.LastIndex()
			if first != 1 || last != 30 {
				t.Errorf("FirstIndex, LastIndex = %d, %d, want 1, 30", first, last)
			}
			for i := uint64(1); i <= 30; i++ {
				err := s.GetLog(i, new(raft.Log))
				if want := i >= 11 && i <= 20; (err == raft.ErrLogNotFound) != want {
					t.Errorf("GetLog(%d) = %v, deleted %v", i, err, want)
				}
			}
		}},
		{"DeleteAll", func(t *testing.T, s *Store, settle func(*Store) *Store) {
			storeRange(t, s, 5, 200)
			if err := s.DeleteRange(0, 150); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteRange(151, 200); err != nil { // the rest: the whole log
				t.Fatal(err)
			}
			s = settle(s)
			checkRange(t, s, 1, 0)
			// After a snapshot restore raft starts the log past a gap.
			storeRange(t, s, 1000, 1010)
			s = settle(s)
			checkRange(t, s, 1000, 1010)
		}},
		{"DeleteNothing", func(t *testing.T, s *Store, settle func(*Store) *Store) {
			if err := s.DeleteRange(1, 10); err != nil {
				t.Errorf("DeleteRange on an empty log: %v", err)
			}
			storeRange(t, s, 10, 20)
			commits := s.DB().Stats().Commits
			for _, r := range [][2]uint64{{5, 1}, {1, 9}, {21, 30}, {math.MaxInt64 + 1, math.MaxUint64}} {
				if err := s.DeleteRange(r[0], r[1]); err != nil {
					t.Errorf("DeleteRange(%d, %d): %v", r[0], r[1], err)
				}
			}
			if c := s.DB().Stats().Commits; c != commits {
				t.Errorf("DeleteRange of nothing made %d commits", c-commits)
			}
			s = settle(s)
			checkRange(t, s, 10, 20)
		}},
	}
	for _, r := range rules {
		t.Run(r.name+"/New", func(t *testing.T) {
			r.run(t, openStore(t, "", nil), func(s *Store) *Store { return s })
		})
		t.Run(r.name+"/Reopened", func(t *testing.T) {
			r.run(t, openStore(t, "", nil), func(s *Store) *Store { return reopen(t, s, nil) })
		})
	}
}

// TestDeleteFreesPages: the pages of deleted entries go to the freelist,
// and the next appends take them rather than growing the file.
func TestDeleteFreesPages(t *testing.T) {
	s := openStore(t, "", &Options{CompactMinSize: -1})
	storeRange(t, s, 1, 4000)
	pages := pageCount(t, s)
	if err := s.DeleteRange(1, 3000); err != nil {
		t.Fatal(err)
	}
	if freed := s.DB().Stats().Freed; freed < uint64(pages)/2 {
		t.Errorf("deleting 3/4 of %d pages of log freed %d", pages, freed)
	}
	storeRange(t, s, 4001, 7000)
	if grown := pageCount(t, s); grown > pages+pages/20 {
		t.Errorf("appending as many entries as were deleted grew the file from %d to %d pages", pages, grown)
	}
	checkRange(t, s, 3001, 7000)
}

func pageCount(t testing.TB, s *Store) uint32 {
	t.Helper()
	var n uint32
	if err := s.DB().View(func(tx *pagoda.Tx) error { n = tx.PageCount(); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLogInSQLite: sqlite3 reads the log as the package doc says.
func TestLogInSQLite(t *testing.T) {
	s := openStore(t, "", nil)
	logs := []*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("cfg")},
		{Index: 2, Term: 1, Type: raft.LogNoop, AppendedAt: time.Unix(0, 1_700_000_000_123_456_789)},
		{Index: 3, Term: 2, Data: []byte{}, Extensions: []byte("x")},
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 2); err != nil {
		t.Fatal(err)
	}
	// sqlite3 reads beside the open store.
	db := sqltest.Open(t, s.Path())
	got := sqltest.Rows(t, db, "SELECT idx, term, type, quote(data), quote(extensions), quote(appended_at) FROM raft_log")
	want := []string{
		"1|1|5|X'636667'|NULL|NULL",
		"2|1|1|NULL|NULL|1700000000123456789",
		"3|2|0|X''|X'78'|NULL",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sqlite3 reads raft_log as\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = sqltest.Rows(t, db, "SELECT CAST(key AS TEXT), hex(value) FROM raft_stable")
	if want := "CurrentTerm|0000000000000002"; len(got) != 1 || got[0] != want {
		t.Errorf("sqlite3 reads raft_stable as %q, want %q", got, want)
	}
	db.Close()
}

// TestCorruptRow: a row that another program wrote with the wrong types is
// an error wrapping ErrCorrupt that names the row, not a panic.
func TestCorruptRow(t *testing.T) {
	s := openStore(t, "", nil)
	storeRange(t, s, 1, 3)
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	sqltest.Exec(t, path,
		"INSERT INTO raft_log VALUES (4, 'x', 0, NULL, NULL, NULL)",
		"INSERT INTO raft_log VALUES (5, 1, 300, NULL, NULL, NULL)",
		"INSERT INTO raft_log VALUES (6, 1, 0, 1.5, NULL, NULL)",
		"INSERT INTO raft_log VALUES (7, 1, 0, NULL, NULL, 'yesterday')",
	)
	s = openStore(t, path, nil)
	for i, col := range map[uint64]string{4: "term", 5: "type", 6: "data", 7: "appended_at"} {
		err := s.GetLog(i, new(raft.Log))
		if !errors.Is(err, pagoda.ErrCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("row %d: %s", i, col)) {
			t.Errorf("GetLog(%d) of a row with a bad %s: %v", i, col, err)
		}
	}
	for i := uint64(1); i <= 3; i++ { // the others read as written
		var got raft.Log
		if err := s.GetLog(i, &got); err != nil {
			t.Fatal(err)
		} else if d := sameLog(&got, entry(i)); d != "" {
			t.Errorf("GetLog(%d): %s", i, d)
		}
	}
}

// TestConcurrentReads: readers call GetLog, FirstIndex and LastIndex while
// one goroutine appends and truncates the head, as raft's replication and
// snapshot goroutines do (go test -race finds races here).
func TestConcurrentReads(t *testing.T) {
	s := openStore(t, "", &Options{CompactMinSize: 64 << 10})
	storeRange(t, s, 1, 200)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				first, err := s.FirstIndex()
				if err != nil {
					errs <- err
					return
				}
				last, _ := s.LastIndex()
				for i := first; i <= last && i < first+20; i++ {
					var l raft.Log
					err := s.GetLog(i, &l)
					if err == raft.ErrLogNotFound {
						continue // truncated meanwhile
					}
					if err == nil {
						if d := sameLog(&l, entry(i)); d != "" {
							err = fmt.Errorf("GetLog(%d): %s", i, d)
						}
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	for i := uint64(201); i <= 3000; i += 50 {
		if err := s.StoreLogs(makeLogs(i, i+49)); err != nil {
			t.Fatal(err)
		}
		if i%500 == 1 {
			if err := s.DeleteRange(0, i-100); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s.Compactions() == 0 {
		t.Error("no compaction ran beside the readers")
	}
	checkRange(t, s, 2402, 3000) // the last delete was at i = 2501
}
