package query

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flusslite/fluss/exec"
	"github.com/flusslite/fluss/metadata"
	"github.com/flusslite/fluss/sqlplan"
)

// subqueryRunner runs the subqueries of a statement's query for exec: the
// inner query of each, bound with the outer row's values for a correlated
// one, is read through the read path of any SELECT (Session.Open),
// so it is planned as a SELECT written with those values would be (point
// lookups, pushdown, partition pruning) and, inside a transaction, reads
// its view.
// exec caches the results; the rows a run holds count against
// memory.limit while it reads them.
type subqueryRunner struct{ s *Session }

var _ exec.SubqueryRunner = subqueryRunner{}

func (r subqueryRunner) RunSubquery(ctx context.Context, sub *sqlplan.Subquery, outer []any, max int) ([][]any, error) {
	s := r.s
	sp, err := sub.BindValues(ctx, s.catalog(), outer)
	if err != nil {
		return nil, err
	}
	op, err := s.Open(ctx, sp)
	if err != nil {
		return nil, err
	}
	defer op.Close()
	cols := ResultColumns(sp)
	width := sub.Width()
	budget := &rowBudget{limit: s.MemoryLimit, op: "a subquery"}
	var out [][]any
	for max < 0 || len(out) < max {
		b, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for i := 0; i < b.NumRows() && (max < 0 || len(out) < max); i++ {
			row := make([]any, width)
			for c := range row {
				row[c] = metadata.ValueAt(b.Rec.Column(c), cols[c].Type, b.Row(i))
			}
			if err := budget.charge(row); err != nil {
				return nil, fmt.Errorf("subquery %s: %w", sub, err)
			}
			out = append(out, row)
		}
	}
	return out, nil
}

// explainSubqueries appends to a query's plan one node per subquery of
// its expressions: an uncorrelated one with its inner query's plan below
// it, a correlated one with the outer values it runs per (its plan
// depends on them, so none is printed).
func (s *Session) explainSubqueries(ctx context.Context, sp *sqlplan.SelectPlan, lines []string) ([]string, error) {
	for _, sub := range subqueriesOf(sp) {
		if sub.Correlated() {
			outer := make([]string, len(sub.Outer))
			for i, o := range sub.Outer {
				outer[i] = sqlplan.Qualified(o)
			}
			lines = append(lines, fmt.Sprintf("Subquery: %s [Correlated: runs per distinct %s]", sub, strings.Join(outer, ", ")))
			continue
		}
		lines = append(lines, "Subquery: "+sub.String())
		var inner []string
		var err error
		if sub.Plan.Source != nil {
			inner, err = s.explainTreeOf(ctx, sub.Plan)
		} else {
			inner, err = s.Explain(ctx, sub.Plan)
		}
		if err != nil {
			return nil, err
		}
		if inner, err = s.explainSubqueries(ctx, sub.Plan, inner); err != nil {
			return nil, err
		}
		for _, l := range inner {
			lines = append(lines, "  "+l)
		}
	}
	return lines, nil
}

// explainTreeOf is the plan of a query over a FROM tree, as EXPLAIN
// prints it.
func (s *Session) explainTreeOf(ctx context.Context, sp *sqlplan.SelectPlan) ([]string, error) {
	op, a, err := OpenAnalyzed(ctx, s, sp, s.Exec)
	if err != nil {
		return nil, err
	}
	if err := op.Close(); err != nil {
		return nil, err
	}
	return s.ExplainTree(ctx, sp, a.Note)
}

// subqueriesOf lists the subqueries of a plan's expressions, those pushed
// to the scans of its FROM tree included, in the order they are written,
// each once.
func subqueriesOf(sp *sqlplan.SelectPlan) []*sqlplan.Subquery {
	var out []*sqlplan.Subquery
	seen := map[string]bool{}
	visit := func(e sqlplan.Expr) {
		sqlplan.Walk(e, func(x sqlplan.Expr) bool {
			if sub, ok := x.(*sqlplan.Subquery); ok && !seen[sub.String()] {
				seen[sub.String()] = true
				out = append(out, sub)
			}
			return true
		})
	}
	es := sp.Exprs()
	if sp.Source != nil {
		// The conjuncts pushed to the scans, after the outputs, as before
		// the WHERE they came from.
		var pushed []sqlplan.Expr
		for _, leaf := range sqlplan.Leaves(sp) {
			pushed = append(pushed, leaf.Where)
		}
		n := len(sp.Output)
		es = append(es[:n:n], append(pushed, es[n:]...)...)
	}
	for _, e := range es {
		visit(e)
	}
	return out
}
