package vfs

// readOnlyFS reports false: Plan 9 has no EROFS; a read-only file server
// refuses writes with a permission error.
func readOnlyFS(error) bool { return false }
