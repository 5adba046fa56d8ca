package exec

import (
	"context"

	"github.com/flusslite/fluss/sqlplan"
)

// Filter keeps the rows for which every condition is TRUE (a NULL
// condition drops the row, as in a SQL WHERE).
func Filter(in Operator, conds []sqlplan.Expr, layout Layout) (Operator, error) {
	return filterWith(in, conds, layout, nil)
}

// filterWith is Filter whose conditions may hold subqueries run by subs.
func filterWith(in Operator, conds []sqlplan.Expr, layout Layout, subs *subqueries) (Operator, error) {
	if len(conds) == 0 {
		return in, nil
	}
	var all sqlplan.Expr = conds[0]
	for _, c := range conds[1:] {
		all = &sqlplan.And{L: all, R: c}
	}
	env := &env{layout: layout, subs: subs}
	kernels := make([]selKernel, 0, len(conds))
	for _, c := range conds {
		k := intCompareKernel(c, env)
		if k == nil {
			kernels = nil
			break
		}
		kernels = append(kernels, k)
	}
	if kernels != nil {
		return &filterOp{in: in, env: env, kernels: kernels}, nil
	}
	b, err := compileBool(all, env)
	if err != nil {
		return nil, err
	}
	return &filterOp{in: in, cond: b, env: env}, nil
}

type filterOp struct {
	in   Operator
	cond boolBinder
	// kernels, when set, replace cond: every condition has a selection
	// kernel, applied in turn, each to the rows the previous one kept.
	kernels []selKernel
	env     *env
	sel     []int32
	tmp     []int32
}

func (f *filterOp) Next(ctx context.Context) (Batch, error) {
	for {
		b, err := f.in.Next(ctx)
		if err != nil {
			return Batch{}, err
		}
		if f.kernels != nil {
			if b.NumRows() == 0 {
				continue
			}
			if sel := f.runKernels(b); len(sel) > 0 {
				return Batch{Rec: b.Rec, Sel: sel}, nil
			}
			continue
		}
		f.env.ctx = ctx
		test := f.cond(b.Rec)
		f.sel = f.sel[:0]
		n := b.NumRows()
		for i := 0; i < n; i++ {
			r := b.Row(i)
			if test(r) == triTrue {
				f.sel = append(f.sel, int32(r))
			}
		}
		if err := f.env.takeErr(); err != nil {
			return Batch{}, err
		}
		if len(f.sel) == 0 {
			continue
		}
		return Batch{Rec: b.Rec, Sel: f.sel}, nil
	}
}

func (f *filterOp) Close() error { return f.in.Close() }

// runKernels returns the rows of b that pass every kernel.
func (f *filterOp) runKernels(b Batch) []int32 {
	in := b.Sel
	for _, k := range f.kernels {
		f.sel = k(b.Rec, in, f.sel[:0])
		if len(f.sel) == 0 {
			return nil
		}
		// The next kernel reads what this one kept, into the other buffer.
		in, f.sel, f.tmp = f.sel, f.tmp, f.sel
	}
	return in
}
