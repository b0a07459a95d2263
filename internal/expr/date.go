package expr

import (
	"bytes"
	"fmt"

	"github.com/pagodadb/pagoda/internal/format"
)

// The date and time functions of generated columns, as SQLite 3.54's
// date.c computes them: date, time, datetime, julianday, unixepoch,
// strftime and timediff. A time value is held as date.c's DateTime: a
// julian day in milliseconds (iJD), and/or a year, month and day, and/or
// an hour, minute and seconds, each part computed from the other when
// needed, with date.c's integer and floating-point steps so that results
// are bit for bit SQLite's.
//
// What reads the clock or the time zone ('now', 'localtime', 'utc', a
// time value 'subsec', no time value at all) is not evaluated: SQLite
// fails such a call in a generated column ("non-deterministic use of
// date() in a generated column"), and pagoda reports format.ErrUnsupported at
// the same point, after what SQLite parses before it.

// dateTime is date.c's DateTime (the isUtc and isLocal flags only serve
// 'localtime' and 'utc', which are not evaluated).
type dateTime struct {
	iJD                         int64 // the julian day times 86400000
	Y, M, D                     int32
	h, m                        int32
	tz                          int32 // time zone offset in minutes
	s                           float64
	validJD, validYMD, validHMS bool
	nFloor                      int32 // days that 'floor' takes back
	rawS                        bool  // s holds the raw number of the time value
	isError                     bool
	useSubsec                   bool
}

// maxJD is the julian day of 9999-12-31 23:59:59.999 times 86400000.
const maxJD = 464269060799999

// dateAt is z[i], or the C string's terminating 0 past its end.
func dateAt(z []byte, i int) byte {
	if i < len(z) {
		return z[i]
	}
	return 0
}

// dateSpace is sqlite3Isspace.
func dateSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func dateDigit(c byte) bool { return c >= '0' && c <= '9' }

// dateLower is sqlite3UpperToLower on ASCII.
func dateLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}

// dateEq is sqlite3_stricmp(z, s) == 0.
func dateEq(z []byte, s string) bool { return len(z) == len(s) && datePrefix(z, s) }

// datePrefix is sqlite3_strnicmp(z, s, len(s)) == 0.
func datePrefix(z []byte, s string) bool {
	if len(z) < len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if dateLower(z[i]) != dateLower(s[i]) {
			return false
		}
	}
	return true
}

// getDigits converts z by the spec f (date.c's getDigits): per number
// four characters, the count of digits, the least value, the greatest
// (a 12, b 14, c 24, d 31, e 59, f 14712) and the separator that must
// follow (none for the last). It returns how many numbers it converted.
func getDigits(z []byte, f string, out ...*int32) int {
	mx := [6]int32{12, 14, 24, 31, 59, 14712}
	cnt, pos := 0, 0
	for {
		n, lo, hi := int(f[0]-'0'), int32(f[1]-'0'), mx[f[2]-'a']
		var next byte
		if len(f) > 3 {
			next = f[3]
		}
		var val int32
		for ; n > 0; n-- {
			c := dateAt(z, pos)
			if !dateDigit(c) {
				return cnt
			}
			val = val*10 + int32(c-'0')
			pos++
		}
		if val < lo || val > hi || next != 0 && next != dateAt(z, pos) {
			return cnt
		}
		*out[cnt] = val
		pos++
		cnt++
		if next == 0 {
			return cnt
		}
		f = f[4:]
	}
}

// daysOfMonth is the number of days of month M of year Y.
func daysOfMonth(Y, M int32) int32 {
	switch {
	case M >= 0 && M < 32 && (1<<uint(M))&0x15aa != 0:
		return 31
	case M != 2:
		return 30
	case Y%4 == 0 && (Y%100 != 0 || Y%400 == 0):
		return 29
	}
	return 28
}

