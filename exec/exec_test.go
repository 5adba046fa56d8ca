package exec

import (
	"context"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// sliceSource yields prepared records; it releases them on Close.
type sliceSource struct {
	recs   []arrow.RecordBatch
	next   int
	closed bool
}

func (s *sliceSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.next >= len(s.recs) {
		return nil, io.EOF
	}
	s.next++
	return s.recs[s.next-1], nil
}

func (s *sliceSource) Close() error {
	s.closed = true
	for _, r := range s.recs {
		r.Release()
	}
	return nil
}

var testCols = []metadata.Column{
	{Name: "id", Type: metadata.BigIntType()},
	{Name: "s", Type: metadata.StringType()},
	{Name: "t", Type: metadata.TinyIntType()},
}

func col(i int) *sqlplan.ColumnRef {
	return &sqlplan.ColumnRef{Name: testCols[i].Name, Index: i, T: testCols[i].Type}
}

func lit(v any, t metadata.DataType) *sqlplan.Literal { return &sqlplan.Literal{Value: v, T: t} }

func makeRecords(t *testing.T, mem memory.Allocator, rows [][]any, per int) []arrow.RecordBatch {
	t.Helper()
	schema := metadata.ArrowSchema(testCols)
	var out []arrow.RecordBatch
	for start := 0; start < len(rows); start += per {
		b := array.NewRecordBuilder(mem, schema)
		for _, r := range rows[start:min(start+per, len(rows))] {
			for i, v := range r {
				require.NoError(t, metadata.AppendValue(b.Field(i), testCols[i].Type, v))
			}
		}
		out = append(out, b.NewRecordBatch())
		b.Release()
	}
	return out
}

func testRows() [][]any {
	return [][]any{
		{int64(1), "apple", int64(1)},
		{int64(2), "banana", nil},
		{int64(3), nil, int64(-5)},
		{int64(4), "apricot", int64(100)},
		{int64(5), "a_b%c", int64(7)},
		{int64(6), "cherry", int64(127)},
	}
}

// collect runs conds, then offset/limit, and returns the ids that pass.
func collect(t *testing.T, conds []sqlplan.Expr, offset, limit int64) []int64 {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &sliceSource{recs: makeRecords(t, mem, testRows(), 2)}
	layout := NewLayout(3, []int{0, 1, 2})
	op, err := Filter(Scan(src), conds, layout)
	require.NoError(t, err)
	op = Limit(op, offset, limit)
	op, err = Project(op, []sqlplan.Expr{col(0)}, []string{"id"}, layout, mem)
	require.NoError(t, err)
	var ids []int64
	for {
		b, err := op.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		ids64 := b.Rec.Column(0).(*array.Int64)
		for i := 0; i < b.NumRows(); i++ {
			ids = append(ids, ids64.Value(b.Row(i)))
		}
	}
	require.NoError(t, op.Close())
	require.True(t, src.closed)
	return ids
}

func TestFilterThreeValuedLogic(t *testing.T) {
	bigint, str, tiny := metadata.BigIntType(), metadata.StringType(), metadata.TinyIntType()
	cases := []struct {
		name string
		cond sqlplan.Expr
		want []int64
	}{
		{"eq", &sqlplan.Compare{Op: sqlplan.OpEq, L: col(0), R: lit(int64(3), bigint)}, []int64{3}},
		{"flipped", &sqlplan.Compare{Op: sqlplan.OpGt, L: lit(int64(3), bigint), R: col(0)}, []int64{1, 2}},
		{"null compare drops", &sqlplan.Compare{Op: sqlplan.OpNotEq, L: col(1), R: lit("apple", str)}, []int64{2, 4, 5, 6}},
		{"not of null stays null", &sqlplan.Not{E: &sqlplan.Compare{Op: sqlplan.OpEq, L: col(1), R: lit("apple", str)}}, []int64{2, 4, 5, 6}},
		{"null-safe eq", &sqlplan.Compare{Op: sqlplan.OpNullSafeEq, L: col(1), R: lit(nil, metadata.DataType{})}, []int64{3}},
		{"is null", &sqlplan.IsNull{E: col(2)}, []int64{2}},
		{"is not null", &sqlplan.IsNull{E: col(2), Not: true}, []int64{1, 3, 4, 5, 6}},
		{"or with null", &sqlplan.Or{L: &sqlplan.Compare{Op: sqlplan.OpLt, L: col(2), R: lit(int64(0), tiny)}, R: &sqlplan.Compare{Op: sqlplan.OpEq, L: col(1), R: lit("apple", str)}}, []int64{1, 3}},
		{"tinyint vs 300", &sqlplan.Compare{Op: sqlplan.OpEq, L: col(2), R: lit(int64(300), bigint)}, nil},
		{"tinyint below 300", &sqlplan.Compare{Op: sqlplan.OpLt, L: col(2), R: lit(int64(300), bigint)}, []int64{1, 3, 4, 5, 6}},
		{"decimal literal vs int", &sqlplan.Compare{Op: sqlplan.OpGt, L: col(0), R: lit(dec(t, "2.5"), metadata.DecimalType(2, 1))}, []int64{3, 4, 5, 6}},
		{"in", &sqlplan.In{E: col(0), List: []sqlplan.Expr{lit(int64(2), bigint), lit(int64(9), bigint)}}, []int64{2}},
		{"not in with null is never true", &sqlplan.In{E: col(0), Not: true, List: []sqlplan.Expr{lit(int64(2), bigint), lit(nil, metadata.DataType{})}}, nil},
		{"between", &sqlplan.Between{E: col(0), Lo: lit(int64(2), bigint), Hi: lit(int64(4), bigint)}, []int64{2, 3, 4}},
		{"not between", &sqlplan.Between{E: col(0), Lo: lit(int64(2), bigint), Hi: lit(int64(4), bigint), Not: true}, []int64{1, 5, 6}},
		{"like prefix", &sqlplan.Like{E: col(1), Pattern: lit("ap%", str)}, []int64{1, 4}},
		{"like is case-sensitive", &sqlplan.Like{E: col(1), Pattern: lit("AP%", str)}, nil},
		{"like underscore", &sqlplan.Like{E: col(1), Pattern: lit("_pple", str)}, []int64{1}},
		{"like escape", &sqlplan.Like{E: col(1), Pattern: lit(`a\_b\%c`, str)}, []int64{5}},
		{"like custom escape", &sqlplan.Like{E: col(1), Pattern: lit(`a!_b%`, str), Escape: '!'}, []int64{5}},
		{"not like", &sqlplan.Like{E: col(1), Pattern: lit("%an%", str), Not: true}, []int64{1, 4, 5, 6}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, collect(t, []sqlplan.Expr{tc.cond}, 0, -1))
		})
	}
}

