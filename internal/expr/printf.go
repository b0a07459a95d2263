package expr

import (
	"bytes"
	"strconv"

	"github.com/pagodadb/pagoda/internal/format"
)

// printf(FORMAT, ...) and format(...), and quote(X), as SQLite 3.54's
// printfFunc and quoteFunc compute them: sqlite3_str_vappendf of
// printf.c with SQLITE_PRINTF_SQLFUNC, the arguments taken from the SQL
// values (an integer by sqlite3_value_int64, a REAL by
// sqlite3_value_double, a text by sqlite3_value_text: up to a NUL byte,
// and none for NULL), a missing argument reading as 0, 0.0 or none.
//
// The rules that differ from C's printf, all SQLite's:
//
//   - An unknown conversion (and %T, %S, or a format that ends inside a
//     conversion) ends the output there: what came before is the result.
//   - Width and precision from '*' are the argument as a 32-bit integer;
//     a negative width left-justifies, a negative precision is its
//     absolute value. Written widths and precisions are taken modulo 2^31.
//   - '0' pads integers through their precision (also with '-'), so ','
//     groups the padding zeros too; '#' gives 0, 0x and 0X to %o %x %X
//     (and %p, which is %X of the integer); %r adds the English ordinal
//     suffix.
//   - Floats take their digits from sqlite3FpDecode (fpDecode): 16
//     significant digits at most, 20 with '!', the rest zeros; the precision
//     is capped at 100,000,000. %g's precision 0 is 1. '!' keeps one 0
//     after the point of %g where C drops it; "#" with %f drops the minus
//     of a value that shows as zero. An infinity is Inf, -Inf, +Inf (with
//     '+' or ' '), or with '0' a 9 followed by 999 zeros; a NaN is NaN, or
//     null with '0'.
//   - %c is the first character of the argument's text (a NUL byte when
//     it has none), repeated precision times; with '!' (always for %c)
//     widths count characters, as precisions do for %s, %q, %Q, %w, %j.
//   - %q doubles ', %Q also quotes (NULL for none), %w doubles "; with
//     '#', %q and %Q escape backslashes and control characters as
//     unistr() reads them (%#Q only when there is a control character,
//     then as unistr('...')). %j and %J escape as a JSON string (%J with
//     its quotes, null for none).
//   - No result may reach SQLITE_MAX_LENGTH (maxExprLength) bytes: that
//     is SQLite's "string or blob too big", checked before anything is
//     allocated, whatever the width or precision asks for.

// printfAcc is the text being made (sqlite3_str): err is set when it
// would reach maxExprLength, and nothing is added after that.
type printfAcc struct {
	b   []byte
	err bool
}

// room reports whether n more bytes fit (sqlite3StrAccumEnlarge: the
// text and its terminator within the limit), setting err when not.
func (a *printfAcc) room(n int64) bool {
	if a.err || n < 0 || int64(len(a.b))+n+1 > int64(maxExprLength) {
		a.err = true
		return false
	}
	return true
}

func (a *printfAcc) add(b []byte) {
	if len(b) > 0 && a.room(int64(len(b))) {
		a.b = append(a.b, b...)
	}
}

// pad adds n copies of c.
func (a *printfAcc) pad(n int64, c byte) {
	if n > 0 && a.room(n) {
		for ; n > 0; n-- {
			a.b = append(a.b, c)
		}
	}
}

// The conversions of fmtinfo.
const (
	ptRadix = iota
	ptFloat
	ptExp
	ptGeneric
	ptSize
	ptString
	ptPercent
	ptChar
	ptEscq
	ptEscQ
	ptEscw
	ptEscj
	ptEscJ
	ptStop // %T and %S, internal to SQLite: the output ends
	ptPointer
	ptOrdinal
	ptDecimal
)

// printfConv is one entry of fmtinfo.
type printfConv struct {
	ok      bool
	typ     byte
	base    byte
	signed  bool
	charset byte // offset into printfDigits
	prefix  byte // offset into printfPrefix
}

