package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Errors of a Fault.
var (
	// ErrCrashed is the error of every operation from a FaultCrash or a
	// Crash on.
	ErrCrashed = errors.New("vfs: simulated crash")
	// ErrInjected is the error of an operation that FaultOnce or
	// FaultForever makes fail.
	ErrInjected = errors.New("vfs: injected I/O error")
)

// FaultKind says what happens at the operation a Fault is told about.
type FaultKind uint8

const (
	// NoFault: every operation is carried out.
	NoFault FaultKind = iota
	// FaultCrash: the operation fails with ErrCrashed, and so does every
	// later one: the process is dead, only what storage holds matters
	// (see Crash).
	FaultCrash
	// FaultOnce: the operation fails with ErrInjected; later ones work.
	FaultOnce
	// FaultForever: from the operation on, every one that changes storage
	// (a write, sync, truncation, creation, removal or directory sync)
	// fails with ErrInjected; reads work, as on a disk gone read-only.
	FaultForever
)

func (k FaultKind) String() string {
	switch k {
	case NoFault:
		return "none"
	case FaultCrash:
		return "crash"
	case FaultOnce:
		return "fail-once"
	case FaultForever:
		return "fail-forever"
	}
	return "invalid"
}

// OpKind is the kind of a counted operation.
type OpKind uint8

// The operations a Fault counts.
const (
	OpOpen OpKind = iota
	OpRead
	OpWrite
	OpSync
	OpTruncate
	OpSize
	OpMap
	OpLock
	OpRemove
	OpStat
	OpSyncDir
)

var opNames = [...]string{"open", "read", "write", "sync", "truncate", "size", "mmap", "lock", "remove", "stat", "syncdir"}

func (k OpKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return "invalid"
}

// Op describes one counted operation, for Fault.OnOp.
type Op struct {
	Index int    // from 0, in the order the operations happened
	Kind  OpKind //
	Name  string // the file's name
	Off   int64  // ReadAt, WriteAt, MapShared: the offset; Truncate: the size
	Len   int    // ReadAt, WriteAt: the length; Map, MapShared: the size
}

func (op Op) String() string {
	s := fmt.Sprintf("#%d %s %s", op.Index, op.Kind, filepath.Base(op.Name))
	switch op.Kind {
	case OpRead, OpWrite:
		s += fmt.Sprintf(" [%d, +%d)", op.Off, op.Len)
	case OpTruncate:
		s += fmt.Sprintf(" to %d", op.Off)
	case OpMap:
		s += fmt.Sprintf(" %d bytes", op.Len)
		if op.Off != 0 {
			s += fmt.Sprintf(" at %d", op.Off)
		}
	}
	return s
}

// CrashMode says what a crash keeps of the changes that were not durable
// (see the package doc).
type CrashMode uint8

const (
	// CrashDrop keeps nothing that was not made durable.
	CrashDrop CrashMode = iota
	// CrashPrefix keeps a random prefix of each file's pending writes.
	CrashPrefix
	// CrashTorn keeps a random prefix of each file's pending writes and a
	// random subset of the sectors of the next one.
	CrashTorn
	// CrashReorder keeps a random subset of the sectors of every pending
	// write: any order of reaching the disk.
	CrashReorder
)

func (m CrashMode) String() string {
	switch m {
	case CrashDrop:
		return "dropped"
	case CrashPrefix:
		return "prefix"
	case CrashTorn:
		return "torn"
	case CrashReorder:
		return "reordered"
	}
	return "invalid"
}

// SectorSize is the unit of a torn write: a crash keeps or loses each
// aligned 512-byte piece of a write as a whole.
const SectorSize = 512

