package metadata

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// TestPartitionNames replays testdata/partition_names:
//
//	render type=<T>   input: one value per line, as SQL literal text; prints
//	                  the partition value and the typed value parsed back
//	parse type=<T>    input: one rendered partition value per line
func TestPartitionNames(t *testing.T) {
	datadriven.RunTest(t, "testdata/partition_names", func(t *testing.T, d *datadriven.TestData) string {
		var ts string
		d.ScanArgs(t, "type", &ts)
		typ, err := parseTestType(ts)
		require.NoError(t, err)
		var out strings.Builder
		for _, line := range strings.Split(d.Input, "\n") {
			switch d.Cmd {
			case "render":
				s, err := PartitionValueString(typ, line)
				if err != nil {
					fmt.Fprintf(&out, "error: %v\n", err)
					continue
				}
				back, err := ParsePartitionValue(typ, s)
				require.NoError(t, err, "parsing back %q", s)
				// The name must round-trip to the same name.
				again, err := PartitionValueString(typ, back)
				require.NoError(t, err)
				require.Equal(t, s, again)
				fmt.Fprintf(&out, "%s -> %s\n", s, FormatValue(typ, back))
			case "parse":
				v, err := ParsePartitionValue(typ, line)
				if err != nil {
					fmt.Fprintf(&out, "error: %v\n", err)
					continue
				}
				fmt.Fprintf(&out, "%s\n", FormatValue(typ, v))
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
		}
		return out.String()
	})
}

func TestPartitionValuesCompareTyped(t *testing.T) {
	ten, err := ParsePartitionValue(IntType(), "10")
	require.NoError(t, err)
	two, err := ParsePartitionValue(IntType(), "2")
	require.NoError(t, err)
	require.Equal(t, 1, Compare(ten, two), "INT partition 10 > 2")

	d1, err := ParsePartitionValue(DateType(), "2026-01-09")
	require.NoError(t, err)
	d2, err := ParsePartitionValue(DateType(), "2026-01-10")
	require.NoError(t, err)
	require.Equal(t, -1, Compare(d1, d2))
}

func TestPartitionValueStringGoValues(t *testing.T) {
	cases := []struct {
		t    DataType
		v    any
		want string
	}{
		{IntType(), int32(-7), "-7"},
		{BooleanType(), true, "true"},
		{BytesType(), []byte{0xAB, 0x01}, "ab01"},
		{DateType(), time.Date(2026, 1, 2, 23, 0, 0, 0, time.UTC), "2026-01-02"},
		{TimestampType(3), time.Date(2026, 1, 2, 3, 4, 5, 120e6, time.UTC), "2026-01-02-03-04-05_12"},
		{TimestampType(0), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02-03-04-05_"},
		// LTZ renders the instant in UTC.
		{TimestampLTZType(6), time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600)), "2026-01-02-02-04-05_"},
		{DoubleType(), math.Inf(-1), "-Inf"},
		{DoubleType(), math.NaN(), "NaN"},
		{FloatType(), float32(0.1), "0_1"},
		{DoubleType(), 1e10, "1_0E10"},
		{DoubleType(), 1.5e-4, "1_5E-4"},
		{DoubleType(), 1234567.0, "1234567_0"},
		{DoubleType(), 12345678.0, "1_2345678E7"},
		{DoubleType(), -0.0 * 1, "0_0"},
		{DoubleType(), math.Copysign(0, -1), "-0_0"},
		{TimeType(3), TimeValue(13*time.Hour + 5*time.Second + 7*time.Millisecond), "13-00-05_007"},
		// Fluss's three digits up to TIME(3); p digits for a finer TIME(p),
		// so that a name identifies its value.
		{TimeType(0), TimeValue(13 * time.Hour), "13-00-00_000"},
		{TimeType(4), TimeValue(100 * time.Microsecond), "00-00-00_0001"},
		{TimeType(6), TimeValue(23*time.Hour + 59*time.Minute + 59*time.Second + 999999*time.Microsecond), "23-59-59_999999"},
		{TimeType(9), TimeValue(100 * time.Microsecond), "00-00-00_000100000"},
		{TimeType(9), "23:59:59.999999999", "23-59-59_999999999"},
	}
	for _, c := range cases {
		got, err := PartitionValueString(c.t, c.v)
		require.NoError(t, err, "%s %v", c.t, c.v)
		require.Equal(t, c.want, got, "%s %v", c.t, c.v)
	}
}