const (
	printfDigits = "0123456789ABCDEF0123456789abcdef"
	printfPrefix = "-x0\x00X0\x00"
)

var printfConvs = [256]printfConv{
	'd': {true, ptDecimal, 10, true, 0, 0}, 'i': {true, ptDecimal, 10, true, 0, 0}, 'u': {true, ptDecimal, 10, false, 0, 0},
	'x': {true, ptRadix, 16, false, 16, 1}, 'X': {true, ptRadix, 16, false, 0, 4}, 'o': {true, ptRadix, 8, false, 0, 2},
	'p': {true, ptPointer, 16, false, 0, 1}, 'r': {true, ptOrdinal, 10, true, 0, 0},
	'f': {true, ptFloat, 0, true, 0, 0}, 'e': {true, ptExp, 0, true, 30, 0}, 'E': {true, ptExp, 0, true, 14, 0},
	'g': {true, ptGeneric, 0, true, 30, 0}, 'G': {true, ptGeneric, 0, true, 14, 0},
	's': {ok: true, typ: ptString}, 'z': {ok: true, typ: ptString}, 'c': {ok: true, typ: ptChar},
	'q': {ok: true, typ: ptEscq}, 'Q': {ok: true, typ: ptEscQ}, 'w': {ok: true, typ: ptEscw},
	'j': {ok: true, typ: ptEscj}, 'J': {ok: true, typ: ptEscJ},
	'n': {ok: true, typ: ptSize}, '%': {ok: true, typ: ptPercent},
	'T': {ok: true, typ: ptStop}, 'S': {ok: true, typ: ptStop},
}

// printfArgs are printf's arguments after the format.
type printfArgs struct {
	v    []format.Value
	used int
}

func (p *printfArgs) next() (format.Value, bool) {
	if p.used >= len(p.v) {
		return format.Value{}, false
	}
	p.used++
	return p.v[p.used-1], true
}

func (p *printfArgs) int() int64 {
	v, ok := p.next()
	if !ok {
		return 0
	}
	return IntValue(v)
}

func (p *printfArgs) float() float64 {
	v, ok := p.next()
	if !ok {
		return 0
	}
	return sqlRealValue(v)
}

// text is sqlite3_value_text: nil (no text) for NULL or a missing
// argument.
func (p *printfArgs) text() ([]byte, bool) {
	v, ok := p.next()
	if !ok || v.Kind == format.KindNull {
		return nil, false
	}
	return cutNUL(textOf(v)), true
}

// sqlPrintf is printf(f, args...) for a format f that is not NULL: the
// text, or false when it would be too big.
func sqlPrintf(f []byte, args []format.Value) ([]byte, bool) {
	a := printfAcc{b: []byte{}}
	a.printf(cutNUL(f), &printfArgs{v: args})
	if a.err {
		return nil, false
	}
	return a.b, true
}