// parseTimezone reads an optional [+-]HH:MM or Z (and spaces) that ends
// z; true on a parse error.
func (p *dateTime) parseTimezone(z []byte) bool {
	i := 0
	for dateSpace(dateAt(z, i)) {
		i++
	}
	p.tz = 0
	var sgn int32
	switch c := dateAt(z, i); c {
	case '-':
		sgn = -1
	case '+':
		sgn = 1
	case 'Z', 'z':
		i++
		for dateSpace(dateAt(z, i)) {
			i++
		}
		return dateAt(z, i) != 0
	default:
		return c != 0
	}
	i++
	var nHr, nMn int32
	if getDigits(z[min(i, len(z)):], "20b:20e", &nHr, &nMn) != 2 {
		return true
	}
	i += 5
	p.tz = sgn * (nMn + nHr*60)
	for dateSpace(dateAt(z, i)) {
		i++
	}
	return dateAt(z, i) != 0
}

// parseHhMmSs reads HH:MM[:SS[.FFF]] and a time zone; true on a parse
// error (p may be changed all the same, as in date.c).
func (p *dateTime) parseHhMmSs(z []byte) bool {
	var h, m, s int32
	ms := 0.0
	if getDigits(z, "20c:20e", &h, &m) != 2 {
		return true
	}
	i := 5
	if dateAt(z, i) == ':' {
		i++
		if getDigits(z[min(i, len(z)):], "20e", &s) != 1 {
			return true
		}
		i += 2
		if dateAt(z, i) == '.' && dateDigit(dateAt(z, i+1)) {
			scale := 1.0
			i++
			for dateDigit(dateAt(z, i)) {
				ms = float64(ms*10) + float64(z[i]) - '0'
				scale *= 10
				i++
			}
			ms /= scale
			if ms > 0.999 {
				ms = 0.999
			}
		}
	}
	if h == 24 && (m != 0 || s != 0 || ms != 0) {
		return true
	}
	p.validJD = false
	p.rawS = false
	p.validHMS = true
	p.h, p.m = h, m
	p.s = float64(s) + ms
	return p.parseTimezone(z[min(i, len(z)):])
}

func (p *dateTime) setError() { *p = dateTime{isError: true} }

// computeJD computes iJD from Y-M-D (2000-01-01 when there is none) and
// h:m:s, and applies the time zone.
func (p *dateTime) computeJD() {
	if p.validJD {
		return
	}
	Y, M, D := int32(2000), int32(1), int32(1)
	if p.validYMD {
		Y, M, D = p.Y, p.M, p.D
	} else if p.validHMS && p.h == 24 {
		p.h = 0
		D = 2
	}
	if Y < -4713 || Y > 9999 || p.rawS {
		p.setError()
		return
	}
	if M <= 2 {
		Y--
		M += 12
	}
	A := (Y + 4800) / 100
	B := 38 - A + A/4
	X1 := 36525 * (Y + 4716) / 100
	X2 := 306001 * (M + 1) / 10000
	p.iJD = int64(float64((float64(X1+X2+D+B) - 1524.5) * 86400000))
	p.validJD = true
	if p.validHMS {
		p.iJD += int64(p.h*3600000+p.m*60000) + int64(float64(p.s*1000)+0.5)
		if p.tz != 0 {
			p.iJD -= int64(p.tz * 60000)
			p.validYMD = false
			p.validHMS = false
			p.tz = 0
		}
	}
}

// computeFloor sets nFloor: by how many days D overflows its month.
func (p *dateTime) computeFloor() {
	if mx := daysOfMonth(p.Y, p.M); p.D > mx {
		p.nFloor = p.D - mx
	} else {
		p.nFloor = 0
	}
}

// parseYyyyMmDd reads [-]YYYY-MM-DD and an optional time after spaces
// or T; true on a parse error.
func (p *dateTime) parseYyyyMmDd(z []byte) bool {
	neg := false
	if dateAt(z, 0) == '-' {
		z = z[1:]
		neg = true
	}
	var Y, M, D int32
	if getDigits(z, "40f-21a-21d", &Y, &M, &D) != 3 {
		return true
	}
	i := 10
	for c := dateAt(z, i); dateSpace(c) || c == 'T'; c = dateAt(z, i) {
		i++
	}
	if !p.parseHhMmSs(z[min(i, len(z)):]) {
		if p.h == 24 {
			mx := daysOfMonth(Y, M)
			p.h = 0
			D++
			if D > mx {
				D -= mx
				M++
				if M > 12 {
					M = 1
					Y++
				}
			}
		}
	} else if dateAt(z, i) == 0 {
		p.validHMS = false
	} else {
		return true
	}
	p.validJD = false
	p.validYMD = true
	if neg {
		Y = -Y
	}
	p.Y, p.M, p.D = Y, M, D
	p.computeFloor()
	if p.tz != 0 {
		p.computeJD()
	}
	return false
}

