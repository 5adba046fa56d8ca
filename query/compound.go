package query

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// OpenCompound builds the operators of a set operation: each SELECT as it
// would run alone (over a FROM tree here, else through r), its outputs
// converted to the types the SELECTs share, then exec.SetOp, then the
// ORDER BY and LIMIT of the whole. Its records hold exactly the Output
// columns.
func OpenCompound(ctx context.Context, r Reader, cp *sqlplan.CompoundPlan, opts exec.Options) (exec.Operator, error) {
	return openCompound(ctx, r, cp, opts, nil)
}

// openCompound is OpenCompound, counting into a when it is not nil.
func openCompound(ctx context.Context, r Reader, cp *sqlplan.CompoundPlan, opts exec.Options, a *Analysis) (exec.Operator, error) {
	types := CompoundTypes(cp)
	left, err := openBranch(ctx, r, cp.Left, cp.Output, opts, a)
	if err != nil {
		return nil, err
	}
	right, err := openBranch(ctx, r, cp.Right, cp.Output, opts, a)
	if err != nil {
		left.Close()
		return nil, err
	}
	op := exec.SetOp(left, right, cp.Kind, cp.All, types, opts)
	keys := make([]exec.SortKey, len(cp.OrderBy))
	for i, o := range cp.OrderBy {
		keys[i] = exec.SortKey{Col: o.Expr.(*sqlplan.ColumnRef).Index, Desc: o.Desc}
	}
	switch {
	case len(keys) > 0 && cp.Limit >= 0:
		op = exec.TopN(op, keys, types, cp.Offset+cp.Limit, opts)
		if cp.Offset > 0 {
			op = exec.Limit(op, cp.Offset, cp.Limit)
		}
	case len(keys) > 0:
		op = exec.Sort(op, keys, types, opts)
		if cp.Offset > 0 {
			op = exec.Limit(op, cp.Offset, -1)
		}
	case cp.Limit >= 0 || cp.Offset > 0:
		op = exec.Limit(op, cp.Offset, cp.Limit)
	}
	return a.track(cp, op), nil
}

// CompoundTypes are the types of a set operation's columns; a column of
// NULLs only is a STRING one, as a lone SELECT NULL's is.
func CompoundTypes(cp *sqlplan.CompoundPlan) []metadata.DataType {
	types := make([]metadata.DataType, len(cp.Output))
	for i, o := range cp.Output {
		types[i] = exec.ResultType(o.Expr.Type())
	}
	return types
}

// openBranch opens one side of a set operation. A SELECT's records may
// carry hidden ORDER BY columns after its outputs; the conversion keeps
// the outputs only.
func openBranch(ctx context.Context, r Reader, b sqlplan.CompoundBranch, out []sqlplan.OutputColumn, opts exec.Options, a *Analysis) (exec.Operator, error) {
	if b.Compound != nil {
		return openCompound(ctx, r, b.Compound, opts, a)
	}
	op, err := openPlan(ctx, r, b.Select, opts, a)
	if err != nil {
		return nil, err
	}
	op = a.track(b.Select, op)
	n := len(b.Select.Output)
	cols := make([]int, n)
	names := make([]string, n)
	for i := range cols {
		cols[i], names[i] = i, out[i].Name
	}
	mem := opts.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	proj, err := exec.Project(op, b.Convert, names, exec.NewLayout(n, cols), mem)
	if err != nil {
		op.Close()
		return nil, err
	}
	return proj, nil
}
