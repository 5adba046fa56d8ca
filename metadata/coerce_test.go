package metadata

import (
	"database/sql/driver"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// TestCoerceGolden replays testdata/coerce:
//
//	coerce type=<T>   input: one SQL literal text per line; prints the
//	                  canonical value's display form and Go type, or the error
func TestCoerceGolden(t *testing.T) {
	datadriven.RunTest(t, "testdata/coerce", func(t *testing.T, d *datadriven.TestData) string {
		var ts string
		d.ScanArgs(t, "type", &ts)
		typ, err := parseTestType(ts)
		require.NoError(t, err)
		var out strings.Builder
		for _, line := range strings.Split(d.Input, "\n") {
			v, err := CoerceValue(typ, line)
			if err != nil {
				fmt.Fprintf(&out, "error: %v\n", err)
				continue
			}
			fmt.Fprintf(&out, "%s (%T)\n", FormatValue(typ, v), v)
		}
		return out.String()
	})
}

type valuer struct{ v any }

func (v valuer) Value() (driver.Value, error) { return v.v, nil }

type myInt int16

func TestCoerceGoValues(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	paris := time.FixedZone("CET", 3600)
	seven := int64(7)
	cases := []struct {
		t    DataType
		in   any
		want any
	}{
		{TinyIntType(), int8(-128), int64(-128)},
		{TinyIntType(), uint8(127), int64(127)},
		{IntType(), 3.0, int64(3)},
		{IntType(), float32(-4), int64(-4)},
		{IntType(), NewDecimal(500, 2), int64(5)},
		{IntType(), "1e3", int64(1000)},
		{IntType(), "10.0", int64(10)},
		{IntType(), myInt(9), int64(9)},
		{IntType(), &seven, int64(7)},
		{IntType(), (*int64)(nil), nil},
		{IntType(), valuer{int64(3)}, int64(3)},
		{BigIntType(), uint64(math.MaxInt64), int64(math.MaxInt64)},
		{BigIntType(), big.NewInt(12), int64(12)},
		{FloatType(), 1.1, float64(float32(1.1))},
		{FloatType(), math.Inf(1), math.Inf(1)},
		{DoubleType(), int64(1) << 60, float64(1 << 60)},
		{DoubleType(), NewDecimal(125, 2), 1.25},
		{DecimalType(5, 2), 1.005, NewDecimal(101, 2)}, // shortest text "1.005", half up
		{DecimalType(5, 2), float32(1.1), NewDecimal(110, 2)},
		{DecimalType(5, 2), int64(-999), NewDecimal(-99900, 2)},
		{DecimalType(5, 2), NewDecimal(-12345, 3), NewDecimal(-1235, 2)},
		{DecimalType(38, 0), big.NewInt(-5), NewDecimal(-5, 0)},
		{StringType(), []byte("hi"), "hi"},
		{StringType(), int64(42), "42"},
		{StringType(), NewDecimal(-5, 1), "-0.5"},
		{CharType(3), "é€x", "é€x"},
		{BytesType(), "ab", []byte("ab")},
		{BinaryType(2), []byte{1, 2}, []byte{1, 2}},
		{DateType(), time.Date(2026, 1, 2, 23, 30, 0, 0, paris), DateValue(20455)},
		{DateType(), DateValue(0), DateValue(0)},
		{TimeType(0), time.Date(2000, 1, 1, 12, 34, 56, 789e6, paris), TimeValue(45296 * time.Second)},
		{TimeType(3), TimeValue(45296789123456), TimeValue(45296789000000)},
		{TimestampType(6), time.Date(2026, 1, 2, 3, 4, 5, 123456789, paris), utc(2026, 1, 2, 3, 4, 5, 123456000)},
		{TimestampLTZType(3), time.Date(2026, 1, 2, 3, 4, 5, 123456789, paris), utc(2026, 1, 2, 2, 4, 5, 123000000)},
		{TimestampType(0), DateValue(1), utc(1970, 1, 2, 0, 0, 0, 0)},
		{TimestampType(9), time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC), utc(1969, 12, 31, 23, 59, 59, 999999999)},
		{ArrayType(IntType()), []int{1, 2}, []any{int64(1), int64(2)}},
		{ArrayType(IntType()), []any{1, nil}, []any{int64(1), nil}},
		{ArrayType(TinyIntType()), []byte{1, 2}, []any{int64(1), int64(2)}},
		{ArrayType(ArrayType(StringType())), [][]string{{"a"}, {}}, []any{[]any{"a"}, []any{}}},
		{MapType(StringType(), IntType()), map[string]int{"b": 2, "a": 1}, MapValue{Keys: []any{"a", "b"}, Values: []any{int64(1), int64(2)}}},
		{MapType(StringType(), IntType()), map[any]any{"a": nil}, MapValue{Keys: []any{"a"}, Values: []any{nil}}},
		{MapType(IntType(), StringType()), MapValue{Keys: []any{2, 1}, Values: []any{"x", "y"}}, MapValue{Keys: []any{int64(2), int64(1)}, Values: []any{"x", "y"}}},
		{RowType(Field{"a", IntType()}, Field{"b", StringType()}), []any{1, "x"}, []any{int64(1), "x"}},
		{RowType(Field{"a", IntType()}, Field{"b", StringType()}), map[string]any{"b": "x"}, []any{nil, "x"}},
		{StringType(), nil, nil},
	}
	for _, c := range cases {
		got, err := CoerceValue(c.t, c.in)
		require.NoError(t, err, "%s %#v", c.t, c.in)
		require.Equal(t, c.want, got, "%s %#v", c.t, c.in)
	}
}

