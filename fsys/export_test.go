package fsys

// Starts returns how many times a compressed stream has been started
// (inflated from its beginning).
func Starts() int64 { return starts.Load() }