// Fault is an FS over another (usually OS) that counts operations, injects
// a fault at one of them, and models what stable storage holds, so that
// Crash can leave the real files as a power loss would. Changes go through
// to the real files at once, so that the program under test reads its own
// writes (through mappings too). It is safe for concurrent use.
type Fault struct {
	// OnOp, when set, is called with every counted operation (with the
	// Fault's lock held: it must not call the Fault).
	OnOp func(Op)
	// SkipSync, when set, keeps Sync and SyncDir from reaching the base
	// FS: they still count and still make changes durable in the model,
	// which is what Crash goes by, and a test runs faster.
	SkipSync bool

	base FS

	mu      sync.Mutex
	n       int // operations counted
	kind    FaultKind
	at      int
	only    uint32 // OpKinds the fault applies to, as bits; 0: all
	fired   bool   // FaultOnce has happened
	crashed bool   // FaultCrash has happened
	names   map[string]*entry
}

// entry is what one file name refers to: now (cur) and in durable storage
// (durable, which differs until the directory is synced). nil means no
// file.
type entry struct {
	cur, durable *inode
}

// inode is one file's content: its durable image and the changes made
// since, in order.
type inode struct {
	durable []byte
	pending []change
}

// change is a write of data at off, or (trunc) a truncation to off bytes.
type change struct {
	off   int64
	data  []byte
	trunc bool
}

// NewFault returns a Fault over base with no fault planned.
func NewFault(base FS) *Fault {
	return &Fault{base: base, names: map[string]*entry{}}
}

// Inject plans a fault of kind at operation index at (counting from 0,
// see Ops). When only is given the fault applies to those kinds of
// operation alone (FaultOnce and FaultCrash: to the first of them at or
// after at). NoFault cancels what was planned, but not a crash that has
// happened.
func (f *Fault) Inject(kind FaultKind, at int, only ...OpKind) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kind, f.at, f.fired, f.only = kind, at, false, 0
	for _, k := range only {
		f.only |= 1 << k
	}
}

// Ops returns the number of operations counted so far: the index the
// next one will have.
func (f *Fault) Ops() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// Crashed reports whether a FaultCrash has happened or Crash has been
// called.
func (f *Fault) Crashed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.crashed
}

// mutates reports whether an operation of kind k changes storage.
func (k OpKind) mutates() bool {
	switch k {
	case OpWrite, OpSync, OpTruncate, OpRemove, OpSyncDir:
		return true
	}
	return false
}

// count counts op and returns the fault it meets, if any; creating says
// that an open creates or truncates the file. f.mu is held.
func (f *Fault) count(op Op, creating bool) error {
	op.Index = f.n
	f.n++
	if f.OnOp != nil {
		f.OnOp(op)
	}
	if f.crashed {
		return pathErr(op, ErrCrashed)
	}
	if op.Index < f.at || (f.only != 0 && f.only&(1<<op.Kind) == 0) {
		return nil
	}
	switch f.kind {
	case FaultCrash:
		f.crashed = true
		return pathErr(op, ErrCrashed)
	case FaultOnce:
		if !f.fired {
			f.fired = true
			return pathErr(op, ErrInjected)
		}
	case FaultForever:
		if op.Kind.mutates() || creating {
			return pathErr(op, ErrInjected)
		}
	}
	return nil
}

func pathErr(op Op, err error) error {
	return &fs.PathError{Op: op.Kind.String(), Path: op.Name, Err: err}
}

// key is the map key of a file name.
func key(name string) string {
	if abs, err := filepath.Abs(name); err == nil {
		return abs
	}
	return filepath.Clean(name)
}

// entry returns the entry of a name, reading a file met for the first time
// as durable as it is. f.mu is held.
func (f *Fault) entry(name string) *entry {
	k := key(name)
	if e := f.names[k]; e != nil {
		return e
	}
	e := &entry{}
	if b, err := os.ReadFile(k); err == nil {
		e.cur = &inode{durable: b}
		e.durable = e.cur
	}
	f.names[k] = e
	return e
}

// OpenFile opens the file through the base FS.
func (f *Fault) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.entry(name)
	creating := (flag&os.O_CREATE != 0 && e.cur == nil) || flag&os.O_TRUNC != 0
	if err := f.count(Op{Kind: OpOpen, Name: name}, creating); err != nil {
		return nil, err
	}
	bf, err := f.base.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if e.cur == nil {
		e.cur = &inode{}
	}
	if flag&os.O_TRUNC != 0 {
		e.cur.pending = append(e.cur.pending, change{trunc: true})
	}
	return &faultFile{fs: f, base: bf, name: name, ino: e.cur}, nil
}