// setRawDateNumber takes a number: a julian day when in range, and the
// raw number for 'unixepoch' and 'auto'.
func (p *dateTime) setRawDateNumber(r float64) {
	p.s = r
	p.rawS = true
	if r >= 0 && r < 5373484.5 {
		p.iJD = int64(float64(r*86400000) + 0.5)
		p.validJD = true
	}
}

// parseDateOrTime reads a TEXT time value. impure names what would read
// the clock; bad reports a value SQLite does not parse.
func (p *dateTime) parseDateOrTime(z []byte) (bad bool, impure string) {
	switch {
	case !p.parseYyyyMmDd(z):
		return false, ""
	case !p.parseHhMmSs(z):
		return false, ""
	case dateEq(z, "now"):
		return true, "'now'"
	}
	if r, rc := atoF(z); rc > 0 {
		p.setRawDateNumber(r)
		return false, ""
	}
	if dateEq(z, "subsec") || dateEq(z, "subsecond") {
		return true, "the time value 'subsec'"
	}
	return true, ""
}

func validJulianDay(iJD int64) bool { return iJD >= 0 && iJD <= maxJD }

// computeYMD computes Y-M-D from iJD (2000-01-01 when there is none).
func (p *dateTime) computeYMD() {
	if p.validYMD {
		return
	}
	switch {
	case !p.validJD:
		p.Y, p.M, p.D = 2000, 1, 1
	case !validJulianDay(p.iJD):
		p.setError()
		return
	default:
		Z := int32((p.iJD + 43200000) / 86400000)
		alpha := int32((float64(Z)+32044.75)/36524.25) - 52
		A := Z + 1 + alpha - (alpha+100)/4 + 25
		B := A + 1524
		C := int32((float64(B) - 122.1) / 365.25)
		D := 36525 * (C & 32767) / 100
		E := int32(float64(B-D) / 30.6001)
		X1 := int32(float64(30.6001 * float64(E)))
		p.D = B - D - X1
		if E < 14 {
			p.M = E - 1
		} else {
			p.M = E - 13
		}
		if p.M > 2 {
			p.Y = C - 4716
		} else {
			p.Y = C - 4715
		}
	}
	p.validYMD = true
}

// computeHMS computes h:m:s from iJD.
func (p *dateTime) computeHMS() {
	if p.validHMS {
		return
	}
	p.computeJD()
	dayMs := int32((p.iJD + 43200000) % 86400000)
	p.s = float64(dayMs%60000) / 1000
	dayMin := dayMs / 60000
	p.m = dayMin % 60
	p.h = dayMin / 60
	p.rawS = false
	p.validHMS = true
}

func (p *dateTime) computeYMDHMS() {
	p.computeYMD()
	p.computeHMS()
}

// setDayTime keeps the date and sets the time of day, for "start of"
// and "end of": the Julian day is computed again from them.
func (p *dateTime) setDayTime(h, m int32, s float64) {
	p.computeYMD()
	p.validHMS = true
	p.h, p.m, p.s = h, m, s
	p.rawS = false
	p.tz = 0
	p.validJD = false
}

func (p *dateTime) clearYMDHMSTZ() {
	p.validYMD = false
	p.validHMS = false
	p.tz = 0
}

// autoAdjustDate is the 'auto' modifier: a raw number is a julian day
// when in that range, else unix seconds when in theirs.
func (p *dateTime) autoAdjustDate() {
	if !p.rawS || p.validJD {
		p.rawS = false
	} else if p.s >= -210866760000 && p.s <= 253402300799 {
		r := float64(p.s*1000) + 210866760000000
		p.clearYMDHMSTZ()
		p.iJD = int64(r + 0.5)
		p.validJD = true
		p.rawS = false
	}
}

