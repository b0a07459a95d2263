//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package bench

// maxRSS returns 0: this OS does not report the peak resident memory
// through getrusage.
func maxRSS() int64 { return 0 }

// rssAnon is unknown here.
func rssAnon() (int64, bool) { return 0, false }
