package metadata

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCompare(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		a, b any
		want int
	}{
		{nil, nil, 0},
		{nil, int64(1), -1},
		{int64(1), nil, 1},
		{int64(1), int64(2), -1},
		{int64(10), int64(2), 1},
		{1.5, 1.5, 0},
		{math.NaN(), 1e308, 1},
		{math.NaN(), math.NaN(), 0},
		{math.Inf(-1), -1e308, -1},
		{0.0, math.Copysign(0, -1), 0},
		// Mixed numbers compare exactly: 2^53+1 is not 2^53 as a float.
		{int64(1<<53 + 1), float64(1 << 53), 1},
		{int64(2), 2.5, -1},
		{int64(-2), -2.5, 1},
		{int64(3), 3.0, 0},
		{int64(math.MaxInt64), 9223372036854775808.0, -1},
		{int64(math.MinInt64), -9223372036854775808.0, 0},
		{int64(1), math.NaN(), -1},
		{2.5, int64(2), 1},
		{NewDecimal(25, 1), int64(2), 1},
		{int64(3), NewDecimal(300, 2), 0},
		// float64(0.1) is 0.1000000000000000055..., above the exact 0.1.
		{NewDecimal(1, 1), 0.1, -1},
		{NewDecimal(125, 2), 1.25, 0},
		{1.25, NewDecimal(126, 2), -1},
		{NewDecimal(1, 0), math.Inf(1), -1},
		{NewDecimal(1, 0), math.Inf(-1), 1},
		{NewDecimal(1, 0), math.NaN(), -1},
		{"a", "b", -1},
		{"b", "ab", 1},
		{[]byte{1}, []byte{1, 0}, -1},
		{false, true, -1},
		{true, true, 0},
		{DateValue(2), DateValue(1), 1},
		{TimeValue(1), TimeValue(1), 0},
		{t0, t0.Add(time.Nanosecond), -1},
		{[]any{int64(1), "a"}, []any{int64(1), "b"}, -1},
		{[]any{int64(1)}, []any{int64(1), nil}, -1},
		{MapValue{Keys: []any{"a"}, Values: []any{int64(1)}}, MapValue{Keys: []any{"a"}, Values: []any{int64(2)}}, -1},
		// Unrelated families do not panic and order consistently.
		{"1", int64(1), 1},
		{int64(1), "1", -1},
	}
	for _, c := range cases {
		require.Equal(t, c.want, Compare(c.a, c.b), "Compare(%#v, %#v)", c.a, c.b)
	}
}

func TestFormatValue(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	cases := []struct {
		t    DataType
		v    any
		want string
	}{
		{IntType(), nil, "NULL"},
		{BooleanType(), true, "true"},
		{FloatType(), float64(float32(1.1)), "1.1"},
		{DoubleType(), 1.1, "1.1"},
		{DecimalType(10, 4), NewDecimal(-123400, 4), "-12.3400"},
		{BytesType(), []byte{0xde, 0xad}, "dead"},
		{DateType(), DateValue(20455), "2026-01-02"},
		{TimeType(0), TimeValue(45296789e6), "12:34:56"},
		{TimeType(3), TimeValue(45296789e6), "12:34:56.789"},
		{TimeType(9), TimeValue(45296789e6), "12:34:56.789000000"},
		{TimestampType(0), ts, "2026-01-02 03:04:05"},
		{TimestampType(3), ts, "2026-01-02 03:04:05.123"},
		{TimestampLTZType(6), ts, "2026-01-02 03:04:05.123456"},
		{ArrayType(IntType()), []any{int64(1), nil, int64(2)}, "[1, NULL, 2]"},
		{MapType(StringType(), IntType()), MapValue{Keys: []any{"a", "b"}, Values: []any{int64(1), nil}}, "{a=1, b=NULL}"},
		{RowType(Field{"a", IntType()}, Field{"b", DateType()}), []any{int64(1), DateValue(0)}, "(1, 1970-01-01)"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, FormatValue(c.t, c.v), "%s", c.t)
	}
	require.Equal(t, "'2026-01-02'", FormatLiteral(DateType(), DateValue(20455)))
	require.Equal(t, "'it''s'", FormatLiteral(StringType(), "it's"))
	require.Equal(t, "X'ff'", FormatLiteral(BytesType(), []byte{0xff}))
	require.Equal(t, "-12.3400", FormatLiteral(DecimalType(10, 4), NewDecimal(-123400, 4)))
}
