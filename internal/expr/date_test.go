package expr

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda/internal/format"
)

// dateCall is one call of a date function with its arguments.
type dateCall struct {
	fn   string
	args []any
}

func (c dateCall) String() string { return fmt.Sprintf("%s(%#v)", c.fn, c.args) }

// impureWords are what makes a date function read the clock or the time
// zone, which SQLite refuses in a generated column.
var impureWords = []string{"now", "localtime", "utc", "subsec"}

// mayBeImpure says whether c names the clock or the time zone anywhere.
func (c dateCall) mayBeImpure() bool {
	if len(c.args) == 0 || c.fn == "strftime" && len(c.args) == 1 {
		return true
	}
	for _, a := range c.args {
		if s, ok := a.(string); ok {
			for _, w := range impureWords {
				if strings.Contains(strings.ToLower(s), w) {
					return true
				}
			}
		}
	}
	return false
}

// genNonDeterministic says whether SQLite refuses c in a generated
// column ("non-deterministic use of ..."), which it evaluates at INSERT.
func genNonDeterministic(t *testing.T, db *sql.DB, c dateCall) bool {
	t.Helper()
	var cols, refs, ph []string
	for i := range c.args {
		cols = append(cols, fmt.Sprintf("a%d", i))
		refs = append(refs, fmt.Sprintf("a%d", i))
		ph = append(ph, "?")
	}
	cols = append(cols, "z")
	ph = append(ph, "0")
	if _, err := db.Exec("DROP TABLE IF EXISTS gnd"); err != nil {
		t.Fatal(err)
	}
	create := fmt.Sprintf("CREATE TABLE gnd(%s, v AS (%s(%s)) VIRTUAL)", strings.Join(cols, ", "), c.fn, strings.Join(refs, ", "))
	if _, err := db.Exec(create); err != nil {
		t.Fatalf("%s: %v", create, err)
	}
	_, err := db.Exec(fmt.Sprintf("INSERT INTO gnd(%s) VALUES (%s)", strings.Join(cols, ", "), strings.Join(ph, ", ")), c.args...)
	if err != nil && !strings.Contains(err.Error(), "non-deterministic") {
		t.Fatalf("%v: SQLite fails with %v", c, err)
	}
	return err != nil
}

// compareDate compares one call with SQLite's, value and type; a call
// pagoda does not evaluate must be one SQLite refuses in a generated
// column, and the other way round.
func compareDate(t *testing.T, db *sql.DB, c dateCall) bool {
	t.Helper()
	q := "SELECT " + c.fn + "(" + strings.TrimPrefix(strings.Repeat(", ?", len(c.args)), ", ") + ")"
	var want any
	werr := db.QueryRow(q, c.args...).Scan(&want)
	if b, ok := want.([]byte); ok {
		want = string(b)
	}
	vals := make([]format.Value, len(c.args))
	for i, a := range c.args {
		vals[i] = sqlArg(a)
	}
	r := exprRow{}
	got := r.dateFunc(c.fn, vals)
	if c.mayBeImpure() {
		nd := genNonDeterministic(t, db, c)
		switch {
		case nd && !errors.Is(r.err, format.ErrUnsupported):
			t.Errorf("%v: SQLite refuses it in a generated column, pagoda %v (%v)", c, got, r.err)
			return false
		case nd:
			return true
		case r.err != nil:
			t.Errorf("%v: pagoda %v, SQLite computes it in a generated column", c, r.err)
			return false
		}
	}
	switch {
	case werr != nil:
		t.Errorf("%v: SQLite fails: %v", c, werr)
		return false
	case r.err != nil:
		t.Errorf("%v: pagoda %v, SQLite %#v", c, r.err, want)
		return false
	case !sameFormatValue(got, want):
		t.Errorf("%v = %s %q, SQLite %#v", c, got.Kind, textOf(got), want)
		return false
	case got.Kind == format.KindFloat && math.Float64bits(got.Float()) != math.Float64bits(want.(float64)):
		t.Errorf("%v = %v, SQLite %v (bits)", c, got.Float(), want)
		return false
	}
	return true
}

// dateGen makes random time values, modifiers and strftime formats,
// around the edges date.c tests.
type dateGen struct{ rnd *rand.Rand }

