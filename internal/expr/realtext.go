package expr

import (
	"math"
	"math/bits"
	"strconv"
)

// REAL to TEXT, as SQLite 3.54 converts it (vdbeMemRenderNum: "%!.*g"
// with db->nFpDigit, 17 by default). Until 3.4x SQLite printed "%!.15g";
// 3.54 prints up to 17 significant digits, fewer when a shorter form
// reads back as the same double: 0.1 is "0.1", 2^63 is
// "9.2233720368547758e+18", 1e15 is "1000000000000000.0" (the exponent
// form starts past 16 digits before the point), 1e-320 is
// "9.9998886718268301e-321". The "reads back" test is not a shortest
// round-trip search: sqlite3FpDecode takes 18 (sometimes 19) digits from
// an approximate 128-bit product and tries one shorter form only when
// digits 14 and 15 are 99 or 13 to 15 are 000, so the code below is a
// port of sqlite3FpDecode, sqlite3Fp2Convert10 and sqlite3Fp10Convert2
// (util.c, after rsc's fpfmt) rather than strconv's shortest form, which
// differs on numbers such as 1.2345678901234561.

// realText renders a REAL as SQLite 3.54 converts it to TEXT.
func realText(f float64) string { return string(appendRealText(nil, f)) }

func appendRealText(dst []byte, f float64) []byte {
	d := fpDecode(f, 17, 26)
	switch d.special {
	case 1:
		if d.neg {
			return append(dst, "-Inf"...)
		}
		return append(dst, "Inf"...)
	case 2:
		return append(dst, "NaN"...)
	}
	if d.neg {
		dst = append(dst, '-')
	}
	// %!.17g: precision 17 less one; the exponent form outside -4..16.
	precision, exp := 16, d.iDP-1
	eform := exp < -4 || exp > precision
	e2 := d.iDP - 1
	if eform {
		e2 = 0
	} else {
		precision -= exp
	}
	z, j := d.z, 0
	digit := func() byte {
		if j < len(z) {
			j++
			return z[j-1]
		}
		return '0'
	}
	if e2 < 0 {
		dst = append(dst, '0')
	} else {
		for ; e2 >= 0; e2-- {
			dst = append(dst, digit())
		}
	}
	dst = append(dst, '.')
	for e2++; e2 < 0 && precision > 0; precision, e2 = precision-1, e2+1 {
		dst = append(dst, '0')
	}
	for ; precision > 0; precision-- {
		dst = append(dst, digit())
	}
	// Trailing zeros go, but one stays after the point (the "!" flag).
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = append(dst, '0')
	}
	if eform {
		dst = appendExponent(dst, 'e', exp)
	}
	return dst
}

// appendExponent appends an exponent as SQLite's printf writes it: the
// letter e (or E), a sign, and two digits or three.
func appendExponent(dst []byte, e byte, exp int) []byte {
	dst = append(dst, e)
	if exp < 0 {
		dst, exp = append(dst, '-'), -exp
	} else {
		dst = append(dst, '+')
	}
	if exp >= 100 {
		dst, exp = append(dst, byte(exp/100)+'0'), exp%100
	}
	return append(dst, byte(exp/10)+'0', byte(exp%10)+'0')
}

// roundFixed is round(r, n) for 0 < n <= 30 as SQLite's roundFunc does
// it: the text of "%!.*f" read back as a number.
func roundFixed(r float64, n int) float64 {
	d := fpDecode(r, -n, 26)
	if d.special != 0 {
		return r
	}
	// "%!.*f" prints the digits before position iDP+n.
	keep := d.iDP + n
	if keep > len(d.z) {
		keep = len(d.z)
	}
	s := []byte{'0', '.'}
	if d.neg {
		s = []byte{'-', '0', '.'}
	}
	if keep <= 0 {
		s = append(s, '0')
	} else {
		s = append(s, d.z[:keep]...)
	}
	s = append(s, 'e')
	s = strconv.AppendInt(s, int64(d.iDP), 10)
	f, _ := strconv.ParseFloat(string(s), 64)
	return f
}

// fpDecoded is a FpDecode: the significant digits z, the position of the
// decimal point iDP (digits before it), the sign, or an infinity (special
// 1) or NaN (2).
type fpDecoded struct {
	neg     bool
	special int
	z       []byte
	iDP     int
}