// dateXforms are the units of 'NNN units' modifiers, with the limit of
// NNN and the seconds in one unit (float32 constants in date.c).
var dateXforms = [6]struct {
	name         string
	limit, xform float32
}{
	{"second", 4.6427e+14, 1},
	{"minute", 7.7379e+12, 60},
	{"hour", 1.2897e+11, 3600},
	{"day", 5373485.0, 86400},
	{"month", 176546.0, 2592000},
	{"year", 14713.0, 31536000},
}

// normalizeMonth brings M into 1..12, carrying into Y.
func (p *dateTime) normalizeMonth() {
	var x int32
	if p.M > 0 {
		x = (p.M - 1) / 12
	} else {
		x = (p.M - 12) / 12
	}
	p.Y += x
	p.M -= x * 12
}

// parseModifier applies modifier z (the idx-th argument, from 1) to p;
// bad when SQLite refuses it (the result is NULL), impure when it reads
// the time zone.
func (p *dateTime) parseModifier(z []byte, idx int) (bad bool, impure string) {
	if len(z) == 0 {
		return true, ""
	}
	switch dateLower(z[0]) {
	case 'a':
		if dateEq(z, "auto") {
			if idx > 1 {
				return true, ""
			}
			p.autoAdjustDate()
			return false, ""
		}
	case 'c':
		if dateEq(z, "ceiling") {
			p.computeJD()
			p.clearYMDHMSTZ()
			p.nFloor = 0
			return false, ""
		}
	case 'e':
		if !datePrefix(z, "end of ") || !p.validJD && !p.validYMD && !p.validHMS {
			return true, ""
		}
		z = z[7:]
		p.setDayTime(23, 59, 59.999)
		switch {
		case dateEq(z, "month"):
			p.D = 1
			p.M++
			if p.M > 12 {
				p.Y++
				p.M = 1
			}
			p.computeFloor()
			p.computeJD()
			p.iJD -= int64((p.nFloor + 1) * 86400000)
			p.clearYMDHMSTZ()
			return false, ""
		case dateEq(z, "year"):
			p.M, p.D = 12, 31
			return false, ""
		case dateEq(z, "day"):
			return false, ""
		}
	case 'f':
		if dateEq(z, "floor") {
			p.computeJD()
			p.iJD -= int64(p.nFloor * 86400000)
			p.clearYMDHMSTZ()
			return false, ""
		}
	case 'j':
		if dateEq(z, "julianday") {
			if idx > 1 || !p.validJD || !p.rawS {
				return true, ""
			}
			p.rawS = false
			return false, ""
		}
	case 'l':
		if dateEq(z, "localtime") {
			return true, "the modifier 'localtime'"
		}
	case 'u':
		if dateEq(z, "unixepoch") && p.rawS {
			if idx > 1 {
				return true, ""
			}
			r := float64(p.s*1000) + 210866760000000
			if r >= 0 && r < 464269060800000 {
				p.clearYMDHMSTZ()
				p.iJD = int64(r + 0.5)
				p.validJD = true
				p.rawS = false
				return false, ""
			}
		} else if dateEq(z, "utc") {
			return true, "the modifier 'utc'"
		}
	case 'w':
		if !datePrefix(z, "weekday ") {
			break
		}
		r, rc := atoF(z[8:])
		if rc <= 0 || r < -6 || r > 6 {
			break
		}
		n := int32(r)
		if !(r == 0 || float64(n) == r) {
			break
		}
		p.computeYMDHMS()
		p.tz = 0
		p.validJD = false
		p.computeJD()
		Z := (p.iJD + 129600000) / 86400000 % 7
		if n < 0 {
			n = -n
		}
		if Z != int64(n) {
			if Z > int64(n) {
				Z -= 7
			}
			p.iJD += (int64(n) - Z) * 86400000
			if bytes.IndexByte(z[8:], '-') >= 0 {
				p.iJD -= 7 * 86400000
			}
		}
		p.clearYMDHMSTZ()
		return false, ""
	case 's':
		if !datePrefix(z, "start of ") {
			if dateEq(z, "subsec") || dateEq(z, "subsecond") {
				p.useSubsec = true
				return false, ""
			}
			return true, ""
		}
		if !p.validJD && !p.validYMD && !p.validHMS {
			return true, ""
		}
		z = z[9:]
		p.setDayTime(0, 0, 0)
		switch {
		case dateEq(z, "month"):
			p.D = 1
			return false, ""
		case dateEq(z, "year"):
			p.M, p.D = 1, 1
			return false, ""
		case dateEq(z, "day"):
			return false, ""
		}
	case '+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return p.shiftModifier(z), ""
	}
	return true, ""
}

