package pager

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
	"github.com/pagodadb/pagoda/internal/sqltest"
	"github.com/pagodadb/pagoda/internal/vfs"
)

func makeDB(t *testing.T, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	sqltest.Exec(t, path, stmts...)
	return path
}

func mutate(t *testing.T, path string, fn func([]byte) []byte) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bad.db")
	if err := os.WriteFile(out, fn(b), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenValid(t *testing.T) {
	path := makeDB(t, "CREATE TABLE t(a)", "INSERT INTO t VALUES (1),(2)")
	p, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s := p.Snapshot()
	if s.PageCount() != 2 || s.PageSize() != 4096 || s.UsableSize() != 4096 {
		t.Fatalf("pages %d size %d usable %d", s.PageCount(), s.PageSize(), s.UsableSize())
	}
	pg, err := s.Page(1)
	if err != nil {
		t.Fatal(err)
	}
	if string(pg[:16]) != format.Magic {
		t.Fatal("page 1 does not start with the magic")
	}
	for _, bad := range []uint32{0, 3, 1 << 31} {
		if _, err := s.Page(bad); !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("Page(%d): %v, want ErrCorrupt", bad, err)
		}
	}
}

// Each malformed file gives a clear error wrapping ErrCorrupt or
// ErrUnsupported, never a panic. (A UTF-16 database opens: see
// TestUTF16OpensReadOnly.)
func TestOpenRejects(t *testing.T) {
	good := makeDB(t, "CREATE TABLE t(a)", "INSERT INTO t VALUES (1)")
	tests := []struct {
		name string
		path string
		want error
	}{
		{"not sqlite", mutate(t, good, func(b []byte) []byte {
			return []byte("hello, this is not a database at all, just some text padding it out to more than one hundred bytes........")
		}), format.ErrCorrupt},
		{"bad magic", mutate(t, good, func(b []byte) []byte { b[0] = 'X'; return b }), format.ErrCorrupt},
		{"truncated header", mutate(t, good, func(b []byte) []byte { return b[:50] }), format.ErrCorrupt},
		{"truncated page", mutate(t, good, func(b []byte) []byte { return b[:1000] }), format.ErrCorrupt},
		{"truncated second page", mutate(t, good, func(b []byte) []byte { return b[:4096] }), format.ErrCorrupt},
		{"page size 1000", mutate(t, good, func(b []byte) []byte { binary.BigEndian.PutUint16(b[16:], 1000); return b }), format.ErrCorrupt},
		{"page size 256", mutate(t, good, func(b []byte) []byte { binary.BigEndian.PutUint16(b[16:], 256); return b }), format.ErrCorrupt},
		{"bad fractions", mutate(t, good, func(b []byte) []byte { b[21] = 65; return b }), format.ErrCorrupt},
		{"reserved too large", mutate(t, good, func(b []byte) []byte { b[20] = 255; binary.BigEndian.PutUint16(b[16:], 512); return b }), format.ErrCorrupt},
		{"read version 3", mutate(t, good, func(b []byte) []byte { b[19] = 3; return b }), format.ErrUnsupported},
		{"schema format 0x105", mutate(t, good, func(b []byte) []byte { binary.BigEndian.PutUint32(b[44:], 0x105); return b }), format.ErrUnsupported},
		{"header size beyond file", mutate(t, good, func(b []byte) []byte { binary.BigEndian.PutUint32(b[28:], 50); return b }), format.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Open(tt.path, Options{ReadOnly: true})
			if err == nil {
				p.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var ce *format.CorruptError
			if tt.want == format.ErrCorrupt && (!errors.As(err, &ce) || ce.Page != 1) {
				t.Fatalf("err = %v, want a CorruptError naming page 1", err)
			}
		})
	}
}

func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "nope.db"), Options{ReadOnly: true})
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v", err)
	}
}

func TestEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if n := p.Snapshot().PageCount(); n != 0 {
		t.Fatalf("PageCount = %d", n)
	}
}

// A header size smaller than the file: trailing pages are ignored.
func TestHeaderSizeSmallerThanFile(t *testing.T) {
	good := makeDB(t, "CREATE TABLE t(a)")
	path := mutate(t, good, func(b []byte) []byte { return append(b, make([]byte, 4096)...) })
	p, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if n := p.Snapshot().PageCount(); n != 2 {
		t.Fatalf("PageCount = %d, want the header's 2", n)
	}
}

