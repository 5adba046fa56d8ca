package metadata

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// The numeric functions over each kind of number, and their ranges.
func TestAggMergeNumbers(t *testing.T) {
	dec := DecimalType(6, 2)
	d := func(s string) DecimalValue {
		v, err := ParseDecimal(s, 6, 2)
		require.NoError(t, err)
		return v
	}
	for _, c := range []struct {
		f       AggFunc
		t       DataType
		acc, in any
		want    any
		err     string
	}{
		{AggSum, IntType(), int64(2), int64(3), int64(5), ""},
		{AggSum, IntType(), int64(math.MaxInt32), int64(1), nil, "out of range"},
		{AggSum, BigIntType(), int64(math.MaxInt64), int64(1), nil, "out of range"},
		{AggProduct, BigIntType(), int64(-4), int64(5), int64(-20), ""},
		{AggProduct, BigIntType(), int64(math.MaxInt64 / 2), int64(3), nil, "out of range"},
		{AggSum, DoubleType(), 1.5, 2.25, 3.75, ""},
		{AggSum, dec, d("1.25"), d("2.50"), d("3.75"), ""},
		{AggSum, dec, d("9999.99"), d("0.01"), nil, "out of range"},
		{AggProduct, dec, d("1.25"), d("2.50"), d("3.13"), ""}, // 3.125, half away from zero
		{AggSum, IntType(), nil, int64(3), int64(3), ""},
		{AggSum, IntType(), int64(3), nil, int64(3), ""},
		{AggMax, StringType(), "b", "a", "b", ""},
		{AggMin, DateType(), DateValue(10), DateValue(3), DateValue(3), ""},
		{AggListagg, StringType(), "a", "b", "a,b", ""},
		{AggLastValue, StringType(), "a", nil, nil, ""},
		{AggFirstValue, StringType(), nil, "b", nil, ""},
		{AggFirstValueIgnoreNulls, StringType(), nil, "b", "b", ""},
		{AggBoolAnd, BooleanType(), true, false, false, ""},
		{AggBoolOr, BooleanType(), false, nil, false, ""},
	} {
		got, err := c.f.Merge(c.t, c.acc, c.in, DefaultListaggDelimiter)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, "%s %v %v", c.f, c.acc, c.in)
			require.ErrorIs(t, err, ErrInvalidValue)
			continue
		}
		require.NoError(t, err, "%s %v %v", c.f, c.acc, c.in)
		require.Equal(t, c.want, got, "%s %v %v", c.f, c.acc, c.in)
	}
	require.ErrorIs(t, AggSum.CheckType(StringType()), ErrInvalidOption)
	require.ErrorIs(t, AggMax.CheckType(BytesType()), ErrInvalidOption)
	require.NoError(t, AggLastValue.CheckType(BytesType()))
}