// fpDecode is sqlite3FpDecode: r's digits rounded to iRound significant
// digits (iRound > 0, at most mxRound), or to -iRound digits after the
// point (iRound <= 0); trailing zeros dropped.
func fpDecode(r float64, iRound, mxRound int) fpDecoded {
	var p fpDecoded
	switch {
	case r < 0:
		p.neg, r = true, -r
	case r == 0:
		p.z, p.iDP = []byte{'0'}, 1
		return p
	}
	v := math.Float64bits(r)
	e := int(v >> 52 & 0x7ff)
	if e == 0x7ff {
		p.special = 1
		if v != 0x7ff0000000000000 {
			p.special = 2
		}
		return p
	}
	v &= 1<<52 - 1
	if e == 0 {
		nn := bits.LeadingZeros64(v)
		v <<= uint(nn)
		e = -1074 - nn
	} else {
		v = v<<11 | 1<<63
		e -= 1086
	}
	nd := 18
	if iRound > 0 && iRound < 18 {
		nd = iRound + 1
	}
	d, exp := fp2Convert10(v, e, nd)
	buf := strconv.AppendUint([]byte{0, 0}, d, 10) // spare bytes for a leading 0 and a carry
	start := 2
	z := buf[start:]
	n := len(z)
	p.iDP = n + exp
	if iRound <= 0 {
		iRound = p.iDP - iRound
		if iRound == 0 && z[0] >= '5' {
			iRound = 1
			start--
			buf[start] = '0'
			z = buf[start:]
			n++
			p.iDP++
		}
	}
	if iRound > 0 && (iRound < n || n > mxRound) {
		if iRound > mxRound {
			iRound = mxRound
		}
		if iRound == 17 {
			// Precision 17 ("%!.17g"): a shorter form when it reads back
			// as r (49.47 rather than 49.469999999999999).
			num := func(k int) uint64 {
				var x uint64
				for _, c := range z[:k] {
					x = x*10 + uint64(c-'0')
				}
				return x
			}
			if z[15] == '9' && z[14] == '9' {
				jj := 14
				for jj > 0 && z[jj-1] == '9' {
					jj--
				}
				v2 := uint64(1)
				if jj > 0 {
					v2 = num(jj) + 1
				}
				if r == fp10Convert2(v2, exp+n-jj) {
					iRound = jj + 1
				}
			} else if p.iDP >= n || z[15] == '0' && z[14] == '0' && z[13] == '0' {
				jj := 13
				for z[jj-1] == '0' {
					jj--
				}
				if r == fp10Convert2(num(jj), exp+n-jj) {
					iRound = jj + 1
				}
			}
		}
		n = iRound
		if z[iRound] >= '5' {
			for j := iRound - 1; ; j-- {
				z[j]++
				if z[j] <= '9' {
					break
				}
				z[j] = '0'
				if j == 0 {
					start--
					buf[start] = '1'
					z = buf[start:]
					n++
					p.iDP++
					break
				}
			}
		}
	}
	for n > 1 && z[n-1] == '0' {
		n--
	}
	p.z = z[:n]
	return p
}

// pwr10to2 is floor(log2(10^p)), pwr2to10 floor(log10(2^p)), with
// SQLite's approximations.
func pwr10to2(p int) int { return int(int32(p) * 108853 >> 15) }
func pwr2to10(p int) int { return int(int32(p) * 78913 >> 18) }

// fp2Convert10 is sqlite3Fp2Convert10: for r = m*2^e (m's top bit set),
// d and p with r ~ d*10^p, d of at least n digits.
func fp2Convert10(m uint64, e, n int) (d uint64, p int) {
	q := n - 1 - pwr2to10(e+63)
	pw, _ := powerOfTen(q)
	h, _ := bits.Mul64(m, pw)
	if n == 18 {
		h >>= uint(-(e + pwr10to2(q) + 2))
		d = (h + (h<<1)&2) >> 1
	} else {
		d = h >> uint(-(e + pwr10to2(q) + 1))
	}
	return d, -q
}

// fp10Convert2 is sqlite3Fp10Convert2: the double nearest d*10^p.
func fp10Convert2(d uint64, p int) float64 {
	if p < -348 {
		return 0
	}
	if p > 347 {
		return math.Inf(1)
	}
	b := 64 - bits.LeadingZeros64(d)
	lp := pwr10to2(p)
	e := 53 - b - lp
	if e > 1074 {
		if e >= 1130 {
			return 0
		}
		e = 1074
	}
	s := uint(-(e - (64 - b) + lp + 3))
	pwr10h, pwr10l := powerOfTen(p)
	if pwr10l != 0 {
		pwr10h++
		pwr10l = ^pwr10l
	}
	x := d << uint(64-b)
	hi, lo := bits.Mul64(x, pwr10h)
	mid1 := uint32(lo >> 32)
	sticky := uint64(1)
	if hi&(1<<s-1) == 0 {
		h2, _ := bits.Mul64(x, uint64(pwr10l)<<32)
		mid2 := uint32(h2 >> 32)
		sticky = 0
		if mid1-mid2 > 1 {
			sticky = 1
		}
		if mid1 < mid2 {
			hi--
		}
	}
	u := hi>>s | sticky
	if u >= 1<<55-2 {
		u = u>>1 | u&1
		e--
	}
	m := (u + 1 + (u>>2)&1) >> 2
	if e <= -972 {
		return math.Inf(1)
	}
	if m&(1<<52) != 0 {
		m = m&^(1<<52) | uint64(1075-e)<<52
	}
	return math.Float64frombits(m)
}