func TestCoerceRefuses(t *testing.T) {
	cases := []struct {
		t   DataType
		in  any
		msg string
	}{
		{TinyIntType(), 300, "value 300 out of range for TINYINT"},
		{TinyIntType(), int64(-129), "value -129 out of range for TINYINT"},
		{SmallIntType(), uint16(40000), "value 40000 out of range for SMALLINT"},
		{IntType(), int64(1) << 40, "out of range for INT"},
		{BigIntType(), uint64(math.MaxUint64), "out of range for BIGINT"},
		{BigIntType(), 1e19, "out of range for BIGINT"},
		{IntType(), 1.5, "value 1.5 has a fractional part, not allowed for INT"},
		{IntType(), math.NaN(), "out of range for INT"},
		{IntType(), true, "cannot use boolean value true as INT"},
		{IntType(), "abc", `value "abc" is not a valid INT`},
		{IntType(), "1.5", "fractional part"},
		{IntType(), NewDecimal(15, 1), "fractional part"},
		{BooleanType(), 1, "cannot use integer value 1 as BOOLEAN"},
		{FloatType(), 1e39, "out of range for FLOAT"},
		{DoubleType(), "x", `value "x" is not a valid DOUBLE`},
		{DecimalType(5, 2), 1234.5, "value 1234.5 out of range for DECIMAL(5, 2)"},
		{DecimalType(5, 2), "999.995", `out of range for DECIMAL(5, 2)`},
		{DecimalType(5, 2), math.Inf(1), "out of range"},
		{DecimalType(5, 2), "1.2.3", "is not a valid DECIMAL(5, 2)"},
		{CharType(3), "abcd", `value "abcd" is too long for CHAR(3) (4 characters)`},
		{StringType(), "\xff", "not valid UTF-8"},
		{StringType(), true, "cannot use boolean"},
		{BinaryType(4), []byte{1, 2}, "has 2 bytes, BINARY(4) needs exactly 4"},
		{BytesType(), 5, "cannot use integer"},
		{DateType(), "2026-02-30", `value "2026-02-30" is not a valid DATE`},
		{DateType(), "2026-1-2", "not a valid DATE"},
		{DateType(), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), "out of range for DATE"},
		{DateType(), 5, "cannot use integer"},
		{TimeType(0), "25:00:00", "not a valid TIME(0)"},
		{TimeType(0), TimeValue(-1), "out of range for TIME(0)"},
		{TimestampType(6), "2026-01-02 25:00:00", "not a valid TIMESTAMP(6)"},
		{TimestampType(6), "yesterday", "not a valid TIMESTAMP(6)"},
		{TimestampType(9), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), "out of range for TIMESTAMP(9)"},
		{TimestampType(6), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), "out of range for TIMESTAMP(6)"},
		{ArrayType(TinyIntType()), []int{1, 300}, "element 1 of ARRAY<TINYINT>: invalid value: value 300 out of range for TINYINT"},
		{ArrayType(IntType()), "x", "cannot use string"},
		{MapType(StringType(), IntType()), map[any]any{nil: 1}, "NULL key"},
		{MapType(IntType(), IntType()), MapValue{Keys: []any{1, int8(1)}, Values: []any{1, 2}}, "key 1 appears twice"},
		{MapType(IntType(), IntType()), MapValue{Keys: []any{1}, Values: []any{}}, "1 keys and 0 values"},
		{RowType(Field{"a", IntType()}), []any{1, 2}, "needs 1 values, got 2"},
		{RowType(Field{"a", IntType()}), map[string]any{"z": 1}, `has no field "z"`},
		{IntType(), valuer{valuer{valuer{"x"}}}, `value "x" is not a valid INT`},
	}
	for _, c := range cases {
		_, err := CoerceValue(c.t, c.in)
		require.ErrorIs(t, err, ErrInvalidValue, "%s %#v", c.t, c.in)
		require.ErrorContains(t, err, c.msg, "%s %#v", c.t, c.in)
	}
}