// Remove removes the file; the removal is durable at the next SyncDir.
func (f *Fault) Remove(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.entry(name)
	if err := f.count(Op{Kind: OpRemove, Name: name}, false); err != nil {
		return err
	}
	if err := f.base.Remove(name); err != nil {
		return err
	}
	e.cur = nil
	return nil
}

// Stat describes the file.
func (f *Fault) Stat(name string) (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.count(Op{Kind: OpStat, Name: name}, false); err != nil {
		return nil, err
	}
	return f.base.Stat(name)
}

// SyncDir makes the creations and removals in dir durable.
func (f *Fault) SyncDir(dir string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.count(Op{Kind: OpSyncDir, Name: dir}, false); err != nil {
		return err
	}
	if !f.SkipSync {
		if err := f.base.SyncDir(dir); err != nil {
			return err
		}
	}
	d := key(dir)
	for k, e := range f.names {
		if filepath.Dir(k) == d {
			e.durable = e.cur
		}
	}
	return nil
}

// Revive ends a crash of the process, not of the machine: the files stay
// as they are, what was not durable stays so, and the Fault works again
// (no fault planned), as for a new process using the same storage after
// the one that crashed.
func (f *Fault) Revive() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kind, f.fired, f.crashed, f.only = NoFault, false, false, 0
}

// Unmap releases a mapping; it is not counted and never fails by
// injection.
func (f *Fault) Unmap(b []byte) error { return f.base.Unmap(b) }

