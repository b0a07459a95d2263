package expr

import (
	"strconv"

	"github.com/pagodadb/pagoda/internal/format"
)

// appendDate appends [-]YYYY-MM-DD, the year's last four digits.
func (x *dateTime) appendDate(b []byte) []byte {
	Y := x.Y
	if Y < 0 {
		b = append(b, '-')
		Y = -Y
	}
	return append(b, byte('0'+Y/1000%10), byte('0'+Y/100%10), byte('0'+Y/10%10), byte('0'+Y%10), '-',
		byte('0'+x.M/10%10), byte('0'+x.M%10), '-', byte('0'+x.D/10%10), byte('0'+x.D%10))
}

// appendTime appends HH:MM:SS, or HH:MM:SS.SSS with 'subsec'.
func (x *dateTime) appendTime(b []byte) []byte {
	b = append(b, byte('0'+x.h/10%10), byte('0'+x.h%10), ':', byte('0'+x.m/10%10), byte('0'+x.m%10), ':')
	if x.useSubsec {
		s := int32(float64(1000*x.s) + 0.5)
		return append(b, byte('0'+s/10000%10), byte('0'+s/1000%10), '.', byte('0'+s/100%10), byte('0'+s/10%10), byte('0'+s%10))
	}
	s := int32(x.s)
	return append(b, byte('0'+s/10%10), byte('0'+s%10))
}

// daysAfterJan01 is the 0-based day of the year of x.
func (x *dateTime) daysAfterJan01() int32 {
	jan01 := *x
	jan01.validJD = false
	jan01.M, jan01.D = 1, 1
	jan01.computeJD()
	return int32((x.iJD - jan01.iJD + 43200000) / 86400000)
}

// daysAfterMonday is the day of the week, 0 Monday to 6 Sunday.
func (x *dateTime) daysAfterMonday() int32 { return int32((x.iJD+43200000)/86400000) % 7 }

// daysAfterSunday is the day of the week, 0 Sunday to 6 Saturday.
func (x *dateTime) daysAfterSunday() int32 { return int32((x.iJD+129600000)/86400000) % 7 }

// isoThursday is x moved to the Thursday of its ISO week.
func (x *dateTime) isoThursday() dateTime {
	y := *x
	y.iJD += int64((3 - x.daysAfterMonday()) * 86400000)
	y.validYMD = false
	y.computeYMD()
	return y
}

// dateInt appends v as C's printf does with %0<w>d (zero) or %<w>d.
func dateInt(b []byte, v int32, w int, zero bool) []byte {
	s := strconv.FormatInt(int64(v), 10)
	neg := v < 0
	if neg {
		s = s[1:]
	}
	pad := w - len(s)
	if neg {
		pad--
	}
	if !zero {
		for ; pad > 0; pad-- {
			b = append(b, ' ')
		}
	}
	if neg {
		b = append(b, '-')
	}
	if zero {
		for ; pad > 0; pad-- {
			b = append(b, '0')
		}
	}
	return append(b, s...)
}

// dateReal appends v by SQLite's printf format f.
func dateReal(b []byte, f string, v float64) []byte {
	out, _ := sqlPrintf([]byte(f), []format.Value{format.FloatValue(v)})
	return append(b, out...)
}

