package metadata

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// NewDecimal returns unscaled × 10^-scale.
func NewDecimal(unscaled int64, scale int32) DecimalValue {
	return DecimalValue{Num: decimal128.FromI64(unscaled), Scale: scale}
}

// String renders d in plain decimal notation with exactly Scale fractional
// digits: NewDecimal(-123400, 4) is "-12.3400".
func (d DecimalValue) String() string {
	n := d.Num.BigInt()
	neg := n.Sign() < 0
	digits := n.Abs(n).String()
	scale := int(d.Scale)
	if scale < 0 {
		// Not produced by this package; render the value exactly anyway.
		digits += strings.Repeat("0", -scale)
		scale = 0
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(digits[:len(digits)-scale])
	if scale > 0 {
		b.WriteByte('.')
		b.WriteString(digits[len(digits)-scale:])
	}
	return b.String()
}

// Float64 returns the float64 nearest to d.
func (d DecimalValue) Float64() float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// Cmp compares d and o as numbers, whatever their scales: -1, 0 or +1.
func (d DecimalValue) Cmp(o DecimalValue) int {
	if d.Scale == o.Scale {
		return d.Num.Cmp(o.Num)
	}
	a, b := d.Num.BigInt(), o.Num.BigInt()
	if d.Scale < o.Scale {
		a.Mul(a, pow10(int(o.Scale-d.Scale)))
	} else {
		b.Mul(b, pow10(int(d.Scale-o.Scale)))
	}
	return a.Cmp(b)
}

// Rescale returns d with the given scale. ok is false when that would lose
// a non-zero digit or the result does not fit in 38 digits; use rounding
// (CoerceValue to a DECIMAL type) when digits may be dropped.
func (d DecimalValue) Rescale(scale int32) (DecimalValue, bool) {
	if scale == d.Scale {
		return d, true
	}
	if scale < 0 || scale > MaxDecimalPrecision {
		return DecimalValue{}, false
	}
	n := d.Num.BigInt()
	if scale > d.Scale {
		n.Mul(n, pow10(int(scale-d.Scale)))
	} else {
		var r big.Int
		n.QuoRem(n, pow10(int(d.Scale-scale)), &r)
		if r.Sign() != 0 {
			return DecimalValue{}, false
		}
	}
	if !fitsDigits(n, MaxDecimalPrecision) {
		return DecimalValue{}, false
	}
	return DecimalValue{Num: decimal128.FromBigInt(n), Scale: scale}, true
}

// round returns d rounded half away from zero (Java's HALF_UP) to scale,
// and checks that the result has at most precision digits.
func (d DecimalValue) round(precision, scale int) (DecimalValue, bool) {
	n := d.Num.BigInt()
	n = roundScaled(n, scale-int(d.Scale))
	if !fitsDigits(n, precision) {
		return DecimalValue{}, false
	}
	return DecimalValue{Num: decimal128.FromBigInt(n), Scale: int32(scale)}, true
}

// ParseDecimal reads s as a DECIMAL(precision, scale) value. s is plain or
// scientific decimal text ("-12.5", ".5", "1e3"); digits beyond scale are
// rounded half away from zero, as Fluss (Java's HALF_UP) does. A value whose
// integer part needs more than precision-scale digits is ErrInvalidValue.
func ParseDecimal(s string, precision, scale int) (DecimalValue, error) {
	t := DecimalType(precision, scale)
	if err := t.Validate(); err != nil {
		return DecimalValue{}, err
	}
	n, exp, ok := parseDecimalText(s)
	if !ok {
		return DecimalValue{}, fmt.Errorf("%w: value %q is not a valid %s", ErrInvalidValue, s, t)
	}
	// The value is n × 10^exp; we want it × 10^scale.
	n = roundScaled(n, exp+scale)
	if !fitsDigits(n, precision) {
		return DecimalValue{}, fmt.Errorf("%w: value %s out of range for %s", ErrInvalidValue, s, t)
	}
	return DecimalValue{Num: decimal128.FromBigInt(n), Scale: int32(scale)}, nil
}

// parseDecimalText splits decimal text into an integer n and an exponent
// such that the value is n × 10^exp.
func parseDecimalText(s string) (n *big.Int, exp int, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, 0, false
	}
	mant := s
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(s[i+1:])
		// An exponent this large can only be a mistake; refusing it keeps
		// the big.Int work bounded.
		if err != nil || e > 1000 || e < -1000 {
			return nil, 0, false
		}
		exp = e
	}
	neg := false
	switch {
	case strings.HasPrefix(mant, "-"):
		neg = true
		mant = mant[1:]
	case strings.HasPrefix(mant, "+"):
		mant = mant[1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" && frac == "" {
		return nil, 0, false
	}
	digits := intPart + frac
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return nil, 0, false
		}
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 200 {
		return nil, 0, false
	}
	n = new(big.Int)
	if digits != "" {
		n.SetString(digits, 10)
	}
	if neg {
		n.Neg(n)
	}
	return n, exp - len(frac), true
}

// roundScaled returns n × 10^shift, rounding half away from zero when shift
// is negative.
func roundScaled(n *big.Int, shift int) *big.Int {
	if shift >= 0 {
		if shift == 0 || n.Sign() == 0 {
			return n
		}
		return n.Mul(n, pow10(shift))
	}
	if -shift > len(n.String())+1 {
		// Fewer digits than the divisor: rounds to zero.
		return n.SetInt64(0)
	}
	div := pow10(-shift)
	neg := n.Sign() < 0
	n.Abs(n)
	var r big.Int
	n.QuoRem(n, div, &r)
	if r.Lsh(&r, 1).Cmp(div) >= 0 {
		n.Add(n, big.NewInt(1))
	}
	if neg {
		n.Neg(n)
	}
	return n
}

// pow10Table holds 10^0 .. 10^80, read-only, for the common shifts.
var pow10Table = func() []*big.Int {
	t := make([]*big.Int, 81)
	for i := range t {
		t[i] = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(i)), nil)
	}
	return t
}()

// pow10 returns 10^k; the result must not be modified.
func pow10(k int) *big.Int {
	if k < len(pow10Table) {
		return pow10Table[k]
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil)
}

// fitsDigits reports whether |n| has at most p decimal digits.
func fitsDigits(n *big.Int, p int) bool {
	var a big.Int
	a.Abs(n)
	return a.Cmp(pow10(p)) < 0
}
