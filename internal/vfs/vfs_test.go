package vfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func openRW(t *testing.T, fsys FS, name string) File {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestOSFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	f := openRW(t, OS, name)
	if _, err := f.WriteAt([]byte("hello"), 3); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if n, err := f.Size(); err != nil || n != 8 {
		t.Fatalf("Size = %d, %v", n, err)
	}
	m, err := f.Map(1 << 16)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m[:8], []byte("\x00\x00\x00hello")) {
		t.Fatalf("mapping holds %q", m[:8])
	}
	if _, err := f.WriteAt([]byte("J"), 3); err != nil {
		t.Fatal(err)
	}
	if !MapCopies && m[3] != 'J' {
		t.Fatal("a shared mapping does not see a later write")
	}
	if err := OS.Unmap(m); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if n, _ := f.ReadAt(b, 0); n != 2 {
		t.Fatalf("ReadAt after Truncate(2) read %d bytes", n)
	}
	if err := OS.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if st, err := OS.Stat(name); err != nil || st.Size() != 2 {
		t.Fatalf("Stat: %v, %v", st, err)
	}
	if err := OS.Remove(name); err != nil {
		t.Fatal(err)
	}
	if _, err := OS.Stat(name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat after Remove: %v", err)
	}
}

// TestStartWriteback: the hint leaves the file's bytes as written, on the
// OS's file (which takes it on Linux) and on a Fault's (which ignores it
// and counts no operation).
func TestStartWriteback(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("pagoda!\n"), 1<<17) // 1 MiB
	f := openRW(t, OS, filepath.Join(dir, "os"))
	if _, ok := f.(interface{ StartWriteback(off, n int64) }); !ok && runtime.GOOS == "linux" {
		t.Fatal("the OS's file does not take the hint on Linux")
	}
	if _, err := f.WriteAt(data, 4096); err != nil {
		t.Fatal(err)
	}
	StartWriteback(f, 4096, int64(len(data)))
	StartWriteback(f, 0, 1<<30) // past the end: nothing to write
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "os"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4096+len(data) || !bytes.Equal(got[4096:], data) || !bytes.Equal(got[:4096], make([]byte, 4096)) {
		t.Fatalf("after StartWriteback the file holds %d bytes, not what was written", len(got))
	}

	flt := NewFault(OS)
	g := openRW(t, flt, filepath.Join(dir, "fault"))
	if _, err := g.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	before := flt.Ops()
	StartWriteback(g, 0, int64(len(data)))
	if after := flt.Ops(); after != before {
		t.Fatalf("a Fault's file counted the hint: %d operations, then %d", before, after)
	}
}

// TestMapShared: two writable shared views of a file, one at an offset,
// see each other's stores and the file holds them; a Fault passes the
// view through, counting it as a mapping, and can make it fail.
func TestMapShared(t *testing.T) {
	if MapCopies {
		f := openRW(t, OS, filepath.Join(t.TempDir(), "shm"))
		if _, err := f.MapShared(0, 4096); !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("MapShared without mmap: %v, want ErrUnsupported", err)
		}
		return
	}
	const region = 32768
	name := filepath.Join(t.TempDir(), "shm")
	fsys := NewFault(OS)
	var ops []Op
	fsys.OnOp = func(op Op) { ops = append(ops, op) }
	f := openRW(t, fsys, name)
	g := openRW(t, OS, name)
	if _, err := f.WriteAt([]byte{0}, 2*region-1); err != nil {
		t.Fatal(err)
	}
	whole, err := f.MapShared(0, 2*region)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Unmap(whole)
	second, err := g.MapShared(region, region)
	if err != nil {
		t.Fatal(err)
	}
	defer OS.Unmap(second)
	whole[region+5] = 'x'
	second[6] = 'y'
	if second[5] != 'x' || whole[region+6] != 'y' {
		t.Fatal("two shared views of the file do not see each other's stores")
	}
	b := make([]byte, 2)
	if _, err := g.ReadAt(b, region+5); err != nil || string(b) != "xy" {
		t.Fatalf("the file holds %q (%v), want the views' stores", b, err)
	}
	if last := ops[len(ops)-1]; last.Kind != OpMap || last.Off != 0 || last.Len != 2*region {
		t.Errorf("the Fault counted %v, want the mapping", last)
	}
	fsys.Inject(FaultOnce, fsys.Ops(), OpMap)
	if _, err := f.MapShared(region, region); !errors.Is(err, ErrInjected) {
		t.Fatalf("MapShared at the fault: %v, want ErrInjected", err)
	}
}