func (g dateGen) pick(s ...string) string { return s[g.rnd.Intn(len(s))] }

func (g dateGen) digits(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteByte(byte('0' + g.rnd.Intn(10)))
	}
	return b.String()
}

func (g dateGen) clock() string {
	s := g.pick("00", "01", "09", "12", "13", "23", "23", "24", "24", "25", g.digits(2)) + ":" + g.pick("00", "00", "01", "30", "59", "60", g.digits(2))
	switch g.rnd.Intn(4) {
	case 0:
		return s
	case 1:
		s += ":" + g.pick("00", "00", "30", "59", "60", g.digits(2))
	default:
		s += ":" + g.pick("00", "59", g.digits(2)) + "." + g.digits(1+g.rnd.Intn(g.pickInt(3, 3, 6, 12, 25)))
		if g.rnd.Intn(8) == 0 {
			s = s[:len(s)-1] + g.pick("9999999", "5", "0005", "x", ".")
		}
	}
	return s
}

func (g dateGen) pickInt(s ...int) int { return s[g.rnd.Intn(len(s))] }

func (g dateGen) zone() string {
	switch g.rnd.Intn(10) {
	case 0:
		return g.pick("Z", "z", " Z", "Z ", " z  ")
	case 1, 2:
		return g.pick("", " ") + g.pick("+", "-") + g.pick("00", "01", "05", "12", "14", "15", "23") + ":" + g.pick("00", "30", "45", "59", "60") + g.pick("", "", " ", "x")
	case 3:
		return g.pick("+5:30", "+05:3", "+0530", "-", "+", " +00:00", "-00:00", "+24:00")
	}
	return ""
}

// timeValue is a random time value as TEXT.
func (g dateGen) timeValue() string {
	switch g.rnd.Intn(12) {
	case 0:
		return g.clock() + g.zone()
	case 1:
		return g.pick("now", "NOW", "subsec", "subsecond", "", "abc", "2021-1-1", "2021-01-1", "21-01-01", "T12:00", "12:00:00Z",
			" 2021-01-01", "2021-01-01 ", "2021-01-01T", "2021-01-01TT12:00", "2021-01-01 \t12:00", "+2021-01-01",
			"2459000.5", " 2459000.5 ", "1700000000", "-1", "1e3", "0", "5373484.5", "5373484.4999", "2e6x", "0x10", ".5", "1.")
	case 2:
		return fmt.Sprint(g.rnd.Float64() * 5400000)
	}
	if g.rnd.Intn(2) == 0 { // a valid one
		s := fmt.Sprintf("%04d-%02d-%02d", g.rnd.Intn(10000), 1+g.rnd.Intn(12), 1+g.rnd.Intn(31))
		if g.rnd.Intn(3) > 0 {
			s += fmt.Sprintf("%s%02d:%02d", g.pick(" ", "T"), g.rnd.Intn(24), g.rnd.Intn(60))
			if g.rnd.Intn(2) == 0 {
				s += fmt.Sprintf(":%02d", g.rnd.Intn(60)) + g.pick("", "", "."+g.digits(1+g.rnd.Intn(6)))
			}
		}
		return s + g.pick("", "", "", "Z", "+01:00", "-09:30")
	}
	y := g.pick("0000", "0001", "0004", "0100", "0400", "1582", "1600", "1899", "1900", "1969", "1970", "1999", "2000", "2000",
		"2020", "2021", "2023", "2024", "2038", "2100", "2400", "9999", "9999", g.digits(4), g.digits(4), "-0001", "-4713", "-4714", "-0100", "19999")
	m := g.pick("01", "02", "02", "03", "04", "06", "09", "11", "12", "12", "00", "13", g.digits(2))
	d := g.pick("01", "01", "15", "28", "29", "29", "30", "31", "31", "00", "32", g.digits(2))
	s := y + "-" + m + "-" + d
	switch g.rnd.Intn(4) {
	case 0:
		return s + g.zone()
	case 1:
		return s
	}
	return s + g.pick(" ", "T", "T", "  ", "t", "\t", "") + g.clock() + g.zone()
}

