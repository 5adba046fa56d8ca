package metadata

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// AggFunc is an aggregate function of the aggregation merge engine
// ('fields.<col>.agg'): how a column of a stored row and the one of an
// upsert of its key combine.
type AggFunc string

// The aggregate functions, as Fluss names them. The bitmap functions
// (rbm32, rbm64) are not supported.
const (
	AggSum                   AggFunc = "sum"
	AggProduct               AggFunc = "product"
	AggMax                   AggFunc = "max"
	AggMin                   AggFunc = "min"
	AggLastValue             AggFunc = "last_value"
	AggLastValueIgnoreNulls  AggFunc = "last_value_ignore_nulls"
	AggFirstValue            AggFunc = "first_value"
	AggFirstValueIgnoreNulls AggFunc = "first_value_ignore_nulls"
	AggListagg               AggFunc = "listagg"
	AggStringAgg             AggFunc = "string_agg"
	AggBoolAnd               AggFunc = "bool_and"
	AggBoolOr                AggFunc = "bool_or"
)

// DefaultAgg is the function of a column 'fields.<col>.agg' does not name.
const DefaultAgg = AggLastValueIgnoreNulls

// DefaultListaggDelimiter is listagg's delimiter unless
// 'fields.<col>.listagg.delimiter' says otherwise.
const DefaultListaggDelimiter = ","

var aggFuncs = []AggFunc{AggSum, AggProduct, AggMax, AggMin, AggLastValue, AggLastValueIgnoreNulls,
	AggFirstValue, AggFirstValueIgnoreNulls, AggListagg, AggStringAgg, AggBoolAnd, AggBoolOr}

// ParseAggFunc reads a function name (any case).
func ParseAggFunc(s string) (AggFunc, error) {
	f := AggFunc(strings.ToLower(strings.TrimSpace(s)))
	for _, g := range aggFuncs {
		if f == g {
			return f, nil
		}
	}
	if f == "rbm32" || f == "rbm64" {
		return "", fmt.Errorf("%w: the bitmap aggregate function %s is not supported", ErrUnsupported, f)
	}
	names := make([]string, len(aggFuncs))
	for i, g := range aggFuncs {
		names[i] = string(g)
	}
	return "", fmt.Errorf("%w: unknown aggregate function %q (known: %s)", ErrInvalidOption, s, strings.Join(names, ", "))
}

// CheckType refuses (ErrInvalidOption) a function its column's type has
// no meaning for.
func (f AggFunc) CheckType(t DataType) error {
	ok := true
	switch f {
	case AggSum, AggProduct:
		switch t.Root {
		case TinyInt, SmallInt, Int, BigInt, Float, Double, Decimal:
		default:
			ok = false
		}
	case AggMax, AggMin:
		switch t.Root {
		case TinyInt, SmallInt, Int, BigInt, Float, Double, Decimal, Char, String, Date, Time, Timestamp, TimestampLTZ:
		default:
			ok = false
		}
	case AggListagg, AggStringAgg:
		ok = t.Root == Char || t.Root == String
	case AggBoolAnd, AggBoolOr:
		ok = t.Root == Boolean
	}
	if !ok {
		return fmt.Errorf("%w: aggregate function %s does not apply to type %s", ErrInvalidOption, f, t)
	}
	return nil
}

// Merge combines acc, the stored value (canonical, of type t; the row
// exists), with in, the upsert's: NULL inputs are skipped by every
// function but last_value and first_value, which keep a NULL as a value.
// delim is listagg's delimiter. A sum or product beyond t's range is
// ErrInvalidValue.
func (f AggFunc) Merge(t DataType, acc, in any, delim string) (any, error) {
	switch f {
	case AggLastValue:
		return in, nil
	case AggFirstValue:
		return acc, nil
	case AggFirstValueIgnoreNulls:
		if acc == nil {
			return in, nil
		}
		return acc, nil
	}
	if in == nil {
		return acc, nil
	}
	if acc == nil {
		return in, nil
	}
	switch f {
	case AggLastValueIgnoreNulls:
		return in, nil
	case AggMax:
		if Compare(in, acc) > 0 {
			return in, nil
		}
		return acc, nil
	case AggMin:
		if Compare(in, acc) < 0 {
			return in, nil
		}
		return acc, nil
	case AggListagg, AggStringAgg:
		return CoerceValue(t, acc.(string)+delim+in.(string))
	case AggBoolAnd:
		return acc.(bool) && in.(bool), nil
	case AggBoolOr:
		return acc.(bool) || in.(bool), nil
	case AggSum, AggProduct:
		return arith(f, t, acc, in)
	}
	return nil, fmt.Errorf("%w: aggregate function %q", ErrInvalidOption, f)
}

// arith is sum or product of two canonical values of a numeric type.
func arith(f AggFunc, t DataType, a, b any) (any, error) {
	overflow := func() error {
		return fmt.Errorf("%w: %s of %s and %s is out of range for %s", ErrInvalidValue, f, describe(a), describe(b), t)
	}
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		var r int64
		if f == AggSum {
			r = x + y
			if (r > x) != (y > 0) {
				return nil, overflow()
			}
		} else {
			r = x * y
			if x != 0 && (r/x != y || x == -1 && y == math.MinInt64) {
				return nil, overflow()
			}
		}
		v, err := CoerceValue(t, r)
		if err != nil {
			return nil, overflow()
		}
		return v, nil
	case float64:
		y := b.(float64)
		r := x + y
		if f == AggProduct {
			r = x * y
		}
		v, err := CoerceValue(t, r)
		if err != nil {
			return nil, overflow()
		}
		return v, nil
	case DecimalValue:
		y := b.(DecimalValue)
		if f == AggSum {
			s := new(big.Int).Add(x.Num.BigInt(), y.Num.BigInt())
			if s.BitLen() > 126 {
				return nil, overflow()
			}
			v, err := CoerceValue(t, DecimalValue{Num: decimal128.FromBigInt(s), Scale: x.Scale})
			if err != nil {
				return nil, overflow()
			}
			return v, nil
		}
		p := new(big.Rat).Mul(decimalRat(x), decimalRat(y))
		v, err := CoerceValue(t, p.FloatString(max(int(t.Scale), 0)))
		if err != nil {
			return nil, overflow()
		}
		return v, nil
	}
	return nil, fmt.Errorf("%w: %s of a %T", ErrInvalidValue, f, a)
}

// decimalRat is d exactly.
func decimalRat(d DecimalValue) *big.Rat {
	r := new(big.Rat).SetInt(d.Num.BigInt())
	if d.Scale > 0 {
		r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil)))
	}
	return r
}