// printf is sqlite3_str_vappendf.
func (a *printfAcc) printf(f []byte, args *printfArgs) {
	at := func(k int) byte {
		if k < len(f) {
			return f[k]
		}
		return 0
	}
	for i := 0; i < len(f) && !a.err; i++ {
		if f[i] != '%' {
			j := bytes.IndexByte(f[i:], '%')
			if j < 0 {
				a.add(f[i:])
				return
			}
			a.add(f[i : i+j])
			i += j
		}
		i++
		c := at(i)
		if c == 0 {
			a.add([]byte{'%'})
			return
		}
		var left, alt, alt2, zeropad bool
		var flagPrefix, thousand byte
		width, precision := int64(0), int64(-1)
		for done := false; ; {
			switch c {
			case '-':
				left = true
			case '+', ' ':
				flagPrefix = c
			case '#':
				alt = true
			case '!':
				alt2 = true
			case '0':
				zeropad = true
			case ',':
				thousand = ','
			case 'l':
				i++
				if c = at(i); c == 'l' {
					i++
					c = at(i)
				}
				done = true
			case '1', '2', '3', '4', '5', '6', '7', '8', '9':
				wx := uint32(c - '0')
				for i++; at(i) >= '0' && at(i) <= '9'; i++ {
					wx = wx*10 + uint32(at(i)-'0')
				}
				c = at(i)
				width = int64(wx & 0x7fffffff)
				if c != '.' && c != 'l' {
					done = true
				} else {
					i--
				}
			case '*':
				width = int64(int32(args.int()))
				if width < 0 {
					left = true
					if width >= -2147483647 {
						width = -width
					} else {
						width = 0
					}
				}
				if c = at(i + 1); c != '.' && c != 'l' {
					i++
					done = true
				}
			case '.':
				i++
				if c = at(i); c == '*' {
					precision = int64(int32(args.int()))
					if precision < 0 {
						if precision >= -2147483647 {
							precision = -precision
						} else {
							precision = -1
						}
					}
					i++
					c = at(i)
				} else {
					px := uint32(0)
					for ; c >= '0' && c <= '9'; c = at(i) {
						px = px*10 + uint32(c-'0')
						i++
					}
					precision = int64(px & 0x7fffffff)
				}
				if c == 'l' {
					i--
				} else {
					done = true
				}
			default:
				done = true
			}
			if done {
				break
			}
			i++
			if c = at(i); c == 0 {
				break
			}
		}
		info := printfConvs[c]
		if !info.ok || info.typ == ptStop {
			return
		}
		var out []byte // the conversion's text, padded to width below
		switch info.typ {
		case ptPointer, ptOrdinal, ptRadix, ptDecimal:
			if info.typ != ptDecimal {
				thousand = 0
			}
			out = a.printfInt(info, args, thousand, flagPrefix, alt, zeropad, width, precision)
			if out == nil {
				return
			}
		case ptFloat, ptExp, ptGeneric:
			var done bool
			out, done = a.printfFloat(info, args.float(), thousand, flagPrefix, left, alt, alt2, zeropad, width, precision)
			if done {
				continue
			}
		case ptSize:
			width = 0
		case ptPercent:
			out = []byte{'%'}
		case ptChar:
			s, ok := args.text()
			out = []byte{0}
			if ok && len(s) > 0 {
				n := 1
				if s[0]&0xc0 == 0xc0 {
					for n < 4 && n < len(s) && s[n]&0xc0 == 0x80 {
						n++
					}
				}
				out = s[:n]
			}
			if precision > 1 {
				width -= precision - 1
				if width > 1 && !left {
					a.pad(width-1, ' ')
					width = 0
				}
				a.add(out)
				prior := int64(1)
				for precision--; precision > 1; prior *= 2 {
					// Doubling: copy what is there, up to precision-1.
					prior = min(prior, precision-1)
					n := int64(len(out)) * prior
					if !a.room(n) {
						return
					}
					a.b = append(a.b, a.b[int64(len(a.b))-n:]...)
					precision -= prior
				}
			}
			alt2 = true
		case ptString:
			s, _ := args.text()
			out = s
			if precision >= 0 {
				if alt2 {
					z := s
					for ; precision > 0 && len(z) > 0; precision-- {
						z = z[skipUTF8(z):]
					}
					out = s[:len(s)-len(z)]
				} else if precision < int64(len(s)) {
					out = s[:precision]
				}
			}
		case ptEscj, ptEscJ:
			a.printfJSON(info.typ == ptEscJ, args, left, alt2, width, precision)
			continue
		case ptEscq, ptEscQ, ptEscw:
			out = a.printfQuote(info.typ, args, alt, alt2, precision)
			if out == nil {
				return
			}
		}
		if alt2 && width > 0 {
			// Widths count characters: each continuation byte widens.
			for _, b := range out {
				if b&0xc0 == 0x80 {
					width++
				}
			}
		}
		if width -= int64(len(out)); width > 0 {
			if !left {
				a.pad(width, ' ')
			}
			a.add(out)
			if left {
				a.pad(width, ' ')
			}
		} else {
			a.add(out)
		}
	}
}

