package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// Options configure the operators of one query.
type Options struct {
	// Allocator backs the batches the operators build; nil is
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// MemoryLimit bounds the approximate bytes each sort, top-N,
	// aggregation, DISTINCT, join build side or set operation holds, and
	// the results of the query's subqueries; 0 or less is no limit. Going
	// over fails the query with a *MemoryLimitError.
	MemoryLimit int64
	// Subqueries runs the subqueries of the query's expressions; without
	// it a query with one fails to build.
	Subqueries SubqueryRunner
	// Threads is the number of workers that filter and aggregate the
	// probe side of a join (see Splitter); 1 or less runs every operator
	// on the caller's goroutine.
	Threads int
}

func (o Options) withDefaults() Options {
	if o.Allocator == nil {
		o.Allocator = memory.DefaultAllocator
	}
	return o
}

// Query is the part of a bound SELECT that runs above the scan, in SQL's
// order: Filter, GROUP BY with its aggregates, HAVING, the output
// expressions, DISTINCT, ORDER BY, OFFSET and LIMIT.
type Query struct {
	// Filter are the post-scan conjuncts (all must be TRUE).
	Filter  []sqlplan.Expr
	GroupBy []sqlplan.Expr
	Having  sqlplan.Expr
	Output  []sqlplan.Expr
	Names   []string
	// Distinct keeps one row per distinct output row.
	Distinct bool
	// OrderBy keys are output expressions (an alias or a position resolved
	// by the binder) or any expression over the table.
	OrderBy []sqlplan.OrderItem
	Offset  int64
	// Limit is -1 for none.
	Limit int64
}

// QueryOf is the part of a bound SELECT that runs above its scan, without
// the post-scan filter (which depends on what pushdown kept).
func QueryOf(sp *sqlplan.SelectPlan) Query {
	q := Query{GroupBy: sp.GroupBy, Having: sp.Having, Distinct: sp.Distinct,
		OrderBy: sp.OrderBy, Offset: sp.Offset, Limit: sp.Limit}
	for _, o := range sp.Output {
		q.Output = append(q.Output, o.Expr)
		q.Names = append(q.Names, o.Name)
	}
	return q
}

// ResultType is the type of the column an expression of type t fills:
// an untyped NULL fills a STRING column.
func ResultType(t metadata.DataType) metadata.DataType { return resultType(t) }

// Aggregated reports whether the query groups: it has GROUP BY, or an
// aggregate in its output, HAVING or ORDER BY.
func (q *Query) Aggregated() bool {
	if len(q.GroupBy) > 0 || q.Having != nil {
		return true
	}
	for _, e := range q.Output {
		if HasAggregate(e) {
			return true
		}
	}
	for _, o := range q.OrderBy {
		if HasAggregate(o.Expr) {
			return true
		}
	}
	return false
}

// HasAggregate reports whether e calls an aggregate function.
func HasAggregate(e sqlplan.Expr) bool {
	found := false
	sqlplan.Walk(e, func(x sqlplan.Expr) bool {
		if f, ok := x.(*sqlplan.Func); ok && isAggregate(f) {
			found = true
		}
		return !found
	})
	return found
}

