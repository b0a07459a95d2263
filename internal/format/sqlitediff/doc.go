// Package sqlitediff holds differential tests of package format against
// SQLite itself (modernc.org/sqlite, a translation of the C library): key
// order under each collation, record bytes and b-tree pages in files SQLite
// wrote, and local payload sizes as SQLite's dbstat table reports them.
//
// The tests live apart from package format so that fuzzing format does not
// compile and instrument SQLite (go test -fuzz instruments every package in
// the test binary). The package has no non-test code.
package sqlitediff