// printfInt renders %d %i %u %x %X %o %p %r; nil when too big.
func (a *printfAcc) printfInt(info printfConv, args *printfArgs, thousand, flagPrefix byte, alt, zeropad bool, width, precision int64) []byte {
	var lv uint64
	var prefix byte
	if info.signed {
		if v := args.int(); v < 0 {
			lv, prefix = uint64(^v)+1, '-'
		} else {
			lv, prefix = uint64(v), flagPrefix
		}
	} else {
		lv = uint64(args.int())
	}
	if lv == 0 {
		alt = false
	}
	sign := int64(0)
	if prefix != 0 {
		sign = 1
	}
	if zeropad && precision < width-sign {
		precision = width - sign
	}
	if precision >= 70-10-70/3 {
		// printfTempBuf: a buffer over the limit is too big.
		n := precision + 10
		if thousand != 0 {
			n += precision / 3
		}
		if n > int64(maxExprLength) {
			a.err = true
			return nil
		}
	}
	var digits [24]byte
	k := len(digits)
	if info.typ == ptOrdinal {
		x := lv % 10
		if x >= 4 || lv/10%10 == 1 {
			x = 0
		}
		k -= 2
		copy(digits[k:], "thstndrd"[2*x:2*x+2])
	}
	cset := printfDigits[info.charset:]
	base := uint64(info.base)
	for {
		k--
		digits[k] = cset[lv%base]
		if lv /= base; lv == 0 {
			break
		}
	}
	body := digits[k:]
	zeros := max(precision-int64(len(body)), 0)
	n := zeros + int64(len(body))
	out := make([]byte, 0, n+n/3+4)
	if alt && info.prefix != 0 {
		// The prefix string is pushed before the digits in reverse.
		p := printfPrefix[info.prefix:]
		p = p[:bytes.IndexByte([]byte(p), 0)]
		for i := len(p) - 1; i >= 0; i-- {
			out = append(out, p[i])
		}
	}
	if prefix != 0 {
		out = append(out, prefix)
	}
	// The digits after zeros, grouped by thousands from the right.
	for i := int64(0); i < n; i++ {
		if thousand != 0 && i > 0 && (n-i)%3 == 0 {
			out = append(out, thousand)
		}
		d := byte('0')
		if i >= zeros {
			d = body[i-zeros]
		}
		out = append(out, d)
	}
	return out
}

