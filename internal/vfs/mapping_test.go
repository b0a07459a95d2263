package vfs

import (
	"bytes"
	"path/filepath"
	"sync"
	"testing"
)

// countingLock counts the times it is taken.
type countingLock struct {
	sync.Mutex
	n int
}

func (l *countingLock) Lock() { l.Mutex.Lock(); l.n++ }

// TestMappingGrows: a file that grows is mapped with room, extended in place
// while the room lasts, then mapped again; what a reader held before stays
// readable, and Truncate and Grow change Bytes under the owner's lock.
func TestMappingGrows(t *testing.T) {
	f := openRW(t, OS, filepath.Join(t.TempDir(), "f"))
	write := func(b []byte, off int64) {
		t.Helper()
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
	}
	write([]byte("first"), 0)
	var m Mapping
	var mu countingLock
	if err := m.Map(f, 5, true); err != nil {
		t.Fatal(err)
	}
	held := m.Bytes()
	if string(held) != "first" {
		t.Fatalf("Bytes = %q", held)
	}
	write([]byte("second"), 5)
	if err := m.Grow(f, 11, &mu); err != nil {
		t.Fatal(err)
	}
	if string(m.Bytes()) != "firstsecond" || mu.n != 1 {
		t.Fatalf("after Grow(11): %q, lock taken %d times", m.Bytes(), mu.n)
	}
	if !MapCopies && &m.Bytes()[0] != &held[0] {
		t.Error("a mapping with room was mapped again")
	}
	// Past the room: mapped again, the old mapping retired, not unmapped.
	big := bytes.Repeat([]byte{7}, minMapRoom)
	write(big, 11)
	if err := m.Grow(f, 11+minMapRoom, &mu); err != nil {
		t.Fatal(err)
	}
	if len(m.Bytes()) != 11+minMapRoom || m.Bytes()[minMapRoom] != 7 || len(m.retired) != 1 || mu.n != 2 {
		t.Fatalf("after growing past the room: %d bytes, %d retired", len(m.Bytes()), len(m.retired))
	}
	if string(held) != "first" {
		t.Fatalf("a slice of the retired mapping reads %q", held)
	}
	m.Truncate(5, &mu)
	if string(m.Bytes()) != "first" || mu.n != 3 {
		t.Fatalf("after Truncate(5): %q", m.Bytes())
	}
	if err := m.Grow(f, 11, &mu); err != nil || string(m.Bytes()) != "firstsecond" {
		t.Fatalf("Grow after Truncate: %q, %v", m.Bytes(), err)
	}
	if err := m.Unmap(OS); err != nil || m.Bytes() != nil || m.retired != nil {
		t.Fatalf("Unmap: %v", err)
	}
}

// TestMappingExact: a file that does not grow is mapped exactly, and an
// empty one not at all.
func TestMappingExact(t *testing.T) {
	f := openRW(t, OS, filepath.Join(t.TempDir(), "f"))
	var m Mapping
	if err := m.Map(f, 0, true); err != nil || m.Bytes() != nil || m.size != 0 {
		t.Fatalf("an empty file: %d bytes mapped, %v", m.size, err)
	}
	if _, err := f.WriteAt([]byte("abc"), 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Map(f, 3, false); err != nil || m.size != 3 || string(m.Bytes()) != "abc" {
		t.Fatalf("exact: %d bytes mapped, %q, %v", m.size, m.Bytes(), err)
	}
	if err := m.Unmap(OS); err != nil {
		t.Fatal(err)
	}
}