// Build builds the operator chain of q over in, whose records hold the
// table columns as layout says. The records it yields hold the Output
// columns first; ORDER BY keys that are not outputs follow them and are
// not part of the result.
func Build(in Operator, q Query, layout Layout, opts Options) (Operator, error) {
	opts = opts.withDefaults()
	// One cache for the query: a subquery in WHERE and in the select list
	// runs once per outer tuple.
	subs := newSubqueries(opts)
	split, parallel := in.(Splitter)
	parallel = parallel && ParallelAggregation(q, opts.Threads) == ""
	op := in
	if !parallel {
		var err error
		if op, err = filterWith(in, q.Filter, layout, subs); err != nil {
			return nil, err
		}
	}
	var err error
	output := q.Output
	order := make([]sqlplan.Expr, len(q.OrderBy))
	for i, o := range q.OrderBy {
		order[i] = o.Expr
	}
	if q.Aggregated() {
		r := &aggRewriter{keys: q.GroupBy}
		if output, err = r.rewriteAll(q.Output); err != nil {
			return nil, err
		}
		var having sqlplan.Expr
		if q.Having != nil {
			if having, err = r.rewrite(q.Having); err != nil {
				return nil, err
			}
		}
		if order, err = r.rewriteAll(order); err != nil {
			return nil, err
		}
		if parallel {
			op = parallelAggregate(split, q.Filter, q.GroupBy, r.aggs, layout, opts, subs)
		} else if op, err = aggregateWith(op, q.GroupBy, r.aggs, layout, opts, subs); err != nil {
			return nil, err
		}
		n := len(q.GroupBy) + len(r.aggs)
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		layout = NewLayout(n, all)
		if having != nil {
			if op, err = filterWith(op, []sqlplan.Expr{having}, layout, subs); err != nil {
				return nil, err
			}
		}
	} else if len(order) == 0 && !q.Distinct && (q.Limit >= 0 || q.Offset > 0) {
		// Nothing reorders or drops rows after the filter: cut before
		// computing the outputs.
		return projectWith(Limit(op, q.Offset, q.Limit), output, q.Names, layout, opts.Allocator, subs)
	}

	// ORDER BY keys that are outputs sort by that column; the others are
	// computed as hidden columns after the outputs.
	exprs := append([]sqlplan.Expr(nil), output...)
	names := append([]string(nil), q.Names...)
	keys := make([]SortKey, len(order))
	for i, e := range order {
		col := -1
		for j, o := range output {
			if o == e || sqlplan.Fingerprint(o) == sqlplan.Fingerprint(e) {
				col = j
				break
			}
		}
		if col < 0 {
			if q.Distinct {
				return nil, fmt.Errorf("ORDER BY %s is not in the select list of a SELECT DISTINCT: %w", q.OrderBy[i].Expr, metadata.ErrUnsupported)
			}
			col = len(exprs)
			exprs = append(exprs, e)
			names = append(names, fmt.Sprintf("_order%d", i))
		}
		keys[i] = SortKey{Col: col, Desc: q.OrderBy[i].Desc}
	}
	if op, err = projectWith(op, exprs, names, layout, opts.Allocator, subs); err != nil {
		return nil, err
	}
	types := make([]metadata.DataType, len(exprs))
	for i, e := range exprs {
		types[i] = resultType(e.Type())
	}
	if q.Distinct {
		op = Distinct(op, len(output), types, opts)
	}
	switch {
	case len(keys) > 0 && q.Limit >= 0:
		op = TopN(op, keys, types, q.Offset+q.Limit, opts)
		if q.Offset > 0 {
			op = Limit(op, q.Offset, q.Limit)
		}
	case len(keys) > 0:
		op = Sort(op, keys, types, opts)
		if q.Offset > 0 {
			op = Limit(op, q.Offset, -1)
		}
	case q.Limit >= 0 || q.Offset > 0:
		op = Limit(op, q.Offset, q.Limit)
	}
	return op, nil
}

// aggRewriter maps expressions over the table onto the output of an
// aggregation: a GROUP BY key becomes a reference to its key column, an
// aggregate call to its aggregate column. A table column left over is
// neither grouped nor aggregated, which is an error.
type aggRewriter struct {
	keys []sqlplan.Expr
	aggs []*sqlplan.Func
}