func TestLocks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("handles of one process exclude each other only with Linux's OFD locks")
	}
	name := filepath.Join(t.TempDir(), "db")
	a, b := openRW(t, OS, name), openRW(t, OS, name)
	ro, err := OS.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	mustLock := func(f File, l LockLevel) {
		t.Helper()
		if err := f.Lock(l); err != nil {
			t.Fatalf("Lock(%v): %v", l, err)
		}
	}
	mustFail := func(f File, l LockLevel) {
		t.Helper()
		if err := f.Lock(l); !errors.Is(err, ErrLocked) {
			t.Fatalf("Lock(%v) = %v, want ErrLocked", l, err)
		}
	}
	// Readers share; a writer needs everyone gone.
	mustLock(a, LockShared)
	mustLock(ro, LockShared)
	mustFail(b, LockExclusive)
	mustFail(a, LockExclusive) // ro still reads
	if err := ro.Unlock(); err != nil {
		t.Fatal(err)
	}
	mustLock(a, LockExclusive) // upgrade
	mustFail(b, LockShared)
	mustFail(ro, LockShared)
	// b's failed attempt left it holding nothing.
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	mustLock(b, LockExclusive)
	mustFail(a, LockShared)
	// Closing another descriptor of the file keeps b's lock (an OFD
	// lock belongs to b's open file, not to the process).
	c, err := OS.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	mustFail(a, LockShared)
	// Closing b releases it.
	b.Close()
	mustLock(a, LockExclusive)
	// Downgrade keeps SHARED: readers may come, writers may not.
	if err := a.Downgrade(); err != nil {
		t.Fatal(err)
	}
	mustLock(ro, LockShared)
	d := openRW(t, OS, name)
	mustFail(d, LockExclusive)
	if err := ro.Unlock(); err != nil {
		t.Fatal(err)
	}
	mustFail(d, LockExclusive) // a still reads
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	mustLock(d, LockExclusive)
}

// TestLockLevels: RESERVED, PENDING and EXCLUSIVE as sqlite3's unixLock
// takes them: one RESERVED at a time beside readers, PENDING keeps new
// readers out while those there finish, a failed EXCLUSIVE from PENDING
// keeps PENDING, and EXCLUSIVE from SHARED does not take RESERVED.
func TestLockLevels(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("handles of one process exclude each other only with Linux's OFD locks")
	}
	name := filepath.Join(t.TempDir(), "db")
	w, r, o := openRW(t, OS, name), openRW(t, OS, name), openRW(t, OS, name)
	try := func(f File, l LockLevel, ok bool) {
		t.Helper()
		err := f.Lock(l)
		if ok && err != nil || !ok && !errors.Is(err, ErrLocked) {
			t.Fatalf("Lock(%v) = %v, want ok %v", l, err, ok)
		}
	}
	try(w, LockShared, true)
	try(r, LockShared, true)
	try(w, LockReserved, true)
	try(o, LockShared, true)
	try(o, LockReserved, false) // one writer
	try(o, LockExclusive, false)
	if err := o.Unlock(); err != nil {
		t.Fatal(err)
	}
	try(w, LockExclusive, false) // r reads: w is back at RESERVED
	try(o, LockShared, true)
	if err := o.Unlock(); err != nil {
		t.Fatal(err)
	}
	try(w, LockPending, true)
	try(w, LockExclusive, false) // r reads: w keeps PENDING
	try(o, LockShared, false)    // PENDING keeps new readers out
	if err := r.Unlock(); err != nil {
		t.Fatal(err)
	}
	try(w, LockExclusive, true)
	try(r, LockShared, false)
	// Back to SHARED: readers may come again, RESERVED is free.
	if err := w.Downgrade(); err != nil {
		t.Fatal(err)
	}
	try(r, LockShared, true)
	try(r, LockReserved, true)
	if err := r.Unlock(); err != nil {
		t.Fatal(err)
	}
	// A failed EXCLUSIVE from SHARED leaves SHARED: o may read.
	try(r, LockShared, true)
	try(w, LockExclusive, false)
	try(o, LockShared, true)
	for _, f := range []File{w, r, o} {
		if err := f.Unlock(); err != nil {
			t.Fatal(err)
		}
	}
	// EXCLUSIVE from SHARED: no RESERVED on the way (os_unix.c), so a
	// handle that tests RESERVED alone finds it free.
	try(w, LockExclusive, true)
	if err := o.LockRange(ReservedByte, 1, true); err != nil {
		t.Fatalf("RESERVED_BYTE under another's EXCLUSIVE from SHARED: %v", err)
	}
	if err := o.UnlockRange(ReservedByte, 1); err != nil {
		t.Fatal(err)
	}
}

