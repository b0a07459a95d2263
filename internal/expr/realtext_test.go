package expr

import (
	"database/sql"
	"math"
	"math/big"
	"math/rand"
	"strconv"
	"testing"

	_ "github.com/pagodadb/pagoda/internal/sqltest" // the "sqlite" driver: SQLite itself, the oracle
)

// TestRealTextLikeSQLite compares realText and round with SQLite 3.54's
// CAST(x AS TEXT) and round(x, n) on doubles of many shapes.
func TestRealTextLikeSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fs := []float64{0.1, 1e300, math.Copysign(0, -1), 1e-320, 123456789012345678.0, 2.5, 1e15, 1e16, 1e17,
		49.47, 0.30000000000000004, math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 63, -1 << 63, 1.2345678901234561,
		1e-5, 1e-4, 0.5, 100, 9007199254740993, 5e-324, 2.2250738585072014e-308, math.Inf(1), math.Inf(-1), 1.005, 2.675}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 4000; i++ {
		switch i % 4 {
		case 0:
			fs = append(fs, math.Float64frombits(r.Uint64()))
		case 1:
			f, _ := strconv.ParseFloat(strconv.Itoa(r.Intn(1000000))+"e"+strconv.Itoa(r.Intn(40)-20), 64)
			fs = append(fs, f)
		case 2:
			fs = append(fs, r.NormFloat64()*math.Pow(10, float64(r.Intn(30)-15)))
		case 3:
			fs = append(fs, float64(r.Int63()>>uint(r.Intn(63))))
		}
	}
	for f, want := range map[float64]string{1e-320: "9.9998886718268301e-321", 123456789012345678.0: "1.2345678901234568e+17",
		1e15: "1000000000000000.0", 1e16: "10000000000000000.0", 1e17: "1.0e+17", 0.1: "0.1", 1 << 63: "9.2233720368547758e+18"} {
		if got := realText(f); got != want {
			t.Errorf("realText(%v) = %q, want %q", f, got, want)
		}
	}
	compared := 0
	defer func() { t.Logf("%d doubles compared", compared) }()
	st, err := db.Prepare("SELECT CAST(?1 AS TEXT), round(?1, ?2)")
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, f := range fs {
		if math.IsNaN(f) {
			continue
		}
		n := i % 8
		var s string
		var rf float64
		if err := st.QueryRow(f, n).Scan(&s, &rf); err != nil {
			t.Fatal(err)
		}
		compared++
		if got := realText(f); got != s {
			t.Errorf("realText(%v) = %q, SQLite %q", f, got, s)
			bad++
		}
		got := f
		if math.Abs(f) <= 4503599627370496 {
			if n == 0 {
				got = roundFunc(f, 0)
			} else {
				got = roundFixed(f, n)
			}
		}
		if got != rf {
			t.Errorf("round(%v, %d) = %v, SQLite %v", f, n, got, rf)
			bad++
		}
		if bad > 20 {
			t.Fatal("too many")
		}
	}
}

// TestPowerTables derives fptext.go's tables from their definition with
// math/big: fpBase[i] is 10^i normalized to a top bit of 1 (exact for
// i < 28); fpScale[i] and fpScaleLo[i] are the 96 bits of 10^(27*(i-13))
// so normalized, rounded to nearest, except at i = 13, which holds 10^-1
// truncated (powerOfTen's p == -1; 10^0 is fpBase[0]).
func TestPowerTables(t *testing.T) {
	bits96 := func(p int, round bool) (uint64, uint32) {
		const prec = 2000
		f, ten := new(big.Float).SetPrec(prec).SetInt64(1), new(big.Float).SetPrec(prec).SetInt64(10)
		for range max(p, -p) {
			f.Mul(f, ten)
		}
		if p < 0 {
			f.Quo(new(big.Float).SetPrec(prec).SetInt64(1), f)
		}
		m := new(big.Float).SetPrec(prec).SetMantExp(f, 96-f.MantExp(nil)) // in [2^95, 2^96)
		i, _ := m.Int(nil)
		if frac := new(big.Float).SetPrec(prec).Sub(m, new(big.Float).SetPrec(prec).SetInt(i)); round && frac.Cmp(big.NewFloat(0.5)) >= 0 {
			i.Add(i, big.NewInt(1))
		}
		return new(big.Int).Rsh(i, 32).Uint64(), uint32(i.Uint64())
	}
	for i, want := range fpBase {
		if hi, lo := bits96(i, false); hi != want || lo != 0 {
			t.Errorf("fpBase[%d] = %#x, 10^%d is %#x %#x", i, want, i, hi, lo)
		}
	}
	for i := range fpScale {
		p, round := 27*(i-13), true
		if i == 13 {
			p, round = -1, false
		}
		if hi, lo := bits96(p, round); hi != fpScale[i] || lo != fpScaleLo[i] {
			t.Errorf("fpScale[%d], fpScaleLo[%d] = %#x %#x; 10^%d is %#x %#x", i, i, fpScale[i], fpScaleLo[i], p, hi, lo)
		}
	}
}