// printfFloat renders %f %e %E %g %G. done says it has added the text,
// padded, itself (or failed); else out is to be padded as any other.
func (a *printfAcc) printfFloat(info printfConv, r float64, thousand, flagPrefix byte, left, alt, alt2, zeropad bool, width, precision int64) (out []byte, done bool) {
	typ := info.typ
	if precision < 0 {
		precision = 6
	}
	if precision > 100000000 { // SQLITE_FP_PRECISION_LIMIT
		precision = 100000000
	}
	var iRound int
	switch typ {
	case ptFloat:
		iRound = -int(precision)
	case ptGeneric:
		if precision == 0 {
			precision = 1
		}
		iRound = int(precision)
	default:
		iRound = int(precision) + 1
	}
	mx := 16
	if alt2 {
		mx = 20
	}
	s := fpDecode(r, iRound, mx)
	switch s.special {
	case 2:
		if zeropad {
			return []byte("null"), false
		}
		return []byte("NaN"), false
	case 1:
		if !zeropad {
			switch {
			case s.neg:
				return []byte("-Inf"), false
			case flagPrefix != 0:
				return []byte{flagPrefix, 'I', 'n', 'f'}, false
			}
			return []byte("Inf"), false
		}
		s.z, s.iDP = []byte{'9'}, 1000
	}
	var prefix byte
	switch {
	case !s.neg:
		prefix = flagPrefix
	case alt && flagPrefix == 0 && typ == ptFloat && s.iDP <= iRound:
		// %#f of a negative number that shows as zero: no minus.
	default:
		prefix = '-'
	}
	exp := s.iDP - 1
	rtz := alt2
	if typ == ptGeneric {
		precision--
		rtz = !alt
		if exp < -4 || int64(exp) > precision {
			typ = ptExp
		} else {
			precision -= int64(exp)
			typ = ptFloat
		}
	}
	e2 := 0
	if typ != ptExp {
		e2 = s.iDP - 1
	}
	need := int64(max(e2, 0)) + precision + width + 10
	if thousand != 0 && e2 > 0 {
		need += int64((e2 + 2) / 3)
	}
	if !a.room(need) {
		return nil, true
	}
	z, n := s.z, len(s.z)
	out = make([]byte, 0, need)
	dp := precision > 0 || alt || alt2
	if prefix != 0 {
		out = append(out, prefix)
	}
	j := 0
	switch {
	case e2 < 0:
		out = append(out, '0')
	case thousand != 0:
		for ; e2 >= 0; e2-- {
			d := byte('0')
			if j < n {
				d, j = z[j], j+1
			}
			out = append(out, d)
			if e2%3 == 0 && e2 > 1 {
				out = append(out, ',')
			}
		}
	default:
		j = min(e2+1, n)
		out = append(out, z[:j]...)
		if e2 -= j; e2 >= 0 {
			out = appendZeros(out, int64(e2+1))
			e2 = -1
		}
	}
	if dp {
		out = append(out, '.')
	}
	if e2 < -1 && precision > 0 {
		nn := min(int64(-1-e2), precision)
		out = appendZeros(out, nn)
		precision -= nn
	}
	if precision > 0 {
		nn := min(int64(n-j), precision)
		if nn > 0 {
			out = append(out, z[j:j+int(nn)]...)
			precision -= nn
		}
		if precision > 0 && !rtz {
			out = appendZeros(out, precision)
		}
	}
	if rtz && dp {
		for out[len(out)-1] == '0' {
			out = out[:len(out)-1]
		}
		if out[len(out)-1] == '.' {
			if alt2 {
				out = append(out, '0')
			} else {
				out = out[:len(out)-1]
			}
		}
	}
	if typ == ptExp {
		out = appendExponent(out, printfDigits[info.charset], s.iDP-1)
	}
	if length := int64(len(out)); length < width {
		nPad := width - length
		switch {
		case left:
			for ; nPad > 0; nPad-- {
				out = append(out, ' ')
			}
		case !zeropad:
			out = append(bytes.Repeat([]byte{' '}, int(nPad)), out...)
		default:
			adj := 0
			if prefix != 0 {
				adj = 1
			}
			padded := make([]byte, 0, width)
			padded = append(padded, out[:adj]...)
			padded = appendZeros(padded, nPad)
			out = append(padded, out[adj:]...)
		}
	}
	a.add(out)
	return nil, true
}

func appendZeros(b []byte, n int64) []byte {
	for ; n > 0; n-- {
		b = append(b, '0')
	}
	return b
}

// printfQuote renders %q %Q %w; nil when too big.
func (a *printfAcc) printfQuote(typ byte, args *printfArgs, alt, alt2 bool, precision int64) []byte {
	esc, ok := args.text()
	needQuote := 0
	switch {
	case !ok && typ == ptEscQ:
		esc = []byte("NULL")
	case !ok:
		esc = []byte("(NULL)")
	case typ == ptEscQ:
		needQuote = 1
	}
	q := byte('\'')
	if typ == ptEscw {
		q, alt = '"', false
	}
	// The precision counts bytes, or characters with '!'.
	i, n := 0, int64(0)
	for k := precision; k != 0 && i < len(esc); i, k = i+1, k-1 {
		ch := esc[i]
		if ch == q {
			n++
		}
		if alt2 && ch&0xc0 == 0xc0 {
			for i+1 < len(esc) && esc[i+1]&0xc0 == 0x80 {
				i++
			}
		}
	}
	esc = esc[:i]
	if alt {
		var nBack, nCtrl int64
		for _, ch := range esc {
			if ch == '\\' {
				nBack++
			} else if ch <= 0x1f {
				nCtrl++
			}
		}
		if nCtrl != 0 || typ == ptEscq {
			n += nBack + 5*nCtrl
			if typ == ptEscQ {
				n += 10
				needQuote = 2
			}
		} else {
			alt = false
		}
	}
	if n += int64(i) + 3; n > int64(maxExprLength) {
		a.err = true
		return nil
	}
	out := make([]byte, 0, n)
	switch needQuote {
	case 1:
		out = append(out, '\'')
	case 2:
		out = append(out, "unistr('"...)
	}
	for _, ch := range esc {
		switch {
		case ch == q:
			out = append(out, ch, ch)
		case alt && ch == '\\':
			out = append(out, '\\', '\\')
		case alt && ch <= 0x1f:
			hi := byte('0')
			if ch >= 0x10 {
				hi = '1'
			}
			out = append(out, '\\', 'u', '0', '0', hi, "0123456789abcdef"[ch&0xf])
		default:
			out = append(out, ch)
		}
	}
	switch needQuote {
	case 1:
		out = append(out, '\'')
	case 2:
		out = append(out, '\'', ')')
	}
	return out
}

