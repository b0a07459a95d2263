package pager

import "unsafe"

// AsString returns b's bytes as a string, without copying them: two words
// where a slice takes three, so that a struct holding a page's bytes with
// two more words still fits the four the compiler keeps in registers (a
// Record). The bytes must not change while the string is in use: a read
// transaction's pages never do, and a write transaction's records are
// valid only until its next change.
func AsString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// AsBytes returns the bytes of a string from AsString as a slice whose
// capacity is its length, without copying them. The caller must not write
// to them.
func AsBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