type selfValuer struct{}

func (s selfValuer) Value() (driver.Value, error) { return s, nil }

func TestCoerceSelfReferencingValuer(t *testing.T) {
	_, err := CoerceValue(IntType(), selfValuer{})
	require.ErrorIs(t, err, ErrInvalidValue)
}

func TestCoerceTimestampLTZInLocation(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	v, err := CoerceValueIn(TimestampLTZType(0), "2026-01-02 09:00:00", tokyo)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), v)
	// An explicit offset wins over the location.
	v, err = CoerceValueIn(TimestampLTZType(0), "2026-01-02T09:00:00Z", tokyo)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC), v)
	// TIMESTAMP ignores the location: it is a wall clock.
	v, err = CoerceValueIn(TimestampType(0), "2026-01-02 09:00:00", tokyo)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC), v)
}

func TestCoerceCopiesBytes(t *testing.T) {
	in := []byte{1, 2, 3}
	v, err := CoerceValue(BytesType(), in)
	require.NoError(t, err)
	in[0] = 9
	require.Equal(t, []byte{1, 2, 3}, v)
}

// TestCoerceTimestampText: the forms ORMs that inline arguments send (bun
// writes '2026-01-02 03:04:05.123456' for MySQL and with '+00:00' for
// others; Go's time.Time.String form), and garbage refused by name.
func TestCoerceTimestampText(t *testing.T) {
	want := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	for _, in := range []string{
		"2026-01-02 03:04:05.123456",
		"2026-01-02 03:04:05.123456+00:00",
		"2026-01-02T03:04:05.123456Z",
		"2026-01-02 03:04:05.123456+0000",
		"2026-01-02 03:04:05.123456 +0000 UTC",
	} {
		v, err := CoerceValue(TimestampLTZType(6), in)
		require.NoError(t, err, in)
		require.Equal(t, want, v, in)
		v, err = CoerceValue(TimestampType(6), in)
		require.NoError(t, err, in)
		require.Equal(t, want, v, in)
	}
	v, err := CoerceValue(TimestampLTZType(6), "2026-01-02 05:04:05.123456+02:00")
	require.NoError(t, err)
	require.Equal(t, want, v, "an offset converts a TIMESTAMP_LTZ to UTC")
	for _, in := range []string{"not a time", "2026-13-02 00:00:00", "2026-01-02 25:00:00", "2026-01-02 03:04:05+25:00"} {
		_, err := CoerceValue(TimestampType(6), in)
		require.ErrorIs(t, err, ErrInvalidValue, in)
		require.ErrorContains(t, err, in)
	}
}
