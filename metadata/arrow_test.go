package metadata

import (
	"bytes"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"
)

func TestArrowTypes(t *testing.T) {
	cases := []struct {
		t    string
		want string
	}{
		{"BOOLEAN", "bool"},
		{"TINYINT", "int8"},
		{"SMALLINT", "int16"},
		{"INT", "int32"},
		{"BIGINT", "int64"},
		{"FLOAT", "float32"},
		{"DOUBLE", "float64"},
		{"DECIMAL(38,10)", "decimal(38, 10)"},
		{"CHAR(3)", "utf8"},
		{"STRING", "utf8"},
		{"BINARY(4)", "fixed_size_binary[4]"},
		{"BYTES", "binary"},
		{"DATE", "date32"},
		{"TIME(0)", "time32[s]"},
		{"TIME(3)", "time32[ms]"},
		{"TIME(6)", "time64[us]"},
		{"TIME(9)", "time64[ns]"},
		{"TIMESTAMP(0)", "timestamp[s]"},
		{"TIMESTAMP(2)", "timestamp[ms]"},
		{"TIMESTAMP(6)", "timestamp[us]"},
		{"TIMESTAMP_LTZ(3)", "timestamp[ms]"},
		{"TIMESTAMP_LTZ(9)", "timestamp[ns]"},
		{"ARRAY<INT>", "list<item: int32, nullable>"},
		{"MAP<STRING,INT>", "map<utf8, int32, items_nullable>"},
		{"ROW<a INT, b STRING>", "struct<a: int32 nullable, b: utf8 nullable>"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, mustType(c.t).ArrowType().String(), c.t)
	}
	s := ArrowSchema([]Column{{Name: "id", Type: BigIntType(), NotNull: true}, {Name: "v", Type: StringType()}})
	require.False(t, s.Field(0).Nullable)
	require.True(t, s.Field(1).Nullable)
	require.Equal(t, arrow.Null, DataType{}.ArrowType())
}

// roundTripCases holds, per type, values in canonical form (nil included)
// that must come back from Arrow unchanged.
func roundTripCases() []struct {
	t    DataType
	vals []any
} {
	ts := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	dec := func(s string, p, sc int) DecimalValue {
		d, err := ParseDecimal(s, p, sc)
		if err != nil {
			panic(err)
		}
		return d
	}
	return []struct {
		t    DataType
		vals []any
	}{
		{BooleanType(), []any{true, nil, false}},
		{TinyIntType(), []any{int64(-128), nil, int64(127)}},
		{SmallIntType(), []any{int64(-32768), int64(32767), nil}},
		{IntType(), []any{int64(-2147483648), nil, int64(2147483647)}},
		{BigIntType(), []any{int64(-9223372036854775808), int64(0), nil}},
		{FloatType(), []any{float64(float32(1.1)), nil, float64(float32(-3.4e38))}},
		{DoubleType(), []any{1.1, nil, -1e308}},
		{DecimalType(38, 10), []any{dec("1234567890123456789012345678.1234567890", 38, 10), nil, dec("-0.0000000001", 38, 10)}},
		{DecimalType(5, 2), []any{dec("-999.99", 5, 2), nil}},
		{CharType(3), []any{"abc", nil, "é"}},
		{StringType(), []any{"", nil, "hello, 世界"}},
		{BinaryType(4), []any{[]byte{0, 1, 2, 255}, nil}},
		{BytesType(), []any{[]byte{}, nil, []byte("x")}},
		{DateType(), []any{DateValue(-719162), nil, DateValue(20455), DateValue(2932896)}},
		{TimeType(0), []any{TimeValue(0), nil, TimeValue(86399 * time.Second)}},
		{TimeType(3), []any{TimeValue(45296789 * time.Millisecond), nil}},
		{TimeType(6), []any{TimeValue(45296789123 * time.Microsecond), nil}},
		{TimeType(9), []any{TimeValue(45296789123456), nil, TimeValue(86400e9 - 1)}},
		{TimestampType(0), []any{ts(1, 1, 1, 0, 0, 0, 0), nil, ts(9999, 12, 31, 23, 59, 59, 0)}},
		{TimestampType(3), []any{ts(1969, 12, 31, 23, 59, 59, 999e6), nil}},
		{TimestampType(6), []any{ts(2026, 1, 2, 3, 4, 5, 123456000), nil, ts(1900, 1, 1, 0, 0, 0, 1000)}},
		{TimestampType(9), []any{ts(2026, 1, 2, 3, 4, 5, 123456789), nil, ts(1969, 12, 31, 23, 59, 59, 999999999)}},
		{TimestampLTZType(3), []any{ts(2026, 1, 2, 3, 4, 5, 123e6), nil}},
		{ArrayType(IntType()), []any{[]any{int64(1), nil, int64(3)}, nil, []any{}}},
		{ArrayType(ArrayType(StringType())), []any{[]any{[]any{"a"}, nil, []any{}}, nil}},
		{MapType(StringType(), IntType()), []any{
			MapValue{Keys: []any{"a", "b"}, Values: []any{int64(1), nil}}, nil, MapValue{Keys: []any{}, Values: []any{}},
		}},
		{RowType(Field{"a", IntType()}, Field{"b", StringType()}), []any{[]any{int64(1), "x"}, nil, []any{nil, nil}}},
		{RowType(Field{"m", MapType(IntType(), ArrayType(DecimalType(20, 2)))}), []any{
			[]any{MapValue{Keys: []any{int64(7)}, Values: []any{[]any{dec("1.25", 20, 2), nil}}}}, nil,
		}},
	}
}

func TestArrowRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	for _, c := range roundTripCases() {
		t.Run(c.t.String(), func(t *testing.T) {
			b := array.NewBuilder(mem, c.t.ArrowType())
			defer b.Release()
			for _, v := range c.vals {
				require.NoError(t, AppendValue(b, c.t, v))
			}
			arr := b.NewArray()
			defer arr.Release()
			if v, ok := arr.(interface{ ValidateFull() error }); ok {
				require.NoError(t, v.ValidateFull())
			}
			require.Equal(t, len(c.vals), arr.Len())
			for i, want := range c.vals {
				require.Equal(t, want, ValueAt(arr, c.t, i), "row %d", i)
			}
			// A slice reads the same rows at shifted indexes.
			if arr.Len() > 1 {
				s := array.NewSlice(arr, 1, int64(arr.Len()))
				defer s.Release()
				for i := 1; i < len(c.vals); i++ {
					require.Equal(t, c.vals[i], ValueAt(s, c.t, i-1), "sliced row %d", i)
				}
			}
		})
	}
}

// TestArrowIPCRoundTrip writes every type through Arrow IPC, as the log
// segments do, and reads the same canonical values back.
func TestArrowIPCRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	cases := roundTripCases()
	cols := make([]Column, len(cases))
	for i, c := range cases {
		cols[i] = Column{Name: "c" + string(rune('a'+i)), Type: c.t}
	}
	schema := ArrowSchema(cols)
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	const rows = 3
	for i, c := range cases {
		for r := range rows {
			var v any
			if r < len(c.vals) {
				v = c.vals[r]
			}
			require.NoError(t, AppendValue(rb.Field(i), c.t, v))
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()

	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())

	r, err := ipc.NewReader(&buf, ipc.WithAllocator(mem))
	require.NoError(t, err)
	defer r.Release()
	require.True(t, r.Next())
	got := r.RecordBatch()
	for i, c := range cases {
		for row := range rows {
			var want any
			if row < len(c.vals) {
				want = c.vals[row]
			}
			require.Equal(t, want, ValueAt(got.Column(i), c.t, row), "%s row %d", c.t, row)
		}
	}
	require.False(t, r.Next())
	require.NoError(t, r.Err())
}

func TestAppendValueRefuses(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cases := []struct {
		t DataType
		v any
	}{
		{IntType(), "1"},
		{TinyIntType(), int64(300)},
		{BinaryType(4), []byte{1}},
		{DecimalType(5, 2), NewDecimal(1, 3)}, // would lose a digit
		{DecimalType(5, 2), NewDecimal(100000, 0)},
		{TimestampType(9), time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC)},
		{TimeType(3), TimeValue(-1)},
		{ArrayType(IntType()), []int64{1}},
		{RowType(Field{"a", IntType()}), []any{1, 2}},
		{MapType(IntType(), IntType()), MapValue{Keys: []any{nil}, Values: []any{int64(1)}}},
	}
	for _, c := range cases {
		b := array.NewBuilder(mem, c.t.ArrowType())
		require.ErrorIs(t, AppendValue(b, c.t, c.v), ErrInvalidValue, "%s %#v", c.t, c.v)
		b.Release()
	}
}

func TestValueAtMismatchDoesNotPanic(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewBuilder(mem, ArrayType(IntType()).ArrowType())
	defer b.Release()
	require.NoError(t, AppendValue(b, ArrayType(IntType()), []any{int64(1)}))
	arr := b.NewArray()
	defer arr.Release()
	require.Nil(t, ValueAt(arr, StringType(), 0))
	require.Nil(t, ValueAt(arr, ArrayType(IntType()), 5))
	require.Nil(t, ValueAt(arr, ArrayType(IntType()), -1))
}