// TestFaultCounts: every operation is counted, and each kind of fault hits
// the operation it is told.
func TestFaultCounts(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	run := func(fsys *Fault) []error {
		var errs []error
		f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644) // 0
		errs = append(errs, err)
		if err != nil {
			return errs
		}
		defer f.Close()
		_, err = f.WriteAt([]byte("abc"), 0) // 1
		errs = append(errs, err)
		errs = append(errs, f.Sync()) // 2
		_, err = f.Size()             // 3
		errs = append(errs, err)
		_, err = f.ReadAt(make([]byte, 1), 0) // 4
		errs = append(errs, err)
		_, err = f.WriteAt([]byte("d"), 3) // 5
		errs = append(errs, err)
		errs = append(errs, fsys.SyncDir(dir)) // 6
		return errs
	}
	want := func(got []error, pattern string) {
		t.Helper()
		if len(got) != len(pattern) {
			t.Fatalf("%d results, want %d", len(got), len(pattern))
		}
		for i, err := range got {
			switch c := pattern[i]; {
			case c == '.' && err != nil:
				t.Errorf("op %d: %v, want success", i, err)
			case c == 'x' && !errors.Is(err, ErrInjected):
				t.Errorf("op %d: %v, want ErrInjected", i, err)
			case c == 'c' && !errors.Is(err, ErrCrashed):
				t.Errorf("op %d: %v, want ErrCrashed", i, err)
			}
		}
	}
	fsys := NewFault(OS)
	want(run(fsys), ".......")
	if fsys.Ops() != 7 {
		t.Fatalf("%d operations counted, want 7", fsys.Ops())
	}
	os.Remove(name)
	fsys = NewFault(OS)
	fsys.Inject(FaultOnce, 2)
	want(run(fsys), "..x....")
	fsys = NewFault(OS)
	fsys.Inject(FaultForever, 2)
	want(run(fsys), "..x..xx") // reads work
	fsys = NewFault(OS)
	fsys.Inject(FaultCrash, 3)
	want(run(fsys), "...cccc")
	if !fsys.Crashed() {
		t.Fatal("not crashed")
	}
	fsys = NewFault(OS)
	fsys.Inject(FaultOnce, 0, OpWrite)
	want(run(fsys), ".x.....")
}

