package vfs

import (
	"errors"
	"io/fs"
	"os"
)

// osFS is the operating system's file system.
type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := openFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &osFile{f: f}, nil
}

func (osFS) Remove(name string) error { return os.Remove(name) }

func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some systems cannot sync a directory (EINVAL): nothing more to do.
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return err
	}
	return nil
}

func (osFS) Unmap(b []byte) error { return unmapFile(b) }

// osFile is an open file of the operating system.
type osFile struct {
	f     *os.File
	level LockLevel // the lock held (lock_*.go)
}

func (f *osFile) Name() string                             { return f.f.Name() }
func (f *osFile) ReadAt(b []byte, off int64) (int, error)  { return f.f.ReadAt(b, off) }
func (f *osFile) WriteAt(b []byte, off int64) (int, error) { return f.f.WriteAt(b, off) }
func (f *osFile) Sync() error                              { return datasync(f.f) }
func (f *osFile) StartWriteback(off, n int64)              { startWriteback(f.f, off, n) }
func (f *osFile) Truncate(size int64) error                { return f.f.Truncate(size) }
func (f *osFile) Map(size int) ([]byte, error)             { return mapFile(f.f, size) }
func (f *osFile) Close() error                             { return f.f.Close() }

func (f *osFile) MapShared(off int64, size int) ([]byte, error) {
	return mapShared(f.f, off, size)
}

func (f *osFile) Size() (int64, error) {
	st, err := f.f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
