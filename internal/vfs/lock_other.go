//go:build !unix

package vfs

// Lock does nothing where there is no fcntl: pagoda does not lock files on
// these systems, and one process at a time must write a database.
func (f *osFile) Lock(level LockLevel) error {
	f.level = max(f.level, level)
	return nil
}

// Downgrade does nothing but note the level (see Lock).
func (f *osFile) Downgrade() error {
	f.level = min(f.level, LockShared)
	return nil
}

// Unlock does nothing (see Lock).
func (f *osFile) Unlock() error {
	f.level = LockNone
	return nil
}

// LockRange does nothing (see Lock).
func (f *osFile) LockRange(start, n int64, exclusive bool) error { return nil }

// UnlockRange does nothing (see Lock).
func (f *osFile) UnlockRange(start, n int64) error { return nil }

// FileLocks reports false: there are no locks here (see lock_linux.go).
const FileLocks = false

// HeldElsewhere reports no lock (see Lock).
func (f *osFile) HeldElsewhere(start, n int64) (bool, error) { return false, nil }