// strftime formats x by f; ok false (NULL) on an unknown conversion.
func (x *dateTime) strftime(f []byte) (b []byte, ok bool) {
	x.computeJD()
	x.computeYMDHMS()
	b = []byte{}
	j := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		b = append(b, f[j:i]...)
		i++
		j = i + 1
		cf := dateAt(f, i)
		switch cf {
		case 'd', 'e':
			b = dateInt(b, x.D, 2, cf == 'd')
		case 'f':
			s := x.s
			if s > 59.999 {
				s = 59.999
			}
			b = dateReal(b, "%06.3f", s)
		case 'F':
			b = dateInt(b, x.Y, 4, true)
			b = append(b, '-')
			b = dateInt(b, x.M, 2, true)
			b = append(b, '-')
			b = dateInt(b, x.D, 2, true)
		case 'G', 'g':
			y := x.isoThursday()
			if cf == 'g' {
				b = dateInt(b, y.Y%100, 2, true)
			} else {
				b = dateInt(b, y.Y, 4, true)
			}
		case 'H', 'k':
			b = dateInt(b, x.h, 2, cf == 'H')
		case 'I', 'l':
			h := x.h
			if h > 12 {
				h -= 12
			}
			if h == 0 {
				h = 12
			}
			b = dateInt(b, h, 2, cf == 'I')
		case 'j':
			b = dateInt(b, x.daysAfterJan01()+1, 3, true)
		case 'J':
			b = dateReal(b, "%.16g", float64(x.iJD)/86400000)
		case 'm':
			b = dateInt(b, x.M, 2, true)
		case 'M':
			b = dateInt(b, x.m, 2, true)
		case 'p', 'P':
			switch {
			case x.h >= 12 && cf == 'p':
				b = append(b, "PM"...)
			case x.h >= 12:
				b = append(b, "pm"...)
			case cf == 'p':
				b = append(b, "AM"...)
			default:
				b = append(b, "am"...)
			}
		case 'R':
			b = dateInt(b, x.h, 2, true)
			b = append(b, ':')
			b = dateInt(b, x.m, 2, true)
		case 's':
			if x.useSubsec {
				b = dateReal(b, "%.3f", float64(x.iJD-210866760000000)/1000)
			} else {
				b = strconv.AppendInt(b, x.iJD/1000-210866760000, 10)
			}
		case 'S':
			b = dateInt(b, int32(x.s), 2, true)
		case 'T':
			b = dateInt(b, x.h, 2, true)
			b = append(b, ':')
			b = dateInt(b, x.m, 2, true)
			b = append(b, ':')
			b = dateInt(b, int32(x.s), 2, true)
		case 'u', 'w':
			c := byte(int8(x.daysAfterSunday()) + '0')
			if c == '0' && cf == 'u' {
				c = '7'
			}
			b = append(b, c)
		case 'U':
			b = dateInt(b, (x.daysAfterJan01()-x.daysAfterSunday()+7)/7, 2, true)
		case 'V':
			y := x.isoThursday()
			b = dateInt(b, y.daysAfterJan01()/7+1, 2, true)
		case 'W':
			b = dateInt(b, (x.daysAfterJan01()-x.daysAfterMonday()+7)/7, 2, true)
		case 'Y':
			b = dateInt(b, x.Y, 4, true)
		case '%':
			b = append(b, '%')
		default:
			return nil, false
		}
		if len(b) > maxExprLength {
			return b, true
		}
	}
	if j < len(f) {
		b = append(b, f[j:]...)
	}
	return b, true
}

// timediff is timediffFunc: d1 - d2 as ±YYYY-MM-DD HH:MM:SS.SSS, in
// whole years and months first; ok false if its month walk would not
// end.
func timediff(d1, d2 dateTime) (b []byte, ok bool) {
	d1.computeYMDHMS()
	d2.computeYMDHMS()
	// date.c's two branches are one walk in the direction dir: d2 is
	// brought to d1's year and month, then stepped a month back (dir 1)
	// or forward (dir -1) until it is no longer past d1.
	sign, dir := byte('+'), int32(1)
	if d1.iJD < d2.iJD {
		sign, dir = '-', -1
	}
	past := func() bool { return int64(dir)*(d2.iJD-d1.iJD) > 0 }
	Y := dir * (d1.Y - d2.Y)
	if Y != 0 {
		d2.Y = d1.Y
		d2.validJD = false
		d2.computeJD()
	}
	M := dir * (d1.M - d2.M)
	if M < 0 {
		Y--
		M += 12
	}
	if M != 0 {
		d2.M = d1.M
		d2.validJD = false
		d2.computeJD()
	}
	const maxSteps = 1000
	for k := 0; past(); k++ {
		if k == maxSteps {
			return nil, false
		}
		M--
		if M < 0 {
			M = 11
			Y--
		}
		d2.M -= dir
		switch {
		case d2.M < 1:
			d2.M = 12
			d2.Y--
		case d2.M > 12:
			d2.M = 1
			d2.Y++
		}
		d2.validJD = false
		d2.computeJD()
	}
	d1.iJD = int64(dir) * (d1.iJD - d2.iJD)
	d1.iJD += 1486995408 * 100000
	d1.clearYMDHMSTZ()
	d1.computeYMDHMS()
	b = append(b, sign)
	b = dateInt(b, Y, 4, true)
	b = append(b, '-')
	b = dateInt(b, M, 2, true)
	b = append(b, '-')
	b = dateInt(b, d1.D-1, 2, true)
	b = append(b, ' ')
	b = dateInt(b, d1.h, 2, true)
	b = append(b, ':')
	b = dateInt(b, d1.m, 2, true)
	b = append(b, ':')
	return dateReal(b, "%06.3f", d1.s), true
}