// powerOfTen is SQLite's powerOfTen: the top 64 bits of 10^p and the
// next 32, for -348 <= p <= 347, from its tables.
func powerOfTen(p int) (uint64, uint32) {
	var g, n int
	switch {
	case p == -1:
		return fpScale[13], fpScaleLo[13]
	case p < 0:
		g, n = p/27, p%27
		if n != 0 {
			g--
			n += 27
		}
	case p < 27:
		return fpBase[p], 0
	default:
		g, n = p/27, p%27
	}
	s := fpScale[g+13]
	if n == 0 {
		return s, fpScaleLo[g+13]
	}
	x, lo := multiply160(s, fpScaleLo[g+13], fpBase[n])
	if x&(1<<63) == 0 {
		x = x<<1 | uint64(lo>>31&1)
		lo = lo<<1 | 1
	}
	return x, lo
}

// multiply160 is sqlite3Multiply160: the top 64 bits of (a<<32+aLo)*b
// and the 32 after them.
func multiply160(a uint64, aLo uint32, b uint64) (uint64, uint32) {
	x2, x1, x0 := a>>32, a&0xffffffff, uint64(aLo)
	y1, y0 := b>>32, b&0xffffffff
	x2y1 := x2 * y1
	r4 := x2y1 >> 32
	x2y0 := x2 * y0
	x1y1 := x1 * y1
	r3 := x2y1&0xffffffff + x2y0>>32 + x1y1>>32
	x1y0 := x1 * y0
	x0y1 := x0 * y1
	r2 := x2y0&0xffffffff + x1y1&0xffffffff + x1y0>>32 + x0y1>>32
	x0y0 := x0 * y0
	r1 := x1y0&0xffffffff + x0y1&0xffffffff + x0y0>>32
	r2 += r1 >> 32
	r3 += r2 >> 32
	return r4<<32 + r3, uint32(r2 & 0xffffffff)
}

// The powers of ten the conversion multiplies by, as SQLite's are:
// fpBase[i] is 10^i, fpScale[i] and fpScaleLo[i] the 96 bits of
// 10^(27*(i-13)) rounded to nearest (at i = 13, 10^-1 truncated), each
// normalized to a top bit of 1. TestPowerTables derives them again.
var fpBase = [27]uint64{
	0x8000000000000000, 0xa000000000000000, 0xc800000000000000, 0xfa00000000000000,
	0x9c40000000000000, 0xc350000000000000, 0xf424000000000000, 0x9896800000000000,
	0xbebc200000000000, 0xee6b280000000000, 0x9502f90000000000, 0xba43b74000000000,
	0xe8d4a51000000000, 0x9184e72a00000000, 0xb5e620f480000000, 0xe35fa931a0000000,
	0x8e1bc9bf04000000, 0xb1a2bc2ec5000000, 0xde0b6b3a76400000, 0x8ac7230489e80000,
	0xad78ebc5ac620000, 0xd8d726b7177a8000, 0x878678326eac9000, 0xa968163f0a57b400,
	0xd3c21bcecceda100, 0x84595161401484a0, 0xa56fa5b99019a5c8,
}

var fpScale = [26]uint64{
	0x8049a4ac0c5811ae, 0xcf42894a5dce35ea, 0xa76c582338ed2621, 0x873e4f75e2224e68,
	0xda7f5bf590966848, 0xb080392cc4349dec, 0x8e938662882af53e, 0xe65829b3046b0afa,
	0xba121a4650e4ddeb, 0x964e858c91ba2655, 0xf2d56790ab41c2a2, 0xc428d05aa4751e4c,
	0x9e74d1b791e07e48, 0xcccccccccccccccc, 0xcecb8f27f4200f3a, 0xa70c3c40a64e6c51,
	0x86f0ac99b4e8dafd, 0xda01ee641a708de9, 0xb01ae745b101e9e4, 0x8e41ade9fbebc27d,
	0xe5d3ef282a242e81, 0xb9a74a0637ce2ee1, 0x95f83d0a1fb69cd9, 0xf24a01a73cf2dccf,
	0xc3b8358109e84f07, 0x9e19db92b4e31ba9,
}

var fpScaleLo = [26]uint32{
	0x205b896d, 0x52064cad, 0xaf2af2b8, 0x5a7744a7, 0xaf39a475, 0xbd8d794e, 0x547eb47b,
	0x0cb4a5a3, 0x92f34d62, 0x3a6a07f9, 0xfae27299, 0xaa97e14c, 0x775ea265, 0xcccccccc,
	0, 0x999090b6, 0x69a028bb, 0xe80e6f48, 0x5ec05dd0, 0x14588f14, 0x8f1668c9, 0x6d953e2c,
	0x4abdaf10, 0xbc633b39, 0x0a862f81, 0x6c07a2c2,
}

// roundFunc is SQLite's round(r, n) for n >= 0 already clamped to 30: a
// value beyond 2^52 has no fraction; n == 0 rounds half away from zero
// through an integer; else roundFixed.
func roundFunc(r float64, n int) float64 {
	switch {
	case r < -4503599627370496.0 || r > 4503599627370496.0:
		return r
	case n == 0:
		h := 0.5
		if r < 0 {
			h = -0.5
		}
		return float64(int64(r + h))
	}
	return roundFixed(r, n)
}
