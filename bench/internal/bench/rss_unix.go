//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package bench

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// maxRSS returns the peak resident memory of this process in bytes.
//
// On Linux it is VmHWM from /proc/self/status, the peak of the process's
// own address space: getrusage's ru_maxrss would not do for a child
// process, since Linux carries the peak of the address space the process
// had before execve over into it, and Go starts children with vfork, so
// that a child's ru_maxrss is at least its parent's peak.
func maxRSS() int64 {
	if runtime.GOOS == "linux" {
		if n, ok := vmHWM(); ok {
			return n
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Maxrss) * maxRSSUnit()
}

// vmHWM returns the VmHWM line of /proc/self/status, in bytes.
func vmHWM() (int64, bool) { return procStatus("VmHWM:") }

// rssAnon returns the anonymous resident memory of this process, in bytes
// (RssAnon of /proc/self/status; Linux only).
func rssAnon() (int64, bool) {
	if runtime.GOOS != "linux" {
		return 0, false
	}
	return procStatus("RssAnon:")
}

// procStatus returns the line of /proc/self/status that starts with key,
// a size in kB, in bytes.
func procStatus(key string) (int64, bool) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte(key))
		if !ok {
			continue
		}
		f := bytes.Fields(rest) // "123456 kB"
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		return kb * 1024, err == nil
	}
	return 0, false
}
