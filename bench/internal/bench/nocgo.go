//go:build !cgo

package bench

// cgoEnabled reports whether mattn/go-sqlite3, which is SQLite's C code
// behind cgo, works in this binary: not when built with CGO_ENABLED=0.
const cgoEnabled = false