// shiftModifier applies 'NNN units', '±HH:MM[:SS[.FFF]]' and
// '±YYYY-MM-DD[ HH:MM[:SS[.FFF]]]'; true when SQLite refuses it.
func (p *dateTime) shiftModifier(z []byte) bool {
	z0 := z[0]
	var Y, M, D, h, m int32
	n := 1
	for ; n < len(z); n++ {
		c := z[n]
		if c == ':' || dateSpace(c) {
			break
		}
		if c == '-' {
			if n == 5 && getDigits(z[1:], "40f", &Y) == 1 || n == 6 && getDigits(z[1:], "50f", &Y) == 1 {
				break
			}
		}
	}
	r, rc := atoF(z[:n])
	if rc <= 0 {
		return true
	}
	z2, n2 := z, n
	if dateAt(z, n) == '-' {
		// ±YYYY-MM-DD: years, months (0-11) and days (0-30).
		if z0 != '+' && z0 != '-' {
			return true
		}
		if n == 5 {
			if getDigits(z[1:], "40f-20a-20d", &Y, &M, &D) != 3 {
				return true
			}
		} else {
			if getDigits(z[1:], "50f-20a-20d", &Y, &M, &D) != 3 {
				return true
			}
			z = z[1:]
		}
		if M >= 12 || D >= 31 {
			return true
		}
		p.computeYMDHMS()
		p.validJD = false
		if z0 == '-' {
			p.Y -= Y
			p.M -= M
			D = -D
		} else {
			p.Y += Y
			p.M += M
		}
		p.normalizeMonth()
		p.computeFloor()
		p.computeJD()
		p.validHMS = false
		p.validYMD = false
		p.iJD += int64(D) * 86400000
		if dateAt(z, 11) == 0 {
			return false
		}
		if !dateSpace(dateAt(z, 11)) || getDigits(z[min(12, len(z)):], "20c:20e", &h, &m) != 2 {
			return true
		}
		z2, n2 = z[12:], 2
	}
	if dateAt(z2, n2) == ':' {
		// ±HH:MM[:SS[.FFF]]: the time of day, less whole days.
		if !dateDigit(z2[0]) {
			z2 = z2[1:]
		}
		var tx dateTime
		if tx.parseHhMmSs(z2) {
			return true
		}
		tx.computeJD()
		tx.iJD -= 43200000
		day := tx.iJD / 86400000
		tx.iJD -= day * 86400000
		if z0 == '-' {
			tx.iJD = -tx.iJD
		}
		p.computeJD()
		p.clearYMDHMSTZ()
		p.iJD += tx.iJD
		return false
	}
	// NNN units
	u := z[n:]
	for len(u) > 0 && dateSpace(u[0]) {
		u = u[1:]
	}
	if len(u) < 3 || len(u) > 10 {
		return true
	}
	nu := len(u)
	if dateLower(u[nu-1]) == 's' {
		nu--
	}
	p.computeJD()
	rounder := 0.5
	if r < 0 {
		rounder = -0.5
	}
	p.nFloor = 0
	bad := true
	for i, x := range dateXforms {
		if len(x.name) != nu || !datePrefix(u, x.name) || !(r > -float64(x.limit) && r < float64(x.limit)) {
			continue
		}
		switch i {
		case 4: // months
			p.computeYMDHMS()
			p.M += int32(r)
			p.normalizeMonth()
			p.computeFloor()
			p.validJD = false
			r -= float64(int32(r))
		case 5: // years
			y := int32(r)
			p.computeYMDHMS()
			p.Y += y
			p.computeFloor()
			p.validJD = false
			r -= float64(int32(r))
		}
		p.computeJD()
		p.iJD += int64(float64(float64(r*1000)*float64(x.xform)) + rounder)
		bad = false
		break
	}
	p.clearYMDHMSTZ()
	return bad
}

