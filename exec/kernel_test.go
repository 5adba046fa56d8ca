package exec

import (
	"context"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// TestSelectionKernelsMatchRowPath checks the integer comparison kernels
// against the row-at-a-time path (an OR of a condition with itself has no
// kernel), for each operator, both operand orders, NULLs, and a chain of
// kernels each reading the previous one's selection.
func TestSelectionKernelsMatchRowPath(t *testing.T) {
	bigint := metadata.BigIntType()
	ops := []sqlplan.CmpOp{sqlplan.OpEq, sqlplan.OpNotEq, sqlplan.OpLt, sqlplan.OpLtEq, sqlplan.OpGt, sqlplan.OpGtEq}
	for _, op := range ops {
		for _, c := range []int{0, 2} {
			for _, v := range []int64{-5, 3, 7, 300} {
				for _, cond := range []sqlplan.Expr{
					&sqlplan.Compare{Op: op, L: col(c), R: lit(v, bigint)},
					&sqlplan.Compare{Op: op, L: lit(v, bigint), R: col(c)},
				} {
					env := &env{layout: NewLayout(3, []int{0, 1, 2})}
					require.NotNil(t, intCompareKernel(cond, env))
					want := collect(t, []sqlplan.Expr{&sqlplan.Or{L: cond, R: cond}}, 0, -1)
					require.Equal(t, want, collect(t, []sqlplan.Expr{cond}, 0, -1), "%s", cond)
				}
			}
		}
	}
	chain := []sqlplan.Expr{
		&sqlplan.Compare{Op: sqlplan.OpGt, L: col(2), R: lit(int64(0), bigint)},
		&sqlplan.Compare{Op: sqlplan.OpLt, L: col(2), R: lit(int64(120), bigint)},
		&sqlplan.Compare{Op: sqlplan.OpNotEq, L: col(0), R: lit(int64(4), bigint)},
	}
	require.Equal(t, []int64{1, 5}, collect(t, chain, 0, -1))
}

func TestIntMap(t *testing.T) {
	m := newIntMap()
	// Small non-negative keys take the dense table (growing it several
	// times), the rest the hash; 65535 and 65536 sit on the border.
	keys := []int64{0, -1, 1, math.MinInt64, math.MaxInt64, 65535, 65536, 63, 64, 200}
	for i := range int64(100_000) {
		keys = append(keys, i*1000-7)
	}
	for i, k := range keys {
		_, slot, ok := m.lookup(k)
		require.False(t, ok, "%d", k)
		m.insert(slot, k, int32(i))
	}
	require.Equal(t, len(keys), m.n)
	for i, k := range keys {
		v, _, ok := m.lookup(k)
		require.True(t, ok, "%d", k)
		require.Equal(t, int32(i), v)
	}
	_, _, ok := m.lookup(12345)
	require.False(t, ok)
}

// TestDistinctIntegerColumn runs DISTINCT on one TINYINT column with a
// NULL, over batches that repeat values, as the integer map does it.
func TestDistinctIntegerColumn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := append(testRows(), testRows()...)
	recs := makeRecords(t, mem, rows, 4)
	layout := NewLayout(3, []int{0, 1, 2})
	op, err := Project(Scan(&sliceSource{recs: recs}), []sqlplan.Expr{col(2)}, []string{"t"}, layout, mem)
	require.NoError(t, err)
	d := Distinct(op, 1, []metadata.DataType{metadata.TinyIntType()}, Options{})
	require.NotNil(t, d.(*distinctOp).ints)
	var got []any
	for {
		b, err := d.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		a := b.Rec.Column(0).(*array.Int8)
		for i := range b.NumRows() {
			r := b.Row(i)
			if a.IsNull(r) {
				got = append(got, nil)
			} else {
				got = append(got, int64(a.Value(r)))
			}
		}
	}
	require.NoError(t, d.Close())
	require.Equal(t, []any{int64(1), nil, int64(-5), int64(100), int64(7), int64(127)}, got)
}