func dec(t *testing.T, s string) metadata.DecimalValue {
	d, err := metadata.ParseDecimal(s, 10, 1)
	require.NoError(t, err)
	return d
}

func TestLimitOffset(t *testing.T) {
	require.Equal(t, []int64{1, 2, 3}, collect(t, nil, 0, 3))
	require.Equal(t, []int64{3, 4}, collect(t, nil, 2, 2))
	require.Equal(t, []int64{6}, collect(t, nil, 5, 10))
	require.Nil(t, collect(t, nil, 6, 10))
	require.Equal(t, []int64{5, 6}, collect(t, nil, 4, -1))
	gt1 := &sqlplan.Compare{Op: sqlplan.OpGt, L: col(0), R: lit(int64(1), metadata.BigIntType())}
	require.Equal(t, []int64{4, 5}, collect(t, []sqlplan.Expr{gt1}, 2, 2))
}

// countingSource counts how many records were pulled.
type countingSource struct {
	sliceSource
	pulled int
}

func (c *countingSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	c.pulled++
	return c.sliceSource.Next(ctx)
}

func TestLimitStopsPulling(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &countingSource{sliceSource: sliceSource{recs: makeRecords(t, mem, testRows(), 1)}}
	op := Limit(Scan(src), 0, 2)
	n, err := Drain(context.Background(), op)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	require.Equal(t, 2, src.pulled, "a satisfied limit must not read further")
	require.NoError(t, op.Close())
}

func TestProjectComputedColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &sliceSource{recs: makeRecords(t, mem, testRows(), 6)}
	layout := NewLayout(3, []int{0, 1, 2})
	isNull := &sqlplan.IsNull{E: col(1)}
	gt := &sqlplan.Compare{Op: sqlplan.OpGt, L: col(0), R: lit(int64(1), metadata.BigIntType())}
	op, err := Filter(Scan(src), []sqlplan.Expr{gt}, layout)
	require.NoError(t, err)
	op, err = Project(op, []sqlplan.Expr{col(0), isNull, lit("k", metadata.StringType())}, []string{"id", "n", "k"}, layout, mem)
	require.NoError(t, err)
	b, err := op.Next(context.Background())
	require.NoError(t, err)
	require.Equal(t, 5, b.NumRows())
	var got [][]any
	for i := 0; i < b.NumRows(); i++ {
		r := b.Row(i)
		got = append(got, []any{
			metadata.ValueAt(b.Rec.Column(0), metadata.BigIntType(), r),
			metadata.ValueAt(b.Rec.Column(1), metadata.BooleanType(), r),
			metadata.ValueAt(b.Rec.Column(2), metadata.StringType(), r),
		})
	}
	require.Equal(t, [][]any{
		{int64(2), false, "k"}, {int64(3), true, "k"}, {int64(4), false, "k"},
		{int64(5), false, "k"}, {int64(6), false, "k"},
	}, got)
	_, err = op.Next(context.Background())
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, op.Close())
}