func (r *aggRewriter) rewriteAll(es []sqlplan.Expr) ([]sqlplan.Expr, error) {
	out := make([]sqlplan.Expr, len(es))
	for i, e := range es {
		x, err := r.rewrite(e)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func (r *aggRewriter) rewrite(e sqlplan.Expr) (sqlplan.Expr, error) {
	if e == nil {
		return nil, nil
	}
	if _, lit := e.(*sqlplan.Literal); !lit {
		s := sqlplan.Fingerprint(e)
		for k, key := range r.keys {
			if sqlplan.Fingerprint(key) == s {
				return &sqlplan.ColumnRef{Name: key.String(), Index: k, T: resultType(key.Type())}, nil
			}
		}
	}
	switch x := e.(type) {
	case *sqlplan.Func:
		if isAggregate(x) {
			s := sqlplan.Fingerprint(x)
			for j, a := range r.aggs {
				if sqlplan.Fingerprint(a) == s {
					return r.aggRef(j), nil
				}
			}
			r.aggs = append(r.aggs, x)
			return r.aggRef(len(r.aggs) - 1), nil
		}
	case *sqlplan.ColumnRef:
		if len(r.keys) == 0 {
			return nil, &sqlplan.NameError{Name: x.Name, Err: fmt.Errorf("column %s must be in an aggregate function when the query aggregates without GROUP BY: %w", x, metadata.ErrUnsupported)}
		}
		return nil, &sqlplan.NameError{Name: x.Name, Err: fmt.Errorf("column %s must appear in GROUP BY or in an aggregate function: %w", x, metadata.ErrUnsupported)}
	}
	return mapChildren(e, r.rewrite)
}

func (r *aggRewriter) aggRef(j int) *sqlplan.ColumnRef {
	a := r.aggs[j]
	return &sqlplan.ColumnRef{Name: a.String(), Index: len(r.keys) + j, T: resultType(a.T)}
}

// mapChildren returns a copy of e with f applied to each direct child.
func mapChildren(e sqlplan.Expr, f func(sqlplan.Expr) (sqlplan.Expr, error)) (sqlplan.Expr, error) {
	var err error
	m := func(x sqlplan.Expr) sqlplan.Expr {
		if err != nil || x == nil {
			return x
		}
		var y sqlplan.Expr
		y, err = f(x)
		return y
	}
	list := func(xs []sqlplan.Expr) []sqlplan.Expr {
		out := make([]sqlplan.Expr, len(xs))
		for i, x := range xs {
			out[i] = m(x)
		}
		return out
	}
	var out sqlplan.Expr
	switch x := e.(type) {
	case *sqlplan.Compare:
		out = &sqlplan.Compare{Op: x.Op, L: m(x.L), R: m(x.R)}
	case *sqlplan.And:
		out = &sqlplan.And{L: m(x.L), R: m(x.R)}
	case *sqlplan.Or:
		out = &sqlplan.Or{L: m(x.L), R: m(x.R)}
	case *sqlplan.Not:
		out = &sqlplan.Not{E: m(x.E)}
	case *sqlplan.IsNull:
		out = &sqlplan.IsNull{E: m(x.E), Not: x.Not}
	case *sqlplan.In:
		out = &sqlplan.In{E: m(x.E), List: list(x.List), Not: x.Not}
	case *sqlplan.Between:
		out = &sqlplan.Between{E: m(x.E), Lo: m(x.Lo), Hi: m(x.Hi), Not: x.Not}
	case *sqlplan.Like:
		out = &sqlplan.Like{E: m(x.E), Pattern: m(x.Pattern), Escape: x.Escape, Not: x.Not}
	case *sqlplan.Arith:
		out = &sqlplan.Arith{Op: x.Op, L: m(x.L), R: m(x.R), T: x.T}
	case *sqlplan.Neg:
		out = &sqlplan.Neg{E: m(x.E)}
	case *sqlplan.Func:
		out = &sqlplan.Func{Name: x.Name, Args: list(x.Args), Distinct: x.Distinct, Star: x.Star, T: x.T}
	case *sqlplan.Case:
		c := &sqlplan.Case{Operand: m(x.Operand), Else: m(x.Else), T: x.T}
		for _, w := range x.Whens {
			c.Whens = append(c.Whens, sqlplan.When{Cond: m(w.Cond), Result: m(w.Result)})
		}
		out = c
	case *sqlplan.Cast:
		out = &sqlplan.Cast{E: m(x.E), T: x.T}
	case *sqlplan.Subquery:
		// The inner query is its own scope; what the outer query
		// evaluates of it is its operand and its correlation.
		out = x.MapOperands(m)
	default:
		return e, nil
	}
	return out, err
}