// number is a random number as text (modifiers' NNN).
func (g dateGen) number() string {
	switch g.rnd.Intn(6) {
	case 0:
		return g.pick("0", "1", "-1", "+1", "1.5", "-0.5", ".5", "1.", "1e2", "1e", "-0", "+0.25", "1.999999", "0.0000001", "12345678901234567890", "5e-324")
	case 1:
		return fmt.Sprint(g.rnd.NormFloat64() * math.Pow(10, float64(g.rnd.Intn(14))))
	case 2:
		return fmt.Sprint(g.rnd.Intn(2000000) - 1000000)
	}
	return g.pick("+", "-", "") + fmt.Sprint(g.rnd.Intn(100)) + g.pick("", "", ".5", ".25", ".75", "."+g.digits(1+g.rnd.Intn(6)))
}

// modifier is a random modifier.
func (g dateGen) modifier() any {
	switch g.rnd.Intn(12) {
	case 0, 1, 2:
		u := g.pick("day", "days", "hour", "hours", "minute", "minutes", "second", "seconds", "month", "months", "year", "years",
			"DAYS", "Month", "yearss", "week", "d", "dayz", "seconds ", "secondsss")
		return g.number() + g.pick(" ", " ", "  ", "", "\t") + u
	case 3:
		return g.pick("start of month", "start of year", "start of day", "START OF DAY", "start of week", "start of",
			"end of month", "end of year", "end of day", "End Of Month", "end of week", "end of")
	case 4:
		return "weekday " + g.pick("0", "1", "2", "3", "4", "5", "6", "7", "-0", "-1", "-3", "-6", "-7", "1.5", "1.0", "1e0", " 3", "3 ", "x", "")
	case 5:
		return g.pick("unixepoch", "julianday", "auto", "subsec", "subsecond", "floor", "ceiling", "UNIXEPOCH", "Auto", "localtime", "utc",
			"", "unix", "subsecs", "floorx")
	case 6:
		return g.pick("+", "-", "") + g.clock()
	case 7:
		s := g.pick("+", "-", "", "+0") + g.pick("0000", "0001", "0010", "9999", g.digits(4), "00010", g.digits(5)) + "-" +
			g.pick("00", "01", "06", "11", "12") + "-" + g.pick("00", "01", "15", "28", "30", "31")
		if g.rnd.Intn(3) == 0 {
			s += g.pick(" ", "  ", "T") + g.clock()
		}
		return s
	case 8:
		return g.pick2(nil, int64(5), 1.5, []byte("+1 day"), "+1 day\x00junk", "weekday 1\x00", "  +1 day")
	}
	return g.number() + " " + g.pick("days", "hours", "months", "years", "seconds", "minutes")
}

// format is a random strftime format.
func (g dateGen) format() string {
	var b strings.Builder
	for i := g.rnd.Intn(6); i >= 0; i-- {
		if g.rnd.Intn(3) == 0 {
			b.WriteString(g.pick("-", " ", "T", "x", "é", "%%", "::"))
		}
		b.WriteByte('%')
		if g.rnd.Intn(80) == 0 {
			b.WriteString(g.pick("", "a", "y", "Z", "E", "\x00"))
			continue
		}
		b.WriteByte("dDeFfGgHIjJklmMpPRsSTuUVwWY%"[g.rnd.Intn(28)])
	}
	return b.String()
}

// timeArg is a random first argument: text, or a number.
func (g dateGen) timeArg() any {
	switch g.rnd.Intn(11) {
	case 10:
		if x := math.Float64frombits(g.rnd.Uint64()); !math.IsNaN(x) {
			return x
		}
		return 1e300
	case 0:
		return g.rnd.Float64() * 5373484.5
	case 1:
		return int64(g.rnd.Intn(5400000))
	case 2:
		return g.pick2(int64(0), int64(-1), 5373484.5, 5373484.499999, 1e9, int64(1700000000), 253402300799.0, 253402300800.0,
			-210866760000.0, -210866760001.0, 1.5e15, int64(math.MaxInt64), math.Inf(1), nil, []byte("2021-01-01"), -0.5)
	}
	return g.timeValue()
}

func (g dateGen) pick2(s ...any) any { return s[g.rnd.Intn(len(s))] }