// TestFaultCrashModes checks what each crash mode keeps of a file's
// unsynced writes.
func TestFaultCrashModes(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	durable := bytes.Repeat([]byte{'d'}, 2*SectorSize)
	if err := os.WriteFile(name, durable, 0o644); err != nil {
		t.Fatal(err)
	}
	// Three pending writes after the durable image: w1 over sector 0,
	// w2 over sectors 1..3 (growing the file), w3 over sector 0 again.
	w1 := bytes.Repeat([]byte{'1'}, SectorSize)
	w2 := bytes.Repeat([]byte{'2'}, 3*SectorSize)
	w3 := bytes.Repeat([]byte{'3'}, SectorSize)
	setup := func() *Fault {
		if err := os.WriteFile(name, durable, 0o644); err != nil {
			t.Fatal(err)
		}
		fsys := NewFault(OS)
		f, err := fsys.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, w := range []struct {
			b   []byte
			off int64
		}{{w1, 0}, {w2, SectorSize}, {w3, 0}} {
			if _, err := f.WriteAt(w.b, w.off); err != nil {
				t.Fatal(err)
			}
		}
		return fsys
	}
	read := func() []byte {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// sector returns sector i of b, '-' past its end.
	sector := func(b []byte, i int) byte {
		if (i+1)*SectorSize > len(b) {
			return '-'
		}
		s := b[i*SectorSize : (i+1)*SectorSize]
		if !bytes.Equal(s, bytes.Repeat(s[:1], SectorSize)) {
			t.Fatalf("sector %d is not one write's", i)
		}
		return s[0]
	}
	shape := func(b []byte) string {
		return string([]byte{sector(b, 0), sector(b, 1), sector(b, 2), sector(b, 3)})
	}
	if err := setup().Crash(CrashDrop, 1); err != nil {
		t.Fatal(err)
	}
	if got := shape(read()); got != "dd--" {
		t.Fatalf("dropped: %s, want dd--", got)
	}
	prefixes := map[string]bool{"dd--": true, "1d--": true, "1222": true, "3222": true}
	seen := map[string]bool{}
	for seed := range uint64(64) {
		if err := setup().Crash(CrashPrefix, seed); err != nil {
			t.Fatal(err)
		}
		got := shape(read())
		if !prefixes[got] {
			t.Fatalf("prefix (seed %d): %s", seed, got)
		}
		seen[got] = true
	}
	if len(seen) != len(prefixes) {
		t.Errorf("prefix crashes left only %v", seen)
	}
	// A torn crash leaves a prefix and then some sectors of the next
	// write (w2 torn: "12--", "1d22"), never a later write without the
	// earlier ones.
	clear(seen)
	for seed := range uint64(200) {
		if err := setup().Crash(CrashTorn, seed); err != nil {
			t.Fatal(err)
		}
		seen[shape(read())] = true
	}
	for _, s := range []string{"dd--", "1d--", "12--", "1d22", "1222", "3222"} {
		if !seen[s] {
			t.Errorf("torn crashes never left %s (saw %v)", s, seen)
		}
	}
	for s := range seen {
		if s[0] == '3' && s != "3222" || s[0] == 'd' && s != "dd--" {
			t.Errorf("torn crash left %q: not a prefix and a torn write", s)
		}
	}
	// Reordered: w3 may survive without w1 or w2.
	clear(seen)
	for seed := range uint64(200) {
		if err := setup().Crash(CrashReorder, seed); err != nil {
			t.Fatal(err)
		}
		seen[shape(read())] = true
	}
	if !seen["3d--"] {
		t.Errorf("reordered crashes never kept the last write alone (saw %v)", seen)
	}
	// The same seed replays the same crash.
	setup().Crash(CrashReorder, 7)
	a := read()
	setup().Crash(CrashReorder, 7)
	if !bytes.Equal(a, read()) {
		t.Error("one seed, two different crashes")
	}
	// One moment, several crashes: each rewrites the files from the same
	// model.
	fsys := setup()
	fsys.Crash(CrashDrop, 0)
	dropped := read()
	fsys.Crash(CrashReorder, 3)
	fsys.Crash(CrashDrop, 0)
	if !bytes.Equal(dropped, read()) {
		t.Error("a second crash from the same moment differs")
	}
	if _, err := fsys.OpenFile(name, os.O_RDWR, 0); !errors.Is(err, ErrCrashed) {
		t.Errorf("OpenFile after Crash: %v, want ErrCrashed", err)
	}
	// After Sync every write is durable.
	fsys = setup()
	f, _ := fsys.OpenFile(name, os.O_RDWR, 0)
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fsys.Crash(CrashDrop, 0)
	if got := shape(read()); got != "3222" {
		t.Fatalf("synced: %s", got)
	}
}

// TestFaultDirectory: creating and removing files is durable once the
// directory is synced.
func TestFaultDirectory(t *testing.T) {
	dir := t.TempDir()
	old, young := filepath.Join(dir, "old"), filepath.Join(dir, "young")
	exists := func(name string) bool {
		_, err := os.Stat(name)
		return err == nil
	}
	setup := func(syncDir bool) *Fault {
		os.Remove(young)
		if err := os.WriteFile(old, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		fsys := NewFault(OS)
		f, err := fsys.OpenFile(young, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte("young"), 0)
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := fsys.Remove(old); err != nil {
			t.Fatal(err)
		}
		if syncDir {
			if err := fsys.SyncDir(dir); err != nil {
				t.Fatal(err)
			}
		}
		return fsys
	}
	setup(false).Crash(CrashDrop, 0)
	if exists(young) || !exists(old) {
		t.Fatalf("without SyncDir a crash kept young (%v) or lost old (%v)", exists(young), !exists(old))
	}
	if b, _ := os.ReadFile(old); string(b) != "old" {
		t.Fatalf("old came back as %q", b)
	}
	setup(true).Crash(CrashDrop, 0)
	if !exists(young) || exists(old) {
		t.Fatalf("after SyncDir a crash lost young (%v) or kept old (%v)", !exists(young), exists(old))
	}
	if b, _ := os.ReadFile(young); string(b) != "young" {
		t.Fatalf("young is %q", b)
	}
	// Partial modes keep or undo each unsynced directory change.
	seen := map[[2]bool]bool{}
	for seed := range uint64(32) {
		setup(false).Crash(CrashReorder, seed)
		seen[[2]bool{exists(old), exists(young)}] = true
	}
	if len(seen) != 4 {
		t.Errorf("reordered crashes left only %v", seen)
	}
}

// TestFaultRevive: after a crash of the process alone, the files stay as
// they are and what was not durable is still not.
func TestFaultRevive(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, []byte("durable."), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := NewFault(OS)
	f, err := fsys.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("pending!"), 0)
	fsys.Inject(FaultCrash, fsys.Ops())
	if err := f.Sync(); !errors.Is(err, ErrCrashed) {
		t.Fatalf("Sync: %v, want ErrCrashed", err)
	}
	f.Close()
	fsys.Revive()
	if b, _ := os.ReadFile(name); string(b) != "pending!" {
		t.Fatalf("after Revive the file holds %q", b)
	}
	g, err := fsys.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteAt([]byte("x"), 8); err != nil {
		t.Fatal(err)
	}
	g.Close()
	fsys.Crash(CrashDrop, 0)
	if b, _ := os.ReadFile(name); string(b) != "durable." {
		t.Fatalf("after the power loss the file holds %q", b)
	}
}