// dateCString is sqlite3_value_text as a C string: the text of v up to
// its first NUL; nil for NULL.
func dateCString(v format.Value) []byte {
	if v.Kind == format.KindNull {
		return nil
	}
	b := textOf(v)
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// isDate reads a time value and its modifiers into p (date.c's isDate):
// ok false makes the call NULL; impure names what reads the clock or
// the time zone.
func (p *dateTime) isDate(args []format.Value) (ok bool, impure string) {
	*p = dateTime{}
	if len(args) == 0 {
		return false, "no time value (the current time)"
	}
	switch v := args[0]; v.Kind {
	case format.KindInt:
		p.setRawDateNumber(float64(v.Int()))
	case format.KindFloat:
		p.setRawDateNumber(v.Float())
	case format.KindNull:
		return false, ""
	default:
		if bad, impure := p.parseDateOrTime(dateCString(v)); bad {
			return false, impure
		}
	}
	for i := 1; i < len(args); i++ {
		z := dateCString(args[i])
		if z == nil {
			return false, ""
		}
		if bad, impure := p.parseModifier(z, i); bad {
			return false, impure
		}
	}
	p.computeJD()
	if p.isError || !validJulianDay(p.iJD) {
		return false, ""
	}
	if len(args) == 1 && p.validYMD && p.D > 28 {
		p.validYMD = false // normalize 2023-02-31 to 2023-03-03
	}
	return true, ""
}

// dateFunc evaluates date function fn on its evaluated arguments.
func (r *exprRow) dateFunc(fn string, args []format.Value) format.Value {
	var x dateTime
	isDate := func(a []format.Value) bool {
		ok, impure := x.isDate(a)
		if impure != "" {
			r.fail(fmt.Errorf("%w: %s() with %s, which SQLite refuses in a generated column (non-deterministic)", format.ErrUnsupported, fn, impure))
		}
		return ok
	}
	switch fn {
	case "julianday":
		if !isDate(args) {
			return format.NullValue()
		}
		return format.FloatValue(float64(x.iJD) / 86400000)
	case "unixepoch":
		if !isDate(args) {
			return format.NullValue()
		}
		if x.useSubsec {
			return format.FloatValue(float64(x.iJD-210866760000000) / 1000)
		}
		return format.IntValue(x.iJD/1000 - 210866760000)
	case "date":
		if !isDate(args) {
			return format.NullValue()
		}
		x.computeYMD()
		return format.TextValue(x.appendDate(nil))
	case "time":
		if !isDate(args) {
			return format.NullValue()
		}
		x.computeHMS()
		return format.TextValue(x.appendTime(nil))
	case "datetime":
		if !isDate(args) {
			return format.NullValue()
		}
		x.computeYMDHMS()
		b := append(x.appendDate(nil), ' ')
		return format.TextValue(x.appendTime(b))
	case "strftime":
		if len(args) == 0 {
			return format.NullValue()
		}
		f := dateCString(args[0])
		if f == nil || !isDate(args[1:]) {
			return format.NullValue()
		}
		b, ok := x.strftime(f)
		if !ok {
			return format.NullValue()
		}
		if len(b) > maxExprLength {
			return r.fail(errTooBig)
		}
		return format.TextValue(b)
	case "timediff":
		var y dateTime
		if !isDate(args[:1]) {
			return format.NullValue()
		}
		y, x = x, dateTime{}
		if !isDate(args[1:2]) {
			return format.NullValue()
		}
		b, ok := timediff(y, x)
		if !ok {
			return r.fail(fmt.Errorf("%w: timediff(%s, %s) does not end", format.ErrUnsupported, textOf(args[0]), textOf(args[1])))
		}
		return format.TextValue(b)
	}
	return r.fail(fmt.Errorf("%w: function %s", format.ErrUnsupported, fn))
}