func TestDateFuncsLikeSQLite(t *testing.T) {
	db := oracle(t)
	fixed := []dateCall{
		{"date", []any{"2021-02-31"}}, {"date", []any{"2021-02-31", "+0 days"}}, {"datetime", []any{"2021-02-31 24:00"}},
		{"datetime", []any{"2024-12-31 24:00"}}, {"datetime", []any{"24:00"}}, {"time", []any{"24:00:01"}}, {"time", []any{"24:00:00.000"}},
		{"datetime", []any{"0000-01-01 00:00:00"}}, {"datetime", []any{"9999-12-31 23:59:59.999"}}, {"date", []any{"-4713-11-24 12:00"}},
		{"date", []any{"-4713-11-24 11:59:59.999"}}, {"julianday", []any{"-4713-11-24 12:00"}}, {"julianday", []any{"2000-01-01"}},
		{"datetime", []any{"2000-01-01 12:00:59.9999"}}, {"time", []any{"12:00:59.9995", "subsec"}}, {"strftime", []any{"%f", "12:00:59.9999"}},
		{"datetime", []any{"2021-06-15T10:20:30.5+05:30"}}, {"datetime", []any{"2021-06-15 10:20 -14:59"}}, {"datetime", []any{"10:20Z"}},
		{"datetime", []any{"2021-06-15 10:20:30 +00:00"}}, {"datetime", []any{"2021-06-15 10:20:30 z "}},
		{"datetime", []any{2459000.5}}, {"datetime", []any{int64(2459000)}}, {"datetime", []any{"2459000.5"}}, {"datetime", []any{int64(1700000000), "unixepoch"}},
		{"datetime", []any{1700000000.123, "unixepoch", "subsec"}}, {"unixepoch", []any{"2023-11-14 22:13:20.123", "subsec"}},
		{"unixepoch", []any{"1970-01-01"}}, {"unixepoch", []any{"1969-12-31 23:59:59.5"}}, {"unixepoch", []any{"1969-12-31 23:59:59.5", "subsecond"}},
		{"datetime", []any{int64(1700000000), "auto"}}, {"datetime", []any{2459000.5, "auto"}}, {"datetime", []any{int64(-1), "auto"}},
		{"datetime", []any{2459000.5, "julianday"}}, {"datetime", []any{"2459000.5", "julianday"}}, {"datetime", []any{int64(1e9), "julianday"}},
		{"datetime", []any{int64(5), "+1 day", "unixepoch"}}, {"datetime", []any{int64(5), "+1 day", "auto"}},
		{"date", []any{"2021-01-31", "+1 month"}}, {"date", []any{"2021-01-31", "+1 month", "floor"}}, {"date", []any{"2021-01-31", "+1 month", "ceiling"}},
		{"date", []any{"2024-02-29", "+1 year"}}, {"date", []any{"2024-02-29", "+1 year", "floor"}}, {"date", []any{"2024-02-29", "-1 years"}},
		{"date", []any{"2021-03-31", "-1 month", "floor"}}, {"date", []any{"2021-01-31", "+1.5 months"}}, {"date", []any{"2021-01-31", "-13 months"}},
		{"datetime", []any{"2021-01-31 12:00", "+0001-01-00"}}, {"datetime", []any{"2021-01-31 12:00", "-0001-11-30 13:30:15.5"}},
		{"datetime", []any{"2021-01-31", "+00010-00-00"}}, {"datetime", []any{"2021-01-31", "+0000-00-00 24:00"}},
		{"datetime", []any{"2021-01-31 12:00", "+12:30"}}, {"datetime", []any{"2021-01-31 12:00", "-36:00"}}, {"datetime", []any{"2021-01-31 12:00", "+24:00"}},
		{"datetime", []any{"2021-01-31 12:00", "start of month"}}, {"datetime", []any{"2021-01-31 12:00", "start of year"}},
		{"datetime", []any{"2021-01-31 12:00", "end of month"}}, {"datetime", []any{"2021-02-15 12:00", "end of month", "subsec"}},
		{"datetime", []any{"2021-02-15 12:00", "end of year"}}, {"datetime", []any{"2021-02-15 12:00", "end of day", "subsec"}},
		{"date", []any{"2021-06-15", "weekday 0"}}, {"date", []any{"2021-06-15", "weekday 2"}}, {"date", []any{"2021-06-15", "weekday -1"}},
		{"date", []any{"2021-06-15", "weekday -2"}}, {"date", []any{"2021-06-15", "weekday -0"}}, {"date", []any{"2021-06-15", "weekday 7"}},
		{"date", []any{"9999-12-31", "+1 day"}}, {"date", []any{"0000-01-01", "-1 day"}}, {"date", []any{"0000-01-01", "-1 year"}},
		{"strftime", []any{"%d %e %f %F %G %g %H %I %j %J %k %l %m %M %p %P %R %s %S %T %u %U %V %w %W %Y %%", "2021-01-03 07:08:09.123"}},
		{"strftime", []any{"%G %g %V %U %W %j", "2020-12-31"}}, {"strftime", []any{"%G %g %V", "2021-01-01"}}, {"strftime", []any{"%G %V", "9999-12-31"}},
		{"strftime", []any{"%G %V %g", "0000-01-01"}}, {"strftime", []any{"%Y %F", "-0044-03-15"}}, {"strftime", []any{"%s", "2021-01-01", "subsec"}},
		{"strftime", []any{"", "2021-01-01"}}, {"strftime", []any{"%", "2021-01-01"}}, {"strftime", []any{"%y", "2021-01-01"}}, {"strftime", []any{"a%", "x"}},
		{"strftime", []any{nil, "2021-01-01"}}, {"strftime", []any{"%Y", nil}}, {"strftime", []any{int64(5), "2021-01-01"}},
		{"timediff", []any{"2021-03-01", "2021-01-31"}}, {"timediff", []any{"2021-01-31", "2021-03-01"}}, {"timediff", []any{"2024-02-29 12:00", "2023-03-01 13:00:00.5"}},
		{"timediff", []any{"9999-12-31 23:59:59.999", "0000-01-01"}}, {"timediff", []any{"0000-01-01", "9999-12-31 23:59:59.999"}},
		{"timediff", []any{2459000.5, "2021-01-01"}}, {"timediff", []any{"x", "now"}}, {"timediff", []any{"2021-01-01", nil}},
		{"date", []any{nil}}, {"date", []any{"2021-01-01", nil}}, {"date", []any{"2021-01-01", ""}}, {"date", []any{[]byte("2021-01-01")}},
		{"date", []any{"2021-01-01\x00junk"}}, {"date", []any{"2021-01-01", "+1 day\x00x"}},
		{"date", []any{"now"}}, {"date", []any{"NOW", "start of day"}}, {"date", []any{"2021-01-01", "localtime"}}, {"date", []any{"2021-01-01", "utc"}},
		{"date", []any{"bogus", "localtime"}}, {"date", []any{"2021-01-01", "bogus", "localtime"}}, {"datetime", []any{"subsec"}}, {"datetime", []any{"subsecond", "+1 day"}},
		{"date", nil}, {"julianday", nil}, {"strftime", []any{"%Y"}}, {"strftime", nil}, {"unixepoch", []any{int64(5), "utc"}},
	}
	fails := 0
	for _, c := range fixed {
		if !compareDate(t, db, c) {
			fails++
		}
	}
	g := dateGen{rand.New(rand.NewSource(3054))}
	fns := []string{"date", "time", "datetime", "julianday", "unixepoch", "strftime", "strftime", "timediff"}
	n := 20000
	if testing.Short() {
		n = 3000
	}
	for k := 0; k < n && fails < 25; k++ {
		c := dateCall{fn: fns[g.rnd.Intn(len(fns))]}
		switch c.fn {
		case "timediff":
			c.args = []any{g.timeArg(), g.timeArg()}
		case "strftime":
			c.args = []any{g.format(), g.timeArg()}
		default:
			c.args = []any{g.timeArg()}
		}
		if c.fn != "timediff" {
			for m := g.rnd.Intn(g.pickInt(1, 3, 3, 5)); m > 0; m-- {
				c.args = append(c.args, g.modifier())
			}
		}
		if !compareDate(t, db, c) {
			fails++
		}
	}
}
