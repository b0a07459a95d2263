package fsys

import "io/fs"

// The st_mode bits that sqlar's mode column holds (POSIX <sys/stat.h>).
const (
	sIFMT   = 0o170000 // the file type bits
	sIFSOCK = 0o140000
	sIFLNK  = 0o120000
	sIFREG  = 0o100000
	sIFBLK  = 0o060000
	sIFDIR  = 0o040000
	sIFCHR  = 0o020000
	sIFIFO  = 0o010000
	sISUID  = 0o4000
	sISGID  = 0o2000
	sISVTX  = 0o1000
)

// fileMode converts an st_mode to a Go file mode. A mode with no type bits
// is a regular file, as sqlite3 -x takes it.
func fileMode(st int64) fs.FileMode {
	m := fs.FileMode(st & 0o777)
	switch st & sIFMT {
	case sIFDIR:
		m |= fs.ModeDir
	case sIFLNK:
		m |= fs.ModeSymlink
	case sIFIFO:
		m |= fs.ModeNamedPipe
	case sIFSOCK:
		m |= fs.ModeSocket
	case sIFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case sIFBLK:
		m |= fs.ModeDevice
	}
	if st&sISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st&sISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st&sISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// stMode converts a Go file mode to the st_mode sqlite3 stores.
func stMode(m fs.FileMode) int64 {
	st := int64(m.Perm())
	switch {
	case m&fs.ModeDir != 0:
		st |= sIFDIR
	case m&fs.ModeSymlink != 0:
		st |= sIFLNK
	case m&fs.ModeNamedPipe != 0:
		st |= sIFIFO
	case m&fs.ModeSocket != 0:
		st |= sIFSOCK
	case m&fs.ModeCharDevice != 0:
		st |= sIFCHR
	case m&fs.ModeDevice != 0:
		st |= sIFBLK
	default:
		st |= sIFREG
	}
	if m&fs.ModeSetuid != 0 {
		st |= sISUID
	}
	if m&fs.ModeSetgid != 0 {
		st |= sISGID
	}
	if m&fs.ModeSticky != 0 {
		st |= sISVTX
	}
	return st
}