// Crash rewrites the real files that the Fault has seen to a state that
// a power loss at this moment could leave, following mode with the random
// choices drawn from seed (see the package doc). Every file must be
// closed. The Fault is dead afterwards (every operation fails with
// ErrCrashed), but remembers the moment of the crash: Crash may be called
// again, with another mode or seed, to rewrite the files to another state
// that the same power loss could have left.
func (f *Fault) Crash(mode CrashMode, seed uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashed = true
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	keys := make([]string, 0, len(f.names))
	for k := range f.names {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var errs []error
	for _, k := range keys {
		e := f.names[k]
		ino := e.durable
		if mode != CrashDrop && e.cur != e.durable && rng.IntN(2) == 0 {
			ino = e.cur
		}
		if ino == nil {
			if err := os.Remove(k); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if err := os.WriteFile(k, ino.afterCrash(mode, rng), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// afterCrash returns the content a crash leaves of the file.
func (ino *inode) afterCrash(mode CrashMode, rng *rand.Rand) []byte {
	img := slices.Clone(ino.durable)
	switch mode {
	case CrashPrefix, CrashTorn:
		j := rng.IntN(len(ino.pending) + 1)
		for _, c := range ino.pending[:j] {
			img = c.apply(img)
		}
		if mode == CrashTorn && j < len(ino.pending) {
			img = ino.pending[j].applySectors(img, rng, 0.5)
		}
	case CrashReorder:
		// The share of sectors that reached the disk is itself random,
		// so that crashes that kept almost nothing, or almost all, but
		// in no order, are as likely as the even split.
		keep := rng.Float64()
		for _, c := range ino.pending {
			img = c.applySectors(img, rng, keep)
		}
	}
	return img
}

// apply returns img with the change made.
func (c change) apply(img []byte) []byte {
	if c.trunc {
		return resize(img, c.off)
	}
	return writeInto(img, c.off, c.data)
}

// applySectors returns img with a random subset of the change's aligned
// sectors written, each with probability keep (a truncation happens or
// not, likewise).
func (c change) applySectors(img []byte, rng *rand.Rand, keep float64) []byte {
	if c.trunc {
		if rng.Float64() < keep {
			img = resize(img, c.off)
		}
		return img
	}
	off, data := c.off, c.data
	for len(data) > 0 {
		n := int(min(int64(len(data)), (off/SectorSize+1)*SectorSize-off))
		if rng.Float64() < keep {
			img = writeInto(img, off, data[:n])
		}
		off, data = off+int64(n), data[n:]
	}
	return img
}

func resize(img []byte, size int64) []byte {
	if size <= int64(len(img)) {
		return img[:size]
	}
	return append(img, make([]byte, size-int64(len(img)))...)
}

func writeInto(img []byte, off int64, data []byte) []byte {
	if end := off + int64(len(data)); end > int64(len(img)) {
		img = resize(img, end)
	}
	copy(img[off:], data)
	return img
}

// faultFile is a file opened through a Fault.
type faultFile struct {
	fs   *Fault
	base File
	name string
	ino  *inode
}

func (f *faultFile) Name() string { return f.name }

func (f *faultFile) ReadAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	err := f.fs.count(Op{Kind: OpRead, Name: f.name, Off: off, Len: len(b)}, false)
	f.fs.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return f.base.ReadAt(b, off)
}

func (f *faultFile) WriteAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.fs.count(Op{Kind: OpWrite, Name: f.name, Off: off, Len: len(b)}, false); err != nil {
		return 0, err
	}
	n, err := f.base.WriteAt(b, off)
	if n > 0 {
		f.ino.pending = append(f.ino.pending, change{off: off, data: slices.Clone(b[:n])})
	}
	return n, err
}

func (f *faultFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.fs.count(Op{Kind: OpSync, Name: f.name}, false); err != nil {
		return err
	}
	if !f.fs.SkipSync {
		if err := f.base.Sync(); err != nil {
			return err
		}
	}
	for _, c := range f.ino.pending {
		f.ino.durable = c.apply(f.ino.durable)
	}
	clear(f.ino.pending)
	f.ino.pending = f.ino.pending[:0]
	return nil
}

func (f *faultFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.fs.count(Op{Kind: OpTruncate, Name: f.name, Off: size}, false); err != nil {
		return err
	}
	if err := f.base.Truncate(size); err != nil {
		return err
	}
	f.ino.pending = append(f.ino.pending, change{off: size, trunc: true})
	return nil
}

func (f *faultFile) Size() (int64, error) {
	f.fs.mu.Lock()
	err := f.fs.count(Op{Kind: OpSize, Name: f.name}, false)
	f.fs.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return f.base.Size()
}

func (f *faultFile) Map(size int) ([]byte, error) {
	f.fs.mu.Lock()
	err := f.fs.count(Op{Kind: OpMap, Name: f.name, Len: size}, false)
	f.fs.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return f.base.Map(size)
}

// MapShared counts as a mapping; what is stored through the view is not
// an operation, and a crash does not model it (a -shm file is not
// durable state: sqlite3 rebuilds it).
func (f *faultFile) MapShared(off int64, size int) ([]byte, error) {
	f.fs.mu.Lock()
	err := f.fs.count(Op{Kind: OpMap, Name: f.name, Off: off, Len: size}, false)
	f.fs.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return f.base.MapShared(off, size)
}

func (f *faultFile) Lock(level LockLevel) error {
	f.fs.mu.Lock()
	err := f.fs.count(Op{Kind: OpLock, Name: f.name}, false)
	f.fs.mu.Unlock()
	if err != nil {
		return err
	}
	return f.base.Lock(level)
}

func (f *faultFile) LockRange(start, n int64, exclusive bool) error {
	f.fs.mu.Lock()
	err := f.fs.count(Op{Kind: OpLock, Name: f.name}, false)
	f.fs.mu.Unlock()
	if err != nil {
		return err
	}
	return f.base.LockRange(start, n, exclusive)
}

// Unlock, UnlockRange and Close release the real resources whatever
// happened: a dead process holds no locks and no files.
func (f *faultFile) Unlock() error                    { return f.base.Unlock() }
func (f *faultFile) Downgrade() error                 { return f.base.Downgrade() }
func (f *faultFile) UnlockRange(start, n int64) error { return f.base.UnlockRange(start, n) }
func (f *faultFile) HeldElsewhere(start, n int64) (bool, error) {
	return f.base.HeldElsewhere(start, n)
}
func (f *faultFile) Close() error { return f.base.Close() }
