package exec

import (
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// Arithmetic follows DESIGN §6: integer arithmetic is BIGINT and an
// overflow is an error, never a wrap-around; DECIMAL arithmetic is exact
// within 38 digits; anything with a DOUBLE is DOUBLE. Division or modulo
// by zero is NULL, as in MySQL.

func compileArith(x *sqlplan.Arith, env *env) (valueBinder, error) {
	l, err := compileValue(x.L, env)
	if err != nil {
		return nil, err
	}
	r, err := compileValue(x.R, env)
	if err != nil {
		return nil, err
	}
	op, t := x.Op, x.T
	return func(rec arrow.RecordBatch) valueFn {
		lf, rf := l(rec), r(rec)
		return func(i int) any {
			a, b := lf(i), rf(i)
			if a == nil || b == nil {
				return nil
			}
			v, err := arith(op, t, a, b)
			if err != nil {
				env.fail(fmt.Errorf("%s: %w", x, err))
				return nil
			}
			return v
		}
	}, nil
}

func compileNeg(x *sqlplan.Neg, env *env) (valueBinder, error) {
	in, err := compileValue(x.E, env)
	if err != nil {
		return nil, err
	}
	return func(rec arrow.RecordBatch) valueFn {
		f := in(rec)
		return func(i int) any {
			switch v := f(i).(type) {
			case int64:
				if v == math.MinInt64 {
					env.fail(fmt.Errorf("%s: %w: BIGINT overflow", x, metadata.ErrInvalidValue))
					return nil
				}
				return -v
			case float64:
				return -v
			case metadata.DecimalValue:
				return metadata.DecimalValue{Num: v.Num.Negate(), Scale: v.Scale}
			}
			return nil
		}
	}, nil
}

var errOverflow = fmt.Errorf("%w: BIGINT overflow", metadata.ErrInvalidValue)

func arith(op byte, t metadata.DataType, a, b any) (any, error) {
	switch {
	case t.Root == metadata.Double || t.Root == metadata.Float:
		return floatArith(op, toFloat(a), toFloat(b)), nil
	case t.Root == metadata.Decimal:
		return decimalArith(op, t, toBig(a), toBig(b))
	}
	x, okA := a.(int64)
	y, okB := b.(int64)
	if !okA || !okB {
		// DIV of decimals: an integer result of exact operands.
		q, err := decimalArith('d', metadata.DecimalType(metadata.MaxDecimalPrecision, 0), toBig(a), toBig(b))
		if q == nil || err != nil {
			return q, err
		}
		d := q.(metadata.DecimalValue)
		if d.Num.FitsInPrecision(18) {
			return d.Num.LowBits(), nil
		}
		return nil, errOverflow
	}
	switch op {
	case '+':
		s := x + y
		if (s > x) != (y > 0) {
			return nil, errOverflow
		}
		return s, nil
	case '-':
		s := x - y
		if (s < x) != (y > 0) {
			return nil, errOverflow
		}
		return s, nil
	case '*':
		if x == 0 || y == 0 {
			return int64(0), nil
		}
		p := x * y
		if p/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
			return nil, errOverflow
		}
		return p, nil
	case 'd':
		if y == 0 {
			return nil, nil
		}
		if x == math.MinInt64 && y == -1 {
			return nil, errOverflow
		}
		return x / y, nil
	case '%':
		if y == 0 {
			return nil, nil
		}
		if y == -1 {
			return int64(0), nil
		}
		return x % y, nil
	}
	return nil, fmt.Errorf("operator %q: %w", op, metadata.ErrUnsupported)
}

func floatArith(op byte, x, y float64) any {
	switch op {
	case '+':
		return x + y
	case '-':
		return x - y
	case '*':
		return x * y
	case '/':
		if y == 0 {
			return nil
		}
		return x / y
	case 'd':
		if y == 0 {
			return nil
		}
		return math.Trunc(x / y)
	case '%':
		if y == 0 {
			return nil
		}
		return math.Mod(x, y)
	}
	return nil
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case metadata.DecimalValue:
		return x.Float64()
	}
	return math.NaN()
}

// scaled is an exact number: n × 10^-scale.
type scaled struct {
	n     *big.Int
	scale int32
}

func toBig(v any) scaled {
	switch x := v.(type) {
	case int64:
		return scaled{n: big.NewInt(x)}
	case metadata.DecimalValue:
		return scaled{n: x.Num.BigInt(), scale: x.Scale}
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return scaled{n: new(big.Int)}
		}
		d, _ := metadata.ParseDecimal(r.FloatString(18), metadata.MaxDecimalPrecision, 18)
		return scaled{n: d.Num.BigInt(), scale: d.Scale}
	}
	return scaled{n: new(big.Int)}
}

var bigTen = big.NewInt(10)

func pow10(k int32) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(k)), nil) }

// rescale returns x's unscaled value at the given scale, rounding half away
// from zero when digits are dropped.
func rescale(x scaled, scale int32) *big.Int {
	switch {
	case scale == x.scale:
		return new(big.Int).Set(x.n)
	case scale > x.scale:
		return new(big.Int).Mul(x.n, pow10(scale-x.scale))
	}
	return divRound(x.n, pow10(x.scale-scale))
}

// divRound divides and rounds half away from zero.
func divRound(n, d *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(n, d, new(big.Int))
	twice := new(big.Int).Abs(r)
	twice.Lsh(twice, 1)
	if twice.Cmp(new(big.Int).Abs(d)) >= 0 {
		if (n.Sign() < 0) != (d.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

var maxDecimal = new(big.Int).Sub(pow10(metadata.MaxDecimalPrecision), big.NewInt(1))

func decimalArith(op byte, t metadata.DataType, a, b scaled) (any, error) {
	scale := int32(t.Scale)
	var n *big.Int
	switch op {
	case '+':
		n = new(big.Int).Add(rescale(a, scale), rescale(b, scale))
	case '-':
		n = new(big.Int).Sub(rescale(a, scale), rescale(b, scale))
	case '*':
		n = rescale(scaled{n: new(big.Int).Mul(a.n, b.n), scale: a.scale + b.scale}, scale)
	case '/', 'd':
		if b.n.Sign() == 0 {
			return nil, nil
		}
		// a/b at the result scale: (a.n × 10^(scale + b.scale - a.scale)) / b.n.
		shift := scale + b.scale - a.scale
		num := new(big.Int).Set(a.n)
		den := new(big.Int).Set(b.n)
		if shift >= 0 {
			num.Mul(num, pow10(shift))
		} else {
			den.Mul(den, pow10(-shift))
		}
		if op == 'd' {
			n = new(big.Int).Quo(num, den)
		} else {
			n = divRound(num, den)
		}
	case '%':
		if b.n.Sign() == 0 {
			return nil, nil
		}
		s := max(a.scale, b.scale)
		n = new(big.Int).Rem(rescale(a, s), rescale(b, s))
		n = rescale(scaled{n: n, scale: s}, scale)
	default:
		return nil, fmt.Errorf("operator %q: %w", op, metadata.ErrUnsupported)
	}
	if new(big.Int).Abs(n).Cmp(maxDecimal) > 0 {
		return nil, fmt.Errorf("%w: DECIMAL overflow (more than %d digits)", metadata.ErrInvalidValue, metadata.MaxDecimalPrecision)
	}
	return metadata.DecimalValue{Num: decimal128.FromBigInt(n), Scale: scale}, nil
}