func digest(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// A -wal left by sqlite3 is honoured, and reading writes to neither file;
// an exclusive reader writes no wal-index either.
func TestWALHonoured(t *testing.T) {
	path := sqltest.WithWAL(t,
		[]string{"CREATE TABLE t(a)", "INSERT INTO t VALUES (1)"},
		[]string{"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<20) INSERT INTO t SELECT randomblob(3000) FROM c", "CREATE TABLE u(b)"})
	dbBefore, walBefore := digest(t, path), digest(t, path+"-wal")
	fileInfo, _ := os.Stat(path)
	p, err := Open(path, Options{ReadOnly: true, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	s := p.Snapshot()
	if p.WALFrames() == 0 {
		t.Fatal("no committed frames recovered")
	}
	filePages := uint32(fileInfo.Size() / 4096)
	if s.PageCount() <= filePages {
		t.Fatalf("PageCount %d, file has %d pages: WAL growth not seen", s.PageCount(), filePages)
	}
	pg1, err := s.Page(1)
	if err != nil {
		t.Fatal(err)
	}
	if !s.InWAL(1) {
		t.Fatal("page 1 should come from the WAL (schema changed)")
	}
	if got := format.Header(pg1).DatabaseSize(); got != s.PageCount() {
		t.Fatalf("header size %d, snapshot %d", got, s.PageCount())
	}
	for pg := uint32(1); pg <= s.PageCount(); pg++ {
		if _, err := s.Page(pg); err != nil {
			t.Fatalf("page %d: %v", pg, err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if digest(t, path) != dbBefore || digest(t, path+"-wal") != walBefore {
		t.Fatal("reading changed the database or its WAL")
	}
	// The -shm file, which a reader of a WAL-mode file opens as sqlite3's
	// readers do (shm.go), holds no wal-index header from the pager: the
	// next sqlite3 connection rebuilds it from the WAL.
	shm, err := os.ReadFile(path + "-shm")
	if err != nil && !(errors.Is(err, fs.ErrNotExist) && !ofdLocks) {
		t.Fatal(err)
	}
	for i, b := range shm[:min(len(shm), shmOffReadMarks)] {
		if b != 0 {
			t.Fatalf("-shm byte %d is %#x: the pager wrote a wal-index header", i, b)
		}
	}
}

// A WAL whose frames are all torn is ignored: the main file alone counts.
func TestWALTornIgnored(t *testing.T) {
	path := sqltest.WithWAL(t, []string{"CREATE TABLE t(a)"}, []string{"INSERT INTO t VALUES (1)"})
	w, err := os.ReadFile(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	w[40] ^= 0xff // first frame's page data
	if err := os.WriteFile(path+"-wal", w, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.WALFrames() != 0 {
		t.Fatalf("WALFrames = %d, want 0", p.WALFrames())
	}
}

// Page reads allocate nothing.
func TestPageNoAlloc(t *testing.T) {
	path := sqltest.WithWAL(t, []string{"CREATE TABLE t(a)"}, []string{"INSERT INTO t VALUES (1)"})
	p, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var s Snapshot
	p.InitSnapshot(&s)
	allocs := testing.AllocsPerRun(100, func() {
		a, _ := s.Page(1)
		b, _ := s.Page(2)
		if len(a) == 0 || len(b) == 0 || bytes.Equal(a[:1], []byte{0xff}) {
			panic("bad page")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per read", allocs)
	}
}

// createdFS records the permissions each file was created with, by the
// call that created it.
type createdFS struct {
	vfs.FS
	mu    sync.Mutex
	perms map[string]fs.FileMode
}

func (c *createdFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	if _, err := os.Stat(name); flag&os.O_CREATE != 0 && errors.Is(err, fs.ErrNotExist) {
		c.mu.Lock()
		c.perms[filepath.Base(name)] = perm // the call that makes the file
		c.mu.Unlock()
	}
	return c.FS.OpenFile(name, flag, perm)
}

// TestSideFilesTakeDatabasePerm: the -wal, -journal and -shm files a pager
// creates take the database file's permissions, as sqlite3's do: a
// private database's WAL and journal hold copies of its pages.
func TestSideFilesTakeDatabasePerm(t *testing.T) {
	dir := t.TempDir()
	walPath := filepath.Join(dir, "w.db")
	p := mustOpen(t, walPath, Options{JournalMode: JournalWAL})
	setUserVersion(t, p, 1)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	rbPath := rollbackDB(t)
	for _, path := range []string{walPath, rbPath} {
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfs := &createdFS{FS: vfs.OS, perms: map[string]fs.FileMode{}}

	p = mustOpen(t, walPath, Options{FS: cfs})
	setUserVersion(t, p, 2)
	p.Close()
	p = mustOpen(t, rbPath, Options{FS: cfs})
	setUserVersion(t, p, 3)
	p.Close()
	p = mustOpen(t, walPath, Options{FS: cfs, ReadOnly: true})
	if _, err := os.Stat(walPath + "-shm"); err != nil {
		t.Fatalf("a read-only pager of a WAL-mode file made no -shm file: %v", err)
	}
	p.Close()

	for _, name := range []string{"w.db-wal", "w.db-shm", filepath.Base(rbPath) + "-journal"} {
		perm, ok := cfs.perms[name]
		if !ok {
			t.Errorf("%s was not created", name)
		} else if perm != 0o600 {
			t.Errorf("%s created with %v, want the database's -rw-------", name, perm)
		}
	}
}

// TestSideFilesTakeDatabaseOwner: run as root, a pager gives the files it
// makes beside a user's database that user, as sqlite3 does, so that the
// user can open them afterwards. Only root can give a file away, so the
// test needs root (CI runs as root).
func TestSideFilesTakeDatabaseOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give files away: run as root to test ownSide")
	}
	const uid, gid = 65534, 65534 // nobody, nogroup
	path := filepath.Join(t.TempDir(), "w.db")
	p := mustOpen(t, path, Options{JournalMode: JournalWAL})
	setUserVersion(t, p, 1)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
	owner := func(name string) (int, int) {
		t.Helper()
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		return int(sys.Uid), int(sys.Gid)
	}
	p = mustOpen(t, path, Options{})
	setUserVersion(t, p, 2)
	for _, name := range []string{path + "-wal", path + "-shm"} {
		if u, g := owner(name); u != uid || g != gid {
			t.Errorf("%s owned by %d:%d, want the database's %d:%d", filepath.Base(name), u, g, uid, gid)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = mustOpen(t, path, Options{ReadOnly: true})
	if u, g := owner(path + "-shm"); u != uid || g != gid {
		t.Errorf("the -shm file of a read-only pager owned by %d:%d, want %d:%d", u, g, uid, gid)
	}
	p.Close()
}