// printfJSON renders %j and %J (quoted) straight into a, padding it to
// width itself.
func (a *printfAcc) printfJSON(quoted bool, args *printfArgs, left, alt2 bool, width, precision int64) {
	esc, ok := args.text()
	start := len(a.b)
	if !ok {
		if quoted {
			a.add([]byte("null"))
		}
	} else {
		if quoted {
			a.add([]byte{'"'})
		}
		px := precision
		if px < 0 {
			px = 0x7fffffff
		} else if alt2 {
			// Characters to bytes.
			i := int64(0)
			for ; i < px && i < int64(len(esc)); i++ {
				if esc[i]&0xc0 == 0x80 {
					px++
				}
			}
			if i == px {
				for px < int64(len(esc)) && esc[px]&0xc0 == 0x80 {
					px++
				}
			}
		}
		px = min(px, int64(len(esc)))
		j := int64(0)
		for i := int64(0); i < px; i++ {
			ch := esc[i]
			if ch > 0x1f && ch != '"' && ch != '\\' {
				continue
			}
			a.add(esc[j:i])
			j = i + 1
			switch {
			case ch > 0x1f:
				a.add([]byte{'\\', ch})
			case 1<<ch&0x3700 != 0:
				a.add([]byte{'\\', "btn?fr"[ch-8]})
			default:
				a.add([]byte{'\\', 'u', '0', '0', "0123456789abcdef"[ch>>4], "0123456789abcdef"[ch&0xf]})
			}
		}
		a.add(esc[j:px])
		if quoted {
			a.add([]byte{'"'})
		}
	}
	if width > 0 && !a.err {
		n := int64(len(a.b) - start)
		chars := n
		if alt2 {
			for _, b := range a.b[start:] {
				if b&0xc0 == 0x80 {
					chars--
				}
			}
		}
		if width > chars {
			sp := width - chars
			a.pad(sp, ' ')
			if !left && n > 0 && !a.err {
				z := a.b[start:]
				copy(z[sp:], z[:n])
				for k := range z[:sp] {
					z[k] = ' '
				}
			}
		}
	}
}

// sqlQuote is quote(v) (sqlite3QuoteValue): an SQL literal of v.
func sqlQuote(v format.Value) ([]byte, bool) {
	switch v.Kind {
	case format.KindFloat:
		return sqlPrintf([]byte("%!0.17g"), []format.Value{v})
	case format.KindInt:
		return strconv.AppendInt(nil, v.Int(), 10), true
	case format.KindBlob:
		if int64(len(v.Bytes))*2+5 > int64(maxExprLength) { // sqlite3StrAccumEnlarge
			return nil, false
		}
		out := make([]byte, 0, 2*len(v.Bytes)+3)
		out = append(out, 'X', '\'')
		for _, c := range v.Bytes {
			out = append(out, "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
		}
		return append(out, '\''), true
	case format.KindText:
		return sqlPrintf([]byte("%Q"), []format.Value{v})
	}
	return []byte("NULL"), true
}
