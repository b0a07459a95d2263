package command

import (
	"github.com/pagodadb/pagoda"
)

// csvScanHelp documents scan --csv.
const csvScanHelp = `--csv prints CSV as sqlite3 -csv -header prints it: a header line of the
column names, then one line per row, LF-terminated. A field is written in
double quotes (a quote doubled) when it is empty text or holds a byte that
needs it: a control character, a space, a comma, a quote ' or ", or a byte
of 0x7f and up (non-ASCII text); NULL is an empty field. REALs are
printed as sqlite3 prints them (15 digits); blobs as their raw bytes, as
sqlite3 prints them (it stops at the first NUL byte; pagoda writes them
all), or in hex with --hex. The header is printed for an empty table too,
so that the output imports back with import --csv.`

// appendHeader appends the column names of t, separated by sep (quoted as
// CSV fields when sep is ','), and a newline.
func appendHeader(dst []byte, t *pagoda.Table, sep byte) []byte {
	for i, c := range t.Columns() {
		if i > 0 {
			dst = append(dst, sep)
		}
		if sep == ',' {
			dst = appendCSVField(dst, []byte(c.Name))
		} else {
			dst = append(dst, c.Name...)
		}
	}
	return append(dst, '\n')
}

// appendCSVRow appends rec as one CSV line (see csvScanHelp).
func appendCSVRow(dst []byte, rec pagoda.Record, hexBlobs bool) []byte {
	return appendSeparated(dst, rec, ',', hexBlobs, appendCSVField)
}

// appendCSVField appends b as a CSV field, quoted when sqlite3 quotes it:
// when it is empty or holds a byte of csvQuote.
func appendCSVField(dst, b []byte) []byte {
	quote := len(b) == 0
	for _, c := range b {
		if csvQuote(c) {
			quote = true
			break
		}
	}
	if !quote {
		return append(dst, b...)
	}
	dst = append(dst, '"')
	for _, c := range b {
		if c == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, c)
	}
	return append(dst, '"')
}

// csvQuote reports whether sqlite3 quotes a CSV field holding c: control
// characters and space, the quotes, the comma, and 0x7f and up.
func csvQuote(c byte) bool {
	return c <= ' ' || c == '"' || c == '\'' || c == ',' || c >= 0x7f
}
