package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flusslite/fluss/sqlplan"
)

// Selection kernels: a comparison of an integer column with an integer
// literal, evaluated over a whole batch in one typed loop that appends the
// passing rows to the selection vector, instead of one call per row
// through boolFn. A condition of any other shape uses the row-at-a-time
// path.

// selKernel appends to out the rows of in (every row of rec when in is
// nil) that satisfy the condition, and returns out.
type selKernel func(rec arrow.RecordBatch, in []int32, out []int32) []int32

// intCompareKernel returns the kernel of cond, or nil when cond is not a
// comparison of an integer column with a non-NULL integer literal.
func intCompareKernel(cond sqlplan.Expr, env *env) selKernel {
	x, ok := cond.(*sqlplan.Compare)
	if !ok {
		return nil
	}
	col, ok := x.L.(*sqlplan.ColumnRef)
	lit, ok2 := x.R.(*sqlplan.Literal)
	op := x.Op
	if !ok || !ok2 {
		col, ok = x.R.(*sqlplan.ColumnRef)
		lit, ok2 = x.L.(*sqlplan.Literal)
		if !ok || !ok2 {
			return nil
		}
		op = flip(op)
	}
	v, isInt := lit.Value.(int64)
	if !isInt || !col.T.IsInteger() {
		return nil
	}
	switch op {
	case sqlplan.OpEq, sqlplan.OpNotEq, sqlplan.OpLt, sqlplan.OpLtEq, sqlplan.OpGt, sqlplan.OpGtEq:
	default:
		return nil
	}
	pos, err := columnPos(col, env)
	if err != nil {
		return nil
	}
	return func(rec arrow.RecordBatch, in []int32, out []int32) []int32 {
		arr := rec.Column(pos)
		switch a := arr.(type) {
		case *array.Int8:
			return selectInts(a.Int8Values(), arr, op, v, in, out)
		case *array.Int16:
			return selectInts(a.Int16Values(), arr, op, v, in, out)
		case *array.Int32:
			return selectInts(a.Int32Values(), arr, op, v, in, out)
		case *array.Int64:
			return selectInts(a.Int64Values(), arr, op, v, in, out)
		}
		// Not an integer array: every row is NULL, so none passes.
		return out
	}
}

// selectInts dispatches on op once per batch so that each loop body is a
// single comparison.
func selectInts[T intValues](vals []T, arr arrow.Array, op sqlplan.CmpOp, v int64, in, out []int32) []int32 {
	switch op {
	case sqlplan.OpEq:
		return selectWhere(vals, arr, in, out, func(x int64) bool { return x == v })
	case sqlplan.OpNotEq:
		return selectWhere(vals, arr, in, out, func(x int64) bool { return x != v })
	case sqlplan.OpLt:
		return selectWhere(vals, arr, in, out, func(x int64) bool { return x < v })
	case sqlplan.OpLtEq:
		return selectWhere(vals, arr, in, out, func(x int64) bool { return x <= v })
	case sqlplan.OpGt:
		return selectWhere(vals, arr, in, out, func(x int64) bool { return x > v })
	}
	return selectWhere(vals, arr, in, out, func(x int64) bool { return x >= v })
}

// selectWhere appends the non-NULL rows whose value passes. pass is a
// closure literal at each call site, which the compiler inlines.
func selectWhere[T intValues](vals []T, arr arrow.Array, in, out []int32, pass func(int64) bool) []int32 {
	nulls := arr.NullN() > 0
	if in == nil {
		for i, x := range vals[:arr.Len()] {
			if pass(int64(x)) && !(nulls && arr.IsNull(i)) {
				out = append(out, int32(i))
			}
		}
		return out
	}
	for _, r := range in {
		if pass(int64(vals[r])) && !(nulls && arr.IsNull(int(r))) {
			out = append(out, r)
		}
	}
	return out
}