func TestCompileErrors(t *testing.T) {
	layout := NewLayout(3, []int{0, 1, 2})
	_, err := Filter(Scan(&sliceSource{}), []sqlplan.Expr{&sqlplan.Compare{Op: sqlplan.OpEq, L: col(0), R: lit([]byte{1}, metadata.BytesType())}}, layout)
	require.ErrorIs(t, err, metadata.ErrUnsupported)
	require.Contains(t, err.Error(), "cannot compare")
	_, err = Filter(Scan(&sliceSource{}), []sqlplan.Expr{col(1)}, layout)
	require.ErrorContains(t, err, "not a condition")
	narrow := NewLayout(3, []int{0})
	_, err = Filter(Scan(&sliceSource{}), []sqlplan.Expr{&sqlplan.IsNull{E: col(2)}}, narrow)
	require.ErrorContains(t, err, "not read by the scan")
}

func TestScanChecksContext(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &sliceSource{recs: makeRecords(t, mem, testRows(), 2)}
	op := Scan(src)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := op.Next(ctx)
	require.NoError(t, err)
	cancel()
	_, err = op.Next(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, op.Close())
}

func TestArithmetic(t *testing.T) {
	bigint := metadata.BigIntType()
	d := func(s string, scale int) metadata.DecimalValue {
		v, err := metadata.ParseDecimal(s, 38, scale)
		require.NoError(t, err)
		return v
	}
	for _, tc := range []struct {
		op   byte
		t    metadata.DataType
		a, b any
		want any
		err  string
	}{
		{'+', bigint, int64(2), int64(3), int64(5), ""},
		{'+', bigint, int64(math.MaxInt64), int64(1), nil, "overflow"},
		{'-', bigint, int64(math.MinInt64), int64(1), nil, "overflow"},
		{'*', bigint, int64(1) << 40, int64(1) << 30, nil, "overflow"},
		{'*', bigint, int64(-3), int64(4), int64(-12), ""},
		{'d', bigint, int64(7), int64(2), int64(3), ""},
		{'d', bigint, int64(7), int64(0), nil, ""},
		{'%', bigint, int64(-7), int64(3), int64(-1), ""},
		{'/', metadata.DecimalType(38, 4), int64(1), int64(3), d("0.3333", 4), ""},
		{'/', metadata.DecimalType(38, 4), int64(2), int64(3), d("0.6667", 4), ""},
		{'/', metadata.DecimalType(38, 4), int64(1), int64(0), nil, ""},
		{'+', metadata.DecimalType(38, 2), d("1.25", 2), int64(1), d("2.25", 2), ""},
		{'*', metadata.DecimalType(38, 4), d("1.25", 2), d("0.10", 2), d("0.1250", 4), ""},
		{'-', metadata.DoubleType(), 1.5, int64(2), -0.5, ""},
		{'/', metadata.DoubleType(), 1.0, 0.0, nil, ""},
	} {
		got, err := arith(tc.op, tc.t, tc.a, tc.b)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			require.ErrorIs(t, err, metadata.ErrInvalidValue)
			continue
		}
		require.NoError(t, err)
		if wd, ok := tc.want.(metadata.DecimalValue); ok {
			require.Equal(t, 0, wd.Cmp(got.(metadata.DecimalValue)), "%v %c %v = %v", tc.a, tc.op, tc.b, got)
			continue
		}
		require.Equal(t, tc.want, got, "%v %c %v", tc.a, tc.op, tc.b)
	}
}

func TestOverflowInFilterIsAnError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := &sliceSource{recs: makeRecords(t, mem, testRows(), 6)}
	layout := NewLayout(3, []int{0, 1, 2})
	huge := lit(int64(math.MaxInt64), metadata.BigIntType())
	sum := &sqlplan.Arith{Op: '+', L: col(0), R: huge, T: metadata.BigIntType()}
	op, err := Filter(Scan(src), []sqlplan.Expr{&sqlplan.Compare{Op: sqlplan.OpGt, L: sum, R: lit(int64(0), metadata.BigIntType())}}, layout)
	require.NoError(t, err)
	_, err = op.Next(context.Background())
	require.ErrorIs(t, err, metadata.ErrInvalidValue)
	require.ErrorContains(t, err, "overflow")
	require.NoError(t, op.Close())
}