func TestPartitionValueStringRefuses(t *testing.T) {
	for _, c := range []struct {
		t    DataType
		v    any
		want error
	}{
		{StringType(), "a/b", ErrInvalidValue},
		{StringType(), "__historical__", ErrInvalidValue},
		{StringType(), "", ErrInvalidValue},
		{StringType(), strings.Repeat("x", 201), ErrInvalidValue},
		{StringType(), nil, ErrInvalidValue},
		{DecimalType(10, 2), "1.5", ErrInvalidType},
		{ArrayType(IntType()), []int{1}, ErrInvalidType},
		{TinyIntType(), 300, ErrInvalidValue},
	} {
		_, err := PartitionValueString(c.t, c.v)
		require.ErrorIs(t, err, c.want, "%s %v", c.t, c.v)
	}
	s, err := PartitionValueString(StringType(), strings.Repeat("x", 200))
	require.NoError(t, err)
	require.Len(t, s, 200)
	_, err = PartitionValueString(StringType(), "a b")
	require.ErrorContains(t, err, `partition value "a b" of STRING`)
}

func TestPartitionName(t *testing.T) {
	require.Equal(t, "2026-01-01$US", PartitionName([]string{"2026-01-01", "US"}))
	require.Equal(t, "x", PartitionName([]string{"x"}))
}

func TestPartitionTypeAllowed(t *testing.T) {
	for _, typ := range []DataType{StringType(), CharType(2), BooleanType(), BinaryType(2), BytesType(),
		TinyIntType(), SmallIntType(), IntType(), BigIntType(), FloatType(), DoubleType(), DateType(),
		TimeType(0), TimestampType(6), TimestampLTZType(3)} {
		require.True(t, PartitionTypeAllowed(typ), "%s", typ)
	}
	for _, typ := range []DataType{DecimalType(10, 2), ArrayType(IntType()), MapType(StringType(), IntType()), RowType(Field{"a", IntType()})} {
		require.False(t, PartitionTypeAllowed(typ), "%s", typ)
	}
}

// TestTimePartitionNamesAreExact: issue 15's item 3. Values of a TIME(p >
// 3) key that differ below the millisecond get partitions of their own,
// and each name reads back as its value.
func TestTimePartitionNamesAreExact(t *testing.T) {
	for p := 0; p <= MaxTimePrecision; p++ {
		typ := TimeType(p)
		seen := map[string]TimeValue{}
		for _, v := range []TimeValue{0, 1, 100e3, 200e3, 999999, 1e6, 86399999999999, 86399999000000, 45000500000001} {
			c, err := CoerceValue(typ, v)
			require.NoError(t, err)
			name, err := PartitionValueString(typ, c)
			require.NoError(t, err)
			if other, ok := seen[name]; ok {
				require.Equal(t, other, c, "%s: %q names two values", typ, name)
			}
			seen[name] = c.(TimeValue)
			back, err := ParsePartitionValue(typ, name)
			require.NoError(t, err)
			require.Equal(t, c, back, "%s %q", typ, name)
			lo, hi, err := ParsePartitionRange(typ, name)
			require.NoError(t, err)
			require.Equal(t, c, lo)
			require.Equal(t, c, hi)
		}
	}
	for _, bad := range []string{"00-00-00_0001", "00-00-00_00", "00-00-00_00000000x", "24-00-00_000", "00-00-00"} {
		_, err := ParsePartitionValue(TimeType(9), bad)
		require.ErrorIs(t, err, ErrInvalidValue, bad)
	}
}

// TestCoarseTimePartitionRange: a TIME(p > 3) partition an earlier version
// named to the millisecond holds that millisecond's values.
func TestCoarseTimePartitionRange(t *testing.T) {
	lo, hi, err := ParsePartitionRange(TimeType(9), "23-59-59_999")
	require.NoError(t, err)
	require.Equal(t, TimeValue(86399999000000), lo)
	require.Equal(t, TimeValue(86399999999999), hi)
	lo, hi, err = ParsePartitionRange(TimeType(6), "00-00-00_000")
	require.NoError(t, err)
	require.Equal(t, TimeValue(0), lo)
	require.Equal(t, TimeValue(999000), hi)
	require.True(t, PartitionNamesMayBeCoarse(TimeType(4)))
	require.False(t, PartitionNamesMayBeCoarse(TimeType(3)))
	require.False(t, PartitionNamesMayBeCoarse(TimestampType(9)))
}

func TestCoarsePartitionName(t *testing.T) {
	name, ok := CoarsePartitionName([]DataType{TimeType(9), StringType()}, []string{"00-00-00_000100000", "US"})
	require.True(t, ok)
	require.Equal(t, "00-00-00_000$US", name)
	name, ok = CoarsePartitionName([]DataType{TimeType(6)}, []string{"23-59-59_999999"})
	require.True(t, ok)
	require.Equal(t, "23-59-59_999", name)
	for _, c := range []struct {
		types  []DataType
		values []string
	}{
		{[]DataType{TimeType(3)}, []string{"00-00-00_000"}},
		{[]DataType{TimeType(9)}, []string{"00-00-00_000"}},
		{[]DataType{StringType()}, []string{"00-00-00_000100000"}},
		{[]DataType{TimeType(9)}, []string{"a", "b"}},
	} {
		_, ok := CoarsePartitionName(c.types, c.values)
		require.False(t, ok, "%v %v", c.types, c.values)
	}
}
